"""What the names inside a torch checkpoint's pickle stand for, in tapegrad.

A pickle written by ``torch.save`` names torch's objects: ``torch._utils._rebuild_tensor_v2``
rebuilds a tensor from a storage, ``torch.FloatStorage`` is a storage type, ``torch.float16`` a
dtype, ``torch.Size`` a shape. :func:`torch_globals` maps each name torch's ``weights_only``
loader allows to the tapegrad object that plays its part; both of tapegrad's unpicklers look
names up there.

A storage is read from the archive as one flat NumPy array (:class:`Storage`); every tensor
built on it is a strided view of that array, so tensors that shared a storage when saved
share memory when loaded, as in torch. Every offset, size and stride is checked against the
storage before the view is made: a file cannot make tapegrad read memory outside it.
"""

from __future__ import annotations

import codecs
import collections
from typing import Any

import numpy as np

from .. import _dtype
from .._device import device as device_type
from .._layout import strided
from .._legacy import TYPES as LEGACY_TYPES
from .._tensor import CPU, Size, Tensor
from ..nn import Parameter
from ..nn.parameter import _wrap
from ._errors import CorruptCheckpointError, UnsupportedCheckpointError

__all__ = ["Storage", "StorageType", "UnsupportedDtype", "torch_globals", "dtype_of",
           "STORAGE_NAMES"]

# torch's legacy storage classes, by the dtype whose elements they hold
STORAGE_NAMES = {
    "float64": "DoubleStorage", "float32": "FloatStorage", "float16": "HalfStorage",
    "bfloat16": "BFloat16Storage", "int64": "LongStorage", "int32": "IntStorage",
    "int16": "ShortStorage", "int8": "CharStorage", "uint8": "ByteStorage",
    "bool": "BoolStorage", "complex64": "ComplexFloatStorage",
    "complex128": "ComplexDoubleStorage",
    "qint8": "QInt8Storage", "qint32": "QInt32Storage", "quint8": "QUInt8Storage",
    "quint4x2": "QUInt4x2Storage", "quint2x4": "QUInt2x4Storage",
}

# every dtype name torch 2.13 can pickle (the ones tapegrad lacks load as UnsupportedDtype)
_TORCH_DTYPES = [
    "float64", "float32", "float16", "int64", "int32", "int16", "int8", "uint8", "bool",
    "bfloat16", "complex128", "complex64", "qint8", "qint32", "quint8", "quint4x2", "quint2x4",
    "float8_e4m3fn", "complex32", "bits2x4", "float8_e5m2fnuz", "bits4x2", "uint64", "uint32",
    "float8_e4m3fnuz", "bits8", "uint16", "bits16", "float8_e8m0fnu", "float8_e5m2",
    "bits1x8", "float4_e2m1fn_x2", *[f"uint{i}" for i in range(1, 8)],
    *[f"int{i}" for i in range(1, 8)],
]


