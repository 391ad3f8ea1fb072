"""Graph attention (GAT) next to mean aggregation, and Zachary's karate club.

- :func:`gat_attention` computes the attention weights of a graph attention layer
  (Velickovic et al., 2018) from transformed node features;
- :class:`GraphAttentionLayer` is a multi-head GAT layer, :class:`MeanAggregationLayer`
  the graph convolution it replaces (mean over the neighbours and the node itself);
- :class:`TwoLayerGNN` stacks two layers of either kind into a node classifier;
- :func:`karate_club` loads Zachary's karate club from networkx (shipped with the
  package, nothing is downloaded) and :func:`labelled_nodes` picks a few labelled nodes;
- :func:`draw_edge_weights` draws weights on a graph as coloured, directed edges.

Conventions: ``N`` nodes, ``F`` input features, ``H`` heads, ``F_out`` output features per
head. A neighbourhood is a boolean matrix ``mask`` of shape ``(N, N)`` whose entry
``[i, j]`` is true when node ``i`` aggregates node ``j``; row ``i`` of an attention
matrix holds the weights node ``i`` gives its neighbours and sums to 1.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import matplotlib.pyplot as plt
import networkx as nx
import numpy as np
import torch
from matplotlib.axes import Axes
from matplotlib.colors import Colormap, Normalize
from torch import nn

__all__ = [
    "GraphAttentionLayer",
    "KarateClub",
    "MeanAggregationLayer",
    "TwoLayerGNN",
    "add_self_loops",
    "draw_edge_weights",
    "gat_attention",
    "karate_club",
    "labelled_nodes",
]


def add_self_loops(adjacency: torch.Tensor) -> torch.Tensor:
    """The neighbourhood mask of a graph with every node linked to itself.

    Args:
        adjacency: Adjacency matrix of shape ``(N, N)``, non-zero where two nodes are
            linked.

    Returns:
        Boolean tensor of shape ``(N, N)``: ``adjacency != 0`` with a true diagonal.
    """
    n = adjacency.shape[0]
    return (adjacency != 0) | torch.eye(n, dtype=torch.bool)


def gat_attention(
    z: torch.Tensor,
    a_src: torch.Tensor,
    a_dst: torch.Tensor,
    mask: torch.Tensor,
    negative_slope: float = 0.2,
) -> tuple[torch.Tensor, torch.Tensor]:
    """GAT's scores and weights, for every head at once.

    With ``a = [a_src ‖ a_dst]``, the score of node ``i`` for node ``j`` is
    ``e_ij = LeakyReLU(a . [z_i ‖ z_j]) = LeakyReLU(a_src . z_i + a_dst . z_j)``, and the
    weights are the softmax of the scores over the neighbourhood of ``i``
    (``mask[i, j]`` true).

    Args:
        z: Transformed features ``W h`` of shape ``(H, N, F_out)``.
        a_src: The half of the attention vector that multiplies ``z_i`` (the node that
            aggregates), shape ``(H, F_out)``.
        a_dst: The half that multiplies ``z_j`` (the neighbour), shape ``(H, F_out)``.
        mask: Neighbourhoods, boolean of shape ``(N, N)``; every row needs at least one
            true entry (add self-loops).
        negative_slope: Slope of the LeakyReLU for negative inputs (0.2 in the paper).

    Returns:
        ``(scores, weights)``, both of shape ``(H, N, N)``: the scores ``e_ij`` (``-inf``
        outside the neighbourhoods) and the weights ``alpha_ij`` (0 outside).
    """
    from_i = torch.einsum("hnf,hf->hn", z, a_src)  # (H, N): a_src . z_i
    from_j = torch.einsum("hnf,hf->hn", z, a_dst)  # (H, N): a_dst . z_j
    raw = from_i.unsqueeze(2) + from_j.unsqueeze(1)  # (H, N, N)
    scores = nn.functional.leaky_relu(raw, negative_slope)  # (H, N, N)
    scores = torch.where(mask, scores, -torch.inf)  # (H, N, N): no edge, no weight
    return scores, torch.softmax(scores, dim=-1)


class GraphAttentionLayer(nn.Module):
    """A multi-head graph attention layer (Velickovic et al., 2018).

    Each head ``k`` transforms every node, ``z_i = W^k h_i``, scores each neighbour with
    :func:`gat_attention` and sums the transformed neighbours with the weights:
    ``h'_i = sum_j alpha^k_ij z_j``. The heads' outputs are concatenated (hidden layers)
    or averaged (output layer). The weights of the last call are kept in
    ``self.attention``, shape ``(H, N, N)``.

    Args:
        in_features: Input size ``F``.
        out_features: Output size ``F_out`` of each head.
        heads: Number of heads ``H``.
        concat: Concatenate the heads (output ``(N, H * F_out)``) instead of averaging
            them (output ``(N, F_out)``).
        negative_slope: Slope of the LeakyReLU.
        dropout: Dropout probability applied to the attention weights while training.
    """

    def __init__(
        self,
        in_features: int,
        out_features: int,
        heads: int = 1,
        concat: bool = True,
        negative_slope: float = 0.2,
        dropout: float = 0.0,
    ) -> None:
        super().__init__()
        self.heads, self.out_features, self.concat = heads, out_features, concat
        self.negative_slope = negative_slope
        self.W = nn.Parameter(torch.empty(heads, in_features, out_features))
        self.a_src = nn.Parameter(torch.empty(heads, out_features))
        self.a_dst = nn.Parameter(torch.empty(heads, out_features))
        self.bias = nn.Parameter(torch.zeros(heads * out_features if concat
                                             else out_features))
        self.dropout = nn.Dropout(dropout)
        bound = math.sqrt(6 / (in_features + out_features))  # Glorot uniform
        nn.init.uniform_(self.W, -bound, bound)
        bound = math.sqrt(6 / (2 * out_features + 1))
        nn.init.uniform_(self.a_src, -bound, bound)
        nn.init.uniform_(self.a_dst, -bound, bound)
        self.attention: torch.Tensor | None = None

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Aggregate.

        Args:
            x: Node features of shape ``(N, F)``.
            mask: Neighbourhoods of shape ``(N, N)``, boolean, with self-loops.

        Returns:
            ``(N, H * F_out)`` if ``concat``, else ``(N, F_out)``.
        """
        z = torch.einsum("nf,hfo->hno", x, self.W)  # (H, N, F_out)
        _, alpha = gat_attention(z, self.a_src, self.a_dst, mask,
                                 self.negative_slope)  # (H, N, N)
        self.attention = alpha.detach()
        out = self.dropout(alpha) @ z  # (H, N, N)(H, N, F_out) -> (H, N, F_out)
        if self.concat:
            out = out.permute(1, 0, 2).reshape(x.shape[0], -1)  # (N, H * F_out)
        else:
            out = out.mean(dim=0)  # (N, F_out)
        return out + self.bias


