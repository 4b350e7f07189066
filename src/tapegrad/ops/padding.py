"""Padding: ``constant_pad_nd``, and the reflection, replication and circular pads as index
gathers whose backward scatter-adds (also the nearest-neighbour upsampling of ``resampling``).
"""


from __future__ import annotations

from typing import Any

import numpy as np

from .._tensor import Tensor
from ._registry import defop
from .nn_common import _backend, _linked, _unpack

# ---------------------------------------------------------------------------------------------
# Padding
# ---------------------------------------------------------------------------------------------

def _pad_pairs(pad: tuple, ndim: int) -> list:
    """torch's flat pad list (last dim first) as (before, after) per dim of an ndim array."""
    pairs = [(0, 0)] * ndim
    for i in range(len(pad) // 2):
        pairs[ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    return pairs


@defop("constant_pad_nd", node="ConstantPadNdBackward0")
def _constant_pad(x: np.ndarray, *, pad: tuple, value: Any) -> np.ndarray:
    pairs = _pad_pairs(pad, x.ndim)
    crop = tuple(slice(max(-lo, 0), n - max(-hi, 0))
                 for (lo, hi), n in zip(pairs, x.shape, strict=True))
    x = x[crop]
    grow = [(max(lo, 0), max(hi, 0)) for lo, hi in pairs]
    if not any(lo or hi for lo, hi in grow):
        return x.copy()
    if x.dtype == np.bool_:
        value = bool(value)
    elif x.dtype.kind in "iu":
        value = int(value)
    return np.pad(x, grow, mode="constant", constant_values=value)


@_constant_pad.backward
def constant_pad_backward(ctx: Any, grad: Tensor) -> tuple:
    # the inverse crop: pad the gradient by -pad with 0
    neg = tuple(-p for p in ctx.params["pad"])
    B = _backend()
    return (B.out(B.op(_constant_pad, B.val(grad) if B.tensors else grad._data, pad=neg,
                       value=0)),)


def _take_dims(x: np.ndarray, index: tuple) -> np.ndarray:
    k = len(index)
    for i, idx in enumerate(index):
        x = np.take(x, idx, axis=x.ndim - k + i)
    return x


def gather_pad_backward(ctx: Any, grad: Tensor) -> tuple:  # scatter-add back: one-hot products
    B, _, g = _unpack(ctx, grad)
    index = ctx.params["index"]
    shape = ctx.input_shapes[0]
    k = len(index)
    for i, idx in enumerate(index):
        axis = len(shape) - k + i
        onehot = (idx[:, None] == np.arange(shape[axis])[None, :]).astype(grad._data.dtype)
        g = B.movedim(B.matmul(B.movedim(g, axis, -1), B.const(onehot)), -1, axis)
    if not B.tensors:
        g = np.ascontiguousarray(g)
    return (B.out(g),)


def _gather_pad_entry(name: str, node: str) -> Any:
    entry = defop(name, node=node, save=(0,) if "pad" in name else ())(
        lambda x, *, index: _take_dims(x, index))
    entry.backward(gather_pad_backward)
    if "pad" in name:  # torch's pad backward takes the input; upsampling's does not
        _linked(entry)
    return entry


_GATHER_PADS = {
    (mode, k): _gather_pad_entry(f"{mode}_pad{k}d", f"{mode.capitalize()}Pad{k}DBackward0")
    for mode in ("reflection", "replication") for k in (1, 2, 3)
}