class UnsupportedDtype:
    """A torch dtype tapegrad does not have (``torch.uint16``, ``torch.float8_e4m3fn``, ...):
    it loads as this placeholder, and a tensor of it is refused with a clear error."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    def refuse(self) -> UnsupportedCheckpointError:
        have = ", ".join(d.name for d in _dtype.ALL)
        return UnsupportedCheckpointError(
            f"the checkpoint holds a tensor of dtype torch.{self.name}, which tapegrad does not "
            f"have (tapegrad's dtypes: {have}); convert it in PyTorch (for example "
            f"tensor.to(torch.float32)) before saving"
        )


def dtype_of(name: str) -> Any:
    """The tapegrad dtype torch calls ``torch.<name>`` (an :class:`UnsupportedDtype` if none)."""
    if name == "bool":
        return _dtype.bool_
    if name == "bfloat16" and _dtype.bfloat16 is not None:
        return _dtype.bfloat16
    found = getattr(_dtype, name, None)
    return found if isinstance(found, _dtype.dtype) else UnsupportedDtype(name)


class StorageType:
    """``torch.FloatStorage`` and friends as they appear in a pickle: the dtype of a storage."""

    __slots__ = ("dtype", "name")

    def __init__(self, name: str, dtype: Any) -> None:
        self.name = name
        self.dtype = dtype  # a tapegrad dtype, an UnsupportedDtype, or None for UntypedStorage

    def __repr__(self) -> str:
        return f"StorageType(dtype={self.dtype!r})" if self.dtype is not None else (
            "<class 'torch.storage.UntypedStorage'>")


class Storage:
    """One storage read from a checkpoint: a flat array of its elements and where it lived.

    ``map_location`` callables receive it (as torch's receive an UntypedStorage) and return
    it, or its ``cpu()``."""

    __slots__ = ("array", "location")

    def __init__(self, array: np.ndarray, location: str) -> None:
        self.array = array
        self.location = location

    @property
    def device(self) -> Any:
        return CPU

    def nbytes(self) -> int:
        return int(self.array.nbytes)

    def size(self) -> int:
        return int(self.array.size)

    def cpu(self) -> Storage:
        return self

    def cuda(self, *args: Any, **kwargs: Any) -> Storage:
        raise AssertionError("Torch not compiled with CUDA enabled")

    def __repr__(self) -> str:
        return f"<tapegrad checkpoint storage of {self.array.size} {self.array.dtype} elements>"


# ---------------------------------------------------------------------------------------------
# the rebuild functions torch's pickles call
# ---------------------------------------------------------------------------------------------


def _as_ints(value: Any, what: str) -> tuple[int, ...]:
    if not isinstance(value, (tuple, list)) or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in value
    ):
        raise TypeError(f"the checkpoint gives a tensor {what} that is not a tuple of ints: "
                        f"{value!r}")
    return tuple(value)


def _view(storage: Any, offset: Any, size: Any, stride: Any, dtype: Any = None) -> np.ndarray:
    """The strided view of ``storage`` that torch's ``set_(storage, offset, size, stride)``
    makes, after checking that every element it reaches lies inside the storage."""
    if not isinstance(storage, Storage):
        raise TypeError(f"the checkpoint rebuilds a tensor from {type(storage).__name__}, "
                        "not from a storage")
    flat = storage.array
    if dtype is not None:  # an untyped storage (bytes) viewed as dtype elements
        if isinstance(dtype, UnsupportedDtype):
            raise dtype.refuse()
        np_dtype = dtype.np
        if flat.nbytes % np_dtype.itemsize:
            raise CorruptCheckpointError(
                f"a storage of {flat.nbytes} bytes cannot hold {dtype} elements")
        flat = flat.view(np_dtype)
    size = _as_ints(size, "size")
    stride = _as_ints(stride, "stride")
    if not isinstance(offset, int) or isinstance(offset, bool):
        raise TypeError(f"the checkpoint gives a storage offset that is not an int: {offset!r}")
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape: sizes {list(size)}, "
                           f"strides {list(stride)}")
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    if any(s < 0 for s in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension: {list(size)}")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and "
                           f"strides={list(stride)}")
    reach = sum((n - 1) * s for n, s in zip(size, stride, strict=True))
    needed = 0 if 0 in size else offset + 1 + reach
    if needed > flat.size:
        raise CorruptCheckpointError(
            f"the checkpoint describes a tensor of size {list(size)}, stride {list(stride)} and "
            f"storage offset {offset}, which needs {needed} elements, but its storage holds "
            f"{flat.size}: the file is corrupted or was crafted")
    item = flat.itemsize
    start = flat[offset:] if 0 not in size else np.empty(0, dtype=flat.dtype)  # (no elements)
    return np.lib.stride_tricks.as_strided(
        start, shape=size, strides=tuple(s * item for s in stride), writeable=True)


def _tensor(array: np.ndarray, requires_grad: Any) -> Tensor:
    t = Tensor._make(array)
    if requires_grad:
        t.requires_grad_(True)
    return t


def rebuild_tensor(storage: Any, storage_offset: Any, size: Any, stride: Any) -> Tensor:
    """``torch._utils._rebuild_tensor``."""
    return _tensor(_view(storage, storage_offset, size, stride), False)


def rebuild_tensor_v2(storage: Any, storage_offset: Any, size: Any, stride: Any,
                      requires_grad: Any, backward_hooks: Any, metadata: Any = None) -> Tensor:
    """``torch._utils._rebuild_tensor_v2``: the tensor of every torch checkpoint."""
    return _tensor(_view(storage, storage_offset, size, stride), requires_grad)


def rebuild_tensor_v3(storage: Any, storage_offset: Any, size: Any, stride: Any,
                      requires_grad: Any, backward_hooks: Any, dtype: Any,
                      metadata: Any = None) -> Tensor:
    """``torch._utils._rebuild_tensor_v3``: a tensor on an untyped storage (the dtypes with no
    legacy storage class: uint16, float8, ...)."""
    return _tensor(_view(storage, storage_offset, size, stride, dtype), requires_grad)


def _parameter(data: Any, requires_grad: Any) -> Any:
    if not isinstance(data, Tensor):
        raise TypeError(f"the checkpoint rebuilds a Parameter from {type(data).__name__}")
    return Parameter(data, requires_grad=bool(requires_grad))


def rebuild_parameter(data: Any, requires_grad: Any, backward_hooks: Any) -> Any:
    """``torch._utils._rebuild_parameter``."""
    return _parameter(data, requires_grad)


def _set_state(obj: Any, state: Any) -> None:
    if isinstance(state, tuple) and len(state) == 2:
        state, slots = state
        for k, v in (slots or {}).items():
            setattr(obj, k, v)
    for k, v in (state or {}).items():
        setattr(obj, k, v)


def rebuild_parameter_with_state(data: Any, requires_grad: Any, backward_hooks: Any,
                                 state: Any) -> Any:
    """``torch._utils._rebuild_parameter_with_state``: a Parameter with extra attributes."""
    param = _parameter(data, requires_grad)
    _set_state(param, state)
    return param


def rebuild_from_type_v2(func: Any, new_type: Any, args: Any, state: Any) -> Any:
    """``torch._tensor._rebuild_from_type_v2``: a tensor subclass, or a tensor with attributes.

    ``func`` and ``new_type`` came out of the same allow-list as every other name."""
    out = func(*args)
    if type(out) is not new_type:
        if not (isinstance(new_type, type) and issubclass(new_type, Tensor)):
            raise TypeError(f"the checkpoint rebuilds a tensor as {new_type!r}, not a Tensor type")
        if new_type is not Tensor:
            out = _wrap(new_type, out)
    _set_state(out, state)
    return out


def rebuild_device_tensor_from_cpu_tensor(data: Any, dtype: Any, device: Any,
                                          requires_grad: Any) -> Tensor:
    """``torch._utils._rebuild_device_tensor_from_cpu_tensor``."""
    if not isinstance(data, Tensor):
        raise TypeError(f"expected a tensor, got {type(data).__name__}")
    return _tensor(data._data.astype(dtype.np, copy=False), requires_grad)


def rebuild_device_tensor_from_numpy(data: Any, dtype: Any, device: Any,
                                     requires_grad: Any) -> Tensor:
    """``torch._utils._rebuild_device_tensor_from_numpy``."""
    return _tensor(np.asarray(data).astype(dtype.np), requires_grad)


def _refusing(what: str, name: str) -> Any:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise UnsupportedCheckpointError(
            f"the checkpoint holds {what} (torch's {name}), which tapegrad does not support")

    refuse.__name__ = refuse.__qualname__ = name.rsplit(".", 1)[-1]
    return refuse


def get_layout(name: Any) -> Any:
    """``torch.serialization._get_layout``: ``torch.strided`` (tapegrad has no other layout)."""
    if name != "torch.strided":
        raise UnsupportedCheckpointError(
            f"the checkpoint holds a tensor layout {name!r}; tapegrad has only torch.strided")
    return strided


# ---------------------------------------------------------------------------------------------
# the allow-list
# ---------------------------------------------------------------------------------------------

_GLOBALS: dict[str, Any] = {}

_TENSOR_TYPES = {
    "Double": "float64", "Float": "float32", "Half": "float16", "BFloat16": "bfloat16",
    "Long": "int64", "Int": "int32", "Short": "int16", "Char": "int8", "Byte": "uint8",
    "Bool": "bool",
}


def torch_globals() -> dict[str, Any]:
    """torch's ``weights_only`` allow-list: ``"module.name"`` -> the tapegrad object."""
    if _GLOBALS:
        return _GLOBALS
    g: dict[str, Any] = {
        "collections.OrderedDict": collections.OrderedDict,
        "collections.Counter": collections.Counter,
        "torch.nn.parameter.Parameter": Parameter,
        "torch.serialization._get_layout": get_layout,
        "torch.Size": Size,
        "torch.Tensor": Tensor,
        "torch.device": device_type,
        "_codecs.encode": codecs.encode,  # bytes, under pickle protocol 2
        "builtins.bytearray": bytearray,
        "builtins.set": set,
        "builtins.complex": complex,
    }
    for name in _TORCH_DTYPES:
        g[f"torch.{name}"] = dtype_of(name)
    for prefix in _TENSOR_TYPES:  # the legacy tensor types, where tapegrad has them
        for module in ("torch", "torch.cuda", "torch.sparse", "torch.cuda.sparse"):
            key = f"{module}.{prefix}Tensor"
            found = LEGACY_TYPES.get(f"{prefix}Tensor") if module == "torch" else None
            g[key] = found if found is not None else _refusing(f"a {key}", key)
    for name, storage in STORAGE_NAMES.items():
        for module in ("torch", "torch.cuda"):
            if module == "torch" or not name.startswith("q"):
                g[f"{module}.{storage}"] = StorageType(storage, dtype_of(name))
    g["torch.storage.UntypedStorage"] = StorageType("UntypedStorage", None)
    g["torch.storage.TypedStorage"] = _refusing("a TypedStorage", "torch.storage.TypedStorage")
    for scheme in ("per_tensor_affine", "per_tensor_symmetric", "per_channel_affine",
                   "per_channel_symmetric", "per_channel_affine_float_qparams"):
        g[f"torch.{scheme}"] = _refusing("a quantization scheme", f"torch.{scheme}")
    g.update({
        "torch._utils._rebuild_tensor": rebuild_tensor,
        "torch._utils._rebuild_tensor_v2": rebuild_tensor_v2,
        "torch._utils._rebuild_tensor_v3": rebuild_tensor_v3,
        "torch._utils._rebuild_parameter": rebuild_parameter,
        "torch._utils._rebuild_parameter_with_state": rebuild_parameter_with_state,
        "torch._utils._rebuild_device_tensor_from_cpu_tensor":
            rebuild_device_tensor_from_cpu_tensor,
        "torch._utils._rebuild_device_tensor_from_numpy": rebuild_device_tensor_from_numpy,
        "torch._tensor._rebuild_from_type_v2": rebuild_from_type_v2,
    })
    for name, what in (("_rebuild_qtensor", "a quantized tensor"),
                       ("_rebuild_sparse_tensor", "a sparse tensor"),
                       ("_rebuild_meta_tensor_no_storage", "a tensor on the meta device"),
                       ("_rebuild_nested_tensor", "a nested tensor"),
                       ("_rebuild_wrapper_subclass", "a tensor subclass without storage")):
        g[f"torch._utils.{name}"] = _refusing(what, f"torch._utils.{name}")
    _GLOBALS.update(g)
    return _GLOBALS