class MeanAggregationLayer(nn.Module):
    """A graph convolution with equal weights: ``h'_i = W . mean of h_j, j in N(i)``.

    The neighbourhood includes the node itself (pass a mask with self-loops), so this
    is ``D^-1 (A + I) X W`` with a bias, the aggregation that graph attention replaces.
    ``self.attention`` holds the equal weights ``1 / |N(i)|``, shape ``(1, N, N)``.

    Args:
        in_features: Input size ``F``.
        out_features: Output size ``F_out``.
    """

    def __init__(self, in_features: int, out_features: int) -> None:
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        nn.init.xavier_uniform_(self.linear.weight)
        nn.init.zeros_(self.linear.bias)
        self.attention: torch.Tensor | None = None

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Aggregate.

        Args:
            x: Node features of shape ``(N, F)``.
            mask: Neighbourhoods of shape ``(N, N)``, boolean, with self-loops.

        Returns:
            Tensor of shape ``(N, F_out)``.
        """
        weights = mask.float() / mask.sum(dim=1, keepdim=True)  # (N, N)
        self.attention = weights.unsqueeze(0)  # (1, N, N)
        return self.linear(weights @ x)  # (N, N)(N, F) -> (N, F) -> (N, F_out)


class TwoLayerGNN(nn.Module):
    """Two aggregation layers with an ELU and dropout in between: a node classifier.

    ``kind="gat"`` uses a :class:`GraphAttentionLayer` with ``heads`` concatenated heads
    of ``hidden // heads`` features, then a one-head attention layer; ``kind="mean"``
    uses two :class:`MeanAggregationLayer` with ``hidden`` features in between.

    Args:
        in_features: Input size ``F``.
        hidden: Size of the hidden layer (all heads together for GAT).
        classes: Number of classes ``C``.
        kind: ``"gat"`` or ``"mean"``.
        heads: Heads of the first GAT layer (``hidden`` must be divisible by it).
        dropout: Dropout probability on the input, the hidden features and (for GAT)
            the attention weights.
    """

    def __init__(
        self,
        in_features: int,
        hidden: int,
        classes: int,
        kind: str = "gat",
        heads: int = 4,
        dropout: float = 0.5,
    ) -> None:
        super().__init__()
        if kind == "gat":
            self.layer1 = GraphAttentionLayer(in_features, hidden // heads, heads,
                                              dropout=dropout)
            self.layer2 = GraphAttentionLayer(hidden, classes, 1, concat=False,
                                              dropout=dropout)
        elif kind == "mean":
            self.layer1 = MeanAggregationLayer(in_features, hidden)
            self.layer2 = MeanAggregationLayer(hidden, classes)
        else:
            raise ValueError(f"kind must be 'gat' or 'mean', got {kind!r}")
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Class scores (logits) of shape ``(N, C)`` for features ``x`` of shape ``(N, F)``."""
        h = nn.functional.elu(self.layer1(self.dropout(x), mask))  # (N, hidden)
        return self.layer2(self.dropout(h), mask)  # (N, C)


