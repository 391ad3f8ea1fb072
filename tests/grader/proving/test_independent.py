"""Implementations written from the contract alone, by someone who never saw the tests.

``tests/independent/<assignment>/variants/*.py`` (complete, correct implementations) must
earn full marks and ``mutants/*.py`` less than full, graded by the real ``grade`` pipeline. A
mutant
keeps only the function(s) with its one mistake, as the catalogue's mutants do; the other
functions are the reference solution's.

The same batch then goes through ``report``: its diagnosis must name, for most wrong
modules, the mistake actually made — the catalogued mutant that makes it (``ACTUAL``).

``make test`` grades the foundation assignment's modules this way and every module of every
assignment in the dry run (``tests/grader/proving/test_dryrun.py``); ``make test-full`` grades
them all through the pipeline.
"""

from __future__ import annotations

import html
from pathlib import Path

import pytest

from autograder.commands.grade import grade
from autograder.commands.report import load_batch
from tests.conftest import (
    INDEPENDENT,
    filled,
    full_marks,
    independent,
    is_variant,
    make_course,
    run_cli,
    submit,
)

# The module's tests share one graded batch: run them on one worker, so it is graded once.
pytestmark = pytest.mark.xdist_group("independent")

ASSIGNMENTS = sorted(p.name for p in INDEPENDENT.iterdir()
                     if p.is_dir() and p.name != "hostile" and independent(p.name))
MODULES = [(a, m) for a in ASSIGNMENTS for m in independent(a)]
# The least each assignment's independent authors were asked for: (correct, wrong).
MINIMUM = {"attention-pooling": (6, 24), "attention-scoring": (4, 8),
           "seq2seq-attention": (4, 8), "multihead-attention": (4, 10)}


# For each independent wrong module, the catalogued mutants that make its mistake.
ACTUAL = {
    "attention-pooling": {
        "aggregate_transposed_weights": {"aggregate_transposed_weights"},
        "dot_attention_includes_self": {"dot_attention_includes_self"},
        "dot_attention_nan_isolated": {"dot_attention_nan_for_isolated_node"},
        "dot_attention_no_scale": {"dot_attention_unscaled"},
        "dot_attention_softmax_all_nodes": {"dot_attention_softmax_over_all_nodes"},
        "fit_fixed_start_plateau": {"fit_gradient_descent_from_h1"},
        "fit_returns_log_h": {"fit_returns_log_bandwidth"},
        "kernel_weights_detached_bandwidth": {"kernel_bandwidth_float_cuts_gradient"},
        "kernel_weights_h_not_squared": {"kernel_bandwidth_not_squared"},
        "kernel_weights_naive_exp": {"kernel_naive_exp"},
        "kernel_weights_no_two": {"kernel_missing_factor_two"},
        "kernel_weights_softmax_over_queries": {"kernel_softmax_over_queries"},
        "loo_divides_by_n_minus_1": {"loo_divides_by_n_minus_1"},
        "loo_includes_k": {"loo_keeps_own_key"},
        "loo_theta_as_h": {"loo_theta_used_as_h"},
        "mean_aggregation_column_normalised": {"mean_aggregation_column_normalised"},
        "mean_aggregation_ignores_self_loops": {"mean_aggregation_ignores_self_loops"},
        "mean_aggregation_nan_isolated": {"mean_aggregation_nan_for_isolated_node"},
        "mean_aggregation_self_loop_degree": {"mean_aggregation_self_loop_not_counted"},
        "mean_pool_divides_by_n": {"mean_pool_divides_by_n"},
        "mean_pool_float32_output": {"mean_pool_casts_to_float32"},
        "mean_pool_modifies_input": {"mean_pool_zeroes_rows_in_place"},
        "mean_pool_nan_when_empty": {"mean_pool_nan_when_nothing_kept"},
        "nadaraya_watson_swapped_outputs": {"nadaraya_watson_swapped_outputs"},
    },
    "attention-scoring": {
        "concat_order": {"concat_swapped_order"},
        "fully_masked_nan": {"nan_on_fully_masked_row"},
        "inplace_mask": {"masked_softmax_inplace"},
        "mask_polarity": {"mask_polarity_inverted"},
        "nan_gradient": {"nan_on_fully_masked_row"},
        "scale_by_dk": {"scaled_divide_by_d"},
        "squeeze_all": {"dot_bare_squeeze", "attend_bare_squeeze"},
        "unstable_softmax": {"naive_softmax_overflow"},
    },
    "seq2seq-attention": {
        "attention_mask_ignored": {"attention_mask_ignored"},
        "attention_mask_inverted": {"attention_mask_inverted"},
        "attention_masked_not_zero": {"attention_mask_ignored", "attention_mask_after_softmax"},
        "attention_softmax_batch_dim": {"attention_softmax_over_batch"},
        "bridge_no_tanh": {"seq2seq_bridge_without_tanh"},
        "decoder_new_state_query": {"decoder_queries_new_state"},
        "decoder_no_teacher_forcing": {"decoder_feeds_its_predictions"},
        "decoder_out_order": {"decoder_readout_order"},
        "decoder_rnn_input_order": {"decoder_rnn_input_order"},
        "encoder_final_backward_last": {"encoder_final_halves_swapped"},
        "encoder_final_last_padded": {"encoder_final_at_last_position"},
        "encoder_padding_in_backward": {"encoder_no_packing"},
        "encoder_padding_not_zero": {"encoder_padding_not_zeroed"},
        "greedy_includes_bos": {"greedy_includes_bos"},
        "greedy_no_early_stop": {"greedy_runs_to_max_len"},
        "greedy_no_pad_after_eos": {"greedy_no_padding_after_eos"},
        "greedy_stops_at_first_row": {"greedy_stops_at_first_eos"},
        "loss_averages_padding": {"loss_averages_over_padding"},
        "loss_per_sequence_mean": {"loss_mean_of_sequence_means"},
        "loss_sum": {"loss_sum_not_mean"},
        "src_mask_inclusive": {"seq2seq_mask_inclusive"},
    },
    "multihead-attention": {
        "bias_flag_ignored": {"bias_flag_ignored"},
        "causal_strict": {"causal_mask_strict"},
        "causal_transposed": {"causal_mask_transposed"},
        "fully_masked_nan": {"fully_masked_rows_nan"},
        "heads_view_no_transpose": {"heads_view_without_transpose"},
        "inplace_scale": {"inplace_scaling_of_q"},
        "mask_after_softmax": {"mask_after_softmax"},
        "mask_no_head_dim": {"mask_without_head_axis"},
        "mask_polarity": {"mask_inverted"},
        "merge_interleaved_heads": {"merge_heads_interleaved"},
        "merge_no_transpose": {"merge_reshape_without_transpose"},
        "no_out_proj": {"missing_out_proj"},
        "no_value_error": {"no_value_error"},
        "padding_mask_le": {"padding_mask_le"},
        "pe_exponent_i": {"pe_exponent_i"},
        "pe_float64": {"pe_returns_float64"},
        "pe_halves": {"pe_sin_then_cos_halves"},
        "pe_sin_cos_swapped": {"pe_sin_cos_swapped"},
        "scale_by_d_model": {"scale_by_sqrt_d_model"},
        "softmax_float32": {"float32_softmax"},
        "weights_averaged": {"weights_averaged_over_heads"},
    },
}


