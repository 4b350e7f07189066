"""The ``.safetensors`` format (Hugging Face's), read and written without the ``safetensors``
package, with the API of ``safetensors.torch``: ``save``/``load`` (bytes) and
``save_file``/``load_file`` (paths), plus ``safe_open``.

The format::

    u64 little-endian N | N bytes of JSON header, padded with spaces to a multiple of 8 |
    raw little-endian tensor bytes

    header = {"__metadata__": {str: str} (optional),
              name: {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, ...}

Offsets are relative to the start of the byte buffer and must tile it exactly. Like the
reference writer, tensors are laid out by dtype (widest first, in the format's dtype order),
then by name, so a file written here is byte-for-byte the one ``safetensors.torch.save_file``
writes for the same tensors.

``tapegrad.utils.safetensors`` gives this module's public names (``safetensors.torch``'s
API); ``tapegrad.load`` reads a ``.safetensors`` file through :func:`_decode`.
"""

from __future__ import annotations

import json
import os
import struct
from collections.abc import Iterator
from typing import IO, Any

import numpy as np

from .. import _dtype
from .._device import check
from .._tensor import Tensor
from ._atomic import atomic_write
from ._errors import CheckpointError
from ._tapegrad_format import _le_bytes

__all__ = ["SafetensorError", "save", "save_file", "load", "load_file", "safe_open"]


class SafetensorError(CheckpointError):
    """A malformed .safetensors file (or bytes)."""


# the format's dtype codes, in the order of its enum (the writer sorts by it, descending)
_ORDER = ["BOOL", "U8", "I8", "I16", "U16", "F16", "BF16", "I32", "U32", "F32", "C64", "F64",
          "I64", "U64"]
_CODE = {
    "bool": "BOOL", "uint8": "U8", "int8": "I8", "int16": "I16", "float16": "F16",
    "bfloat16": "BF16", "int32": "I32", "float32": "F32", "complex64": "C64",
    "float64": "F64", "int64": "I64",
}
_FROM_CODE = {v: k for k, v in _CODE.items()}
_KNOWN_CODES = {"BOOL", "F4", "F6_E2M3", "F6_E3M2", "U8", "I8", "F8_E5M2", "F8_E4M3", "F8_E8M0",
                "F8_E4M3FNUZ", "F8_E5M2FNUZ", "I16", "U16", "F16", "BF16", "I32", "U32", "F32",
                "C64", "F64", "I64", "U64"}
MAX_HEADER = 100_000_000


def _check_tensors(tensors: Any) -> None:
    """safetensors.torch's checks: a dict of str -> dense, contiguous, non-overlapping tensors."""
    if not isinstance(tensors, dict):
        raise ValueError(
            f"Expected a dict of [str, torch.Tensor] but received {type(tensors)}"
        )
    for k, v in tensors.items():
        if not isinstance(k, str):
            raise TypeError(
                f"argument 'tensor_dict': '{type(k).__name__}' object is not an instance of 'str'"
            )
        if not isinstance(v, Tensor):
            raise ValueError(f"Key `{k}` is invalid, expected torch.Tensor but received {type(v)}")
    shared = _shared_groups(tensors)
    if shared:
        raise RuntimeError(
            "\n            Some tensors share memory, this will lead to duplicate memory on disk "
            f"and potential differences when loading them again: {shared}.\n            A "
            "potential way to correctly save your model is to use `save_model`.\n            "
            "More information at https://huggingface.co/docs/safetensors/torch_shared_tensors"
            "\n            "
        )
    for k, v in tensors.items():
        if not v._data.flags.c_contiguous:
            raise ValueError(
                f"You are trying to save a non contiguous tensor: `{k}` which is not allowed. It "
                "either means you are trying to save tensors which are reference of each other "
                "in which case it's recommended to save only the full tensors, and reslice at "
                "load time, or simply call `.contiguous()` on your tensor to pack it before "
                "saving."
            )
        if v.dtype.name not in _CODE:
            raise ValueError(f"safetensors cannot store tensors of dtype {v.dtype} (`{k}`)")


def _byte_bounds(a: np.ndarray) -> tuple[int, int]:
    """[low, high) addresses of the bytes ``a`` touches (``a`` non-empty)."""
    low = high = a.__array_interface__["data"][0]
    for n, step in zip(a.shape, a.strides, strict=True):
        if step < 0:
            low += (n - 1) * step
        else:
            high += (n - 1) * step
    return low, high + a.itemsize


def _root(a: np.ndarray) -> int:
    while isinstance(a.base, np.ndarray):
        a = a.base
    return id(a.base) if a.base is not None else id(a)


