"""The zip container of torch's checkpoints: written the way torch writes it, read defensively.

``torch.save`` writes an uncompressed zip archive whose entries all sit in one folder (the
archive name: ``archive`` for a file object, the file's name without its extension for a
path)::

    local header | "FB" padding extra field | record bytes (64-byte aligned) | data descriptor
    ... one per record ...
    central directory | zip64 end record | zip64 locator | end record

Every local header has bit 3 set (sizes and CRC-32 follow the data, in a data descriptor;
except an empty record's, which has none) and bit 11 (UTF-8 names); times are zero. The
padding extra field ("FB", its length, then ``Z`` bytes) makes each record's bytes start on a
64-byte boundary, so a storage can be memory-mapped in place. :class:`ZipWriter` writes
exactly that layout, byte for byte, so ``torch.load`` and any zip tool read it.

:class:`ZipReader` reads any zip (stored or deflated, zip64 or not) and trusts nothing: the
central directory must lie inside the file, each local header must match its directory entry,
each record must end before the directory starts, and each record's CRC-32 is checked when it
is read (torch itself does not check it). A truncated file, a record whose size lies, a
flipped bit in a record: each is a :class:`CheckpointError` (a RuntimeError) with torch's
message where torch has one, never a silently wrong number.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterable
from typing import IO, Any

import numpy as np

from ._errors import CorruptCheckpointError, NotACheckpointError, TruncatedCheckpointError

__all__ = ["ZipReader", "ZipWriter", "ZIP_MAGIC", "ALIGNMENT"]

ZIP_MAGIC = b"PK\x03\x04"
ALIGNMENT = 64  # torch's storage alignment: record bytes start on a multiple of 64

_LOCAL = struct.Struct("<4sHHHHHIIIHH")  # 30 bytes
_CENTRAL = struct.Struct("<4sHHHHHHIIIHHHHHII")  # 46 bytes
_END = struct.Struct("<4sHHHHIIH")  # 22 bytes
_END64 = struct.Struct("<4sQHHIIQQQQ")  # 56 bytes
_LOCATOR64 = struct.Struct("<4sIQI")  # 20 bytes
_U32_MAX = 0xFFFFFFFF  # a 32-bit field with this value says "see the zip64 extra field"
_ZIP64_FROM = _U32_MAX  # sizes and offsets from here on need zip64 fields
_FLAGS = 0x0808  # bit 3: data descriptor follows the data; bit 11: UTF-8 names
_FLAGS_EMPTY = 0x0800  # an empty record has no data descriptor

# torch's reader appends this to every error its zip library reports
_MINIZ = (
    ". This is an internal miniz error. If you are seeing this error, there is a high "
    "likelihood that your checkpoint file is corrupted. This can happen if the checkpoint was "
    "not saved properly, was transferred incorrectly, or the file was modified after saving."
)


# ---------------------------------------------------------------------------------------------
# writing
# ---------------------------------------------------------------------------------------------


class ZipWriter:
    """Writes records into ``fh`` as torch's PyTorchFileWriter does.

    Example:
        >>> import io
        >>> buf = io.BytesIO()
        >>> w = ZipWriter(buf, "archive")
        >>> w.write_record("version", b"3\\n")
        >>> w.close()
        >>> ZipReader(io.BytesIO(buf.getvalue()), "<buf>").read("archive/version")
        b'3\\n'
    """

    def __init__(self, fh: IO[bytes], archive_name: str) -> None:
        self.fh = fh
        self.prefix = archive_name + "/"
        self.pos = 0
        self.entries: list[tuple[bytes, int, int, int]] = []  # name, crc, size, header offset

    def _put(self, data: Any) -> None:
        self.fh.write(data)
        self.pos += len(data) if isinstance(data, (bytes, bytearray)) else memoryview(data).nbytes

    def write_record(self, name: str, data: bytes | np.ndarray) -> None:
        """Append one stored (uncompressed) record; ``data`` is bytes or a C-contiguous array."""
        raw = name_bytes = (self.prefix + name).encode("utf-8")
        view = data.data.cast("B") if isinstance(data, np.ndarray) else memoryview(data)
        size = view.nbytes
        offset = self.pos
        big, far = size >= _ZIP64_FROM, offset >= _ZIP64_FROM
        zip64 = b""
        if big or far:  # a zip64 extra field comes first
            values = ([size, size] if big else []) + ([offset] if far else [])
            zip64 = struct.pack(f"<HH{len(values)}Q", 1, 8 * len(values), *values)
        start = offset + _LOCAL.size + len(raw) + len(zip64) + 4
        padding = (-start) % ALIGNMENT
        extra = zip64 + b"FB" + struct.pack("<H", padding) + b"Z" * padding
        local_size = _U32_MAX if big else 0
        flags = _FLAGS if size else _FLAGS_EMPTY
        self._put(_LOCAL.pack(b"PK\x03\x04", 0, flags, 0, 0, 0, 0, local_size, local_size,
                              len(raw), len(extra)) + name_bytes + extra)
        crc = 0
        chunk = 1 << 24
        for i in range(0, size, chunk):  # checksum and write without copying the array
            piece = view[i:i + chunk]
            crc = zlib.crc32(piece, crc)
            self._put(piece)
        if not size:
            pass  # an empty record has no data descriptor: its header's zeros are its values
        elif big or far:
            self._put(struct.pack("<4sIQQ", b"PK\x07\x08", crc, size, size))
        else:
            self._put(struct.pack("<4sIII", b"PK\x07\x08", crc, size, size))
        self.entries.append((name_bytes, crc, size, offset))

    def close(self) -> None:
        """Write the central directory and the end records."""
        cd_offset = self.pos
        for name, crc, size, offset in self.entries:
            big, far = size >= _ZIP64_FROM, offset >= _ZIP64_FROM
            values = ([size, size] if big else []) + ([offset] if far else [])
            extra = struct.pack(f"<HH{len(values)}Q", 1, 8 * len(values), *values) if values \
                else b""
            shown = _U32_MAX if big else size
            self._put(_CENTRAL.pack(
                b"PK\x01\x02", 0, 45 if values else 0, _FLAGS if size else _FLAGS_EMPTY, 0, 0, 0,
                crc, shown, shown,
                len(name), len(extra), 0, 0, 0, 0, _U32_MAX if far else offset) + name + extra)
        cd_size = self.pos - cd_offset
        end64_offset = self.pos
        n = len(self.entries)
        self._put(_END64.pack(b"PK\x06\x06", _END64.size - 12, 0x031E, 45, 0, 0, n, n, cd_size,
                              cd_offset))
        self._put(_LOCATOR64.pack(b"PK\x06\x07", 0, end64_offset, 1))
        self._put(_END.pack(b"PK\x05\x06", 0, 0, min(n, 0xFFFF), min(n, 0xFFFF),
                            min(cd_size, _U32_MAX), min(cd_offset, _U32_MAX), 0))


# ---------------------------------------------------------------------------------------------
# reading
# ---------------------------------------------------------------------------------------------


class _Entry:
    __slots__ = ("name", "header_offset", "size", "stored_size", "crc", "method")

    def __init__(self, name: str, header_offset: int, size: int, stored_size: int, crc: int,
                 method: int) -> None:
        self.name = name
        self.header_offset = header_offset
        self.size = size
        self.stored_size = stored_size
        self.crc = crc
        self.method = method


def _zip64_values(extra: bytes, wanted: Iterable[bool]) -> list[int]:
    """The 64-bit values of a zip64 extra field, in the order of the ``wanted`` fields."""
    pos = 0
    while pos + 4 <= len(extra):
        tag, length = struct.unpack_from("<HH", extra, pos)
        if tag == 1:
            body = extra[pos + 4:pos + 4 + length]
            count = sum(1 for w in wanted if w)
            if len(body) < 8 * count:
                break
            return list(struct.unpack_from(f"<{count}Q", body))
        pos += 4 + length
    raise CorruptCheckpointError("PytorchStreamReader failed reading zip archive: invalid header "
                                 "or archive is corrupted" + _MINIZ)


class ZipReader:
    """The records of a zip archive in a seekable binary file (read lazily, checked on read)."""

    def __init__(self, fh: IO[bytes], name: str) -> None:
        self.fh = fh
        self.name = name
        fh.seek(0, 2)
        self.size = fh.tell()
        self.entries: dict[str, _Entry] = {}
        self._read_directory()

    def _fail(self, what: str, kind: type[Exception] = CorruptCheckpointError) -> Exception:
        return kind(f"PytorchStreamReader failed reading zip archive: {what}{_MINIZ}")

    def _read_at(self, offset: int, n: int) -> bytes:
        self.fh.seek(offset)
        return self.fh.read(n)

    def _read_directory(self) -> None:
        if self.size < _END.size:
            raise self._fail("not a ZIP archive", NotACheckpointError if self.size < 4
                             else TruncatedCheckpointError)
        tail_len = min(self.size, _END.size + 0xFFFF)
        tail = self._read_at(self.size - tail_len, tail_len)
        at = tail.rfind(b"PK\x05\x06")
        while at >= 0 and at + _END.size > len(tail):
            at = tail.rfind(b"PK\x05\x06", 0, at)
        if at < 0:
            # a zip file always ends with its end record: without one it was cut short
            raise self._fail("failed finding central directory", TruncatedCheckpointError)
        end_pos = self.size - tail_len + at
        _, disk, cd_disk, n_disk, n, cd_size, cd_offset, _comment = _END.unpack_from(tail, at)
        if disk or cd_disk or n_disk != n:
            raise self._fail("unsupported multidisk archive")
        directory_end = end_pos
        loc_pos = end_pos - _LOCATOR64.size
        if loc_pos >= 0:
            locator = self._read_at(loc_pos, _LOCATOR64.size)
            if locator[:4] == b"PK\x06\x07":
                (_, _, end64_pos, _) = _LOCATOR64.unpack(locator)
                record = self._read_at(end64_pos, _END64.size) if end64_pos < loc_pos else b""
                if len(record) != _END64.size or record[:4] != b"PK\x06\x06":
                    raise self._fail("invalid header or archive is corrupted")
                (_, _, _, _, _, _, _, n, cd_size, cd_offset) = _END64.unpack(record)
                directory_end = end64_pos
        if cd_offset + cd_size > directory_end:
            raise self._fail("invalid header or archive is corrupted")
        directory = self._read_at(cd_offset, cd_size)
        pos = 0
        for _ in range(n):
            if pos + _CENTRAL.size > len(directory) or directory[pos:pos + 4] != b"PK\x01\x02":
                raise self._fail("invalid header or archive is corrupted")
            (_, _, _, flags, method, _, _, crc, stored, size, name_len, extra_len, comment_len,
             _, _, _, offset) = _CENTRAL.unpack_from(directory, pos)
            pos += _CENTRAL.size
            raw_name = directory[pos:pos + name_len]
            extra = directory[pos + name_len:pos + name_len + extra_len]
            pos += name_len + extra_len + comment_len
            if pos > len(directory):
                raise self._fail("invalid header or archive is corrupted")
            wanted = [size == _U32_MAX, stored == _U32_MAX, offset == _U32_MAX]
            if any(wanted):
                values = iter(_zip64_values(extra, wanted))
                size = next(values) if wanted[0] else size
                stored = next(values) if wanted[1] else stored
                offset = next(values) if wanted[2] else offset
            if flags & 1:
                raise self._fail("unsupported encryption")
            if method not in (0, 8):
                raise self._fail("unsupported method")
            if method == 0 and stored != size:
                raise self._fail("invalid header or archive is corrupted")
            if offset + _LOCAL.size + len(raw_name) + stored > cd_offset:
                raise self._fail("invalid header or archive is corrupted")
            name = raw_name.decode("utf-8" if flags & 0x800 else "cp437", "replace")
            self.entries[name] = _Entry(name, offset, size, stored, crc, method)
        self.cd_offset = cd_offset

    def names(self) -> list[str]:
        return list(self.entries)

    def data_offset(self, name: str) -> int:
        """Where the bytes of record ``name`` start in the file (its local header checked)."""
        e = self.entries[name]
        head = self._read_at(e.header_offset, _LOCAL.size)
        if len(head) < _LOCAL.size or head[:4] != b"PK\x03\x04":
            raise self._fail("invalid header or archive is corrupted")
        name_len, extra_len = struct.unpack_from("<HH", head, 26)
        if self._read_at(e.header_offset + _LOCAL.size, name_len).decode(
                "utf-8", "replace") != name:
            raise self._fail("invalid header or archive is corrupted")
        start = e.header_offset + _LOCAL.size + name_len + extra_len
        if start + e.stored_size > self.cd_offset:
            raise self._fail("invalid header or archive is corrupted")
        return start

    def read_into(self, name: str, out: np.ndarray, check: bool = True) -> None:
        """Fill the C-contiguous array ``out`` (exactly the record's size) with record ``name``."""
        e = self.entries[name]
        start = self.data_offset(name)
        target = out.data.cast("B")
        if e.method == 0:
            self.fh.seek(start)
            got = self.fh.readinto(target) if hasattr(self.fh, "readinto") else None
            if got is None:
                data = self.fh.read(e.size)
                got = len(data)
                target[:got] = data
            if got != e.size:
                raise TruncatedCheckpointError(
                    f"{self.name}: the file is truncated: record {name} ends after {got} of its "
                    f"{e.size} bytes")
        else:
            raw = self._read_at(start, e.stored_size)
            inflater = zlib.decompressobj(-15)
            try:
                data = inflater.decompress(raw, e.size)
            except zlib.error as exc:
                raise CorruptCheckpointError(
                    f"{self.name}: record {name} cannot be decompressed ({exc})") from None
            if len(data) != e.size or inflater.unconsumed_tail:
                raise CorruptCheckpointError(
                    f"{self.name}: record {name} does not decompress to its recorded size")
            target[:] = data
        if check and e.crc != 0 and zlib.crc32(target) != e.crc:
            raise CorruptCheckpointError(
                f"{self.name}: record {name} is corrupted (CRC-32 checksum mismatch)")

    def read(self, name: str) -> bytes:
        """The bytes of record ``name``, checked against their CRC-32."""
        out = np.empty(self.entries[name].size, dtype=np.uint8)
        self.read_into(name, out)
        return out.tobytes()
