"""Scaled dot score divides by d_k instead of sqrt(d_k).

Otherwise a straightforward matmul/bmm implementation.
"""



def scaled_dot_score(query, keys):
    """q . k_i / sqrt(d_k)."""
    return dot_score(query, keys) / keys.shape[-1]
