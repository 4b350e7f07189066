"""PNG written byte for byte as torchvision's libpng 1.6 writes it, and the parts of PNG reading
that Pillow does not do as libpng does (16-bit color, the grey conversion).

Writing (``encode``), libpng's choices with torchvision's settings, reproduced:

* each row gets the filter (None, Sub, Up, Average, Paeth) whose bytes, read as signed, have the
  smallest sum of absolute values, the earliest filter winning ties; a one-row image tries only
  None and Sub, a one-pixel-wide image only None and Up;
* zlib at the requested level, memLevel 8, strategy ``Z_FILTERED`` (``Z_DEFAULT_STRATEGY`` when
  only the None filter is possible), the window shrunk to fit a small image (the smallest
  ``2**w`` with ``w >= 9`` that holds the data plus 262 bytes), and the stream header's window
  field then rewritten to the smallest one the data needs;
* IDAT chunks of 8192 bytes; no chunks but IHDR, IDAT and IEND.

Reading: Pillow decodes 8-bit (and smaller) images; 16-bit images are decoded here (zlib, then
the filters undone row by row), since Pillow reduces 16-bit color to 8 bits. The conversion to
grey is libpng's: ``(9794 R + 19234 G + 3740 B) >> 15`` in fixed point (torchvision asks for
coefficients 0.2989 and 0.587; rounded for 16-bit samples, truncated for 8-bit ones), through
libpng's gamma tables when an 8-bit file declares a gamma (gAMA or sRGB) that is not 1.
"""

from __future__ import annotations

import math
import struct
import zlib

import numpy as np

SIGNATURE = b"\x89PNG\r\n\x1a\n"
IDAT_SIZE = 8192  # libpng's compression buffer: one IDAT chunk each time it fills


def _chunk(kind: bytes, data: bytes) -> bytes:
    crc = zlib.crc32(kind + data) & 0xFFFFFFFF
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)


