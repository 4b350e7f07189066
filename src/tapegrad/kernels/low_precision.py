"""float32 <-> float16/bfloat16 conversions of arrays, rounded as torch rounds them.

``widen`` (exact) and ``narrow`` (to nearest, ties to even) are the two casts of every
low-precision computation: the registry widens an op's operands and narrows its result
(ops/low_precision.py), and the backward engine rounds a float32 gradient to its float16 or
bfloat16 input's dtype with ``cast``. They work on NumPy arrays only, below the Tensor and the
graph, so that every layer above can use them.
"""

from __future__ import annotations

import numpy as np

_F32 = np.dtype(np.float32)


def widen(a: np.ndarray) -> np.ndarray:
    """A float16 or bfloat16 array as float32 (exact), C-contiguous. bfloat16 is float32's
    upper half, so a large one is widened by shifting its bits (one pass of NumPy's integer
    loop, several times faster than ml_dtypes' cast); a small one by the cast, whose single
    call costs less."""
    if a.dtype.char == "E" and a.size > _SMALL:
        if not a.flags.c_contiguous:
            a = np.ascontiguousarray(a)
        out = np.left_shift(a.view(np.uint16), 16, dtype=np.uint32)
        return out.view(_F32)
    return a.astype(_F32, order="C")


def narrow(a: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """A float32 array rounded to float16 or bfloat16 (to nearest, ties to even), the
    inverse of ``widen``: a large bfloat16 one on its bits (``_round_bf16``), anything else
    by NumPy's cast. Keeps the layout of a contiguous array."""
    if dtype.char == "E" and a.size > _LARGE:
        if a.flags.c_contiguous:
            return _round_bf16(a, dtype)
        if a.flags.f_contiguous:
            return _round_bf16(a.T, dtype).T
    if dtype.char == "e":  # float16 overflow becomes inf without a warning, as in torch
        with np.errstate(over="ignore"):
            return a.astype(dtype)
    return a.astype(dtype)


def cast(a: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``a`` converted between float32 and a 16-bit float type (rounded to nearest even)."""
    if dtype == _F32:
        return widen(a)
    return narrow(a.astype(_F32, copy=False), dtype)


# Below _SMALL elements a single cast call is cheaper than the bit operations; above _LARGE the
# bit operations beat ml_dtypes' float32 -> bfloat16 cast (each NumPy call costs a few
# microseconds, each element of ml_dtypes' cast about twice what the seven integer passes cost:
# measured alone 54 against 64 us at 32K elements, 136 against 230 us at 128K; inside a training
# step, where the arrays are fresh, no threshold between 24K and 64K measured better than another).
_SMALL = 4096
_LARGE = 32768


def _round_bf16(x: np.ndarray, low: np.dtype) -> np.ndarray:
    """A C-contiguous float32 array rounded to bfloat16 on its bits: to nearest, ties to even,
    is adding 0x7FFF plus the lowest bit that stays, then dropping the lower 16 bits
    (u + 0x7FFF + ((u >> 16) & 1)) >> 16; overflow carries into the exponent and gives inf.
    A NaN becomes the quiet NaN 0x7FC0 with its sign, as ml_dtypes' cast gives."""
    u = x.reshape(-1).view(np.uint32)
    t = u >> 16
    t &= 1
    t += u
    t += 0x7FFF
    t >>= 16
    bits = t.astype(np.uint16)
    if np.isnan(np.maximum.reduce(u.view(_F32))):  # (a maximum is NaN when any element is)
        nan = np.isnan(x.reshape(-1))
        bits[nan] = np.where(u[nan] >> 31 == 1, 0xFFC0, 0x7FC0)
    return bits.view(low).reshape(x.shape)
