"""The hidden tests can fail: every catalogued mutant loses marks, every variant keeps them.

``validate`` runs the real release and grading pipeline (nbgrader in the sandbox). In
``make test`` it grades, for each assignment, the solution, the release and a sample of the
catalogue chosen to cross every stage of the pipeline (a visible-test failure, a hidden-case
failure, a stand-in, a forbidden call, a training run), and checks that the pipeline reaches
the same verdict, cell by cell, as the in-process dry run
(``tests/grader/proving/test_dryrun.py``), which runs the whole catalogue in seconds.
``make test-full`` (run by ``.ci/run``) grades every catalogued implementation of every
assignment through the pipeline.
"""

from __future__ import annotations

import pytest

from autograder.commands.validate import Validation, validate
from autograder.course import Course
from autograder.proving.catalogue import implementations
from autograder.proving.dryrun import dry_run
from tests.conftest import REPO

COURSE = Course.at(REPO)
MINIMUM = {"attention-pooling": (20, 5),    # mutants, variants the issues ask for
           "attention-scoring": (15, 5),
           "seq2seq-attention": (12, 5),
           "multihead-attention": (15, 5)}
SAMPLE = {
    "attention-pooling": {"mean_pool_nan_when_nothing_kept", "kernel_bandwidth_float_cuts_gradient",
                          "nadaraya_watson_weighs_keys", "fit_gradient_descent_from_h1",
                          "inline_and_reused_parts", "fit_torch_optim_adam"},
    "attention-scoring": {"mask_after_softmax", "attend_ignores_mask", "naive_softmax_overflow",
                          "additive_missing_tanh", "python_loops"},
    "seq2seq-attention": {"encoder_no_packing", "greedy_runs_to_max_len",
                          "loss_averages_over_padding", "train_epoch_no_zero_grad",
                          "sorted_batch_packing"},
    "multihead-attention": {"heads_view_without_transpose", "calls_torch_sdpa",
                            "mask_inverted", "pe_sin_cos_swapped", "fused_qkv"},
}


def _check_whole_catalogue(result: Validation, assignment: str) -> None:
    print(result.summary())
    by_student = {c.student: c for c in result.checks}
    assert by_student["solution"].ok, "the reference solution must earn full marks"
    assert by_student["release"].ok, "the untouched release must earn 0"
    survivors = [c.student for c in result.mutants if not c.ok]
    assert not survivors, f"mutants that kept full marks: {survivors}"
    failed_variants = [(c.student, c.failed_tests) for c in result.variants if not c.ok]
    assert not failed_variants, f"correct variants that lost marks: {failed_variants}"
    least_mutants, least_variants = MINIMUM.get(assignment, (1, 1))
    assert len(result.mutants) == len(implementations(assignment, "mutant")) >= least_mutants
    assert len(result.variants) == len(implementations(assignment, "variant")) >= least_variants


@pytest.mark.full
@pytest.mark.parametrize("assignment", COURSE.assignments())
def test_validate_kills_every_mutant_and_passes_every_variant(assignment):
    _check_whole_catalogue(validate(COURSE, assignment, jobs=2), assignment)


def test_every_assignment_is_sampled():
    assert set(SAMPLE) == set(COURSE.assignments())


@pytest.mark.parametrize("assignment", sorted(SAMPLE))
def test_the_pipeline_agrees_with_the_dry_run_cell_by_cell(assignment):
    catalogue = {impl.name: impl for impl in implementations(assignment, "mutant")
                 + implementations(assignment, "variant")}
    assert SAMPLE[assignment] <= set(catalogue), "the sample names catalogued implementations"
    result = validate(COURSE, assignment, jobs=2, only=SAMPLE[assignment])
    print(result.summary())
    assert result.ok, result.summary()
    assert len(result.checks) == len(SAMPLE[assignment]) + 2      # with solution and release
    for check in result.checks:
        if check.student == "release":
            continue
        impl = next((i for i in catalogue.values() if i.student_id == check.student), None)
        expected = dry_run(COURSE.source / assignment, impl.code if impl else None)
        failing_in_dry_run = sorted(g for g, message in expected.items() if message)
        assert sorted(check.failed_tests) == failing_in_dry_run, check.student


def test_each_mutant_describes_its_mistake():
    for assignment in COURSE.assignments():
        for impl in implementations(assignment, "mutant") + implementations(assignment, "variant"):
            assert impl.description != impl.name, f"{impl.path} needs a docstring"
