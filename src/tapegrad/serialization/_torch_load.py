"""Reading torch's checkpoint formats: the zip archive (torch >= 1.6) and the older stream.

Loading a zip checkpoint::

    ZipReader(file)                        the records, each checked against its CRC-32
      "version", "byteorder"               checked; "constants.pkl" marks TorchScript (refused)
      "data.pkl" -> Unpickler.load()       weights_only: the allow-list interpreter
                                           (_weights_only.py); otherwise pickle's, with torch's
                                           names mapped to tapegrad's objects
        persistent id ('storage', ...)  -> persistent_load: record "data/<key>" read once into
                                           a NumPy array, its size checked against the pickle's
                                           claim, moved by map_location
        torch._utils._rebuild_tensor_v2 -> a strided view of that array (_rebuild.py)

The older stream is three header pickles, the object's pickle, the list of storage keys and
then each storage's element count and bytes; its storages are filled after the pickle is read
(the tensors built on them are views, so they see the bytes).
"""

from __future__ import annotations

import importlib
import io
import mmap
import os
import pickle
import re
import sys
from collections.abc import Callable
from typing import IO, Any

import numpy as np

from . import _weights_only
from ._errors import CorruptCheckpointError, TruncatedCheckpointError, UnsupportedCheckpointError
from ._rebuild import Storage, StorageType, UnsupportedDtype, torch_globals
from ._zip import _MINIZ, ZipReader

__all__ = ["load_zip", "load_legacy", "restorer", "pickle_record", "storage_loader",
           "folder"]

_MAX_VERSION = 10  # the newest zip format version torch 2.13 reads


# ---------------------------------------------------------------------------------------------
# map_location
# ---------------------------------------------------------------------------------------------


def _default_restore(storage: Storage, location: str) -> Storage:
    """torch's rules on a CPU-only build: 'cpu' stays, an accelerator is an error."""
    if location == "cpu":
        return storage
    if location.startswith("mps"):
        raise RuntimeError("torch.UntypedStorage(): Storage device not recognized: mps")
    for backend in ("cuda", "privateuseone", "hpu", "xpu", "mtia"):
        if location == backend or re.match(f"{backend}(:|[0-9]+)", location):
            if backend in ("privateuseone", "hpu"):  # no such module in a CPU-only torch
                raise RuntimeError(
                    f"The {backend.upper()} device module is not registered. If you are running "
                    "on a CPU-only machine, please use torch.load with "
                    "map_location=torch.device('cpu') to map your storages to the CPU.")
            raise RuntimeError(
                f"Attempting to deserialize object on a {backend.upper()} device but "
                f"torch.{backend}.is_available() is False. If you are running on a CPU-only "
                "machine, please use torch.load with map_location=torch.device('cpu') to map "
                "your storages to the CPU."
            )
    if location == "meta":
        raise UnsupportedCheckpointError(
            "tapegrad has no meta device: load with map_location='cpu'")
    raise RuntimeError("don't know how to restore data location of "
                       f"torch.storage.UntypedStorage (tagged with {location})")


def restorer(map_location: Any) -> Callable[[Storage, str], Storage]:
    """The function that moves each loaded storage where ``map_location`` says."""
    if map_location is None:
        return _default_restore
    if isinstance(map_location, dict):
        def by_table(storage: Storage, location: str) -> Storage:
            return _default_restore(storage, str(map_location.get(location, location)))
        return by_table
    if isinstance(map_location, (str, bytes)):
        where = map_location.decode() if isinstance(map_location, bytes) else map_location
        return lambda storage, location: _default_restore(storage, where)
    if callable(map_location):
        def by_call(storage: Storage, location: str) -> Storage:
            out = map_location(storage, location)
            if out is None:
                return _default_restore(storage, location)
            if not isinstance(out, Storage):
                raise TypeError("map_location must return None or the storage it was given "
                                f"(or its .cpu()), got {type(out).__name__}")
            return out
        return by_call
    where = str(map_location)  # a torch.device
    return lambda storage, location: _default_restore(storage, where)


# ---------------------------------------------------------------------------------------------
# the pickle, weights_only or not
# ---------------------------------------------------------------------------------------------


