"""Spelled-out numbers and their digits: a small translation task with real alignments.

The source side is a number written out in words by the ``num2words`` package, split into
tokens; the target side is its decimal digits, one token per digit. German is the default
language because its number words cross: 324 is *dreihundertvierundzwanzig*, "three hundred
four and twenty", so the units digit is said before the tens digit and a model has to look
back and forth in the source to write the digits in order. German writes the number as one
long word; :func:`number_tokens` cuts it into morphemes::

    >>> number_tokens(324)
    ['drei', 'hundert', 'vier', 'und', 'zwanzig']
    >>> digit_tokens(324)
    ['3', '2', '4']

An *example* may hold several numbers separated by :data:`SEP` on both sides, so that inputs
can be made as long as an experiment needs. Everything here is deterministic: the same
arguments always give the same splits, vocabularies and batches.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache

import torch
from num2words import num2words

__all__ = [
    "BOS",
    "EOS",
    "PAD",
    "SEP",
    "UNK",
    "Batch",
    "NumberData",
    "Vocab",
    "batches",
    "digit_tokens",
    "example",
    "make_splits",
    "number_tokens",
    "pad_batch",
    "word_table",
]

PAD, BOS, EOS, UNK = "<pad>", "<bos>", "<eos>", "<unk>"
SEP = "|"
"""Separates the numbers of one example, in the source and in the target."""

# The morphemes German number words up to 999 999 are made of. Greedy longest-match
# segmentation with this list cuts every num2words(n, lang="de") into them (the tests check
# it): "dreizehn" stays whole, "sechshundert" is "sechs" + "hundert", "sechzig" is whole.
GERMAN_MORPHEMES = (
    "null", "ein", "eins", "zwei", "drei", "vier", "fünf", "sechs", "sieben", "acht",
    "neun", "zehn", "elf", "zwölf", "dreizehn", "vierzehn", "fünfzehn", "sechzehn",
    "siebzehn", "achtzehn", "neunzehn", "zwanzig", "dreißig", "vierzig", "fünfzig",
    "sechzig", "siebzig", "achtzig", "neunzig", "hundert", "tausend", "und",
)
_GERMAN_PATTERN = re.compile(
    "|".join(sorted(GERMAN_MORPHEMES, key=len, reverse=True))
)
LANGUAGES = ("de", "en", "fr")
MAX_VALUE = 999_999


@cache
def _tokens(n: int, lang: str) -> tuple[str, ...]:
    words = num2words(n, lang=lang)
    if lang == "de":
        pieces = _GERMAN_PATTERN.findall(words)
        if "".join(pieces) != words:
            raise ValueError(f"cannot split {words!r} into German morphemes")
        return tuple(pieces)
    # English and French: words are separated by spaces, hyphens and commas.
    return tuple(w for w in re.split(r"[\s,\-]+", words) if w)


def number_tokens(n: int, lang: str = "de") -> list[str]:
    """Tokens of ``n`` spelled out by ``num2words`` in language ``lang``.

    Args:
        n: An integer in ``[0, MAX_VALUE]``.
        lang: ``"de"`` (German, split into morphemes), ``"en"`` or ``"fr"`` (split into
            words at spaces, hyphens and commas).

    Returns:
        The tokens, e.g. ``['drei', 'hundert', 'vier', 'und', 'zwanzig']`` for 324.
    """
    if lang not in LANGUAGES:
        raise ValueError(f"lang must be one of {LANGUAGES}, got {lang!r}")
    if not 0 <= n <= MAX_VALUE:
        raise ValueError(f"n must be in [0, {MAX_VALUE}], got {n}")
    return list(_tokens(int(n), lang))


def digit_tokens(n: int) -> list[str]:
    """The decimal digits of ``n``, one token each: ``324 -> ['3', '2', '4']``."""
    return list(str(int(n)))


def example(numbers: Sequence[int], lang: str = "de") -> tuple[list[str], list[str]]:
    """Source and target tokens of one example made of several numbers.

    Numbers are joined with :data:`SEP` on both sides:
    ``example([21, 7]) == (['ein', 'und', 'zwanzig', '|', 'sieben'], ['2', '1', '|', '7'])``.
    """
    src: list[str] = []
    tgt: list[str] = []
    for k, n in enumerate(numbers):
        if k:
            src.append(SEP)
            tgt.append(SEP)
        src += number_tokens(n, lang)
        tgt += digit_tokens(n)
    return src, tgt


class Vocab:
    """A token <-> id mapping whose first four ids are ``<pad>``, ``<bos>``, ``<eos>``,
    ``<unk>`` (so ``pad_id == 0``).

    Args:
        tokens: The regular tokens, in the order their ids are given; duplicates and special
            tokens are skipped.
    """

    def __init__(self, tokens: Iterable[str]) -> None:
        self.itos: list[str] = [PAD, BOS, EOS, UNK]
        for t in tokens:
            if t not in self.itos:
                self.itos.append(t)
        self.stoi: dict[str, int] = {t: i for i, t in enumerate(self.itos)}

    pad_id, bos_id, eos_id, unk_id = 0, 1, 2, 3

    def __len__(self) -> int:
        return len(self.itos)

    def __repr__(self) -> str:
        return f"Vocab({len(self)} tokens: {' '.join(self.itos)})"

    def encode(self, tokens: Sequence[str]) -> list[int]:
        """Ids of ``tokens``; unknown tokens become ``unk_id``."""
        return [self.stoi.get(t, self.unk_id) for t in tokens]

    def decode(self, ids: Iterable[int], strip: bool = True) -> list[str]:
        """Tokens of ``ids``. With ``strip``, stop at the first ``<eos>`` and drop
        ``<bos>`` and ``<pad>``."""
        out = []
        for i in ids:
            i = int(i)
            if strip and i == self.eos_id:
                break
            if strip and i in (self.pad_id, self.bos_id):
                continue
            out.append(self.itos[i])
        return out


Pair = tuple[list[str], list[str]]
"""One example: (source tokens, target tokens)."""


@dataclass
class NumberData:
    """Train and held-out examples with their vocabularies.

    Attributes:
        train: Training examples, each a (source tokens, target tokens) pair.
        test: Held-out examples; none of their numbers occurs in ``train``.
        train_numbers: The numbers of each training example.
        test_numbers: The numbers of each held-out example.
        src_vocab: Vocabulary of the source tokens of ``train`` (in order of appearance).
        tgt_vocab: The digits ``0``-``9`` and :data:`SEP`.
        lang: The language of the source side.
    """

    train: list[Pair]
    test: list[Pair]
    train_numbers: list[tuple[int, ...]]
    test_numbers: list[tuple[int, ...]]
    src_vocab: Vocab
    tgt_vocab: Vocab
    lang: str


def _sample_numbers(rng: random.Random, max_value: int, count: int) -> list[int]:
    """``count`` distinct numbers in ``[0, max_value]``, spread evenly over digit counts.

    Uniform sampling would make almost every number six digits long; instead the number of
    digits is drawn first (uniformly among those ``max_value`` allows), then the number.
    """
    n_digits = len(str(max_value))
    capacity = max_value + 1
    if count > capacity:
        raise ValueError(f"cannot draw {count} distinct numbers from [0, {max_value}]")
    chosen: set[int] = set()
    order: list[int] = []
    while len(order) < count:
        d = rng.randint(1, n_digits)
        low = 0 if d == 1 else 10 ** (d - 1)
        high = min(10**d - 1, max_value)
        if low > high:
            continue
        n = rng.randint(low, high)
        if n not in chosen:
            chosen.add(n)
            order.append(n)
    return order


def make_splits(
    n_train: int,
    n_test: int,
    *,
    lang: str = "de",
    max_value: int = MAX_VALUE,
    numbers_per_example: tuple[int, int] = (1, 1),
    test_numbers_per_example: tuple[int, int] | None = None,
    pool_size: int = 20_000,
    max_src_len: int | None = None,
    seed: int = 0,
) -> NumberData:
    """Build deterministic train and held-out splits that share no number.

    *One number per example* (both ranges ``(1, 1)``): ``n_train + n_test`` distinct numbers
    are drawn (see :func:`_sample_numbers`); ``n_test`` of them, chosen at random, are held
    out.

    *Several numbers per example*: ``pool_size`` distinct numbers are drawn and a tenth of
    them is reserved for testing. Each example joins a number of numbers drawn uniformly
    from its range, each taken from its split's pool.

    Either way no number of a held-out example occurs in any training example. The held-out
    examples depend only on ``n_test``, ``lang``, ``max_value``, ``pool_size``, the held-out
    range and ``seed``, so two calls that differ in the training options share them.

    Args:
        n_train: Number of training examples.
        n_test: Number of held-out examples.
        lang: Source language, see :func:`number_tokens`.
        max_value: Largest number used (at most ``MAX_VALUE``).
        numbers_per_example: Inclusive range of numbers per training example.
        test_numbers_per_example: The same for held-out examples; defaults to
            ``numbers_per_example``. A wider range tests on longer inputs than trained on.
        pool_size: Distinct numbers drawn when examples hold several numbers.
        max_src_len: If given, training examples (not held-out ones) whose source has
            more tokens than this are drawn again, as the paper's "RNNsearch-30" was
            trained on sentences of at most 30 words.
        seed: Seed of the only random generator used.

    Returns:
        A :class:`NumberData`; calling again with the same arguments gives equal data.
    """
    if not 0 < max_value <= MAX_VALUE:
        raise ValueError(f"max_value must be in [1, {MAX_VALUE}]")
    test_range = test_numbers_per_example or numbers_per_example
    rng = random.Random(seed)
    if max_src_len is not None and numbers_per_example[0] > 1:
        raise ValueError("max_src_len needs examples of a single number to be possible")
    if numbers_per_example == test_range == (1, 1):
        pool = _sample_numbers(rng, max_value, n_train + n_test)
        rng.shuffle(pool)
        train_numbers = [(n,) for n in pool[n_test:]]
        test_numbers = [(n,) for n in pool[:n_test]]
    else:
        pool = _sample_numbers(rng, max_value, min(pool_size, max_value + 1))
        rng.shuffle(pool)
        n_held = max(1, len(pool) // 10)
        test_pool, train_pool = pool[:n_held], pool[n_held:]

        def draw(count: int, pool_: list[int], k_range: tuple[int, int],
                 limit: int | None) -> list[tuple[int, ...]]:
            out: list[tuple[int, ...]] = []
            while len(out) < count:
                ns = tuple(rng.choice(pool_) for _ in range(rng.randint(*k_range)))
                if limit is None or len(example(ns, lang)[0]) <= limit:
                    out.append(ns)
            return out

        # Held-out examples first: they do not depend on the training options.
        test_numbers = draw(n_test, test_pool, test_range, None)
        train_numbers = draw(n_train, train_pool, numbers_per_example, max_src_len)
    train = [example(ns, lang) for ns in train_numbers]
    test = [example(ns, lang) for ns in test_numbers]
    src_vocab = Vocab(t for src, _ in train for t in src)
    tgt_vocab = Vocab([*"0123456789", SEP])
    return NumberData(train, test, train_numbers, test_numbers, src_vocab, tgt_vocab, lang)


def word_table(max_value: int, lang: str = "de") -> str:
    """Every number from 0 to ``max_value`` as a tab-separated table, one line each: its
    word tokens and its digit tokens (tokens separated by spaces).

    This is the data file shipped with the exercise ``seq2seq-attention``, which students
    download without this package: ``drei hundert vier und zwanzig\t3 2 4`` for 324.
    """
    lines = ["words\tdigits"]
    for n in range(max_value + 1):
        lines.append(f"{' '.join(number_tokens(n, lang))}\t{' '.join(digit_tokens(n))}")
    return "\n".join(lines) + "\n"


@dataclass
class Batch:
    """A padded batch (``B`` examples, ``S`` longest source, ``T`` longest target + 1).

    Attributes:
        src: ``(B, S)`` long, source ids right-padded with ``pad_id``.
        src_lengths: ``(B,)`` long, the number of real source tokens per row (>= 1).
        tgt_in: ``(B, T)`` long, ``<bos>`` followed by the target ids (decoder input).
        tgt_out: ``(B, T)`` long, the target ids followed by ``<eos>`` (what to predict).
    """

    src: torch.Tensor
    src_lengths: torch.Tensor
    tgt_in: torch.Tensor
    tgt_out: torch.Tensor

    def __len__(self) -> int:
        return self.src.shape[0]


def pad_batch(pairs: Sequence[Pair], src_vocab: Vocab, tgt_vocab: Vocab) -> Batch:
    """Encode and right-pad a list of (source, target) token pairs into a :class:`Batch`."""
    src_ids = [src_vocab.encode(s) for s, _ in pairs]
    tgt_ids = [tgt_vocab.encode(t) for _, t in pairs]
    B = len(pairs)
    S = max(len(s) for s in src_ids)
    T = max(len(t) for t in tgt_ids) + 1
    src = torch.full((B, S), src_vocab.pad_id, dtype=torch.long)
    tgt_in = torch.full((B, T), tgt_vocab.pad_id, dtype=torch.long)
    tgt_out = torch.full((B, T), tgt_vocab.pad_id, dtype=torch.long)
    for b, (s, t) in enumerate(zip(src_ids, tgt_ids, strict=True)):
        src[b, : len(s)] = torch.tensor(s)
        tgt_in[b, : len(t) + 1] = torch.tensor([tgt_vocab.bos_id, *t])
        tgt_out[b, : len(t) + 1] = torch.tensor([*t, tgt_vocab.eos_id])
    lengths = torch.tensor([len(s) for s in src_ids], dtype=torch.long)
    return Batch(src, lengths, tgt_in, tgt_out)


def batches(
    pairs: Sequence[Pair],
    src_vocab: Vocab,
    tgt_vocab: Vocab,
    batch_size: int,
    *,
    shuffle: bool = True,
    seed: int = 0,
    repeat: bool = False,
    bucket: int = 0,
) -> Iterator[Batch]:
    """Yield padded batches of ``pairs``.

    Args:
        pairs: The examples.
        src_vocab: Source vocabulary.
        tgt_vocab: Target vocabulary.
        batch_size: Examples per batch (the last batch of an epoch may be smaller).
        shuffle: Visit the examples in a random order, fixed by ``seed``.
        seed: Seed of the shuffling; epoch ``e`` uses ``seed + e``.
        repeat: Go on with a new epoch forever instead of stopping after one.
        bucket: If > 0, cut the shuffled examples into runs of ``bucket`` batches, sort
            each run by source length and shuffle the batches made from it: examples of
            similar length share a batch, which saves work on padding.
    """
    epoch = 0
    while True:
        order = list(range(len(pairs)))
        if shuffle:
            random.Random(seed + epoch).shuffle(order)
        chunks = [order[k : k + batch_size] for k in range(0, len(order), batch_size)]
        if bucket > 0:
            rng = random.Random(seed - 1 - epoch)
            chunks = []
            for k in range(0, len(order), bucket * batch_size):
                run = sorted(order[k : k + bucket * batch_size],
                             key=lambda i: len(pairs[i][0]))
                run_chunks = [run[j : j + batch_size] for j in range(0, len(run), batch_size)]
                rng.shuffle(run_chunks)
                chunks += run_chunks
        for chunk in chunks:
            yield pad_batch([pairs[i] for i in chunk], src_vocab, tgt_vocab)
        if not repeat:
            return
        epoch += 1
