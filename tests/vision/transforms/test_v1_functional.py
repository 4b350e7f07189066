"""``transforms.functional`` (v1) against torchvision: every function on uint8 images (single
and batched), float images, a one-channel image and PIL images (RGB and L), pixel for pixel.

The cases follow what torchvision's test_functional_tensor.py and test_transforms.py check:
every interpolation mode, antialias on and off, fills (a number, one per channel), expand and
centers of rotations, out-of-image crops and center crops, every padding mode (negative
paddings crop), batched inputs, and the errors of bad arguments.
"""

from __future__ import annotations

import numpy as np
import pytest
import transform_helpers as H

# results whose float values come from convolution or a transcendental function (torch's
# kernels round their last bits their own way): float32 tolerances for float images
APPROX_FLOAT = {"gamma", "gaussian_blur", "gaussian_blur_default_sigma", "resize_noaa",
                "resize_bc_noaa"}

START = [[0, 0], [22, 0], [22, 16], [0, 16]]
END = [[2, 1], [20, 3], [21, 15], [1, 14]]

CASES = {
    "hflip": lambda F, x: F.hflip(x),
    "vflip": lambda F, x: F.vflip(x),
    "crop": lambda F, x: F.crop(x, 2, 3, 10, 12),
    "crop_outside": lambda F, x: F.crop(x, -2, 3, 30, 12),
    "center_crop": lambda F, x: F.center_crop(x, [10, 11]),
    "center_crop_int": lambda F, x: F.center_crop(x, 9),
    "center_crop_larger": lambda F, x: F.center_crop(x, [20, 30]),
    "pad_constant": lambda F, x: F.pad(x, [1, 2, 3, 4], fill=7),
    "pad_edge": lambda F, x: F.pad(x, [1, 2], padding_mode="edge"),
    "pad_reflect": lambda F, x: F.pad(x, 3, padding_mode="reflect"),
    "pad_symmetric": lambda F, x: F.pad(x, [3, -1, 2, 1], padding_mode="symmetric"),
    "pad_negative": lambda F, x: F.pad(x, [-2, 1, 3, -1], padding_mode="edge"),
    "resize_bilinear": lambda F, x: F.resize(x, [9, 13]),
    "resize_up": lambda F, x: F.resize(x, [30, 41]),
    "resize_short_side": lambda F, x: F.resize(x, 11),
    "resize_max_size": lambda F, x: F.resize(x, 12, max_size=14),
    "resize_bicubic": lambda F, x: F.resize(x, [9, 13], interpolation=F.InterpolationMode.BICUBIC),
    "resize_nearest": lambda F, x: F.resize(x, [9, 13], interpolation=F.InterpolationMode.NEAREST),
    "resize_nearest_exact": lambda F, x: F.resize(
        x, [31, 13], interpolation=F.InterpolationMode.NEAREST_EXACT),
    "resize_pil_int_mode": lambda F, x: F.resize(x, [9, 13], interpolation=3),
    "resize_noaa": lambda F, x: F.resize(x, [9, 13], antialias=False),
    "resize_bc_noaa": lambda F, x: F.resize(x, [30, 12], interpolation=F.InterpolationMode.BICUBIC,
                                            antialias=False),
    "resized_crop": lambda F, x: F.resized_crop(x, 1, 2, 10, 12, [7, 8]),
    "brightness": lambda F, x: F.adjust_brightness(x, 1.3),
    "contrast": lambda F, x: F.adjust_contrast(x, 0.7),
    "saturation": lambda F, x: F.adjust_saturation(x, 1.6),
    "hue": lambda F, x: F.adjust_hue(x, 0.2),
    "hue_negative": lambda F, x: F.adjust_hue(x, -0.37),
    "gamma": lambda F, x: F.adjust_gamma(x, 0.8, 1.1),
    "sharpness": lambda F, x: F.adjust_sharpness(x, 1.7),
    "grayscale": lambda F, x: F.rgb_to_grayscale(x),
    "grayscale_3": lambda F, x: F.rgb_to_grayscale(x, 3),
    "invert": lambda F, x: F.invert(x),
    "autocontrast": lambda F, x: F.autocontrast(x),
    "rotate": lambda F, x: F.rotate(x, 33.0),
    "rotate_bilinear": lambda F, x: F.rotate(x, -21.0, F.InterpolationMode.BILINEAR),
    "rotate_expand_fill": lambda F, x: F.rotate(x, 45.0, expand=True, fill=[10.0, 20.0, 30.0]),
    "rotate_center": lambda F, x: F.rotate(x, 90.0, center=[3, 4]),
    "affine": lambda F, x: F.affine(x, 15.0, [2, -3], 1.2, [10.0, 5.0]),
    "affine_bilinear_fill": lambda F, x: F.affine(x, -7.0, [1, 1], 0.8, 3.0,
                                                  F.InterpolationMode.BILINEAR, fill=[5., 5., 5.]),
    "affine_center": lambda F, x: F.affine(x, 25, (0, 0), 1.0, (0.0, -10.0), center=[0, 0]),
    "perspective": lambda F, x: F.perspective(x, START, END),
    "perspective_nearest_fill": lambda F, x: F.perspective(
        x, START, END, F.InterpolationMode.NEAREST, fill=[1., 2., 3.]),
    "gaussian_blur": lambda F, x: F.gaussian_blur(x, [3, 5], [0.7, 1.3]),
    "gaussian_blur_default_sigma": lambda F, x: F.gaussian_blur(x, 5),
    "five_crop": lambda F, x: F.five_crop(x, [5, 7]),
    "ten_crop": lambda F, x: F.ten_crop(x, 6, vertical_flip=True),
}
UINT8_ONLY = {
    "posterize": lambda F, x: F.posterize(x, 3),
    "solarize": lambda F, x: F.solarize(x, 100),
    "equalize": lambda F, x: F.equalize(x),
}
# three-channel-only operations (fills of three values, hue); the rest also take one channel
RGB_ONLY = {"rotate_expand_fill", "affine_bilinear_fill", "perspective_nearest_fill", "hue",
            "hue_negative"}


