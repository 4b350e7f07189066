"""Fast first-order backward paths: the few rules of a training step worth running on the
arrays themselves, kept apart from the rules they speed up.

Every op's derivative is written once, as its ``backward`` rule in Tensor terms, next to its
forward (ops/_registry.py). With grad mode off (``backward()`` without ``create_graph``) a
rule's ops record nothing, and all they still cost is the trip through ``apply`` for each one:
a Tensor made around each intermediate, an op's checks. For the commonest rules that trip is
most of their time, so each has here a path that computes the rule's values straight on the
arrays, registered by op name::

    @fast_backward("mul")
    def mul_fast_backward(ctx, saved, g):   # saved values and gradient as arrays
        a, b = saved
        ...
        return ga, gb                        # one array (or None) per input

``OpNode.apply`` runs it in place of the rule when grad mode is off, and a compiled program
(tapegrad/compiler) calls it on its arrays with no Tensor made at all. The rule stays the one
definition of the derivative: it runs whenever the backward itself is differentiated
(``create_graph=True``), and tests/ops/test_fast_paths.py checks, on the op's samples, that each
path gives the rule's values: bit for bit, but for the few it lists (a sum in another order, a
+0.0 where the rule's product gives -0.0), whose paths keep the first-order values these ops
have always had. What each path buys is said beside it.

The fused entries written once against a backend (``nn_common._rule_body``: gelu, layer_norm,
sdpa) register their array form from there, through the same ``fast_backward``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..kernels.sums import fast_sum as _fast_sum
from ._registry import fast_backward
from .conv import _col2im_op, _conv_backward_arrays, _im2col
from .elementwise import (
    _BITS_MIN,
    _COMPARE,
    _SAME_SIZE_INT,
    _binary,
    _tanh_backward,
    _threshold_backward,
    _where,
    _zero_where,
)
from .embedding import _embedding_rows, _row_sums
from .linalg import _broadcast, _product
from .losses import _place
from .nn_common import _Arrays, _take
from .padding import _GATHER_PADS, _constant_pad, scatter_back, unpad
from .pooling import _avg_pool_grad, _scatter_planes, adaptive_grad_check, argmax_planes
from .resampling import GATHERS, SEPARABLE, _pixel_shuffle, _pixel_unshuffle, transposed_maps

# ---------------------------------------------------------------------------------------------
# Views: reshape, permute, transpose, t
# ---------------------------------------------------------------------------------------------


@fast_backward("view", "unsafe_view", "reshape_alias")
def view_fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    # the array reshaped directly (a view when the layout allows, else a copy, as reshape
    # does), without a trip through reshape's checks and an op (one per linear layer on a
    # batch of sequences; ~10 -> ~4 us)
    return (np.reshape(g, ctx.input_shapes[0]),)


@fast_backward("permute")
def permute_fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    # the inverse permutation, as the op's kernel applies it (no view bookkeeping)
    return (np.transpose(g, np.argsort(ctx.params["dims"])),)


@fast_backward("transpose")
def transpose_fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    # (as view's: the swap on the array, no op; a 0-d gradient as it is)
    p = ctx.params
    return (np.swapaxes(g, p["dim0"], p["dim1"]) if g.ndim else g,)


@fast_backward("t")
def t_fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:  # (as view's)
    return (g.T,)


# ---------------------------------------------------------------------------------------------
# Elementwise: mul, tanh, relu
# ---------------------------------------------------------------------------------------------


@fast_backward("mul")
def mul_fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    # the commonest rule of all: its two products without two trips through ``apply``
    a, b = saved  # (arrays, or Python numbers)
    need_a, need_b = ctx.needs_input_grad
    return (_binary(np.multiply, g, b) if need_a else None,
            _binary(np.multiply, g, a) if need_b else None)


@fast_backward("tanh")
def tanh_fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    # the rule's one op, its kernel called directly
    return (_tanh_backward.forward(g, saved[0]),)


@fast_backward("relu")
def relu_fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    """``y`` is relu's output: >= 0, -0.0 or NaN, so the rule's ``y <= 0`` is ``y == 0`` and the
    kept entries are ``y != 0``; their integer product with g's bits (1 keeps them, 0 gives
    +0.0) is two passes against the generic mask's three (0.20 against 0.24 ms on 346,112
    float32). Other arrays take the rule's kernel directly."""
    (y,) = saved
    ints = _SAME_SIZE_INT.get(g.dtype.itemsize)
    if (ints is None or g.dtype.kind != "f" or g.size < _BITS_MIN or g.shape != y.shape
            or not g.flags.c_contiguous):
        return (_threshold_backward.forward(g, y),)
    keep = np.not_equal(y, 0)
    return (np.multiply(g.view(ints), keep, dtype=ints).view(g.dtype),)


