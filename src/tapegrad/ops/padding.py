"""Padding: ``constant_pad_nd``, and the reflection, replication and circular pads as index
gathers whose backward scatter-adds (also the nearest-neighbour upsampling of ``resampling``);
``pad``, torch's ``F.pad`` over them (used by nn.functional and by the spectral ops).
"""


from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .._tensor import Tensor
from ._registry import defop
from .nn_common import _linked, _Tensors

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
    return (_constant_pad(grad, pad=unpad(ctx), value=0),)


def unpad(ctx: Any) -> tuple:
    """constant_pad_nd's pad for the inverse crop: -pad."""
    return tuple(-p for p in ctx.params["pad"])


def _take_dims(x: np.ndarray, index: tuple) -> np.ndarray:
    k = len(index)
    for i, idx in enumerate(index):
        x = np.take(x, idx, axis=x.ndim - k + i)
    return x


def scatter_back(B: Any, ctx: Any, g: Any, dtype: np.dtype) -> Any:
    """A gather's gradient added back to the positions it took, as one-hot products along each
    gathered dim, in the backend ``B`` (``_Tensors`` for the rule, ``_Arrays`` for its fast
    path in ops/fast_paths.py)."""
    index = ctx.params["index"]
    shape = ctx.input_shapes[0]
    k = len(index)
    for i, idx in enumerate(index):
        axis = len(shape) - k + i
        onehot = (idx[:, None] == np.arange(shape[axis])[None, :]).astype(dtype)
        g = B.movedim(B.matmul(B.movedim(g, axis, -1), B.const(onehot)), -1, axis)
    return g


def gather_pad_backward(ctx: Any, grad: Tensor) -> tuple:  # scatter-add back: one-hot products
    return (scatter_back(_Tensors, ctx, grad, grad._data.dtype),)


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


# F.pad: the modes over the entries above, with torch's checks and messages
_PAD_SUPPORT = (
    "Supported combinations for non-constant padding:\n"
    "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
    "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
    "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)"
)


def pad(input: Tensor, pad: Sequence[int], mode: str = "constant", value: float | None = None
        ) -> Tensor:
    """Pad the last ``len(pad) // 2`` dims (``pad`` lists the last dim first: (left, right,
    top, bottom, ...)); negative pads crop. Modes: constant, reflect, replicate, circular."""
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) > input.ndim * 2:
        raise RuntimeError(
            "Padding length should be less than or equal to two times the input dimension but "
            f"got padding length {len(pad)} and input of dimension {input.ndim}"
        )
    if mode == "constant":
        return _checked_constant_pad(input, pad, 0.0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise RuntimeError(f"Padding mode \"{mode}\" doesn't take in value argument")
    k = len(pad) // 2
    if k not in (1, 2, 3) or input.ndim not in (k + 1, k + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {input.ndim}D input tensor.\n"
            + _PAD_SUPPORT
        )
    if mode == "circular":
        return _circular_pad(input, pad)
    return _gather_pad_mode(input, pad, mode, k)


def _checked_constant_pad(input: Tensor, pad: tuple, value: Any) -> Tensor:
    pairs = _pad_pairs(pad, input.ndim)
    for d, (lo, hi) in enumerate(pairs):
        n = input.shape[d]
        if n + lo + hi < 0:
            raise RuntimeError("narrow(): length must be non-negative.")
    return _constant_pad(input, pad=pad, value=value)


def _gather_pad_mode(input: Tensor, pad: tuple, mode: str, k: int) -> Tensor:
    index = []
    spatial = input.shape[input.ndim - k:]
    batch_dims = input.ndim - k
    for i in range(k):
        n = spatial[i]
        lo, hi = pad[2 * (k - 1 - i)], pad[2 * (k - 1 - i) + 1]
        if mode == "reflect":
            if lo >= n or hi >= n:
                dim = input.ndim - 1 - (k - 1 - i)
                raise RuntimeError(
                    f"Argument #4: Padding size should be less than the corresponding input "
                    f"dimension, but got: padding ({lo}, {hi}) at dimension {dim} of input "
                    f"{list(input.shape)}"
                )
            pos = np.arange(-lo, n + hi)
            pos = np.abs(pos)
            pos = np.where(pos >= n, 2 * (n - 1) - pos, pos)
        else:
            if 0 in tuple(input.shape)[1 if input.ndim == k + 2 else 0:]:
                raise RuntimeError(
                    f"Expected {'2D or 3D' if k == 1 else '3D or 4D' if k == 2 else '4D or 5D'}"
                    " (batch mode) tensor with possibly 0 batch size and other non-zero "
                    f"dimensions for input, but got: {list(input.shape)}"
                )
            pos = np.clip(np.arange(-lo, n + hi), 0, n - 1)
        index.append(pos.astype(np.int64))
    del batch_dims
    entry = _GATHER_PADS[("reflection" if mode == "reflect" else "replication", k)]
    return entry(input, index=tuple(index))


def _circular_pad(input: Tensor, pad: tuple) -> Tensor:
    """torch's circular padding: copy the input into place, then copy the wrapped borders from
    the output itself (the result's history is a chain of CopySlices, as in torch)."""
    k = len(pad) // 2
    nd = input.ndim
    in_shape = tuple(input.shape)
    out_shape = list(in_shape)
    for i in range(k):
        d = nd - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        size = in_shape[d]
        out_shape[d] = size + lo + hi
        if lo > size or hi > size:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if out_shape[d] < 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension")
    # the output buffer, made by an op so that a compiled call makes it afresh each time (its
    # values are all overwritten below)
    out = _constant_pad(input.detach(), pad=pad, value=0.0)
    out_slice, in_slice = out, input
    for i in range(k):
        d = nd - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        out_slice = out_slice.narrow(d, max(lo, 0), out_shape[d] - max(lo, 0) - max(hi, 0))
        in_slice = in_slice.narrow(d, max(-lo, 0), in_shape[d] - max(-lo, 0) - max(-hi, 0))
    out_slice.copy_(in_slice)
    for i in range(k):
        d = nd - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        if lo > 0:
            src = out.narrow(d, out_shape[d] - lo - max(hi, 0), lo)
            out.narrow(d, 0, lo).copy_(src)
        if hi > 0:
            src = out.narrow(d, max(lo, 0), hi)
            out.narrow(d, out_shape[d] - hi, hi).copy_(src)
    return out