def _cases():
    for name in {**CASES, **UINT8_ONLY}:
        for kind in H.KINDS:
            if name in UINT8_ONLY and kind == "float":
                continue
            if name in RGB_ONLY and kind in ("gray", "pil_l"):
                continue
            yield pytest.param(name, kind, id=f"{name}-{kind}")


@pytest.mark.parametrize("name,kind", list(_cases()))
def test_functional_matches_torchvision(name, kind, ours, theirs):
    fn = {**CASES, **UINT8_ONLY}[name]
    expected = fn(theirs.F, theirs.make(kind))
    got = fn(ours.F, ours.make(kind))
    H.same(got, expected, approx=name in APPROX_FLOAT and kind == "float")


@pytest.mark.parametrize("kind", ["u8", "float", "pil", "gray"])
def test_elastic_transform(kind, ours, theirs):
    d = ((np.random.default_rng(5).random((1, 17, 23, 2)) - 0.5) * 0.3).astype(np.float32)
    for side in (ours, theirs):
        side.out = side.F.elastic_transform(side.make(kind), side.L.tensor(d))
        side.out_nn = side.F.elastic_transform(side.make(kind), side.L.tensor(d),
                                               side.F.InterpolationMode.NEAREST, fill=[3.0])
    H.same(ours.out, theirs.out, approx=kind == "float")
    H.same(ours.out_nn, theirs.out_nn)


@pytest.mark.parametrize("mode", ["L", "RGB", "RGBA", "LA", "1", "I", "F", "I;16", "P", "CMYK"])
def test_to_tensor_and_back(mode, ours, theirs):
    from PIL import Image

    arr = H.PIL_RGB
    img = Image.fromarray(arr).convert(mode)
    for side in (ours, theirs):
        side.t = side.F.to_tensor(img)
        side.p = side.F.pil_to_tensor(img)
    H.same(ours.t, theirs.t)
    H.same(ours.p, theirs.p)
    if mode in ("L", "RGB", "RGBA", "LA", "I", "F"):
        H.same(ours.F.to_pil_image(ours.t), theirs.F.to_pil_image(theirs.t))
        H.same(ours.F.to_pil_image(ours.p), theirs.F.to_pil_image(theirs.p))


