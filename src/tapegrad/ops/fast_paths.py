"""Fast first-order backward paths: the few rules of a training step worth running on the
arrays themselves, kept apart from the rules they speed up (but for mul's and sum's, the paths
of the first program a reader follows, ``(a * b).sum().backward()``, which sit beside their
rules in ops/elementwise.py and ops/reduction.py, registered the same way).

Every op's derivative is written once, as its ``backward`` rule in Tensor terms, next to its
forward (ops/_registry.py). With grad mode off (``backward()`` without ``create_graph``) a
rule's ops record nothing, and all they still cost is the trip through ``apply`` for each one:
a Tensor made around each intermediate, an op's checks. For the commonest rules that trip is
most of their time, so each has here a path that computes the rule's values straight on the
arrays, registered by op name::

    @fast_backward("mul")                   # (ops/elementwise.py)
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

The fused entries of the neural-network families (activations, normalization, attention,
losses, embedding bags, recurrent layers) have one here each: their rules, in Tensor terms,
recompute what the forward kept for these paths in ``params["_cache"]``.
"""

from __future__ import annotations

import math
from functools import partial
from typing import Any

import numpy as np

from ..kernels.sums import fast_sum as _fast_sum
from ..kernels.sums import ones_vector as _ones
from ._registry import fast_backward
from .activations import GELU_TANH_BETA, ONE_SIXTH_F, gelu_tanh_slope, leaky_relu_inplace_slope
from .attention import _sdpa, repeat_heads
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
from .embedding import _embedding_rows, _row_sums, bag_scales, max_bag_hits
from .erf import INV_SQRT_2PI, _phi
from .linalg import _broadcast, _product
from .losses import (
    EPS12_F,
    _norm,
    _pair_shape,
    _place,
    ctc_grad_array,
    multi_margin_terms,
    target_pair,
)
from .nn_common import _Arrays, _sigmoid, _take
from .normalization import _channel_shape, _grouped, batch_stats_array, moments_array
from .padding import _GATHER_PADS, _constant_pad, scatter_back, unpad
from .pooling import _avg_pool_grad, _scatter_planes, adaptive_grad_check, argmax_planes
from .resampling import GATHERS, SEPARABLE, _pixel_shuffle, _pixel_unshuffle, transposed_maps
from .rnn import _backward as _rnn_backward
from .rnn import _forward as _rnn_forward
from .rnn import (
    _lstm_backward_arrays,
    _lstm_forward_arrays,
    layer_cotangents,
    layer_input_grads,
    layer_needs,
    layer_rows,
)

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
# Elementwise: tanh, relu (mul's is beside its rule, in ops/elementwise.py)
# ---------------------------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------------------------
# Activations (ops/activations.py): each rule's formula on the arrays, no op per step
# ---------------------------------------------------------------------------------------------


@fast_backward("gelu")
def gelu_fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    # the normal CDF and exp(-x^2/2) the forward kept, and the formula in place (a GPT's every
    # block runs it)
    (x,) = saved
    cache = ctx.params["_cache"]
    cdf, gauss = cache.pop("cdf", None), cache.pop("gauss", None)
    if ctx.params["approximate"] == "tanh":
        x_sq = x * x
        d = gelu_tanh_slope(x, x_sq, np.tanh((x + x_sq * x * 0.044715) * GELU_TANH_BETA))
    else:
        if cdf is None:
            cdf = _phi(x)
        if gauss is None:
            gauss = np.asarray(x * x)  # (an array for a 0-d x too: written in place below)
            gauss *= -0.5
            np.exp(gauss, out=gauss)
        d = gauss
        d *= x
        d *= INV_SQRT_2PI
        d += cdf
    d *= g
    return (d,)


@fast_backward("silu")
def silu_fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    (x,) = saved
    s = _sigmoid(x)
    return (g * s * (1.0 + x * (1.0 - s)),)


