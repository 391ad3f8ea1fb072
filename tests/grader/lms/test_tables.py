"""The LMSs' CSV files: read as their importers read them, written back changing only the
cells that must change (fixtures: tests/data/lms/README.md)."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from autograder.lms import canvas, moodle
from autograder.lms.table import BOM, LmsFileError, read_table

DATA = Path(__file__).resolve().parents[2] / "data" / "lms"


def _cells(text: str, separator: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text.removeprefix(BOM)), delimiter=separator))


@pytest.mark.parametrize("name", ["canvas-gradebook.csv", "canvas-gradebook-semicolons.csv",
                                  "moodle-worksheet-en.csv", "moodle-worksheet-zh.csv"])
def test_an_lms_file_is_written_back_byte_for_byte(name):
    table = read_table(DATA / name, "fixture")
    assert table.bom
    assert table.text().encode() == (DATA / name).read_bytes()


def test_separators_and_multiline_cells():
    assert read_table(DATA / "canvas-gradebook-semicolons.csv", "x").separator == ";"
    worksheet = read_table(DATA / "moodle-worksheet-en.csv", "x")
    assert worksheet.separator == ","
    assert worksheet.rows[4][8] == "<p>See my notebook,\nplease</p>".replace("\np", "\np")


@pytest.mark.parametrize("content, line, words", [
    (b"Student,ID,Section\n\"Smith, John\",1,A\nDoe,2\n", 3, "2 cells where the header has 3"),
    (b"Student,ID,Section\nDoe,2,A,extra\n", 2, "4 cells"),
    (b"Student,ID,Section\n\"Doe,2,A\n", 2, "unexpected end of data"),
    (b"Student,ID,Section\nDoe,2,\xff\n", 2, "not UTF-8"),
    (b"Student\nDoe\n", 1, "one column only"),
])
def test_a_malformed_file_is_refused_with_its_line(tmp_path, content, line, words):
    path = tmp_path / "export.csv"
    path.write_bytes(content)
    with pytest.raises(LmsFileError, match=f"line {line}") as refused:
        read_table(path, "Canvas gradebook export")
    assert words in str(refused.value)


def test_canvas_column_filled_and_nothing_else(tmp_path):
    table = read_table(DATA / "canvas-gradebook.csv", "x")
    filled = canvas.fill(table, "attention-scoring",
                         {"12345": "14", "67890": "6.3", "23456": canvas.EXCUSED}, 14.0)
    assert not filled.added and filled.column == "Attention scoring (4411)"
    assert filled.written == {"12345": "14", "67890": "6.3", "23456": "EX"}
    assert sorted(filled.not_in_course) == ["34567", "45678", "99999"]    # as they were
    before = _cells((DATA / "canvas-gradebook.csv").read_text(encoding="utf-8"), ",")
    after = _cells(table.text(), ",")
    column = before[0].index("Attention scoring (4411)")
    assert [r[column] for r in after] == ["Attention scoring (4411)", "Manual Posting",
                                          "14.00", "14", "6.3", "EX", "N/A", "EX", ""]
    for old, new in zip(before, after, strict=True):       # every other cell as it was
        assert old[:column] + old[column + 1:] == new[:column] + new[column + 1:]
    assert table.text().startswith(BOM + "Student,ID,")


def test_canvas_new_assignment_column(tmp_path):
    table = read_table(DATA / "canvas-gradebook-semicolons.csv", "x")
    filled = canvas.fill(table, "multihead-attention", {"12345": "7.25"}, 12.0)
    assert filled.added and filled.column == "multihead-attention"
    rows = _cells(table.text(), ";")
    assert rows[0][-1] == "multihead-attention"         # no "(id)": Canvas creates it
    assert rows[1][-1] == "" and rows[2][-1] == "12"    # Manual Posting row; Points Possible
    assert rows[3][-1] == "7.25" and {len(r) for r in rows} == {len(rows[0])}


def test_canvas_header_checked_as_its_importer_checks_it(tmp_path):
    path = tmp_path / "grades.csv"
    path.write_text("Name,ID,Email\nDoe,1,d@x\n")
    with pytest.raises(LmsFileError, match="line 1.*not Canvas's"):
        canvas.fill(read_table(path, "x"), "a", {}, 1.0)


def test_moodle_worksheet_english():
    sheet = moodle.read_worksheet(DATA / "moodle-worksheet-en.csv")
    assert set(sheet.participants) == {"101", "102", "103", "104"}
    assert sheet.participant("102").email == "wei.li.2@univ.example.edu"
    assert sheet.participant("102").submitted_at == "2026-10-07T01:45:00"
    assert sheet.participant("101").submitted_at == "2026-10-05T22:10:00"
    assert sheet.participant("103").submitted_at == ""
    assert sheet.participant("104").name == 'Ben "Benny" Ortiz'
    sheet.fill({"101": (12.5, "Autograded: 12.5 / 14"), "104": (None, "Excused.")})
    # 102 and 103 were not graded by the course: their rows stay as Moodle wrote them.
    rows = _cells(sheet.table.text(), ",")
    grade, comments = rows[0].index("Grade"), rows[0].index("Feedback comments")
    assert [r[grade] for r in rows[1:]] == ["12.5", "", "", ""]    # 104: excused
    assert [r[comments] for r in rows[1:]] == ["Autograded: 12.5 / 14", "", "", "Excused."]
    original = _cells((DATA / "moodle-worksheet-en.csv").read_text(encoding="utf-8"), ",")
    for old, new in zip(original, rows, strict=True):
        assert [c for i, c in enumerate(old) if i not in (grade, comments)] == \
            [c for i, c in enumerate(new) if i not in (grade, comments)]
    text = sheet.table.text()
    assert text.startswith(BOM + 'Identifier,"Full name"')
    assert '"Participant 101","Wei Li",wei.li@univ.example.edu,"Submitted for grading",12.5,' \
        in text                                          # PHP's quoting kept
    assert "\"Participant 102\",\"Wei Li\"" in text and text.count("\n") == 6


def test_moodle_worksheet_chinese_and_decimal_commas(tmp_path):
    sheet = moodle.read_worksheet(DATA / "moodle-worksheet-zh.csv")
    assert sheet.participant("201").submitted_at == "2026-10-05T22:10:00"
    assert sheet.participant("202").name == "李伟"
    assert sheet.decimal_mark() == "."
    comma = tmp_path / "ws.csv"
    comma.write_text((DATA / "moodle-worksheet-zh.csv").read_text(encoding="utf-8")
                     .replace("14.00", "\"14,00\""), encoding="utf-8")
    sheet = moodle.read_worksheet(comma)
    assert sheet.decimal_mark() == ","
    sheet.fill({"201": (6.3, "迟交")})
    rows = _cells(sheet.table.text(), ",")
    assert rows[1][rows[0].index("成绩")] == "6,3"
    assert rows[1][rows[0].index("反馈意见")] == "迟交"


@pytest.mark.parametrize("edit, line, words", [
    (lambda t: t.replace("参与人202", "某人"), 3, "not a participant identifier"),
    (lambda t: t.replace("参与人203", "参与人201"), 4, "listed twice"),
    (lambda t: t.replace("2026年10月07日 星期三 01:45", "昨天"), 3, "not a time Moodle writes"),
    (lambda t: t.replace("上次修改（评分）", "备注"), 1, "Last modified \\(grade\\)"),
])
def test_a_malformed_worksheet_is_refused_with_its_line(tmp_path, edit, line, words):
    path = tmp_path / "ws.csv"
    path.write_text(edit((DATA / "moodle-worksheet-zh.csv").read_text(encoding="utf-8")),
                    encoding="utf-8")
    with pytest.raises(LmsFileError, match=f"line {line}: .*{words}"):
        moodle.read_worksheet(path)


def test_moodle_gradebook_file():
    text = moodle.gradebook_csv([("a@x.edu", "=cmd|' /C calc'!A0", {"a1": 6.3, "a2": None})],
                                ["a1", "a2"])
    rows = _cells(text, ",")
    assert rows == [["Email address", "Full name", "a1", "a2"],
                    ["a@x.edu", "'=cmd|' /C calc'!A0", "6.3", ""]]
