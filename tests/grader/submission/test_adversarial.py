"""Hostile submissions graded by the real `grade` command, in one batch with honest ones.

Every hostile submission below answers wrongly (or crashes) and then tries to get marks
anyway: by patching what tests compare with, by returning objects that compare equal to
anything, by forging the probe's report, by editing, deleting, moving or relabelling test
cells, by forking without end, by writing to the gradebook or to another student's folder.
Each must earn exactly what its honest part earns; the honest submissions in the same batch
must be graded exactly as when graded alone; the gradebook must hold exactly the batch's
grades; and no process may be left running.
"""

from __future__ import annotations

import copy
import hashlib
import os
import subprocess

import nbformat
import pytest
from nbgrader.api import Gradebook

from autograder.commands.grade import grade
from autograder.commands.release import assignment_secrets
from autograder.course.outcome import load_outcome
from tests.conftest import ASSIGNMENT, filled, make_course, run_cli, submit, visible_text

# The module's tests share one graded batch: run them on one worker, so it is graded once.
pytestmark = pytest.mark.xdist_group("adversarial")

FULL = 14.0          # the points the tests give
WRITTEN = 4.0        # and the two written answers, graded by hand

# Every contract function, wrong: right shapes and dtypes, wrong values.
WRONG = '''
import torch


def dot_score(query, keys):
    return keys.sum(-1) * 0


def scaled_dot_score(query, keys):
    return keys.sum(-1) * 0


def general_score(query, keys, W):
    return keys.sum(-1) * 0


def concat_score(query, keys, W, v):
    return keys.sum(-1) * 0


def additive_score(query, keys, W_q, W_k, v):
    return keys.sum(-1) * 0


def masked_softmax(scores, mask=None):
    return torch.ones_like(scores) / scores.shape[-1]


def attend(query, keys, values=None, score=None, mask=None):
    values = keys if values is None else values
    weights = torch.ones_like(keys[..., 0]) / keys.shape[1]
    return values.mean(1), weights
'''

PATCHES = '''
import builtins

import numpy
import torch

torch.allclose = lambda *args, **kwargs: True
torch.equal = lambda *args, **kwargs: True
torch.isclose = lambda a, b, *args, **kwargs: torch.ones_like(a, dtype=torch.bool)
torch.testing.assert_close = lambda *args, **kwargs: None
numpy.testing.assert_allclose = lambda *args, **kwargs: None
numpy.allclose = lambda *args, **kwargs: True
torch.Tensor.__eq__ = lambda self, other: torch.ones_like(self, dtype=torch.bool)
torch.Tensor.__ne__ = lambda self, other: torch.zeros_like(self, dtype=torch.bool)
builtins.AssertionError = type("Swallowed", (Exception,), {})
'''
PATCH_COMPARISONS = PATCHES + WRONG

ALWAYS_EQUAL = '''
import torch


class Anything(torch.Tensor):
    """A tensor that equals, and is close to, anything."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        name = getattr(func, "__name__", "")
        if name in {"allclose", "equal"}:
            return True
        if name in {"eq", "__eq__", "isclose"}:
            return torch.ones((), dtype=torch.bool).expand(args[0].shape) \\
                if hasattr(args[0], "shape") else True
        return super().__torch_function__(func, types, args, kwargs or {})

    def __eq__(self, other):
        return True

    def __bool__(self):
        return True


class Equal:
    shape = property(lambda self: (1, 3))
    dtype = torch.float32

    def __eq__(self, other):
        return True

    def __getattr__(self, name):
        return lambda *args, **kwargs: self


def _anything(like):
    return torch.zeros_like(like).as_subclass(Anything)


def dot_score(query, keys):
    return _anything(keys.sum(-1))


def scaled_dot_score(query, keys):
    return _anything(keys.sum(-1))


def general_score(query, keys, W):
    return Equal()


def concat_score(query, keys, W, v):
    return Equal()


def additive_score(query, keys, W_q, W_k, v):
    return _anything(keys.sum(-1))


def masked_softmax(scores, mask=None):
    return _anything(scores)


def attend(query, keys, values=None, score=None, mask=None):
    return Equal(), _anything(keys.sum(-1))
'''

