"""The number-words data of Part 2 (deterministic, disjoint splits, sound batches), and
the model and BLEU of `attention_course.seq2seq` that the book runs on them."""

from __future__ import annotations

import math

import pytest
import torch
from num2words import num2words

from attention_course.number_words import (
    SEP,
    Vocab,
    batches,
    digit_tokens,
    example,
    make_splits,
    number_tokens,
    pad_batch,
)


def test_german_words_are_cut_into_morphemes():
    assert number_tokens(324) == ["drei", "hundert", "vier", "und", "zwanzig"]
    assert number_tokens(7021) == ["sieben", "tausend", "ein", "und", "zwanzig"]
    assert number_tokens(616) == ["sechs", "hundert", "sechzehn"]
    assert number_tokens(0) == ["null"]
    assert digit_tokens(7021) == ["7", "0", "2", "1"]


def test_morphemes_spell_the_whole_german_word():
    for n in [*range(0, 1200), *range(1200, 1_000_000, 997), 999_999]:
        assert "".join(number_tokens(n)) == num2words(n, lang="de"), n


def test_english_and_french_are_split_into_words():
    assert number_tokens(324, "en") == ["three", "hundred", "and", "twenty", "four"]
    assert number_tokens(97, "fr") == ["quatre", "vingt", "dix", "sept"]
    with pytest.raises(ValueError):
        number_tokens(1, "xx")
    with pytest.raises(ValueError):
        number_tokens(1_000_000)


def test_examples_join_numbers_with_the_separator():
    src, tgt = example([21, 7])
    assert src == ["ein", "und", "zwanzig", SEP, "sieben"]
    assert tgt == ["2", "1", SEP, "7"]


@pytest.mark.parametrize("kwargs", [
    {},
    {"max_value": 9999, "numbers_per_example": (1, 4), "test_numbers_per_example": (1, 6)},
    {"max_value": 9999, "numbers_per_example": (1, 5), "max_src_len": 15},
    {"lang": "en", "max_value": 999},
])
def test_splits_are_deterministic_and_disjoint(kwargs):
    a = make_splits(600, 100, seed=3, **kwargs)
    b = make_splits(600, 100, seed=3, **kwargs)
    c = make_splits(600, 100, seed=4, **kwargs)
    assert a.train == b.train and a.test == b.test
    assert a.train_numbers == b.train_numbers and a.test_numbers == b.test_numbers
    assert a.src_vocab.itos == b.src_vocab.itos and a.tgt_vocab.itos == b.tgt_vocab.itos
    assert a.train_numbers != c.train_numbers
    assert len(a.train) == 600 and len(a.test) == 100
    train_numbers = {n for ns in a.train_numbers for n in ns}
    test_numbers = {n for ns in a.test_numbers for n in ns}
    assert not train_numbers & test_numbers
    assert not {tuple(s) for s, _ in a.train} & {tuple(s) for s, _ in a.test}
    for ns, pair in zip(a.train_numbers + a.test_numbers, a.train + a.test,
                        strict=True):
        assert example(ns, a.lang) == pair


def test_single_number_splits_use_distinct_numbers():
    data = make_splits(2000, 300, seed=0)
    numbers = [n for (n,) in data.train_numbers + data.test_numbers]
    assert len(set(numbers)) == len(numbers) == 2300
    # Spread over digit counts: short numbers are not drowned by six-digit ones.
    assert sum(n < 1000 for n in numbers) > 300


def test_source_length_limit_applies_to_training_only():
    kwargs = {"max_value": 9999, "numbers_per_example": (1, 5),
              "test_numbers_per_example": (1, 6), "seed": 1}
    short = make_splits(500, 200, max_src_len=12, **kwargs)
    long = make_splits(300, 200, max_src_len=30, **kwargs)
    assert max(len(s) for s, _ in short.train) <= 12
    assert max(len(s) for s, _ in long.train) <= 30
    assert max(len(s) for s, _ in short.test) > 30
    # Models trained with different limits are tested on the same examples.
    assert short.test == long.test


def test_vocab_round_trip_and_special_ids():
    v = Vocab(["a", "b", "a", "<pad>"])
    assert v.itos == ["<pad>", "<bos>", "<eos>", "<unk>", "a", "b"]
    assert (v.pad_id, v.bos_id, v.eos_id, v.unk_id) == (0, 1, 2, 3)
    assert v.encode(["b", "zzz"]) == [5, 3]
    assert v.decode([1, 4, 5, 2, 4]) == ["a", "b"]
    assert v.decode([4, 2, 0], strip=False) == ["a", "<eos>", "<pad>"]


