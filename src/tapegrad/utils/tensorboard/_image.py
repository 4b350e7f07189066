"""Images for TensorBoard: any layout to one HWC uint8 picture, encoded as PNG.

    add_image(tag, img, dataformats="CHW")     add_images(tag, imgs, dataformats="NCHW")
      convert_to_HWC: transpose to HWC; one channel -> three; a batch (N...) -> a grid of
                      up to 8 images per row (make_grid)
      float images are scaled by 255 (uint8 ones are kept), clipped to [0, 255], truncated
      encode_png: the rows, each behind filter byte 0, deflated (zlib) into one IDAT chunk

The PNG encoder is a few lines of ``zlib`` and ``struct``, so images need no imaging library.
"""

from __future__ import annotations

import struct
import zlib
from typing import Any

import numpy as np


def make_grid(images: np.ndarray, ncols: int = 8) -> np.ndarray:
    """A batch of NCHW images (1 or 3 channels) tiled into one CHW image, ``ncols`` per row."""
    if images.shape[1] == 1:
        images = np.concatenate([images, images, images], 1)
    if images.ndim != 4 or images.shape[1] != 3:
        raise AssertionError("Input should be a 4D numpy array with 3 channels")
    n, _, h, w = images.shape
    ncols = min(n, ncols)
    nrows = -(-n // ncols)
    canvas = np.zeros((3, h * nrows, w * ncols), dtype=images.dtype)
    for i in range(n):
        row, col = divmod(i, ncols)
        canvas[:, row * h:(row + 1) * h, col * w:(col + 1) * w] = images[i]
    return canvas


def convert_to_HWC(tensor: np.ndarray, input_format: str) -> np.ndarray:  # noqa: N802
    """Reorder an image (or a batch) given in ``input_format`` (e.g. 'CHW', 'NHWC', 'HW') to
    HWC with 3 channels (or the image's 4)."""
    if len(set(input_format)) != len(input_format):
        raise AssertionError(
            "You can not use the same dimension shorthand twice.             "
            f"input_format: {input_format}"
        )
    if len(tensor.shape) != len(input_format):
        raise AssertionError(
            "size of input tensor and input format are different.         tensor shape: "
            f"{tensor.shape}, input_format: {input_format}"
        )
    input_format = input_format.upper()
    if len(input_format) == 4:
        nchw = tensor.transpose([input_format.find(c) for c in "NCHW"])
        return make_grid(nchw).transpose(1, 2, 0)
    if len(input_format) == 3:
        hwc = tensor.transpose([input_format.find(c) for c in "HWC"])
        if hwc.shape[2] == 1:
            hwc = np.concatenate([hwc, hwc, hwc], 2)
        return hwc
    hw = tensor.transpose([input_format.find(c) for c in "HW"])
    return np.stack([hw, hw, hw], 2)


def to_uint8(hwc: np.ndarray) -> np.ndarray:
    """uint8 pictures as they are; anything else is taken to be in [0, 1] and scaled by 255."""
    scale = 1 if hwc.dtype == np.uint8 else 255
    return (hwc.astype(np.float32) * scale).clip(0, 255).astype(np.uint8)


_COLOR_TYPES = {1: 0, 2: 4, 3: 2, 4: 6}  # channels -> PNG colour type (grey, grey+alpha, RGB, RGBA)


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def encode_png(hwc: np.ndarray) -> bytes:
    """A PNG file of an HWC uint8 image with 1 to 4 channels (8 bits per sample)."""
    height, width, channels = hwc.shape
    header = struct.pack(">IIBBBBB", width, height, 8, _COLOR_TYPES[channels], 0, 0, 0)
    rows = np.zeros((height, 1 + width * channels), dtype=np.uint8)  # filter byte 0: none
    rows[:, 1:] = hwc.reshape(height, width * channels)
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header)
            + _chunk(b"IDAT", zlib.compress(rows.tobytes(), 6)) + _chunk(b"IEND", b""))


def figure_to_image(figures: Any, close: bool = True) -> np.ndarray:
    """Render a matplotlib figure (CHW uint8) or a list of them (NCHW) with the Agg backend."""
    # matplotlib: optional (pip install 'tapegrad[viz]'), loaded on first use
    import matplotlib.pyplot as plt
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # (matplotlib, as above)

    def render(figure: Any) -> np.ndarray:
        canvas = FigureCanvasAgg(figure)
        canvas.draw()
        rgba = np.asarray(canvas.buffer_rgba())
        if close:
            plt.close(figure)
        return np.moveaxis(rgba[:, :, :3], 2, 0)

    if isinstance(figures, list):
        return np.stack([render(f) for f in figures])
    return render(figures)
