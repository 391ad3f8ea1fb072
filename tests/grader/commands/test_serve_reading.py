"""A submission's folder in the exchange is its student's: nothing in it is followed."""

from __future__ import annotations

import getpass
import os
from pathlib import Path

from autograder.commands.serve import MAX_BYTES, _read_submission


def test_links_are_never_followed(tmp_path):
    secret = tmp_path / "another-students-notebook.ipynb"
    secret.write_text("someone else's work")
    folder = tmp_path / "submission"
    (folder / "sub").mkdir(parents=True)
    (folder / "attention-scoring.ipynb").write_text("my work")
    (folder / "sub" / "notes.txt").write_text("notes")
    os.symlink(secret, folder / "linked.ipynb")
    os.symlink(tmp_path, folder / "linked-folder")
    os.mkfifo(folder / "a-pipe")
    files = _read_submission(folder, getpass.getuser())
    assert files == {Path("attention-scoring.ipynb"): b"my work",
                     Path("sub/notes.txt"): b"notes"}


def test_the_folder_must_still_be_its_students(tmp_path):
    folder = tmp_path / "submission"
    folder.mkdir()
    assert "changed hands" in _read_submission(folder, "somebody-else")
    linked = tmp_path / "link"
    os.symlink(folder, linked)
    assert _read_submission(linked, getpass.getuser()) == {}     # not followed at all


def test_a_submission_too_large_is_refused(tmp_path):
    folder = tmp_path / "submission"
    folder.mkdir()
    (folder / "big.bin").write_bytes(b"\0" * (MAX_BYTES + 1))
    assert "larger than" in _read_submission(folder, getpass.getuser())
