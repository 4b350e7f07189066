"""Normalization layers: ``layer_norm``, ``batch_norm`` and ``group_norm`` as torch's native
entries (``NativeLayerNormBackward0``, ``NativeBatchNormBackward0``,
``NativeGroupNormBackward0``): moments, the normalised input, and the normalised input's rule
shared by all three.
"""


from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import _numpy_warnings as _nw
from .._tensor import Tensor
from ..kernels.sums import ones_vector as _ones
from ._registry import defop
from .nn_common import _Arrays, _linked, _rule_body, _take, _unpack

# ---------------------------------------------------------------------------------------------
# Normalization
# ---------------------------------------------------------------------------------------------

def _moments(B: Any, x: Any, dims: tuple, eps: float) -> tuple:
    """(x - mean) * rstd and rstd over ``dims`` (biased variance), in the backend."""
    xc = x - B.mean(x, dims)
    if not B.tensors:  # the same lines, in place
        sq = xc * xc
        var = B.mean(sq, dims)
        var += eps
        rstd = np.sqrt(var, out=var)
        np.reciprocal(rstd, out=rstd)
        xc *= rstd
        return xc, rstd
    var = B.mean(xc * xc, dims)
    rstd = 1.0 / B.sqrt(var + eps)
    return xc * rstd, rstd


def _normalized_grad(B: Any, dxhat: Any, xhat: Any, rstd: Any, dims: tuple) -> Any:
    # d/dx of xhat = (x - mean) rstd, applied to dxhat:
    #   rstd (dxhat - mean(dxhat) - xhat mean(dxhat xhat))
    if not B.tensors:  # the same formula, in place
        t = dxhat * xhat
        m = B.mean(t, dims)
        np.multiply(xhat, m, out=t)
        out = dxhat - B.mean(dxhat, dims)
        out -= t
        out *= rstd
        return out
    return (dxhat - B.mean(dxhat, dims) - xhat * B.mean(dxhat * xhat, dims)) * rstd


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
    xhat, rstd = _moments(_Arrays, x, dims, eps)
    _cache["moments"] = (xhat, rstd)
    if w is not None:
        y = xhat * w
        if b is not None:
            y += b
        return y
    return xhat + b if b is not None else xhat.copy()


@_rule_body(_layer_norm)
def layer_norm_backward(B: Any, ctx: Any, saved: Any, g: Any) -> tuple:
    """The rule in backend ``B`` (see ops/nn_common.py): the normalised input's rule, then
    the affine part."""
    x, w = saved[0], (saved[1] if len(saved) > 1 else None)
    p = ctx.params
    n = len(x.shape)  # x is saved even when only the weights want a gradient
    dims = tuple(range(n - p["ndim"], n))
    batch = tuple(range(n - p["ndim"]))
    if B.tensors:
        xhat, rstd = _moments(B, x, dims, p["eps"])
    else:
        xhat, rstd = _take(p["_cache"], "moments",
                           lambda: _moments(B, x, dims, p["eps"]))
        if (g.dtype == xhat.dtype and g.dtype.kind == "f" and g.dtype.itemsize >= 4
                and xhat.size):
            return _layer_norm_grads(B, g, xhat, rstd, w, p["ndim"], ctx.needs_input_grad, x)
    need_x, need_w, need_b = ctx.needs_input_grad
    gx = gw = gb = None
    if need_x:
        gx = B.out(_normalized_grad(B, g * w if w is not None else g, xhat, rstd, dims))
    if need_w:  # (no batch dims: nothing to sum; a sum over dims () would sum them all)
        gw = B.out(B.sum(g * xhat, batch, False) if batch else g * xhat)
    if need_b:
        gb = B.out(B.sum(g, batch, False) if batch else g)
    return gx, gw, gb



