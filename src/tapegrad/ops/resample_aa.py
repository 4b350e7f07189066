"""Antialiased resampling: ``interpolate(..., antialias=True)`` for bilinear and bicubic, and the
``lanczos`` mode, computed as torch's CPU kernels compute them.

Downscaling by ``s`` with antialias widens the filter by ``s`` (Pillow's resampling, which torch
follows), so every output pixel averages all the input pixels under it. Per spatial dim::

    scale    = in / out (or 1 / scale_factor)       support = taps/2 * max(scale, 1)
    center   = scale * (i + 0.5)                    invscale = 1 / max(scale, 1)
    xmin     = max(trunc(center - support + 0.5), 0)
    xsize    = min(trunc(center + support + 0.5), in) - xmin
    w_j      = filter((xmin + j - center + 0.5) * invscale), j < xsize, divided by their sum

with the triangle (``taps`` 2), Keys' cubic with a = -0.5 (4) or Lanczos-3 (6) as the filter.
The two dims are resampled one after the other, the last (width) first, a dim whose size does
not change not at all; each pass stores the input's dtype.

Floating tensors compute the weights in their own precision (float32 for float32, as torch's
``scalar_t``; the half-way constants are doubles, as in its C++), and each output is the
running sum ``w_0 x_0 + w_1 x_1 + ...`` in that order. uint8 images compute them in float64,
turn them into int16 fixed point (``ops/resample_uint8.py``) and sum in integers.

The backward of the float path is the transposed linear map (one dense matrix per dim); uint8
has no gradient.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import math
from typing import Any

import numpy as np

from .._rng import _fma32, _fma64
from ._registry import defop
from .resample_uint8 import fixed_point_pass
from .resampling import separable_resample_backward

__all__ = ["AA_ENTRIES", "NAMES", "aa_plan", "resample_aa_uint8"]

# the filter's width in input pixels at scale 1, by mode
TAPS = {"bilinear": 2, "bicubic": 4, "lanczos": 6}


def _filter(mode: str, x: Any, dt: Any) -> Any:
    """The mode's filter at ``x`` (already in the weights' dtype ``dt``), computed as torch's
    C++ does: its double literals widen an expression to float64, the result is rounded back."""
    ax = abs(x)
    if mode == "bilinear":  # the triangle 1 - |x|
        return dt(1.0 - float(ax)) if ax < 1.0 else dt(0.0)
    if mode == "bicubic":  # Keys' cubic convolution, a = -0.5, its Horner steps fused
        a = dt(-0.5)
        if ax < 1.0:  # ((a + 2) x - (a + 3)) x x + 1
            return _fma(dt(_fma(a + dt(2), ax, -(a + dt(3)), dt) * ax), ax, dt(1), dt)
        if ax < 2.0:  # ((a x - 5 a) x + 8 a) x - 4 a
            t = _fma(_fma(a, ax, -(dt(5) * a), dt), ax, dt(8) * a, dt)
            return _fma(t, ax, -(dt(4) * a), dt)
        return dt(0.0)
    if ax < 3.0:  # Lanczos-3: sinc(x) sinc(x / 3), the second factor in float64
        return dt(float(_sinc(ax, dt)) * _sinc(float(ax) / 3.0, float))
    return dt(0.0)


def _fma(a: Any, b: Any, c: Any, dt: Any) -> Any:
    """``a * b + c`` rounded once to ``dt``: torch's compiler fuses these polynomial steps."""
    fma = _fma32 if dt is np.float32 else _fma64
    return dt(fma(np.array([a], dtype=dt), dt(b), dt(c))[0])


def _c_sinf() -> Any:
    """The C library's single-precision sine (torch's ``std::sin(float)``), which is not
    always the correctly rounded one; Python's double sine rounded where there is no libm."""
    try:
        libm = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
        fn = libm.sinf
    except (OSError, AttributeError):
        return lambda t: np.float32(math.sin(float(t)))
    fn.restype, fn.argtypes = ctypes.c_float, [ctypes.c_float]
    return lambda t: np.float32(fn(float(t)))


_SINF = _c_sinf()


def _sinc(x: Any, dt: Any) -> Any:
    """sin(pi x) / (pi x) in ``dt``, with the C library's sine."""
    if x == 0.0:
        return dt(1.0)
    t = dt(x * dt(math.pi))
    return (_SINF(t) if dt is np.float32 else dt(math.sin(float(t)))) / t


def _area_scale(n_in: int, n_out: int, align_corners: bool, scale: Any, dt: Any) -> Any:
    """torch's area_pixel_compute_scale in ``dt``."""
    if align_corners:
        return dt(n_in - 1) / dt(n_out - 1) if n_out > 1 else dt(0)
    if scale is not None and scale > 0:
        return dt(1.0 / scale)
    return dt(n_in) / dt(n_out)


