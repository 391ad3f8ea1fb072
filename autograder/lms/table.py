"""An LMS's CSV file, read and written back byte for byte except the cells we fill.

Canvas and Moodle write their CSV files in UTF-8, often with a byte-order mark (BOM),
separated by commas or — in the many locales where the comma is the decimal separator,
or when the exporting user chose it — by semicolons (Moodle also offers tabs and colons),
with quotes only where a cell needs them and cells that may span lines. An import must
find its headers and identifiers exactly as the LMS wrote them, so :class:`Table` keeps
the raw text of every record: :meth:`Table.text` writes unchanged records as they were
read (the same quotes, the same line ends) and only the records whose cells were set anew,
with the file's own separator.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path

BOM = "\ufeff"
SEPARATORS = (",", ";", "\t", ":")


class LmsFileError(ValueError):
    """An LMS file that cannot be read as that LMS writes it: refused whole."""


@dataclass
class Table:
    """The records of a CSV file, each with its raw text."""

    path: Path
    rows: list[list[str]]
    raw: list[str]                     # each record's text as read, line end included
    separator: str
    bom: bool
    line_end: str
    changed: set[int] = field(default_factory=set)

    def set(self, row: int, column: int, value: str) -> None:
        """Set a cell; the record is written anew (a row too short is padded)."""
        cells = self.rows[row]
        cells.extend([""] * (column + 1 - len(cells)))
        if cells[column] != value:
            cells[column] = value
            self.changed.add(row)

    def append_column(self, header: str) -> int:
        """Add an empty column at the end of every record; return its index."""
        width = max(len(r) for r in self.rows)
        for index, cells in enumerate(self.rows):
            cells.extend([""] * (width - len(cells)))
            self.changed.add(index)
        self.rows[0].append(header)
        for cells in self.rows[1:]:
            cells.append("")
        return width

    def quotes_spaces(self) -> bool:
        """Whether the file quotes every cell with a space, as PHP's ``fputcsv`` (Moodle)
        does, rather than only the cells that need it (Canvas, Ruby's CSV)."""
        header = self.raw[0]
        spaced = [h for h in self.rows[0] if " " in h and self.separator not in h
                  and '"' not in h]
        return bool(spaced) and all(f'"{h}"' in header for h in spaced)

    def _record(self, cells: list[str], spaces: bool) -> str:
        special = (self.separator, '"', "\n", "\r") + ((" ", "\t") if spaces else ())
        return self.separator.join(
            f'"{cell.replace(chr(34), chr(34) * 2)}"' if any(c in cell for c in special)
            else cell for cell in cells) + self.line_end

    def text(self) -> str:
        """The file: unchanged records as read, changed ones written in its own style."""
        spaces = self.quotes_spaces()
        records = [self._record(cells, spaces) if index in self.changed else self.raw[index]
                   for index, cells in enumerate(self.rows)]
        return (BOM if self.bom else "") + "".join(records)

    def write(self, path: Path) -> None:
        """Write to ``path`` (a new file beside it first, so a failure leaves nothing half
        written)."""
        partial = path.with_name(path.name + ".partial")
        partial.write_bytes(self.text().encode("utf-8"))
        partial.replace(path)


def _separator(header_line: str) -> str:
    """The separator of a header line: the candidate that splits it most, outside quotes."""
    counts = {s: len(next(csv.reader([header_line], delimiter=s))) for s in SEPARATORS}
    best = max(counts, key=lambda s: (counts[s], -SEPARATORS.index(s)))
    if counts[best] < 2:
        raise LmsFileError("line 1: one column only; the header must name the columns, "
                           "separated by commas, semicolons or tabs")
    return best


def read_table(path: Path, what: str) -> Table:
    """Read an LMS's CSV file (``what`` names it in errors). Refuses, naming the line, a
    file that is not UTF-8, is empty, has a quote left open or a record with another
    number of cells than its header (both LMSs write every cell of every record)."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise LmsFileError(f"{what} {path}: cannot be read ({error.strerror})") from error
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[:error.start].count(b"\n") + 1
        raise LmsFileError(f"{what} {path}, line {line}: not UTF-8 text; export it from the "
                           "LMS again as UTF-8") from error
    bom = text.startswith(BOM)
    text = text.removeprefix(BOM)
    if not text.strip():
        raise LmsFileError(f"{what} {path}: empty")
    lines = text.splitlines(keepends=True)
    line_end = "\r\n" if lines[0].endswith("\r\n") else "\n"
    try:
        separator = _separator(lines[0])
    except LmsFileError as error:
        raise LmsFileError(f"{what} {path}, {error}") from None
    rows: list[list[str]] = []
    raw: list[str] = []
    start = 0
    pending = iter(lines)
    consumed: list[str] = []

    def feed():
        for line in pending:
            consumed.append(line)
            yield line

    reader = csv.reader(feed(), delimiter=separator, strict=True)
    while True:
        before = len(consumed)
        try:
            cells = next(reader)
        except StopIteration:
            break
        except csv.Error as error:
            raise LmsFileError(f"{what} {path}, line {start + 1}: {error}") from error
        record = "".join(consumed[before:])
        if not any(cells) and rows:       # a blank line: kept, as part of the record before
            raw[-1] += record
            start += len(consumed) - before
            continue
        if rows and len(cells) != len(rows[0]):     # as Moodle's csv_import_reader refuses
            raise LmsFileError(f"{what} {path}, line {start + 1}: {len(cells)} cells where the "
                               f"header has {len(rows[0])}")
        rows.append(cells)
        raw.append(record)
        start += len(consumed) - before
    return Table(path, rows, raw, separator, bom, line_end)
