"""Storages: the memory under tensors, and what works on it directly (tensors made on given
strides, ``resize_``, ``set_``, memory-mapped files).

In torch a tensor is a view (sizes, strides, offset) of a *storage*, a flat block of bytes that
its views share. In tapegrad a tensor's values are a NumPy array, and the memory the array
looks at belongs to one array at the end of its ``.base`` chain (the *root*): that root's bytes
are the tensor's storage. Views, ``detach()`` and ``x.data`` share it, as in torch, so the usual
test of shared memory works::

    x.untyped_storage().data_ptr() == y.untyped_storage().data_ptr()

Data flow::

    tensor._data ──.base chain──► root array ──its bytes──► UntypedStorage (uint8, shared)
                                                        └─► TypedStorage   (x.storage(): as x.dtype)
    empty_strided / empty_permuted:  zeros of the storage size ──as_strided──► the tensor
    resize_ / set_:                  the tensor's _data replaced by a new view of a storage

Only the CPU exists here, so a storage is always on the CPU; storages are not saved by
``torch.save`` (tensors are).
"""

from __future__ import annotations

import os
import warnings
from typing import Any

import numpy as np

from . import _creation, _dtype
from . import _memory_format as mf
from ._alloc_errors import out_of_memory
from ._device import CPU
from ._device import check as check_device
from ._naming import public
from ._tensor import Size, Tensor, install_above
from .autograd.function import Function
from .autograd.grad_mode import _state as _grad_state
from .ops import shape as S
from .ops._registry import REGISTRY, defop
from .ops._views import bump_version, check_inplace

# ---------------------------------------------------------------------------------------------
# A tensor's storage: the bytes of its root array
# ---------------------------------------------------------------------------------------------


class _Bytes:
    """What ``np.asarray`` needs to see ``nbytes`` bytes at ``ptr`` as one uint8 array (the
    array keeps ``base``, the memory's owner, alive)."""

    def __init__(self, ptr: int, nbytes: int, base: Any) -> None:
        self.__array_interface__ = {"data": (ptr, False), "shape": (nbytes,), "typestr": "|u1",
                                    "version": 3}
        self.base = base


def _root(arr: np.ndarray) -> np.ndarray:
    """The array at the end of ``arr``'s ``.base`` chain: the one whose memory it views."""
    a = arr
    while True:
        b = a.base
        if isinstance(b, np.ndarray):
            a = b
        elif b is not None and isinstance(getattr(b, "base", None), np.ndarray):
            a = b.base  # as_strided's intermediate object keeps the array it views
        else:
            return a


def _extent(arr: np.ndarray) -> tuple[int, int]:
    """The first address and the byte count of the memory ``arr`` spans."""
    start = int(arr.__array_interface__["data"][0])
    if arr.size == 0:
        return start, 0
    low = high = 0
    for n, s in zip(arr.shape, arr.strides, strict=True):
        if s < 0:
            low += (n - 1) * s
        else:
            high += (n - 1) * s
    return start + low, high - low + arr.itemsize


def storage_bytes(arr: np.ndarray) -> tuple[np.ndarray, int]:
    """(the storage under ``arr`` as a shared uint8 array, ``arr``'s byte offset in it)."""
    root = _root(arr)
    start, nbytes = _extent(root)
    if nbytes == 0:
        return np.zeros(0, dtype=np.uint8), 0
    data = np.asarray(_Bytes(start, nbytes, root))
    offset = int(arr.__array_interface__["data"][0]) - start
    return data, max(0, min(offset, nbytes))


install_above(storage_bytes=storage_bytes)  # Tensor.storage_offset


def _storage_repr(items: list, info: str) -> str:
    return " " + "\n ".join(str(v) for v in items) + "\n" + info


