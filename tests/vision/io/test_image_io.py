"""``torchvision.io`` against torchvision: encode_png's and encode_jpeg's bytes, decoded pixels of
PNG (every color type and bit depth, palettes, transparency, interlacing, gamma), JPEG, GIF and
WebP files in every read mode, EXIF orientation, files, and the errors.

torchvision's compiled functions put the C++ source location in front of their messages
("decode_png, /__w/vision/.../decode_png.cpp:61, Content is too small for png!"); the messages
are compared without it.
"""

from __future__ import annotations

import io
import re
import struct
import warnings
import zlib

import numpy as np
import pytest
import torchcompare

_LOCATION = re.compile(r"^[\w()]+, /\S+:\d+, ")


def _record(fn, *args, **kwargs):
    """What a call returned (tensors: dtype, shape, values), raised or warned, comparably."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = fn(*args, **kwargs)
            result = ("ok", _plain(out))
        except Exception as exc:  # noqa: BLE001  (compared between the two libraries)
            message = _LOCATION.sub("", torchcompare.normalize_text(str(exc)))
            result = ("raised", type(exc).__name__, message)
    return result, [(w.category.__name__, str(w.message)) for w in caught]


def _plain(out):
    if isinstance(out, list):
        return [_plain(o) for o in out]
    if torchcompare.is_tensor(out):
        return (torchcompare.dtype_name(out.dtype), tuple(out.shape),
                out.detach().numpy().tolist())
    return out


def _bytes(lib, data):
    return lib.frombuffer(bytearray(data), dtype=lib.uint8)


def _same(vision, tv, lib, oracle, name, data, *args, **kwargs):
    """``io.<name>(bytes, ...)`` agrees between torchvision and the library."""
    theirs = _record(getattr(tv.io, name), _bytes(oracle, data), *args, **kwargs)
    ours = _record(getattr(vision.io, name), _bytes(lib, data), *args, **kwargs)
    assert ours == theirs
    return theirs


RNG = np.random.default_rng(0)


# -- PNG files made by hand (every color type, depth, interlacing, extra chunks) ---------------

def _chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(
        ">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def _pack_rows(values, bit_depth):
    """(H, W*C) sample values as PNG scanlines of ``bit_depth`` bits, filter byte 0."""
    rows = []
    for row in values:
        if bit_depth == 16:
            raw = row.astype(">u2").tobytes()
        elif bit_depth == 8:
            raw = row.astype(np.uint8).tobytes()
        else:
            bits = np.unpackbits(row.astype(np.uint8)[:, None], axis=1)[:, 8 - bit_depth:]
            raw = np.packbits(bits.reshape(-1)).tobytes()
        rows.append(b"\x00" + raw)
    return b"".join(rows)


_ADAM7 = ((0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2),
          (0, 1, 1, 2))


def png_file(values, color_type, bit_depth=8, chunks=(), interlace=False):
    """A PNG of ``values`` (H, W, C) in the given color type; ``chunks``: (type, data) pairs
    written before the image data."""
    h, w, c = values.shape
    if interlace:
        raw = b"".join(_pack_rows(values[y0::dy, x0::dx].reshape(-1, len(range(x0, w, dx)) * c),
                                  bit_depth)
                       for x0, y0, dx, dy in _ADAM7 if x0 < w and y0 < h)
    else:
        raw = _pack_rows(values.reshape(h, w * c), bit_depth)
    head = struct.pack(">IIBBBBB", w, h, bit_depth, color_type, 0, 0, int(interlace))
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", head)
            + b"".join(_chunk(k, d) for k, d in chunks)
            + _chunk(b"IDAT", zlib.compress(raw)) + _chunk(b"IEND", b""))


def _png_cases():
    h, w = 5, 7
    u8 = RNG.integers(0, 256, (h, w, 4), dtype=np.uint8)
    u16 = RNG.integers(0, 65536, (h, w, 4)).astype(np.uint16)
    gray_pixels = u8[..., :1].copy()
    gray_pixels[0, :3] = 77  # some pixels with R == G == B below
    rgb = u8[..., :3].copy()
    rgb[1, :4] = 90
    palette = RNG.integers(0, 256, (16, 3), dtype=np.uint8).tobytes()
    indices = RNG.integers(0, 16, (h, w, 1), dtype=np.uint8)
    gamma = [(b"gAMA", struct.pack(">I", 45455))]
    return {
        "gray8": png_file(gray_pixels, 0),
        "gray1": png_file(indices % 2, 0, 1),
        "gray2": png_file(indices % 4, 0, 2),
        "gray4": png_file(indices, 0, 4),
        "gray16": png_file(u16[..., :1], 0, 16),
        "gray-trns": png_file(gray_pixels, 0, chunks=[(b"tRNS", b"\x00\x4d")]),
        "gray-alpha8": png_file(u8[..., :2], 4),
        "gray-alpha16": png_file(u16[..., :2], 4, 16),
        "rgb8": png_file(rgb, 2),
        "rgb16": png_file(u16[..., :3], 2, 16),
        "rgb-gamma": png_file(rgb, 2, chunks=gamma),
        "rgb-srgb": png_file(rgb, 2, chunks=[(b"sRGB", b"\x00")]),
        "rgb-gamma-one": png_file(rgb, 2, chunks=[(b"gAMA", struct.pack(">I", 100000))]),
        "rgba8": png_file(u8, 6),
        "rgba-gamma": png_file(u8, 6, chunks=gamma),
        "rgba16": png_file(u16, 6, 16),
        "palette": png_file(indices, 3, chunks=[(b"PLTE", palette)]),
        "palette-trns": png_file(indices, 3, chunks=[(b"PLTE", palette),
                                                     (b"tRNS", bytes(range(0, 160, 20)))]),
        "rgb-interlaced": png_file(RNG.integers(0, 256, (11, 13, 3), dtype=np.uint8), 2,
                                   interlace=True),
        "gray-interlaced": png_file(RNG.integers(0, 256, (9, 10, 1), dtype=np.uint8), 0,
                                    interlace=True),
        "tiny": png_file(u8[:1, :1, :3], 2),
    }


PNG_CASES = _png_cases()
MODES = ["UNCHANGED", "GRAY", "GRAY_ALPHA", "RGB", "RGB_ALPHA", "RGBA", "rgb", "gray_alpha"]
# palette images without tRNS in the ALPHA modes: torchvision fills the missing alpha channel's
# memory with whatever is there (libpng expands the palette to RGB, torchvision's buffer expects
# RGBA); the library gives opaque pixels instead
UNDEFINED_IN_TORCHVISION = {("palette", "GRAY_ALPHA"), ("palette", "RGB_ALPHA"),
                            ("palette", "RGBA"), ("palette", "gray_alpha")}


@pytest.mark.parametrize("case", sorted(PNG_CASES))
@pytest.mark.parametrize("mode", MODES)
def test_decode_png(vision, tv, lib, oracle, case, mode):
    if (case, mode) in UNDEFINED_IN_TORCHVISION:
        pytest.skip("torchvision returns uninitialized memory for the alpha channel here")
    data = PNG_CASES[case]
    record = _same(vision, tv, lib, oracle, "decode_png", data, mode=mode)
    assert record[0][0] == "ok"
    _same(vision, tv, lib, oracle, "decode_image", data, mode=mode)


def test_decode_png_palette_alpha_modes_are_opaque(vision, lib, lib_name):
    if lib_name == "torch":
        pytest.skip("the library's choice where torchvision's result is undefined")
    out = vision.io.decode_png(_bytes(lib, PNG_CASES["palette"]), mode="RGBA")
    assert out.shape[0] == 4 and bool((out[3] == 255).all())


def test_decode_png_errors(vision, tv, lib, oracle):
    good = PNG_CASES["rgb8"]
    for data in (good[:5], b"\x89PNX" + good[4:], good[:40], good[:len(good) - 20],
                 png_file(np.zeros((2, 2, 1), np.uint8), 0, 8)[:33]):
        _same(vision, tv, lib, oracle, "decode_png", data)
    bad_depth = bytearray(good)
    bad_depth[24] = 12  # IHDR's bit depth (its CRC is not checked first)
    _same(vision, tv, lib, oracle, "decode_png", png_file(
        np.zeros((2, 2, 1), np.uint8), 0, 8).replace(b"\x00\x00\x00\x02\x08\x00",
                                                     b"\x00\x00\x00\x02\x0c\x00"))
    for make in (lambda L: L.zeros(10), lambda L: L.zeros(10, dtype=L.int64),
                 lambda L: L.zeros(0, dtype=L.uint8), lambda L: L.zeros(2, 5, dtype=L.uint8),
                 lambda L: L.zeros(20, dtype=L.uint8)[::2]):
        theirs = _record(tv.io.decode_png, make(oracle))
        ours = _record(vision.io.decode_png, make(lib))
        assert ours == theirs and theirs[0][0] == "raised"
    theirs = _record(tv.io.decode_png, _bytes(oracle, good), mode="nope")
    assert _record(vision.io.decode_png, _bytes(lib, good), mode="nope") == theirs


# -- PNG encoding: the same bytes ---------------------------------------------------------------

def _images():
    yield "random-rgb", RNG.integers(0, 256, (3, 23, 31), dtype=np.uint8)
    yield "random-gray", RNG.integers(0, 256, (1, 17, 9), dtype=np.uint8)
    y, x = np.mgrid[0:40, 0:60]
    yield "smooth-rgb", np.stack([(x * 3 + y) % 256, (x * y) % 256, (y * 7) % 256]).astype(
        np.uint8)
    yield "flat", np.full((3, 12, 12), 200, np.uint8)
    yield "one-row", RNG.integers(0, 256, (3, 1, 40), dtype=np.uint8)
    yield "one-column", RNG.integers(0, 256, (1, 30, 1), dtype=np.uint8)
    yield "one-pixel", np.array([[[9]], [[8]], [[7]]], np.uint8)
    yield "large", RNG.integers(0, 256, (3, 120, 150), dtype=np.uint8)  # many IDAT chunks


IMAGES = dict(_images())


@pytest.mark.parametrize("name", sorted(IMAGES))
@pytest.mark.parametrize("level", range(10))
def test_encode_png_bytes(vision, tv, lib, oracle, name, level):
    image = IMAGES[name]
    theirs = tv.io.encode_png(oracle.from_numpy(image), compression_level=level)
    ours = vision.io.encode_png(lib.from_numpy(image), level)
    assert torchcompare.dtype_name(ours.dtype) == "uint8" and ours.dim() == 1
    assert ours.numpy().tobytes() == theirs.numpy().tobytes()


def test_encode_png_noncontiguous_and_write_png(vision, tv, lib, oracle, tmp_path):
    image = IMAGES["random-rgb"]
    theirs = tv.io.encode_png(oracle.from_numpy(image).transpose(1, 2))
    ours = vision.io.encode_png(lib.from_numpy(image).transpose(1, 2))
    assert ours.numpy().tobytes() == theirs.numpy().tobytes()
    tv.io.write_png(oracle.from_numpy(image), str(tmp_path / "t.png"), compression_level=3)
    vision.io.write_png(lib.from_numpy(image), str(tmp_path / "o.png"), compression_level=3)
    assert (tmp_path / "t.png").read_bytes() == (tmp_path / "o.png").read_bytes()


def test_encode_png_errors(vision, tv, lib, oracle, capfd):
    cases = [
        (lambda L: L.zeros(3, 2, 2, dtype=L.uint8), {"compression_level": 10}),
        (lambda L: L.zeros(3, 2, 2), {"compression_level": -1}),
        (lambda L: L.zeros(3, 2, 2), {}),
        (lambda L: L.zeros(3, 2, 2, dtype=L.bool), {}),
        (lambda L: L.zeros(2, 2, dtype=L.uint8), {}),
        (lambda L: L.zeros(4, 2, 2, dtype=L.uint8), {}),
        (lambda L: L.zeros(2, 2, 2, dtype=L.uint8), {}),
        (lambda L: L.zeros(3, 0, 2, dtype=L.uint8), {}),
        (lambda L: L.zeros(1, 2, 0, dtype=L.uint8), {}),
    ]
    for make, kwargs in cases:
        capfd.readouterr()
        theirs = _record(tv.io.encode_png, make(oracle), **kwargs)
        their_err = capfd.readouterr().err
        ours = _record(vision.io.encode_png, make(lib), **kwargs)
        assert ours == theirs and theirs[0][0] == "raised"
        assert capfd.readouterr().err == their_err  # libpng's warning for an empty image


# -- JPEG ---------------------------------------------------------------------------------------

def _jpeg_with_exif(image, orientation):
    from PIL import Image

    exif = Image.Exif()
    exif[0x0112] = orientation
    buf = io.BytesIO()
    Image.fromarray(image).save(buf, format="JPEG", exif=exif.tobytes(), quality=90)
    return buf.getvalue()


def _jpeg_cases():
    from PIL import Image

    cases = {}
    rgb = RNG.integers(0, 256, (13, 19, 3), dtype=np.uint8)
    for name, kwargs in (("q75", {}), ("q95-444", {"quality": 95, "subsampling": 0}),
                         ("progressive", {"progressive": True}),
                         ("optimized", {"optimize": True, "quality": 60})):
        buf = io.BytesIO()
        Image.fromarray(rgb).save(buf, format="JPEG", **kwargs)
        cases[name] = buf.getvalue()
    buf = io.BytesIO()
    Image.fromarray(rgb[..., 0]).save(buf, format="JPEG")
    cases["gray"] = buf.getvalue()
    for orientation in range(1, 9):
        cases[f"exif{orientation}"] = _jpeg_with_exif(rgb, orientation)
    return cases


JPEG_CASES = _jpeg_cases()


@pytest.mark.parametrize("case", sorted(JPEG_CASES))
@pytest.mark.parametrize("mode", ["UNCHANGED", "GRAY", "RGB", "GRAY_ALPHA", "RGBA"])
@pytest.mark.parametrize("exif", [False, True])
def test_decode_jpeg(vision, tv, lib, oracle, case, mode, exif):
    data = JPEG_CASES[case]
    _same(vision, tv, lib, oracle, "decode_jpeg", data, mode=mode,
          apply_exif_orientation=exif)
    record = _same(vision, tv, lib, oracle, "decode_image", data, mode=mode,
                   apply_exif_orientation=exif)
    assert record[0][0] == ("ok" if mode in ("UNCHANGED", "GRAY", "RGB") else "raised")


def test_decode_jpeg_lists_and_errors(vision, tv, lib, oracle):
    a, b = JPEG_CASES["q75"], JPEG_CASES["gray"]
    theirs = _record(tv.io.decode_jpeg, [_bytes(oracle, a), _bytes(oracle, b)], mode="RGB")
    ours = _record(vision.io.decode_jpeg, [_bytes(lib, a), _bytes(lib, b)], mode="RGB")
    assert ours == theirs and theirs[0][0] == "ok"
    for bad in ([], [_bytes(oracle, a), 3]):
        theirs = _record(tv.io.decode_jpeg, bad)
        ours = _record(vision.io.decode_jpeg, [_bytes(lib, a), 3] if bad else [])
        assert ours == theirs
    for data in (PNG_CASES["rgb8"], a[:100], a[:3] + b"\x00" * 10):
        _same(vision, tv, lib, oracle, "decode_jpeg", data)
    theirs = _record(tv.io.decode_jpeg, oracle.zeros(10))
    assert _record(vision.io.decode_jpeg, lib.zeros(10)) == theirs


@pytest.mark.parametrize("quality", [1, 10, 50, 75, 90, 100])
@pytest.mark.parametrize("name", ["random-rgb", "random-gray", "smooth-rgb", "one-pixel"])
def test_encode_jpeg_bytes(vision, tv, lib, oracle, quality, name):
    image = IMAGES[name]
    theirs = tv.io.encode_jpeg(oracle.from_numpy(image), quality=quality)
    ours = vision.io.encode_jpeg(lib.from_numpy(image), quality)
    assert ours.numpy().tobytes() == theirs.numpy().tobytes()


def test_encode_jpeg_lists_write_and_errors(vision, tv, lib, oracle, tmp_path):
    images = [IMAGES["random-rgb"], IMAGES["random-gray"]]
    theirs = tv.io.encode_jpeg([oracle.from_numpy(i) for i in images], quality=80)
    ours = vision.io.encode_jpeg([lib.from_numpy(i) for i in images], quality=80)
    assert [o.numpy().tobytes() for o in ours] == [t.numpy().tobytes() for t in theirs]
    tv.io.write_jpeg(oracle.from_numpy(images[0]), str(tmp_path / "t.jpg"), quality=33)
    vision.io.write_jpeg(lib.from_numpy(images[0]), str(tmp_path / "o.jpg"), quality=33)
    assert (tmp_path / "t.jpg").read_bytes() == (tmp_path / "o.jpg").read_bytes()
    cases = [
        (lambda L: L.zeros(3, 2, 2, dtype=L.uint8), {"quality": 0}),
        (lambda L: L.zeros(3, 2, 2, dtype=L.uint8), {"quality": 101}),
        (lambda L: L.zeros(3, 2, 2), {}),
        (lambda L: L.zeros(2, 2, dtype=L.uint8), {}),
        (lambda L: L.zeros(4, 2, 2, dtype=L.uint8), {}),
        (lambda L: L.zeros(3, 0, 2, dtype=L.uint8), {}),
        (lambda L: [], {}),
    ]
    for make, kwargs in cases:
        theirs = _record(tv.io.encode_jpeg, make(oracle), **kwargs)
        ours = _record(vision.io.encode_jpeg, make(lib), **kwargs)
        assert ours == theirs and theirs[0][0] == "raised"


# -- EXIF in PNG --------------------------------------------------------------------------------

@pytest.mark.parametrize("orientation", range(1, 9))
def test_png_exif_orientation(vision, tv, lib, oracle, orientation):
    from PIL import Image

    exif = Image.Exif()
    exif[0x0112] = orientation
    buf = io.BytesIO()
    Image.fromarray(IMAGES["random-rgb"].transpose(1, 2, 0)).save(buf, format="PNG",
                                                                   exif=exif.tobytes())
    for flag in (False, True):
        _same(vision, tv, lib, oracle, "decode_png", buf.getvalue(),
              apply_exif_orientation=flag)
        _same(vision, tv, lib, oracle, "decode_image", buf.getvalue(),
              apply_exif_orientation=flag)


# -- GIF and WebP -------------------------------------------------------------------------------

def _gif(frames, **kwargs):
    from PIL import Image

    pictures = [Image.fromarray(f) for f in frames]
    buf = io.BytesIO()
    pictures[0].save(buf, format="GIF", save_all=len(frames) > 1,
                     append_images=pictures[1:], **kwargs)
    return buf.getvalue()


def _gif_cases():
    small = RNG.integers(0, 256, (6, 7, 3), dtype=np.uint8)
    big = RNG.integers(0, 256, (20, 24, 3), dtype=np.uint8)
    frames = [RNG.integers(0, 256, (18, 17, 3), dtype=np.uint8) for _ in range(3)]
    return {
        "single": _gif([small]),
        "interlaced": _gif([big], interlace=True),
        "not-interlaced": _gif([big], interlace=False),
        "frames": _gif(frames, optimize=False, disposal=1),
        "gray": _gif([big[..., 0]]),
        "87a": _gif([small]).replace(b"GIF89a", b"GIF87a", 1),
    }


GIF_CASES = _gif_cases()


@pytest.mark.parametrize("case", sorted(GIF_CASES))
def test_decode_gif(vision, tv, lib, oracle, case):
    data = GIF_CASES[case]
    record = _same(vision, tv, lib, oracle, "decode_gif", data)
    assert record[0][0] == "ok"
    _same(vision, tv, lib, oracle, "decode_image", data, mode="GRAY")


def test_decode_gif_errors(vision, tv, lib, oracle):
    good = GIF_CASES["single"]
    for data in (b"GIF89a", b"GIF87a" + b"\x00" * 10, b"NOTGIF" + good[6:], good[:8],
                 good[:40], good[:-2], b"GIF8", good[:13] + b"\x3b"):
        _same(vision, tv, lib, oracle, "decode_gif", data)
    different_sizes = _gif([RNG.integers(0, 256, (6, 7, 3), dtype=np.uint8),
                            np.zeros((6, 7, 3), np.uint8)], optimize=True)
    _same(vision, tv, lib, oracle, "decode_gif", different_sizes)


def _webp(image, **kwargs):
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(image).save(buf, format="WEBP", **kwargs)
    return buf.getvalue()


WEBP_CASES = {
    "lossless": _webp(IMAGES["smooth-rgb"].transpose(1, 2, 0), lossless=True),
    "lossy": _webp(IMAGES["smooth-rgb"].transpose(1, 2, 0), quality=70),
    "alpha": _webp(RNG.integers(0, 256, (9, 11, 4), dtype=np.uint8), lossless=True),
    "lossy-alpha": _webp(RNG.integers(0, 256, (9, 11, 4), dtype=np.uint8), quality=50),
}


@pytest.mark.parametrize("case", sorted(WEBP_CASES))
@pytest.mark.parametrize("mode", ["UNCHANGED", "RGB", "RGBA"])
def test_decode_webp(vision, tv, lib, oracle, case, mode):
    record = _same(vision, tv, lib, oracle, "decode_webp", WEBP_CASES[case], mode=mode)
    assert record[0][0] == "ok"
    _same(vision, tv, lib, oracle, "decode_image", WEBP_CASES[case], mode=mode)


def test_decode_webp_gray_keeps_the_colors(vision, tv, lib, oracle):
    """torchvision's C++ warning goes to stderr; the library warns in Python (UserWarning)."""
    data = WEBP_CASES["alpha"]
    theirs = _record(tv.io.decode_webp, _bytes(oracle, data), mode="GRAY")
    ours = _record(vision.io.decode_webp, _bytes(lib, data), mode="GRAY")
    assert ours[0] == theirs[0]
    if vision is not tv:
        assert ours[1] == [("UserWarning", "Webp does not support grayscale conversions. The "
                            "returned tensor will be in the colorspace of the original image.")]
    _same(vision, tv, lib, oracle, "decode_webp", PNG_CASES["rgb8"])


