"""nbgrader's check of the cells' metadata, with its JSON schema compiled once per process."""

from __future__ import annotations

import traceback

from jsonschema import exceptions, validators
from jsonschema.protocols import Validator
from nbformat import NotebookNode
from nbgrader.nbgraderformat import MetadataValidator, ValidationError
from nbgrader.nbgraderformat.common import BaseMetadataValidator
from nbgrader.preprocessors import CheckCellMetadata


class _CompiledSchema(BaseMetadataValidator):
    """The JSON-schema step of nbgrader's validation, with the schema compiled once."""

    _compiled: dict[int, Validator] = {}      # by schema version (nbgrader's file v<N>.json)

    def validate_cell(self, cell: NotebookNode) -> None:
        metadata = cell.metadata.get("nbgrader")
        if metadata is None or metadata.get("schema_version", 0) != self.schema_version:
            super().validate_cell(cell)     # nbgrader's SchemaTooOld/TooNewError
            return
        validator = self._compiled.get(self.schema_version)
        if validator is None:
            validator = self._compiled[self.schema_version] = \
                validators.validator_for(self.schema)(self.schema)
        error = exceptions.best_match(validator.iter_errors(metadata))
        if error is not None:
            raise error


class CompiledMetadataValidator(MetadataValidator, _CompiledSchema):
    """nbgrader's cell-metadata validator, its JSON schema compiled once per process.

    nbgrader calls ``jsonschema.validate`` for every cell, which first checks the schema
    itself against the JSON Schema meta-schema (ten times the cost of the check). Here
    nbgrader's own checks run unchanged; only their schema step (next in the method
    order: ``MetadataValidator`` → ``_CompiledSchema`` → nbgrader's base) is compiled.
    The verdict and the error raised are the same (``best_match`` of the errors).
    """


class CheckCellMetadataCompiled(CheckCellMetadata):
    """nbgrader's :class:`~nbgrader.preprocessors.CheckCellMetadata` with
    :class:`CompiledMetadataValidator`."""

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        try:
            CompiledMetadataValidator().validate_nb(nb)
        except ValidationError:
            self.log.error(traceback.format_exc())
            message = "Notebook failed to validate; the nbgrader metadata may be corrupted."
            self.log.error(message)
            raise ValidationError(message) from None
        return nb, resources
