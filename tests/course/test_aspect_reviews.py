"""The two-aspect reviews of Part 3: deterministic, balanced, labelled as they read."""

from __future__ import annotations

import torch

from attention_course.aspect_reviews import (
    CLASS_NAMES,
    FOOD,
    NEGATIVE,
    PAD,
    POSITIVE,
    SERVICE,
    VOCAB,
    encode,
    make_reviews,
)


def test_the_same_seed_gives_the_same_reviews():
    assert make_reviews(200, seed=3) == make_reviews(200, seed=3)
    assert make_reviews(200, seed=3) != make_reviews(200, seed=4)
    assert make_reviews(50, seed=3) == make_reviews(200, seed=3)[:50]


def test_labels_agree_with_the_opinion_words_and_clauses():
    for review in make_reviews(500, seed=0):
        (f0, f1), (s0, s1) = review.clauses
        food_clause, service_clause = review.tokens[f0:f1], review.tokens[s0:s1]
        assert food_clause[0] == "the" and food_clause[1] in FOOD
        assert service_clause[0] == "the" and service_clause[1] in SERVICE
        assert f1 <= s0 or s1 <= f0  # the clauses do not overlap
        food_word, service_word = (review.tokens[i] for i in review.opinions)
        assert review.opinions == (f1 - 1, s1 - 1)
        assert food_word in (NEGATIVE if review.food else POSITIVE)
        assert service_word in (NEGATIVE if review.service else POSITIVE)
        assert review.label == 2 * review.food + review.service
        assert review.tokens[-1] == "."


def test_classes_are_balanced_and_both_clause_orders_occur():
    reviews = make_reviews(2000, seed=0)
    counts = torch.bincount(torch.tensor([r.label for r in reviews]), minlength=4)
    assert len(CLASS_NAMES) == 4
    assert counts.min() > 400
    food_first = sum(r.clauses[0] < r.clauses[1] for r in reviews)
    assert 800 < food_first < 1200


def test_filler_sets_the_length():
    short = make_reviews(300, seed=1, filler=0)
    assert {len(r.tokens) for r in short} <= set(range(10, 13))
    long = make_reviews(300, seed=1, filler=2)
    assert max(len(r.tokens) for r in long) > 25


def test_encode_pads_on_the_right():
    reviews = make_reviews(5, seed=2)
    ids, mask, labels = encode(reviews)
    n = max(len(r.tokens) for r in reviews)
    assert ids.shape == mask.shape == (5, n) and labels.shape == (5,)
    assert ids.dtype == torch.long and mask.dtype == torch.bool
    assert VOCAB[0] == PAD
    for row, review in enumerate(reviews):
        length = len(review.tokens)
        assert mask[row, :length].all() and not mask[row, length:].any()
        assert [VOCAB[i] for i in ids[row, :length]] == list(review.tokens)
        assert labels[row] == review.label