@pytest.mark.parametrize("dtype", ["uint8", "int16", "int32", "float32", "float64"])
@pytest.mark.parametrize("channels", [1, 2, 3, 4])
def test_to_pil_image_modes(dtype, channels, ours, theirs):
    rng = np.random.default_rng(1)
    arr = (rng.random((channels, 5, 6)) * (1 if "float" in dtype else 200)).astype(dtype)
    for mode in (None, "RGB", "L", "LA", "RGBA", "F", "I;16", "YCbCr", "HSV", "RGBX"):
        H.same_error(lambda m=mode: ours.F.to_pil_image(ours.L.tensor(arr), m),
                     lambda m=mode: theirs.F.to_pil_image(theirs.L.tensor(arr), m))
        try:
            a = ours.F.to_pil_image(ours.L.tensor(arr), mode)
        except Exception:  # noqa: BLE001  (both raised: checked above)
            continue
        H.same(a, theirs.F.to_pil_image(theirs.L.tensor(arr), mode))
        H.same(ours.F.to_pil_image(arr.transpose(1, 2, 0), mode),
               theirs.F.to_pil_image(arr.transpose(1, 2, 0), mode))


def test_numpy_inputs(ours, theirs):
    for arr in (H.PIL_RGB, H.PIL_L, H.PIL_RGB.astype(np.float32), H.PIL_L.astype(np.int32)):
        H.same(ours.F.to_tensor(arr), theirs.F.to_tensor(arr))


@pytest.mark.parametrize("src,dst", [("uint8", "float32"), ("uint8", "int32"), ("int32", "uint8"),
                                     ("float32", "uint8"), ("float64", "int32"), ("int16", "int64"),
                                     ("float32", "float64"), ("float32", "int64")])
def test_convert_image_dtype(src, dst, ours, theirs):
    arr = (np.random.default_rng(2).random((3, 4, 5)) * (1 if "float" in src else 100)).astype(src)
    H.same_error(lambda: ours.F.convert_image_dtype(ours.L.tensor(arr), getattr(ours.L, dst)),
                 lambda: theirs.F.convert_image_dtype(theirs.L.tensor(arr),
                                                      getattr(theirs.L, dst)))
    if (src, dst) not in (("float32", "int64"),):
        H.same(ours.F.convert_image_dtype(ours.L.tensor(arr), getattr(ours.L, dst)),
               theirs.F.convert_image_dtype(theirs.L.tensor(arr), getattr(theirs.L, dst)))


def test_normalize_and_erase(ours, theirs):
    for side in (ours, theirs):
        x = side.L.tensor(H.IMG_F)
        side.n = side.F.normalize(x, [0.4, 0.5, 0.6], [0.2, 0.3, 0.25])
        side.same_input = x  # not changed in place by default
        side.inplace = side.F.normalize(x.clone(), [0.5], [0.5], inplace=True)
        side.e = side.F.erase(side.L.tensor(H.IMG_U8), 2, 3, 5, 6,
                              side.L.tensor(7, dtype=side.L.uint8))
    H.same(ours.n, theirs.n)
    H.same(ours.same_input, theirs.same_input)
    H.same(ours.inplace, theirs.inplace)
    H.same(ours.e, theirs.e)


def test_perspective_coefficients(ours, theirs):
    assert ours.F._get_perspective_coeffs(START, END) == theirs.F._get_perspective_coeffs(
        START, END)