@public(".storage")
class UntypedStorage:
    """The bytes under a tensor (``x.untyped_storage()``), shared with it: writing here writes
    the tensor.

    Example:
        >>> import tapegrad as torch
        >>> x = torch.arange(6.0)
        >>> x[2:].untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
        True
        >>> x.untyped_storage().nbytes()
        24
    """

    __slots__ = ("_bytes",)

    def __init__(self, size: Any = 0, *, device: Any = None) -> None:
        if device is not None:
            check_device(device, factory=True)
        if isinstance(size, (list, tuple)):
            self._bytes = np.array(size, dtype=np.uint8)
        else:
            self._bytes = np.zeros(int(size), dtype=np.uint8)

    @classmethod
    def _wrap(cls, data: np.ndarray) -> UntypedStorage:
        s = object.__new__(cls)
        s._bytes = data
        return s

    device = property(lambda self: CPU)
    is_cuda = property(lambda self: False)
    is_sparse = False

    def data_ptr(self) -> int:
        return int(self._bytes.__array_interface__["data"][0]) if self._bytes.size else 0

    def nbytes(self) -> int:
        return int(self._bytes.size)

    def size(self) -> int:
        return int(self._bytes.size)

    def __len__(self) -> int:
        return int(self._bytes.size)

    def element_size(self) -> int:
        return 1

    def get_device(self) -> int:
        return -1

    def __getitem__(self, idx: Any) -> Any:
        if isinstance(idx, slice):
            return UntypedStorage._wrap(self._bytes[idx])
        return int(self._bytes[idx])

    def __setitem__(self, idx: Any, value: Any) -> None:
        self._bytes[idx] = value

    def tolist(self) -> list:
        return self._bytes.tolist()

    def fill_(self, value: int) -> UntypedStorage:
        self._bytes[...] = value
        return self

    def copy_(self, source: Any, non_blocking: bool | None = None) -> UntypedStorage:
        src = source._bytes if isinstance(source, UntypedStorage) else source.untyped()._bytes
        if src.size != self._bytes.size:
            raise RuntimeError(f"size mismatch, {self._bytes.size} vs {src.size}")
        self._bytes[...] = src
        return self

    def clone(self) -> UntypedStorage:
        return UntypedStorage._wrap(self._bytes.copy())

    def cpu(self) -> UntypedStorage:
        return self

    def untyped(self) -> UntypedStorage:
        return self

    def is_pinned(self, device: Any = None) -> bool:
        return False

    def is_shared(self) -> bool:
        return False

    def share_memory_(self) -> UntypedStorage:
        return self  # one process: nothing to share with

    def __repr__(self) -> str:
        return _storage_repr(self.tolist(), "[torch.storage.UntypedStorage(device=cpu) of size "
                                            f"{len(self)}]")

    def __iter__(self) -> Any:
        return iter(self.tolist())


_TYPED_STORAGE_WARNED = [False]


def _warn_typed_storage() -> None:
    """torch's deprecation warning, once a process."""
    if not _TYPED_STORAGE_WARNED[0]:
        _TYPED_STORAGE_WARNED[0] = True
        warnings.warn(
            "TypedStorage is deprecated. It will be removed in the future and UntypedStorage will "
            "be the only storage class. This should only matter to you if you are using storages "
            "directly.  To access UntypedStorage directly, use tensor.untyped_storage() instead "
            "of tensor.storage()", UserWarning, stacklevel=3)


@public(".storage")
class TypedStorage:
    """A storage read as elements of one dtype (``x.storage()``; deprecated in torch)."""

    __slots__ = ("_untyped", "dtype")

    def __init__(self, untyped: UntypedStorage, dtype: Any) -> None:
        self._untyped = untyped
        self.dtype = dtype

    def _values(self) -> np.ndarray:
        b = self._untyped._bytes
        n = b.size // self.dtype.itemsize
        return b[:n * self.dtype.itemsize].view(self.dtype.np)

    device = property(lambda self: CPU)
    is_cuda = property(lambda self: False)

    def untyped(self) -> UntypedStorage:
        return self._untyped

    _untyped_storage = property(untyped)

    def data_ptr(self) -> int:
        return self._untyped.data_ptr()

    def nbytes(self) -> int:
        return self._untyped.nbytes()

    def element_size(self) -> int:
        return int(self.dtype.itemsize)

    def size(self) -> int:
        return self._untyped.nbytes() // self.dtype.itemsize

    __len__ = size

    def __getitem__(self, idx: Any) -> Any:
        return self._values()[idx].item() if not isinstance(idx, slice) else TypedStorage(
            UntypedStorage._wrap(self._values()[idx].view(np.uint8)), self.dtype)

    def __setitem__(self, idx: Any, value: Any) -> None:
        self._values()[idx] = value

    def tolist(self) -> list:
        return self._values().tolist()

    def fill_(self, value: Any) -> TypedStorage:
        self._values()[...] = value
        return self

    def __repr__(self) -> str:
        return _storage_repr(self.tolist(), f"[torch.storage.TypedStorage(dtype={self.dtype}, "
                                            f"device=cpu) of size {len(self)}]")

    def __iter__(self) -> Any:
        return iter(self.tolist())


