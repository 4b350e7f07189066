"""Resampling: separable linear maps along the spatial dims (adaptive average pooling and
linear, bilinear, trilinear and bicubic upsampling, one matrix per dim), nearest-neighbour
upsampling as an index gather, and ``pixel_shuffle``/``pixel_unshuffle`` (permutations).
"""


from __future__ import annotations

from typing import Any

import numpy as np

from .._tensor import Tensor
from ._registry import defop
from .nn_common import _linked, _Tensors
from .padding import _gather_pad_entry


def _adaptive_matrix(n: int, o: int, dtype: Any) -> np.ndarray:
    """(o, n) averaging matrix of adaptive pooling: row i covers [floor(i n/o), ceil((i+1) n/o))."""
    i = np.arange(o)
    start = (i * n) // o
    end = -((-(i + 1) * n) // o)
    cols = np.arange(n)
    inside = (cols[None, :] >= start[:, None]) & (cols[None, :] < end[:, None])
    return (inside / np.maximum(end - start, 1)[:, None]).astype(dtype)


def _separable_forward(x: np.ndarray, *, mats: tuple) -> np.ndarray:
    """Apply one (out, in) matrix along each of the last len(mats) dims."""
    k = len(mats)
    for i, m in enumerate(mats):
        ax = x.ndim - k + i
        x = np.moveaxis(np.moveaxis(x, ax, -1) @ m.T.astype(x.dtype, copy=False), -1, ax)
    return np.ascontiguousarray(x)


def transposed_maps(B: Any, ctx: Any, g: Any, dtype: np.dtype) -> Any:
    """A separable map's gradient, the transposed matrices applied along each dim, in the
    backend ``B`` (``_Tensors`` for the rule, ``_Arrays`` for its fast path in
    ops/fast_paths.py)."""
    mats = ctx.params["mats"]
    k = len(mats)
    nd = len(ctx.input_shapes[0])
    for i, m in enumerate(mats):
        ax = nd - k + i
        g = B.movedim(B.matmul(B.movedim(g, ax, -1), B.const(m.astype(dtype))), -1, ax)
    return g


def separable_resample_backward(ctx: Any, grad: Tensor) -> tuple:
    # a linear map: the transposed matrices
    return (transposed_maps(_Tensors, ctx, grad, grad._data.dtype),)


def _separable_entry(name: str, node: str) -> Any:
    adaptive = name.startswith("adaptive")  # torch's backward takes the input; upsampling's not
    entry = defop(name, node=node, save=(0,) if adaptive else ())(_separable_forward)
    entry.backward(separable_resample_backward)
    if adaptive:
        _linked(entry)
    return entry


# linear maps along each spatial dim: adaptive average pooling and (bi/tri)linear and bicubic
# interpolation, all one matrix per dim; nearest interpolation is an index gather
SEPARABLE = {
    name: _separable_entry(name, node) for name, node in (
        ("adaptive_avg_pool2d", "AdaptiveAvgPool2DBackward0"),
        ("adaptive_avg_pool3d", "AdaptiveAvgPool3DBackward0"),
        ("upsample_linear1d", "UpsampleLinear1DBackward0"),
        ("upsample_bilinear2d", "UpsampleBilinear2DBackward0"),
        ("upsample_trilinear3d", "UpsampleTrilinear3DBackward0"),
        ("upsample_bicubic2d", "UpsampleBicubic2DBackward0"),
    )
}
GATHERS = {
    (mode, k): _gather_pad_entry(
        f"upsample_{mode}{k}d",
        f"Upsample{'NearestExact' if mode == 'nearest_exact' else 'Nearest'}{k}DBackward0")
    for mode in ("nearest", "nearest_exact") for k in (1, 2, 3)
}


# ---------------------------------------------------------------------------------------------
# Pixel shuffle
# ---------------------------------------------------------------------------------------------

def _shuffle_perm(n: int, shuffle: bool) -> tuple:
    head = tuple(range(n))
    if shuffle:  # (c, r, r, h, w) -> (c, h, r, w, r)
        return head + (n, n + 3, n + 1, n + 4, n + 2)
    return head + (n, n + 2, n + 4, n + 1, n + 3)  # (c, h, r, w, r) -> (c, r, r, h, w)


@defop("pixel_shuffle", node="PixelShuffleBackward0")
def _pixel_shuffle(x: np.ndarray, *, r: int) -> np.ndarray:
    lead, (c, h, w) = x.shape[:-3], x.shape[-3:]
    y = x.reshape(lead + (c // (r * r), r, r, h, w)).transpose(_shuffle_perm(len(lead), True))
    return np.ascontiguousarray(y).reshape(lead + (c // (r * r), h * r, w * r))


@defop("pixel_unshuffle", node="PixelUnshuffleBackward0")
def _pixel_unshuffle(x: np.ndarray, *, r: int) -> np.ndarray:
    lead, (c, h, w) = x.shape[:-3], x.shape[-3:]
    y = x.reshape(lead + (c, h // r, r, w // r, r)).transpose(_shuffle_perm(len(lead), False))
    return np.ascontiguousarray(y).reshape(lead + (c * r * r, h // r, w // r))


@_pixel_shuffle.backward
def pixel_shuffle_backward(ctx: Any, grad: Tensor) -> tuple:  # a permutation: undo it
    return (_pixel_unshuffle(grad, r=ctx.params["r"]),)


@_pixel_unshuffle.backward
def pixel_unshuffle_backward(ctx: Any, grad: Tensor) -> tuple:  # a permutation: undo it
    return (_pixel_shuffle(grad, r=ctx.params["r"]),)
