"""The nbgrader settings of the course, in one place.

``nbgrader_config.py`` calls :func:`configure`, and so does the autograder when it builds
its own configuration for a temporary course directory.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import nbgrader.preprocessors as nbp
from nbconvert.preprocessors import ClearMetadataPreprocessor, CSSHTMLHeaderPreprocessor
from traitlets.config import Config

from .defaults import DEFAULT_TIMEOUT
from .execute import ExecuteSurvivingCrashes
from .preprocessors import (
    CheckCellMetadataCompiled,
    HideHiddenTests,
    JudgeHiddenTests,
    LimitOutputSize,
    RestoreCourseCells,
    ShipHiddenCases,
    StderrIsNotAFailure,
)
from .suite_files import HELPERS_FILE, SUITE_FILE

COURSE_ID = "attention-nlp"
SOURCE_DIR = "solutions"
RELEASE_DIR = "exercises"

# nbgrader's default ignore list, plus the notebook sources (see notebook_sources).
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
    # Feedback never shows hidden tests, neither their source nor their tracebacks.
    c.GenerateFeedback.preprocessors = [nbp.GetGrades, HideHiddenTests,
                                        CSSHTMLHeaderPreprocessor]
    return c