@fast_backward("mish")
def mish_fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    (x,) = saved
    t = np.tanh(_Arrays.softplus(x))
    return (g * (t + x * _sigmoid(x) * (1.0 - t * t)),)


@fast_backward("softplus")
def softplus_fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    (x,) = saved
    z = x * ctx.params["beta"]
    s = _sigmoid(z)
    return (g * (s + (z > ctx.params["threshold"]) * (1.0 - s)),)


@fast_backward("elu", "celu")
def elu_fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    (x,), p = saved, ctx.params
    neg = np.exp(np.where(x < 0, x, 0.0) * p["input_scale"]) * (
        p["alpha"] * p["scale"] * p["input_scale"])
    return (g * ((x > 0) * np.asarray(p["scale"], dtype=x.dtype) + (x <= 0) * neg),)


@fast_backward("elu_", "celu_")
def elu__fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    (y,), p = saved, ctx.params
    return (g * ((y > 0) * np.asarray(p["scale"], dtype=y.dtype)
                 + (y <= 0) * ((y + p["alpha"] * p["scale"]) * p["input_scale"])),)


@fast_backward("leaky_relu")
def leaky_relu_fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    (x,) = saved
    return (g * ((x > 0) + (x <= 0) * ctx.params["negative_slope"]),)


@fast_backward("leaky_relu_")
def leaky_relu__fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    slope = leaky_relu_inplace_slope(ctx)
    (y,) = saved
    return (g * ((y > 0) + (y <= 0) * slope),)


@fast_backward("hardtanh", "hardtanh_")
def hardtanh_fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    (x,), p = saved, ctx.params
    return (g * ((x > p["min_val"]) & (x < p["max_val"])),)


@fast_backward("hardsigmoid")
def hardsigmoid_fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    (x,) = saved
    return (g * ((x > -3.0) & (x < 3.0)) * ONE_SIXTH_F,)


@fast_backward("hardswish")
def hardswish_fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    (x,) = saved
    inside = (x > -3.0) & (x < 3.0)
    return (g * (inside * (x / 3.0 + 0.5) + (x >= 3.0)),)


@fast_backward("log_sigmoid")
def log_sigmoid_fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    (x,) = saved
    return (g * _sigmoid(-x),)


@fast_backward("threshold", "threshold_")
def threshold_fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    (x,) = saved
    return (g * (x > ctx.params["threshold"]),)


@fast_backward("hardshrink", "softshrink")
def shrink_fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    (x,) = saved
    return (g * (np.abs(x) > ctx.params["lambd"]),)


@fast_backward("glu")
def glu_fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    (x,) = saved
    dim = ctx.params["dim"]
    a, b = np.split(x, 2, axis=dim)
    s = _sigmoid(b)
    return (np.concatenate([g * s, g * a * s * (1.0 - s)], axis=dim),)


@fast_backward("prelu")
def prelu_fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    # (the slope w at x = 0, as the rule's first derivative has it)
    x, w = saved
    need_x, need_w = ctx.needs_input_grad
    gx = g * ((x > 0) + (x <= 0) * w) if need_x else None
    gw = g * x * (x < 0) if need_w else None
    return gx, gw


@fast_backward("safe_softmax")
def safe_softmax_fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    (y,) = saved
    return (y * (g - _fast_sum(g * y, (ctx.params["dim"],), True)),)


@fast_backward("rrelu_with_noise")
def rrelu_fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    return (g * ctx.params["noise"],)


# ---------------------------------------------------------------------------------------------
# Scaled dot-product attention (ops/attention.py)
# ---------------------------------------------------------------------------------------------