@dataclass
class KarateClub:
    """Zachary's karate club as tensors.

    Attributes:
        graph: The networkx graph (34 nodes ``0 .. 33``, 78 edges).
        adjacency: Float tensor of shape ``(N, N)``, 1 where two members are linked.
        labels: Int64 tensor of shape ``(N,)``: 0 for the members who followed the
            instructor ("Mr. Hi", node 0), 1 for those who followed the club's
            administrator ("Officer", node 33).
        clubs: The names of the two labels.
        positions: Array of shape ``(N, 2)``, a fixed drawing layout.
    """

    graph: nx.Graph
    adjacency: torch.Tensor
    labels: torch.Tensor
    clubs: tuple[str, str]
    positions: np.ndarray


def karate_club(layout_seed: int = 3) -> KarateClub:
    """Load Zachary's karate club (shipped with networkx; nothing is downloaded).

    Args:
        layout_seed: Seed of the spring layout used for drawing; the same seed gives the
            same picture.

    Returns:
        A :class:`KarateClub`.
    """
    graph = nx.karate_club_graph()
    nodes = sorted(graph.nodes)
    clubs = ("Mr. Hi", "Officer")
    adjacency = torch.tensor(nx.to_numpy_array(graph, nodelist=nodes, weight=None),
                             dtype=torch.float32)  # (N, N)
    labels = torch.tensor([clubs.index(graph.nodes[v]["club"]) for v in nodes])
    layout = nx.spring_layout(graph, seed=layout_seed)
    positions = np.array([layout[v] for v in nodes])  # (N, 2)
    return KarateClub(graph, adjacency, labels, clubs, positions)


