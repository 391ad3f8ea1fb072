"""Small, deterministic data sets used by the notebooks of Part 1 (and reused later).

Every function returns torch tensors and states their shapes, so that a notebook can
print them and a student can check every number by hand:

- :func:`lecture_graph`: the lecture's four-node graph (adjacency, features, weights);
- :func:`regression_data` and :func:`regression_truth`: a noisy 1-D curve for
  Nadaraya–Watson kernel regression;
- :func:`review_batch`: made-up "reviews" whose label is given by one informative word.
"""

from __future__ import annotations

import torch

__all__ = [
    "NODE_NAMES",
    "REVIEW_WORDS",
    "lecture_graph",
    "regression_data",
    "regression_truth",
    "review_batch",
]

NODE_NAMES = ["Node 1", "Node 2", "Node 3", "Node 4"]


def lecture_graph() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The lecture's four-node graph, with the numbers printed on its slides.

    Node 1 is linked to nodes 2, 3 and 4, node 2 to node 3; the graph is undirected and has
    no self-loops.

    Returns:
        ``(A, X, W)``: the adjacency matrix ``A`` of shape ``(N, N) = (4, 4)`` with
        ``A[v, u] = 1`` when nodes ``v`` and ``u`` are linked; the feature matrix ``X`` of
        shape ``(N, M) = (4, 5)``, one row of five features per node; and the weight matrix
        ``W`` of shape ``(M, K) = (5, 4)`` of the transformation step, which maps five
        features to four. All are float32.
    """
    A = torch.tensor([[0.0, 1.0, 1.0, 1.0],
                      [1.0, 0.0, 1.0, 0.0],
                      [1.0, 1.0, 0.0, 0.0],
                      [1.0, 0.0, 0.0, 0.0]])
    X = torch.tensor([[0.1, 0.7, 1.2, 1.1, 0.9],
                      [0.3, 0.4, 0.3, 0.1, 1.2],
                      [0.5, 0.3, 1.5, 0.4, 0.6],
                      [1.0, 0.1, 0.2, 0.5, 0.1]])
    W = torch.tensor([[0.1, 0.7, 1.2, 1.1],
                      [0.3, 0.4, 0.3, 0.1],
                      [0.5, 0.3, 1.5, 0.4],
                      [1.0, 0.1, 0.2, 0.5],
                      [2.0, 0.4, 0.1, 2.4]])
    return A, X, W


def regression_truth(x: torch.Tensor) -> torch.Tensor:
    """The curve behind :func:`regression_data`: ``f(x) = 2 sin(x) + x / 2``.

    Args:
        x: Inputs of any shape.

    Returns:
        ``f(x)``, with the shape of ``x``.
    """
    return 2 * torch.sin(x) + 0.5 * x


def regression_data(
    n: int = 40, noise: float = 0.4, seed: int = 0
) -> tuple[torch.Tensor, torch.Tensor]:
    """Noisy samples of :func:`regression_truth` at random points of ``[0, 5]``.

    Args:
        n: Number of samples.
        noise: Standard deviation of the Gaussian noise added to each ``f(x_i)``.
        seed: Seed of the private random generator; the same seed gives the same data.

    Returns:
        ``(x, y)``, both of shape ``(n,)``: the inputs, sorted in increasing order, and
        the noisy outputs ``y_i = f(x_i) + noise * e_i`` with ``e_i ~ N(0, 1)``.
    """
    generator = torch.Generator().manual_seed(seed)
    x = torch.sort(5 * torch.rand(n, generator=generator)).values  # (n,)
    y = regression_truth(x) + noise * torch.randn(n, generator=generator)  # (n,)
    return x, y


# The first two words are informative (label 0 and label 1); the others are filler.
REVIEW_WORDS = ["great", "awful", "the", "movie", "was", "a", "plot", "actor", "film",
                "story", "and", "it", "this", "scene", "ending", "music", "cast",
                "script", "very", "quite"]


def review_batch(
    batch_size: int, length: int = 10, generator: torch.Generator | None = None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Made-up "reviews": filler words plus one informative word at a random position.

    Word ids index :data:`REVIEW_WORDS`. Each review holds exactly one informative word,
    ``great`` (id 0, label 0 = positive) or ``awful`` (id 1, label 1 = negative); every
    other position holds a filler word drawn uniformly from ids ``2 .. 19``.

    Args:
        batch_size: Number of reviews ``B``.
        length: Number of words ``n`` per review.
        generator: Random generator to draw from (``None``: torch's global generator).

    Returns:
        ``(tokens, labels, positions)``: word ids of shape ``(B, n)``, labels of shape
        ``(B,)`` (equal to the id of the informative word) and the position of the
        informative word in each review, of shape ``(B,)``. All are int64.
    """
    vocab = len(REVIEW_WORDS)
    tokens = torch.randint(2, vocab, (batch_size, length), generator=generator)  # (B, n)
    labels = torch.randint(0, 2, (batch_size,), generator=generator)  # (B,)
    positions = torch.randint(0, length, (batch_size,), generator=generator)  # (B,)
    tokens[torch.arange(batch_size), positions] = labels
    return tokens, labels, positions