@fast_backward("sdpa")
def sdpa_fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    # the forward's probabilities and output reused (the rule recomputes them); one key/value
    # head per query head takes _sdpa_grads
    q, k, v = saved
    p = ctx.params
    groups, scale = p["groups"], p["scale"]
    cache = p["_cache"]
    if "prob" not in cache:  # a second backward: recompute the forward's intermediates
        _sdpa.forward(q, k, v, scale=scale, mask=p["mask"], groups=groups, _cache=cache)
    prob, out = cache.pop("prob"), cache.pop("out")
    if groups == 1:
        return _sdpa_grads(g, q, k, v, prob, out, scale, ctx.needs_input_grad)
    kr, vr = repeat_heads(k, groups), repeat_heads(v, groups)
    need_q, need_k, need_v = ctx.needs_input_grad
    gq = gk = gv = None
    if need_v:
        gv = _sum_heads_array(np.matmul(np.swapaxes(prob, -1, -2), g), groups)
    if need_q or need_k:
        dp = np.matmul(g, np.swapaxes(vr, -1, -2))
        ds = prob * (dp - _fast_sum(g * out, (-1,), True))
        if need_q:
            gq = np.matmul(ds, kr) * scale
        if need_k:
            gk = _sum_heads_array(np.matmul(np.swapaxes(ds, -1, -2), q) * scale, groups)
    return gq, gk, gv


