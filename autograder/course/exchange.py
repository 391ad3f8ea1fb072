"""nbgrader's exchange: where students fetch assignments and hand them in on a JupyterHub.

nbgrader's filesystem exchange is a folder every user of the hub can reach
(``<root>/<course id>/``): ``outbound/<assignment>/`` holds what ``release`` published,
``inbound/`` what students submitted, one folder per submission named
``<student>+<assignment>+<timestamp>+<random>``, and ``feedback/`` the feedback released to
them, one file per notebook named by a hash only its student can compute. Students may
write into ``inbound/`` but not list it, and may read a feedback file but not list the
folder: the random names keep one student's work from another's.
"""

from __future__ import annotations

import os
import pwd
from dataclasses import dataclass
from pathlib import Path

DEFAULT_COURSE_ID = "attention-nlp"
ROOT_VARIABLE, COURSE_VARIABLE = "AUTOGRADER_EXCHANGE", "AUTOGRADER_COURSE_ID"
# On Kubernetes each student's server runs in a pod of its own, with a uid the hub gave it
# (hub/kubernetes/): the hub writes who has which uid to an accounts file in /etc/passwd's
# format, which the grader reads instead of the machine's own user database.
ACCOUNTS_VARIABLE = "AUTOGRADER_ACCOUNTS"


@dataclass(frozen=True)
class Exchange:
    """One course's place in nbgrader's filesystem exchange."""

    root: Path
    course_id: str = DEFAULT_COURSE_ID
    accounts: Path | None = None     # who has which uid; None: this machine's users

    @classmethod
    def named(cls, root: str | None, course_id: str | None = None) -> Exchange | None:
        """The exchange given on the command line, else by ``$AUTOGRADER_EXCHANGE`` and
        ``$AUTOGRADER_COURSE_ID`` (its accounts by ``$AUTOGRADER_ACCOUNTS``); None if
        neither names one."""
        root = root or os.environ.get(ROOT_VARIABLE)
        if not root:
            return None
        accounts = os.environ.get(ACCOUNTS_VARIABLE)
        return cls(Path(root), course_id or os.environ.get(COURSE_VARIABLE) or DEFAULT_COURSE_ID,
                   Path(accounts) if accounts else None)

    def user_of(self, uid: int) -> str:
        """The name of the user whose uid is ``uid`` (``"uid <n>"`` if nobody's): from the
        accounts file if the exchange has one (read afresh: a student's first server start
        adds them), else from this machine's users. A uid the file gives to two names
        belongs to nobody."""
        if self.accounts is None:
            try:
                return pwd.getpwuid(uid).pw_name
            except KeyError:
                return f"uid {uid}"
        names = set()
        for line in self.accounts.read_text(encoding="utf-8").splitlines():
            fields = line.split(":")
            if len(fields) >= 3 and fields[2].strip().isdigit() and int(fields[2]) == uid:
                names.add(fields[0])
        return names.pop() if len(names) == 1 else f"uid {uid}"

    @property
    def inbound(self) -> Path:
        return self.root / self.course_id / "inbound"

    @property
    def outbound(self) -> Path:
        return self.root / self.course_id / "outbound"


@dataclass(frozen=True)
class InboundName:
    """What a submission's folder name in ``inbound/`` claims (the student wrote it)."""

    student: str
    assignment: str
    timestamp: str
    random: str

    @classmethod
    def parse(cls, name: str) -> InboundName | None:
        """nbgrader's own reading (``rsplit('+', 3)``: a user name may hold ``+``)."""
        parts = name.rsplit("+", 3)
        if len(parts) != 4 or not all(parts):
            return None
        return cls(*parts)