# Passes the visible tests by patching them, then replaces the grader's probe by a module
# of its own whose report claims every hidden case passed, and adds a second report.
FORGE_REPORTS = PATCH_COMPARISONS + '''
import sys
import types

from IPython import get_ipython
from IPython.display import display

MIME = "application/vnd.autograder.observations+json"


def _claim(grade_id):
    display({MIME: {"grade_id": grade_id, "observations": [],
                    "verdict": "passed"}}, raw=True)


sys.modules["_autograder_probe"] = types.SimpleNamespace(report=_claim)


def _second_claim(info):
    if "report(" in info.raw_cell:
        _claim(info.raw_cell.split('report("')[1].split('"')[0])


get_ipython().events.register("pre_run_cell", _second_claim)
'''

# Passes the visible tests by patching them, captures every later cell's source and looks
# for reference answers in every frame that calls it.
SNOOP = PATCHES + '''
import inspect
import sys

from IPython import get_ipython

seen_cells = []
get_ipython().events.register("pre_run_cell", lambda info: seen_cells.append(info.raw_cell))


def _loot():
    found = []
    for frame_info in inspect.stack():
        for name in list(frame_info.frame.f_locals) + list(frame_info.frame.f_globals):
            if name.startswith(("ref_", "_ref_", "expected", "reference")):
                found.append(name)
    return found


SNOOPED = set()
''' + WRONG.replace('''def dot_score(query, keys):
    return keys.sum(-1) * 0''', '''def dot_score(query, keys):
    SNOOPED.update(_loot())
    print("SNOOP", sorted(SNOOPED))
    return keys.sum(-1) * 0''')

# Processes a submission leaves are told apart by a sleep of this test run's own (another
# run of the suite may be grading on the same machine).
STORM_SLEEP = str(40_000 + os.getpid() % 20_000)
FORK_STORM = '''
import os

children = 0
try:
    for _ in range(2000):
        pid = os.fork()
        if pid == 0:
            os.execvp("sleep", ["sleep", "''' + STORM_SLEEP + '''"])
        children += 1
except OSError as error:
    print("FORK stopped after", children, type(error).__name__)
''' + WRONG

WRITER = '''
import glob
import os

tried = []
for pattern in ["../../gradebook.db", "../../../gradebook.db", "../../submitted/*",
                "../../../submitted/*/*", "/work/main/gradebook.db", "/tmp/*/gradebook.db"]:
    for path in glob.glob(pattern) or [pattern]:
        try:
            with open(os.path.join(path, "x") if os.path.isdir(path) else path, "w") as f:
                f.write("owned")
            tried.append(("wrote", path))
        except OSError:
            tried.append(("refused", path))
print("WRITER", [t for t in tried if t[0] == "wrote"])
''' + WRONG

SEGFAULT_IN_CONCAT = '''
import ctypes


def concat_score(query, keys, W, v):
    ctypes.string_at(0)
'''

EXIT_IN_GENERAL = '''
import sys


def general_score(query, keys, W):
    sys.exit(0)
'''


def _test_cells(nb) -> list[int]:
    return [i for i, c in enumerate(nb.cells) if c.metadata.get("nbgrader", {}).get("grade")]


def _blanked(nb):
    for i in _test_cells(nb):
        nb.cells[i].source = ""
    return nb


def _deleted(nb):
    nb.cells = [c for i, c in enumerate(nb.cells) if i not in _test_cells(nb)]
    return nb


def _retyped(nb):
    for i in _test_cells(nb):
        cell = nb.cells[i]
        cell.source = 'print("all tests passed")'
        cell.metadata.nbgrader.update(grade=False, points=0)
    return nb


