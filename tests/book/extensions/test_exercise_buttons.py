"""book_build.extensions.exercise_buttons: an exercise page's folder as a .zip, in the
site's language (the English site leaves every translation out)."""

from __future__ import annotations

import json
import zipfile

import pytest

from .conftest import notebook

EXTENSIONS = ["myst_nb", "book_build.extensions.exercise_buttons"]


def exercise() -> dict[str, str]:
    return {"index.md": "# Course\n\n```{toctree}\nexercises/demo/demo\n```\n",
            "exercises/demo/demo.ipynb": notebook("Exercise", text="Write `f`."),
            "exercises/demo/demo.zh_CN.ipynb": notebook("练习", text="写出 `f`。"),
            "exercises/demo/demo_data.py": "DATA = [1, 2, 3]\n",
            "exercises/demo/diagram.svg": "<svg/>",
            "exercises/demo/diagram.zh_CN.svg": "<svg><text>图</text></svg>"}


@pytest.mark.parametrize("language, files", [
    ("en", ["demo/demo.ipynb", "demo/demo_data.py", "demo/diagram.svg"]),
    ("zh_CN", ["demo/demo.ipynb", "demo/demo_data.py", "demo/diagram.svg",
               "demo/diagram.zh_CN.svg"]),
])
def test_the_folder_is_zipped_in_the_sites_language_and_offered(build, language, files):
    built = build(exercise(), EXTENSIONS, nb_execution_mode="off", language=language,
                  html_theme="sphinx_book_theme",
                  exclude_patterns=["_build", "**/*.zh_CN.ipynb"])
    assert built.error is None, built.warnings
    with zipfile.ZipFile(built.outdir / "exercises/demo/demo.zip") as archive:
        assert sorted(archive.namelist()) == files
        notebook_text = archive.read("demo/demo.ipynb").decode()
    downloaded = (built.outdir / "_sources/exercises/demo/demo.ipynb").read_text()
    title = json.loads(notebook_text)["cells"][0]["source"]
    assert title.startswith("# 练习" if language == "zh_CN" else "# Exercise")
    assert downloaded == notebook_text            # the page's .ipynb: the same notebook
    page = built.page("exercises/demo/demo")
    assert 'href="demo.zip"' in page and "download-folder-button" in page
    assert "demo.zip" not in built.page("index")