# ---------------------------------------------------------------------------------------------
# Products: mm, addmm (twice per linear layer on every step)
# ---------------------------------------------------------------------------------------------


def _mm_grads(g: np.ndarray, a: Any, b: Any, layout: tuple, need_a: bool,
              need_b: bool) -> tuple:
    """G B^T and A^T G on the arrays, each in its input's layout (as the rule's
    ``_grad_like`` does with ops)."""
    if _broadcast(g):
        g = np.ascontiguousarray(g)
    ta, tb = layout
    ga = gb = None
    if need_a:
        ga = _product(b, g.T).T if ta else _product(g, b.T)
    if need_b:
        gb = _product(g.T, a).T if tb else _product(a.T, g)
    return ga, gb


@fast_backward("mm")
def mm_fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    # no Tensor made around the transposes and the products
    a, b = saved
    need_a, need_b = ctx.needs_input_grad
    return _mm_grads(g, a, b, ctx.params.get("layout", (False, False)), need_a, need_b)


@fast_backward("addmm")
def addmm_fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    # mm's, and a linear layer's bias gradient summed over the batch here, as the engine's
    # broadcast reduction would, without the trip through it (~5 us a layer)
    a, b = saved
    need_c, need_a, need_b = ctx.needs_input_grad
    beta, alpha = ctx.params.get("beta", 1), ctx.params.get("alpha", 1)
    gc = None
    if need_c:
        if beta != 1:
            gc = _binary(np.multiply, g, beta)
        elif g.ndim == 2 and ctx.input_shapes[0] == g.shape[1:] and (
                g.dtype.kind == "f" and g.itemsize >= 4):
            gc = _fast_sum(g, (0,), False)
        else:
            gc = g
    ga, gb = _mm_grads(g, a, b, ctx.params.get("layout", (False, False)), need_a, need_b)
    if alpha != 1:
        ga = None if ga is None else _binary(np.multiply, ga, alpha)
        gb = None if gb is None else _binary(np.multiply, gb, alpha)
    return gc, ga, gb


# ---------------------------------------------------------------------------------------------
# Embedding, and F.cross_entropy's common case (ops/losses.py)
# ---------------------------------------------------------------------------------------------


@fast_backward("embedding")
def embedding_fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    # the rows summed into the table with one reduction, not a zero table and an index_put
    rows, idx = _embedding_rows(ctx, g)
    return (_row_sums(ctx.input_shapes[0][0], idx, rows),)


@fast_backward("ce_log_softmax")
def ce_log_softmax_fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    # g - softmax * sum(g) with the softmax the forward kept (no exp), in its own memory
    (y,) = saved
    p = _take(ctx.params["_cache"], "softmax", lambda: np.exp(y))
    p *= np.add.reduce(g, axis=1, keepdims=True)
    return (np.subtract(g, p, out=p),)


@fast_backward("ce_nll")
def ce_nll_fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    # -g/N written at the target classes, no product with a one-hot matrix
    n, c = ctx.input_shapes[0]
    out = np.zeros((n, c), dtype=g.dtype)
    out[np.arange(n), ctx.params["target"]] = -g[()] / n
    return (out,)