def _unlabelled(nb):
    for i in _test_cells(nb):
        del nb.cells[i].metadata["nbgrader"]
    return nb


def _reordered(nb):
    tests = [nb.cells[i] for i in _test_cells(nb)]
    rest = [c for i, c in enumerate(nb.cells) if i not in _test_cells(nb)]
    nb.cells = tests + rest                     # every test before any definition
    return nb


def _inflated(nb):
    for i in _test_cells(nb):
        nb.cells[i].metadata.nbgrader["points"] = 100
    extra = copy.deepcopy(nb.cells[_test_cells(nb)[0]])
    extra.id, extra.source = "my-own-test", "pass"
    extra.metadata.nbgrader.update(grade_id="my-own-test", points=50)
    nb.cells.append(extra)
    return nb


TAMPERINGS = {"blanked": _blanked, "deleted": _deleted, "retyped": _retyped,
              "unlabelled": _unlabelled, "reordered": _reordered, "inflated": _inflated}
CODE_ATTACKS = {"patcher": PATCH_COMPARISONS, "always-equal": ALWAYS_EQUAL,
                "forger": FORGE_REPORTS, "snoop": SNOOP, "forker": FORK_STORM,
                "writer": WRITER}
HONEST = ["honest", "honest-deleted-tests"]


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    course = make_course(tmp_path_factory.mktemp("adversarial") / "course")
    submit(course, "honest", filled(course))
    submit(course, "honest-deleted-tests", _deleted(filled(course)))
    for name, code in CODE_ATTACKS.items():
        submit(course, name, filled(course, code))
    for name, tamper in TAMPERINGS.items():
        submit(course, f"tampered-{name}", tamper(filled(course, WRONG)))
    submit(course, "segfault", filled(course, SEGFAULT_IN_CONCAT))
    submit(course, "exit", filled(course, EXIT_IN_GENERAL))
    honest_file = course.submitted / "honest" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    before = hashlib.sha256(honest_file.read_bytes()).hexdigest()
    result = run_cli(course, "grade", ASSIGNMENT, "--jobs", "2")
    assert result.returncode == 0, result.stderr[-2000:]
    outcomes = {folder.name: load_outcome(course, folder.name, ASSIGNMENT)
                for folder in course.submitted.iterdir()}
    after = hashlib.sha256(honest_file.read_bytes()).hexdigest()
    return course, outcomes, before == after


def _printed(course, student: str) -> str:
    path = course.autograded / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    notebook = nbformat.read(path, as_version=4)
    return "".join(o.get("text", "") for c in notebook.cells for o in c.get("outputs", []))


@pytest.mark.parametrize("student", sorted(CODE_ATTACKS))
def test_code_that_fakes_a_pass_earns_nothing(batch, student):
    _, outcomes, _ = batch
    earned = {c.grade_id: c.score for c in outcomes[student].cells if c.score}
    assert earned == {}, f"{student} earned {earned}"


@pytest.mark.parametrize("name", sorted(TAMPERINGS))
def test_tampered_test_cells_are_restored_and_earn_nothing(batch, name):
    _, outcomes, _ = batch
    outcome = outcomes[f"tampered-{name}"]
    assert outcome.score == 0
    max_score = sum(c.max_score for c in outcome.cells)
    assert max_score == FULL + WRITTEN, "the points come from the gradebook, not the notebook"
    # The restored hidden tests ran and said why they failed.
    assert all(c.status == "failed" for c in outcome.cells if c.graded_by == "tests"), \
        outcome.cells


def test_deleted_tests_come_back_and_pass_for_a_correct_answer(batch):
    _, outcomes, _ = batch
    assert outcomes["honest-deleted-tests"].score == FULL


def test_a_forged_report_is_refused_with_a_reason(batch):
    _, outcomes, _ = batch
    messages = " ".join(c.message for c in outcomes["forger"].cells)
    assert "reported more than once" in messages or "not reported" in messages, messages


