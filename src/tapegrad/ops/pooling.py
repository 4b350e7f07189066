"""Pooling: max pooling with indices, average pooling, adaptive max pooling (2-D and 3-D) and
max unpooling. Adaptive average pooling is a separable linear map, with upsampling in
``resampling``.
"""


from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._tensor import Tensor
from . import indexing as ix
from ._registry import defop
from .conv import _col2im, _col2im_op, _crop, _Geometry, _pad_array, _windows
from .nn_common import _linked

# ---------------------------------------------------------------------------------------------
# Pooling
# ---------------------------------------------------------------------------------------------

def _flat_planes(x: np.ndarray, spatial: int) -> np.ndarray:
    """(..., *S) as (P, 1, *S): every plane a batch entry with one channel."""
    return x.reshape((-1, 1) + x.shape[x.ndim - spatial:])


def _plane_strides(size: tuple) -> tuple:
    """Flat-index strides of a C-ordered plane of ``size``."""
    return tuple(math.prod(size[i + 1:]) for i in range(len(size)))


def _max_pool_forward(x: np.ndarray, *, geo: _Geometry, _cache: dict) -> tuple:
    d = len(geo.kernel)
    lead = x.shape[:-d]
    planes = _flat_planes(x, d)
    fill = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    win = _windows(_pad_array(planes, geo.pads, fill), geo.kernel, geo.stride, geo.dilation,
                   geo.out_size)  # (P, 1, *K, *O)
    kk = math.prod(geo.kernel)
    # one contiguous slab per window entry, then elementwise maxima over the kk slabs (NumPy
    # reduces a tiny trailing axis slowly, so never reduce along the window axis itself)
    order = tuple(range(1, d + 1)) + (0,) + tuple(range(d + 1, 2 * d + 1))
    slabs = np.ascontiguousarray(win[:, 0].transpose(order)).reshape(kk, -1)
    best = slabs[0].copy()
    arg = np.zeros(best.shape, dtype=np.int64)
    for j in range(1, kk):
        s = slabs[j]
        hit = s > best  # strictly greater: the first maximum wins; NaN wins (torch)
        if x.dtype.kind == "f":
            hit |= np.isnan(s)
        np.maximum(best, s, out=best)
        arg += hit * (j - arg)
    strides = _plane_strides(geo.in_size)
    offsets = np.zeros(geo.kernel, dtype=np.int64)  # window entry -> flat offset in the plane
    base = np.zeros(geo.out_size, dtype=np.int64)  # window origin -> flat offset
    for i in range(d):
        shape = [1] * d
        shape[i] = -1
        offsets = offsets + (np.arange(geo.kernel[i]) * (geo.dilation[i] * strides[i])
                             ).reshape(shape)
        base = base + ((np.arange(geo.out_size[i]) * geo.stride[i] - geo.pads[i][0])
                       * strides[i]).reshape(shape)
    idx = np.take(offsets.reshape(-1), arg).reshape((-1,) + geo.out_size) + base
    _cache["indices"] = idx
    _cache["plane"] = math.prod(geo.in_size)
    out_shape = lead + geo.out_size
    return best.reshape(out_shape), idx.reshape(out_shape)


