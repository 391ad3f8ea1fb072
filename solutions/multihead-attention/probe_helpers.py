"""Helpers the hidden tests of `multihead-attention` share between grader and kernel.

Copied next to the notebook at grading time (as ``_autograder_helpers.py``) and imported by
``hidden_tests.py`` in the grader, where they run on the reference module instead. Nothing
here is an answer to the exercise: they only read attributes of a module or call it.
Only the standard library and torch.
"""

from __future__ import annotations

import torch


def head_sizes(module) -> torch.Tensor:
    """(num_heads, head_dim) of a multi-head module, as a long tensor."""
    return torch.tensor([module.num_heads, module.head_dim])


def self_attention(module, x: torch.Tensor):
    """The module with x (B, T, d_model) as query, key and value."""
    return module(x, x, x)


def self_attention_permuted(module, x: torch.Tensor, order: torch.Tensor):
    """The module on the positions of x taken in ``order``, its results put back in x's
    order: equal to :func:`self_attention` for any permutation when the module treats
    positions as a set (self-attention without positional information)."""
    back = torch.argsort(order)
    shuffled = x[:, order]
    out, weights = module(shuffled, shuffled, shuffled)
    return out[:, back], weights[:, :, back][:, :, :, back]


HELPERS = {"head_sizes": head_sizes, "self_attention": self_attention,
           "self_attention_permuted": self_attention_permuted}