class _FullUnpickler(pickle.Unpickler):
    """``weights_only=False``: any pickle, as torch loads it (it can run code: trusted files
    only). torch's names resolve to tapegrad's objects."""

    def find_class(self, module: str, name: str) -> Any:
        module = {"torch.tensor": "torch._tensor"}.get(module, module)
        full = f"{module}.{name}"
        allowed = torch_globals()
        if full in allowed:
            return allowed[full]
        if module == "torch" or module.startswith("torch."):
            target = "tapegrad" + module[len("torch"):]
            try:
                obj: Any = importlib.import_module(target)
                for part in name.split("."):
                    obj = getattr(obj, part)
            except (ImportError, AttributeError):
                raise UnsupportedCheckpointError(
                    f"the checkpoint needs {full}, which tapegrad does not have") from None
            return obj
        return super().find_class(module, name)


def _unpickle(data: bytes, persistent_load: Callable[[Any], Any], weights_only: bool,
              pickle_load_args: dict[str, Any], pos: int = 0) -> tuple[Any, int]:
    """The object the pickle at ``data[pos:]`` builds, and where the pickle ends."""
    if weights_only:
        unpickler = _weights_only.Unpickler(
            data, persistent_load, pos=pos, encoding=pickle_load_args.get("encoding", "utf-8"))
        try:
            return unpickler.load(), unpickler.pos
        except pickle.UnpicklingError as exc:
            raise pickle.UnpicklingError(_weights_only.explain(str(exc))) from None
    stream = io.BytesIO(data)
    stream.seek(pos)
    full = _FullUnpickler(stream, **pickle_load_args)
    full.persistent_load = persistent_load  # type: ignore[method-assign]
    return full.load(), stream.tell()


def _storage_dtype(storage_type: Any) -> Any:
    if not isinstance(storage_type, StorageType):
        raise CorruptCheckpointError(
            f"the checkpoint names {storage_type!r} as a storage type")
    if storage_type.dtype is None:
        return np.dtype(np.uint8)
    if isinstance(storage_type.dtype, UnsupportedDtype):
        raise storage_type.dtype.refuse()
    return storage_type.dtype.np


def _map_privately(path: str) -> Any:
    """The file mapped copy-on-write: tensors read it lazily, writes to them stay private."""
    with open(path, "rb") as fh:
        if os.fstat(fh.fileno()).st_size == 0:
            return b""
        return mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_COPY)


def _byteswapped(arr: np.ndarray) -> np.ndarray:
    """``arr`` with each element's bytes reversed (complex: each half's)."""
    size = arr.itemsize // 2 if arr.dtype.kind == "c" else arr.itemsize
    if size > 1:
        arr.view(f"u{size}").byteswap(inplace=True)
    return arr


# ---------------------------------------------------------------------------------------------
# the zip format
# ---------------------------------------------------------------------------------------------


def folder(reader: ZipReader, name: str) -> tuple[str, set[str]]:
    """The archive's folder (``archive/``) and the names of the records in it."""
    names = reader.names()
    if not names:
        raise CorruptCheckpointError(f"{name}: the zip archive is empty")
    if "/" not in names[0]:
        raise CorruptCheckpointError(f"file in archive is not in a subdirectory: {names[0]}")
    prefix = names[0].split("/", 1)[0] + "/"
    for n in names:
        if not n.startswith(prefix):
            raise CorruptCheckpointError(
                f"file in archive is not in a subdirectory {prefix}: {n}")
    return prefix, {n[len(prefix):] for n in names}


def pickle_record(fh: IO[bytes], name: str) -> bytes:
    """The ``data.pkl`` record of a zip checkpoint (ValueError for a TorchScript archive)."""
    reader = ZipReader(fh, name)
    prefix, records = folder(reader, name)
    if "constants.pkl" in records:
        raise ValueError("Expected input to be a checkpoint returned by torch.save but got a "
                         "torchscript checkpoint")
    if "data.pkl" not in records:
        raise CorruptCheckpointError(
            f"PytorchStreamReader failed locating file data.pkl: file not found{_MINIZ}")
    return reader.read(prefix + "data.pkl")


