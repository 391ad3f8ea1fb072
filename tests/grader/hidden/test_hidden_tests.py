"""Hidden-test features, run in-process: calls that must raise, modules converted to a dtype,
and stand-ins that answer from a table of calls (autograder.hidden)."""

from __future__ import annotations

import torch
from torch import nn

from autograder.hidden import ANY, Call, Module, StandIn, judging, probe, references


def verdict(call: Call, namespace: dict) -> str | None:
    """What the grader says about ``call`` run on ``namespace`` (the student's notebook)."""
    expected = references._expected(call, 0, dict(probe.HELPERS))
    observation = {"label": call.label, **probe.observe(references._kernel_case(expected),
                                                         namespace)}
    return judging.judge([expected], {"observations": [observation]})


class Heads:
    def __init__(self, d_model, num_heads):
        if d_model % num_heads:
            raise ValueError("num_heads must divide d_model")


class Strict:
    def __init__(self, d_model, num_heads):
        raise TypeError("no")


def test_a_call_can_be_expected_to_raise():
    namespace = {"Heads": Heads, "Strict": Strict}
    assert verdict(Call("odd", "Heads", (5, 2), expect_error="ValueError"), namespace) is None
    assert "nothing was raised" in verdict(
        Call("even", "Heads", (4, 2), expect_error="ValueError"), namespace)
    assert "raised TypeError: no" in verdict(
        Call("other", "Strict", (5, 2), expect_error="ValueError"), namespace)


