"""Quantiles (``quantile``, ``nanquantile``) and covariances (``cov``, ``corrcoef``).

Quantiles: ``quantile`` and ``nanquantile``, composed of differentiable ops as torch composes
them: sort along the dim, find each quantile's rank ``q * (n - 1)`` (n counting only non-NaN
values for nanquantile), gather the values just below and above it and interpolate
(linear, lower, higher, midpoint or nearest). The ranks are computed in the input's dtype, as
torch does, so float32 results agree to the last bit. A row with a NaN gives NaN (quantile),
or a row of NaNs only (nanquantile).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .._tensor import Tensor, _wrap_dim
from . import elementwise as ew
from . import indexing as ix
from ._registry import scalar_type_name
from .complex import complex as complex_
from .linalg import mm
from .shape import _squeeze_matmul
from .sorting import sort

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(name: str, input: Tensor, q: Any, dim: Any, keepdim: bool,
              interpolation: str) -> Tensor:
    x = input._data
    if x.dtype.kind != "f":
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    if isinstance(q, Tensor):
        if q.ndim > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
        if q._data.dtype != x.dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
        qs, scalar_q = q._data.reshape(-1), q.ndim == 0
    else:
        qs, scalar_q = np.asarray([q], dtype=x.dtype), True
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")
    if x.size == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    if qs.size and (qs.min() < 0 or qs.max() > 1):
        bad = qs[(qs < 0) | (qs > 1)][0]
        raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {bad}")
    # the result's shape: q's dim first, then the input's with dim reduced (or kept as 1)
    if dim is None:
        t = input.reshape(-1)
        reduced: tuple = (1,) * input.ndim if keepdim else ()
    else:
        d = _wrap_dim(dim, input.ndim)
        t = input.movedim(d, -1) if input.ndim else input.reshape(1)
        shape = list(x.shape)
        if keepdim and shape:
            shape[d] = 1
        elif shape:
            del shape[d]
        reduced = tuple(shape)
    final = reduced if scalar_q else (len(qs),) + reduced
    srt = sort(t, -1).values  # NaN last
    n = srt.shape[-1]
    dt = x.dtype.type
    sd = srt._data
    if name == "nanquantile":  # ranks among the non-NaN values; rows of NaN only: NaN
        count = (~np.isnan(sd)).sum(-1, keepdims=True)
        bad = count == 0
    else:  # a row with a NaN: its last value (a NaN)
        count = np.full(sd.shape[:-1] + (1,), n)
        bad = np.isnan(sd).any(-1, keepdims=True)
    qb = qs.reshape((-1,) + (1,) * srt.ndim)  # (Q, *batch, 1)
    ranks = (qb * (count - 1).astype(x.dtype)).astype(x.dtype)
    ranks = np.where(bad, dt(n - 1), ranks).astype(x.dtype)
    if interpolation == "lower":
        ranks = np.floor(ranks)
    elif interpolation == "higher":
        ranks = np.ceil(ranks)
    elif interpolation == "nearest":
        ranks = np.round(ranks)
    big = srt.unsqueeze(0).expand(len(qs), *srt.shape)
    below_i = ranks.astype(np.int64)
    below = ix.gather(big, -1, Tensor._make(below_i))
    if interpolation in ("linear", "midpoint"):
        weights = np.full(ranks.shape, 0.5, x.dtype) if interpolation == "midpoint" else (
            ranks - below_i.astype(x.dtype)).astype(x.dtype)
        w = Tensor._make(weights)
        if interpolation == "linear" and isinstance(q, Tensor) and q.requires_grad:
            # torch's weights are q's function: q gets a gradient through them
            c = Tensor._make((count - 1).astype(x.dtype))
            r = (q.reshape(qb.shape) * c).masked_fill(Tensor._make(np.broadcast_to(
                bad, ranks.shape)), float(n - 1))
            w = r - Tensor._make(below_i.astype(x.dtype))
        above = ix.gather(big, -1, Tensor._make(np.ceil(ranks).astype(np.int64)))
        below = ew.lerp(below, above, w)
    result = _squeeze_matmul(below.reshape(final + (1,)), dims=(len(final),))
    return result


def quantile(input: Tensor, q: Any, dim: Any = None, keepdim: bool = False, *,
             interpolation: str = "linear") -> Tensor:
    """The q-th quantiles along ``dim`` (of all elements when None); q a number or 1-d."""
    return _quantile("quantile", input, q, dim, keepdim, interpolation)


def nanquantile(input: Tensor, q: Any, dim: Any = None, keepdim: bool = False, *,
                interpolation: str = "linear") -> Tensor:
    """quantile ignoring NaN values."""
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation)


# ---------------------------------------------------------------------------------------------
# Covariance and correlation: the rows of a 2-d input are variables, its columns observations.
#
#   w = fweights * aweights,  mean_i = sum_j w_j x_ij / sum(w)
#   cov = (x - mean) diag(w) (x - mean)^H / (sum(w) - correction * sum(w * aweights) / sum(w))
#
# composed of differentiable ops as torch composes it (a matmul, then a division and a squeeze).
# ---------------------------------------------------------------------------------------------

def _check_at_most_2d(name: str, input: Tensor) -> None:
    """cov's and corrcoef's check that ``input`` is a matrix, a vector or a number."""
    if input.ndim > 2:
        raise RuntimeError(f"{name}(): expected input to have two or fewer dimensions but got "
                           f"an input with {input.ndim} dimensions")


def _check_weights(kind: str, w: Tensor, n: int) -> None:
    if w.ndim > 1:
        raise RuntimeError(f"cov(): expected {kind} to have one or fewer dimensions but got "
                           f"{kind} with {w.ndim} dimensions")
    if kind == "fweights" and w._data.dtype.kind not in "iu":
        raise RuntimeError("cov(): expected fweights to have integral dtype but got fweights "
                           f"with {scalar_type_name(w.dtype)} dtype")
    if kind == "aweights" and w._data.dtype.kind != "f":
        raise RuntimeError("cov(): expected aweights to have floating point dtype but got "
                           f"aweights with {scalar_type_name(w.dtype)} dtype")
    if w.numel() != n:
        raise RuntimeError(f"cov(): expected {kind} to have the same numel as there are "
                           f"observations in the input but got {w.numel()} != {n}")
    if n and (w._data < 0).any():
        raise RuntimeError(f"cov(): {kind} cannot be negative")


def cov(input: Tensor, *, correction: int = 1, fweights: Tensor | None = None,
        aweights: Tensor | None = None) -> Tensor:
    """The covariance matrix of the variables in ``input``'s rows (observations in columns),
    with frequency weights ``fweights`` and observation weights ``aweights``.

    >>> import tapegrad as torch
    >>> torch.cov(torch.tensor([[0., 1., 2.], [2., 1., 0.]]))
    tensor([[ 1., -1.],
            [-1.,  1.]])
    """
    _check_at_most_2d("cov", input)
    if input._data.dtype == np.bool_:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = input.reshape(1, -1) if input.ndim < 2 else input
    n = x.shape[1]
    w: Tensor | None = None
    if fweights is not None:
        _check_weights("fweights", fweights, n)
        w = fweights
    if aweights is not None:
        _check_weights("aweights", aweights, n)
        w = aweights if w is None else w * aweights
    if w is None:
        w_sum: Any = Tensor._make(np.asarray(n, dtype=np.int64))
    else:
        w_sum = w.sum()
        if not w_sum._data.item() != 0:
            raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    avg = (x if w is None else x * w).sum(1) / w_sum
    if w is not None and aweights is not None and correction != 0:
        norm = w_sum - correction * (w * aweights).sum() / w_sum
    else:
        norm = w_sum - correction
    if norm._data.item() <= 0:
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the number of observations.", UserWarning, stacklevel=2)
        norm = norm * 0
    x = x - avg.unsqueeze(1)
    c = mm(x, (x if w is None else x * w).t().conj())
    return c.true_divide(norm).squeeze()


def corrcoef(input: Tensor) -> Tensor:
    """Pearson's correlation coefficients of the variables in ``input``'s rows: the
    covariance scaled by the standard deviations, clipped to [-1, 1].

    >>> import tapegrad as torch
    >>> torch.corrcoef(torch.tensor([[0., 1., 2.], [2., 1., 0.]]))
    tensor([[ 1., -1.],
            [-1.,  1.]])
    """
    _check_at_most_2d("corrcoef", input)
    c = cov(input)
    if c.ndim == 0:  # one variable: 1, or nan where its variance is nan, inf or 0
        return c / c
    d = c.diagonal()
    std = (d.real if d.is_complex() else d).sqrt()
    c = c / std.view(-1, 1)
    c = c / std.view(1, -1)
    if c.is_complex():
        return complex_(c.real.clip(-1, 1), c.imag.clip(-1, 1))
    return c.clip(-1, 1)


METHODS = {"quantile": quantile, "nanquantile": nanquantile, "cov": cov, "corrcoef": corrcoef}

__all__ = ["quantile", "nanquantile", "cov", "corrcoef"]
