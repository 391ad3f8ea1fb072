"""The weekly round trip with Canvas and Moodle, through the real command line.

An LMS download holding two students of one name (one late), a resubmitted file, and a
Chinese-language Moodle's download with its worksheet is collected, graded, and sent back:
Canvas's gradebook CSV, Moodle's worksheet and gradebook import file, both feedback zips.
Each file is checked against its format's rules as the LMS's own importer applies them
(tests/data/lms/README.md names where each rule comes from); nothing is merged or dropped.
"""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import zipfile
from pathlib import Path

import nbformat
import pytest

from autograder.commands.release import assignment_secrets
from autograder.lms.table import BOM
from autograder.proving.catalogue import implementations
from tests.conftest import ASSIGNMENT, filled, make_course, run_cli

pytestmark = pytest.mark.xdist_group("lms-round-trip")

DATA = Path(__file__).resolve().parents[2] / "data" / "lms"
TESTS = 14.0       # the points the hidden tests give; the written answers await a person
DEADLINES = f"""
timezone = "Asia/Shanghai"

[policies]
standard = {{ per_day = 0.10, last_day = 7, grace_minutes = 15 }}

[assignments.{ASSIGNMENT}]
due = 2026-10-05T23:59:00
policy = "standard"
excused = ["doejane"]
"""
CANVAS = {   # file in the download -> (student id expected, what they handed in)
    f"smithjohn_12345_777_{ASSIGNMENT}.ipynb": ("smithjohn-12345", "correct"),
    f"smithjohn_LATE_67890_778_{ASSIGNMENT}.ipynb": ("smithjohn-67890", "mistake"),
    f"doejane_23456_779_{ASSIGNMENT}.ipynb": ("doejane", "untouched"),
    f"doejane_23456_780_{ASSIGNMENT}-1.ipynb": ("doejane", "correct"),    # resubmitted
}
MOODLE = {"201": ("li.wei", "correct"), "202": ("li.wei.2", "mistake")}


def _rows(path: Path, separator: str = ",") -> list[list[str]]:
    text = path.read_text(encoding="utf-8")
    return list(csv.reader(io.StringIO(text.removeprefix(BOM)), delimiter=separator))