def test_padded_batch_shapes_and_contents():
    data = make_splits(50, 10, seed=0)
    pairs = data.train[:5]
    batch = pad_batch(pairs, data.src_vocab, data.tgt_vocab)
    S = max(len(s) for s, _ in pairs)
    T = max(len(t) for _, t in pairs) + 1
    assert batch.src.shape == (5, S) and batch.src.dtype == torch.long
    assert batch.tgt_in.shape == batch.tgt_out.shape == (5, T)
    assert batch.src_lengths.tolist() == [len(s) for s, _ in pairs]
    for b, (src, tgt) in enumerate(pairs):
        assert data.src_vocab.decode(batch.src[b]) == src
        assert batch.tgt_in[b, 0] == data.tgt_vocab.bos_id
        assert data.tgt_vocab.decode(batch.tgt_in[b]) == tgt
        assert data.tgt_vocab.decode(batch.tgt_out[b]) == tgt
        assert batch.tgt_out[b, len(tgt)] == data.tgt_vocab.eos_id
        assert (batch.src[b, len(src):] == 0).all()


@pytest.mark.parametrize("bucket", [0, 3])
def test_batches_cover_every_example_once_per_epoch(bucket):
    data = make_splits(230, 10, max_value=9999, numbers_per_example=(1, 3), seed=0)
    first = list(batches(data.train, data.src_vocab, data.tgt_vocab, 32, seed=5,
                         bucket=bucket))
    again = list(batches(data.train, data.src_vocab, data.tgt_vocab, 32, seed=5,
                         bucket=bucket))
    assert sum(len(b) for b in first) == 230
    seen = sorted(tuple(data.src_vocab.decode(row)) for b in first for row in b.src)
    assert seen == sorted(tuple(s) for s, _ in data.train)
    assert all(torch.equal(x.src, y.src) for x, y in zip(first, again, strict=True))


# -- The book's model reads these batches: padding must not change it. --------------------


@pytest.mark.parametrize("attention, coverage", [(False, False), (True, False), (True, True)])
def test_model_ignores_padding_and_decodes_like_teacher_forcing(attention, coverage):
    from attention_course.seq2seq import RNNTranslator

    torch.manual_seed(0)
    model = RNNTranslator(20, 15, 8, 6, 5, use_attention=attention,
                          coverage=coverage).double()
    src = torch.randint(4, 20, (3, 7))
    lengths = torch.tensor([7, 3, 1])
    src[1, 3:] = 0
    src[2, 1:] = 0
    tgt_in = torch.randint(4, 15, (3, 5))
    states, summary = model.encode(src, lengths)
    logits, weights = model(src, lengths, tgt_in)
    for b in range(3):
        n = int(lengths[b])
        alone_states, alone_summary = model.encode(src[b:b + 1, :n], lengths[b:b + 1])
        alone_logits, alone_weights = model(src[b:b + 1, :n], lengths[b:b + 1],
                                            tgt_in[b:b + 1])
        assert torch.allclose(states[b, :n], alone_states[0])
        assert torch.allclose(summary[b], alone_summary[0])
        assert torch.allclose(logits[b], alone_logits[0])
        assert torch.allclose(weights[b, :, :n], alone_weights[0])
        assert (states[b, n:] == 0).all() and (weights[b, :, n:] == 0).all()
    # Greedy decoding equals teacher forcing on the decoded tokens, up to <eos> (id 2).
    tokens, gen_weights = model.generate(src, lengths, bos_id=1, eos_id=2, max_len=6)
    fed = torch.cat([torch.ones(3, 1, dtype=torch.long), tokens[:, :-1]], dim=1)
    logits, weights = model(src, lengths, fed)
    for b in range(3):
        row = tokens[b].tolist()
        end = row.index(2) + 1 if 2 in row else len(row)
        assert logits[b, :end].argmax(-1).tolist() == row[:end]
        assert torch.allclose(weights[b, :end], gen_weights[b, :end])


def test_bleu_matches_hand_computed_values():
    from attention_course.seq2seq import bleu

    ref = list("12345678")
    assert bleu([ref], [ref]) == pytest.approx(100.0)
    # Every n-gram of a 4-token prefix is in the reference; only the brevity penalty
    # exp(1 - 8/4) lowers the score.
    assert bleu([ref[:4]], [ref]) == pytest.approx(100 * math.exp(-1.0))
    assert bleu([list("9999")], [ref]) == 0.0
