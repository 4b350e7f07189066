"""The vector p-norm of an array: ``linalg.vector_norm``'s forward (ops/reduction.py) and the
norm step of ``dist``'s low-precision kernel (ops/low_precision.py)."""

from __future__ import annotations

import numpy as np


def vector_norm_array(x: np.ndarray, ord: float, dim: tuple, keepdim: bool) -> np.ndarray:
    """(sum |x|^ord)^(1/ord) over ``dim``; inf/-inf the largest/smallest |x|, 0 the count of
    nonzeros. Real, for complex inputs too."""
    a = np.abs(x)
    if ord == float("inf"):
        out = np.max(a, axis=dim, keepdims=keepdim) if a.size else np.zeros(())
    elif ord == float("-inf"):
        out = np.min(a, axis=dim, keepdims=keepdim)
    elif ord == 0:
        out = np.sum(a != 0, axis=dim, keepdims=keepdim)
    elif ord == 1:
        out = np.sum(a, axis=dim, keepdims=keepdim)
    elif ord == 2:
        out = np.sqrt(np.sum(a * a, axis=dim, keepdims=keepdim))
    else:
        out = np.sum(a**ord, axis=dim, keepdims=keepdim) ** (1.0 / ord)
    return np.asarray(out, dtype=a.dtype)