@pytest.fixture(scope="module")
def round_trip(tmp_path_factory):
    course = make_course(tmp_path_factory.mktemp("lms") / "course")
    (course.root / "deadlines.toml").write_text(DEADLINES)
    release_nb = nbformat.read(course.release / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", 4)
    mutant = next(i for i in implementations(ASSIGNMENT, "mutant") if i.name == "scaled_by_sqrt_n")
    work = {"correct": nbformat.writes(filled(course)), "untouched": nbformat.writes(release_nb),
            "mistake": nbformat.writes(filled(course, mutant.code))}
    downloads = tmp_path_factory.mktemp("downloads")

    canvas_zip = downloads / "submissions.zip"
    with zipfile.ZipFile(canvas_zip, "w") as zf:
        for name, (_, kind) in CANVAS.items():
            zf.writestr(name, work[kind])
    canvas = run_cli(course, "collect", str(canvas_zip), "--assignment", ASSIGNMENT)
    assert canvas.returncode == 0, canvas.stderr

    moodle = downloads / "moodle"
    for number, (_, kind) in MOODLE.items():
        folder = moodle / f"李伟_{number}_assignsubmission_file"
        folder.mkdir(parents=True)
        (folder / f"{ASSIGNMENT}.ipynb").write_text(work[kind])
    worksheet = downloads / "Grades-NLP-attention-scoring-17.csv"
    shutil.copyfile(DATA / "moodle-worksheet-zh.csv", worksheet)
    moodle_run = run_cli(course, "collect", str(moodle), "--moodle-worksheet", str(worksheet))
    assert moodle_run.returncode == 0, moodle_run.stderr

    graded = run_cli(course, "grade", "--jobs", "2")
    assert graded.returncode == 0, graded.stderr
    out = downloads / "out"
    out.mkdir()
    feedback = run_cli(course, "feedback", ASSIGNMENT, "--canvas-zip", str(out / "canvas.zip"),
                       "--moodle-zip", str(out / "moodle.zip"))
    assert feedback.returncode == 0, feedback.stderr
    exports = [run_cli(course, "export", "--canvas", str(DATA / "canvas-gradebook.csv"),
                       "--output", str(out / "canvas-gradebook.csv")),
               run_cli(course, "export", "--moodle-worksheet", str(worksheet),
                       "--output", str(out / "moodle-worksheet.csv")),
               run_cli(course, "export", "--moodle-gradebook", str(out / "moodle-gradebook.csv")),
               run_cli(course, "export", "--json", str(out / "grades.json"),
                       "--csv", str(out / "grades.csv"))]
    for step in exports:
        assert step.returncode == 0, step.stderr
    scores = json.loads((out / "grades.json").read_text())["students"]
    return course, out, canvas.stdout + moodle_run.stdout, feedback.stdout, \
        [e.stdout for e in exports], scores


def test_nobody_is_merged_or_dropped(round_trip):
    course, _, collected, _, _, scores = round_trip
    expected = {s for s, _ in CANVAS.values()} | {s for s, _ in MOODLE.values()}
    assert set(scores) == expected
    assert {p.name for p in course.submitted.iterdir()} == expected
    assert "collected 3 submission(s)" in collected and "collected 2 submission(s)" in collected
    assert "smithjohn-12345" in collected and "the id 'smithjohn' is another person's" in collected
    assert f"kept the resubmission doejane_23456_780_{ASSIGNMENT}-1.ipynb" in collected


def test_grades_follow_the_policy_and_keep_the_raw_score(round_trip):
    _, out, _, _, _, scores = round_trip
    right, late_mistake = scores["smithjohn-12345"][ASSIGNMENT], \
        scores["smithjohn-67890"][ASSIGNMENT]
    assert right["score"] == TESTS and right["late"]["credit"] == 1.0
    assert 0 < late_mistake["score"] < TESTS
    assert late_mistake["late"]["days"] == 1 and late_mistake["late"]["credit"] == 0.9
    assert "marked late by the LMS" in late_mistake["late"]["basis"]
    assert late_mistake["late"]["final_score"] == pytest.approx(0.9 * late_mistake["score"])
    assert scores["doejane"][ASSIGNMENT]["excused"] is True
    assert scores["doejane"][ASSIGNMENT]["score"] == TESTS      # the resubmission was graded
    moodle_late = scores["li.wei.2"][ASSIGNMENT]["late"]
    assert (moodle_late["days"], moodle_late["credit"]) == (2, 0.8)  # 10-07 01:45 for 10-05 23:59
    rows = {r["student_id"]: r for r in csv.DictReader(io.StringIO(
        (out / "grades.csv").read_text()))}
    assert float(rows["smithjohn-67890"]["final_score"]) == \
        pytest.approx(late_mistake["late"]["final_score"])
    assert rows["doejane"]["excused"] == "yes" and rows["doejane"]["final_score"] == ""


def test_canvas_gradebook_changes_only_the_assignments_cells(round_trip):
    _, out, _, _, printed, scores = round_trip
    before, after = _rows(DATA / "canvas-gradebook.csv"), _rows(out / "canvas-gradebook.csv")
    assert (out / "canvas-gradebook.csv").read_bytes().startswith(BOM.encode())
    column = before[0].index("Attention scoring (4411)")
    by_id = {r[1]: r[column] for r in after[3:]}
    late = scores["smithjohn-67890"][ASSIGNMENT]["late"]["final_score"]
    assert by_id["12345"] == "14"
    assert float(by_id["67890"]) == pytest.approx(late, abs=1e-9)      # full precision
    assert by_id["23456"] == "EX"                                      # excused
    assert by_id["34567"] == "N/A" and by_id["99999"] == ""            # not in the course
    for old, new in zip(before, after, strict=True):
        assert old[:column] + old[column + 1:] == new[:column] + new[column + 1:]
    assert "graded in the course but not in the file (not sent): li.wei, li.wei.2" in printed[0]
    # As Canvas's importer reads it: the header, then rows whose ID column is a user id.
    assert after[0][:5] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
    assert "Points Possible" in after[2][0] and after[2][column] == "14.00"


def test_moodle_worksheet_changes_only_grade_and_feedback(round_trip):
    _, out, _, _, _, scores = round_trip
    before, after = _rows(DATA / "moodle-worksheet-zh.csv"), _rows(out / "moodle-worksheet.csv")
    assert after[0] == before[0]                        # Moodle's Chinese headers, exactly
    grade, comment = before[0].index("成绩"), before[0].index("反馈意见")
    changed = {grade, comment}
    for old, new in zip(before, after, strict=True):
        assert [c for i, c in enumerate(old) if i not in changed] == \
            [c for i, c in enumerate(new) if i not in changed]
    late = scores["li.wei.2"][ASSIGNMENT]
    assert after[1][grade] == "14"
    assert float(after[2][grade]) == pytest.approx(late["late"]["final_score"])
    assert "late by 2 days" in after[2][comment] and "80% credit" in after[2][comment]
    assert after[3] == before[3]                        # 王芳 handed nothing in: as it was
    text = (out / "moodle-worksheet.csv").read_bytes()
    assert text.startswith(BOM.encode()) and text.count(b"\n") == 4


def test_moodle_gradebook_import_file(round_trip):
    _, out, _, _, printed, scores = round_trip
    rows = _rows(out / "moodle-gradebook.csv")
    assert rows[0] == ["Email address", "Full name", ASSIGNMENT]
    assert {r[0]: r[2] for r in rows[1:]} == {
        "li.wei@univ.example.cn": "14",
        "li.wei.2@univ.example.cn": f"{scores['li.wei.2'][ASSIGNMENT]['late']['final_score']:.12g}"}
    assert "not sent): doejane, smithjohn-12345, smithjohn-67890" in printed[2]


def _canvas_reupload_target(name: str) -> tuple[str, str]:
    """(user id, attachment id) as Canvas's generate_comments_from_files reads a name."""
    parts = [p for p in Path(name).name.split("_") if p != "LATE"]
    user, attachment = [p for p in parts if p.isdigit()][:2]
    return user, attachment


def _moodle_zip_target(name: str) -> str:
    """The participant id as Moodle's importziplib reads a name (explode('_', name, 5))."""
    info = Path(name).name.split("_", 4)
    assert len(info) == 5 and info[2:4] == ["assignsubmission", "file"]
    assert info[1].isdigit()
    return info[1]


def test_feedback_zips_reach_each_student_and_only_them(round_trip):
    course, out, _, printed, _, _ = round_trip
    secrets = {line for line in assignment_secrets(course, ASSIGNMENT)
               if "ref_" in line or "report(" in line}
    roster = json.loads((course.root / "lms-roster.json").read_text())["submissions"]
    with zipfile.ZipFile(out / "canvas.zip") as zf:
        canvas = {name: zf.read(name).decode() for name in zf.namelist()}
    with zipfile.ZipFile(out / "moodle.zip") as zf:
        moodle = {name: zf.read(name).decode() for name in zf.namelist()}
    owners = {"12345": "smithjohn-12345", "67890": "smithjohn-67890", "23456": "doejane"}
    seen = set()
    for name, page in canvas.items():
        user, attachment = _canvas_reupload_target(name)
        student = owners[user]
        assert attachment == roster[student][ASSIGNMENT]["attachment"]   # the kept file's
        seen.add(student)
        assert not any(line in page for line in secrets)
        others = set(owners.values()) - {student} | {"li.wei"}
        assert not any(f"<strong>{other}</strong>" in page for other in others)
    assert seen == set(owners.values())
    assert sum(name.endswith("-feedback.html") for name in canvas) == 3
    late_page = canvas[f"smithjohn_LATE_67890_778_{ASSIGNMENT}-feedback.html"]
    assert "1 day(s) late" in late_page and "90%" in late_page
    assert f'href="./smithjohn_LATE_67890_778_{ASSIGNMENT}-{ASSIGNMENT}-annotated.html"' \
        in late_page
    assert f"smithjohn_LATE_67890_778_{ASSIGNMENT}-{ASSIGNMENT}-annotated.html" in canvas
    participants = {_moodle_zip_target(name) for name in moodle}
    assert participants == set(MOODLE)
    chinese = moodle[f"李伟_202_assignsubmission_file_{ASSIGNMENT}-feedback.html"]
    assert "迟交 2 天" in chinese or "2 day(s) late" in chinese
    assert "not collected from canvas, so not in the zip: li.wei, li.wei.2" in printed
    for page in [*canvas.values(), *moodle.values()]:
        assert re.search(r"<script(?![^>]*src=)", page) is None      # no inline script


def test_report_shows_late_work_and_lms_names(round_trip):
    course, *_ = round_trip
    page = run_cli(course, "report", ASSIGNMENT)
    assert page.returncode == 0, page.stderr
    html = " ".join((course.root / "reports" / f"{ASSIGNMENT}.html").read_text().split())
    assert "<h2>Late work</h2>" in html and "2 late submission(s), 1 excused" in html
    assert "smithjohn (Canvas 12345)" in html and "smithjohn (Canvas 67890)" in html
    assert "李伟 (Moodle 202)" in html


def test_a_malformed_lms_file_is_refused_whole(round_trip, tmp_path):
    course, *_ = round_trip
    broken = tmp_path / "gradebook.csv"
    lines = (DATA / "canvas-gradebook.csv").read_text(encoding="utf-8").splitlines(True)
    lines[4] = lines[4].replace(",S1002,", ",")        # one cell short
    broken.write_text("".join(lines), encoding="utf-8")
    target = tmp_path / "out.csv"
    refused = run_cli(course, "export", "--canvas", str(broken), "--output", str(target))
    assert refused.returncode == 2 and "line 5: 12 cells where the header has 13" in refused.stderr
    assert "nothing was written" in refused.stderr and not target.exists()


# ------------------------------------------------------------------- read by the LMSs' parsers
# The files are read again by Ruby's CSV library (Canvas's importer is Ruby) and PHP's
# fgetcsv (Moodle's), with the steps of the LMSs' importers around them
# (tests/grader/lms/peers/): what those parsers read is what the grader meant to send.

PEERS = Path(__file__).resolve().parents[1] / "lms" / "peers"
MOODLE_ZH = {"delimiter": ",", "gradenoun": "成绩", "recordid": "标识符",
             "lastmodifiedgrade": "上次修改（评分）", "hiddenuser": "参与人",
             "feedback": "反馈意见"}


def peer(program: str, *args: str) -> dict:
    import subprocess

    interpreter = shutil.which(program)
    if interpreter is None:
        pytest.fail(f"{program} is needed to read the LMS files as the LMS does: make lms-tools")
    script = PEERS / ("canvas_import.rb" if program == "ruby" else "moodle_import.php")
    done = subprocess.run([interpreter, str(script), *args], capture_output=True, text=True,
                          timeout=60, check=True)
    result = json.loads(done.stdout)
    assert "error" not in result, result
    return result


def test_canvas_reads_the_gradebook_and_the_zip_as_meant(round_trip, tmp_path):
    course, out, _, _, _, scores = round_trip
    before = peer("ruby", "gradebook", str(DATA / "canvas-gradebook.csv"))
    after = peer("ruby", "gradebook", str(out / "canvas-gradebook.csv"))
    assert after["assignments"] == before["assignments"] == [
        ["Attention scoring", "4411"], ["Reading response", "4412"]]
    column = "Attention scoring|4411"
    late = scores["smithjohn-67890"][ASSIGNMENT]["late"]["final_score"]
    assert after["students"]["12345"][column] == "14"
    assert float(after["students"]["67890"][column]) == pytest.approx(late)
    assert after["students"]["23456"][column] == "EX"
    for user, cells in after["students"].items():       # nothing else changes on import
        assert {k: v for k, v in cells.items() if k != column or user not in
                {"12345", "67890", "23456"}} == \
            {k: v for k, v in before["students"][user].items() if k != column or user not in
             {"12345", "67890", "23456"}}
    with zipfile.ZipFile(out / "canvas.zip") as zf:
        names = zf.namelist()
    (tmp_path / "names.json").write_text(json.dumps(names))
    targets = peer("ruby", "reupload", str(tmp_path / "names.json"))["files"]
    roster = json.loads((course.root / "lms-roster.json").read_text())["submissions"]
    expected = {(roster[s][ASSIGNMENT]["user"], roster[s][ASSIGNMENT]["attachment"])
                for s in ("smithjohn-12345", "smithjohn-67890", "doejane")}
    assert {tuple(t) for t in targets.values()} == expected


def test_canvas_reads_a_new_column_in_a_semicolon_file(tmp_path):
    from autograder.lms import canvas
    from autograder.lms.table import read_table

    table = read_table(DATA / "canvas-gradebook-semicolons.csv", "x")
    canvas.fill(table, "multihead-attention", {"12345": "7.25", "67890": "12"}, 18.0)
    table.write(tmp_path / "out.csv")
    read = peer("ruby", "gradebook", str(tmp_path / "out.csv"))
    assert read["assignments"][-1] == ["multihead-attention", None]     # a new assignment
    assert read["points"]["multihead-attention|"] == "18"
    assert read["students"]["12345"]["multihead-attention|"] == "7.25"
    assert read["students"]["12345"]["Reading response|4412"] == "4.50"   # 4,50: decimal comma


def test_moodle_reads_the_worksheet_and_the_zip_as_meant(round_trip, tmp_path):
    _, out, _, _, _, scores = round_trip
    strings = tmp_path / "strings.json"
    strings.write_text(json.dumps(MOODLE_ZH, ensure_ascii=False))
    rows = peer("php", "worksheet", str(out / "moodle-worksheet.csv"), str(strings))["rows"]
    original = peer("php", "worksheet", str(DATA / "moodle-worksheet-zh.csv"), str(strings))
    assert set(rows) == {"201", "202", "203"}
    assert rows["201"]["grade"] == "14"
    late = scores["li.wei.2"][ASSIGNMENT]["late"]
    assert float(rows["202"]["grade"]) == pytest.approx(late["final_score"])
    assert "late by 2 days" in rows["202"]["feedback"]
    assert rows["203"] == original["rows"]["203"]
    assert {r["modified"] for r in rows.values()} == {"-"}   # Moodle's stale-grade check intact
    with zipfile.ZipFile(out / "moodle.zip") as zf:
        names = zf.namelist()
    (tmp_path / "names.json").write_text(json.dumps(names, ensure_ascii=False))
    files = peer("php", "zip", str(tmp_path / "names.json"))["files"]
    assert set(files.values()) == set(MOODLE) and len(files) == 4    # page + notebook each
