"""tapegrad's own checkpoint format (before torch's zip format became the default): read it.

``tapegrad.load`` still reads files written by earlier tapegrads, and
:func:`write_checkpoint` still writes the format (tests and tools use it; ``tapegrad.save``
writes torch's format). It holds tensors (any dtype; a view is saved as its values) inside
nested dicts, OrderedDicts, Counters, lists and tuples of Python scalars, strings, bytes and
None. Nothing is pickled, so reading such a file can never run code. One file, little-endian
throughout::

    offset 0   header, 48 bytes: magic b"\\x89TGC\\r\\n\\x1a\\n", format version (u16), flags (u16),
               header size (u32), manifest length (u64), data offset (u64), data length (u64),
               CRC-32 of the 40 bytes before it (u32), 4 reserved bytes
    48         manifest: UTF-8 JSON {"format", "version", "root": <node>, "tensors": [...]}
    data off.  tensor bytes, each C-ordered and starting on a 64-byte boundary
    end - 40   SHA-256 of every byte before it, then b"TGCKEND\\n"

A node is JSON null/true/false/int/string, or an object with one tag: {"f": float.hex()},
{"c": [re, im]}, {"b": base64}, {"l": [...]}, {"t": [...]}, {"d": [[k, v], ...]},
{"od": ...}, {"ctr": ...}, {"T": i} (tensor i of "tensors"), {"dtype": name}, {"size": [...]},
{"device": name}. A tensor saved twice (the same object) is loaded as one object.

Loading checks the magic, the header CRC, the lengths and the SHA-256 before it decodes
anything, and reports a truncated or corrupted file with a :class:`CheckpointError` naming the
problem.
"""

from __future__ import annotations

import base64
import collections
import hashlib
import json
import struct
import zlib
from typing import IO, Any

import numpy as np

from .. import _dtype
from .._tensor import Size, Tensor
from .._tensor import device as _device
from ._errors import (
    CheckpointError,
    CorruptCheckpointError,
    NotACheckpointError,
    TruncatedCheckpointError,
    UnsupportedCheckpointError,
)

__all__ = ["MAGIC", "write_checkpoint", "decode_checkpoint", "is_truncated_magic"]

MAGIC = b"\x89TGC\r\n\x1a\n"
END_MAGIC = b"TGCKEND\n"
FORMAT_VERSION = 1
_HEADER = struct.Struct("<8sHHIQQQ")  # 40 bytes, then crc32 (u32) and 4 reserved bytes
HEADER_SIZE = 48
TRAILER_SIZE = 40
ALIGN = 64


# ---------------------------------------------------------------------------------------------
# dtypes
# ---------------------------------------------------------------------------------------------


def _np_dtype(name: str) -> np.dtype:
    """The little-endian NumPy dtype of a tapegrad dtype name."""
    if name == "bfloat16":
        if _dtype.bfloat16 is None:
            raise CheckpointError(
                "the checkpoint holds bfloat16 tensors, which need the optional dependency "
                "ml_dtypes (pip install ml_dtypes)"
            )
        return _dtype.bfloat16.np
    d = getattr(_dtype, "bool_" if name == "bool" else name, None)
    if not isinstance(d, _dtype.dtype):
        raise CorruptCheckpointError(f"the manifest names an unknown dtype {name!r}")
    return d.np.newbyteorder("<")


def _le_bytes(arr: np.ndarray) -> np.ndarray:
    """The values of ``arr`` as a flat little-endian C-ordered uint8 array."""
    flat = np.ascontiguousarray(arr).reshape(-1)
    if flat.dtype.kind in "biufc" and flat.dtype != flat.dtype.newbyteorder("<"):
        flat = flat.astype(flat.dtype.newbyteorder("<"))
    return flat.view(np.uint8)


# ---------------------------------------------------------------------------------------------
# encoding
# ---------------------------------------------------------------------------------------------


