"""Quantiles: ``quantile`` and ``nanquantile``, composed of differentiable ops as torch composes
them: sort along the dim, find each quantile's rank ``q * (n - 1)`` (n counting only non-NaN
values for nanquantile), gather the values just below and above it and interpolate
(linear, lower, higher, midpoint or nearest). The ranks are computed in the input's dtype, as
torch does, so float32 results agree to the last bit. A row with a NaN gives NaN (quantile),
or a row of NaNs only (nanquantile).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._tensor import Tensor, _wrap_dim

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(name: str, input: Tensor, q: Any, dim: Any, keepdim: bool, interpolation: str,
              out: Any) -> Tensor:
    from . import elementwise as ew
    from . import indexing as ix
    from .shape import _squeeze_matmul
    from .sorting import sort

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
    if out is not None:
        from .scatter import write_out

        return write_out(result, out, input)
    return result


def quantile(input: Tensor, q: Any, dim: Any = None, keepdim: bool = False, *,
             interpolation: str = "linear", out: Any = None) -> Tensor:
    """The q-th quantiles along ``dim`` (of all elements when None); q a number or 1-d."""
    return _quantile("quantile", input, q, dim, keepdim, interpolation, out)


def nanquantile(input: Tensor, q: Any, dim: Any = None, keepdim: bool = False, *,
                interpolation: str = "linear", out: Any = None) -> Tensor:
    """quantile ignoring NaN values."""
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, out)


METHODS = {"quantile": quantile, "nanquantile": nanquantile}

__all__ = ["quantile", "nanquantile"]
