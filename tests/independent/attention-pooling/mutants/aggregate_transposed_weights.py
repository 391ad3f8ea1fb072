"""aggregate multiplies by weights.T (messages flow along columns): weights.T @ features @ W."""


def aggregate(weights, features, W):
    """Aggregation with the transposed weight matrix."""
    return weights.to(features.dtype).T @ features @ W.to(features.dtype)
