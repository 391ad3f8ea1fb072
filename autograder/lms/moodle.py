"""Moodle's offline grading worksheet and its gradebook import file.

**The grading worksheet** (*Assignment → View all submissions → Download grading
worksheet*, imported back with *Upload grading worksheet*) has one row per participant
and the columns of ``mod/assign/gradingtable.php``: ``Identifier`` (``Participant
<id>``, the participant id of this assignment, as in the download's folder names),
``Full name``, the identity fields the site shows (``Email address`` …), ``Status``,
``Grade``, ``Maximum Grade``, ``Grade can be changed``, ``Last modified (submission)``,
the online text, ``Last modified (grade)``, ``Feedback comments``. Every header is in the
exporting user's language, and Moodle's importer finds its columns by those words, so a
worksheet is filled keeping every header and every other cell as that Moodle wrote them:
only ``Grade`` and ``Feedback comments`` change. :data:`HEADERS` holds the words of the
languages the course is taught in. Times are written by Moodle's ``userdate`` in the
user's time zone and language (``Monday, 5 October 2026, 11:59 PM``;
``2026年10月5日 星期一 23:59``).

**The gradebook import** (*Grades → Import → CSV file*) maps one column to the users (by
e-mail address, the identity Moodle's worksheet gives, since participant ids differ from
one assignment to the next) and each other column to a grade item.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from ..course.spreadsheet import to_cell
from .numbers import score_text
from .table import LmsFileError, Table, read_table

# The worksheet's headers, as Moodle's language packs write them: English (mod/assign/lang/
# en/assign.php, lang/en/moodle.php, lang/en/grades.php) and Chinese (the zh_cn pack of
# Moodle 4.5, with 最后修改（教师）, an earlier translation of "Last modified (grade)").
HEADERS = {
    "identifier": ("Identifier", "标识符"),
    "name": ("Full name", "全名"),
    "email": ("Email address", "电子邮件地址"),
    "grade": ("Grade", "成绩"),
    "max_grade": ("Maximum Grade", "Maximum grade", "最高分"),
    "submitted": ("Last modified (submission)", "上次修改（作业）"),
    "graded": ("Last modified (grade)", "上次修改（评分）", "最后修改（教师）"),
    "feedback": ("Feedback comments", "反馈意见"),
}
# Moodle's import refuses a worksheet without these (importgradeslib.php).
REQUIRED = ("identifier", "grade", "graded")
PARTICIPANT = re.compile(r"(\d+)\s*$")
NO_TIME = {"", "-"}
_ENGLISH_TIME = re.compile(
    r"(?P<day>\d{1,2}) (?P<month>[A-Za-z]+) (?P<year>\d{4}),? (?P<hour>\d{1,2}):(?P<minute>\d{2})"
    r"\s*(?P<half>[AaPp][Mm])?")
_CHINESE_TIME = re.compile(
    r"(?P<year>\d{4})\s*年\s*(?P<month>\d{1,2})\s*月\s*(?P<day>\d{1,2})\s*日.*?"
    r"(?P<half>上午|下午)?\s*(?P<hour>\d{1,2}):(?P<minute>\d{2})")
_MONTHS = {name: number for number, name in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august",
     "september", "october", "november", "december"], start=1)}


def moodle_time(text: str) -> str:
    """A time Moodle's ``userdate`` wrote (English or Chinese), as naive ISO 8601 (in the
    exporting user's time zone); "" for ``-``. Raises ValueError on anything else."""
    text = text.strip()
    if text in NO_TIME:
        return ""
    if match := _CHINESE_TIME.search(text):
        hour = int(match["hour"]) + (12 if match["half"] == "下午" and int(match["hour"]) < 12
                                     else 0)
        month = int(match["month"])
    elif match := _ENGLISH_TIME.search(text):
        month = _MONTHS.get(match["month"].lower(), 0)
        hour = int(match["hour"]) % 12 if match["half"] else int(match["hour"])
        hour += 12 if (match["half"] or "").lower() == "pm" else 0
    else:
        raise ValueError(f"not a time Moodle writes: {text!r}")
    return datetime(int(match["year"]), month, int(match["day"]), hour,
                    int(match["minute"])).isoformat()