def _layer_norm_grads(B: Any, g: np.ndarray, xhat: np.ndarray, rstd: np.ndarray, w: Any,
                      ndim: int, needs: tuple, x: np.ndarray) -> tuple:
    """The rule above on the arrays, as rows of the normalised size d (one per position):
    the row means of g w and of g w xhat are matrix-vector products with w itself
    ((g @ w) / d and ((g xhat) @ w) / d), so g w xhat is never formed, and g xhat serves the
    weight's gradient too: six passes and four products where the formula takes seven and
    four, and fewer calls (the GPT benchmark's 16 x 32 x 64 LayerNorm, forward and backward:
    0.20 -> 0.17 ms)."""
    need_x, need_w, need_b = needs
    shape = xhat.shape[xhat.ndim - ndim:]  # the normalised shape
    d = math.prod(shape)
    rows = np.ascontiguousarray(g).reshape(-1, d)
    xh = xhat.reshape(-1, d)
    gxh = rows * xh if (need_w or need_x) else None
    gw = gb = gx = None
    if need_w and gxh is not None:
        if d == 1 and g.dtype == np.float32:
            # one element per row: x - mean is 0, but torch's kernel forms the weight's gradient
            # as g (a x + b), a = rstd, b = -a mean, with a fused multiply-add, which leaves the
            # rounding error of a x (exact in float64: a float32 product has 48 bits)
            ax = x.astype(np.float64) * rstd.astype(np.float64)
            ax -= (x * rstd).astype(np.float64)
            gw_rows = rows * ax.astype(np.float32).reshape(-1, 1)
        else:
            gw_rows = gxh
        gw = B.out((_ones(rows.shape[0], g.dtype) @ gw_rows).reshape(shape))
    if need_b:
        gb = B.out((_ones(rows.shape[0], g.dtype) @ rows).reshape(shape))
    if need_x and gxh is not None:
        wv = _ones(d, g.dtype) if w is None else w.reshape(d)
        mean_dxhat = rows @ wv  # sum over the row of g w
        mean_dxhat *= 1.0 / d
        mean_dxhat_xhat = gxh @ wv  # sum over the row of g w xhat
        mean_dxhat_xhat *= 1.0 / d
        out = rows * wv if w is not None else rows.copy()
        out -= mean_dxhat[:, None]
        np.multiply(xh, mean_dxhat_xhat[:, None], out=gxh)
        out -= gxh
        out *= rstd.reshape(-1, 1)
        gx = B.out(out.reshape(xhat.shape))
    return gx, gw, gb


def _channel_shape(x_ndim: int, c: int) -> tuple:
    return (1, c) + (1,) * (x_ndim - 2)


@defop("batch_norm", node="NativeBatchNormBackward0", save=(0, 1))
def _batch_norm(x: np.ndarray, w: Any, b: Any, *, running_mean: Any, running_var: Any,
                training: bool, momentum: float, eps: float, _cache: dict) -> np.ndarray:
    _check_params(x, w, b)
    dims = (0,) + tuple(range(2, x.ndim))
    cshape = _channel_shape(x.ndim, x.shape[1])
    if training:
        mean = _nw.mean(x, axis=dims, keepdims=True)  # (NaN for an empty batch, silently)
        xc = x - mean
        var = _nw.mean(xc * xc, axis=dims, keepdims=True)
        rstd = 1.0 / np.sqrt(var + eps)
        xhat = xc * rstd
        if running_mean is not None:
            n = x.size // x.shape[1]
            running_mean *= 1.0 - momentum
            running_mean += (mean.reshape(-1) * momentum).astype(running_mean.dtype)
            running_var *= 1.0 - momentum
            unbiased = var.reshape(-1) * (momentum * n / max(n - 1, 1))
            running_var += unbiased.astype(running_var.dtype)
    else:
        mean = running_mean.astype(x.dtype).reshape(cshape)
        rstd = (1.0 / np.sqrt(running_var + eps)).astype(x.dtype).reshape(cshape)
        xhat = (x - mean) * rstd
        _cache["mean"] = mean
    if training:
        _cache["moments"] = (xhat, rstd)
    else:
        _cache.update(xhat=xhat, rstd=rstd)
    y = xhat
    if w is not None:
        y = y * w.reshape(cshape)
    if b is not None:
        y = y + b.reshape(cshape)
    elif w is None and y is xhat:
        y = y.copy()
    return y


