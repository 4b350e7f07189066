"""Normalization layers: ``layer_norm``, ``batch_norm`` and ``group_norm`` as torch's native
entries (``NativeLayerNormBackward0``, ``NativeBatchNormBackward0``,
``NativeGroupNormBackward0``): moments, the normalised input, and the normalised input's rule
shared by all three (their first-order paths on the arrays are in ops/fast_paths.py).
"""


from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import _numpy_warnings as _nw
from .._tensor import Tensor
from . import elementwise as ew
from . import reduction as rd
from . import shape as sh
from ._registry import defop
from .nn_common import _Arrays, _linked

# ---------------------------------------------------------------------------------------------
# Normalization
# ---------------------------------------------------------------------------------------------

def moments_array(x: np.ndarray, dims: tuple, eps: float) -> tuple:
    """(x - mean) * rstd and rstd over ``dims`` (biased variance), on the array in place (the
    forwards, and their rules' fast paths when the forward's were not kept)."""
    xc = x - _Arrays.mean(x, dims)
    sq = xc * xc
    var = _Arrays.mean(sq, dims)
    var += eps
    rstd = np.sqrt(var, out=var)
    np.reciprocal(rstd, out=rstd)
    xc *= rstd
    return xc, rstd


def batch_stats_array(x: np.ndarray, dims: tuple, eps: float) -> tuple:
    """mean, x - mean, the biased variance and rstd over ``dims`` (kept dims): a training
    batch norm's statistics (NaN for an empty batch, silently)."""
    if x.size:
        mean = _Arrays.mean(x, dims)
        xc = x - mean
        var = _Arrays.mean(xc * xc, dims)
    else:
        mean = _nw.mean(x, axis=dims, keepdims=True)
        xc = x - mean
        var = _nw.mean(xc * xc, axis=dims, keepdims=True)
    return mean, xc, var, 1.0 / np.sqrt(var + eps)


def _moments(x: Tensor, dims: tuple, eps: float) -> tuple:
    """``moments_array`` in Tensor ops (the rules differentiate through them)."""
    xc = x - rd.mean(x, dims, True)
    var = rd.mean(xc * xc, dims, True)
    rstd = 1.0 / ew.sqrt(var + eps)
    return xc * rstd, rstd


def _normalized_grad(dxhat: Tensor, xhat: Tensor, rstd: Tensor, dims: tuple) -> Tensor:
    # d/dx of xhat = (x - mean) rstd, applied to dxhat:
    #   rstd (dxhat - mean(dxhat) - xhat mean(dxhat xhat))
    return (dxhat - rd.mean(dxhat, dims, True) - xhat * rd.mean(dxhat * xhat, dims, True)) * rstd


def _check_params(x: np.ndarray, *params: Any) -> None:
    """torch's CPU check of a normalization's weight and bias dtypes: the input's, or float32
    for a float16/bfloat16 input (which ops/low_precision.py widens before this runs)."""
    for p in params:
        if isinstance(p, np.ndarray) and p.dtype != x.dtype:
            if p.dtype == np.float32:
                raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
            raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of "
                               "Float")


@defop("layer_norm", node="NativeLayerNormBackward0", save=(0, 1))
def _layer_norm(x: np.ndarray, w: Any, b: Any, *, ndim: int, eps: float,
                _cache: dict) -> np.ndarray:
    _check_params(x, w, b)
    dims = tuple(range(x.ndim - ndim, x.ndim))
    xhat, rstd = moments_array(x, dims, eps)
    _cache["moments"] = (xhat, rstd)
    if w is not None:
        y = xhat * w
        if b is not None:
            y += b
        return y
    return xhat + b if b is not None else xhat.copy()


def _saved_input_and_weight(ctx: Any) -> tuple:
    """The input, its shape and the weight (None without one) that a normalization saved; the
    input is saved even when only the weights want a gradient."""
    saved = ctx.saved
    return saved[0], tuple(saved[0].shape), (saved[1] if len(saved) > 1 else None)


@_layer_norm.backward
def layer_norm_backward(ctx: Any, grad: Tensor) -> tuple:
    # the normalised input's rule, then the affine part
    x, shape, w = _saved_input_and_weight(ctx)
    p = ctx.params
    n = len(shape)
    dims = tuple(range(n - p["ndim"], n))
    batch = tuple(range(n - p["ndim"]))
    xhat, rstd = _moments(x, dims, p["eps"])
    need_x, need_w, need_b = ctx.needs_input_grad
    gx = gw = gb = None
    if need_x:
        gx = _normalized_grad(grad * w if w is not None else grad, xhat, rstd, dims)
    if need_w:  # (no batch dims: nothing to sum; a sum over dims () would sum them all)
        gw = rd.sum(grad * xhat, batch, False) if batch else grad * xhat
    if need_b:
        gb = rd.sum(grad, batch, False) if batch else grad
    return gx, gw, gb


def _channel_shape(x_ndim: int, c: int) -> tuple:
    return (1, c) + (1,) * (x_ndim - 2)


