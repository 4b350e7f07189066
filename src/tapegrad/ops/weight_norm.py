"""Weight normalization: ``norm_except_dim`` and ``_weight_norm`` (w = g v / ||v||).

``_weight_norm(v, g, dim)`` is what ``nn.utils.weight_norm`` computes on every forward. For
``dim`` 0 or the last dimension torch runs it as one fused op (node
``WeightNormInterfaceBackward0``), otherwise as ``v * (g / norm_except_dim(v, 2, dim))``
(node ``MulBackward0``); the same split is kept here. ``dim=-1`` means "no dim": the norm of
the whole tensor.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._tensor import Tensor
from ._registry import defop


def _other_axes(ndim: int, dim: int) -> tuple[int, ...]:
    return tuple(i for i in range(ndim) if i != dim)


def norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:
    """The ``pow``-norm of ``v`` over every dimension but ``dim``, kept as size-1 dimensions
    (the whole tensor's norm, 0-d, for ``dim=-1``)."""
    if dim == -1:
        return v.norm(pow)
    n = v.ndim
    if dim == 0:  # torch's steps, so the result has its grad_fn (ViewBackward0)
        out_shape = (v.shape[0],) + (1,) * (n - 1)
        return v.contiguous().view(v.shape[0], -1).norm(pow, 1).view(out_shape)
    if dim == n - 1:
        out_shape = (1,) * (n - 1) + (v.shape[-1],)
        return v.contiguous().view(-1, v.shape[-1]).norm(pow, 0).view(out_shape)
    return norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)


@defop("_weight_norm_interface", node="WeightNormInterfaceBackward0", save=(0, 1))
def _weight_norm_fused(v: np.ndarray, g: np.ndarray, *, dim: int) -> np.ndarray:
    axes = _other_axes(v.ndim, dim)
    norm = np.sqrt(np.sum(v * v, axis=axes, keepdims=True))
    return np.asarray(v * (g / norm), dtype=v.dtype)


@_weight_norm_fused.backward
def weight_norm_fused_backward(ctx: Any, grad: Tensor) -> tuple:
    # w = g v/n: dg = <G,v>/n, dv = g/n (G - v <G,v>/n^2)
    v, g = ctx.saved
    axes = list(_other_axes(v.ndim, ctx.params["dim"]))
    # torch saves the norms as a constant: a double backward does not differentiate them
    n = Tensor._make(np.sqrt(np.sum(v._data * v._data, axis=tuple(axes), keepdims=True)))
    gv = (grad * v).sum(dim=axes, keepdim=True)
    grad_g = gv / n
    grad_v = (g / n) * (grad - v * (gv / (n * n)))
    if grad_g.shape != g.shape:  # g given without the size-1 dimensions
        grad_g = grad_g.reshape(g.shape)
    return (grad_v, grad_g)


def _weight_norm(v: Tensor, g: Tensor, dim: int = 0) -> Tensor:
    """``torch._weight_norm``: ``v * (g / norm_except_dim(v, 2, dim))``."""
    if dim == 0 or dim == v.ndim - 1:
        return _weight_norm_fused(v, g, dim=dim)
    return v * (g / norm_except_dim(v, 2, dim))
