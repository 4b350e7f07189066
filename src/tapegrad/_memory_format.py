"""Memory formats (``torch.contiguous_format``, ``torch.channels_last``, ...): the order in
which a tensor's elements are laid out in memory.

A NumPy array can have any strides, so tapegrad keeps torch's layouts as they are:

* ``contiguous_format``: row-major, the last dimension fastest (NumPy's C order);
* ``channels_last`` (4-d ``N, C, H, W``): stored as ``N, H, W, C``, the channel fastest;
  ``channels_last_3d`` the same for 5-d ``N, C, D, H, W``;
* ``preserve_format``: keep the input's strides when it is dense (no gaps, no overlap), else
  the layout its strides suggest.

What a memory format changes is only the strides (``x.stride()``), never the values: every op
reads tensors through their strides.

Example:
    >>> import tapegrad as torch
    >>> x = torch.zeros(2, 3, 4, 5).to(memory_format=torch.channels_last)
    >>> x.stride()
    (60, 1, 15, 3)
    >>> x.is_contiguous(), x.is_contiguous(memory_format=torch.channels_last)
    (False, True)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._naming import NamedConstant, public


@public("")
class memory_format(NamedConstant):
    """A memory layout, printed as ``torch.channels_last``."""

    __slots__ = ()


contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")

# the dimension orders, slowest to fastest, of the two channels-last layouts
_ORDER = {channels_last: (0, 2, 3, 1), channels_last_3d: (0, 2, 3, 4, 1)}
_RANK = {channels_last: 4, channels_last_3d: 5}


def check(fmt: Any, fname: str) -> Any:
    """``fmt`` if it is a memory format or None, else torch's argument error."""
    if fmt is None or isinstance(fmt, memory_format):
        return fmt
    raise TypeError(f"{fname}(): argument 'memory_format' must be torch.memory_format, not "
                    f"{type(fmt).__name__}")


def _check_rank(ndim: int, fmt: memory_format) -> None:
    rank = _RANK[fmt]
    if ndim != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {fmt.name} format")


def _channels_last_like(shape: tuple, strides: tuple, order: tuple) -> bool:
    """torch's ``is_channels_last_strides``: do the strides grow in the channels-last order
    (``order`` read from fastest to slowest), size-1 dims allowed anywhere, N111 excluded."""
    if strides[1] == 0:
        return False
    low = 0
    for d in reversed(order):  # fastest first: C, then W, H (D), N
        if shape[d] == 0 or strides[d] < low:
            return False
        if d == 0 and low == strides[1]:  # N, 1, 1, 1: as contiguous as it is channels-last
            return False
        low = strides[d] * shape[d] if shape[d] > 1 else strides[d]
    return True


def suggest(arr: np.ndarray) -> memory_format:
    """The layout ``arr``'s strides suggest (torch's ``suggest_memory_format``)."""
    if arr.ndim in (4, 5):
        fmt = channels_last if arr.ndim == 4 else channels_last_3d
        strides = tuple(s // arr.itemsize for s in arr.strides)
        if _channels_last_like(arr.shape, strides, _ORDER[fmt]):
            return fmt
    return contiguous_format


def is_contiguous(arr: np.ndarray, fmt: Any) -> bool:
    """Whether ``arr`` is laid out as ``fmt`` (size-1 dims' strides do not matter, as in
    torch)."""
    if fmt is None or fmt is contiguous_format or fmt is preserve_format:
        return bool(arr.flags.c_contiguous)
    if arr.ndim != _RANK[fmt]:
        return False
    expected = 1
    for d in reversed(_ORDER[fmt]):
        if arr.shape[d] != 1:
            if arr.strides[d] // arr.itemsize != expected:
                return False
            expected *= arr.shape[d]
    return True


def _dense(arr: np.ndarray) -> bool:
    """No gaps and no overlap: the elements fill exactly ``arr.size`` consecutive slots."""
    if arr.size == 0:
        return True
    expected = arr.itemsize
    for size, stride in sorted(((n, abs(s)) for n, s in zip(arr.shape, arr.strides,
                                                           strict=True) if n != 1),
                               key=lambda p: p[1]):
        if stride != expected:
            return False
        expected *= size
    return True


def empty(shape: tuple, np_dtype: Any, fmt: Any) -> np.ndarray:
    """A new uninitialised array of ``shape`` laid out as ``fmt`` (None: contiguous)."""
    if fmt is None or fmt is contiguous_format or fmt is preserve_format:
        return np.empty(shape, dtype=np_dtype)
    _check_rank(len(shape), fmt)
    order = _ORDER[fmt]
    stored = np.empty(tuple(shape[d] for d in order), dtype=np_dtype)
    return stored.transpose(np.argsort(order))


def layout_like(arr: np.ndarray, np_dtype: Any, fmt: Any) -> np.ndarray:
    """A copy of ``arr`` (cast to ``np_dtype``) laid out as ``fmt``: ``preserve_format`` (or
    None) keeps ``arr``'s strides when it is dense, else takes the layout they suggest."""
    if fmt is None or fmt is preserve_format:
        if _dense(arr) and all(s >= 0 for s in arr.strides):
            return arr.astype(np_dtype, order="K", copy=True)  # same stride order, so same strides
        fmt = suggest(arr)
    if fmt is contiguous_format:
        return np.array(arr, dtype=np_dtype, order="C", copy=True)
    out = empty(arr.shape, np_dtype, fmt)
    out[...] = arr
    return out


def restride(arr: np.ndarray, fmt: Any) -> np.ndarray:
    """``arr`` itself when it is already laid out as ``fmt`` (None: preserve), else a copy
    laid out so."""
    if fmt is None or fmt is preserve_format or is_contiguous(arr, fmt):
        return arr
    return layout_like(arr, arr.dtype, fmt)


def contiguous_layout(arr: np.ndarray, fmt: memory_format) -> memory_format | None:
    """The layout ``x.contiguous(memory_format=fmt)`` copies ``x`` into (a clone, recorded as
    ``CloneBackward0`` as torch records it: ``_tensor_methods.py``), or None when ``arr`` is
    already laid out so and ``x`` itself is the answer."""
    if fmt is preserve_format:
        fmt = suggest(arr)
    if fmt is not contiguous_format:
        _check_rank(arr.ndim, fmt)
    return None if is_contiguous(arr, fmt) else fmt


__all__ = ["memory_format", "contiguous_format", "preserve_format", "channels_last",
           "channels_last_3d", "suggest", "is_contiguous", "empty", "layout_like", "restride"]
