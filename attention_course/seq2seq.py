"""An RNN encoder–decoder, with or without attention, for the book's experiments.

One class, :class:`RNNTranslator`, covers the three models the chapters compare:

- ``use_attention=False``: the encoder–decoder of Cho et al. (RNNencdec). The source is
  summarised in one fixed vector ``C`` that every decoding step reads.
- ``use_attention=True``: the model of Bahdanau et al. (RNNsearch). Every step computes its
  own context ``c_i = sum_j a_ij h_j`` with the additive score of the *previous* decoder
  state ``s_{i-1}`` against each encoder state ``h_j``.
- ``use_attention=True, coverage=True``: the score also sees how much attention each source
  position has received so far (Tu et al., 2016).

Both variants share everything else (embeddings, a bidirectional GRU encoder, a GRU-cell
decoder, the read-out), so a comparison measures attention and nothing more. The module
also holds the training loop, greedy decoding and the metrics (exact match, token accuracy,
BLEU) used by the notebooks.

Shapes: ``B`` batch, ``S`` source length, ``T`` target length, ``E`` embedding size,
``H`` hidden size of each encoder direction, ``d_s`` decoder state size, ``d_a`` attention size,
``V`` target vocabulary size.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch
from torch import Tensor, nn

from attention_course.decoding import beam_search, greedy
from attention_course.number_words import NumberData, Pair, Vocab, batches, pad_batch
from attention_course.progress import progress as progress_bar

__all__ = [
    "History",
    "RNNTranslator",
    "Scores",
    "bleu",
    "evaluate",
    "train",
    "translate",
]


class RNNTranslator(nn.Module):
    """Bidirectional-GRU encoder and GRU-cell decoder, with optional additive attention.

    Args:
        src_vocab_size: Number of source token ids.
        tgt_vocab_size: Number of target token ids ``V``.
        emb_dim: Embedding size ``E`` (source and target).
        hidden_dim: Hidden size ``H`` of each encoder direction; encoder states have size
            ``2H``. The decoder state has size ``d_s = hidden_dim`` too.
        attn_dim: Size ``d_a`` of the additive score's hidden layer.
        use_attention: Compute a new context at every step (RNNsearch) or read the fixed
            summary ``C`` (RNNencdec).
        coverage: Add the accumulated attention of each source position to its score.
        pad_id: Padding id of both vocabularies.
    """

    def __init__(
        self,
        src_vocab_size: int,
        tgt_vocab_size: int,
        emb_dim: int = 32,
        hidden_dim: int = 64,
        attn_dim: int = 64,
        *,
        use_attention: bool = True,
        coverage: bool = False,
        pad_id: int = 0,
    ) -> None:
        super().__init__()
        if coverage and not use_attention:
            raise ValueError("coverage needs attention")
        self.use_attention = use_attention
        self.coverage = coverage
        self.pad_id = pad_id
        enc_dim = 2 * hidden_dim
        self.src_embed = nn.Embedding(src_vocab_size, emb_dim, padding_idx=pad_id)
        self.tgt_embed = nn.Embedding(tgt_vocab_size, emb_dim, padding_idx=pad_id)
        # Two one-directional GRUs; the backward one reads each source reversed within
        # its own length, so padding never enters a real position's state.
        self.enc_forward = nn.GRU(emb_dim, hidden_dim, batch_first=True)
        self.enc_backward = nn.GRU(emb_dim, hidden_dim, batch_first=True)
        self.init_state = nn.Linear(enc_dim, hidden_dim)
        self.cell = nn.GRUCell(emb_dim + enc_dim, hidden_dim)
        self.readout = nn.Linear(hidden_dim + enc_dim + emb_dim, tgt_vocab_size)
        if use_attention:
            # score_ij = v . tanh(W_q s_{i-1} + W_k h_j + b [+ w_c cov_ij]), with
            # att_state = W_q, att_memory = (W_k, b), att_out = v, att_coverage = w_c
            self.att_state = nn.Linear(hidden_dim, attn_dim, bias=False)
            self.att_memory = nn.Linear(enc_dim, attn_dim, bias=True)
            self.att_out = nn.Linear(attn_dim, 1, bias=False)
        if coverage:
            self.att_coverage = nn.Linear(1, attn_dim, bias=False)

    # -- encoder ---------------------------------------------------------------------------

    def encode(self, src: Tensor, src_lengths: Tensor) -> tuple[Tensor, Tensor]:
        """Run the bidirectional encoder.

        Args:
            src: ``(B, S)`` long source ids, right-padded.
            src_lengths: ``(B,)`` long, real lengths (>= 1).

        Returns:
            ``states`` ``(B, S, 2H)``: ``h_j = [forward h_j; backward h_j]``, zero at padding;
            ``summary`` ``(B, 2H)``: [forward state after the last token; backward state
            after the first token], the fixed vector ``C`` of RNNencdec.
        """
        B, S = src.shape
        positions = torch.arange(S, device=src.device).expand(B, S)  # (B, S)
        lengths = src_lengths[:, None]                                  # (B, 1)
        real = positions < lengths                                      # (B, S)
        # reverse[b, j] = lengths[b] - 1 - j on real tokens; padding stays in place
        reverse = torch.where(real, lengths - 1 - positions, positions)
        emb = self.src_embed(src)                                       # (B, S, E)
        fwd, _ = self.enc_forward(emb)                                  # (B, S, H)
        emb_rev = emb.gather(1, reverse[..., None].expand_as(emb))
        bwd_rev, _ = self.enc_backward(emb_rev)                         # (B, S, H)
        bwd = bwd_rev.gather(1, reverse[..., None].expand_as(bwd_rev))
        states = torch.cat([fwd, bwd], dim=-1) * real[..., None]        # (B, S, 2H)
        last = (src_lengths - 1)[:, None, None].expand(B, 1, fwd.shape[-1])
        summary = torch.cat([fwd.gather(1, last).squeeze(1), bwd[:, 0]], dim=-1)
        return states, summary

    # -- attention -------------------------------------------------------------------------

    def _attend(
        self, s_prev: Tensor, memory: Tensor, states: Tensor, src_bias: Tensor,
        cover: Tensor | None,
    ) -> tuple[Tensor, Tensor]:
        """Additive attention of the previous state over the encoder states.

        Args:
            s_prev: ``(B, d_s)`` previous decoder state, the query.
            memory: ``(B, S, d_a)`` the encoder states' projections ``W_k h_j + b``
                (computed once per source).
            states: ``(B, S, 2H)`` encoder states, keys and values.
            src_bias: ``(B, S)`` 0 at real source tokens, ``-inf`` at padding.
            cover: ``(B, S)`` attention received so far, or None without coverage.

        Returns:
            ``context`` ``(B, 2H)`` and ``weights`` ``(B, S)``.
        """
        hidden = memory + self.att_state(s_prev).unsqueeze(1)  # (B, S, d_a)
        if cover is not None:
            hidden = hidden + self.att_coverage(cover.unsqueeze(-1))
        scores = self.att_out(torch.tanh(hidden)).squeeze(-1)  # (B, S)
        weights = torch.softmax(scores + src_bias, dim=-1)
        context = torch.bmm(weights.unsqueeze(1), states).squeeze(1)  # (B, 2H)
        return context, weights

    # -- decoder ---------------------------------------------------------------------------

    def _start(self, src: Tensor, src_lengths: Tensor) -> dict[str, Tensor | None]:
        """Encode the source and prepare everything the decoding steps reuse."""
        states, summary = self.encode(src, src_lengths)
        S = src.shape[1]
        mask = torch.arange(S, device=src.device)[None, :] < src_lengths[:, None]
        return {
            "states": states,
            "summary": summary,
            "mask": mask,
            "bias": states.new_zeros(mask.shape).masked_fill(~mask, float("-inf")),
            "memory": self.att_memory(states) if self.use_attention else None,
            "cover": states.new_zeros(mask.shape) if self.coverage else None,
            "s": torch.tanh(self.init_state(summary)),
        }

    def _advance(self, e: Tensor, ctx: dict[str, Tensor | None]) -> tuple[Tensor, Tensor, Tensor]:
        """Attention and state update of one step; updates ``ctx`` (state, coverage).

        Args:
            e: ``(B, E)`` embedding of the previous target token.
            ctx: The dict made by :meth:`_start`.

        Returns:
            The new state ``s`` ``(B, d_s)``, the context ``c`` ``(B, 2H)`` and the attention
            ``weights`` ``(B, S)`` (all zero without attention).
        """
        if self.use_attention:
            c, a = self._attend(ctx["s"], ctx["memory"], ctx["states"], ctx["bias"],
                                ctx["cover"])
            if self.coverage:
                ctx["cover"] = ctx["cover"] + a
        else:
            c = ctx["summary"]  # the same C at every step
            a = ctx["mask"].new_zeros(ctx["mask"].shape, dtype=c.dtype)
        s = self.cell(torch.cat([e, c], dim=-1), ctx["s"])  # (B, d_s)
        ctx["s"] = s
        return s, c, a

    def _step(self, y_prev: Tensor, ctx: dict[str, Tensor | None]) -> tuple[Tensor, Tensor]:
        """One decoding step from the previous token ``y_prev`` ``(B,)``.

        Returns:
            ``logits`` ``(B, V)`` and attention ``weights`` ``(B, S)``.
        """
        e = self.tgt_embed(y_prev)  # (B, E)
        s, c, a = self._advance(e, ctx)
        return self.readout(torch.cat([s, c, e], dim=-1)), a

    def forward(self, src: Tensor, src_lengths: Tensor, tgt_in: Tensor) -> tuple[Tensor, Tensor]:
        """Teacher-forced decoding.

        Args:
            src: ``(B, S)`` long source ids.
            src_lengths: ``(B,)`` long.
            tgt_in: ``(B, T)`` long, ``<bos>`` followed by the target.

        Returns:
            ``logits`` ``(B, T, V)`` and ``weights`` ``(B, T, S)``.
        """
        ctx = self._start(src, src_lengths)
        emb = self.tgt_embed(tgt_in)  # (B, T, E)
        features, weights = [], []
        for t in range(tgt_in.shape[1]):
            s, c, a = self._advance(emb[:, t], ctx)
            features.append(torch.cat([s, c], dim=-1))
            weights.append(a)
        # the read-out of every step at once: (B, T, d_s + 2H + E) -> (B, T, V)
        logits = self.readout(torch.cat([torch.stack(features, 1), emb], dim=-1))
        return logits, torch.stack(weights, 1)

    # -- step-by-step decoding (attention_course.decoding) ---------------------------------

    def start(self, src: Tensor, src_lengths: Tensor) -> dict[str, Tensor | None]:
        """Encode the source once for decoding (the state of :mod:`~attention_course.decoding`)."""
        return self._start(src, src_lengths)

    def step(self, prefix: Tensor, state: dict[str, Tensor | None]
             ) -> tuple[Tensor, Tensor, dict[str, Tensor | None]]:
        """One decoding step after ``prefix`` ``(B, t)``; only its last token is read.

        Returns:
            ``logits`` ``(B, V)``, attention ``weights`` ``(B, S)`` and the new state (the
            given one is left as it was).
        """
        state = dict(state)
        logits, weights = self._step(prefix[:, -1], state)
        return logits, weights, state

    @torch.no_grad()
    def generate(
        self, src: Tensor, src_lengths: Tensor, bos_id: int, eos_id: int, max_len: int
    ) -> tuple[Tensor, Tensor]:
        """Greedy decoding.

        Returns:
            ``tokens`` ``(B, L)`` long without ``<bos>``, ``L <= max_len``; after a row's
            first ``<eos>`` its tokens are ``pad_id``. ``weights`` ``(B, L, S)``.
        """
        return greedy(self, src, src_lengths, bos_id, eos_id, max_len, pad_id=self.pad_id)


# -- training ------------------------------------------------------------------------------


@dataclass
class History:
    """What :func:`train` measured.

    Attributes:
        steps: Step numbers at which the loss was recorded.
        loss: Mean training loss (cross-entropy per target token) since the previous record.
        eval_steps: Step numbers at which the held-out score was measured.
        eval_exact: Held-out exact match at those steps.
        seconds: Wall-clock training time.
    """

    steps: list[int] = field(default_factory=list)
    loss: list[float] = field(default_factory=list)
    eval_steps: list[int] = field(default_factory=list)
    eval_exact: list[float] = field(default_factory=list)
    seconds: float = 0.0


def train(
    model: nn.Module,
    data: NumberData,
    steps: int,
    *,
    batch_size: int = 64,
    lr: float = 3e-3,
    clip: float = 1.0,
    bucket: int = 20,
    seed: int = 0,
    log_every: int = 50,
    eval_every: int = 0,
    eval_pairs: Sequence[Pair] | None = None,
    progress: bool = True,
    desc: str = "training",
) -> History:
    """Train ``model`` on ``data.train`` with Adam and teacher forcing.

    The loss is the mean cross-entropy over the real (non-padding) target tokens, ``<eos>``
    included. Gradients are clipped to norm ``clip``; the learning rate decays linearly to a
    tenth of ``lr`` over the run.

    Args:
        model: The model, trained in place.
        data: Examples and vocabularies.
        steps: Number of parameter updates.
        batch_size: Examples per update.
        lr: Initial learning rate.
        clip: Largest gradient norm.
        bucket: Batch examples of similar source length together, see
            :func:`~attention_course.number_words.batches`.
        seed: Seeds the initial parameters' training order (batches are shuffled with it).
        log_every: Record the mean loss every ``log_every`` steps.
        eval_every: Measure held-out exact match every ``eval_every`` steps (0: never).
        eval_pairs: Examples for that measurement (default: the first 500 of ``data.test``).
        progress: Show a progress bar (:func:`attention_course.progress.progress`).
        desc: The progress bar's label.

    Returns:
        A :class:`History`.
    """
    torch.manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda k: 1 - 0.9 * k / max(1, steps))
    loader = batches(data.train, data.src_vocab, data.tgt_vocab, batch_size,
                     seed=seed, repeat=True, bucket=bucket)
    eval_pairs = list(eval_pairs if eval_pairs is not None else data.test[:500])
    pad = data.tgt_vocab.pad_id
    history = History()
    running, count = 0.0, 0
    start = time.perf_counter()
    model.train()
    # A bar in Jupyter or a terminal; one summary line in the built book.
    bar = progress_bar(range(1, steps + 1), desc=desc, unit="steps", mininterval=2.0) \
        if progress else None
    for step in bar if bar is not None else range(1, steps + 1):
        batch = next(loader)
        logits, _ = model(batch.src, batch.src_lengths, batch.tgt_in)
        loss = nn.functional.cross_entropy(logits.flatten(0, 1), batch.tgt_out.flatten(),
                                           ignore_index=pad)
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), clip)
        opt.step()
        sched.step()
        running += loss.item()
        count += 1
        if step % log_every == 0 or step == steps:
            history.steps.append(step)
            history.loss.append(running / count)
            if bar is not None:
                bar.set_postfix(loss=f"{running / count:.3f}", refresh=False)
            running, count = 0.0, 0
        if eval_every and (step % eval_every == 0 or step == steps):
            history.eval_steps.append(step)
            history.eval_exact.append(evaluate(model, data, eval_pairs).exact)
            model.train()
    history.seconds = time.perf_counter() - start
    model.eval()
    return history


# -- evaluation ----------------------------------------------------------------------------


def bleu(hypotheses: Sequence[Sequence[str]], references: Sequence[Sequence[str]],
         max_n: int = 4) -> float:
    """Corpus BLEU (Papineni et al., 2002) with one reference per sentence, in percent.

    The geometric mean of the modified n-gram precisions for n = 1..``max_n``, counted over
    the whole corpus, times the brevity penalty ``exp(1 - r/c)`` when the hypotheses'
    total length ``c`` is shorter than the references' ``r``. No smoothing: a corpus with no
    matching n-gram of some order scores 0.
    """
    matches = [0] * max_n
    totals = [0] * max_n
    hyp_len = ref_len = 0
    for hyp, ref in zip(hypotheses, references, strict=True):
        hyp_len += len(hyp)
        ref_len += len(ref)
        for n in range(1, max_n + 1):
            h = Counter(tuple(hyp[i : i + n]) for i in range(len(hyp) - n + 1))
            r = Counter(tuple(ref[i : i + n]) for i in range(len(ref) - n + 1))
            matches[n - 1] += sum(min(c, r[g]) for g, c in h.items())
            totals[n - 1] += max(len(hyp) - n + 1, 0)
    if hyp_len == 0 or min(matches) == 0:
        return 0.0
    log_precision = sum(math.log(m / t) for m, t in zip(matches, totals, strict=True)) / max_n
    brevity = min(0.0, 1.0 - ref_len / hyp_len)
    return 100.0 * math.exp(log_precision + brevity)


@dataclass
class Scores:
    """Scores of a model on a list of examples.

    Attributes:
        exact: Fraction of examples whose whole output equals the reference.
        token_accuracy: Fraction of reference tokens (``<eos>`` included) predicted at
            their position.
        bleu: Corpus BLEU-4 in percent, see :func:`bleu`.
        outputs: The decoded outputs, as token lists.
    """

    exact: float
    token_accuracy: float
    bleu: float
    outputs: list[list[str]]


@torch.no_grad()
def evaluate(model: nn.Module, data: NumberData, pairs: Sequence[Pair],
             batch_size: int = 500, beam_size: int | None = None) -> Scores:
    """Decode ``pairs`` and score the outputs against their targets.

    Args:
        model: A translator with ``generate`` (greedy decoding) and, for beam search, the
            ``start``/``step`` methods of :mod:`attention_course.decoding`:
            :class:`RNNTranslator` or
            :class:`~attention_course.transformer.TransformerTranslator`.
        beam_size: None for greedy decoding, else the beam size of
            :func:`~attention_course.decoding.beam_search`.
    """
    model.eval()
    sv, tv = data.src_vocab, data.tgt_vocab
    outputs: list[list[str]] = []
    correct_tokens = total_tokens = 0
    for start in range(0, len(pairs), batch_size):
        chunk = list(pairs[start : start + batch_size])
        batch = pad_batch(chunk, sv, tv)
        max_len = batch.tgt_out.shape[1] + 5
        if beam_size is None:
            tokens, _ = model.generate(batch.src, batch.src_lengths, tv.bos_id, tv.eos_id,
                                       max_len)
        else:
            tokens, _ = beam_search(model, batch.src, batch.src_lengths, tv.bos_id,
                                    tv.eos_id, max_len, beam_size, pad_id=tv.pad_id)
        for row, (_, ref) in zip(tokens.tolist(), chunk, strict=True):
            outputs.append(tv.decode(row))
            gold = tv.encode(ref) + [tv.eos_id]
            correct_tokens += sum(p == g for p, g in zip(row, gold, strict=False))
            total_tokens += len(gold)
    refs = [t for _, t in pairs]
    exact = sum(o == r for o, r in zip(outputs, refs, strict=True)) / max(1, len(pairs))
    return Scores(exact, correct_tokens / max(1, total_tokens), bleu(outputs, refs), outputs)


@torch.no_grad()
def translate(model: nn.Module, src_tokens: Sequence[str], src_vocab: Vocab,
              tgt_vocab: Vocab, max_len: int = 40) -> tuple[list[str], Tensor]:
    """Translate one tokenised source.

    Returns:
        The output tokens (up to and including ``<eos>`` if it was produced) and the
        attention weights ``(L, S)``, one row per output token.
    """
    model.eval()
    src = torch.tensor([src_vocab.encode(src_tokens)])
    tokens, weights = model.generate(src, torch.tensor([len(src_tokens)]),
                                     tgt_vocab.bos_id, tgt_vocab.eos_id, max_len)
    out = tgt_vocab.decode(tokens[0], strip=False)
    if "<eos>" in out:
        out = out[: out.index("<eos>") + 1]
    return out, weights[0, : len(out)]