def storage_loader(reader: ZipReader, prefix: str, records: set[str], map_location: Any,
                   mmap_path: str | None = None) -> Callable[[Any], Storage]:
    """The ``persistent_load`` of an archive's pickles: each persistent id
    ``('storage', type, key, location, numel)`` read once from record ``data/<key>`` (its size
    checked, byte-swapped if the archive's ``byteorder`` says so, moved by ``map_location``)."""

    def record(key: str) -> bytes:
        return reader.read(prefix + key)

    order: str
    if "byteorder" in records:
        mark = record("byteorder")
        if mark not in (b"little", b"big"):
            raise ValueError("Unknown endianness type: " + mark.decode("utf-8", "replace"))
        order = mark.decode()
    else:
        order = "little"
    restore = restorer(map_location)
    mapped = _map_privately(mmap_path) if mmap_path else None
    loaded: dict[str, Storage] = {}

    def persistent_load(pid: Any) -> Storage:
        if not isinstance(pid, tuple) or len(pid) != 5:
            raise CorruptCheckpointError(
                f"the checkpoint holds an unknown persistent id {str(pid)[:80]}")
        tag, storage_type, key, location, numel = pid
        if isinstance(tag, bytes):
            tag = tag.decode("ascii")
        if isinstance(location, bytes):
            location = location.decode("ascii")
        if tag != "storage":
            raise CorruptCheckpointError(
                f"Unknown typename for persistent_load, expected 'storage' but got '{tag}'")
        if not isinstance(key, str) or not isinstance(location, str) or not isinstance(
                numel, int) or numel < 0:
            raise CorruptCheckpointError(
                f"the checkpoint holds a malformed storage record {str(pid)[:80]}")
        if key in loaded:
            return loaded[key]
        dtype = _storage_dtype(storage_type)
        nbytes = numel * dtype.itemsize
        entry = f"data/{key}"
        if entry not in records:
            raise CorruptCheckpointError(
                f"PytorchStreamReader failed locating file {entry}: file not found{_MINIZ}")
        size = reader.entries[prefix + entry].size
        if size != nbytes:
            raise CorruptCheckpointError(
                f"record size ({size} bytes) does not match expected size ({nbytes} bytes = "
                f"{nbytes} elements * 1 bytes/element) for dtype Byte")
        if mapped is not None and reader.entries[prefix + entry].method == 0:
            start = reader.data_offset(prefix + entry)
            # (an array of its own over the mapping, so saving it again saves only it)
            raw = np.frombuffer(mapped, dtype=np.uint8, count=nbytes, offset=start)
        else:
            raw = np.empty(nbytes, dtype=np.uint8)
            reader.read_into(prefix + entry, raw)
        arr = raw.view(dtype)
        if order != sys.byteorder:
            arr = _byteswapped(arr)
        storage = restore(Storage(arr, location), location)
        loaded[key] = storage
        return storage

    return persistent_load


def load_zip(fh: IO[bytes], name: str, map_location: Any, weights_only: bool,
             pickle_load_args: dict[str, Any], mmap_path: str | None = None) -> Any:
    """The object a ``torch.save`` zip archive (or ``tapegrad.save``'s) holds."""
    reader = ZipReader(fh, name)
    prefix, records = folder(reader, name)

    def record(key: str) -> bytes:
        if key not in records:
            raise CorruptCheckpointError(
                f"PytorchStreamReader failed locating file {key}: file not found{_MINIZ}")
        return reader.read(prefix + key)

    version_key = ".data/version" if ".data/version" in records else "version"
    if version_key not in records:
        raise CorruptCheckpointError(
            'Expected hasRecord("version") to be true, but got false.  (Could this error message '
            'be improved?  If so, please report an enhancement request to PyTorch.)')
    text = record(version_key).decode("utf-8", "replace")
    try:
        version = int(text.strip())
    except ValueError:
        raise CorruptCheckpointError(
            f"Couldn't parse the version {text} as Long Long.") from None
    if version > _MAX_VERSION:
        raise UnsupportedCheckpointError(
            f"Attempted to read a PyTorch file with version {version}, but the maximum supported "
            f"version for reading is {_MAX_VERSION}. The version of your PyTorch installation may "
            "be too old, please upgrade PyTorch to latest version to mitigate this issue.")
    if "constants.pkl" in records:
        raise UnsupportedCheckpointError(
            f"{name} is a TorchScript archive (torch.jit.save); tapegrad loads torch.save files "
            "only" + (". Cannot use ``weights_only=True`` with TorchScript archives passed to "
                      "``torch.load``. " + _weights_only.UNSAFE_MESSAGE if weights_only else ""))
    persistent_load = storage_loader(reader, prefix, records, map_location, mmap_path)
    data = record("data.pkl")
    return _unpickle(data, persistent_load, weights_only, pickle_load_args)[0]