FOUNDATION = "attention-scoring"     # graded through the pipeline by `make test` too


def _student(module: Path) -> str:
    kind = "variant" if is_variant(module) else "mutant"
    return f"{kind}-{module.stem.replace('_', '-')}"


def _params(items, ids):
    """One pytest.param per item; those of other assignments than the foundation are `full`."""
    return [pytest.param(*item, id=name,
                         marks=() if item[0] == FOUNDATION else pytest.mark.full)
            for item, name in zip(items, ids, strict=True)]


def _grade(tmp_path_factory, assignments: list[str]):
    course = make_course(tmp_path_factory.mktemp("independent") / "course", assignments)
    for assignment, module in MODULES:
        if assignment in assignments:
            submit(course, _student(module), filled(course, module.read_text(), assignment),
                   assignment)
    outcomes = {(o.assignment, o.student): o
                for o in grade(course, assignments, jobs=2, progress=False)}
    return course, outcomes


@pytest.fixture(scope="module")
def graded_foundation(tmp_path_factory):
    return _grade(tmp_path_factory, [FOUNDATION])


@pytest.fixture(scope="module")
def graded_others(tmp_path_factory):
    return _grade(tmp_path_factory, [a for a in ASSIGNMENTS if a != FOUNDATION])


@pytest.fixture
def graded(request, assignment):
    name = "graded_foundation" if assignment == FOUNDATION else "graded_others"
    return request.getfixturevalue(name)


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_there_are_independent_implementations(assignment):
    least_correct, least_wrong = MINIMUM[assignment]
    assert len(independent(assignment, "variant")) >= least_correct
    assert len(independent(assignment, "mutant")) >= least_wrong


@pytest.mark.parametrize(("assignment", "module"),
                         _params(MODULES, [f"{a}:{m.parent.name}:{m.stem}" for a, m in MODULES]))
def test_independent_implementation_gets_the_grade_it_deserves(graded, assignment, module):
    outcome = graded[1][(assignment, _student(module))]
    failed = [(c.grade_id, c.message[:200]) for c in outcome.cells
              if c.graded_by == "tests" and c.score < c.max_score]
    if is_variant(module):
        assert full_marks(outcome), failed
    else:
        assert not full_marks(outcome), f"{module.stem} kept full marks"


@pytest.mark.parametrize("assignment", _params([(a,) for a in ASSIGNMENTS], ASSIGNMENTS))
def test_the_report_names_the_mistake_actually_made(graded, assignment):
    course, _ = graded
    result = run_cli(course, "report", assignment)
    assert result.returncode == 0, result.stderr[-2000:]
    page = (course.root / "reports" / f"{assignment}.html").read_text()
    assert page.count("data:image/png;base64,") == 3, "scores, tests and time are plotted"
    batch = load_batch(course, assignment)
    named, missed = [], []
    for mistake, actual in ACTUAL[assignment].items():
        diagnosis = batch.diagnoses.get(f"mutant-{mistake.replace('_', '-')}")
        found = diagnosis.primary.name if diagnosis and diagnosis.primary else None
        (named if found in actual else missed).append((mistake, found))
        if found in actual:
            # The page is HTML: quotes in a description are escaped (&quot;, &#39;).
            assert diagnosis.primary.description in html.unescape(page)
    assert len(named) >= 0.8 * len(ACTUAL[assignment]), f"missed: {missed}"
