"""The Transformer chapter's parts: the book's multi-head attention, the model, the decoders."""

from __future__ import annotations

import itertools

import pytest
import torch

from attention_course.decoding import beam_search, greedy
from attention_course.seq2seq import RNNTranslator
from attention_course.transformer import TransformerTranslator
from tests.conftest import REPO

BOS, EOS, PAD = 1, 2, 0


def _heads_one_by_one(module, query, key, value, mask):
    """The exercise's definition, written out: each head's scaled dot-product attention on
    its slice of the projections, a query with nothing to attend given zero weights."""
    d_head = module.head_dim
    outputs, all_weights = [], []
    for head in range(module.num_heads):
        part = slice(head * d_head, (head + 1) * d_head)
        q = module.q_proj(query)[..., part]
        k = module.k_proj(key)[..., part]
        v = module.v_proj(value)[..., part]
        scores = q @ k.transpose(-2, -1) / d_head ** 0.5
        if mask is not None:
            allowed = mask.expand_as(scores)
            scores = scores.masked_fill(~allowed, float("-inf"))
            weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)
        else:
            weights = torch.softmax(scores, dim=-1)
        outputs.append(weights @ v)
        all_weights.append(weights)
    return module.out_proj(torch.cat(outputs, dim=-1)), torch.stack(all_weights, dim=1)


@pytest.mark.parametrize("mask_kind", ["none", "causal", "padding", "nothing to attend"])
def test_the_books_multihead_attention_computes_the_exercises_module(mask_kind):
    from attention_course.multihead import MultiHeadAttention, causal_mask, padding_mask

    torch.manual_seed(1)
    module = MultiHeadAttention(12, 3).double()
    B, T = 2, 5
    query = torch.randn(B, T, 12, dtype=torch.float64, requires_grad=True)
    key, value = (torch.randn(B, T, 12, dtype=torch.float64) for _ in range(2))
    mask = {"none": None, "causal": causal_mask(T),
            "padding": padding_mask(torch.tensor([5, 2]), T)[:, None, :],
            "nothing to attend": torch.zeros(B, T, T, dtype=torch.bool)
            .index_fill(2, torch.tensor([1]), True)
            & (torch.arange(T)[None, :, None] < 3)}[mask_kind]
    out, weights = module(query, key, value, mask)
    expected_out, expected_weights = _heads_one_by_one(module, query, key, value, mask)
    assert weights.shape == (B, 3, T, T)
    assert torch.allclose(weights, expected_weights) and torch.allclose(out, expected_out)
    out.sum().backward()
    assert torch.isfinite(query.grad).all()


def test_the_books_multihead_attention_earns_no_marks_in_the_exercise():
    """Students receive attention_course in the course's package: its multi-head attention
    is PyTorch's, which the exercise's graded code must not call, so copied into a
    submission it fails every multi-head test cell, as forbidden."""
    from autograder.course import Course
    from autograder.proving.dryrun import dry_run

    code = (REPO / "attention_course" / "multihead.py").read_text()
    verdicts = dry_run(Course.at(REPO).source / "multihead-attention", code)
    multi_head = {grade_id: m for grade_id, m in verdicts.items()
                  if grade_id.startswith("test-mha-") and grade_id != "test-mha-init"}
    assert len(multi_head) == 4
    assert all(m and "which graded code must not call" in m for m in multi_head.values()), \
        multi_head
    assert "def scaled_dot_product_attention" not in code


def _model(norm_first: bool = True) -> TransformerTranslator:
    torch.manual_seed(0)
    return TransformerTranslator(20, 12, d_model=32, num_heads=4, num_layers=2, d_ff=64,
                                 norm_first=norm_first, max_len=16).eval()


@pytest.mark.parametrize("norm_first", [True, False])
def test_a_target_position_never_sees_a_later_one(norm_first):
    model = _model(norm_first)
    src = torch.randint(4, 20, (3, 6))
    lengths = torch.tensor([6, 4, 2])
    tgt = torch.randint(3, 12, (3, 7))
    changed = tgt.clone()
    changed[:, 3:] = 5
    with torch.no_grad():
        before, _ = model(src, lengths, tgt)
        after, _ = model(src, lengths, changed)
    assert torch.equal(before[:, :3], after[:, :3])
    assert not torch.allclose(before[:, 3:], after[:, 3:])


def test_padding_is_invisible():
    model = _model()
    src = torch.randint(4, 20, (2, 5))
    lengths = torch.tensor([5, 3])
    tgt = torch.randint(3, 12, (2, 4))
    padded = torch.cat([src, torch.zeros(2, 4, dtype=torch.long)], dim=1)
    garbage = src.clone()
    garbage[1, 3:] = 7                       # beyond row 1's length
    with torch.no_grad():
        logits, weights = model(src, lengths, tgt)
        for other in (padded, garbage):
            other_logits, other_weights = model(other, lengths, tgt)
            assert torch.allclose(logits, other_logits, atol=1e-5)
    assert torch.all(weights[1, :, 3:] == 0)  # (B, T, S): no weight on padding


def test_a_sequence_longer_than_the_position_table_is_refused():
    with pytest.raises(ValueError, match="covers 16"):
        _model()(torch.ones(1, 17, dtype=torch.long), torch.tensor([17]),
                 torch.ones(1, 2, dtype=torch.long))