class _Encoder:
    """Turns an object tree into a JSON node tree plus the list of tensors it references."""

    def __init__(self) -> None:
        self.tensors: list[dict[str, Any]] = []
        self.arrays: list[np.ndarray] = []
        self.seen: dict[int, int] = {}
        self.keep: list[Any] = []  # keeps ids stable while encoding
        self.path: set[int] = set()

    def tensor(self, t: Any, kind: str) -> dict[str, Any]:
        key = id(t)
        if key in self.seen:
            return {"T": self.seen[key]}
        arr = t._data if isinstance(t, Tensor) else np.asarray(t)
        if kind == "tensor" and type(t) is not Tensor and type(t).__name__ == "Parameter":
            kind = "parameter"
        dt = _dtype._FROM_NP.get(arr.dtype.newbyteorder("="))
        if dt is None:
            raise TypeError(f"tapegrad.save cannot store arrays of dtype {arr.dtype}")
        entry = {
            "dtype": dt.name,
            "shape": list(arr.shape),
            "requires_grad": bool(getattr(t, "_requires_grad", False)),
            "kind": kind,
        }
        index = len(self.tensors)
        self.tensors.append(entry)
        self.arrays.append(arr)
        self.seen[key] = index
        self.keep.append(t)
        return {"T": index}

    def node(self, obj: Any, where: str) -> Any:
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if isinstance(obj, int):
            return int(obj)
        if isinstance(obj, float):
            return {"f": float(obj).hex()}
        if isinstance(obj, complex):
            return {"c": [obj.real.hex(), obj.imag.hex()]}
        if isinstance(obj, (bytes, bytearray)):
            return {"b": base64.b64encode(bytes(obj)).decode("ascii")}
        if isinstance(obj, Tensor):
            return self.tensor(obj, "tensor")
        if isinstance(obj, np.ndarray):
            return self.tensor(obj, "ndarray")
        if isinstance(obj, np.generic):
            return self.tensor(np.asarray(obj), "npscalar")
        if isinstance(obj, _dtype.dtype):
            return {"dtype": obj.name}
        if isinstance(obj, Size):
            return {"size": [int(s) for s in obj]}
        if isinstance(obj, _device):
            return {"device": str(obj)}
        if isinstance(obj, (list, tuple, dict)):
            key = id(obj)
            if key in self.path:
                raise ValueError(
                    f"tapegrad.save: the object contains a reference to itself at {where}"
                )
            self.path.add(key)
            try:
                if isinstance(obj, list):
                    return {"l": [self.node(v, f"{where}[{i}]") for i, v in enumerate(obj)]}
                if isinstance(obj, tuple):
                    return {"t": [self.node(v, f"{where}[{i}]") for i, v in enumerate(obj)]}
                tag = (
                    "ctr" if isinstance(obj, collections.Counter)
                    else "od" if isinstance(obj, collections.OrderedDict) else "d"
                )
                return {tag: [[self.node(k, f"{where} (a key)"), self.node(v, f"{where}[{k!r}]")]
                              for k, v in obj.items()]}
            finally:
                self.path.discard(key)
        raise TypeError(
            f"tapegrad.save cannot store an object of type {type(obj).__module__}."
            f"{type(obj).__qualname__} (at {where}): checkpoints hold tensors, numbers, strings, "
            "bytes, None, and lists, tuples and dicts of them; nothing is pickled"
        )


def _align(n: int) -> int:
    return (n + ALIGN - 1) // ALIGN * ALIGN