def _scatter_planes(g: np.ndarray, idx: np.ndarray, plane: int, overlap: bool) -> np.ndarray:
    """out[p, idx[p, j]] += g[p, j] over planes p of ``plane`` elements."""
    p = idx.shape[0]
    flat = (idx.reshape(p, idx.size // max(p, 1)) + (np.arange(p) * plane)[:, None]).reshape(-1)
    if overlap:
        out = np.bincount(flat, weights=g.reshape(-1), minlength=p * plane)
        return out.astype(g.dtype, copy=False)
    out = np.zeros(p * plane, dtype=g.dtype)
    out[flat] = g.reshape(-1)
    return out


def argmax_planes(ctx: Any) -> tuple:
    """A max pool node's (input shape, argmax indices, plane size, planes, outputs per plane)."""
    cache = ctx.params["_cache"]
    idx = cache["indices"]
    p = idx.shape[0]
    return ctx.input_shapes[0], idx, cache["plane"], p, idx.size // max(p, 1)  # (p may be 0)


def max_pool_backward(ctx: Any, grads: list) -> tuple:  # the gradient goes to the argmax
    g = grads[0]
    if g is None:
        return (None,)
    shape, idx, plane, p, m = argmax_planes(ctx)
    zeros = Tensor._make(np.zeros((p, plane), dtype=g._data.dtype))
    index = Tensor._make(idx.reshape(p, m))
    return (ix.scatter_add(zeros, 1, index, g.reshape(p, m)).reshape(shape),)


_max_pool = defop("max_pool2d", node="MaxPool2DWithIndicesBackward0", outputs=2, save=(0,))(
    _max_pool_forward)
_max_pool3d = defop("max_pool3d", node="MaxPool3DWithIndicesBackward0", outputs=2, save=(0,))(
    _max_pool_forward)
_max_pool.backward(max_pool_backward)
_max_pool3d.backward(max_pool_backward)


def _avg_divisor(geo: _Geometry, count_include_pad: bool, divisor_override: Any) -> Any:
    """The divisor of every output window (a number, or an array of the output's size)."""
    if divisor_override is not None:
        return float(divisor_override)
    div = np.ones((), dtype=np.float64)
    for n, k, s, (lo, _), o in zip(geo.in_size, geo.kernel, geo.stride, geo.pads,
                                   geo.out_size, strict=True):
        start = np.arange(o) * s - lo
        end = np.minimum(start + k, n + lo)  # torch: windows may reach into the padding
        if not count_include_pad:
            end = np.minimum(end, n)
            start = np.maximum(start, 0)
        div = np.multiply.outer(div, (end - start).astype(np.float64))
    return div


# Average pooling in float32 and float64 runs over the kernel offsets rather than the windows:
# one strided slice of the (padded) planes per offset, added into the output in torch's order
# (row by row within a window, starting from zero), then divided, so the result is torch's to
# the bit; for 2x2 windows that is four passes over the output, where a reduction over the two
# small window axes took thirty times as long. The gradient (g / div to every input of the
# window) is one strided copy per offset when the windows do not overlap, col2im's adds when
# they do. Other dtypes (integers truncate; float16 and bfloat16 accumulate in float32 in torch)
# sum the windows in one reduction.

def _offset_region(geo: _Geometry, offs: tuple) -> tuple:
    """The slice of the padded planes (P, *padded) that kernel offset ``offs`` reads."""
    return (slice(None),) + tuple(slice(o * d, o * d + s * (n - 1) + 1, s) for o, d, s, n in
                                  zip(offs, geo.dilation, geo.stride, geo.out_size, strict=True))


def _avg_pool_forward(x: np.ndarray, *, geo: _Geometry, divisor: Any) -> np.ndarray:
    d = len(geo.kernel)
    lead = x.shape[:-d]
    planes = _flat_planes(x, d)  # (P, 1, *S)
    div = divisor if isinstance(divisor, float) else divisor.astype(x.dtype)
    if x.dtype in (np.float32, np.float64):
        xp = _pad_array(planes, geo.pads)[:, 0]
        total: Any = None
        for offs in np.ndindex(*geo.kernel):
            part = xp[_offset_region(geo, offs)]
            if total is None:
                total = np.add(part, 0, dtype=x.dtype)  # torch's sum starts from +0
            else:
                np.add(total, part, out=total)
        np.divide(total, div, out=total)
        return total.reshape(lead + geo.out_size)
    win = _windows(_pad_array(planes, geo.pads), geo.kernel, geo.stride, geo.dilation,
                   geo.out_size)
    total = np.sum(win, axis=tuple(range(2, 2 + d)))[:, 0]
    if x.dtype.kind in "iu":
        return np.trunc(total / divisor).astype(x.dtype).reshape(lead + geo.out_size)
    return (total / div).astype(x.dtype, copy=False).reshape(lead + geo.out_size)


def _avg_pool_grad(g: np.ndarray, geo: _Geometry, div: Any, nplanes: int) -> np.ndarray:
    """The input gradient (P, *in_size): g / div added, from zero, to every input of its
    window."""
    dt = g.dtype
    d = len(geo.kernel)
    go = (g / div).astype(dt, copy=False).reshape((nplanes,) + geo.out_size)
    if all(s >= k for s, k in zip(geo.stride, geo.kernel, strict=True)):  # no overlap
        go = np.add(go, 0, out=go)  # 0 + g/div: -0.0 becomes +0.0 (torch adds into zeros)
        tiled = all(s == k and k * o == n for s, k, o, n in
                    zip(geo.stride, geo.kernel, geo.out_size, geo.padded, strict=True))
        full = (np.empty if tiled else np.zeros)((nplanes,) + geo.padded, dtype=dt)
        for offs in np.ndindex(*geo.kernel):
            full[_offset_region(geo, offs)] = go
        full = full[:, None]
    else:
        win = np.broadcast_to(go.reshape((nplanes, 1) + (1,) * d + geo.out_size),
                              (nplanes, 1) + geo.kernel + geo.out_size)
        full = _col2im(win, (nplanes, 1) + geo.padded, geo.kernel, geo.stride, geo.dilation)
    return np.ascontiguousarray(_crop(full, geo.pads))


def avg_pool_backward(ctx: Any, grad: Tensor) -> tuple:  # every input in a window gets g / div
    p = ctx.params
    geo, divisor = p["geo"], p["divisor"]
    d = len(geo.kernel)
    shape = ctx.input_shapes[0]
    dt = grad._data.dtype
    div = divisor if isinstance(divisor, float) else divisor.astype(dt)
    kk = math.prod(geo.kernel)
    nplanes = math.prod(shape[:-d])
    g = grad / (div if isinstance(div, float) else Tensor._make(div))
    cols = g.reshape(nplanes, 1, math.prod(geo.out_size)).expand(
        nplanes, kk, math.prod(geo.out_size))
    return (_col2im_op(cols, geo=geo, channels=1).reshape(shape),)


_avg_pool = defop("avg_pool2d", node="AvgPool2DBackward0", save=(0,))(_avg_pool_forward)
_avg_pool3d = defop("avg_pool3d", node="AvgPool3DBackward0", save=(0,))(_avg_pool_forward)
_avg_pool.backward(avg_pool_backward)
_avg_pool3d.backward(avg_pool_backward)


def _adaptive_index(n: int, o: int) -> np.ndarray:
    """(o, kmax) input positions of each adaptive window, the last repeated to fill."""
    i = np.arange(o)
    start = (i * n) // o
    end = -((-(i + 1) * n) // o)
    k = int((end - start).max()) if o else 0
    return np.minimum(start[:, None] + np.arange(k)[None, :], (end - 1)[:, None])


def _adaptive_max_forward(x: np.ndarray, *, output_size: tuple, _cache: dict) -> tuple:
    """Max over each adaptive window of the last len(output_size) dims: the windows gathered
    as (P, o1, k1, o2, k2, ...) (_adaptive_index repeats a short window's last position), the
    first maximum (a NaN counts as one) of each, and its flat index in the input plane."""
    d = len(output_size)
    lead, size = x.shape[:-d], x.shape[-d:]
    shape = lead + tuple(output_size)
    plane = math.prod(size)
    _cache["plane"] = plane
    if x.size == 0 or 0 in output_size:
        idx = np.zeros((math.prod(lead), math.prod(output_size)), dtype=np.int64)
        _cache["indices"] = idx
        return np.empty(shape, dtype=x.dtype), idx.reshape(shape)
    windows = [_adaptive_index(n, o) for n, o in zip(size, output_size, strict=True)]
    index = []
    for i, w in enumerate(windows):  # dim i's (o_i, k_i) positions on axes 2i, 2i + 1
        at = [1] * (2 * d)
        at[2 * i], at[2 * i + 1] = w.shape
        index.append(w.reshape(at))
    win = x.reshape((-1,) + size)[(slice(None),) + tuple(index)]
    p = win.shape[0]
    kernel = tuple(w.shape[1] for w in windows)
    order = (0,) + tuple(range(1, 2 * d, 2)) + tuple(range(2, 2 * d + 1, 2))
    flat = win.transpose(order).reshape((p,) + tuple(output_size) + (math.prod(kernel),))
    arg = np.argmax(flat, axis=-1)
    values = np.take_along_axis(flat, arg[..., None], axis=-1)[..., 0]
    idx = np.zeros(arg.shape, dtype=np.int64)
    for i, (w, off) in enumerate(zip(windows, np.unravel_index(arg, kernel), strict=True)):
        o = np.arange(output_size[i]).reshape([1] * (1 + i) + [-1] + [1] * (d - 1 - i))
        idx = idx * size[i] + w[o, off]  # the input coordinate along dim i
    _cache["indices"] = idx.reshape(p, -1)
    return values.reshape(shape), idx.reshape(shape)


_adaptive_max_pool = defop("adaptive_max_pool2d", node="AdaptiveMaxPool2DBackward0",
                           outputs=2, save=(0,))(_adaptive_max_forward)
_adaptive_max_pool3d = defop("adaptive_max_pool3d", node="AdaptiveMaxPool3DBackward0",
                             outputs=2, save=(0,))(_adaptive_max_forward)


def adaptive_grad_check(ctx: Any, g: Any) -> None:
    """torch's refusal of an empty gradient (a Tensor or an array) for an adaptive pool."""
    d = len(ctx.params["output_size"])
    if g is not None:
        sizes = list(g.shape)
        for i in range(len(sizes) - d, len(sizes)):
            if sizes[i] == 0:
                raise RuntimeError(
                    f"adaptive_max_pool{d}d_backward(): Expected grad_output to have non-zero "
                    f"size for non-batch dimensions, but grad_output has sizes {sizes} with "
                    f"dimension {i} being empty")


def adaptive_max_pool_backward(ctx: Any, grads: list) -> tuple:  # to the argmax
    adaptive_grad_check(ctx, grads[0])
    return max_pool_backward(ctx, grads)


_adaptive_max_pool.backward(adaptive_max_pool_backward)
_adaptive_max_pool3d.backward(adaptive_max_pool_backward)


def _max_unpool_forward(x: np.ndarray, *, indices: np.ndarray, out_size: tuple) -> np.ndarray:
    d = len(out_size)
    lead = x.shape[:-d]
    plane = math.prod(out_size)
    idx = indices.reshape(math.prod(lead), -1)
    bad = (idx < 0) | (idx >= plane)
    if bad.any():
        sizes = "x".join(str(s) for s in out_size)
        raise RuntimeError(
            f"Found an invalid max index: {int(idx[bad][0])} (output volumes are of size "
            f"{sizes})"
        )
    out = np.zeros((idx.shape[0], plane), dtype=x.dtype)
    np.put_along_axis(out, idx, x.reshape(idx.shape), axis=1)
    return out.reshape(lead + tuple(out_size))


def max_unpool_backward(ctx: Any, grad: Tensor) -> tuple:  # each input value came from one slot
    p = ctx.params
    shape = ctx.input_shapes[0]
    d = len(p["out_size"])
    idx = p["indices"].reshape(math.prod(shape[:-d]), math.prod(shape[-d:]))
    g = grad.reshape(idx.shape[0], math.prod(grad.shape) // max(idx.shape[0], 1))
    return (ix.gather(g, 1, Tensor._make(idx)).reshape(shape),)


_max_unpool2d = defop("max_unpool2d", node="MaxUnpool2DBackward0")(_max_unpool_forward)
_max_unpool3d = defop("max_unpool3d", node="MaxUnpool3DBackward0")(_max_unpool_forward)
_max_unpool2d.backward(max_unpool_backward)

_max_unpool3d.backward(max_unpool_backward)


# Rules whose gradient torch's double-backward node ties to the forward's inputs (see _link)
for _entry in (_max_pool, _max_pool3d, _avg_pool, _avg_pool3d, _adaptive_max_pool,
               _adaptive_max_pool3d):
    _linked(_entry)
