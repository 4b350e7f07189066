"""Writing torch's checkpoint format: a pickle that names torch's objects, plus raw storages.

``torch.save(obj, f)`` pickles ``obj`` with every tensor replaced by a call::

    torch._utils._rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad,
                                    OrderedDict())

where ``storage`` is a *persistent id* ``('storage', torch.FloatStorage, key, 'cpu', numel)``:
the pickle only names the storage; its bytes go into the zip archive as record ``data/<key>``.
Tensors that view one storage name the same key, so they share memory again when loaded.

tapegrad writes the same pickle, instruction for instruction. It cannot use ``pickle``'s fast
pickler for that: to write ``GLOBAL torch.FloatStorage`` a pickler imports ``torch`` to check
the name, and tapegrad never imports torch. So :class:`TorchPickler` extends Python's own
pickler, writing the GLOBAL instruction of each torch name itself. Everything else in ``obj``
(user classes, numbers, containers) is pickled as usual.

A tensor's storage is the NumPy array at the root of its ``.base`` chain (the array a view was
cut from); the storage offset and strides are the view's position in it, in elements.
"""

from __future__ import annotations

import collections
import io
import os
import pickle
import sys
from typing import IO, Any

import numpy as np

from .. import _dtype
from .._device import device as _device
from .._storage import _root
from .._tensor import Size, Tensor
from ..nn import Parameter
from ._rebuild import STORAGE_NAMES
from ._zip import ZipWriter

__all__ = ["write_zip", "write_legacy", "archive_name"]


class _Global:
    """A torch name to write as a GLOBAL instruction (``torch._utils _rebuild_tensor_v2``)."""

    __slots__ = ("module", "name")

    def __init__(self, module: str, name: str) -> None:
        self.module = module
        self.name = name

    def __call__(self, *args: Any) -> Any:  # (pickle wants a reduce function to be callable)
        raise TypeError(f"{self.module}.{self.name} only names a torch function in a pickle")


_REBUILD_TENSOR = _Global("torch._utils", "_rebuild_tensor_v2")
_REBUILD_PARAMETER = _Global("torch._utils", "_rebuild_parameter")
_SIZE = _Global("torch", "Size")
_DEVICE = _Global("torch", "device")
_DTYPE_MODULE = "".join(("tor", "ch"))  # a string object of its own
_STORAGE_TYPES = {name: _Global("torch", storage) for name, storage in STORAGE_NAMES.items()}
# the dtypes with no legacy storage class (uint16/32/64, complex32) go on an untyped storage,
# rebuilt by _rebuild_tensor_v3 with the dtype, as torch writes them
_UNTYPED_STORAGE = _Global("torch.storage", "UntypedStorage")
_REBUILD_TENSOR_V3 = _Global("torch._utils", "_rebuild_tensor_v3")


class _StorageRef:
    """Stands for a storage in the pickle; the pickler writes its persistent id."""

    __slots__ = ("pid",)

    def __init__(self, pid: tuple) -> None:
        self.pid = pid