def _legacy_storage_classes() -> dict[str, type]:
    """torch.FloatStorage, torch.LongStorage, ...: what ``x.storage_type()`` returns."""
    out: dict[str, type] = {}
    for name, legacy in _dtype.LEGACY_NAMES.items():
        cls_name = legacy.replace("Tensor", "Storage")
        out[name] = public("")(type(cls_name, (TypedStorage,), {"__slots__": ()}))
    return out


LEGACY_STORAGES = _legacy_storage_classes()


def untyped_storage(self: Tensor) -> UntypedStorage:
    """The bytes under ``self`` (shared with every view of them)."""
    return UntypedStorage._wrap(storage_bytes(self._data)[0])


def storage(self: Tensor) -> TypedStorage:
    """``self``'s storage read as ``self.dtype`` (torch warns: TypedStorage is deprecated)."""
    _warn_typed_storage()
    return LEGACY_STORAGES.get(self.dtype.name, TypedStorage)(untyped_storage(self), self.dtype)


def storage_type(self: Tensor) -> type:
    return LEGACY_STORAGES[self.dtype.name]


# ---------------------------------------------------------------------------------------------
# Tensors on given strides
# ---------------------------------------------------------------------------------------------


def _ints(values: Any, what: str) -> list[int]:
    return [int(v) for v in (values if isinstance(values, (list, tuple)) else (values,))]


def _on_strides(shape: list, strides: list, np_dtype: Any) -> np.ndarray:
    """A zero-filled storage just big enough, seen with ``shape`` and ``strides``."""
    n = 0 if 0 in shape else 1 + sum((s - 1) * st for s, st in zip(shape, strides, strict=True))
    if n * np.dtype(np_dtype).itemsize > (1 << 63) - 1:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={shape} and "
                           f"strides={strides}")
    try:
        buf = np.zeros(n, dtype=np_dtype)
    except MemoryError as e:
        raise out_of_memory(e) from None
    item = buf.itemsize
    return np.lib.stride_tricks.as_strided(buf, tuple(shape), tuple(st * item for st in strides))


def _check_strided(shape: list, strides: list) -> None:
    if len(shape) != len(strides):
        raise RuntimeError(f"dimensionality of sizes ({len(shape)}) must match dimensionality of "
                           f"strides ({len(strides)})")
    for s in shape:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {shape}")
    if any(st < 0 for st in strides):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={shape} and "
                           f"strides={strides}")


def empty_strided(size: Any, stride: Any, *, dtype: Any = None, layout: Any = None,
                  device: Any = None, requires_grad: bool = False,
                  pin_memory: bool = False) -> Tensor:
    """A tensor of ``size`` laid out with ``stride`` (in elements); its values are unspecified
    (zeros here).

    Example:
        >>> import tapegrad as torch
        >>> torch.empty_strided((2, 3), (1, 2)).stride()
        (1, 2)
    """
    _creation._place(device, pin_memory)
    shape, strides = _ints(size, "size"), _ints(stride, "stride")
    _check_strided(shape, strides)
    return _creation._new(_on_strides(shape, strides, _creation._dt(dtype)), requires_grad)


def new_empty_strided(self: Tensor, size: Any, stride: Any, *, dtype: Any = None,
                      layout: Any = None, device: Any = None, requires_grad: bool = False,
                      pin_memory: bool = False) -> Tensor:
    """``empty_strided`` with ``self``'s dtype unless given."""
    return empty_strided(size, stride, dtype=dtype if dtype is not None else self.dtype,
                         device=device, requires_grad=requires_grad, pin_memory=pin_memory)


