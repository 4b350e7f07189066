"""Sums of arrays that the engine and the ops share: the fast axis sum, torch's order for a
short float32 total, and ``sum_to_array``, which reduces a broadcast gradient to its input's
shape.

They take and return NumPy arrays, below the Tensor, the graph and the ops, so that the
backward engine (autograd/engine.py) and the reductions (ops/reduction.py) use the same code
and round alike.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

_ONES: dict = {}


def ones_vector(n: int, dtype: Any) -> np.ndarray:
    """A cached read-only vector of ones: the reduction vector of sums run as BLAS products."""
    key = (n, dtype)
    v = _ONES.get(key)
    if v is None:
        if len(_ONES) > 256:
            _ONES.clear()
        v = _ONES[key] = np.ones(n, dtype=dtype)
        v.flags.writeable = False
    return v


def fast_sum(x: np.ndarray, dims: tuple, keepdim: bool) -> np.ndarray:
    """np.sum over ``dims``; over the leading or trailing dims of a contiguous float array it
    is one matrix-vector product (several times faster than NumPy's reduction there), and
    over every dim but the channels (dim 1: a batch norm's, a convolution bias's) two."""
    nd = x.ndim
    dims = tuple(sorted(d % nd for d in dims)) if nd else ()
    k = len(dims)
    if 0 < k < nd and x.size and x.dtype.kind == "f" and x.itemsize >= 4 and (
        x.flags.c_contiguous
    ):
        shape = x.shape
        if dims == tuple(range(nd - k, nd)):
            rows = x.reshape(-1, math.prod(shape[nd - k:]))
            out = rows @ ones_vector(rows.shape[1], x.dtype)
            return out.reshape(shape[:nd - k] + ((1,) * k if keepdim else ()))
        if dims == tuple(range(k)):
            rows = x.reshape(math.prod(shape[:k]), -1)
            out = ones_vector(rows.shape[0], x.dtype) @ rows
            return out.reshape(((1,) * k if keepdim else ()) + shape[k:])
        if nd > 2 and dims == (0,) + tuple(range(2, nd)):  # per channel: (N, C, *S) -> (C,)
            rows = x.reshape(shape[0] * shape[1], -1)
            per_image = (rows @ ones_vector(rows.shape[1], x.dtype)).reshape(shape[:2])
            out = ones_vector(shape[0], x.dtype) @ per_image
            return out.reshape(((1, -1) + (1,) * (nd - 2)) if keepdim else (-1,))
    return np.add.reduce(x, axis=dims, keepdims=keepdim)  # type: ignore[call-overload]


# torch's float32 total of a short contiguous run (its CPU kernel with 8-lane AVX2 vectors):
#   n < 8:  four running sums s_k = x_k + x_{k+4} + ..., the tail into s_0, then s_0+s_1+s_2+s_3
#   n >= 8: the same four sums over 8-lane vectors (the tail vectors into the first), the four
#           added; then the elements past the last whole vector, in order, then the 8 lanes
# Below 512 elements no further levels of partial sums come in. NumPy's pairwise sum adds in
# another order from 5 elements on (a 9-element total already differs in the last bit).
TORCH_ORDER_SUM_MAX = 512
_ZERO32 = np.zeros(1, np.float32)


def torch_order_sum_f32(flat: np.ndarray) -> np.ndarray:
    """The 0-d float32 total of a 1-D float32 array of fewer than 512 elements, added in
    torch's order."""
    n = flat.size
    if n < 8:
        q = n // 4  # (0 or 1) rows of four
        order = np.concatenate((flat[:1], flat[4 * q:], flat[1:4 * q])) if q else flat
        return np.cumsum(np.concatenate((_ZERO32, order)), dtype=np.float32)[-1:].reshape(())
    nv = n // 8
    q = nv // 4
    vecs = flat[:8 * nv].reshape(nv, 8)
    acc = np.cumsum(vecs[:4 * q].reshape(q, 32), axis=0, dtype=np.float32)[-1].reshape(4, 8) \
        if q else np.zeros((4, 8), np.float32)
    for i in range(4 * q, nv):  # the vectors past the last row of four
        acc[0] += vecs[i]
    lanes = ((acc[0] + acc[1]) + acc[2]) + acc[3]
    return np.cumsum(np.concatenate((_ZERO32, flat[8 * nv:], lanes)),
                     dtype=np.float32)[-1:].reshape(())


def broadcast_axes(gshape: tuple, shape: tuple) -> tuple:
    """The dims of a gradient of shape ``gshape`` that broadcasting to it from ``shape`` added
    or stretched."""
    lead = len(gshape) - len(shape)
    return () if lead < 0 else tuple(range(lead)) + tuple(
        i + lead for i, s in enumerate(shape) if s == 1 and gshape[i + lead] != 1
    )


def sum_to_array(a: np.ndarray, shape: tuple) -> np.ndarray:
    """The first-order path of the engine's ``sum_to``, on a float array of at least 32 bits:
    the reduction straight on the array (a compiled program calls this too, so both round
    alike)."""
    if not shape and a.dtype == np.float32 and 4 < a.size < TORCH_ORDER_SUM_MAX and (
        a.flags.c_contiguous
    ):  # a 0-d operand's short float32 gradient: torch's order, torch's last bit
        return np.asarray(torch_order_sum_f32(a.reshape(-1)))  # (a 0-d array, not a scalar)
    axes = broadcast_axes(a.shape, shape)
    return (fast_sum(a, axes, True) if axes else a).reshape(shape)
