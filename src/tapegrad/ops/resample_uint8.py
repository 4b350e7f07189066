"""Bilinear and bicubic resampling of uint8 images, in torch's fixed-point arithmetic.

torch does not resample a uint8 image in floating point. Along each spatial dim it computes
the interpolation weights in float64, turns them into int16 with a shared number of fraction
bits, and sums ``pixel * weight`` in integers; the sum is rounded (``+ 2**(bits - 1)``, then an
arithmetic shift right) and clamped to 0..255. The dims are resampled one after the other, the
last (width) first, and each pass stores uint8 again, so the result is what the two rounded
passes give, not the rounded exact value. Matching torch bit for bit means doing the same::

    per dim:  source position -> index, lambda       (area_pixel_compute_source_index)
              weights w_j = filter(j + 1 - support - lambda), j < 2 (linear) or 4 (cubic);
              taps outside the image fold onto the first/last valid pixel
              bits = fraction bits that keep round(max_w * 2**(bits+1)) below 2**15
              int16 weights = round-half-away(w * 2**bits)
    pass:     out = clamp((2**(bits-1) + sum_j x[index_min + j] * w_j) >> bits, 0, 255)

A dim whose size does not change is not resampled; same shape in and out is a copy. The
cubic filter is Keys' with a = -0.75 (torch's non-antialiased constant). Integers have no
gradient, so this is a plain NumPy kernel, not a registry entry.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["fixed_point_pass", "resample_uint8"]


def _linear_filter(x: np.ndarray) -> np.ndarray:
    """Triangle filter: 1 - |x| inside (-1, 1)."""
    x = np.abs(x)
    return np.where(x < 1.0, 1.0 - x, 0.0)


def _cubic_filter(x: np.ndarray) -> np.ndarray:
    """Keys' cubic convolution kernel with a = -0.75."""
    a = -0.75
    x = np.abs(x)
    near = ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
    far = ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a
    return np.where(x < 1.0, near, np.where(x < 2.0, far, 0.0))


def _scale(n_in: int, n_out: int, align_corners: bool, scale: float | None) -> float:
    """torch's area_pixel_compute_scale, in float64."""
    if align_corners:
        return (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    return 1.0 / scale if scale is not None and scale > 0 else n_in / n_out


def _int16_weights(n_in: int, n_out: int, align_corners: bool, scale: float | None,
                   taps: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """(index_min, index_size, int16 weights (n_out, taps), fraction bits) of one dim."""
    sc = _scale(n_in, n_out, align_corners, scale)
    dst = np.arange(n_out, dtype=np.float64)
    if align_corners:
        src = sc * dst
    else:
        src = sc * (dst + 0.5) - 0.5
        if taps == 2:  # linear clamps the position at 0; cubic reaches left of the image
            src = np.maximum(src, 0.0)
    # guard_index_and_lambda: the index is floored in float32, as torch's floorf does
    index = np.minimum(np.floor(src.astype(np.float32)).astype(np.int64), n_in - 1)
    lam = np.clip(src - index, 0.0, 1.0)
    support = taps // 2
    lo = index - support + 1
    index_min = np.maximum(lo, 0)
    index_size = np.clip(np.minimum(index + support + 1, n_in) - index_min, 0, taps)
    filt = _cubic_filter if taps == 4 else _linear_filter
    weights = np.zeros((n_out, taps))
    w_max = 0.0
    for i in range(n_out):  # taps outside the image fold onto the nearest valid slot
        slot = 0
        for j in range(taps):
            w = float(filt(np.float64(j + 1 - support) - lam[i]))
            if lo[i] + j <= 0:
                slot = 0
            elif lo[i] + j >= n_in - 1:
                slot = int(index_size[i]) - 1
            weights[i, slot] += w
            w_max = max(w_max, weights[i, slot])
            slot += 1
    bits = 0
    while bits < 22 and int(0.5 + w_max * (1 << (bits + 1))) < (1 << 15):
        bits += 1
    v = weights * (1 << bits)
    fixed = np.trunc(np.where(v < 0, v - 0.5, v + 0.5)).astype(np.int64)
    return index_min, index_size, fixed, bits


def fixed_point_pass(x: np.ndarray, axis: int, index_min: np.ndarray, index_size: np.ndarray,
                     fixed: np.ndarray, bits: int) -> np.ndarray:
    """One uint8 pass along ``axis``: output i sums ``x[index_min[i] + j] * fixed[i, j]`` for
    ``j < index_size[i]`` in integers, then rounds, shifts and clamps to 0..255."""
    n_in = x.shape[axis]
    xm = np.moveaxis(x, axis, -1).astype(np.int32)
    acc = np.full(xm.shape[:-1] + (len(index_min),), 1 << (bits - 1), dtype=np.int64)
    for j in range(fixed.shape[1]):
        used = j < index_size  # taps past index_size carry no pixel
        if not used.any():
            break
        src = np.minimum(index_min + j, n_in - 1)
        acc += xm[..., src] * np.where(used, fixed[:, j], 0)
    out = np.clip(acc >> bits, 0, 255).astype(np.uint8)
    return np.moveaxis(out, -1, axis)


def _pass(x: np.ndarray, axis: int, n_out: int, align_corners: bool, scale: float | None,
          taps: int) -> np.ndarray:
    """Resample uint8 ``x`` along ``axis`` to ``n_out`` in fixed point."""
    index_min, index_size, fixed, bits = _int16_weights(x.shape[axis], n_out, align_corners,
                                                        scale, taps)
    return fixed_point_pass(x, axis, index_min, index_size, fixed, bits)


def resample_uint8(x: np.ndarray, out_size: list[int], align_corners: bool,
                   scales: list[Any], cubic: bool) -> np.ndarray:
    """Resample the last two dims of uint8 ``x`` (N, C, H, W) to ``out_size`` like torch."""
    taps = 4 if cubic else 2
    nd = len(out_size)
    if tuple(x.shape[-nd:]) == tuple(out_size):
        return np.array(x, copy=True)
    for k in reversed(range(nd)):  # width first, then the dims before it
        axis = x.ndim - nd + k
        if x.shape[axis] != out_size[k]:
            s = scales[k]
            x = _pass(x, axis, out_size[k], align_corners,
                      None if s is None or (isinstance(s, float) and math.isnan(s)) else s,
                      taps)
    return np.ascontiguousarray(x)