def empty_permuted(size: Any, physical_layout: Any, *, dtype: Any = None, layout: Any = None,
                   device: Any = None, requires_grad: bool = False,
                   pin_memory: bool = False) -> Tensor:
    """A dense tensor of ``size`` whose dims lie in memory in the order ``physical_layout``
    (outermost first): ``empty_permuted((N, C, H, W), (0, 2, 3, 1))`` is channels-last.

    Example:
        >>> import tapegrad as torch
        >>> torch.empty_permuted((2, 3, 4), (2, 0, 1)).stride()
        (3, 1, 6)
    """
    _creation._place(device, pin_memory)
    shape, order = _ints(size, "size"), _ints(physical_layout, "physical_layout")
    n = len(shape)
    if len(order) != n:
        raise RuntimeError("Number of dimensions in size does not match the length of the "
                           f"physical_layout; i.e. len(size) = {n} is not equal to "
                           f"len(physical_layout) = {len(order)}")
    seen = [False] * n
    for i, d in enumerate(order):
        if not 0 <= d < n:
            raise RuntimeError(f"Dimension out of range (expected to be between 0 and {n - 1}, "
                               f"but got {d} at index {i}).  NB: negative dims not currently "
                               "supported; file an issue if you want it.")
        if seen[d]:
            raise RuntimeError("Duplicate dim not allowed")
        seen[d] = True
    for s in shape:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {shape}")
    stored = np.zeros(tuple(shape[d] for d in order), dtype=_creation._dt(dtype))
    return _creation._new(stored.transpose(np.argsort(order)), requires_grad)


# ---------------------------------------------------------------------------------------------
# resize_, set_: a tensor re-pointed at (part of) a storage
# ---------------------------------------------------------------------------------------------


def _view_bytes(data: np.ndarray, offset: int, shape: tuple, np_dtype: Any,
                fmt: Any = None, strides: Any = None) -> np.ndarray:
    """The array of ``shape`` (contiguous, laid out as ``fmt``, or on ``strides`` in elements)
    that starts ``offset`` bytes into the storage ``data``."""
    item = np.dtype(np_dtype).itemsize
    count = int(np.prod(shape, dtype=np.int64))
    if strides is not None:
        span = 0 if count == 0 else 1 + sum((n - 1) * s for n, s in zip(shape, strides,
                                                                         strict=True))
        flat = data[offset:offset + span * item].view(np_dtype)
        return np.lib.stride_tricks.as_strided(flat, shape, tuple(s * item for s in strides))
    flat = data[offset:offset + count * item].view(np_dtype)
    if fmt is None or fmt is mf.contiguous_format or fmt is mf.preserve_format:
        return flat.reshape(shape)
    mf._check_rank(len(shape), fmt)
    order = mf._ORDER[fmt]
    return flat.reshape(tuple(shape[d] for d in order)).transpose(np.argsort(order))


def _grown(data: np.ndarray, nbytes: int) -> np.ndarray:
    """``data`` if it holds ``nbytes``, else a bigger storage starting with its bytes."""
    if nbytes <= data.size:
        return data
    out = np.zeros(nbytes, dtype=np.uint8)
    out[:data.size] = data
    return out


def resize_(self: Tensor, *size: Any, memory_format: Any = None) -> Tensor:
    """Give ``self`` the shape ``size`` in place, contiguous (or ``memory_format``) from its
    storage offset: the storage grows when it is too small (the new elements' values are
    unspecified; zeros here), and what it held stays where it was.

    Example:
        >>> import tapegrad as torch
        >>> x = torch.arange(6.0)
        >>> x.resize_(2, 2)
        tensor([[0., 1.],
                [2., 3.]])
    """
    if not size:
        raise TypeError('resize_() missing 1 required positional arguments: "size"')
    if self.requires_grad and not _grad_state.inference:  # (autograd's check: not inside)
        raise RuntimeError("cannot resize variables that require grad")
    shape = tuple(_creation._size(size))
    mf.check(memory_format, "resize_")
    if shape == self._data.shape and memory_format is None:
        return self  # (the same shape: nothing changes, strides included)
    _check_resize(shape, self._data.itemsize)
    data, offset = storage_bytes(self._data)
    item = self._data.itemsize
    need = offset + int(np.prod(shape, dtype=np.int64)) * item
    changed = shape != self._data.shape
    self._data = _view_bytes(_grown(data, need), offset, shape, self._data.dtype, memory_format)
    if changed:  # (a resize to the same shape is no change: torch bumps no version then)
        bump_version(self)
    return self


install_above(resize_=resize_)  # the out= arguments' resize (_out.py)


