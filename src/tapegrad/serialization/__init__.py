"""``tapegrad.save`` / ``tapegrad.load``: torch's checkpoint files, both ways.

``save`` writes what ``torch.save`` writes, a zip archive holding a pickle of the object and
one raw record per storage (``_torch_save.py``, ``_zip.py``), so real ``torch.load`` reads
tapegrad's checkpoints and a tapegrad model's ``state_dict`` loads into the same torch model.
``load`` reads them back, and reads every file ``torch.save`` writes::

    load(f)
      starts with "PK\\3\\4"       torch's zip format          _torch_load.load_zip
      starts with tapegrad's magic  tapegrad's own older format  _tapegrad_format
      a safetensors header          .safetensors                 _safetensors
      anything else                 torch's stream before 1.6    _torch_load.load_legacy

The pickle is where danger lies: unpickling can import and call anything. With
``weights_only=True`` (the default, as in torch) the pickle runs on tapegrad's own interpreter
(``_weights_only.py``), which builds tensors, containers, numbers, strings, dtypes, shapes and
devices, and what :func:`add_safe_globals` allows, and refuses anything else with torch's
``UnpicklingError`` before it is imported. ``weights_only=False`` loads any pickle, as torch
does: only for files you trust.

A path is written atomically (a temporary file renamed over it: a crash mid-save leaves the
old file whole), and every record's CRC-32 is checked on load, so a corrupted or truncated
file is a :class:`CheckpointError` (a RuntimeError), not silently wrong numbers.
"""

from __future__ import annotations

import io
import os
import pickle
import struct
import warnings
from typing import Any

import numpy as np

from ._atomic import atomic_write
from ._errors import (
    CheckpointError,
    CorruptCheckpointError,
    NotACheckpointError,
    TruncatedCheckpointError,
    UnsupportedCheckpointError,
)
from ._rebuild import Storage
from ._safetensors import _decode as decode_safetensors
from ._tapegrad_format import (
    MAGIC,
    decode_checkpoint,
    is_truncated_magic,
)
from ._torch_load import load_legacy, load_zip, pickle_record, restorer
from ._torch_save import archive_name, write_legacy, write_zip
from ._weights_only import (
    add_safe_globals,
    clear_safe_globals,
    get_safe_globals,
    safe_globals,
    unsafe_globals,
)
from ._zip import ZIP_MAGIC

__all__ = [
    "save",
    "load",
    "add_safe_globals",
    "safe_globals",
    "get_safe_globals",
    "clear_safe_globals",
    "get_unsafe_globals_in_checkpoint",
    "CheckpointError",
    "NotACheckpointError",
    "TruncatedCheckpointError",
    "CorruptCheckpointError",
    "UnsupportedCheckpointError",
    "atomic_write",
]

DEFAULT_PROTOCOL = 2  # torch's default pickle protocol


def _is_path(f: Any) -> bool:
    return isinstance(f, (str, bytes, os.PathLike))


def save(obj: Any, f: Any, pickle_module: Any = pickle, pickle_protocol: int = DEFAULT_PROTOCOL,
         _use_new_zipfile_serialization: bool = True,
         _disable_byteorder_record: bool = False) -> None:
    """Save ``obj`` to a path or a binary file object, in torch's checkpoint format.

    Tensors (with their storage sharing), Parameters, dtypes, ``Size`` and devices are written
    as torch writes them; anything else is pickled. A path is written atomically.

    Args:
        obj: what to save (typically a ``state_dict``, or a dict of them).
        f: a path, or a file object with ``write``.
        pickle_module: accepted for torch compatibility (tapegrad's pickler is always used).
        pickle_protocol: the pickle protocol (torch's default, 2, is the one ``weights_only``
            loads accept).
        _use_new_zipfile_serialization: False writes torch's format before 1.6.
        _disable_byteorder_record: leave out the byte order record (as torch does).

    Example:
        >>> import tapegrad as torch, io
        >>> buf = io.BytesIO()
        >>> torch.save({"w": torch.ones(2), "step": 3}, buf)
        >>> _ = buf.seek(0)
        >>> torch.load(buf)
        {'w': tensor([1., 1.]), 'step': 3}
    """
    if not _is_path(f) and not hasattr(f, "write"):
        raise AttributeError("expected 'f' to be string, path, or a file-like object with a "
                             "'write' attribute")

    def write(fh: Any, name: str) -> None:
        if _use_new_zipfile_serialization:
            write_zip(obj, fh, name, pickle_protocol, _disable_byteorder_record)
        else:
            write_legacy(obj, fh, pickle_protocol)

    if _is_path(f):
        name = archive_name(f)
        atomic_write(f, lambda fh: write(fh, name))
        return
    write(f, "archive")
    if hasattr(f, "flush"):
        f.flush()


