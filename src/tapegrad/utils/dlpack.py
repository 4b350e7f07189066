"""DLPack: hand a tensor's memory to another array library, or take one's, without a copy.

DLPack is the protocol NumPy, PyTorch, JAX, CuPy and others share for zero-copy exchange. A
tapegrad tensor is a NumPy array underneath, so both directions go through NumPy's own
implementation of the protocol:

* export: ``Tensor.__dlpack__`` -> ``ndarray.__dlpack__`` of the tensor's array, which puts the
  array's pointer, shape and strides in a capsule the consumer (``torch.from_dlpack``,
  ``np.from_dlpack``, ...) wraps;
* import: ``from_dlpack(obj)`` -> ``np.from_dlpack(obj)`` (an array on the producer's memory)
  -> a tapegrad tensor on that array.

Writes through either side are seen by the other. tapegrad computes on the CPU, so only CPU
memory is exchanged. bfloat16 cannot cross: NumPy's DLPack knows no bfloat16 type.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _device, _dtype
from .._creation import _new
from .._device import DLDeviceType
from .._tensor import Tensor

__all__ = ["DLDeviceType", "from_dlpack", "to_dlpack"]




class _Capsule:
    """Lends a bare DLPack capsule (what ``to_dlpack`` returns) the ``__dlpack__`` protocol
    that ``np.from_dlpack`` asks for."""

    __slots__ = ("capsule",)

    def __init__(self, capsule: Any) -> None:
        self.capsule = capsule

    def __dlpack__(self, stream: Any = None, **kwargs: Any) -> Any:
        return self.capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return (int(DLDeviceType.kDLCPU), 0)


_INVALID_CAPSULE = (
    "from_dlpack received an invalid capsule. Note that DLTensor capsules can be consumed only "
    "once, so you might have already constructed a tensor from it once."
)


def from_dlpack(ext_tensor: Any, *, device: Any = None, copy: bool | None = None) -> Tensor:
    """A tapegrad tensor on the memory of ``ext_tensor``: any object with ``__dlpack__``
    (a NumPy array, a PyTorch or JAX tensor, another tapegrad tensor) or a DLPack capsule.

    The tensor shares memory with the source unless ``copy=True`` (or the source is
    read-only, which a tapegrad tensor cannot be: then the values are copied).

    Example:
        >>> import numpy as np
        >>> import tapegrad as torch
        >>> a = np.arange(3.0)
        >>> t = torch.from_dlpack(a)
        >>> a[0] = 7.0
        >>> t
        tensor([7., 1., 2.], dtype=torch.float64)
    """
    if device is not None:
        _device.check(device, factory=False)
    source = ext_tensor
    if not hasattr(ext_tensor, "__dlpack__"):
        if type(ext_tensor).__name__ != "PyCapsule":
            raise RuntimeError(_INVALID_CAPSULE)
        source = _Capsule(ext_tensor)
    try:
        array = np.from_dlpack(source) if copy is None else np.from_dlpack(source, copy=copy)
    except (ValueError, TypeError) as exc:
        if isinstance(source, _Capsule):  # a capsule consumed before
            raise RuntimeError(_INVALID_CAPSULE) from exc
        raise
    _dtype.from_numpy_dtype(array.dtype)  # torch's TypeError for a dtype it has not
    if not array.flags.writeable:
        array = array.copy()
    return _new(array)


def to_dlpack(tensor: Tensor) -> Any:
    """A DLPack capsule over ``tensor``'s memory, for a consumer's ``from_dlpack``
    (``torch.utils.dlpack.to_dlpack``; most libraries now take the tensor itself)."""
    return tensor.__dlpack__()
