"""Pairwise distances: ``torch.cdist`` (every row of x1 against every row of x2, batched) and
``torch.pdist`` (the rows of one matrix against each other, upper triangle).

    cdist(x1 (*B, R1, M), x2 (*B, R2, M), p) -> (*B, R1, R2)    ||x1_i - x2_j||_p
    pdist(x (N, M), p) -> (N (N - 1) / 2,)                      ||x_i - x_j||_p, i < j

Three entries, as torch records them:

* ``cdist`` (CdistBackward0): the direct form, d = x1_i - x2_j reduced over M.
* ``euclidean_dist`` (EuclideanDistBackward0): p = 2 through one matrix product (torch's
  ``use_mm_for_euclid_dist``, and the default once R1 or R2 exceeds 25):
  [-2 x1, |x1|^2, 1] @ [x2, 1, |x2|^2]^T = |x1|^2 + |x2|^2 - 2 x1.x2, clamped at 0, sqrt.
* ``pdist`` (PdistBackward0): the direct form on the pairs i < j.

The derivative of ||d||_p with respect to d, for each p (w below; the gradient of x1 is
sum_j g_ij w_ij, of x2 minus the same sum over i)::

    p = 0      0                                   p = 1   sign(d)
    p = 2      d / dist                            p = inf sign(d) [|d| = dist]
    p < 2      sign(d) |d|^(p-1) / dist^(p-1)      else    d |d|^(p-2) / dist^(p-1)

and 0 wherever dist = 0 (and, for p < 1, where d = 0), as torch's kernel has it. The rules are
written with tapegrad ops.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._tensor import Tensor
from . import elementwise as ew
from ._registry import defop, scalar_type_name

__all__ = ["cdist", "pdist"]


def _norms(diff: np.ndarray, p: float) -> np.ndarray:
    """||diff||_p over the last dim (NumPy)."""
    a = np.abs(diff)
    if p == 0:
        return np.sum(diff != 0, axis=-1).astype(diff.dtype)
    if p == 1:
        return np.sum(a, axis=-1)
    if p == 2:
        return np.sqrt(np.sum(diff * diff, axis=-1))
    if p == math.inf:
        if diff.shape[-1] == 0:
            return np.zeros(diff.shape[:-1], dtype=diff.dtype)
        return np.max(a, axis=-1)
    return np.sum(a ** p, axis=-1) ** (1.0 / p)


def _weights(diff: Tensor, dist: Tensor, p: float) -> Tensor:
    """d ||d||_p / d d (see the module docstring), with dist broadcast over the last dim."""
    dist = dist.unsqueeze(-1)
    zero = dist == 0
    if p == 0:
        return diff * 0
    if p == 1:
        return ew.sign(diff)
    if p == 2:
        return ew.where(zero, 0.0, diff / dist)
    if p == math.inf:
        return ew.sign(diff) * (diff.abs() == dist)
    if p < 2:
        w = ew.sign(diff) * diff.abs() ** (p - 1) / dist ** (p - 1)
        if p < 1:
            zero = zero | (diff == 0)
        return ew.where(zero, 0.0, w)
    return ew.where(zero, 0.0, diff * diff.abs() ** (p - 2) / dist ** (p - 1))


@defop("cdist", node="CdistBackward0", save=(0, 1), save_output=True)
def _cdist(x1: np.ndarray, x2: np.ndarray, *, p: float) -> np.ndarray:
    with np.errstate(all="ignore"):
        return _norms(x1[..., :, None, :] - x2[..., None, :, :], p)


@_cdist.backward
def cdist_backward(ctx: Any, grad: Tensor) -> tuple:
    # sum_j g_ij w(x1_i - x2_j), and minus over i for x2
    x1, x2, out = ctx.saved
    c = grad.unsqueeze(-1) * _weights(x1.unsqueeze(-2) - x2.unsqueeze(-3), out, ctx.params["p"])
    need1, need2 = ctx.needs_input_grad
    return (c.sum(-2) if need1 else None), (-c.sum(-3) if need2 else None)


@defop("euclidean_dist", node="EuclideanDistBackward0", save=(0, 1), save_output=True)
def _euclidean_dist(x1: np.ndarray, x2: np.ndarray) -> np.ndarray:
    n1 = np.sum(x1 * x1, axis=-1, keepdims=True)
    n2 = np.sum(x2 * x2, axis=-1, keepdims=True)
    a = np.concatenate([x1 * -2, n1, np.ones_like(n1)], axis=-1)
    b = np.concatenate([x2, np.ones_like(n2), n2], axis=-1)
    return np.sqrt(np.maximum(a @ np.swapaxes(b, -1, -2), 0))


@_euclidean_dist.backward
def euclidean_dist_backward(ctx: Any, grad: Tensor) -> tuple:
    # r = g / dist (0 where dist = 0): x1 sum_j r - r x2
    x1, x2, out = ctx.saved
    ratio = ew.where(out == 0, 0.0, grad / out)
    need1, need2 = ctx.needs_input_grad
    g1 = x1 * ratio.sum(-1, keepdim=True) - ratio.matmul(x2) if need1 else None
    g2 = (x2 * ratio.sum(-2).unsqueeze(-1) - ratio.transpose(-1, -2).matmul(x1)
          if need2 else None)
    return g1, g2


@defop("pdist", node="PdistBackward0", save=(0,), save_output=True)
def _pdist(x: np.ndarray, *, p: float, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return _norms(x[rows] - x[cols], p)


@_pdist.backward
def pdist_backward(ctx: Any, grad: Tensor) -> tuple:  # each pair's w to row i, minus it to row j
    (x, out) = ctx.saved
    prm = ctx.params
    rows, cols = Tensor._make(prm["rows"]), Tensor._make(prm["cols"])
    c = grad.unsqueeze(-1) * _weights(x[rows] - x[cols], out, prm["p"])
    zeros = Tensor._make(np.zeros(x.shape, dtype=x._data.dtype))
    return (zeros.index_put((rows,), c, accumulate=True).index_put((cols,), -c,
                                                                    accumulate=True),)


_MODES = (None, "use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
          "donot_use_mm_for_euclid_dist")


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0,
          compute_mode: str | None = "use_mm_for_euclid_dist_if_necessary") -> Tensor:
    """The p-norm distance between each pair of rows of ``x1`` and ``x2`` (batched)."""
    if compute_mode not in _MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    if x1.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.ndim}D")
    if x2.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X2 got: {x2.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError("X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    if x1.dtype != x2.dtype:
        raise RuntimeError(f"expected scalar type {_name(x1)} but found {_name(x2)}")
    if not x1.is_floating_point():
        raise RuntimeError(f"cdist only supports floating-point dtypes, X1 got: {_name(x1)}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    r1, r2, m = x1.shape[-2], x2.shape[-2], x1.shape[-1]
    batch = tuple(np.broadcast_shapes(tuple(x1.shape[:-2]), tuple(x2.shape[:-2])))
    mm = p == 2 and (compute_mode == "use_mm_for_euclid_dist" or (
        compute_mode in (None, "use_mm_for_euclid_dist_if_necessary") and (r1 > 25 or r2 > 25)))
    if not mm or r1 == 0 or r2 == 0 or 0 in batch:
        return _cdist(x1, x2, p=float(p))
    n = math.prod(batch)
    a = x1 if x1.ndim == 2 and not batch else x1.expand(batch + (r1, m)).reshape(n, r1, m)
    b = x2 if x2.ndim == 2 and not batch else x2.expand(batch + (r2, m)).reshape(n, r2, m)
    return _euclidean_dist(a, b).view(batch + (r1, r2))


def pdist(input: Tensor, p: float = 2) -> Tensor:
    """The p-norm distance between every pair of rows i < j of a 2-D input, in row order."""
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if not input.is_floating_point():
        raise RuntimeError(f"pdist only supports floating-point dtypes, got: {_name(input)}")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    rows, cols = np.triu_indices(input.shape[0], 1)
    return _pdist(input, p=float(p), rows=rows.astype(np.int64), cols=cols.astype(np.int64))


def _name(t: Tensor) -> str:
    return scalar_type_name(t.dtype)


# the registry entries of this module
NAMES = ("cdist", "euclidean_dist", "pdist")
