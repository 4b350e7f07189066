"""The factory core: the checks every tensor factory makes (``device=``, the ``*size``, the
allocation) and the factories that ops need themselves (``zeros``, ``empty``, ``zeros_like``).

The rest of the factories (``tensor``, ``ones``, ``full``, ``arange``, the other ``*_like``...)
are in ``_creation.py``, which builds them on these and gives these their public names.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _device, _dtype
from .._alloc_errors import check_sizes, out_of_memory
from .._tensor import Tensor
from ..autograd.grad_mode import _state


def _place(device: Any, pin_memory: bool = False, like: bool = False,
           copy: bool = False) -> None:
    """torch's CPU-only errors for ``device=`` (or a non-CPU default device) and
    ``pin_memory=True``; returns at once for the CPU. ``copy``: data is copied there
    (tensor, as_tensor), rather than a tensor made from nothing."""
    if device is not None or (not like and _device._default[0] is not None):
        _device.check(device, factory=not copy)
    if pin_memory:
        _device.check_pin_memory(pin_memory)


def _new(data: np.ndarray, requires_grad: bool = False) -> Tensor:
    t = Tensor._make(data)
    if requires_grad:
        if data.dtype.kind not in "fc" and not (data.dtype.kind == "V"
                                                 and data.dtype.name == "bfloat16"):
            raise RuntimeError(
                "Only Tensors of floating point and complex dtype can require gradients"
            )
        t.requires_grad_(True)
    if _state.inference:
        t._inference = True
    return t


def _size(size: tuple, fname: str = "zeros") -> tuple:
    """The ``*size`` (or one tuple) of factory ``fname``, with torch's argument-parser errors
    and its error for a negative dimension."""
    single = len(size) == 1 and isinstance(size[0], (tuple, list))
    if single:
        size = tuple(size[0])
    out = []
    for i, s in enumerate(size):
        if isinstance(s, Tensor) and s._data.ndim == 0 and s._data.dtype.kind in "iu":
            s = s.item()
        if not isinstance(s, (int, np.integer)) or isinstance(s, (bool, np.bool_)):
            name = "Tensor" if isinstance(s, Tensor) else type(s).__name__
            if i == 0 and not single:
                raise TypeError(f"{fname}(): argument 'size' (position 1) must be tuple of ints, "
                                f"not {name}")
            if i == 0:
                raise TypeError(f"{fname}(): argument 'size' (position 1) must be tuple of ints, "
                                f"but found element of type {name} at pos 0")
            raise TypeError(f"{fname}(): argument 'size' failed to unpack the object at pos "
                            f"{i + 1} with error \"type must be tuple of ints,but got {name}\"")
        if not -(1 << 63) <= s < (1 << 63):  # (torch's message has no closing quote)
            raise TypeError(f"{fname}(): argument 'size' failed to unpack the object at pos "
                            f"{i + 1} with error \"Overflow when unpacking long long")
        out.append(int(s))
    for s in out:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {out}")
    return tuple(out)


def _allocated(make: Any, shape: tuple, np_dtype: np.dtype, *args: Any) -> np.ndarray:
    """``make(shape, *args, dtype=np_dtype)`` (np.zeros, np.full...), with torch's errors for a
    size that cannot be allocated."""
    check_sizes(shape, np_dtype.itemsize)
    try:
        return make(shape, *args, dtype=np_dtype)
    except MemoryError as e:
        raise out_of_memory(e) from None


def _dt(dtype: Any) -> np.dtype:
    return (_dtype.to_dtype(dtype) if dtype is not None else _dtype.get_default_dtype()).np


def zeros(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
          layout: Any = None, pin_memory: bool = False) -> Tensor:
    """A tensor of zeros (float32 unless ``dtype`` says otherwise)."""
    _place(device, pin_memory)
    if not size:
        raise TypeError('zeros() missing 1 required positional arguments: "size"')
    try:
        shape = _size(size, "zeros")
    except RuntimeError:  # a negative dimension: zeros words it its own way
        raise RuntimeError("zeros: Dimension size must be non-negative.") from None
    return _new(_allocated(np.zeros, shape, _dt(dtype)), requires_grad)


def empty(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
          layout: Any = None, pin_memory: bool = False, memory_format: Any = None) -> Tensor:
    _place(device, pin_memory)
    return _new(_allocated(np.zeros, _size(size, "empty"), _dt(dtype)), requires_grad)


def _like_dtype(input: Tensor, dtype: Any) -> np.dtype:
    return _dtype.to_dtype(dtype).np if dtype is not None else input._data.dtype


def zeros_like(input: Tensor, *, dtype: Any = None, device: Any = None,
               requires_grad: bool = False, memory_format: Any = None, layout: Any = None,
               pin_memory: bool = False
               ) -> Tensor:
    _place(device, like=True)
    return _new(_allocated(np.zeros, input._data.shape, _like_dtype(input, dtype)),
                requires_grad)