# -- decode_image's dispatch, files -------------------------------------------------------------

def test_decode_image_signatures_and_errors(vision, tv, lib, oracle):
    for data in (b"\xff\xd8", b"\x89PN", b"GIF89", b"\x00\x00\x00\x20ftypavif" + b"\x00" * 8,
                 b"RIFF\x00\x00\x00\x00WEBPVP8 " + b"\x00" * 8, b"\x01" * 20, b"\xff\xd8\xff",
                 b"\x89PNG"):
        _same(vision, tv, lib, oracle, "decode_image", data)
    for make in (lambda L: L.zeros(10), lambda L: L.zeros(0, dtype=L.uint8),
                 lambda L: L.zeros(2, 5, dtype=L.uint8)):
        assert _record(vision.io.decode_image, make(lib)) == _record(tv.io.decode_image,
                                                                     make(oracle))
    assert _record(vision.io.decode_image, _bytes(lib, PNG_CASES["rgb8"]), mode=3) == \
        _record(tv.io.decode_image, _bytes(oracle, PNG_CASES["rgb8"]), mode=3)


def test_read_image_and_files(vision, tv, lib, oracle, tmp_path):
    (tmp_path / "a.png").write_bytes(PNG_CASES["rgba8"])
    (tmp_path / "b.jpg").write_bytes(JPEG_CASES["exif6"])
    (tmp_path / "empty").write_bytes(b"")
    for path in ("a.png", "b.jpg"):
        for kwargs in ({}, {"mode": vision.io.ImageReadMode.RGB}, {"mode": "GRAY"},
                       {"apply_exif_orientation": True}):
            their_kwargs = dict(kwargs)
            if "mode" in kwargs and not isinstance(kwargs["mode"], str):
                their_kwargs["mode"] = tv.io.ImageReadMode[kwargs["mode"].name]
            for fn in ("read_image", "decode_image"):
                theirs = _record(getattr(tv.io, fn), str(tmp_path / path), **their_kwargs)
                ours = _record(getattr(vision.io, fn), tmp_path / path, **kwargs)
                assert ours == theirs and theirs[0][0] == "ok"
    for path in ("a.png", "empty", "missing", "."):
        theirs = _record(tv.io.read_file, str(tmp_path / path))
        ours = _record(vision.io.read_file, tmp_path / path)
        assert ours == theirs
    data = lib.from_numpy(RNG.integers(0, 256, 100, dtype=np.uint8))
    vision.io.write_file(str(tmp_path / "w.bin"), data)
    assert (tmp_path / "w.bin").read_bytes() == data.numpy().tobytes()
    for make, path in ((lambda L: L.zeros(3), "x"), (lambda L: L.zeros(2, 2, dtype=L.uint8), "x"),
                       (lambda L: L.zeros(3, dtype=L.uint8), "no/such/dir/x")):
        assert _record(vision.io.write_file, str(tmp_path / path), make(lib)) == \
            _record(tv.io.write_file, str(tmp_path / path), make(oracle))


def test_image_read_mode_and_names(vision, tv):
    assert [(m.name, m.value) for m in vision.io.ImageReadMode] == \
        [(m.name, m.value) for m in tv.io.ImageReadMode]
    assert vision.io.ImageReadMode.RGBA is vision.io.ImageReadMode.RGB_ALPHA
    assert vision.io.ImageReadMode["RGBA"].name == "RGB_ALPHA"
    assert sorted(vision.io.__all__) == sorted(tv.io.__all__)
    for name in ("decode_avif", "decode_heic"):
        theirs = _record(getattr(tv.io, name), None)
        ours = _record(getattr(vision.io, name), None)
        assert ours == theirs