@_batch_norm.backward
def batch_norm_backward(ctx: Any, grad: Tensor) -> tuple:
    # training: the normalised input's rule per channel
    B, saved, g = _unpack(ctx, grad)
    x, w = saved[0], (saved[1] if len(saved) > 1 else None)
    p = ctx.params
    shape = tuple(x.shape)  # x is saved even when only the weights want a gradient
    dims = (0,) + tuple(range(2, len(shape)))
    cshape = _channel_shape(len(shape), shape[1])
    if B.tensors and p["training"]:
        xhat, rstd = _moments(B, x, dims, p["eps"])
    elif B.tensors:
        rstd = B.const(p["_cache"]["rstd"])
        xhat = (x - B.const(p["_cache"]["mean"])) * rstd
    elif p["training"]:
        xhat, rstd = _take(p["_cache"], "moments", lambda: _moments(B, x, dims, p["eps"]))
    else:
        rstd = p["_cache"]["rstd"]
        xhat = _take(p["_cache"], "xhat", lambda: (x - p["_cache"]["mean"]) * rstd)
    need_x, need_w, need_b = ctx.needs_input_grad
    gx = gw = gb = None
    if need_x:
        dxhat = g * B.reshape(w, cshape) if w is not None else g
        if p["training"]:
            gx = B.out(_normalized_grad(B, dxhat, xhat, rstd, dims))
        else:
            gx = B.out(dxhat * rstd)
    if need_w:
        gw = B.out(B.sum(g * xhat, dims, False))
    if need_b:
        gb = B.out(B.sum(g, dims, False))
    return gx, gw, gb


def _grouped(shape: tuple, groups: int) -> tuple:
    """(N, G, C/G * spatial): group_norm's view of an input (explicit, so N = 0 works)."""
    return (shape[0], groups, shape[1] // groups * math.prod(shape[2:]))


@defop("group_norm", node="NativeGroupNormBackward0", save=(0, 1))
def _group_norm(x: np.ndarray, w: Any, b: Any, *, groups: int, eps: float,
                _cache: dict) -> np.ndarray:
    _check_params(x, w, b)
    n, c = x.shape[:2]
    xhat, rstd = _moments(_Arrays, x.reshape(_grouped(x.shape, groups)), (2,), eps)
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
    B, saved, g = _unpack(ctx, grad)
    x, w = saved[0], (saved[1] if len(saved) > 1 else None)
    p = ctx.params
    shape = tuple(x.shape)  # x is saved even when only the weights want a gradient
    n, c = shape[:2]
    grouped = _grouped(shape, p["groups"])
    cshape = _channel_shape(len(shape), c)
    if B.tensors:
        xhat, rstd = _moments(B, B.reshape(x, grouped), (2,), p["eps"])
    else:
        xhat, rstd = _take(p["_cache"], "moments",
                           lambda: _moments(B, B.reshape(x, grouped), (2,), p["eps"]))
    need_x, need_w, need_b = ctx.needs_input_grad
    gx = gw = gb = None
    dims = (0,) + tuple(range(2, len(shape)))
    if need_x:
        dxhat = g * B.reshape(w, cshape) if w is not None else g
        gx = _normalized_grad(B, B.reshape(dxhat, grouped), xhat, rstd, (2,))
        gx = B.out(B.reshape(gx, shape))
    if need_w:
        gw = B.out(B.sum(g * B.reshape(xhat, shape), dims, False))
    if need_b:
        gb = B.out(B.sum(g, dims, False))
    return gx, gw, gb


# Rules whose gradient torch's double-backward node ties to the forward's inputs (see _link)
for _entry in (_batch_norm, _group_norm, _layer_norm):
    _linked(_entry)