class _Storages:
    """The storages a save writes, keyed by their root array, in the order first met."""

    def __init__(self, legacy: bool = False) -> None:
        self.legacy = legacy
        self.by_root: dict[int, tuple[_StorageRef, str, np.ndarray]] = {}
        self.records: list[tuple[str, np.ndarray, int]] = []  # key, bytes, element size

    def _new(self, root: np.ndarray, dtype_name: str, itemsize: int) -> _StorageRef:
        key = str(len(self.records)) if not self.legacy else str(id(root))
        typed = _STORAGE_TYPES.get(dtype_name)
        numel = root.nbytes // itemsize if typed is not None else root.nbytes
        pid: tuple = ("storage", typed or _UNTYPED_STORAGE, key, "cpu", numel)
        if self.legacy:
            pid += (None,)
        ref = _StorageRef(pid)
        flat = root.reshape(-1).view(np.uint8)
        self.records.append((key, flat, itemsize))
        self.by_root[id(root)] = (ref, dtype_name, root)
        return ref

    def place(self, arr: np.ndarray, dtype_name: str) -> tuple[_StorageRef, int, tuple]:
        """The storage, offset and strides (in elements) of the tensor whose values are arr."""
        item = arr.itemsize
        root = _root(arr)  # (through as_strided's intermediate object too: expand, as_strided)
        start = arr.__array_interface__["data"][0]
        offset = start - root.__array_interface__["data"][0]
        shares = (
            root.flags.c_contiguous and offset >= 0 and offset % item == 0
            and root.nbytes % item == 0 and all(s >= 0 and s % item == 0 for s in arr.strides)
            and (arr.size == 0 or offset + item + sum(
                (n - 1) * s for n, s in zip(arr.shape, arr.strides, strict=True)) <= root.nbytes)
        )
        if not shares:  # a layout torch cannot describe: the tensor gets its own storage
            root = np.array(arr, order="C", copy=True)
            offset = 0
            arr = root
        found = self.by_root.get(id(root))
        if found is None:
            ref = self._new(root, dtype_name, item)
        else:
            ref, first_dtype, _ = found
            if first_dtype != dtype_name:
                raise RuntimeError("Cannot save multiple tensors or storages that view the same "
                                   "data as different types")
        if arr.size == 0 or arr is root:
            stride = _contiguous_strides(arr.shape)
        else:
            stride = tuple(s // item for s in arr.strides)
        return ref, offset // item, stride


def _contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    out, step = [], 1
    for n in reversed(shape):
        out.append(step)
        step *= max(n, 1)
    return tuple(reversed(out))


_PythonPickler: Any = pickle._Pickler  # type: ignore[attr-defined]  # (the pure-Python one)


class TorchPickler(_PythonPickler):
    """Python's pickler, writing tapegrad's tensors, dtypes, shapes and devices as torch's."""

    dispatch: dict[type, Any] = dict(_PythonPickler.dispatch)

    def __init__(self, file: IO[bytes], protocol: int, storages: _Storages) -> None:
        super().__init__(file, protocol)
        self.storages = storages

    def persistent_id(self, obj: Any) -> Any:
        # a new tuple each time, as torch makes one: only its parts are memoized
        return ("storage", *obj.pid[1:]) if type(obj) is _StorageRef else None

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, Tensor):
            return self._reduce_tensor(obj)
        if isinstance(obj, Size):
            return _SIZE, (tuple(obj),)
        if isinstance(obj, _device):
            index = getattr(obj, "index", None)
            kind = str(str(obj).split(":")[0].encode(), "ascii")  # a new string, as torch's
            return _DEVICE, (kind,) if index is None else (kind, index)
        return NotImplemented

    def _reduce_tensor(self, t: Tensor) -> Any:
        if isinstance(t, Parameter):
            data = Tensor._make(t._data)
            return _REBUILD_PARAMETER, (data, t._requires_grad, collections.OrderedDict())
        arr = t._data
        name = "bool" if t.dtype is _dtype.bool_ else t.dtype.name
        ref, offset, stride = self.storages.place(arr, name)
        if name not in _STORAGE_TYPES:
            return _REBUILD_TENSOR_V3, (ref, offset, tuple(arr.shape), stride, t._requires_grad,
                                        collections.OrderedDict(), t.dtype)
        return _REBUILD_TENSOR, (ref, offset, tuple(arr.shape), stride, t._requires_grad,
                                 collections.OrderedDict())

    def _write_global(self, module: str, name: str, obj: Any) -> None:
        """Write ``module.name`` as pickle's ``save_global`` would, without importing it."""
        if self.proto >= 4:
            self.save(module)
            self.save(name)
            self.write(pickle.STACK_GLOBAL)
        else:
            self.write(pickle.GLOBAL + module.encode() + b"\n" + name.encode() + b"\n")
        self.memoize(obj)

    def _save_global(self, obj: _Global) -> None:
        self._write_global(obj.module, obj.name, obj)

    def _save_dtype(self, obj: Any) -> None:
        # (torch's dtypes name their module with one string of their own and themselves with a
        # new string each time: under protocol 4 the memo sees it so)
        name = "bool" if obj is _dtype.bool_ else obj.name
        self._write_global(_DTYPE_MODULE, str(name.encode(), "ascii"), obj)

    dispatch[_Global] = _save_global
    # every class a tapegrad dtype is made of (float16 and bfloat16 have their own subclasses)
    _classes: set[type] = {_dtype.dtype, *(type(d) for d in _dtype.ALL)}
    for _cls in _classes:
        dispatch[_cls] = _save_dtype
    del _cls, _classes


def _pickle(obj: Any, protocol: int, storages: _Storages) -> bytes:
    buf = io.BytesIO()
    TorchPickler(buf, protocol, storages).dump(obj)
    return buf.getvalue()


def archive_name(path: Any) -> str:
    """The folder torch names the records in: the file's name without its extension
    (``archive`` for a file object, or a name that is not ASCII)."""
    base = os.path.basename(os.fsdecode(os.fspath(path)))
    stem = base[:base.rfind(".")] if "." in base else base
    if not stem:
        raise RuntimeError("[enforce fail at inline_container.cc:720] . invalid file name: "
                           f"{os.fsdecode(os.fspath(path))}")
    try:
        stem.encode("ascii")
    except UnicodeEncodeError:
        return "archive"
    return stem


def write_zip(obj: Any, fh: IO[bytes], name: str, protocol: int,
              disable_byteorder_record: bool = False) -> None:
    """Write ``obj`` to ``fh`` in torch's zip format, as records of the folder ``name``."""
    storages = _Storages()
    data = _pickle(obj, protocol, storages)
    zipf = ZipWriter(fh, name)
    zipf.write_record("data.pkl", data)
    zipf.write_record(".format_version", b"1")
    zipf.write_record(".storage_alignment", b"64")
    if not disable_byteorder_record:
        zipf.write_record("byteorder", sys.byteorder.encode())
    for key, flat, _ in storages.records:
        zipf.write_record(f"data/{key}", flat)
    zipf.write_record("version", b"3\n")
    # two random 64-bit numbers, 20 digits each, as torch writes them
    ident = "".join(f"{int.from_bytes(os.urandom(8), 'little'):020d}" for _ in range(2))
    zipf.write_record(".data/serialization_id", ident.encode())
    zipf.close()


_LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
_LEGACY_PROTOCOL = 1001


def write_legacy(obj: Any, fh: IO[bytes], protocol: int) -> None:
    """Write ``obj`` in torch's format before 1.6 (``_use_new_zipfile_serialization=False``):
    three header pickles, the object's pickle, the list of storage keys, then each storage as
    its element count (int64) and its bytes."""
    for header in (_LEGACY_MAGIC, _LEGACY_PROTOCOL,
                   {"protocol_version": _LEGACY_PROTOCOL,
                    "little_endian": sys.byteorder == "little",
                    "type_sizes": {"short": 2, "int": 4, "long": 4}}):
        pickle.dump(header, fh, protocol=protocol)
    storages = _Storages(legacy=True)
    fh.write(_pickle(obj, protocol, storages))
    records = sorted(storages.records, key=lambda r: r[0])
    pickle.dump([key for key, _, _ in records], fh, protocol=protocol)
    for _, flat, itemsize in records:
        fh.write(np.int64(flat.nbytes // itemsize).tobytes())
        fh.write(flat.data)
