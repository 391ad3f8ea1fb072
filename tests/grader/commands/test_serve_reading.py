"""A submission's folder in the exchange is its student's: nothing in it is followed."""

from __future__ import annotations

import getpass
import os
from pathlib import Path

from autograder.commands.serve import MAX_BYTES, _read_submission
from autograder.course.exchange import Exchange


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
    files = _read_submission(folder, getpass.getuser(), Exchange(tmp_path))
    assert files == {Path("attention-scoring.ipynb"): b"my work",
                     Path("sub/notes.txt"): b"notes"}


def test_the_folder_must_still_be_its_students(tmp_path):
    folder = tmp_path / "submission"
    folder.mkdir()
    assert "changed hands" in _read_submission(folder, "somebody-else", Exchange(tmp_path))
    linked = tmp_path / "link"
    os.symlink(folder, linked)
    # not followed at all
    assert _read_submission(linked, getpass.getuser(), Exchange(tmp_path)) == {}


def test_a_submission_too_large_is_refused(tmp_path):
    folder = tmp_path / "submission"
    folder.mkdir()
    (folder / "big.bin").write_bytes(b"\0" * (MAX_BYTES + 1))
    assert "larger than" in _read_submission(folder, getpass.getuser(), Exchange(tmp_path))


def test_on_kubernetes_the_hub_s_accounts_file_says_whose_a_uid_is(tmp_path):
    """Each student's pod has a uid the hub gave it (hub/kubernetes/): the grader reads the
    hub's accounts file, not its own machine's users; a uid given twice is nobody's."""
    me = os.geteuid()
    accounts = tmp_path / "accounts"
    folder = tmp_path / "submission"
    (folder / "attention-scoring.ipynb").parent.mkdir()
    (folder / "attention-scoring.ipynb").write_text("alice's work")
    accounts.write_text(f"bob:x:{me + 1}:{me + 1}::/home/jovyan:/usr/sbin/nologin\n"
                        f"alice:x:{me}:{me}::/home/jovyan:/usr/sbin/nologin\n")
    exchange = Exchange(tmp_path, accounts=accounts)
    assert exchange.user_of(me) == "alice"
    assert exchange.user_of(me + 2) == f"uid {me + 2}"
    assert _read_submission(folder, "alice", exchange) == \
        {Path("attention-scoring.ipynb"): b"alice's work"}
    assert "changed hands" in _read_submission(folder, getpass.getuser(), exchange)
    accounts.write_text(accounts.read_text() + f"mallory:x:{me}:{me}::/:/usr/sbin/nologin\n")
    assert exchange.user_of(me) == f"uid {me}"
    assert "changed hands" in _read_submission(folder, "alice", exchange)
