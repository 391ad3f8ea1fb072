"""The grader's compiled metadata check (autograder.submission.metadata.CheckCellMetadataCompiled)
gives nbgrader's verdict, with nbgrader's error, on intact and on corrupted notebooks."""

from __future__ import annotations

import copy

import nbformat
import pytest
from nbgrader.nbgraderformat import SchemaTooNewError, SchemaTooOldError, ValidationError
from nbgrader.preprocessors import CheckCellMetadata

from autograder.course.paths import RELEASE_DIR
from autograder.submission.metadata import CheckCellMetadataCompiled, CompiledMetadataValidator
from tests.conftest import REPO

RELEASED = sorted((REPO / RELEASE_DIR).glob("*/*.ipynb"))


def _graded_cell(nb):
    return next(cell for cell in nb.cells if cell.metadata.get("nbgrader", {}).get("grade"))


CORRUPTIONS = {
    "points not a number": lambda meta: meta.update(points="ten"),
    "grade id missing": lambda meta: meta.pop("grade_id"),
    "solution not a boolean": lambda meta: meta.update(solution="yes"),
    "grade id not a string": lambda meta: meta.update(grade_id=7),
    "locked missing": lambda meta: meta.pop("locked"),
}


@pytest.mark.parametrize("notebook", RELEASED, ids=lambda path: path.parent.name)
def test_released_notebooks_pass_both_checks(notebook):
    nb = nbformat.read(notebook, as_version=4)
    CheckCellMetadata().preprocess(copy.deepcopy(nb), {})
    CheckCellMetadataCompiled().preprocess(copy.deepcopy(nb), {})


@pytest.mark.parametrize("corrupt", CORRUPTIONS.values(), ids=CORRUPTIONS.keys())
def test_corrupted_metadata_fails_both_with_nbgraders_error(corrupt):
    nb = nbformat.read(RELEASED[0], as_version=4)
    corrupt(_graded_cell(nb).metadata.nbgrader)
    errors = []
    for check in (CheckCellMetadata(), CheckCellMetadataCompiled()):
        with pytest.raises(ValidationError) as raised:
            check.preprocess(copy.deepcopy(nb), {})
        errors.append(str(raised.value))
    assert errors[0] == errors[1]
    cell = _graded_cell(nb)
    with pytest.raises(ValidationError) as theirs:
        from nbgrader.nbgraderformat import MetadataValidator
        MetadataValidator().validate_cell(cell)
    with pytest.raises(ValidationError) as ours:
        CompiledMetadataValidator().validate_cell(cell)
    assert (ours.value.message, list(ours.value.path)) == \
        (theirs.value.message, list(theirs.value.path))


@pytest.mark.parametrize("version, error", [(1, SchemaTooOldError), (99, SchemaTooNewError)])
def test_other_schema_versions_are_refused_as_nbgrader_does(version, error):
    nb = nbformat.read(RELEASED[0], as_version=4)
    cell = _graded_cell(nb)
    cell.metadata.nbgrader["schema_version"] = version
    with pytest.raises(error):
        CompiledMetadataValidator().validate_cell(cell)