# ---------------------------------------------------------------------------------------------
# Convolution and pooling (a CNN's step), nll_loss
# ---------------------------------------------------------------------------------------------


@fast_backward("convolution")
def convolution_fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    # im2col products on the arrays (the forward's columns reused, scratch buffers, the
    # weight gradient's product in the faster order) where the rule goes through im2col and
    # col2im entries
    x, w = saved
    return _conv_backward_arrays(ctx, g, x, w)


@fast_backward("max_pool2d", "max_pool3d")
def max_pool_fast_backward(ctx: Any, saved: tuple, g: list) -> tuple:
    # the gradients written (or, where windows overlap, added) at the argmax positions, no
    # zero tensor and scatter_add entry
    g0 = g[0]
    if g0 is None:
        return (None,)
    shape, idx, plane, p, m = argmax_planes(ctx)
    geo = ctx.params.get("geo")
    overlap = geo is None or any(s < (k - 1) * d + 1 for s, k, d in
                                 zip(geo.stride, geo.kernel, geo.dilation, strict=True))
    return (_scatter_planes(g0.reshape(p, m), idx, plane, overlap).reshape(shape),)


@fast_backward("adaptive_max_pool2d", "adaptive_max_pool3d")
def adaptive_max_pool_fast_backward(ctx: Any, saved: tuple, g: list) -> tuple:  # (max_pool's)
    adaptive_grad_check(ctx, g[0])
    return max_pool_fast_backward(ctx, saved, g)


@fast_backward("avg_pool2d", "avg_pool3d")
def avg_pool_fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    # g / div added into the windows on the arrays (set directly where they do not overlap),
    # where the rule expands it to columns for col2im
    p = ctx.params
    geo, divisor = p["geo"], p["divisor"]
    shape = ctx.input_shapes[0]
    div = divisor if isinstance(divisor, float) else divisor.astype(g.dtype)
    nplanes = math.prod(shape[:-len(geo.kernel)])
    return (_avg_pool_grad(g, geo, div, nplanes).reshape(shape),)


