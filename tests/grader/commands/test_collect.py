"""`collect`: LMS downloads (zip or folder) -> submitted/<student>/<assignment>/."""

from __future__ import annotations

import zipfile

import pytest

from autograder.commands.collect import CollectError, collect, student_id
from tests.conftest import ASSIGNMENT


@pytest.mark.parametrize("raw, expected", [
    ("alice", "alice"),
    ("Jane Doe_1234567_assignsubmission_file_", "jane-doe"),
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
    collected, skipped = collect(course, archive, ASSIGNMENT)
    assert sorted(c.student for c in collected) == ["doejane", "smithbob"]
    bob = course.submitted / "smithbob" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    assert bob.read_text() == '{"v": 2}'           # the latest resubmission wins
    assert skipped == ["all/readme.txt"]


def test_collect_from_folders_per_student(course, tmp_path):
    download = tmp_path / "download"
    (download / "Carol Jones_555_assignsubmission_file_").mkdir(parents=True)
    (download / "Carol Jones_555_assignsubmission_file_" / f"{ASSIGNMENT}.ipynb").write_text("{}")
    (download / "dave" / ASSIGNMENT).mkdir(parents=True)
    (download / "dave" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").write_text("{}")
    collected, _ = collect(course, download)
    assert {(c.student, c.assignment) for c in collected} == {
        ("carol-jones", ASSIGNMENT), ("dave", ASSIGNMENT)}


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
        zf.writestr(f"all/leeann_1_2_{ASSIGNMENT}.ipynb", '{"en": 1}')
        zf.writestr(f"all/leeann_1_2_{zh}", '{"zh": 1}')
    collected, skipped = collect(course, archive, ASSIGNMENT)
    assert skipped == []
    assert sorted((c.student, c.source) for c in collected) == [
        ("doejane", f"all/doejane_12345_67890_{zh}"),
        ("leeann", f"all/leeann_1_2_{ASSIGNMENT}.ipynb"), ("leeann", f"all/leeann_1_2_{zh}"),
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
