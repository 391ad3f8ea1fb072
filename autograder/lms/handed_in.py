"""Who handed in a file, as the learning-management system (LMS) named it.

* **Canvas** (*Download submissions*, ``lib/content_zipper.rb``) names each file
  ``<sortable name>_[LATE_]<user id>_<attachment id>_<file name>``: the name is the
  student's sortable name lower-cased with everything but letters and digits removed
  (``smithjohn``), ``LATE_`` marks a submission made after its due date, the user id is
  Canvas's numeric ``ID`` (the one its gradebook import matches on), the attachment id
  that of the file handed in (its *Re-upload submissions* finds the submission by these
  two numbers), and the file name is the student's, with ``-1``, ``-2`` … when they
  handed in the same name again. Under anonymous grading the name and user id are
  replaced by ``anon_<anonymous id>``.
* **Moodle** (*Download all submissions*, ``mod/assign/classes/downloader.php``) puts each
  participant's files in a folder ``<Full Name>_<participant id>_assignsubmission_file``
  (``…_file_`` before Moodle 4.1; or, without folders, it prefixes each file name with
  ``…_file_``); the participant id is that of one assignment (``assign_user_mapping``),
  the number of the *Participant …* identifier of its grading worksheet.
* **nbgrader** and a plain folder per student: ``<student>/[<assignment>/]<notebook>.ipynb``,
  the folder's name being the student id; nbgrader's ``timestamp.txt`` beside the
  notebook gives the submission time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

CANVAS, MOODLE, FOLDER = "canvas", "moodle", "folder"

CANVAS_FILE = re.compile(
    r"^(?P<name>[^_/]+)_(?P<late>LATE_)?(?P<user>\d+)_(?P<attachment>\d+)_(?P<file>[^/]+)$")
CANVAS_ANONYMOUS_FILE = re.compile(
    r"^(?P<late>LATE_)?anon_(?P<user>[A-Za-z0-9]+)_(?P<attachment>\d+)_(?P<file>[^/]+)$")
MOODLE_PREFIX = re.compile(
    r"^(?P<name>[^/_]+)_(?P<user>\d+)_assign(?:submission|feedback)_(?P<plugin>[a-z]+)(?:_|/)")
NBGRADER_TIMESTAMP = "timestamp.txt"


@dataclass(frozen=True)
class HandedIn:
    """One file of a download and whom the LMS says it is from."""

    lms: str                 # CANVAS, MOODLE or FOLDER
    user: str                # Canvas's user id, Moodle's participant id, or the folder's name
    name: str                # the student's name as the LMS wrote it
    file: str                # the student's own file name (Canvas: as it names it)
    prefix: str = ""         # what the LMS put before the student's file name
    attachment: str = ""     # Canvas's attachment id of the file
    late: bool = False       # Canvas marked the submission late
    submitted_at: str = ""   # ISO 8601 with offset, when a timestamp says so

    @property
    def identity(self) -> tuple[str, str]:
        """(lms, user): one student of that LMS. A Moodle participant id is that of one
        assignment; the roster links a Moodle student's assignments by e-mail."""
        return self.lms, self.user


def from_canvas(name: str) -> HandedIn | None:
    """A Canvas download's file name, or None if it is not one. An anonymous student's
    user is ``anon_<anonymous id>``."""
    anonymous = CANVAS_ANONYMOUS_FILE.match(name)
    if anonymous is not None:
        return HandedIn(CANVAS, f"anon_{anonymous['user']}", "", anonymous["file"],
                        name[:anonymous.start("file")], anonymous["attachment"],
                        bool(anonymous["late"]))
    match = CANVAS_FILE.match(name)
    if match is None:
        return None
    prefix = name[:match.start("file")]
    return HandedIn(CANVAS, match["user"], match["name"], match["file"], prefix,
                    match["attachment"], bool(match["late"]))


def from_moodle(path: str) -> HandedIn | None:
    """A Moodle download's folder/file path (``Name_12_assignsubmission_file/x.ipynb``,
    ``Name_12_assignsubmission_file_/x.ipynb`` or ``Name_12_assignsubmission_file_x.ipynb``),
    or None if it is not one. The prefix kept is always the flat form, ``…_file_``, which
    Moodle's feedback import reads."""
    match = MOODLE_PREFIX.match(path)
    if match is None:
        return None
    rest = path[match.end():].lstrip("/")
    prefix = f"{match['name']}_{match['user']}_assignsubmission_{match['plugin']}_"
    return HandedIn(MOODLE, match["user"], match["name"], rest, prefix)
