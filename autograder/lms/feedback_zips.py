"""Zips of feedback files, named so that each LMS finds whose every file is.

* **Canvas**, *Re-upload submissions* (``app/models/assignment.rb``,
  ``generate_comments_from_files``): reads each file's base name, drops ``LATE``, and takes
  the first two all-digit ``_``-separated parts as the user id and the id of an attachment
  of that user's submission; a file that matches no submission is ignored. Each file is
  attached to a comment on that student's submission. So a feedback file keeps the prefix
  the download gave the student's file, ``<name>_[LATE_]<user id>_<attachment id>_``,
  followed by a name of ours with no ``_`` in it.
* **Moodle**, *Upload multiple feedback files in a zip*
  (``mod/assign/feedback/file/importziplib.php``): splits a path part on ``_`` into
  ``<name>_<participant id>_<plugin type>_<plugin>_<file>`` and attaches the file to that
  participant's feedback; files it cannot match are ignored. So a feedback file is named
  ``<Full Name>_<participant id>_assignsubmission_file_<file>``, the flat form of the
  download's folders.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

FIXED_TIME = (2020, 1, 1, 0, 0, 0)      # the same zip for the same files


def _ours(name: str) -> str:
    """A file name of ours that cannot be read as an LMS's id: no ``_``, no ``/``."""
    return name.replace("_", "-").replace("/", "-")


def canvas_member(record: dict, name: str) -> str:
    """The name under which Canvas's re-upload attaches ``name`` to the collected
    submission ``record`` (the roster's record, :mod:`.roster`)."""
    return record["prefix"] + _ours(name)


def moodle_member(record: dict, name: str) -> str:
    """The name under which Moodle's feedback-zip import gives ``name`` to the participant
    of the collected submission ``record``."""
    return record["prefix"] + _ours(name)


def write_zip(path: Path, members: dict[str, bytes]) -> None:
    """Write ``members`` (``{name: content}``) as a zip, in name order, with fixed times;
    written beside ``path`` first, so that a failure leaves nothing half written."""
    partial = path.with_name(path.name + ".partial")
    with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(members):
            info = zipfile.ZipInfo(name, FIXED_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, members[name])
    partial.replace(path)
