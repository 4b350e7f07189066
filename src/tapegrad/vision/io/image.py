"""``torchvision.io``'s image functions: files as uint8 tensors, decoding and encoding.

    read_file / write_file          a file's bytes <-> a 1-d uint8 tensor
    decode_image / read_image       JPEG, PNG, GIF or WebP (found by signature) -> (C, H, W)
    decode_png / encode_png         PNG; 16-bit PNGs decode to uint16
    decode_jpeg / encode_jpeg       JPEG (also lists of images)
    decode_gif / decode_webp        GIF (every frame, (N, 3, H, W)), WebP
    write_png / write_jpeg          encode, then write

torchvision calls libpng, libjpeg-turbo, giflib and libwebp; here Pillow (which wraps the same
libjpeg-turbo and libwebp) decodes and encodes, except where Pillow would differ:

* PNG is *written* here (``_png.py``) as libpng writes it, so ``encode_png`` returns
  torchvision's bytes; PNG's 16-bit images and the conversion to grey are done here too.
* GIF is read here (``_gif.py``) with giflib's rules (no compositing of frames).
* The EXIF orientation is read from the file's first APP1 segment (JPEG) or eXIf chunk (PNG)
  as torchvision reads it, and applied with the same flips and transposes.

The decoded image is a ``(C, H, W)`` view of the ``(H, W, C)`` pixels, as torchvision returns
it. ``ImageReadMode`` (or its name as a string) picks the channels: ``UNCHANGED``, ``GRAY``,
``GRAY_ALPHA``, ``RGB``, ``RGB_ALPHA`` (``RGBA``). Errors are torchvision's messages (without the
C++ source location its compiled functions put in front).
"""

from __future__ import annotations

import io as _pyio
import os
import sys
import warnings
from enum import Enum
from typing import Any

import numpy as np

import tapegrad as torch

from . import _gif, _png

__all__ = ["ImageReadMode", "decode_image", "decode_jpeg", "decode_png", "decode_avif",
           "decode_heic", "decode_webp", "decode_gif", "encode_jpeg", "encode_png", "read_file",
           "read_image", "write_file", "write_jpeg", "write_png"]

Tensor = torch.Tensor


def _pil() -> Any:
    """Pillow, its Image module loaded (for the formats tapegrad's own codecs do not read)."""
    # PIL: optional (pip install pillow), loaded on first use
    import PIL.Image

    return PIL


class ImageReadMode(Enum):
    """The channels to decode into (functions also take the names as strings: ``"RGB"``).

    UNCHANGED keeps the file's channels; GRAY, GRAY_ALPHA, RGB and RGB_ALPHA (alias RGBA)
    convert.
    """

    UNCHANGED = 0
    GRAY = 1
    GRAY_ALPHA = 2
    RGB = 3
    RGB_ALPHA = 4
    RGBA = RGB_ALPHA  # an alias of RGB_ALPHA


# -- checks shared by the decoders ---------------------------------------------------------------