def labelled_nodes(
    labels: torch.Tensor, per_class: int, seed: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Choose ``per_class`` labelled nodes of every class at random; the rest is unlabelled.

    Args:
        labels: Class of every node, shape ``(N,)``.
        per_class: Number of labelled nodes per class.
        seed: Seed of the private random generator.

    Returns:
        ``(train, test)``: sorted int64 indices of the labelled and of the unlabelled
        nodes.
    """
    generator = torch.Generator().manual_seed(seed)
    chosen = []
    for c in labels.unique():
        members = torch.nonzero(labels == c).flatten()
        order = torch.randperm(len(members), generator=generator)
        chosen.append(members[order[:per_class]])
    train = torch.cat(chosen).sort().values
    test = torch.tensor([v for v in range(len(labels)) if v not in set(train.tolist())])
    return train, test


def draw_edge_weights(
    graph: nx.Graph,
    positions: np.ndarray,
    weights: Any,
    ax: Axes | None = None,
    *,
    node_colors: Any = "#dbe9f6",
    highlight: Sequence[int] = (),
    cmap: str | Colormap = "coolwarm",
    vmin: float | None = None,
    vmax: float | None = None,
    norm: Normalize | None = None,
    title: str | None = None,
    colorbar_label: str | None = None,
    colorbar_ticks: Sequence[float] | None = None,
    node_size: float = 260,
    max_width: float = 3.5,
) -> Axes:
    """Draw a graph with every edge ``i -> j`` coloured and sized by ``weights[i, j]``.

    The two directions of an edge are drawn as two curved arrows, so the weight node
    ``i`` gives ``j`` and the weight ``j`` gives ``i`` can differ; the arrow of
    ``weights[i, j]`` points from ``j`` (the neighbour read) to ``i`` (the node that
    aggregates). Self-loops are not drawn.

    Args:
        graph: The graph, with nodes ``0 .. N - 1``.
        positions: Node positions of shape ``(N, 2)``.
        weights: Edge weights of shape ``(N, N)`` (array or tensor).
        ax: Axes to draw on (default: a new 7 by 5.5 inch figure).
        node_colors: One colour for all nodes or one per node.
        highlight: Nodes drawn with a thick black outline (e.g. the labelled ones).
        cmap: Colormap of the edges.
        vmin: Weight drawn with the first colour of ``cmap`` (default: the smallest).
        vmax: Weight drawn with the last colour (default: the largest).
        norm: A Matplotlib normalisation instead of ``vmin``/``vmax`` (e.g. a log scale).
        title: Title of the axes.
        colorbar_label: Label of a colourbar for the edge colours (none if ``None``).
        colorbar_ticks: Values to mark on the colourbar, written with ``:g``.
        node_size: Node size in points squared.
        max_width: Line width of the edge with the largest colour value.

    Returns:
        The axes drawn on.
    """
    if hasattr(weights, "detach"):
        weights = weights.detach().cpu().numpy()
    w = np.asarray(weights, dtype=float)  # (N, N)
    if ax is None:
        _, ax = plt.subplots(figsize=(6.7, 5.5), layout="constrained")
    edges = [(j, i) for i, j in graph.to_directed().edges if i != j]  # j -> i
    values = np.array([w[i, j] for j, i in edges])  # (E,)
    if norm is None:
        norm = Normalize(values.min() if vmin is None else vmin,
                         values.max() if vmax is None else vmax)
    scaled = np.clip(norm(values), 0, 1)  # (E,) in [0, 1]
    colormap = plt.get_cmap(cmap)
    order = np.argsort(scaled)  # draw the strongest edges last, on top
    pos = {v: positions[v] for v in graph.nodes}
    nx.draw_networkx_edges(
        nx.DiGraph([edges[k] for k in order]), pos, ax=ax,
        edgelist=[edges[k] for k in order],
        edge_color=[colormap(scaled[k]) for k in order],
        width=[0.4 + max_width * scaled[k] for k in order],
        arrows=True, arrowstyle="-|>", arrowsize=7,
        connectionstyle="arc3,rad=0.12", node_size=node_size)
    widths = [2.2 if v in set(highlight) else 0.6 for v in graph.nodes]
    nx.draw_networkx_nodes(graph, pos, ax=ax, node_color=node_colors,
                           node_size=node_size, edgecolors="black", linewidths=widths)
    nx.draw_networkx_labels(graph, pos, ax=ax, font_size=9)
    if colorbar_label is not None:
        mappable = plt.cm.ScalarMappable(norm=norm, cmap=colormap)
        cbar = ax.figure.colorbar(mappable, ax=ax, shrink=0.7)
        cbar.set_label(colorbar_label)
        if colorbar_ticks is not None:
            cbar.set_ticks(list(colorbar_ticks),
                           labels=[f"{t:g}" for t in colorbar_ticks])
            cbar.minorticks_off()
    if title:
        ax.set_title(title)
    ax.axis("off")
    return ax
