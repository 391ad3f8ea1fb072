"""Every nbgrader setting of the course, built here and nowhere else.

* :func:`configure` — the course's settings for a course directory: what ``nbgrader`` run
  from the repository root uses (``nbgrader_config.py`` calls it), and the base of all
  others: the directories, what is never released, and nbgrader's pipelines with the
  course's preprocessors in them;
* :func:`sandboxed` — on top, for grading in a scratch course: the notebook's kernel in the
  sandbox (:class:`~autograder.sandbox.kernelspec.SandboxKernel`), the course's own release
  and hidden tests, and the files the executor and the judge log to;
* :func:`api` — nbgrader's Python API for a course directory with such settings;
* :func:`max_fresh_runs` — one of those settings, read as the executor reads it.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import nbgrader.preprocessors as nbp
from nbconvert.preprocessors import ClearMetadataPreprocessor, CSSHTMLHeaderPreprocessor
from nbgrader.apps import NbGraderAPI
from nbgrader.coursedir import CourseDirectory
from traitlets.config import Config

from ..course import Course
from ..course.defaults import DEFAULT_TIMEOUT
from ..course.exchange import Exchange
from ..course.files import HELPERS_FILE, SUITE_FILE
from ..course.paths import RELEASE_DIR, SOURCE_DIR
from ..course.runtime import put_interpreter_on_path
from ..display.exporter import InertHTMLExporter
from ..sandbox.kernel_client import ReadyKernelClient, ReadyKernelManager
from ..sandbox.kernelspec import SandboxKernel
from .execute import ExecuteSurvivingCrashes
from .hidden_cases import JudgeHiddenTests, ShipHiddenCases
from .hide import HideHiddenTests
from .metadata import CheckCellMetadataCompiled
from .outputs import LimitOutputSize, StderrIsNotAFailure
from .restore import RestoreCourseCells

COURSE_ID = "attention-nlp"
# nbgrader's default ignore list, plus the notebook sources (see notebook_source_names).
_NBGRADER_IGNORE = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback"]
STUB = "# YOUR CODE HERE\nraise NotImplementedError()"


def notebook_source_names(root: Path) -> list[str]:
    """File names of the notebook sources: ``solutions/<assignment>/<assignment>.py``.

    Each assignment's notebook is written as a jupytext percent-format script named after
    the assignment; the release step turns it into ``<assignment>.ipynb``. The script itself
    is the instructor's copy with the solutions, so it must never be released.
    """
    return sorted({p.name for p in (root / SOURCE_DIR).glob("*/*.py")
                   if p.stem == p.parent.name})


def cell_timeout(notebook_timeout: int) -> int:
    """Seconds one cell may run when the whole notebook may run ``notebook_timeout``."""
    return max(5, notebook_timeout // 4)


def configure(c: Config, root: str | Path, timeout: int = DEFAULT_TIMEOUT) -> Config:
    """Fill ``c`` with the course's nbgrader settings for the course directory ``root``."""
    root = Path(root).resolve()
    c.CourseDirectory.root = str(root)
    c.CourseDirectory.course_id = COURSE_ID
    c.CourseDirectory.source_directory = SOURCE_DIR
    c.CourseDirectory.release_directory = RELEASE_DIR
    # The grader's own files (hidden tests, the probe's helpers) are never released.
    c.CourseDirectory.ignore = (_NBGRADER_IGNORE + notebook_source_names(root)
                                + [SUITE_FILE, HELPERS_FILE])
    c.CourseDirectory.db_url = f"sqlite:///{root / 'gradebook.db'}"
    # nbgrader's exchange (JupyterHub hand-in) is not used; give it a writable place anyway.
    c.Exchange.root = tempfile.gettempdir()

    c.ClearSolutions.code_stub = {"python": STUB}
    c.ClearSolutions.text_stub = "YOUR ANSWER HERE"

    # Grading: the notebook may run `timeout` seconds, one cell a quarter of that (so a
    # hanging cell leaves time for the others); honest stderr (warnings) costs no marks.
    c.Execute.timeout = cell_timeout(timeout)
    c.ExecuteSurvivingCrashes.notebook_timeout = timeout
    c.Execute.kernel_name = "python3"
    # Before grading, the course's cells are put back as released (deleted, moved or
    # relabelled test cells included); nbgrader then restores their hidden parts.
    c.Autograde.sanitize_preprocessors = [
        nbp.ClearOutput,
        nbp.DeduplicateIds,
        nbp.OverwriteKernelspec,
        RestoreCourseCells,
        nbp.OverwriteCells,
        CheckCellMetadataCompiled,
    ]
    c.RestoreCourseCells.release_root = str(root / RELEASE_DIR)
    # Hidden tests: the kernel reports values on the cases' inputs, the grader judges them
    # against references computed outside the sandbox (autograder.hidden).
    c.ShipHiddenCases.suite_root = str(root / SOURCE_DIR)
    c.Autograde.autograde_preprocessors = [
        ShipHiddenCases,
        ExecuteSurvivingCrashes,
        JudgeHiddenTests,
        nbp.IgnorePattern,
        ClearMetadataPreprocessor,
        nbp.LimitOutput,
        LimitOutputSize,
        StderrIsNotAFailure,
        nbp.SaveAutoGrades,
        nbp.AssignLatePenalties,
        CheckCellMetadataCompiled,
    ]
    # Feedback never shows hidden tests, neither their source nor their tracebacks; what the
    # student's notebook displays is shown inert (autograder.display).
    c.GenerateFeedback.preprocessors = [nbp.GetGrades, HideHiddenTests,
                                        CSSHTMLHeaderPreprocessor]
    c.GenerateFeedback.exporter_class = InertHTMLExporter
    return c


