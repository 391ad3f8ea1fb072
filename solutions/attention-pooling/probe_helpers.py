"""Helpers the hidden tests of `attention-pooling` share between grader and kernel.

Copied next to the notebook at grading time (as ``_autograder_helpers.py``), and imported
by ``hidden_tests.py`` in the grader. Nothing here is an answer to the exercise: it only
calls the student's ``fit_bandwidth`` and reports what came back as a tensor, so that the
grader can judge a Python float. Only the standard library and torch.
"""

from __future__ import annotations

import math

import torch


def fitted_bandwidth(fit_bandwidth, keys: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """``fit_bandwidth(keys, values)`` as a float64 tensor ``[h, 1.0 if h is a Python float
    else 0.0]`` (``h`` is NaN when it cannot be converted to a number)."""
    h = fit_bandwidth(keys, values)
    is_float = isinstance(h, float)
    try:
        value = float(h)
    except (TypeError, ValueError, RuntimeError):
        value = math.nan
    return torch.tensor([value, 1.0 if is_float else 0.0], dtype=torch.float64)


HELPERS = {"fitted_bandwidth": fitted_bandwidth}