def _filter_rows(rows: np.ndarray, bpp: int, allowed: list[int]) -> bytes:
    """Filter every row of ``rows`` (H, rowbytes) with the filter libpng's heuristic picks."""
    r = rows.astype(np.int32)
    prev = np.zeros_like(r)
    prev[1:] = r[:-1]
    left = np.zeros_like(r)
    left[:, bpp:] = r[:, :-bpp]
    up_left = np.zeros_like(r)
    up_left[:, bpp:] = prev[:, :-bpp]
    p = prev - up_left  # Paeth: the neighbour closest to left + up - up_left
    q = left - up_left
    pa, pb, pc = np.abs(p), np.abs(q), np.abs(p + q)
    paeth = np.where((pa <= pb) & (pa <= pc), left, np.where(pb <= pc, prev, up_left))
    candidates = np.stack([r, r - left, r - prev, r - (prev + left) // 2, r - paeth]) & 0xFF
    if len(allowed) == 1:
        choice = np.full(len(rows), allowed[0])
    else:
        cost = np.minimum(candidates, 256 - candidates).sum(axis=2)  # bytes >= 128 count negative
        masked = np.full_like(cost, np.iinfo(cost.dtype).max)
        masked[allowed] = cost[allowed]
        choice = masked.argmin(axis=0)  # the first of equal sums: libpng's order
    picked = candidates[choice, np.arange(len(rows))].astype(np.uint8)
    return np.concatenate([choice.astype(np.uint8)[:, None], picked], axis=1).tobytes()


def _optimize_cmf(data: bytearray, size: int) -> None:
    """libpng's rewrite of the zlib header: the smallest window that holds ``size`` bytes."""
    if size > 16384:
        return
    cmf = data[0]
    if (cmf & 0x0F) != 8 or (cmf & 0xF0) > 0x70:
        return
    cinfo = cmf >> 4
    half = 1 << (cinfo + 7)
    if size > half:
        return
    while True:
        half >>= 1
        cinfo -= 1
        if not (cinfo > 0 and size <= half):
            break
    cmf = (cmf & 0x0F) | (cinfo << 4)
    flags = data[1] & 0xE0
    flags += 0x1F - ((cmf << 8) + flags) % 0x1F
    data[0], data[1] = cmf, flags


def encode(pixels: np.ndarray, level: int) -> bytes:
    """The PNG of a uint8 (H, W, C) array, C 1 (grey) or 3 (RGB), as libpng writes it."""
    height, width, channels = pixels.shape
    allowed = [0, 1, 2, 3, 4]
    if height == 1:
        allowed = [f for f in allowed if f not in (2, 3, 4)]
    if width == 1:
        allowed = [f for f in allowed if f not in (1, 3, 4)]
    rows = pixels.reshape(height, width * channels)
    filtered = _filter_rows(rows, channels, allowed)
    size = (width * channels + 1) * height
    window = 15
    if size <= 16384:
        half = 1 << (window - 1)
        while size + 262 <= half:
            half >>= 1
            window -= 1
    strategy = zlib.Z_DEFAULT_STRATEGY if allowed == [0] else zlib.Z_FILTERED
    compressor = zlib.compressobj(level, zlib.DEFLATED, window, 8, strategy)
    stride = width * channels + 1
    parts = [compressor.compress(filtered[i:i + stride]) for i in range(0, len(filtered), stride)]
    data = bytearray(b"".join(parts) + compressor.flush())
    _optimize_cmf(data, size)
    header = struct.pack(">IIBBBBB", width, height, 8, 0 if channels == 1 else 2, 0, 0, 0)
    out = [SIGNATURE, _chunk(b"IHDR", header)]
    out += [_chunk(b"IDAT", bytes(data[i:i + IDAT_SIZE])) for i in range(0, len(data), IDAT_SIZE)]
    out.append(_chunk(b"IEND", b""))
    return b"".join(out)


# -- reading ------------------------------------------------------------------------------------

class Info:
    """What the chunks before the pixels say."""

    width = height = bit_depth = color_type = interlace = 0
    gamma: int | None = None  # in units of 1/100000, from gAMA (or 45455 for sRGB)
    exif: bytes | None = None
    has_trns = False


def read_chunks(data: bytes) -> tuple[Info, bytes]:
    """The header's facts and the concatenated IDAT data; raises ``EOFError`` when the data
    ends inside a chunk libpng must read (up to the last IDAT)."""
    info = Info()
    pos, idat, seen_idat = 8, [], False
    while True:
        if pos + 8 > len(data):
            raise EOFError
        (length,), kind = struct.unpack(">I", data[pos:pos + 4]), data[pos + 4:pos + 8]
        if seen_idat and kind != b"IDAT":
            break  # the pixels are complete; libpng reads no further
        body = data[pos + 8:pos + 8 + length]
        if len(body) < length or pos + 12 + length > len(data):
            raise EOFError
        if kind == b"IHDR":
            (info.width, info.height, info.bit_depth, info.color_type, _, _,
             info.interlace) = struct.unpack(">IIBBBBB", body[:13])
        elif kind == b"gAMA" and info.gamma is None:
            info.gamma = struct.unpack(">I", body[:4])[0]
        elif kind == b"sRGB":
            info.gamma = 45455
        elif kind == b"eXIf":
            info.exif = body
        elif kind == b"tRNS":
            info.has_trns = True
        elif kind == b"IDAT":
            idat.append(body)
            seen_idat = True
        elif kind == b"IEND":
            break
        pos += 12 + length
    return info, b"".join(idat)


def decode_16bit(info: Info, idat: bytes) -> np.ndarray:
    """The uint16 (H, W, C) pixels of a non-interlaced 16-bit PNG."""
    channels = {0: 1, 2: 3, 4: 2, 6: 4}[info.color_type]
    bpp = 2 * channels
    stride = info.width * bpp
    raw = np.frombuffer(zlib.decompress(idat), np.uint8)[:(stride + 1) * info.height]
    raw = raw.reshape(info.height, stride + 1)
    out = np.zeros((info.height, stride), np.uint8)
    prev = np.zeros(stride, np.int32)
    for y in range(info.height):
        kind, row = raw[y, 0], raw[y, 1:].astype(np.int32)
        if kind == 1:  # Sub: a running sum per byte position within the pixel
            cur = np.cumsum(row.reshape(-1, bpp), axis=0).reshape(-1) & 0xFF
        elif kind == 2:
            cur = (row + prev) & 0xFF
        elif kind in (3, 4):
            cur = row.copy()
            for x in range(stride):
                a = cur[x - bpp] if x >= bpp else 0
                b = prev[x]
                if kind == 3:
                    cur[x] = (cur[x] + (a + b) // 2) & 0xFF
                else:
                    c = prev[x - bpp] if x >= bpp else 0
                    pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                    pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                    cur[x] = (cur[x] + pred) & 0xFF
        else:
            cur = row
        out[y] = cur
        prev = cur
    return out.view(">u2").astype(np.uint16).reshape(info.height, info.width, channels)


def _significant(gamma: int) -> bool:
    return gamma < 95000 or gamma > 105000


def _reciprocal(gamma: int) -> int:
    return int(math.floor(1e10 / gamma + 0.5))


def _table(gamma: int) -> np.ndarray:
    """libpng's 8-bit gamma table: 255 * (i / 255) ** (gamma / 100000), rounded."""
    if not _significant(gamma):
        return np.arange(256, dtype=np.int64)
    values = [math.floor(255 * math.pow(i / 255.0, gamma * 0.00001) + 0.5) for i in range(256)]
    values[0], values[255] = 0, 255
    return np.array(values, dtype=np.int64)


def rgb_to_gray(rgb: np.ndarray, gamma: int | None) -> np.ndarray:
    """libpng's ``png_set_rgb_to_gray(png, 1, 0.2989, 0.587)`` on (H, W, 3) values; pixels with
    R == G == B are kept as they are."""
    red, green, blue = (rgb[..., i].astype(np.int64) for i in range(3))
    same = (red == green) & (red == blue)
    if rgb.dtype != np.uint8:  # 16-bit samples: rounded to nearest
        gray = (9794 * red + 19234 * green + 3740 * blue + 16384) >> 15
    elif gamma is None or not _significant(gamma):
        gray = (9794 * red + 19234 * green + 3740 * blue) >> 15
    else:  # linearize, weigh, re-encode (the file gamma is the screen gamma: no overall change)
        to_linear, from_linear = _table(_reciprocal(gamma)), _table(_reciprocal(_reciprocal(gamma)))
        linear = (9794 * to_linear[red] + 19234 * to_linear[green] + 3740 * to_linear[blue]
                  + 16384) >> 15
        gray = from_linear[linear]
    return np.where(same, red, gray).astype(rgb.dtype)