def _sum_heads_array(x: np.ndarray, groups: int) -> np.ndarray:
    """attention's ``_sum_heads`` on an array: a key/value head's copies' gradients summed."""
    shape = x.shape
    grouped = shape[:-3] + (shape[-3] // groups, groups) + shape[-2:]
    return _fast_sum(np.reshape(x, grouped), (len(shape) - 2,), False)


def _sdpa_grads(g: np.ndarray, q: np.ndarray, k: np.ndarray, v: np.ndarray,
                prob: np.ndarray, out: np.ndarray, scale: float, needs: tuple) -> tuple:
    """sdpa's rule on the arrays, one key/value head per query head. Each gradient is
    written in its input's memory layout: q, k and v are usually (B, T, H, D) projections seen
    as (B, H, T, D), and a gradient laid out the same way goes back through that transpose and
    view without a copy (three copies of the whole activation per attention layer otherwise).
    The scale is applied once, to ds, instead of to both of its products."""
    need_q, need_k, need_v = needs
    gq = gk = gv = None
    if need_v:
        gv = np.matmul(np.swapaxes(prob, -1, -2), g, out=np.empty_like(v))
    if need_q or need_k:
        ds = np.matmul(g, np.swapaxes(v, -1, -2))  # dp
        ds -= _fast_sum(g * out, (-1,), True)
        ds *= prob
        ds *= scale
        if need_q:
            gq = np.matmul(ds, k, out=np.empty_like(q))
        if need_k:
            gk = np.matmul(np.swapaxes(ds, -1, -2), q, out=np.empty_like(k))
    return gq, gk, gv


# ---------------------------------------------------------------------------------------------
# Normalization (ops/normalization.py): the forward's normalised input and rstd reused (the
# rules recompute them), the formulas in place
# ---------------------------------------------------------------------------------------------


def normalized_grad_array(dxhat: np.ndarray, xhat: np.ndarray, rstd: np.ndarray,
                          dims: tuple) -> np.ndarray:
    """normalization's ``_normalized_grad`` on the arrays, in place:
    rstd (dxhat - mean(dxhat) - xhat mean(dxhat xhat))."""
    t = dxhat * xhat
    m = _Arrays.mean(t, dims)
    np.multiply(xhat, m, out=t)
    out = dxhat - _Arrays.mean(dxhat, dims)
    out -= t
    out *= rstd
    return out


@fast_backward("layer_norm")
def layer_norm_fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    x, w = saved[0], (saved[1] if len(saved) > 1 else None)
    p = ctx.params
    n = len(x.shape)
    dims = tuple(range(n - p["ndim"], n))
    batch = tuple(range(n - p["ndim"]))
    xhat, rstd = _take(p["_cache"], "moments", lambda: moments_array(x, dims, p["eps"]))
    if g.dtype == xhat.dtype and g.dtype.kind == "f" and g.dtype.itemsize >= 4 and xhat.size:
        return _layer_norm_grads(g, xhat, rstd, w, p["ndim"], ctx.needs_input_grad, x)
    need_x, need_w, need_b = ctx.needs_input_grad
    gx = gw = gb = None
    if need_x:
        gx = normalized_grad_array(g * w if w is not None else g, xhat, rstd, dims)
    if need_w:
        gw = _fast_sum(g * xhat, batch, False) if batch else g * xhat
    if need_b:
        gb = _fast_sum(g, batch, False) if batch else g
    return gx, gw, gb


def _layer_norm_grads(g: np.ndarray, xhat: np.ndarray, rstd: np.ndarray, w: Any, ndim: int,
                      needs: tuple, x: np.ndarray) -> tuple:
    """layer_norm's rule on the arrays, as rows of the normalised size d (one per position):
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
        gw = (_ones(rows.shape[0], g.dtype) @ gw_rows).reshape(shape)
    if need_b:
        gb = (_ones(rows.shape[0], g.dtype) @ rows).reshape(shape)
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
        gx = out.reshape(xhat.shape)
    return gx, gw, gb


@fast_backward("batch_norm")
def batch_norm_fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    x, w = saved[0], (saved[1] if len(saved) > 1 else None)
    p = ctx.params
    cache = p["_cache"]
    shape = x.shape
    dims = (0,) + tuple(range(2, len(shape)))
    cshape = _channel_shape(len(shape), shape[1])
    need_x, need_w, need_b = ctx.needs_input_grad
    if not p["training"]:  # dx = g w rstd, dw = sum g xhat, db = sum g
        rstd = cache["rstd"]
        xhat = _take(cache, "xhat", lambda: (x - cache["mean"]) * rstd)
        gx = gw = gb = None
        if need_x:
            gx = (g * np.reshape(w, cshape) if w is not None else g) * rstd
        if need_w:
            gw = _fast_sum(g * xhat, dims, False)
        if need_b:
            gb = _fast_sum(g, dims, False)
        return gx, gw, gb
    return batch_norm_training_grads(g, x, w, cache, p["eps"], need_x, need_w, need_b)


def batch_norm_training_grads(g: np.ndarray, x: np.ndarray, w: Any, cache: dict, eps: float,
                              need_x: bool, need_w: bool, need_b: bool) -> tuple:
    """A training batch norm's gradients in torch's form, per channel c over its M entries:
    sum_g = sum g, dotp = sum (x - mean) g; dw = dotp rstd, db = sum_g,
    dx = (g - sum_g / M - (x - mean) dotp rstd^2 / M) rstd w."""
    shape = x.shape
    dims = (0,) + tuple(range(2, len(shape)))
    cshape = _channel_shape(len(shape), shape[1])
    xc, rstd = _take(cache, "centered", lambda: batch_stats_array(x, dims, eps)[1::2])
    m = x.size // max(shape[1], 1)
    sum_g = _fast_sum(g, dims, True)
    dotp = _fast_sum(xc * g, dims, True)
    gx = None
    if need_x:
        gx = g - sum_g * (1.0 / max(m, 1))
        gx -= xc * (dotp * rstd * rstd * (1.0 / max(m, 1)))
        gx *= rstd if w is None else rstd * np.reshape(w, cshape)
    gw = (dotp * rstd).reshape(-1) if need_w else None
    gb = sum_g.reshape(-1) if need_b else None
    return gx, gw, gb


@fast_backward("group_norm")
def group_norm_fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    x, w = saved[0], (saved[1] if len(saved) > 1 else None)
    p = ctx.params
    shape = x.shape
    grouped = _grouped(shape, p["groups"])
    xhat, rstd = _take(p["_cache"], "moments",
                       lambda: moments_array(np.reshape(x, grouped), (2,), p["eps"]))
    need_x, need_w, need_b = ctx.needs_input_grad
    gx = gw = gb = None
    dims = (0,) + tuple(range(2, len(shape)))
    if need_x:
        dxhat = g * np.reshape(w, _channel_shape(len(shape), shape[1])) if w is not None else g
        gx = np.reshape(normalized_grad_array(np.reshape(dxhat, grouped), xhat, rstd, (2,)),
                        shape)
    if need_w:
        gw = _fast_sum(g * np.reshape(xhat, shape), dims, False)
    if need_b:
        gb = _fast_sum(g, dims, False)
    return gx, gw, gb


# ---------------------------------------------------------------------------------------------
# Losses (ops/losses.py): each rule's formula on the arrays
# ---------------------------------------------------------------------------------------------


@fast_backward("mse_loss")
def mse_loss_fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    x, t = saved
    red = ctx.params["reduction"]
    return target_pair(ctx, (x - t) * (2.0 * _norm(red, _pair_shape(ctx))) * g)


@fast_backward("smooth_l1_loss")
def smooth_l1_loss_fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    (x, t), p = saved, ctx.params
    d = np.clip((x - t) / p["beta"], -1.0, 1.0)
    return target_pair(ctx, d * _norm(p["reduction"], _pair_shape(ctx)) * g)


@fast_backward("huber_loss")
def huber_loss_fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    (x, t), p = saved, ctx.params
    d = np.clip(x - t, -p["delta"], p["delta"])
    return target_pair(ctx, d * _norm(p["reduction"], _pair_shape(ctx)) * g)


@fast_backward("soft_margin_loss")
def soft_margin_loss_fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    (x,) = saved
    y = ctx.params["target"]
    norm = _norm(ctx.params["reduction"], _pair_shape(ctx))
    return (-y * _sigmoid(-y * x) * norm * g,)


def _weighted(ctx: Any, g: np.ndarray) -> np.ndarray:
    """The binary cross-entropies' factor on every element: g, the mean's 1/N, the weight."""
    p = ctx.params
    scale = g * _norm(p["reduction"], _pair_shape(ctx))
    return scale * p["weight"] if p["weight"] is not None else scale


@fast_backward("binary_cross_entropy")
def bce_fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    x, t = saved
    need_x, need_t = ctx.needs_input_grad
    scale = _weighted(ctx, g)
    with np.errstate(all="ignore"):
        gx = (x - t) / np.clip((1.0 - x) * x, EPS12_F, None) * scale if need_x else None
        gt = None
        if need_t:
            gt = (np.clip(np.log(1.0 - x), -100.0, None)
                  - np.clip(np.log(x), -100.0, None)) * scale
    return gx, gt


@fast_backward("bce_with_logits")
def bce_logits_fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    x, t = saved
    need_x, need_t = ctx.needs_input_grad
    scale = _weighted(ctx, g)
    pw = ctx.params["pos_weight"]
    gx = gt = None
    if need_x:
        s = _sigmoid(x)
        gx = ((pw * t + 1.0 - t) * s - pw * t if pw is not None else s - t) * scale
    if need_t:
        if pw is None:
            gt = -x * scale
        else:
            lsx = -_Arrays.softplus(-x)
            gt = (lsx - x - pw * lsx) * scale
    return gx, gt


@fast_backward("multi_margin_loss")
def multi_margin_loss_fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    (x,), prm = saved, ctx.params
    onehot = prm["onehot"]
    n, c = onehot.shape
    z, on = multi_margin_terms(np.reshape(x, (n, c)), onehot, prm["margin"])
    d = on * (1.0 if prm["p"] == 1 else z * 2.0)
    if prm["weight"] is not None:
        d = d * prm["weight"][np.argmax(onehot, axis=-1)][:, None]
    scale = g * ((1.0 / (n * c)) if prm["reduction"] == 1 else (1.0 / c))
    if prm["reduction"] == 0:
        scale = np.reshape(scale, (n, 1))
    d = d * scale
    d = d - onehot.astype(g.dtype) * _fast_sum(d, (-1,), True)
    return (np.reshape(d, tuple(ctx.input_shapes[0])),)


@fast_backward("multilabel_margin_loss")
def multilabel_margin_loss_fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    (x,), prm = saved, ctx.params
    counts = prm["counts"]
    n, c = counts.shape
    pairs = (counts[:, :, None] * (counts == 0)[:, None, :]).astype(g.dtype)
    x2 = np.reshape(x, (n, c))
    active = ((1.0 - np.reshape(x2, (n, c, 1))) + np.reshape(x2, (n, 1, c)) > 0) * pairs
    scale = g * ((1.0 / (n * c)) if prm["reduction"] == 1 else (1.0 / c))
    if prm["reduction"] == 0:
        scale = np.reshape(scale, (n, 1))
    d = _fast_sum(active * 1.0, (-2,), False) - _fast_sum(active * 1.0, (-1,), False)
    return (np.reshape(d * scale, tuple(ctx.input_shapes[0])),)


@fast_backward("ctc_loss")
def ctc_loss_fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    # the kernel's values as they are, without the entry the rule records them under
    return (ctc_grad_array(ctx, saved[0], g),)


@fast_backward("embedding_bag")
def embedding_bag_fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    # the bags' gradients counted into the table (bincount, _row_sums), no zero table and
    # index_put
    p = ctx.params
    v, d = ctx.input_shapes[0]
    need_w, need_psw = ctx.needs_input_grad
    idx, seg, keep = p["indices"][p["keep"]], p["segment"][p["keep"]], p["keep"]
    dt = g.dtype
    if p["mode"] == 2:
        hit, flat = max_bag_hits(ctx)
        return np.bincount(flat, weights=g[hit], minlength=v * d).astype(dt).reshape(v, d), None
    scale = bag_scales(ctx, dt)
    per_row = g[seg]
    w, psw = saved
    gw = gpsw = None
    if need_psw:
        full = np.zeros(len(keep), dtype=dt)
        full[keep] = np.sum(per_row * w[idx], axis=-1) * scale
        gpsw = full
    if need_w:
        factor = scale[:, None] if psw is None else (psw[keep] * scale)[:, None]
        gw = _row_sums(v, idx, (per_row * factor).astype(dt, copy=False))
    return gw, gpsw


# ---------------------------------------------------------------------------------------------
# Recurrent layers (ops/rnn.py): the recurrence on the arrays, from the gates the forward kept
# (the rules recompute the forward in Tensor ops); the LSTM's steps in its own array code
# ---------------------------------------------------------------------------------------------


def _rnn_layer_fast(mode: str) -> Any:
    def rnn_layer_fast_backward(ctx: Any, saved: tuple, grads: list) -> tuple:
        p = ctx.params
        x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr = saved[:8]
        gout, gh_n, gc_n = layer_cotangents(mode, grads, p["batch_sizes"])
        shape, sizes, xa = layer_rows(x, p["batch_sizes"])
        run = _lstm_forward_arrays if mode == "lstm" else partial(_rnn_forward, _Arrays, mode)
        rec = _take(p["_cache"], "rec", lambda: run(
            xa, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr, sizes, p["reverse"])[3])
        args = (xa, h0, c0, w_ih, w_hh, w_hr)
        needs = layer_needs(ctx)
        with np.errstate(over="ignore"):
            if mode == "lstm":
                g = _lstm_backward_arrays(*args, rec, gout, gh_n, gc_n, sizes, p["reverse"],
                                          needs)
            else:
                g = _rnn_backward(_Arrays, mode, *args, rec, gout, gh_n, gc_n, sizes,
                                  p["reverse"], needs, np.zeros_like)
        return layer_input_grads(ctx, g, shape)

    return rnn_layer_fast_backward


for _mode, _layer in (("lstm", "lstm_layer"), ("gru", "gru_layer"), ("tanh", "rnn_tanh_layer"),
                      ("relu", "rnn_relu_layer")):
    fast_backward(_layer)(_rnn_layer_fast(_mode))