# the C++ names torchvision's messages give the dtypes
_CPP_NAMES = {"uint8": "unsigned char", "int8": "signed char", "int16": "short int",
              "int32": "int", "int64": "long int", "uint16": "short unsigned int",
              "uint32": "unsigned int", "uint64": "long unsigned int", "float16": "c10::Half",
              "bfloat16": "c10::BFloat16", "float32": "float", "float64": "double",
              "bool": "bool", "complex32": "c10::complex<c10::Half>",
              "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


def _dtype_name(dtype: Any) -> str:
    return str(dtype).rsplit(".", 1)[-1]


def _encoded_bytes(data: Tensor) -> bytes:
    """The bytes of an encoded image tensor, checked as torchvision checks them."""
    if not data.is_contiguous():
        raise RuntimeError("Input tensor must be contiguous.")
    if data.dtype != torch.uint8:
        name = _dtype_name(data.dtype)
        raise RuntimeError(f"Input tensor must have uint8 data type, got "
                           f"{_CPP_NAMES.get(name, name)}")
    if data.dim() != 1 or data.numel() <= 0:
        raise RuntimeError(f"Input tensor must be 1-dimensional and non-empty, got {data.dim()} "
                           f"dims  and {data.numel()} numels.")
    return data.numpy().tobytes()


def _as_mode(mode: Any) -> ImageReadMode:
    mode = ImageReadMode[mode.upper()] if isinstance(mode, str) else mode
    mode.value  # noqa: B018  (torchvision hands mode.value to its decoder: an int fails here)
    return mode


def _to_tensor(hwc: np.ndarray) -> Tensor:
    """(H, W, C) pixels as the (C, H, W) view torchvision returns."""
    if not (hwc.flags.c_contiguous and hwc.flags.writeable):
        hwc = np.array(hwc, order="C")  # Pillow's arrays are read-only
    return torch.from_numpy(hwc).permute(2, 0, 1)


def _exif_orientation(exif: bytes | None) -> int:
    """The orientation tag (0x0112) of a TIFF-structured EXIF block, -1 if there is none."""
    if not exif or (len(exif) > 1 and exif[0] != exif[1]) or exif[:1] not in (b"I", b"M"):
        return -1
    little = exif[:1] == b"I"

    def number(offset: int, size: int) -> int:
        if offset + size - 1 >= len(exif):
            return 0xFFFF  # torchvision's marker of a field past the end (for 4 bytes too)
        return int.from_bytes(exif[offset:offset + size], "little" if little else "big")

    if number(2, 2) != 0x2A:
        return -1
    offset = number(4, 4)
    entries = number(offset, 2)
    offset += 2
    for _ in range(entries):
        tag = number(offset, 2)
        if tag == 0xFFFF:
            break
        if tag == 0x0112:
            return number(offset + 8, 2)
        offset += 12
    return -1


def _apply_orientation(image: Tensor, orientation: int) -> Tensor:
    """Turn a (C, H, W) image upright for EXIF orientation 1..8."""
    if orientation == 2:
        return image.flip(-1)
    if orientation == 3:
        return image.flip((-2, -1))
    if orientation == 4:
        return image.flip(-2)
    if orientation == 5:
        return image.transpose(-1, -2)
    if orientation == 6:
        return image.transpose(-1, -2).flip(-1)
    if orientation == 7:
        return image.transpose(-1, -2).flip((-2, -1))
    if orientation == 8:
        return image.transpose(-1, -2).flip(-2)
    return image


def _check_cpu(device: Any) -> None:
    if torch.device(device).type != "cpu":
        raise RuntimeError("Torch not compiled with CUDA enabled")


# -- files --------------------------------------------------------------------------------------

def read_file(path: str) -> Tensor:
    """The bytes of the file at ``path`` as a 1-d uint8 tensor."""
    name = str(path)
    try:
        size = os.stat(name).st_size
    except OSError as exc:
        raise RuntimeError(f"[Errno {exc.errno}] {os.strerror(exc.errno or 0)}: '{name}'") \
            from None
    if size <= 0:
        raise RuntimeError("Expected a non empty file")
    if os.path.isdir(name):  # what torch's file mapping reports for a folder
        raise RuntimeError(f"unable to mmap {size} bytes from file <{name}>: No such device (19)")
    with open(name, "rb") as fh:
        data = fh.read()
    return torch.from_numpy(np.frombuffer(bytearray(data), dtype=np.uint8))


def write_file(filename: str, data: Tensor) -> None:
    """Write the bytes of a 1-d uint8 tensor to ``filename``."""
    if data.dtype != torch.uint8:
        raise RuntimeError("Input tensor dtype should be uint8")
    if data.dim() != 1:
        raise RuntimeError("Input data should be a 1-dimensional tensor")
    try:
        fh = open(str(filename), "wb")  # noqa: SIM115  (closed below)
    except OSError:
        raise RuntimeError("Error opening output file") from None
    with fh:
        fh.write(data.numpy().tobytes())


# -- PNG ----------------------------------------------------------------------------------------

def decode_png(input: Tensor, mode: ImageReadMode = ImageReadMode.UNCHANGED,
               apply_exif_orientation: bool = False) -> Tensor:
    """A PNG's pixels as a (C, H, W) uint8 tensor (uint16 for a 16-bit PNG).

    Args:
        input: the file's bytes, a 1-d uint8 tensor.
        mode: an :class:`ImageReadMode` or its name.
        apply_exif_orientation: turn the image as its eXIf chunk's orientation says.
    """
    mode = _as_mode(mode)
    data = _encoded_bytes(input)
    if len(data) < 8:
        raise RuntimeError("Content is too small for png!")
    if data[:8] != _png.SIGNATURE:
        raise RuntimeError("Content is not png!")
    try:
        info, idat = _png.read_chunks(data)
    except EOFError:
        raise RuntimeError("Out of bound read in decode_png. Probably, the input image is "
                           "corrupted") from None
    if info.bit_depth not in _PNG_DEPTHS.get(info.color_type, ()) or not (info.width and
                                                                         info.height):
        raise RuntimeError("Internal error.")  # libpng rejects the header
    if info.bit_depth == 16:
        if info.interlace:
            raise RuntimeError("interlaced 16-bit PNG images are not supported")
        pixels = _png.decode_16bit(info, idat)
        palette_rgba = None
    else:
        pixels, palette_rgba = _decode_png_8bit(data)
    pixels = _png_convert(pixels, info, mode, palette_rgba)
    out = _to_tensor(pixels)
    if apply_exif_orientation:
        out = _apply_orientation(out, _exif_orientation(info.exif))
    return out


# the bit depths PNG allows for each color type (gray, RGB, palette, gray+alpha, RGBA)
_PNG_DEPTHS = {0: (1, 2, 4, 8, 16), 2: (8, 16), 3: (1, 2, 4, 8), 4: (8, 16), 6: (8, 16)}


def _decode_png_8bit(data: bytes) -> tuple[np.ndarray, np.ndarray | None]:
    """Pillow's decoding of an 8-bit (or smaller) PNG: (H, W, C) values as stored (palette
    indices for a palette image, with the palette as RGBA rows)."""
    Image = _pil().Image

    try:
        with Image.open(_pyio.BytesIO(data)) as img:
            img.load()
            palette = None
            if img.mode == "P":  # the palette as 256 RGBA rows (tRNS gives the alphas)
                palette = np.zeros((256, 4), np.uint8)
                palette[:, 3] = 255
                colors = np.asarray(img.getpalette("RGB") or [], np.uint8).reshape(-1, 3)
                palette[:len(colors), :3] = colors[:256]
                alphas = img.info.get("transparency")
                if isinstance(alphas, bytes):
                    palette[:len(alphas), 3] = np.frombuffer(alphas, np.uint8)[:256]
                elif isinstance(alphas, int):
                    palette[alphas, 3] = 0
            pixels = np.asarray(img)
            if img.mode == "1":
                pixels = pixels.astype(np.uint8) * 255
    except Exception:
        raise RuntimeError("Internal error.") from None
    if pixels.ndim == 2:
        pixels = pixels[:, :, None]
    return pixels.astype(np.uint8, copy=False), palette


def _png_convert(pixels: np.ndarray, info: _png.Info, mode: ImageReadMode,
                 palette: np.ndarray | None) -> np.ndarray:
    """libpng's transformations for the read modes torchvision asks for."""
    if mode == ImageReadMode.UNCHANGED:
        return pixels
    # libpng's alpha filler: (1 << bit depth) - 1, so 1 for a 1-bit grey image, not 255
    top = 255 if palette is not None else (1 << info.bit_depth) - 1
    channels = pixels.shape[2]
    if palette is not None:  # palette images are first expanded to RGB(A)
        pixels = palette[pixels[:, :, 0]]
        if not info.has_trns:
            pixels = pixels[:, :, :3]
        channels = pixels.shape[2]
    has_color, has_alpha = channels >= 3, channels in (2, 4)

    def with_alpha(image: np.ndarray, alpha: np.ndarray | None) -> np.ndarray:
        if alpha is None:
            alpha = np.full(image.shape[:2] + (1,), top, image.dtype)
        return np.concatenate([image, alpha], axis=2)

    alpha = pixels[:, :, -1:] if has_alpha else None
    color = pixels[:, :, :-1] if has_alpha else pixels
    if mode in (ImageReadMode.GRAY, ImageReadMode.GRAY_ALPHA):
        gray = _png.rgb_to_gray(color, info.gamma)[:, :, None] if has_color else color
        return gray if mode == ImageReadMode.GRAY else with_alpha(gray, alpha)
    if mode in (ImageReadMode.RGB, ImageReadMode.RGB_ALPHA):
        rgb = color if has_color else np.repeat(color, 3, axis=2)
        return rgb if mode == ImageReadMode.RGB else with_alpha(rgb, alpha)
    raise RuntimeError("The provided mode is not supported for PNG files")


def _encodable_shape(image: Tensor) -> tuple[int, int, int]:
    """The (C, H, W) of an image the encoders take: uint8, three dimensions, 1 or 3 channels."""
    if image.dtype != torch.uint8:
        raise RuntimeError("Input tensor dtype should be uint8")
    if image.dim() != 3:
        raise RuntimeError("Input data should be a 3-dimensional tensor")
    channels, height, width = image.shape
    if channels not in (1, 3):
        raise RuntimeError(f"The number of channels should be 1 or 3, got: {channels}")
    return channels, height, width


def encode_png(input: Tensor, compression_level: int = 6) -> Tensor:
    """The PNG file of a (C, H, W) uint8 image (C 1 or 3) as a 1-d uint8 tensor: the bytes
    torchvision's libpng writes (``compression_level`` 0..9)."""
    if not 0 <= compression_level <= 9:
        raise RuntimeError("Compression level should be between 0 and 9")
    channels, height, width = _encodable_shape(input)
    if height == 0 or width == 0:
        sys.stderr.write(f"libpng warning: Image {'height' if height == 0 else 'width'} is zero "
                         "in IHDR\n")
        raise RuntimeError("Invalid IHDR data")
    encoded = _png.encode(input.permute(1, 2, 0).numpy(), compression_level)
    return torch.from_numpy(np.frombuffer(bytearray(encoded), dtype=np.uint8))


def write_png(input: Tensor, filename: str, compression_level: int = 6) -> None:
    """:func:`encode_png`, then the bytes written to ``filename``."""
    write_file(filename, encode_png(input, compression_level))


# -- JPEG ---------------------------------------------------------------------------------------

def _jpeg_app1(data: bytes) -> bytes | None:
    """The payload of the first APP1 segment before the image data, if any."""
    pos = 2
    while pos + 4 <= len(data) and data[pos] == 0xFF:
        marker = data[pos + 1]
        if marker in (0xDA, 0xD9):  # start of scan, end of image
            return None
        length = int.from_bytes(data[pos + 2:pos + 4], "big")
        if marker == 0xE1:
            return data[pos + 4:pos + 2 + length]
        pos += 2 + length
    return None


def _decode_jpeg_one(data: bytes, mode: ImageReadMode, apply_exif_orientation: bool) -> Tensor:
    Image = _pil().Image

    if len(data) < 2 or data[0] != 0xFF or data[1] != 0xD8:
        first = data[0] if data else 0
        second = data[1] if len(data) > 1 else 0
        raise RuntimeError(f"Not a JPEG file: starts with 0x{first:02x} 0x{second:02x}")
    try:
        img = Image.open(_pyio.BytesIO(data))
    except Exception:  # Pillow found no complete header: libjpeg ran out of data
        raise RuntimeError("Image is incomplete or truncated") from None
    try:
        with img:
            stored = img.mode  # L, RGB or CMYK: the file's own color space
            if mode == ImageReadMode.GRAY and stored != "L":
                img.draft("L", img.size)  # libjpeg's own conversion to grey
            elif mode not in (ImageReadMode.UNCHANGED, ImageReadMode.GRAY, ImageReadMode.RGB):
                raise ValueError("mode")
            img.load()
            if mode == ImageReadMode.RGB and img.mode != "RGB":
                pixels = np.asarray(img.convert("RGB"))
            else:
                pixels = np.asarray(img)
    except ValueError:
        raise RuntimeError("The provided mode is not supported for JPEG files") from None
    except OSError as exc:
        if "truncated" in str(exc).lower():
            raise RuntimeError("Image is incomplete or truncated") from None
        raise RuntimeError(str(exc)) from None
    out = _to_tensor(pixels[:, :, None] if pixels.ndim == 2 else pixels)
    if apply_exif_orientation:
        app1 = _jpeg_app1(data)
        exif = app1[6:] if app1 is not None and len(app1) > 6 else None
        out = _apply_orientation(out, _exif_orientation(exif))
    return out


def decode_jpeg(input: Tensor | list[Tensor], mode: ImageReadMode = ImageReadMode.UNCHANGED,
                device: Any = "cpu", apply_exif_orientation: bool = False) -> Any:
    """A JPEG's pixels (or a list of JPEGs') as (C, H, W) uint8 tensors.

    Args:
        input: the file's bytes, a 1-d uint8 tensor, or a list of them.
        mode: ``UNCHANGED``, ``GRAY`` or ``RGB`` (or their names).
        device: ``"cpu"`` (tapegrad runs on the CPU).
        apply_exif_orientation: turn the image as its EXIF orientation says.
    """
    mode = _as_mode(mode)
    if isinstance(input, list):
        if len(input) == 0:
            raise ValueError("Input list must contain at least one element")
        if not all(isinstance(t, Tensor) for t in input):
            raise ValueError("All elements of the input list must be tensors.")
        _check_cpu(device)
        return [_decode_jpeg_one(_encoded_bytes(t), mode, apply_exif_orientation)
                for t in input]
    _check_cpu(device)
    return _decode_jpeg_one(_encoded_bytes(input), mode, apply_exif_orientation)


def _encode_jpeg_one(image: Tensor, quality: int) -> Tensor:
    Image = _pil().Image

    channels, height, width = _encodable_shape(image)
    if height == 0 or width == 0:
        raise RuntimeError("Empty JPEG image (DNL not supported)")
    pixels = np.ascontiguousarray(image.permute(1, 2, 0).numpy())
    picture = Image.fromarray(pixels[:, :, 0] if channels == 1 else pixels)
    buf = _pyio.BytesIO()
    picture.save(buf, format="JPEG", quality=quality)
    return torch.from_numpy(np.frombuffer(bytearray(buf.getvalue()), dtype=np.uint8))


def encode_jpeg(input: Tensor | list[Tensor], quality: int = 75) -> Any:
    """The JPEG file of a (C, H, W) uint8 image (C 1 or 3), or of each image of a list, as 1-d
    uint8 tensors (libjpeg-turbo's bytes, 4:2:0 sampling, ``quality`` 1..100)."""
    if quality < 1 or quality > 100:
        raise ValueError("Image quality should be a positive number between 1 and 100")
    if isinstance(input, list):
        if not input:
            raise ValueError("encode_jpeg requires at least one input tensor when a list is "
                             "passed")
        return [_encode_jpeg_one(image, quality) for image in input]
    return _encode_jpeg_one(input, quality)


def write_jpeg(input: Tensor, filename: str, quality: int = 75) -> None:
    """:func:`encode_jpeg`, then the bytes written to ``filename``."""
    write_file(filename, encode_jpeg(input, quality))


# -- GIF, WebP, AVIF, HEIC ----------------------------------------------------------------------

def decode_gif(input: Tensor) -> Tensor:
    """A GIF's frames as ``(N, 3, H, W)`` uint8 (``(3, H, W)`` for a single frame): each frame's
    own pixels in its color table's colors (no compositing, as torchvision)."""
    data = _encoded_bytes(input)
    try:
        return torch.from_numpy(_gif.decode(data))
    except _gif.GifError as exc:
        raise RuntimeError(str(exc)) from None
    except ValueError as exc:
        raise RuntimeError(str(exc)) from None


def decode_webp(input: Tensor, mode: ImageReadMode = ImageReadMode.UNCHANGED) -> Tensor:
    """A (still) WebP image as (C, H, W) uint8: RGB, or RGBA when it has alpha (``mode`` RGB or
    RGB_ALPHA forces either)."""
    Image = _pil().Image

    mode = _as_mode(mode)
    data = _encoded_bytes(input)
    status = _webp_header_status(data)
    if status:
        raise RuntimeError(f"WebPGetFeatures failed with error code {status}")
    try:
        with Image.open(_pyio.BytesIO(data)) as img:
            if getattr(img, "n_frames", 1) > 1:
                raise RuntimeError("Animated webp files are not supported.")
            has_alpha = img.mode in ("RGBA", "LA")
            if mode in (ImageReadMode.GRAY, ImageReadMode.GRAY_ALPHA):
                warnings.warn("Webp does not support grayscale conversions. The returned tensor "
                              "will be in the colorspace of the original image.", stacklevel=2)
            want = {ImageReadMode.RGB: "RGB", ImageReadMode.RGB_ALPHA: "RGBA"}.get(
                mode, "RGBA" if has_alpha else "RGB")
            pixels = np.asarray(img.convert(want))
    except RuntimeError:
        raise
    except Exception:
        raise RuntimeError("WebPDecodeRGB[A] failed.") from None
    return _to_tensor(pixels)


def _webp_header_status(data: bytes) -> int:
    """libwebp's verdict on a WebP file's headers: 0 fine, 3 malformed, 7 cut short."""
    if len(data) < 12 or data[:4] != b"RIFF":
        return 7 if len(data) < 8 else 3
    if data[8:12] != b"WEBP" or int.from_bytes(data[4:8], "little") < 12:
        return 3
    if len(data) < 20:
        return 7
    chunk = data[12:16]
    if chunk in (b"VP8X", b"VP8 "):
        if len(data) < 30:
            return 7
        if chunk == b"VP8 " and data[23:26] != b"\x9d\x01\x2a":  # a key frame's start code
            return 3
        return 0
    if chunk == b"VP8L":
        return 7 if len(data) < 25 else (0 if data[20] == 0x2F else 3)
    return 3


_EXTRA_DECODERS_MESSAGE = (
    "In order to enable the AVIF and HEIC decoding capabilities of torchvision, you need to `pip "
    "install torchvision-extra-decoders`. Just install the package, you don't need to update "
    "your code. This is only supported on Linux, and this feature is still in BETA stage. Please "
    "let us know of any issue: https://github.com/pytorch/vision/issues/new/choose. Note that "
    "`torchvision-extra-decoders` is released under the LGPL license. ")


def decode_avif(input: Tensor, mode: ImageReadMode = ImageReadMode.UNCHANGED) -> Tensor:
    """AVIF needs torchvision-extra-decoders, compiled against torch: not available here."""
    raise RuntimeError(_EXTRA_DECODERS_MESSAGE)


def decode_heic(input: Tensor, mode: ImageReadMode = ImageReadMode.UNCHANGED) -> Tensor:
    """HEIC needs torchvision-extra-decoders, compiled against torch: not available here."""
    raise RuntimeError(_EXTRA_DECODERS_MESSAGE)


# -- any format ---------------------------------------------------------------------------------

_UNSUPPORTED = ("Unsupported image file. Only jpeg, png, webp and gif are currently supported. "
                "For avif and heic format, please rely on `decode_avif` and `decode_heic` "
                "directly.")


def decode_image(input: Tensor | str, mode: ImageReadMode = ImageReadMode.UNCHANGED,
                 apply_exif_orientation: bool = False) -> Tensor:
    """Decode a JPEG, PNG, GIF or WebP image (the format found from its first bytes) into a
    (C, H, W) tensor; ``input`` is the file's bytes as a 1-d uint8 tensor, or a path."""
    if not isinstance(input, Tensor):
        input = read_file(str(input))
    mode = _as_mode(mode)
    if input.dtype != torch.uint8:
        raise RuntimeError("Expected a torch.uint8 tensor")
    if input.dim() != 1 or input.numel() == 0:
        raise RuntimeError("Expected a non empty 1-dimensional tensor")
    if not input.is_contiguous():  # torchvision reads the memory, not the elements
        raise RuntimeError(_UNSUPPORTED)
    head = input[:15].numpy().tobytes()
    if head[:3] == b"\xff\xd8\xff":
        return decode_jpeg(input, mode, apply_exif_orientation=apply_exif_orientation)
    if head[:4] == b"\x89PNG":
        return decode_png(input, mode, apply_exif_orientation)
    if head[:6] in (b"GIF89a", b"GIF87a"):
        return decode_gif(input)
    if len(head) >= 15 and head[:4] == b"RIFF" and head[8:15] == b"WEBPVP8":
        return decode_webp(input, mode)
    raise RuntimeError(_UNSUPPORTED)


def read_image(path: str, mode: ImageReadMode = ImageReadMode.UNCHANGED,
               apply_exif_orientation: bool = False) -> Tensor:
    """[OBSOLETE] Use :func:`decode_image`: the image file at ``path`` as a (C, H, W) tensor."""
    return decode_image(read_file(path), mode, apply_exif_orientation=apply_exif_orientation)