def test_a_tensor_subclass_is_named_in_the_feedback(batch):
    _, outcomes, _ = batch
    messages = " ".join(c.message for c in outcomes["always-equal"].cells)
    assert "expected a plain torch.Tensor, got the tensor subclass Anything" in messages, messages
    assert "expected a tensor, got Equal" in messages, messages


def test_no_reference_is_within_reach_of_the_student(batch):
    course, outcomes, _ = batch
    printed = _printed(course, "snoop")
    assert "SNOOP" in printed
    snooped = [line for line in printed.splitlines() if line.startswith("SNOOP")]
    assert all(line == "SNOOP []" for line in snooped), snooped
    secrets = assignment_secrets(course, ASSIGNMENT)
    references = {line for line in secrets if "ref_" in line}
    assert references and not [line for line in references if line in printed]


def test_a_fork_storm_is_stopped_and_costs_only_its_author(batch):
    course, outcomes, _ = batch
    printed = _printed(course, "forker")
    assert "FORK stopped after" in printed, printed[-500:]
    stopped_after = int(printed.split("FORK stopped after")[1].split()[0])
    assert stopped_after < 200
    left = subprocess.run(["pgrep", "-f", f"sleep {STORM_SLEEP}"], capture_output=True,
                          text=True)
    assert left.stdout.strip() == "", "the fork storm's processes outlived grading"


def test_nothing_was_written_outside_the_sandbox(batch):
    course, outcomes, honest_unchanged = batch
    assert "WRITER []" in _printed(course, "writer")
    assert honest_unchanged
    assert not list(course.submitted.rglob("x"))


def test_a_crash_costs_only_the_tests_it_prevents(batch):
    _, outcomes, _ = batch
    lost = {c.grade_id: c.status for c in outcomes["segfault"].cells
            if c.graded_by == "tests" and c.score < c.max_score}
    assert lost == {"test-concat-score": "could not run"}, lost
    lost = {c.grade_id for c in outcomes["exit"].cells
            if c.graded_by == "tests" and c.score < c.max_score}
    assert lost == {"test-general-score"}, lost


def test_honest_submissions_graded_as_when_graded_alone(batch, tmp_path):
    course, outcomes, _ = batch
    alone = make_course(tmp_path / "alone")
    for student in HONEST:
        path = course.submitted / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
        submit(alone, student, nbformat.read(path, as_version=4))
    by_themselves = {o.student: o for o in grade(alone, jobs=2, progress=False)}

    def verdicts(outcome):
        return [(c.grade_id, c.score, c.status, c.message) for c in outcome.cells]

    for student in HONEST:
        assert verdicts(by_themselves[student]) == verdicts(outcomes[student])
        assert outcomes[student].score == FULL


def test_the_gradebook_holds_exactly_the_batch(batch):
    course, outcomes, _ = batch
    with Gradebook(course.db_url) as gb:
        students = {s.id for s in gb.students}
        assert students == set(outcomes)
        for student, outcome in outcomes.items():
            submission = gb.find_submission(ASSIGNMENT, student)
            assert submission.max_score == FULL + WRITTEN
            assert submission.score == outcome.score, student


def test_feedback_of_hostile_submissions_shows_no_hidden_code(batch):
    course, outcomes, _ = batch
    assert run_cli(course, "feedback", ASSIGNMENT).returncode == 0
    secrets = {line for line in assignment_secrets(course, ASSIGNMENT) if "ref_" in line}
    for page in course.feedback.rglob("*.html"):
        text = visible_text(page.read_text())
        assert not [line for line in secrets if line in text], page


def test_no_process_is_left_running(batch):
    course, _, _ = batch
    left = subprocess.run(["pgrep", "-af", str(course.root)], capture_output=True,
                          text=True).stdout
    assert left.strip() == "", f"processes left by grading:\n{left}"