def _shared_groups(tensors: dict[str, Tensor]) -> list[set[str]]:
    """Names of tensors whose bytes overlap, grouped (what safetensors refuses to write)."""
    by_root: dict[int, list[tuple[int, int, str]]] = {}
    for k, v in tensors.items():
        if v._data.nbytes == 0:
            continue
        lo, hi = _byte_bounds(v._data)
        by_root.setdefault(_root(v._data), []).append((lo, hi, k))
    groups: list[set[str]] = []
    for spans in by_root.values():
        spans.sort()
        current: set[str] = set()
        end = -1
        for lo, hi, k in spans:
            if lo < end:
                current.add(k)
            else:
                if len(current) > 1:
                    groups.append(current)
                current = {k}
            end = max(end, hi)
        if len(current) > 1:
            groups.append(current)
    return groups


def _check_metadata(metadata: Any) -> None:
    if metadata is None:
        return
    if not isinstance(metadata, dict):
        raise TypeError(
            f"argument 'metadata': '{type(metadata).__name__}' object is not an instance of "
            "'dict'"
        )
    for k, v in metadata.items():
        for x in (k, v):
            if not isinstance(x, str):
                raise TypeError(
                    f"argument 'metadata': '{type(x).__name__}' object is not an instance of "
                    "'str'"
                )


def _layout(tensors: dict[str, Tensor], metadata: dict[str, str] | None
            ) -> tuple[bytes, list[np.ndarray]]:
    """The padded header bytes and the tensors' byte arrays, in file order."""
    _check_tensors(tensors)
    _check_metadata(metadata)
    names = sorted(
        tensors,
        key=lambda k: (-_ORDER.index(_CODE[tensors[k].dtype.name]), k.encode("utf-8")),
    )
    header: dict[str, Any] = {}
    if metadata is not None:
        header["__metadata__"] = {k: metadata[k] for k in sorted(metadata)}
    chunks, offset = [], 0
    for k in names:
        t = tensors[k]
        data = _le_bytes(t._data)
        header[k] = {
            "dtype": _CODE[t.dtype.name],
            "shape": list(t._data.shape),
            "data_offsets": [offset, offset + data.size],
        }
        offset += data.size
        chunks.append(data)
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    text += b" " * (-(8 + len(text)) % 8)
    return struct.pack("<Q", len(text)) + text, chunks


def _write(fh: IO[bytes], head: bytes, chunks: list[np.ndarray]) -> None:
    fh.write(head)
    for c in chunks:
        if c.size:
            fh.write(c.data)


def save(tensors: dict[str, Tensor], metadata: dict[str, str] | None = None) -> bytes:
    """The .safetensors bytes of a dict of contiguous tensors (``safetensors.torch.save``).

    Example:
        >>> import tapegrad as torch
        >>> from tapegrad.utils import safetensors
        >>> data = safetensors.save({"w": torch.ones(2)})
        >>> safetensors.load(data)
        {'w': tensor([1., 1.])}
    """
    head, chunks = _layout(tensors, metadata)
    return head + b"".join(c.tobytes() for c in chunks)


def save_file(tensors: dict[str, Tensor], filename: str | os.PathLike,
              metadata: dict[str, str] | None = None) -> None:
    """Write a .safetensors file (atomically: a temporary file renamed over ``filename``)."""
    head, chunks = _layout(tensors, metadata)
    atomic_write(filename, lambda fh: _write(fh, head, chunks))