ERRORS = [
    lambda F, L: F.resize(L.zeros(3, 4, 4), [1, 2, 3]),
    lambda F, L: F.resize(L.zeros(3, 4, 4), [2, 3], max_size=5),
    lambda F, L: F.resize(L.zeros(3, 4, 4), 2, interpolation="bilinear"),
    lambda F, L: F.resize(L.zeros(3, 4, 4), 8, max_size=6),
    lambda F, L: F.pad(L.zeros(3, 4, 4), [1, 2, 3]),
    lambda F, L: F.pad(L.zeros(3, 4, 4), 1, padding_mode="wrap"),
    lambda F, L: F.pad(L.zeros(3, 4, 4), "1"),
    lambda F, L: F.pad(L.zeros(3, 4, 4), 1, fill="x"),
    lambda F, L: F.rotate(L.zeros(3, 4, 4), "30"),
    lambda F, L: F.rotate(L.zeros(3, 4, 4), 30, center=3),
    lambda F, L: F.rotate(L.zeros(3, 4, 4), 30, interpolation=F.InterpolationMode.BICUBIC),
    lambda F, L: F.affine(L.zeros(3, 4, 4), 0, [1], 1.0, 0),
    lambda F, L: F.affine(L.zeros(3, 4, 4), 0, [1, 2], -1.0, 0),
    lambda F, L: F.affine(L.zeros(3, 4, 4), 0, [1, 2], 1.0, [1, 2, 3]),
    lambda F, L: F.affine(L.zeros(3, 4, 4), 0, [1, 2], 1.0, 0, fill=[1.0, 2.0]),
    lambda F, L: F.perspective(L.zeros(3, 4, 4), [[0, 0]], [[1, 1]]),
    lambda F, L: F.adjust_brightness(L.zeros(3, 4, 4), -1),
    lambda F, L: F.adjust_hue(L.zeros(3, 4, 4), 0.7),
    lambda F, L: F.adjust_gamma(L.zeros(3, 4, 4), -1),
    lambda F, L: F.adjust_contrast(L.zeros(2, 4, 4), 1.0),
    lambda F, L: F.rgb_to_grayscale(L.zeros(3, 4, 4), 2),
    lambda F, L: F.rgb_to_grayscale(L.zeros(4, 4)),
    lambda F, L: F.gaussian_blur(L.zeros(3, 4, 4), [3, 4]),
    lambda F, L: F.gaussian_blur(L.zeros(3, 4, 4), [3, 3, 3]),
    lambda F, L: F.gaussian_blur(L.zeros(3, 4, 4), 3, -1.0),
    lambda F, L: F.gaussian_blur(L.zeros(3, 4, 4), 3, "x"),
    lambda F, L: F.gaussian_blur([1], 3),
    lambda F, L: F.posterize(L.zeros(3, 4, 4), 3),
    lambda F, L: F.posterize(L.zeros(3, 4, 4, dtype=L.uint8), 9),
    lambda F, L: F.solarize(L.zeros(3, 4, 4), 2.0),
    lambda F, L: F.equalize(L.zeros(3, 4, 4)),
    lambda F, L: F.normalize(L.zeros(3, 4, 4, dtype=L.uint8), [0.5], [0.5]),
    lambda F, L: F.normalize(L.zeros(4, 4), [0.5], [0.5]),
    lambda F, L: F.normalize(L.zeros(3, 4, 4), [0.5], [0.0]),
    lambda F, L: F.normalize([0], [0.5], [0.5]),
    lambda F, L: F.five_crop(L.zeros(3, 4, 4), [5, 5]),
    lambda F, L: F.five_crop(L.zeros(3, 4, 4), [1, 2, 3]),
    lambda F, L: F.to_tensor(L.zeros(3)),
    lambda F, L: F.to_tensor(np.zeros((2, 2, 2, 2))),
    lambda F, L: F.pil_to_tensor(np.zeros((2, 2))),
    lambda F, L: F.to_pil_image(np.zeros((2, 2, 5), np.uint8)),
    lambda F, L: F.to_pil_image(np.zeros((2,), np.uint8)),
    lambda F, L: F.to_pil_image([1]),
    lambda F, L: F.to_pil_image(np.zeros((2, 2, 1), np.int64)),
    lambda F, L: F.convert_image_dtype(np.zeros(2), L.float),
    lambda F, L: F.to_grayscale(L.zeros(3, 4, 4)),
    lambda F, L: F.erase(np.zeros(2), 0, 0, 1, 1, L.zeros(1)),
    lambda F, L: F.elastic_transform(L.zeros(3, 4, 4), L.zeros(1, 3, 4, 2)),
    lambda F, L: F.elastic_transform(L.zeros(3, 4, 4), [1]),
    lambda F, L: F.hflip(np.zeros((2, 2))),
    lambda F, L: F.crop(L.zeros(4), 0, 0, 1, 1),
    lambda F, L: F.get_dimensions(np.zeros((2, 2))),
]


@pytest.mark.parametrize("case", ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_errors(case, ours, theirs):
    H.same_error(lambda: case(ours.F, ours.L), lambda: case(theirs.F, theirs.L))