def write_checkpoint(obj: Any, fh: IO[bytes]) -> None:
    """Write ``obj`` to ``fh`` in tapegrad's own format."""
    enc = _Encoder()
    root = enc.node(obj, "the saved object")
    offset = 0
    for entry, arr in zip(enc.tensors, enc.arrays, strict=True):
        offset = _align(offset)
        entry["offset"] = offset
        entry["nbytes"] = int(arr.nbytes)
        offset += int(arr.nbytes)
    data_len = offset
    manifest = json.dumps(
        {"format": "tapegrad.checkpoint", "version": FORMAT_VERSION, "root": root,
         "tensors": enc.tensors},
        separators=(",", ":"), ensure_ascii=False, allow_nan=False,
    ).encode("utf-8")
    data_offset = _align(HEADER_SIZE + len(manifest))
    head = _HEADER.pack(MAGIC, FORMAT_VERSION, 0, HEADER_SIZE, len(manifest), data_offset,
                        data_len)
    head += struct.pack("<I", zlib.crc32(head)) + b"\0\0\0\0"
    digest = hashlib.sha256()

    def put(chunk: Any) -> None:
        digest.update(chunk)
        fh.write(chunk)

    put(head)
    put(manifest)
    put(b"\0" * (data_offset - HEADER_SIZE - len(manifest)))
    written = 0
    for entry, arr in zip(enc.tensors, enc.arrays, strict=True):
        if entry["offset"] > written:
            put(b"\0" * (entry["offset"] - written))
            written = entry["offset"]
        if arr.nbytes:
            put(_le_bytes(arr).data)
            written += int(arr.nbytes)
    fh.write(digest.digest() + END_MAGIC)


# ---------------------------------------------------------------------------------------------
# decoding
# ---------------------------------------------------------------------------------------------


def _describe_foreign(data: bytes | bytearray) -> str:
    """What a file that is not a tapegrad checkpoint starts with."""
    return f"it starts with {bytes(data[:16])!r}"


class _Decoder:
    def __init__(self, buf: bytearray, data_offset: int, data_len: int,
                 tensors: list[Any]) -> None:
        self.buf = buf
        self.data_offset = data_offset
        self.data_len = data_len
        self.entries = tensors
        self.made: dict[int, Any] = {}

    def tensor(self, index: Any) -> Any:
        if not isinstance(index, int) or isinstance(index, bool) or not (
            0 <= index < len(self.entries)
        ):
            raise CorruptCheckpointError(f"the manifest refers to a missing tensor {index!r}")
        if index in self.made:
            return self.made[index]
        e = self.entries[index]
        shape = tuple(e["shape"])
        if not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in shape):
            raise CorruptCheckpointError(f"tensor {index} has an invalid shape {list(shape)}")
        dt = _np_dtype(e["dtype"])
        count = 1
        for s in shape:
            count *= s
        nbytes, offset = e["nbytes"], e["offset"]
        if (
            not isinstance(offset, int) or not isinstance(nbytes, int)
            or nbytes != count * dt.itemsize or offset < 0 or offset + nbytes > self.data_len
        ):
            raise CorruptCheckpointError(
                f"tensor {index} ({e['dtype']}{list(shape)}) lies outside the data section"
            )
        arr = np.frombuffer(self.buf, dtype=dt, count=count,
                            offset=self.data_offset + offset).reshape(shape)
        if not dt.isnative:
            arr = arr.astype(dt.newbyteorder("="))
        kind = e.get("kind", "tensor")
        if kind == "ndarray":
            out: Any = arr
        elif kind == "npscalar":
            out = arr[()]
        else:
            out = Tensor._make(arr, bool(e.get("requires_grad", False)))
            if kind == "parameter":
                out = _as_parameter(out)
        self.made[index] = out
        return out

    def node(self, n: Any) -> Any:
        if n is None or isinstance(n, (bool, int, str)):
            return n
        if isinstance(n, dict) and len(n) == 1:
            (tag, v), = n.items()
            if tag == "f":
                return float.fromhex(v)
            if tag == "c":
                return complex(float.fromhex(v[0]), float.fromhex(v[1]))
            if tag == "b":
                return base64.b64decode(v.encode("ascii"), validate=True)
            if tag == "T":
                return self.tensor(v)
            if tag == "l":
                return [self.node(x) for x in v]
            if tag == "t":
                return tuple(self.node(x) for x in v)
            if tag in ("d", "od", "ctr"):
                cls = {"d": dict, "od": collections.OrderedDict, "ctr": collections.Counter}[tag]
                out = cls()
                for k, x in v:
                    out[self.node(k)] = self.node(x)
                return out
            if tag == "dtype":
                return _dtype.bfloat16 if v == "bfloat16" else getattr(
                    _dtype, "bool_" if v == "bool" else v)
            if tag == "size":
                return Size(int(s) for s in v)
            if tag == "device":
                return _device(v)
        raise CorruptCheckpointError(f"the manifest holds an unknown node {str(n)[:80]}")