def _times_channel_weight(grad: Tensor, w: Tensor | None, shape: tuple) -> Tensor:
    """``grad * w`` with the per-channel weight w (C,) along dimension 1 of ``shape``."""
    return grad if w is None else grad * sh.reshape(w, _channel_shape(len(shape), shape[1]))


@defop("batch_norm", node="NativeBatchNormBackward0", save=(0, 1))
def _batch_norm(x: np.ndarray, w: Any, b: Any, *, running_mean: Any, running_var: Any,
                training: bool, momentum: float, eps: float, _cache: dict) -> np.ndarray:
    _check_params(x, w, b)
    dims = (0,) + tuple(range(2, x.ndim))
    cshape = _channel_shape(x.ndim, x.shape[1])
    if not training:  # y = (x - running mean) rstd w + b
        mean = running_mean.astype(x.dtype).reshape(cshape)
        rstd = (1.0 / np.sqrt(running_var + eps)).astype(x.dtype).reshape(cshape)
        xhat = (x - mean) * rstd
        _cache.update(xhat=xhat, rstd=rstd, mean=mean)
        y = xhat
        if w is not None:
            y = y * w.reshape(cshape)
        if b is not None:
            y = y + b.reshape(cshape)
        elif w is None and y is xhat:
            y = y.copy()
        return y
    mean, xc, var, rstd = batch_stats_array(x, dims, eps)
    if running_mean is not None:
        n = x.size // x.shape[1]
        running_mean *= 1.0 - momentum
        running_mean += (mean.reshape(-1) * momentum).astype(running_mean.dtype)
        running_var *= 1.0 - momentum
        unbiased = var.reshape(-1) * (momentum * n / max(n - 1, 1))
        running_var += unbiased.astype(running_var.dtype)
    _cache["centered"] = (xc, rstd)  # what the backward reads: x - mean, and rstd
    # y = x alpha + beta per channel, alpha = rstd w, beta = b - mean alpha (torch's form):
    # two passes over x
    alpha = rstd if w is None else rstd * w.reshape(cshape)
    beta = -mean * alpha if b is None else b.reshape(cshape) - mean * alpha
    y = x * alpha
    y += beta
    return y


@_batch_norm.backward
def batch_norm_backward(ctx: Any, grad: Tensor) -> tuple:
    # training: the normalised input's rule per channel
    x, shape, w = _saved_input_and_weight(ctx)
    p = ctx.params
    dims = (0,) + tuple(range(2, len(shape)))
    if p["training"]:
        xhat, rstd = _moments(x, dims, p["eps"])
    else:
        rstd = Tensor._make(p["_cache"]["rstd"])
        xhat = (x - Tensor._make(p["_cache"]["mean"])) * rstd
    need_x, need_w, need_b = ctx.needs_input_grad
    gx = gw = gb = None
    if need_x:
        dxhat = _times_channel_weight(grad, w, shape)
        gx = _normalized_grad(dxhat, xhat, rstd, dims) if p["training"] else dxhat * rstd
    if need_w:
        gw = rd.sum(grad * xhat, dims, False)
    if need_b:
        gb = rd.sum(grad, dims, False)
    return gx, gw, gb


def _grouped(shape: tuple, groups: int) -> tuple:
    """(N, G, C/G * spatial): group_norm's view of an input (explicit, so N = 0 works)."""
    return (shape[0], groups, shape[1] // groups * math.prod(shape[2:]))


@defop("group_norm", node="NativeGroupNormBackward0", save=(0, 1))
def _group_norm(x: np.ndarray, w: Any, b: Any, *, groups: int, eps: float,
                _cache: dict) -> np.ndarray:
    _check_params(x, w, b)
    n, c = x.shape[:2]
    xhat, rstd = moments_array(x.reshape(_grouped(x.shape, groups)), (2,), eps)
    _cache["moments"] = (xhat, rstd)
    y = xhat.reshape(x.shape)
    cshape = _channel_shape(x.ndim, c)
    if w is not None:
        y = y * w.reshape(cshape)
    if b is not None:
        y = y + b.reshape(cshape)
    return y


@_group_norm.backward
def group_norm_backward(ctx: Any, grad: Tensor) -> tuple:
    # the normalised input's rule over each group
    x, shape, w = _saved_input_and_weight(ctx)
    p = ctx.params
    grouped = _grouped(shape, p["groups"])
    xhat, rstd = _moments(sh.reshape(x, grouped), (2,), p["eps"])
    need_x, need_w, need_b = ctx.needs_input_grad
    gx = gw = gb = None
    dims = (0,) + tuple(range(2, len(shape)))
    if need_x:
        dxhat = _times_channel_weight(grad, w, shape)
        gx = sh.reshape(_normalized_grad(sh.reshape(dxhat, grouped), xhat, rstd, (2,)), shape)
    if need_w:
        gw = rd.sum(grad * sh.reshape(xhat, shape), dims, False)
    if need_b:
        gb = rd.sum(grad, dims, False)
    return gx, gw, gb


# Rules whose gradient torch's double-backward node ties to the forward's inputs (see _link)
for _entry in (_batch_norm, _group_norm, _layer_norm):
    _linked(_entry)