def resize_as_(self: Tensor, the_template: Tensor, *, memory_format: Any = None) -> Tensor:
    """``self.resize_(the_template.shape)`` (``preserve_format``: the template's layout)."""
    if memory_format is mf.preserve_format:
        memory_format = mf.suggest(the_template._data)
        if memory_format is mf.contiguous_format:
            memory_format = None
    return resize_(self, tuple(the_template.shape), memory_format=memory_format)


_INT64_MAX = (1 << 63) - 1


def _check_resize(shape: tuple, item: int) -> None:
    """torch's overflow errors for a resize to ``shape``: its element count, its contiguous
    strides, its size in bytes."""
    numel = 1
    for n in shape:
        numel *= n
    if numel > _INT64_MAX:
        raise RuntimeError("numel: integer multiplication overflow")
    stride = 1
    for n in reversed(shape[1:]):
        stride *= max(n, 1)
        if stride > _INT64_MAX:
            raise RuntimeError("Stride calculation overflowed")
    if numel * item > _INT64_MAX:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(shape)}")


_SET_SIGNATURES = (
    " * ()\n * (torch.Storage source)\n * (torch.Storage source, int storage_offset, tuple of "
    "ints size, tuple of ints stride = None)\n * (Tensor source)\n * (Tensor source, int "
    "storage_offset, tuple of ints size, tuple of ints stride = None)\n")


def _contiguous_strides(shape: tuple) -> list[int]:
    strides = [0] * len(shape)
    acc = 1
    for i in range(len(shape) - 1, -1, -1):
        strides[i] = acc
        acc *= max(shape[i], 1)
    return strides