def _read_all(f: Any) -> tuple[bytes, str]:
    if _is_path(f):
        name = os.fsdecode(os.fspath(f))
        with open(name, "rb") as fh:
            return fh.read(), name
    if not hasattr(f, "read"):
        raise AttributeError(
            f"tapegrad.load expected a path or a binary file object with read(), got "
            f"{type(f).__name__}"
        )
    data = f.read()
    if isinstance(data, str):
        raise TypeError("tapegrad.load needs a file opened in binary mode ('rb')")
    return bytes(data), str(getattr(f, "name", "<file object>"))


def _looks_like_safetensors(buf: bytes) -> bool:
    if len(buf) < 10:
        return False
    (n,) = struct.unpack_from("<Q", buf, 0)
    return 2 <= n <= len(buf) - 8 and buf[8:9] == b"{"


def load(f: Any, map_location: Any = None, pickle_module: Any = None, *,
         weights_only: bool | None = None, mmap: bool | None = None,
         **pickle_load_args: Any) -> Any:
    """Load what ``torch.save`` or :func:`save` wrote (or a ``.safetensors`` file).

    Args:
        f: a path, or a binary file object.
        map_location: where storages go: None, ``'cpu'``, a device, a dict mapping saved
            locations (``'cuda:0'``) to new ones, or ``callable(storage, location)``. tapegrad
            runs on the CPU: a file saved from CUDA tensors needs ``map_location='cpu'``, as on
            a CPU-only torch.
        pickle_module: only with ``weights_only=False`` (as in torch).
        weights_only: True (the default, as in torch 2.6+) loads only data, refusing any other
            object with torch's ``pickle.UnpicklingError``; False runs the full pickle (trusted
            files only).
        mmap: map the file instead of reading the storages (``f`` must be a path).
        pickle_load_args: passed to the unpickler when ``weights_only=False`` (``encoding``).

    Raises:
        pickle.UnpicklingError: a ``weights_only`` load met something other than data.
        CheckpointError: (a RuntimeError) the file is truncated, corrupted (CRC-32 mismatch, a
            record whose size contradicts the pickle) or holds what tapegrad cannot represent.
    """
    if weights_only is None:
        weights_only = pickle_module is None
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    if pickle_load_args and weights_only:
        warnings.warn("pickle_load_args only works if `weights_only=False`.", stacklevel=2)
    pickle_load_args.setdefault("encoding", "utf-8")
    if mmap and not _is_path(f):
        raise ValueError("f must be a file path in order to use the mmap argument")
    _check_map_location(map_location)
    if _is_path(f):
        name = os.fsdecode(os.fspath(f))
        with open(name, "rb") as fh:
            head = fh.read(len(MAGIC))
            if head.startswith(ZIP_MAGIC):
                return load_zip(fh, name, map_location, weights_only, pickle_load_args,
                                mmap_path=name if mmap else None)
            fh.seek(0)
            data = fh.read()
    else:
        data, name = _read_all(f)
        if data.startswith(ZIP_MAGIC):
            return load_zip(io.BytesIO(data), name, map_location, weights_only,
                            pickle_load_args)
    if data.startswith(MAGIC) or is_truncated_magic(data):
        if map_location is not None and not callable(map_location) and not isinstance(
                map_location, dict):
            restorer(map_location)(Storage(np.empty(0), "cpu"), "cpu")  # a CPU location?
        return decode_checkpoint(bytearray(data), name)
    if _looks_like_safetensors(data):
        return decode_safetensors(bytearray(data), name)
    if mmap:
        raise RuntimeError(
            "mmap can only be used with files saved with `torch.save("
            f"{f + ', ' if isinstance(f, str) else ''}_use_new_zipfile_serialization=True), please "
            "torch.save your checkpoint with this option in order to use mmap.")
    return load_legacy(data, name, map_location, weights_only, pickle_load_args)


def get_unsafe_globals_in_checkpoint(f: Any) -> list[str]:
    """The classes and functions a checkpoint's pickle names that a ``weights_only`` load would
    refuse (neither allowed by default nor by :func:`add_safe_globals`), as
    ``"module.name"`` strings, found without running the pickle.

    Example:
        >>> import tapegrad as torch, io
        >>> buf = io.BytesIO()
        >>> torch.save({"w": torch.ones(1), "s": slice(1, 2)}, buf)
        >>> torch.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(buf.getvalue()))
        ['builtins.slice']
    """
    data, name = _read_all(f)
    if not data.startswith(ZIP_MAGIC):
        raise ValueError("Expected input to be a checkpoint returned by torch.save")
    return unsafe_globals(pickle_record(io.BytesIO(data), name))


def _check_map_location(map_location: Any) -> None:
    """Refuse a map_location that is not a location at all, before reading anything."""
    if map_location is None or callable(map_location) or isinstance(
            map_location, (dict, str, bytes)):
        return
    if type(map_location).__name__ != "device":
        raise TypeError(f"map_location should be a str, a torch.device, a dict or a callable, "
                        f"got {type(map_location).__name__}")