def sandboxed(course: Course, kernel: SandboxKernel, logs: Path,
              execute: bool = True) -> Config:
    """Settings, on top of :func:`configure`'s, that grade a copy of ``course``'s
    submission in a scratch course directory: the notebook's kernel is ``kernel``; the
    release and hidden tests are ``course``'s; the executor and the judge log to files in
    ``logs`` (see :mod:`.verdicts`). Without ``execute``, every step is taken but running
    the notebook."""
    c = Config()
    # Cells are limited by the CPU time of the kernel (see .execute), found by its own
    # user (a root grader's kernels have one) or the marker in its environment.
    c.ExecuteSurvivingCrashes.kernel_uid = kernel.uid
    c.ExecuteSurvivingCrashes.kernel_marker = kernel.marker
    c.ExecuteSurvivingCrashes.threads = kernel.threads
    c.ExecuteSurvivingCrashes.enabled = execute
    c.ExecuteSurvivingCrashes.events_file = str(events_file(logs))
    c.JudgeHiddenTests.verdicts_file = str(verdicts_file(logs))
    c.ShipHiddenCases.sandbox_folder = str(kernel.folder)
    c.JudgeHiddenTests.sandbox_folder = str(kernel.folder)
    # The scratch course has no release or hidden tests of its own: use the course's.
    c.RestoreCourseCells.release_root = str(course.release.resolve())
    c.ShipHiddenCases.suite_root = str(course.source.resolve())
    c.Execute.kernel_name = kernel.kernel_name
    c.KernelManager.transport = "ipc"
    c.KernelManager.ip = str(kernel.ipc_dir / "kernel")
    c.Execute.kernel_manager_class = ReadyKernelManager
    # Once the last cell has answered, nothing of the kernel is wanted: it is killed, with
    # whatever it started (see autograder.sandbox.reaping), rather than asked to shut down.
    c.Execute.shutdown_kernel = "immediate"
    c.AsyncKernelManager.client_class = \
        f"{ReadyKernelClient.__module__}.{ReadyKernelClient.__qualname__}"
    return c


def max_fresh_runs(course: Course, timeout: int = DEFAULT_TIMEOUT) -> int:
    """Fresh runs of a notebook the executor allows after a kernel dies, as the settings a
    submission of ``course`` is graded with set them (the supervisor's clock is sized on
    it)."""
    settings = configure(Config(), course.root, timeout=timeout)
    return ExecuteSurvivingCrashes(config=settings).max_fresh_runs


def events_file(logs: Path) -> Path:
    """Where the executor logs what went wrong while running the notebooks."""
    return logs / "execution-events.jsonl"


def verdicts_file(logs: Path) -> Path:
    """Where the judge logs every failing hidden case."""
    return logs / "hidden-verdicts.jsonl"


def exchange_config(exchange: Exchange) -> Config:
    """nbgrader's settings of the course's place in its exchange."""
    c = Config()
    c.Exchange.root = str(exchange.root)
    c.CourseDirectory.course_id = exchange.course_id
    return c


def api(course: Course, timeout: int = DEFAULT_TIMEOUT, extra: Config | None = None
        ) -> NbGraderAPI:
    """nbgrader's Python API for ``course``, with the course's settings (``extra`` on top)."""
    put_interpreter_on_path()
    c = configure(Config(), course.root, timeout=timeout)
    if course.db is not None:
        c.CourseDirectory.db_url = course.db
    c.NbGraderAPI.log_level = "WARN"
    if extra is not None:
        c.merge(extra)
    return NbGraderAPI(coursedir=CourseDirectory(config=c), config=c)