class _Header:
    """The parsed and checked header of a .safetensors buffer."""

    def __init__(self, buf: Any, name: str) -> None:
        size = len(buf)
        if size < 8:
            raise SafetensorError(f"{name}: Error while deserializing: header too small")
        (n,) = struct.unpack_from("<Q", buf, 0)
        if n > MAX_HEADER:
            raise SafetensorError(f"{name}: Error while deserializing: header too large")
        if n > size - 8:
            raise SafetensorError(f"{name}: Error while deserializing: invalid header length")
        try:
            header = json.loads(bytes(buf[8:8 + n]).decode("utf-8"))
        except (ValueError, UnicodeDecodeError, RecursionError) as exc:
            raise SafetensorError(
                f"{name}: Error while deserializing: invalid JSON in header: {exc}"
            ) from None
        if not isinstance(header, dict):
            raise SafetensorError(f"{name}: Error while deserializing: invalid JSON in header")
        meta = header.pop("__metadata__", None)
        if meta is not None and not (
            isinstance(meta, dict)
            and all(isinstance(k, str) and isinstance(v, str) for k, v in meta.items())
        ):
            raise SafetensorError(
                f"{name}: Error while deserializing: invalid JSON in header: __metadata__ must "
                "map strings to strings"
            )
        self.metadata: dict[str, str] | None = meta
        self.start = 8 + n
        self.entries: dict[str, tuple[np.dtype, tuple[int, ...], int, int]] = {}
        spans = []
        for key, info in header.items():
            try:
                code, shape, (begin, end) = info["dtype"], info["shape"], info["data_offsets"]
                ok = (
                    isinstance(code, str)
                    and all(isinstance(s, int) and not isinstance(s, bool) and s >= 0
                            for s in shape)
                    and all(isinstance(x, int) and not isinstance(x, bool) for x in (begin, end))
                )
            except (TypeError, KeyError, ValueError):
                ok = False
            if not ok:
                raise SafetensorError(
                    f"{name}: Error while deserializing: invalid JSON in header: bad entry for "
                    f"tensor `{key}`"
                )
            if code not in _KNOWN_CODES:
                raise SafetensorError(
                    f"{name}: Error while deserializing: invalid JSON in header: unknown dtype "
                    f"`{code}`"
                )
            if code not in _FROM_CODE:
                raise SafetensorError(
                    f"{name}: tensor `{key}` has dtype {code}, which tapegrad does not support"
                )
            dt = _np_dtype_of(_FROM_CODE[code])
            count = 1
            for s in shape:
                count *= s
            if end < begin or begin < 0:
                raise SafetensorError(
                    f"{name}: Error while deserializing: invalid offset for tensor `{key}`"
                )
            if end - begin != count * dt.itemsize:
                raise SafetensorError(
                    f"{name}: Error while deserializing: invalid shape, data type, or offset for "
                    f"tensor `{key}`"
                )
            self.entries[key] = (dt, tuple(shape), begin, end)
            spans.append((begin, end, key))
        spans.sort()
        covered = 0
        for begin, end, key in spans:
            if begin != covered:
                raise SafetensorError(
                    f"{name}: Error while deserializing: invalid offset for tensor `{key}`"
                )
            covered = end
        if self.start + covered != size:
            raise SafetensorError(
                f"{name}: Error while deserializing: incomplete metadata, file not fully covered"
            )

    def tensor(self, buf: Any, key: str) -> Tensor:
        dt, shape, begin, end = self.entries[key]
        count = (end - begin) // dt.itemsize
        arr = np.frombuffer(buf, dtype=dt, count=count, offset=self.start + begin).reshape(shape)
        if not dt.isnative:
            arr = arr.astype(dt.newbyteorder("="))
        return Tensor._make(arr)


def _np_dtype_of(name: str) -> np.dtype:
    if name == "bfloat16":
        if _dtype.bfloat16 is None:
            raise SafetensorError("bfloat16 tensors need the optional dependency ml_dtypes")
        return _dtype.bfloat16.np
    d = getattr(_dtype, "bool_" if name == "bool" else name)
    return d.np.newbyteorder("<")


def _decode(buf: Any, name: str) -> dict[str, Tensor]:
    if not isinstance(buf, bytearray):
        buf = bytearray(buf)  # writable tensors, as torch's
    header = _Header(buf, name)
    return {k: header.tensor(buf, k) for k in sorted(header.entries, key=lambda s: s.encode())}


def load(data: bytes) -> dict[str, Tensor]:
    """The tensors of .safetensors bytes, by name (``safetensors.torch.load``)."""
    return _decode(data, "<bytes>")


def load_file(filename: str | os.PathLike, device: Any = "cpu") -> dict[str, Tensor]:
    """The tensors of a .safetensors file, by name (``safetensors.torch.load_file``)."""
    with safe_open(filename, framework="pt", device=device) as f:
        return {k: f.get_tensor(k) for k in f.keys()}


class safe_open:
    """Open a .safetensors file and read tensors by name (``safetensors.safe_open``).

    Example:
        >>> from tapegrad.utils.safetensors import safe_open
        >>> with safe_open("model.safetensors", framework="pt") as f:  # doctest: +SKIP
        ...     w = f.get_tensor("weight")
    """

    def __init__(self, filename: str | os.PathLike, framework: str = "pt",
                 device: Any = "cpu") -> None:
        check(device if not isinstance(device, int) else "cuda")  # a CPU-only build's error
        name = os.fsdecode(os.fspath(filename))
        with open(name, "rb") as fh:
            self._buf = bytearray(fh.read())
        self._name = name
        self._header = _Header(self._buf, name)

    def __enter__(self) -> safe_open:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def keys(self) -> list[str]:
        return sorted(self._header.entries, key=lambda s: s.encode())

    def metadata(self) -> dict[str, str] | None:
        return self._header.metadata

    def get_tensor(self, name: str) -> Tensor:
        if name not in self._header.entries:
            raise SafetensorError(f"File does not contain tensor {name}")
        return self._header.tensor(self._buf, name)

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())