# ---------------------------------------------------------------------------------------------
# the stream format before torch 1.6
# ---------------------------------------------------------------------------------------------

_LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
_LEGACY_PROTOCOL = 1001


def load_legacy(data: bytes, name: str, map_location: Any, weights_only: bool,
                pickle_load_args: dict[str, Any]) -> Any:
    """The object a ``torch.save(..., _use_new_zipfile_serialization=False)`` file holds."""
    if not data:
        raise EOFError(f"{name}: the file is empty (0 bytes)")
    restore = restorer(map_location)
    pos = 0

    def header(pid_load: Callable[[Any], Any] = _weights_only.Unpickler._no_persistent_load
               ) -> Any:
        nonlocal pos
        value, pos = _unpickle(data, pid_load, weights_only, pickle_load_args, pos)
        return value

    if header() != _LEGACY_MAGIC:
        raise RuntimeError("Invalid magic number; corrupt file?")
    protocol = header()
    if protocol != _LEGACY_PROTOCOL:
        raise RuntimeError(f"Invalid protocol version: {protocol}")
    header()  # the saving machine's sizes and byte order (torch ignores them too)
    storages: dict[str, Storage] = {}

    def persistent_load(pid: Any) -> Any:
        if not isinstance(pid, tuple) or not pid:
            raise CorruptCheckpointError(f"saved_id must be a tuple, got {type(pid).__name__}")
        tag = pid[0].decode("ascii") if isinstance(pid[0], bytes) else pid[0]
        if tag == "module" and not weights_only and len(pid) > 1:
            return pid[1]  # a pickled nn.Module class, with its source for comparison
        if tag != "storage" or len(pid) != 6:
            raise RuntimeError(f"Unknown saved id type: {pid[0]}")
        _, storage_type, key, location, numel, view = pid
        if isinstance(location, bytes):
            location = location.decode("ascii")
        if not isinstance(key, str) or not isinstance(numel, int) or numel < 0:
            raise CorruptCheckpointError(f"malformed storage record {str(pid)[:80]}")
        if key not in storages:
            dtype = _storage_dtype(storage_type)
            arr = np.zeros(numel, dtype=dtype)
            storages[key] = restore(Storage(arr, str(location)), str(location))
        root = storages[key]
        if view is None:
            return root
        view_key, offset, size = view
        if offset < 0 or size < 0 or offset + size > root.array.size:
            raise CorruptCheckpointError(f"storage view {view_key} lies outside its storage")
        return storages.setdefault(view_key, Storage(root.array[offset:offset + size],
                                                     root.location))

    result = header(persistent_load)
    keys = header()
    if not isinstance(keys, list):
        raise CorruptCheckpointError(f"{name}: the list of storages is malformed")
    for key in keys:
        if key not in storages:
            raise CorruptCheckpointError(f"{name}: storage key {key!r} not found")
        target = storages[key].array
        if pos + 8 > len(data):
            raise TruncatedCheckpointError(f"{name}: the file is truncated (storage {key})")
        count = int(np.frombuffer(data, dtype="<i8", count=1, offset=pos)[0])
        pos += 8
        if count != target.size:
            raise CorruptCheckpointError(
                f"{name}: storage {key} holds {count} elements, the pickle says {target.size}")
        end = pos + target.nbytes
        if end > len(data):
            raise TruncatedCheckpointError(f"{name}: the file is truncated (storage {key})")
        target.view(np.uint8)[:] = np.frombuffer(data, dtype=np.uint8, count=target.nbytes,
                                                 offset=pos)
        pos = end
    return result
