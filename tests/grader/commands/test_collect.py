"""`collect`: LMS downloads (zip or folder) -> submitted/<student>/<assignment>/, with who
each submission is from kept in the roster, and nobody merged or dropped."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest

from autograder.commands.collect import CollectError, collect, student_id
from autograder.lms.roster import ROSTER_FILE, Roster
from tests.conftest import ASSIGNMENT

DATA = Path(__file__).resolve().parents[2] / "data" / "lms"


@pytest.mark.parametrize("raw, expected", [
    ("alice", "alice"),
    ("o'brien/../x", "o-brien-..-x"),
    ("名字", None),
])
def test_student_ids_are_safe(raw, expected):
    if expected is None:
        with pytest.raises(CollectError):
            student_id(raw)
    else:
        assert student_id(raw) == expected
        assert "/" not in student_id(raw)


def test_collect_from_a_zip_with_lms_names(course, tmp_path):
    archive = tmp_path / "download.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr(f"all/doejane_12345_67890_{ASSIGNMENT}.ipynb", "{}")
        zf.writestr(f"all/smithbob_LATE_1_2_{ASSIGNMENT}-1.ipynb", '{"v": 1}')
        zf.writestr(f"all/smithbob_LATE_1_2_{ASSIGNMENT}-2.ipynb", '{"v": 2}')
        zf.writestr("all/readme.txt", "not a submission")
    result = collect(course, archive, ASSIGNMENT)
    collected, skipped = result.collected, result.skipped
    assert sorted(c.student for c in collected) == ["doejane", "smithbob"]
    assert result.notes == [f"smithbob: kept the resubmission all/smithbob_LATE_1_2_"
                            f"{ASSIGNMENT}-2.ipynb over all/smithbob_LATE_1_2_{ASSIGNMENT}-1.ipynb"]
    bob = course.submitted / "smithbob" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    assert bob.read_text() == '{"v": 2}'           # the latest resubmission wins
    assert skipped == ["all/readme.txt"]


def test_collect_from_folders_per_student(course, tmp_path):
    download = tmp_path / "download"
    (download / "Carol Jones_555_assignsubmission_file_").mkdir(parents=True)
    (download / "Carol Jones_555_assignsubmission_file_" / f"{ASSIGNMENT}.ipynb").write_text("{}")
    (download / "dave" / ASSIGNMENT).mkdir(parents=True)
    (download / "dave" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").write_text("{}")
    collected = collect(course, download).collected
    assert {(c.student, c.assignment) for c in collected} == {
        ("carol-jones", ASSIGNMENT), ("dave", ASSIGNMENT)}
    record = Roster.of(course).submission("carol-jones", ASSIGNMENT)
    assert (record["lms"], record["user"], record["name"], record["prefix"]) == (
        "moodle", "555", "Carol Jones", "Carol Jones_555_assignsubmission_file_")


def test_collect_refuses_a_zip_slip(course, tmp_path):
    archive = tmp_path / "evil.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr(f"../../escape_1_{ASSIGNMENT}.ipynb", "{}")
    with pytest.raises(CollectError, match="unsafe path"):
        collect(course, archive, ASSIGNMENT)
    assert not (tmp_path.parent / f"escape_1_{ASSIGNMENT}.ipynb").exists()


def test_collect_reports_a_bad_input(course, tmp_path):
    (tmp_path / "broken.zip").write_text("not a zip")
    with pytest.raises(CollectError, match="not a valid zip"):
        collect(course, tmp_path / "broken.zip")
    with pytest.raises(CollectError, match="does not exist"):
        collect(course, tmp_path / "nowhere")


def test_collect_takes_the_chinese_notebook_under_its_released_name(course, tmp_path):
    """A student who opened <a>.zh_CN.ipynb hands it in under that name: it is collected
    as it is named (grading takes it as <a>.ipynb, see tests/grader/submission/
    test_languages.py); a later collection of the same notebook in the other language
    replaces it."""
    zh = f"{ASSIGNMENT}.zh_CN.ipynb"
    archive = tmp_path / "download.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr(f"all/doejane_12345_67890_{zh}", '{"zh": 1}')
        zf.writestr(f"all/smithbob_1_2_{ASSIGNMENT}.zh_CN-1.ipynb", '{"zh": 1}')
        zf.writestr(f"all/smithbob_1_2_{ASSIGNMENT}.zh_CN-2.ipynb", '{"zh": 2}')
        zf.writestr(f"all/leeann_3_4_{ASSIGNMENT}.ipynb", '{"en": 1}')
        zf.writestr(f"all/leeann_3_4_{zh}", '{"zh": 1}')
    result = collect(course, archive, ASSIGNMENT)
    collected, skipped = result.collected, result.skipped
    assert skipped == []
    assert sorted((c.student, c.source) for c in collected) == [
        ("doejane", f"all/doejane_12345_67890_{zh}"),
        ("leeann", f"all/leeann_3_4_{ASSIGNMENT}.ipynb"), ("leeann", f"all/leeann_3_4_{zh}"),
        ("smithbob", f"all/smithbob_1_2_{ASSIGNMENT}.zh_CN-2.ipynb")]
    jane = course.submitted / "doejane" / ASSIGNMENT
    assert sorted(p.name for p in jane.iterdir()) == [zh]
    assert (course.submitted / "smithbob" / ASSIGNMENT / zh).read_text() == '{"zh": 2}'
    assert sorted(p.name for p in (course.submitted / "leeann" / ASSIGNMENT).iterdir()) == \
        [f"{ASSIGNMENT}.ipynb", zh]

    later = tmp_path / "later"
    (later / "doejane").mkdir(parents=True)
    (later / "doejane" / f"{ASSIGNMENT}.ipynb").write_text('{"en": 2}')
    collect(course, later, ASSIGNMENT)
    assert sorted(p.name for p in jane.iterdir()) == [f"{ASSIGNMENT}.ipynb"]


def _canvas_zip(path: Path, files: dict[str, str]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in files.items():
            zf.writestr(name, text)
    return path


def test_two_students_of_one_name_stay_two(course, tmp_path):
    """The bug of issue 33: two John Smiths, one late, were one student and one submission
    was silently dropped."""
    archive = _canvas_zip(tmp_path / "download.zip", {
        f"smithjohn_12345_777_{ASSIGNMENT}.ipynb": '{"who": "john A"}',
        f"smithjohn_LATE_67890_778_{ASSIGNMENT}.ipynb": '{"who": "john B"}'})
    result = collect(course, archive, ASSIGNMENT)
    assert sorted(c.student for c in result.collected) == ["smithjohn-12345", "smithjohn-67890"]
    assert len(result.notes) == 2 and all("smithjohn" in note for note in result.notes)
    for student, who in (("smithjohn-12345", "john A"), ("smithjohn-67890", "john B")):
        text = (course.submitted / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_text()
        assert json.loads(text) == {"who": who}
    roster = json.loads((course.root / ROSTER_FILE).read_text())
    late = roster["submissions"]["smithjohn-67890"][ASSIGNMENT]
    assert (late["lms"], late["user"], late["late"], late["attachment"], late["prefix"]) == (
        "canvas", "67890", True, "778", "smithjohn_LATE_67890_778_")
    assert late["files"] == {ASSIGNMENT: f"smithjohn_LATE_67890_778_{ASSIGNMENT}.ipynb"}
    assert roster["students"]["smithjohn-12345"]["keys"] == ["canvas:12345"]

    # The next week's download names them the same, in any order.
    again = _canvas_zip(tmp_path / "again.zip", {
        f"smithjohn_LATE_67890_901_{ASSIGNMENT}.ipynb": '{"who": "john B, again"}'})
    assert [c.student for c in collect(course, again, ASSIGNMENT).collected] == \
        ["smithjohn-67890"]


def test_a_collect_that_would_merge_changes_nothing(course, tmp_path):
    archive = _canvas_zip(tmp_path / "download.zip", {
        f"doejane_23456_779_{ASSIGNMENT}.ipynb": "{}",
        f"doejane_23456_780_{ASSIGNMENT}.ipynb": '{"other": 1}',       # same person, same name
        f"leeann_34567_781_{ASSIGNMENT}.ipynb": "{}"})
    with pytest.raises(CollectError, match=f"doejane_23456_779_{ASSIGNMENT}.ipynb and "
                                           f"doejane_23456_780_{ASSIGNMENT}.ipynb"):
        collect(course, archive, ASSIGNMENT)
    assert not course.submitted.exists() and not (course.root / ROSTER_FILE).exists()
    one_id_two_names = _canvas_zip(tmp_path / "odd.zip", {
        f"doejane_23456_779_{ASSIGNMENT}.ipynb": "{}",
        f"leeann_23456_781_{ASSIGNMENT}.zh_CN.ipynb": "{}"})
    with pytest.raises(CollectError, match="one LMS identity \\(canvas:23456\\) and two names"):
        collect(course, one_id_two_names, ASSIGNMENT)
    assert not course.submitted.exists()


def test_moodle_worksheet_gives_addresses_times_and_ids(course, tmp_path):
    download = tmp_path / "moodle"
    for number in ("201", "202"):
        folder = download / f"李伟_{number}_assignsubmission_file"
        folder.mkdir(parents=True)
        (folder / f"{ASSIGNMENT}.ipynb").write_text(f'{{"p": {number}}}')
    worksheet = tmp_path / "worksheet.csv"
    shutil.copyfile(DATA / "moodle-worksheet-zh.csv", worksheet)
    result = collect(course, download, ASSIGNMENT, worksheet)
    assert sorted(c.student for c in result.collected) == ["li.wei", "li.wei.2"]
    roster = Roster.of(course)
    assert roster.students["li.wei.2"]["email"] == "li.wei.2@univ.example.cn"
    assert roster.students["li.wei.2"]["name"] == "李伟"
    assert sorted(roster.students["li.wei.2"]["keys"]) == [
        "email:li.wei.2@univ.example.cn", f"moodle:{ASSIGNMENT}:202"]
    assert roster.submission("li.wei.2", ASSIGNMENT)["submitted_at"] == "2026-10-07T01:45:00"
    broken = tmp_path / "broken.csv"
    broken.write_text("Identifier,Grade\nnobody,1\n")
    with pytest.raises(CollectError, match="line 1: no Last modified"):
        collect(course, download, ASSIGNMENT, broken)


def test_nbgrader_timestamps_are_kept_and_read_by_the_policy(course, tmp_path):
    from autograder.commands.lateness import lateness_of
    from autograder.lms.deadlines import parse

    download = tmp_path / "exchange"
    folder = download / "alice" / ASSIGNMENT
    folder.mkdir(parents=True)
    (folder / f"{ASSIGNMENT}.ipynb").write_text("{}")
    (folder / "timestamp.txt").write_text("2026-10-06 03:00:00.000000 UTC")   # as nbgrader
    collect(course, download, ASSIGNMENT)
    kept = course.submitted / "alice" / ASSIGNMENT / "timestamp.txt"
    assert kept.read_text() == "2026-10-06 03:00:00+00:00"
    deadlines = parse(f'timezone = "Asia/Shanghai"\n[policies]\np = {{ per_day = 0.25 }}\n'
                      f'[assignments.{ASSIGNMENT}]\ndue = 2026-10-05T23:59:00\npolicy = "p"\n')
    late = lateness_of(course, deadlines, Roster.of(course), "alice", ASSIGNMENT)
    assert (late.days, late.credit) == (1, 0.75)          # 11 hours after 15:59 UTC

    (folder / "timestamp.txt").write_text("yesterday, I think")
    with pytest.raises(CollectError, match="not a time nbgrader writes"):
        collect(course, download, ASSIGNMENT)


def test_a_renamed_notebook_from_an_lms_is_not_lost(course, tmp_path):
    archive = _canvas_zip(tmp_path / "download.zip", {
        "doejane_23456_779_Copy of attention-scoring (1).ipynb": '{"jane": 1}',
        f"leeann_34567_781_{ASSIGNMENT}.ipynb": '{"ann": 1}',
        "leeann_34567_782_scratch.ipynb": '{"ann": "scratch"}',       # beside the real one
        "kimbo_45678_783_a.ipynb": "{}", "kimbo_45678_784_b.ipynb": "{}"})   # which one?
    result = collect(course, archive, ASSIGNMENT)
    assert sorted(c.student for c in result.collected) == ["doejane", "leeann"]
    jane = course.submitted / "doejane" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    assert json.loads(jane.read_text()) == {"jane": 1}
    assert any("Copy of attention-scoring (1).ipynb: not named as the notebook" in note
               for note in result.notes)
    assert sorted(result.skipped) == ["kimbo_45678_783_a.ipynb", "kimbo_45678_784_b.ipynb",
                                      "leeann_34567_782_scratch.ipynb"]
