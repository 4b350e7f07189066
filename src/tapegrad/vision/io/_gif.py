"""GIF decoding as torchvision's (giflib) does it: every frame's pixels looked up in its own
color table (the local one, else the global one), with no compositing, no transparency and no
offsets; all frames must have the first frame's size.

The reader follows giflib's steps and reports its error codes: 102 a read past the end, 103 not
a GIF, 104 no screen descriptor, 107 an unknown record, 112 a bad LZW code, 113 the pixel data
ending too soon, 105 no image at all.
"""

from __future__ import annotations

import numpy as np

_INTERLACE = ((0, 8), (4, 8), (2, 4), (1, 2))  # giflib's (first row, step) of the four passes


class GifError(Exception):
    def __init__(self, stage: str, code: int) -> None:
        super().__init__(f"{stage} failed - {code}")


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def read(self, n: int, stage: str, code: int = 102) -> bytes:
        if self.pos + n > len(self.data):
            self.pos = len(self.data)
            raise GifError(stage, code)
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def word(self, stage: str) -> int:
        return int.from_bytes(self.read(2, stage), "little")


def _color_table(reader: _Reader, flags: int, stage: str, code: int = 102) -> np.ndarray:
    size = 1 << ((flags & 7) + 1)
    return np.frombuffer(reader.read(3 * size, stage, code), np.uint8).reshape(size, 3)


def _lzw(reader: _Reader, count: int) -> bytes:
    """``count`` color indices from the LZW-coded sub-blocks that follow (the rest of the image's
    data is skipped, as giflib skips it)."""
    stage = "DGifSlurp()"
    min_size = reader.read(1, stage)[0]
    clear, end = 1 << min_size, (1 << min_size) + 1
    table = [bytes([i]) for i in range(clear)] + [b"", b""]
    size, out, prev = min_size + 1, bytearray(), None
    bits = nbits = 0

    def block() -> bytes:
        length = reader.read(1, stage)[0]
        if length == 0:
            raise GifError(stage, 113)
        return reader.read(length, stage)

    data, at = b"", 0
    while len(out) < count:
        while nbits < size:
            if at == len(data):
                data, at = block(), 0
            bits |= data[at] << nbits
            at += 1
            nbits += 8
        code = bits & ((1 << size) - 1)
        bits >>= size
        nbits -= size
        if code == clear:
            del table[end + 1:]
            size, prev = min_size + 1, None
            continue
        if code == end:
            raise GifError(stage, 113)
        if code < len(table):
            entry = table[code]
            if prev is not None and len(table) < 4096:
                table.append(prev + entry[:1])
        elif code == len(table) and prev is not None:
            entry = prev + prev[:1]
            table.append(entry)
        else:
            raise GifError(stage, 112)
        out += entry
        prev = entry
        if len(table) == (1 << size) and size < 12:
            size += 1
    # the pixels are complete: skip the remaining sub-blocks up to the terminator
    while True:
        length = reader.read(1, stage)[0]
        if length == 0:
            break
        reader.read(length, stage)
    return bytes(out[:count])


def decode(data: bytes) -> np.ndarray:
    """``(N, 3, H, W)`` uint8 frames (``(3, H, W)`` for one frame)."""
    reader = _Reader(data)
    stamp = reader.read(6, "DGifOpenFileName()", 102)
    if stamp[:3] != b"GIF":
        raise GifError("DGifOpenFileName()", 103)
    head = reader.read(7, "DGifOpenFileName()", 104)
    global_table = None
    if head[4] & 0x80:
        global_table = _color_table(reader, head[4], "DGifOpenFileName()", 104)
    frames: list[tuple[int, int, np.ndarray | None, np.ndarray]] = []
    stage = "DGifSlurp()"
    while True:
        kind = reader.read(1, stage)[0]
        if kind == 0x2C:  # an image
            desc = reader.read(9, stage)
            width = int.from_bytes(desc[4:6], "little")
            height = int.from_bytes(desc[6:8], "little")
            local = _color_table(reader, desc[8], stage) if desc[8] & 0x80 else None
            if desc[8] & 0x40:  # interlaced: the rows come in four passes
                rows = [y for first, step in _INTERLACE for y in range(first, height, step)]
                order = np.argsort(np.array(rows, dtype=np.int64), kind="stable")
                pixels = np.frombuffer(_lzw(reader, width * height), np.uint8)
                pixels = pixels.reshape(height, width)[order] if height else pixels
            else:
                pixels = np.frombuffer(_lzw(reader, width * height), np.uint8)
            frames.append((width, height, local, pixels.reshape(height, width)))
        elif kind == 0x21:  # an extension: a label, then sub-blocks
            reader.read(1, stage)
            while True:
                length = reader.read(1, stage)[0]
                if length == 0:
                    break
                reader.read(length, stage)
        elif kind == 0x3B:
            break
        else:
            raise GifError(stage, 107)
    if not frames:
        raise GifError(stage, 105)
    width, height = frames[0][0], frames[0][1]
    out = np.empty((len(frames), 3, height, width), np.uint8)
    for i, (w, h, local, pixels) in enumerate(frames):
        if (w, h) != (width, height):
            raise ValueError("All images in the gif should have the same dimensions.")
        table = local if local is not None else global_table
        if table is None:
            raise ValueError("Global and local color maps are missing. This should never happen!")
        padded = np.zeros((256, 3), np.uint8)
        padded[:len(table)] = table
        out[i] = padded[pixels].transpose(2, 0, 1)
    return out[0] if len(frames) == 1 else out