def test_generate_is_greedy_decoding_of_the_teacher_forced_model():
    model = _model()
    src, lengths = torch.randint(4, 20, (4, 5)), torch.tensor([5, 5, 3, 1])
    tokens, _ = model.generate(src, lengths, BOS, EOS, max_len=6)
    for row in range(4):
        prefix = torch.tensor([[BOS]])
        for t in range(tokens.shape[1]):
            with torch.no_grad():
                logits, _ = model(src[row:row + 1, :lengths[row]], lengths[row:row + 1],
                                  prefix)
            expected = int(logits[0, -1].argmax())
            assert int(tokens[row, t]) == expected
            if expected == EOS:
                assert torch.all(tokens[row, t + 1:] == PAD)
                break
            prefix = torch.cat([prefix, torch.tensor([[expected]])], dim=1)


class TableDecoder:
    """A toy step decoder: the next token's logits are a random function of the source
    row, the step and the previous token (the interface of attention_course.decoding)."""

    def __init__(self, vocab: int = 5, steps: int = 4, sources: int = 3, seed: int = 0):
        generator = torch.Generator().manual_seed(seed)
        self.table = 2 * torch.randn(sources, steps, vocab, vocab, generator=generator)

    def start(self, src, src_lengths):
        return {"row": src[:, 0].clone()}

    def step(self, prefix, state):
        t = prefix.shape[1] - 1
        logits = self.table[state["row"], t, prefix[:, -1]]            # (N, V)
        return logits, torch.zeros(prefix.shape[0], 1), state

    def log_prob(self, row: int, tokens: list[int]) -> float:
        prefix, total = [BOS], 0.0
        for t, y in enumerate(tokens):
            logp = torch.log_softmax(self.table[row, t, prefix[-1]], -1)
            total += float(logp[y])
            prefix.append(y)
        return total


def _exhaustive_best(decoder: TableDecoder, row: int, vocab: int, max_len: int):
    """The most probable output ending with <eos>, of at most max_len tokens."""
    best, best_score = None, float("-inf")
    others = [v for v in range(vocab) if v != EOS]
    for length in range(1, max_len + 1):
        for body in itertools.product(others, repeat=length - 1):
            tokens = [*body, EOS]
            score = decoder.log_prob(row, tokens)
            if score > best_score:
                best, best_score = tokens, score
    return best, best_score


@pytest.mark.parametrize("seed", range(5))
def test_a_beam_wide_enough_finds_the_most_probable_output(seed):
    vocab, max_len = 5, 4
    decoder = TableDecoder(vocab, max_len, seed=seed)
    src = torch.tensor([[0], [1], [2]])
    tokens, scores = beam_search(decoder, src, torch.ones(3, dtype=torch.long), BOS, EOS,
                                 max_len, beam_size=vocab ** max_len)
    for row in range(3):
        best, best_score = _exhaustive_best(decoder, row, vocab, max_len)
        found = tokens[row].tolist()
        found = found[: found.index(EOS) + 1]
        assert found == best
        assert scores[row].item() == pytest.approx(best_score, abs=1e-5)


@pytest.mark.parametrize("seed", range(5))
def test_a_beam_returns_its_outputs_log_probability_and_k1_beats_greedy(seed):
    vocab, max_len = 5, 4
    decoder = TableDecoder(vocab, max_len, seed=seed)
    src = torch.tensor([[0], [1], [2]])
    ones = torch.ones(3, dtype=torch.long)
    greedy_tokens, _ = greedy(decoder, src, ones, BOS, EOS, max_len)
    for k in (1, 2, 3):
        tokens, scores = beam_search(decoder, src, ones, BOS, EOS, max_len, beam_size=k)
        for row in range(3):
            found = tokens[row].tolist()
            found = found[: found.index(EOS) + 1] if EOS in found else found
            assert scores[row].item() == pytest.approx(decoder.log_prob(row, found),
                                                       abs=1e-5)
            if k == 1:
                mine = greedy_tokens[row].tolist()
                mine = mine[: mine.index(EOS) + 1] if EOS in mine else mine
                if EOS in mine:
                    assert scores[row].item() >= decoder.log_prob(row, mine) - 1e-6


def test_both_translators_decode_the_same_through_step_as_through_generate():
    torch.manual_seed(0)
    rnn = RNNTranslator(20, 12, emb_dim=8, hidden_dim=16, attn_dim=16).eval()
    src, lengths = torch.randint(4, 20, (4, 5)), torch.tensor([5, 4, 2, 1])
    for model in (rnn, _model()):
        tokens, weights = model.generate(src, lengths, BOS, EOS, max_len=6)
        again, again_weights = greedy(model, src, lengths, BOS, EOS, max_len=6)
        assert torch.equal(tokens, again)
        assert torch.allclose(weights, again_weights)
        beam_tokens, _ = beam_search(model, src, lengths, BOS, EOS, max_len=6, beam_size=3)
        assert beam_tokens.shape[0] == 4


def test_the_chapter_writes_no_multi_head_attention_of_its_own():
    page = (REPO / "book" / "encoder" / "transformer.md").read_text()
    source = (REPO / "attention_course" / "transformer.py").read_text()
    assert "from attention_course.multihead import" in source
    assert "class MultiHeadAttention" not in page and "def scaled_dot_product" not in page