def aa_weights(n_in: int, n_out: int, scale: Any, mode: str, dt: Any, align_corners: bool = False
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(xmin, xsize, weights (n_out, max taps)) of one dim, in the weights' dtype ``dt``."""
    taps = TAPS[mode]
    sc = _area_scale(n_in, n_out, align_corners, scale, dt)
    support = dt(taps * 0.5 * float(sc)) if sc >= 1.0 else dt(taps * 0.5)
    width = int(math.ceil(support)) * 2 + 1
    invscale = dt(1.0 / float(sc)) if sc >= 1.0 else dt(1.0)
    xmin = np.zeros(n_out, dtype=np.int64)
    xsize = np.zeros(n_out, dtype=np.int64)
    weights = np.zeros((n_out, width), dtype=dt)
    for i in range(n_out):
        center = dt(float(sc) * (i + 0.5))
        lo = max(int(float(center - support) + 0.5), 0)
        size = min(int(float(center + support) + 0.5), n_in) - lo
        size = min(max(size, 0), width)
        total = dt(0.0)
        row = weights[i]
        for j in range(size):
            w = _filter(mode, dt((float(dt(j + lo) - center) + 0.5) * float(invscale)), dt)
            row[j] = w
            total = dt(total + w)
        if total != 0.0:
            row[:size] = row[:size] / total
        xmin[i], xsize[i] = lo, size
    return xmin, xsize, weights


def _dense(n_in: int, xmin: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The (n_out, n_in) matrix of one dim's weights (for the backward pass)."""
    n_out, width = weights.shape
    m = np.zeros((n_out, n_in), dtype=weights.dtype)
    rows = np.arange(n_out)
    for j in range(width):
        col = xmin + j
        ok = col < n_in
        np.add.at(m, (rows[ok], col[ok]), weights[ok, j])
    return m


def aa_plan(in_size: tuple, out_size: list, scales: list, mode: str, dt: Any,
            align_corners: bool = False) -> tuple:
    """Per spatial dim (H, W): None where the size stays, else (xmin, xsize, weights)."""
    return tuple(None if n == o else aa_weights(n, o, s, mode, dt, align_corners)
                 for n, o, s in zip(in_size, out_size, scales, strict=True))


def _float_pass(x: np.ndarray, axis: int, xmin: np.ndarray, xsize: np.ndarray,
                weights: np.ndarray) -> np.ndarray:
    """out[i] = w_0 x_0 + w_1 x_1 + ... (x_j = x[xmin[i] + j]) summed in order in x's dtype.

    torch's compiled loop rounds the products of the terms it handles a vector at a time (4
    float32, 2 float64) and fuses the multiply-add of the remaining last terms; the same here,
    so the sums are torch's to the bit."""
    n_in = x.shape[axis]
    xm = np.moveaxis(x, axis, -1)
    w = weights.astype(x.dtype, copy=False)
    fma = _fma32 if x.dtype == np.float32 else _fma64
    rest = xsize - 1
    block = 16 // x.dtype.itemsize  # 4 float32 or 2 float64 products to a 128-bit vector
    fused_from = rest - rest % block  # terms j > fused_from are fused multiply-adds
    acc = xm[..., np.minimum(xmin, n_in - 1)] * w[:, 0]
    for j in range(1, w.shape[1]):
        if not (j < xsize).any():
            break
        xj = xm[..., np.minimum(xmin + j, n_in - 1)]
        fused = j > fused_from
        if fused.all():
            acc = fma(xj, w[:, j], acc).astype(x.dtype, copy=False)
        elif not fused.any():
            acc += xj * w[:, j]
        else:
            acc = np.where(fused, fma(xj, w[:, j], acc), acc + xj * w[:, j]).astype(
                x.dtype, copy=False)
    return np.moveaxis(acc, -1, axis)


def _aa_forward(x: np.ndarray, *, plan: tuple, mats: tuple) -> np.ndarray:
    nd = len(plan)
    for k in reversed(range(nd)):  # width first, then height
        if plan[k] is not None:
            x = _float_pass(x, x.ndim - nd + k, *plan[k])
    return np.ascontiguousarray(x)


def _aa_entry(name: str, node: str) -> Any:
    entry = defop(name, node=node)(_aa_forward)
    entry.backward(separable_resample_backward)
    return entry


AA_ENTRIES = {
    mode: _aa_entry(f"_upsample_{mode}2d_aa", f"Upsample{mode.capitalize()}2DAaBackward0")
    for mode in ("bilinear", "bicubic", "lanczos")
}
NAMES = tuple(entry.name for entry in AA_ENTRIES.values())  # the registry entries added here


def dense_mats(in_size: tuple, plan: tuple, dt: Any) -> tuple:
    """The matrices of the plan, the identity where a dim is not resampled."""
    mats = []
    for n, p in zip(in_size, plan, strict=True):
        mats.append(np.eye(n, dtype=dt) if p is None else _dense(n, p[0], p[2]))
    return tuple(mats)


def _int16(weights: np.ndarray) -> tuple[np.ndarray, int]:
    """torch's int16 weights and their fraction bits (see ops/resample_uint8.py)."""
    w_max = float(weights.max()) if weights.size else 0.0
    bits = 0
    while bits < 22 and int(0.5 + w_max * (1 << (bits + 1))) < (1 << 15):
        bits += 1
    v = weights * (1 << bits)
    return np.trunc(np.where(v < 0, v - 0.5, v + 0.5)).astype(np.int64), bits


def resample_aa_uint8(x: np.ndarray, out_size: list, scales: list, mode: str,
                      align_corners: bool = False) -> np.ndarray:
    """Antialiased resampling of the last two dims of uint8 ``x`` in fixed point, like torch."""
    nd = len(out_size)
    in_size = tuple(x.shape[-nd:])
    if in_size == tuple(out_size):
        return np.array(x, copy=True)
    plan = aa_plan(in_size, out_size, scales, mode, np.float64, align_corners)
    for k in reversed(range(nd)):
        if plan[k] is not None:
            xmin, xsize, weights = plan[k]
            fixed, bits = _int16(weights)
            x = fixed_point_pass(x, x.ndim - nd + k, xmin, xsize, fixed, bits)
    return np.ascontiguousarray(x)
