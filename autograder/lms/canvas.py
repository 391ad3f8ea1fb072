"""Canvas's gradebook CSV, filled in for its *Import* exactly as Canvas exported it.

Canvas's gradebook export has the header ``Student, ID, SIS User ID, SIS Login ID,
[Integration ID,] Section``, then a column per assignment named ``<name> (<assignment
id>)``, then read-only totals (``Current Score`` …). A row whose first cell is
``Points Possible`` may follow the header (older exports add a ``Muted`` or
``Manual Posting`` row too): such rows have no user id and are kept as they are. The
importer matches each row to a student by ``ID`` (Canvas's numeric user id), an assignment
column by its id; a column without ``(<id>)`` creates a new assignment named by its header.
A cell holds a score, ``EX`` for excused, or nothing (no grade).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .numbers import score_text
from .table import LmsFileError, Table

ID_HEADER = "ID"
POINTS_POSSIBLE = "Points Possible"
EXCUSED = "EX"
ASSIGNMENT_COLUMN = re.compile(r"^(?P<name>.*\S)\s*\((?P<id>\d+)\)$")


def _normal(name: str) -> str:
    return re.sub(r"[\s_-]+", " ", name).strip().casefold()


@dataclass
class Filled:
    """What filling a column did."""

    column: str
    added: bool                                    # the column is new (a new assignment)
    written: dict[str, str] = field(default_factory=dict)    # user id -> cell
    not_in_course: list[str] = field(default_factory=list)   # user ids left unchanged


def assignment_column(table: Table, assignment: str, column: str | None = None) -> int | None:
    """The column of ``assignment``: the header ``column`` if given, else the assignment
    column whose name (before ``(<id>)``) is the assignment's, spaces, hyphens and case
    aside. None if there is none."""
    header = table.rows[0]
    if column is not None:
        return header.index(column) if column in header else None
    found = [i for i, h in enumerate(header)
             if (m := ASSIGNMENT_COLUMN.match(h)) and _normal(m["name"]) == _normal(assignment)]
    if len(found) > 1:
        raise LmsFileError(f"{table.path}, line 1: {len(found)} columns are named "
                           f"{assignment!r}; name one with --canvas-column")
    return found[0] if found else None


def check_header(table: Table) -> int:
    """The ``ID`` column of a Canvas gradebook export; refuses a header its importer would
    refuse (``Student``, ``ID`` …, ``Section``: ``lib/gradebook_importer.rb``)."""
    header = [h.strip() for h in table.rows[0]]
    if ID_HEADER not in header or not any("Student" in h or h == "LastName"
                                          for h in header[:2]) \
            or not any("Section" in h for h in header):
        raise LmsFileError(f"Canvas gradebook export {table.path}, line 1: the header "
                           f"{header[:6]} is not Canvas's (Student, ID, …, Section); export "
                           "the gradebook from Canvas's Gradebook → Export")
    return header.index(ID_HEADER)


def fill(table: Table, assignment: str, cells: dict[str, str], max_score: float | None,
         column: str | None = None) -> Filled:
    """Write ``cells`` (``{Canvas user id: score text or EX}``) into the assignment's column,
    adding the column (a new assignment, its points possible filled in) if the export has
    none. The cell of a student the course did not grade is left as Canvas exported it
    (empty in a new column; never a zero), so that importing changes nothing for them."""
    id_column = check_header(table)
    index = assignment_column(table, assignment, column)
    added = index is None
    if index is None:
        index = table.append_column(column or assignment)
    result = Filled(table.rows[0][index], added)
    for row, cells_of_row in enumerate(table.rows[1:], start=1):
        first = cells_of_row[0].strip() if cells_of_row else ""
        user = cells_of_row[id_column].strip() if len(cells_of_row) > id_column else ""
        if first == POINTS_POSSIBLE:
            if added and max_score is not None:
                table.set(row, index, score_text(max_score))
            continue
        if not user.isdigit():
            continue                      # Muted, Manual Posting: not a student
        if user in cells:
            table.set(row, index, cells[user])
            result.written[user] = cells[user]
        else:
            result.not_in_course.append(user)   # left as Canvas wrote it: no change
    return result


def user_ids(table: Table) -> set[str]:
    """The Canvas user ids of the students the file lists."""
    header = table.rows[0]
    if ID_HEADER not in header:
        return set()
    column = header.index(ID_HEADER)
    return {r[column].strip() for r in table.rows[1:]
            if len(r) > column and r[column].strip().isdigit()}