@dataclass(frozen=True)
class Participant:
    number: str            # the participant id of this assignment
    row: int               # index in the table
    name: str
    email: str
    submitted_at: str      # naive ISO 8601, "" if none


@dataclass
class Worksheet:
    table: Table
    columns: dict[str, int]
    participants: dict[str, Participant]

    def participant(self, number: str) -> Participant | None:
        return self.participants.get(number)

    def decimal_mark(self) -> str:
        """The decimal mark this Moodle writes (``,`` in many languages), from its
        ``Maximum Grade`` cells."""
        column = self.columns.get("max_grade")
        if column is None:
            return "."
        marks = "".join(r[column] for r in self.table.rows[1:] if len(r) > column)
        return "," if "," in marks and "." not in marks else "."

    def fill(self, grades: dict[str, tuple[float, str]]) -> list[str]:
        """Set ``Grade`` (and ``Feedback comments``, if the worksheet has it) of the
        participants in ``grades`` (``{participant id: (score or None, comment)}``; None: no
        grade, an empty cell, which Moodle's import skips). Every other participant's row
        stays as Moodle wrote it. Returns the participants the worksheet does not list."""
        decimal = self.decimal_mark()
        for number, participant in self.participants.items():
            if number not in grades:
                continue
            score, comment = grades[number]
            self.table.set(participant.row, self.columns["grade"],
                           "" if score is None else score_text(score, decimal))
            if "feedback" in self.columns:
                self.table.set(participant.row, self.columns["feedback"], comment)
        return sorted(set(grades) - set(self.participants))


def read_worksheet(path: Path) -> Worksheet:
    """A grading worksheet as Moodle exported it; refuses a file without its columns or
    with a row that is not a participant's, naming the line."""
    table = read_table(path, "Moodle grading worksheet")
    header = [h.strip() for h in table.rows[0]]
    columns = {}
    for key, words in HEADERS.items():
        found = [i for i, h in enumerate(header) if h in words]
        if found:
            columns[key] = found[0]
    missing = [HEADERS[key][0] for key in REQUIRED if key not in columns]
    if missing:
        raise LmsFileError(f"Moodle grading worksheet {path}, line 1: no {' or '.join(missing)} "
                           f"column among {header}; export the worksheet from the "
                           "assignment's View all submissions page")
    participants = {}
    line = 1 + table.raw[0].count("\n")
    for row, cells in enumerate(table.rows[1:], start=1):
        identifier = cells[columns["identifier"]] if len(cells) > columns["identifier"] else ""
        match = PARTICIPANT.search(identifier)
        if match is None:
            raise LmsFileError(f"Moodle grading worksheet {path}, line {line}: "
                               f"{identifier!r} is not a participant identifier")

        def cell(key: str, cells: list[str] = cells) -> str:
            index = columns.get(key)
            return cells[index].strip() if index is not None else ""

        try:
            submitted = moodle_time(cell("submitted"))
        except ValueError as error:
            raise LmsFileError(f"Moodle grading worksheet {path}, line {line}: {error}"
                               ) from error
        if match[1] in participants:
            raise LmsFileError(f"Moodle grading worksheet {path}, line {line}: participant "
                               f"{match[1]} is listed twice")
        participants[match[1]] = Participant(match[1], row, cell("name"), cell("email"),
                                             submitted)
        line += table.raw[row].count("\n")
    return Worksheet(table, columns, participants)


GRADEBOOK_IDENTIFIER = "Email address"
GRADEBOOK_NAME = "Full name"


def gradebook_csv(rows: list[tuple[str, str, dict[str, float | None]]],
                  assignments: list[str]) -> str:
    """The file Moodle's gradebook CSV import reads: ``Email address`` (the identifier to
    map), ``Full name``, then one column per assignment (an empty cell: no grade). ``rows``
    is ``[(email, name, {assignment: score})]``. Names are written so that no spreadsheet
    takes them for formulas."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([GRADEBOOK_IDENTIFIER, GRADEBOOK_NAME, *assignments])
    for email, name, scores in rows:
        writer.writerow([to_cell(email), to_cell(name),
                         *("" if scores.get(a) is None else score_text(scores[a])
                           for a in assignments)])
    return out.getvalue()