@fast_backward("max_unpool2d", "max_unpool3d")
def max_unpool_fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    # one take_along_axis, no gather entry
    p = ctx.params
    shape = ctx.input_shapes[0]
    d = len(p["out_size"])
    idx = p["indices"].reshape(math.prod(shape[:-d]), math.prod(shape[-d:]))
    g2 = g.reshape(idx.shape[0], math.prod(g.shape) // max(idx.shape[0], 1))
    return (np.take_along_axis(g2, idx, axis=1).reshape(shape),)


@fast_backward("nll_loss", "nll_loss2d")
def nll_loss_fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    # the products placed at the targets, no one-hot matrix and product with it
    p = ctx.params
    cache = p["_cache"]
    shape = ctx.input_shapes[0]
    cdim = 0 if len(shape) == 1 else 1
    valid = cache["valid"]
    with np.errstate(all="ignore"):
        coef = -cache["w"]
        if p["reduction"] == 1:
            coef = coef / cache["total_weight"]
        vals = coef * g if p["reduction"] == 0 else coef * g[()]
        if valid is not None:
            vals = np.where(valid, vals, 0)
        out = np.zeros(shape, dtype=g.dtype)
        _place(out, cache["safe"], vals.astype(g.dtype, copy=False), cdim)
    return (out,)


# ---------------------------------------------------------------------------------------------
# The clamps: where(keep, g, 0) on the bits
# ---------------------------------------------------------------------------------------------


def masked_array(g: np.ndarray, keep: Any) -> np.ndarray:
    """The rules' ``_masked`` (``where(keep, g, 0)``, +0.0 off the mask) on the arrays: on the
    bits for a float gradient (``_zero_where``: two integer passes, where NumPy's ``where``
    takes ten times a multiply), else where's kernel."""
    ints = _SAME_SIZE_INT.get(g.dtype.itemsize) if g.dtype.kind == "f" else None
    if ints is None or np.shape(keep) != g.shape:
        return _where.forward(g, 0.0, condition=keep)
    if g.size < _BITS_MIN:
        return np.where(keep, g, 0).astype(g.dtype, copy=False)
    return _zero_where(~keep, g, ints)


def _both(lo: Any, hi: Any, x: np.ndarray) -> Any:
    """clamp's mask: lo <= x <= hi, for the bounds given (the comparisons' own kernels)."""
    mask = None
    if lo is not None:
        mask = _COMPARE["ge"].forward(x, lo)
    if hi is not None:
        up = _COMPARE["le"].forward(x, hi)
        mask = up if mask is None else mask & up
    return mask


@fast_backward("clamp")
def clamp_fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    (x,) = saved
    return (masked_array(g, _both(ctx.params.get("min"), ctx.params.get("max"), x)),)


@fast_backward("clamp_tensor")
def clamp_tensor_fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    x, lo, hi = saved
    need_x, need_lo, need_hi = ctx.needs_input_grad
    gx = masked_array(g, _both(lo, hi, x)) if need_x else None
    lt, gt = _COMPARE["lt"].forward, _COMPARE["gt"].forward
    glo = ghi = None
    if need_lo:
        glo = masked_array(g, lt(x, lo) & lt(lo, hi) if hi is not None else lt(x, lo))
    if need_hi:
        ghi = masked_array(g, gt(x, hi) | lt(hi, lo) if lo is not None else gt(x, hi))
    return gx, glo, ghi


@fast_backward("clamp_min")
def clamp_min_fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    return (masked_array(g, _COMPARE["ge"].forward(saved[0], ctx.params["min"])),)


@fast_backward("clamp_max")
def clamp_max_fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    return (masked_array(g, _COMPARE["le"].forward(saved[0], ctx.params["max"])),)


def _x_or_bound(ctx: Any, g: np.ndarray, keep: Any) -> tuple:
    """x's gradient where ``keep`` holds, the bound's elsewhere."""
    need_x, need_bound = ctx.needs_input_grad
    return (masked_array(g, keep) if need_x else None), (
        masked_array(g, ~keep) if need_bound else None)


@fast_backward("clamp_min_tensor")
def clamp_min_tensor_fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    return _x_or_bound(ctx, g, _COMPARE["ge"].forward(*saved))


@fast_backward("clamp_max_tensor")
def clamp_max_tensor_fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    return _x_or_bound(ctx, g, _COMPARE["le"].forward(*saved))


# ---------------------------------------------------------------------------------------------
# Rules that are one op: its kernel called on the array (no Tensor, no trip through apply)
# ---------------------------------------------------------------------------------------------


@fast_backward("constant_pad_nd")
def constant_pad_nd_fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    return (_constant_pad.forward(g, pad=unpad(ctx), value=0),)


@fast_backward("pixel_shuffle")
def pixel_shuffle_fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    return (_pixel_unshuffle.forward(g, r=ctx.params["r"]),)


@fast_backward("pixel_unshuffle")
def pixel_unshuffle_fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    return (_pixel_shuffle.forward(g, r=ctx.params["r"]),)


@fast_backward("im2col")
def im2col_fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    return (_col2im_op.forward(g, geo=ctx.params["geo"], channels=ctx.input_shapes[0][1]),)


@fast_backward("col2im")
def col2im_fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    return (_im2col.forward(g, geo=ctx.params["geo"]),)


# ---------------------------------------------------------------------------------------------
# Gathers and separable maps (reflection/replication pads, upsampling, adaptive average
# pooling): the rule's formula in the array backend, then one contiguous copy
# ---------------------------------------------------------------------------------------------


@fast_backward(*(e.name for e in (*_GATHER_PADS.values(), *GATHERS.values())))
def gather_pad_fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    return (np.ascontiguousarray(scatter_back(_Arrays, ctx, g, g.dtype)),)


@fast_backward(*SEPARABLE)
def separable_resample_fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    return (np.ascontiguousarray(transposed_maps(_Arrays, ctx, g, g.dtype)),)