def _as_parameter(t: Tensor) -> Any:
    """A loaded ``nn.Parameter`` becomes one again when tapegrad.nn provides it."""
    try:
        from ..nn import Parameter  # type: ignore[attr-defined]
    except ImportError:
        return t
    try:
        return Parameter(t, requires_grad=t._requires_grad)
    except Exception:  # noqa: BLE001 - an nn still in the making: keep the plain tensor
        return t


def decode_checkpoint(buf: bytearray, name: str) -> Any:
    """The object a tapegrad-format file holds (``buf`` starts with :data:`MAGIC`)."""
    size = len(buf)
    if size < len(MAGIC):
        if size == 0:
            raise TruncatedCheckpointError(f"{name}: the file is empty (0 bytes)")
        if MAGIC.startswith(bytes(buf)):
            raise TruncatedCheckpointError(
                f"{name}: the file is truncated: {size} bytes, a checkpoint header alone is "
                f"{HEADER_SIZE}"
            )
        raise NotACheckpointError(
            f"{name} is not a tapegrad checkpoint: {_describe_foreign(buf)}"
        )
    if bytes(buf[:8]) != MAGIC:
        raise NotACheckpointError(
            f"{name} is not a tapegrad checkpoint: {_describe_foreign(buf)}"
        )
    if size < HEADER_SIZE:
        raise TruncatedCheckpointError(
            f"{name}: the file is truncated: {size} bytes, a checkpoint header alone is "
            f"{HEADER_SIZE}"
        )
    head = bytes(buf[:40])
    (crc,) = struct.unpack_from("<I", buf, 40)
    if zlib.crc32(head) != crc:
        raise CorruptCheckpointError(f"{name}: the checkpoint header is corrupted (CRC mismatch)")
    _, version, _flags, header_size, manifest_len, data_offset, data_len = _HEADER.unpack(head)
    if version > FORMAT_VERSION:
        raise UnsupportedCheckpointError(
            f"{name} was written by a newer tapegrad (checkpoint format version {version}); "
            f"this tapegrad reads version {FORMAT_VERSION}"
        )
    if header_size + manifest_len > data_offset:
        raise CorruptCheckpointError(f"{name}: the checkpoint header is inconsistent")
    expected = data_offset + data_len + TRAILER_SIZE
    if size < expected:
        raise TruncatedCheckpointError(
            f"{name}: the file is truncated: {size} bytes of the checkpoint's {expected}"
        )
    if size > expected:
        raise CorruptCheckpointError(
            f"{name}: {size - expected} unexpected bytes follow the end of the checkpoint"
        )
    body_end = data_offset + data_len
    if bytes(buf[body_end + 32:]) != END_MAGIC:
        raise CorruptCheckpointError(f"{name}: the checkpoint trailer is corrupted")
    if hashlib.sha256(memoryview(buf)[:body_end]).digest() != bytes(buf[body_end:body_end + 32]):
        raise CorruptCheckpointError(
            f"{name}: the checkpoint is corrupted (SHA-256 checksum mismatch)"
        )
    try:
        manifest = json.loads(bytes(buf[header_size:header_size + manifest_len]).decode("utf-8"))
        if manifest.get("format") != "tapegrad.checkpoint":
            raise CorruptCheckpointError(f"{name}: the manifest is not a tapegrad manifest")
        decoder = _Decoder(buf, data_offset, data_len, manifest["tensors"])
        return decoder.node(manifest["root"])
    except CheckpointError:
        raise
    except RecursionError:
        raise CorruptCheckpointError(f"{name}: the manifest is nested too deeply") from None
    except (ValueError, KeyError, TypeError, AttributeError, IndexError,
            UnicodeDecodeError) as exc:
        raise CorruptCheckpointError(f"{name}: the manifest is malformed ({exc})") from None


def is_truncated_magic(head: bytes) -> bool:
    """Whether ``head`` (a whole file shorter than the magic) is the start of our magic."""
    return 0 < len(head) < len(MAGIC) and MAGIC.startswith(head)