def set_(self: Tensor, source: Any = None, storage_offset: Any = None, size: Any = None,
         stride: Any = None) -> Tensor:
    """Make ``self`` a view of ``source``: a tensor (its storage, sizes and strides), a storage
    (``size`` and ``stride`` in elements of ``self.dtype``, from ``storage_offset``), or
    nothing (an empty tensor)."""
    if storage_offset is not None and size is None:  # torch has no such form
        given = [source, storage_offset] + ([stride] if stride is not None else [])
        names = ", ".join("Tensor" if isinstance(v, Tensor) else "torch.storage." + type(
            v).__name__ if isinstance(v, (UntypedStorage, TypedStorage)) else type(v).__name__
            for v in given)
        raise TypeError(f"set_() received an invalid combination of arguments - got ({names}), "
                        f"but expected one of:\n{_SET_SIGNATURES}")
    if storage_offset is None:
        storage_offset = 0
    if self._requires_grad and self.grad_fn is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")
    if source is None:
        new = np.zeros(1, dtype=self._data.dtype)[:0]  # (stride 1, as torch reports)
    elif isinstance(source, Tensor):
        if source.dtype is not self.dtype:
            # (torch names the C++ types here, int64 as the compiler spells it)
            c_names = {**_dtype.C_TYPE_NAMES, "int64": "long int"}
            raise RuntimeError(f"Could not set tensor of type {c_names[source.dtype.name]} to a "
                               f"tensor of type {c_names[self.dtype.name]}")
        new = source._data
        if size is not None:  # source's storage, re-viewed
            data, _ = storage_bytes(new)
            dims = tuple(_ints(size, "size"))
            steps = _ints(stride, "stride") if stride is not None else _contiguous_strides(dims)
            new = _view_bytes(data, int(storage_offset) * new.itemsize, dims, new.dtype,
                              strides=steps)
    else:
        data = (source._bytes if isinstance(source, UntypedStorage)
                else source.untyped()._bytes)
        if size is None:
            item = self._data.itemsize
            shape: tuple = (data.size // item - int(storage_offset),)
        else:
            shape = tuple(_ints(size, "size"))
        strides = _contiguous_strides(shape) if stride is None else _ints(stride, "stride")
        new = _view_bytes(data, int(storage_offset) * self._data.itemsize, shape,
                          self._data.dtype, strides=strides)
    self._data = new
    self._version_counter.value += 1
    return self


def as_strided_(self: Tensor, size: Any, stride: Any, storage_offset: Any = None) -> Tensor:
    """Re-view ``self``'s storage in place with ``size`` and ``stride`` from ``storage_offset``
    (elements; self's own offset when None)."""
    record = _grad_state.enabled and self.requires_grad
    check_inplace(self, record)  # (a leaf that requires grad, a view made under no_grad, ...)
    if record or self._fw_grad is not None:  # recorded (or a dual tensor)
        # the out-of-place view's rules (ops/shape.py) under the in-place node's name; self
        # becomes the view, its history the view's (as for every in-place op on a non-leaf)
        shape_ = [int(n) for n in size]
        positions = np.full(tuple(shape_), int(storage_offset or 0), dtype=np.int64)
        for axis, (n, st) in enumerate(zip(shape_, _ints(stride, "stride"), strict=True)):
            ax = [1] * len(shape_)
            ax[axis] = n
            positions = positions + (np.arange(n, dtype=np.int64) * st).reshape(ax)
        S.as_strided(self, size, stride, int(storage_offset or 0))  # torch's bound checks
        src = self if self._data.flags.c_contiguous else self.contiguous()
        y = _AS_STRIDED_INPLACE(src, positions=positions)
        self._data = y._data
        bump_version(self)
        if record:
            self._grad_fn, self._output_nr, self._requires_grad = y._grad_fn, y._output_nr, True
            if self._base is not None:  # the new grad_fn is for the version just made
                self._vv = self._vc.value  # type: ignore[union-attr]
        if y._fw_grad is not None:
            self._fw_grad = y._fw_grad
        return self
    data, offset = storage_bytes(self._data)
    item = self._data.itemsize
    start = offset if storage_offset is None else int(storage_offset) * item
    shape, strides = tuple(_ints(size, "size")), _ints(stride, "stride")
    _check_strided(list(shape), strides)
    _check_fits(shape, strides, start // item, item, data.size)
    self._data = _view_bytes(data, start, shape, self._data.dtype, strides=strides)
    bump_version(self)
    return self


def _check_fits(shape: tuple, strides: list, offset: int, item: int, nbytes: int) -> None:
    """torch's error when a view would reach past the end of its storage."""
    span = 0 if 0 in shape else 1 + sum((n - 1) * s for n, s in zip(shape, strides,
                                                                     strict=True))
    need = (offset + span) * item if span else 0
    if need > nbytes:
        raise RuntimeError(f"setStorage: sizes {list(shape)}, strides {list(strides)}, storage "
                           f"offset {offset}, and itemsize {item} requiring a storage size of "
                           f"{need} are out of bounds for storage of size {nbytes}")


# ---------------------------------------------------------------------------------------------
# slice_inverse: a view of self's storage with another tensor's geometry
# ---------------------------------------------------------------------------------------------


def _slice_inverse_forward(x: np.ndarray, *, size: tuple, stride: tuple, offset: int, dim: int,
                           start: Any, end: Any, step: int) -> np.ndarray:
    data, _ = storage_bytes(x)
    _check_fits(size, list(stride), offset, x.itemsize, data.size)
    return _view_bytes(data, offset * x.itemsize, size, x.dtype, strides=list(stride))


def _slice_inverse_backward(ctx: Any, grad: Tensor) -> tuple:  # d self = the slice of grad
    p = ctx.params
    dim = p["dim"] % grad.ndim if grad.ndim else 0
    return (grad[(slice(None),) * dim + (slice(p["start"], p["end"], p["step"]),)],)


def _slice_inverse_op() -> Any:
    op = REGISTRY.get("slice_inverse")
    if op is None:
        op = defop("slice_inverse", node="SliceInverseBackward0", view=True)(
            _slice_inverse_forward)
        op.backward(_slice_inverse_backward)
    return op


def slice_inverse(input: Tensor, src: Tensor, dim: int = 0, start: Any = None, end: Any = None,
                  step: int = 1) -> Tensor:
    """The inverse of ``src.slice(dim, start, end, step) == input``: a view of ``input``'s
    storage with ``src``'s sizes, strides and storage offset (what functionalization uses to
    rebuild a base from a slice of it)."""
    return _SLICE_INVERSE(input, size=tuple(src.shape), stride=tuple(src.stride()),
                          offset=src.storage_offset(), dim=int(dim), start=start, end=end,
                          step=int(step))


# ---------------------------------------------------------------------------------------------
# The deprecated out-of-place resize (an autograd Function, as in torch)
# ---------------------------------------------------------------------------------------------


def _resize_function() -> type:
    class Resize(Function):
        """``x.resize(*sizes)``: x's elements in a new shape (their count must not change)."""

        @staticmethod
        def forward(ctx: Any, tensor: Tensor, sizes: tuple) -> Tensor:
            n = int(np.prod(sizes, dtype=np.int64))
            if tensor.numel() != n:
                raise RuntimeError(
                    f"requested resize to {'x'.join(map(str, sizes))} ({n} elements in total), "
                    f"but the given tensor has a size of {'x'.join(map(str, tensor.shape))} "
                    f"({tensor.numel()} elements). autograd's resize can only change the shape "
                    "of a given tensor, while preserving the number of elements. ")
            ctx.input_sizes = tensor.shape
            return Tensor._make(np.array(tensor._data, order="C", copy=True).reshape(sizes))

        @staticmethod
        def backward(ctx: Any, grad: Tensor) -> tuple:  # the gradient, back in x's shape
            return grad.contiguous().view(ctx.input_sizes), None

    return Resize


_RESIZE: list = []


def resize(self: Tensor, *sizes: Any) -> Tensor:
    """Deprecated: a copy of ``self`` in the shape ``sizes`` (same number of elements)."""
    warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
    if not _RESIZE:
        _RESIZE.append(_resize_function())
    shape = Size(_creation._size(sizes))
    return _RESIZE[0].apply(self, shape)


def resize_as(self: Tensor, tensor: Tensor) -> Tensor:
    """Deprecated: a copy of ``self`` in ``tensor``'s shape (same number of elements)."""
    warnings.warn("non-inplace resize_as is deprecated", UserWarning, stacklevel=2)
    if not _RESIZE:
        _RESIZE.append(_resize_function())
    return _RESIZE[0].apply(self, tensor.shape)


# ---------------------------------------------------------------------------------------------
# Memory-mapped files
# ---------------------------------------------------------------------------------------------


def from_file(filename: str, shared: bool | None = None, size: int = 0, *, dtype: Any = None,
              layout: Any = None, device: Any = None, pin_memory: bool = False,
              requires_grad: bool = False) -> Tensor:
    """A 1-d tensor of ``size`` elements whose storage is the memory-mapped file ``filename``:
    ``shared=True`` writes changes through to the file (creating it if needed), else they stay
    private to the tensor."""
    _creation._place(device, pin_memory)
    np_dtype = _creation._dt(dtype)
    nbytes = int(size) * np.dtype(np_dtype).itemsize
    if shared:
        if not os.path.exists(filename) or os.path.getsize(filename) < nbytes:
            with open(filename, "ab") as f:
                f.truncate(nbytes)
    elif not os.path.exists(filename):
        raise RuntimeError(f"unable to open file <{filename}> in read-only mode: No such file or "
                           "directory (2)")
    elif os.path.getsize(filename) < nbytes:
        raise RuntimeError(f"file <{filename}> size <{os.path.getsize(filename)}> is smaller "
                           f"than the required mapping size <{nbytes}>")
    if size == 0:
        return _creation._new(np.zeros(0, dtype=np_dtype))
    data = np.memmap(filename, dtype=np_dtype, mode="r+" if shared else "c", shape=(int(size),))
    return _creation._new(np.asarray(data))


def _install() -> None:
    methods = {"untyped_storage": untyped_storage, "storage": storage,
               "storage_type": storage_type, "new_empty_strided": new_empty_strided,
               "resize_": resize_, "resize_as_": resize_as_, "set_": set_, "resize": resize,
               "resize_as": resize_as, "as_strided_": as_strided_,
               "slice_inverse": slice_inverse}
    for name, fn in methods.items():
        setattr(Tensor, name, fn)


def _as_strided_inplace_op() -> Any:
    op = REGISTRY.get("as_strided_inplace")
    if op is None:
        op = defop("as_strided_inplace", node="AsStridedBackward1", view=True)(
            S._as_strided.forward)
        op.backward(S._as_strided.rule)
    return op


_SLICE_INVERSE = _slice_inverse_op()
_AS_STRIDED_INPLACE = _as_strided_inplace_op()
_install()

__all__ = ["UntypedStorage", "TypedStorage", "empty_strided", "new_empty_strided",
           "empty_permuted", "resize_", "resize_as_", "set_", "from_file", "untyped_storage",
           "storage", "storage_type", "as_strided_", "slice_inverse"]