class Affine(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.linear = nn.Linear(d, d)

    def forward(self, x):
        return self.linear(x)


def test_a_module_is_converted_to_its_dtype_before_the_state_is_loaded():
    state = {"linear.weight": torch.randn(3, 3, dtype=torch.float64),
             "linear.bias": torch.randn(3, dtype=torch.float64)}
    call = Call("float64", "forward", (torch.randn(2, 3, dtype=torch.float64),),
                expect=lambda module, x: module(x),
                instance=Module("Affine", (3,), state, Affine, dtype=torch.float64))
    assert verdict(call, {"Affine": Affine}) is None
    wrong = Call("float64, wrong", "forward", call.args, expect=lambda module, x: 2 * module(x),
                 instance=call.instance)
    assert "values differ" in verdict(wrong, {"Affine": Affine})


def table_stand_in(x, mask):
    """inner(x, mask) = (x * 2 where mask), for all rows at once or row by row."""
    out = torch.where(mask, 2 * x, torch.zeros_like(x))
    rows = [((x[i], mask[i]), out[i]) for i in range(len(x))]
    return {"inner": StandIn(table=(((x, mask), out), *rows, ((ANY, ANY, "three"), -1.0)))}


STUDENTS = {     # notebooks calling inner(x, mask), which the stand-in replaces
    "all_at_once": "def outer(x, mask):\n    return inner(x, mask) + 1",
    "row_by_row": "def outer(x, mask):\n"
                  "    return torch.stack([inner(x[i], mask[i]) for i in range(len(x))]) + 1",
    "shared_mask": "def outer(x, mask):\n    return inner(x, mask[0]) + 1",   # broadcasts
    "wrong_rows": "def outer(x, mask):\n    return inner(x.flip(0), mask) + 1",
}


def notebook(name: str) -> dict:
    namespace = {"torch": torch, "inner": lambda x, mask: x}
    exec(STUDENTS[name], namespace)
    return namespace


def test_a_table_stand_in_answers_every_correct_way_of_calling_it():
    x = torch.randn(3, 4)
    mask = torch.tensor([[True, False, True, True]] * 3)
    def outer(x, mask):
        return torch.where(mask, 2 * x, 0 * x) + 1

    call = Call("table", "outer", (x, mask), stand_ins=table_stand_in(x, mask),
                expect=outer, inline=outer, gradients=False)
    for name in ("all_at_once", "row_by_row", "shared_mask"):
        namespace = notebook(name)
        assert verdict(call, namespace) is None, name
        assert namespace["inner"](x, mask) is x          # the stand-in is gone afterwards
    problem = verdict(call, notebook("wrong_rows"))
    assert "inner was called with arguments that match none of the calls" in problem
    assert "(3, 4) float32, (3, 4) bool" in problem


def test_table_results_are_copies_and_non_tensor_arguments_match_by_value():
    stand_in = probe._StandIn(table_stand_in(torch.ones(2, 2), torch.ones(2, 2).bool())["inner"]
                              .kernel_spec(), "inner")
    first = stand_in(torch.ones(2, 2), torch.ones(2, 2).bool())
    first += 100
    assert torch.equal(stand_in(torch.ones(2, 2), torch.ones(2, 2).bool()),
                       torch.full((2, 2), 2.0))
    assert stand_in("anything", None, "three") == -1.0


def test_scripted_results_are_copies_too():
    stand_in = probe._StandIn({"results": [torch.ones(2)], "repeat": True}, "softmax")
    first = stand_in(torch.zeros(2))
    first.mul_(0)                       # a student's in-place change
    assert torch.equal(stand_in(torch.zeros(2)), torch.ones(2))


def test_the_probe_seeds_as_torch_manual_seed_does():
    torch.manual_seed(7)
    expected = torch.randn(5), nn.Linear(3, 2).weight.detach()
    probe.seed(7)
    assert torch.equal(torch.randn(5), expected[0])
    assert torch.equal(nn.Linear(3, 2).weight.detach(), expected[1])


def test_the_cases_file_is_read_again_only_when_it_changes(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(probe, "_loaded", None)
    torch.save({"test-a": [{"label": "one"}]}, probe.CASES_FILE)
    first = probe._all_cases()
    assert probe._all_cases() is first                  # unchanged: not unpickled again
    replacement = tmp_path / "replacement.pt"           # as a hostile daemon would
    torch.save({"test-a": [{"label": "forged"}]}, replacement)
    replacement.replace(probe.CASES_FILE)
    assert probe._all_cases()["test-a"] == [{"label": "forged"}]
    torch.save({"test-a": [{"label": "rewritten in place, longer"}]}, probe.CASES_FILE)
    assert probe._all_cases()["test-a"] == [{"label": "rewritten in place, longer"}]


# A module with a part the student may call, or compute themselves (the contract allows
# both): Twice.forward = 2 * part(x).
class Part(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.linear = nn.Linear(d, d)

    def forward(self, x):
        return self.linear(x)


class Twice(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.part = Part(d)

    def forward(self, x):
        return 2 * self.part(x)


class TwiceInline(Twice):
    """Computes the part itself: never calls self.part."""

    def forward(self, x):
        return 2 * (x @ self.part.linear.weight.T + self.part.linear.bias)


class TwiceInlineWrong(Twice):
    def forward(self, x):
        return 2 * (x @ self.part.linear.weight + self.part.linear.bias)   # W not transposed


class TwiceCallingWrong(Twice):
    def forward(self, x):
        return 3 * self.part(x)


def _isolated_call() -> Call:
    torch.manual_seed(5)
    state = {k: v.clone() for k, v in Twice(3).state_dict().items()}
    x, fixed = torch.randn(2, 3), torch.randn(2, 3)
    return Call("Twice with a stand-in part", "forward", (x,),
                expect=lambda module, x: 2 * fixed, inline=lambda module, x: module(x),
                instance=Module("Twice", (3,), state, Twice), gradients=False,
                stand_ins={"self.part.forward": StandIn((x,), fixed)})


def test_a_stand_in_isolates_a_part_only_when_the_code_calls_it():
    call = _isolated_call()
    assert verdict(call, {"Twice": Twice}) is None                 # calls the stand-in
    assert verdict(call, {"Twice": TwiceInline}) is None           # computes it, rightly
    assert "values differ" in verdict(call, {"Twice": TwiceInlineWrong})
    assert "values differ" in verdict(call, {"Twice": TwiceCallingWrong})


def test_the_probe_says_when_it_ran_a_case_again_without_its_stand_ins():
    expected = references._expected(_isolated_call(), 0, dict(probe.HELPERS))
    case = references._kernel_case(expected)
    inline = probe.observe(case, {"Twice": TwiceInline})
    assert inline["inline"] is True and inline["not_called"] == ["self.part.forward"]
    assert "inline" not in probe.observe(case, {"Twice": Twice})


def test_a_call_with_stand_ins_must_say_how_to_judge_inline_code():
    call = _isolated_call()
    try:
        Call(call.label, call.function, call.args, expect=call.expect,
             instance=call.instance, stand_ins=call.stand_ins)
    except ValueError as error:
        assert "inline=" in str(error)
    else:
        raise AssertionError("a call with stand-ins and no inline= was accepted")


def test_a_suite_is_loaded_once_however_its_path_is_spelled():
    """The fork server loads a suite by Path, the grading processes it forks by str: one
    computation of the references serves both."""
    from autograder.course.files import SUITE_FILE
    from tests.conftest import REPO

    suite = REPO / "solutions" / "attention-scoring" / SUITE_FILE
    first = references.load(suite)
    assert references.load(str(suite)) is first
    assert references.load(f"{suite.parent}/../attention-scoring/{SUITE_FILE}") is first
