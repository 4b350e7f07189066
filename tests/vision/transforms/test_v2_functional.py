"""``transforms.v2.functional`` against torchvision: every dispatcher on every kind of input it
takes (Image, Video, Mask, BoundingBoxes in all six formats and with integer coordinates,
KeyPoints, plain tensors and PIL images), the output's class and metadata and its values.

As torchvision's test_transforms_v2.py: each geometric dispatcher moves boxes and keypoints
with the image (rotated boxes, whose angles torch computes beyond the float32 tolerances in
places, held to torch's accuracy against the float64 result), each color dispatcher passes
masks and boxes by, and the
meta kernels (formats, clamping, sizes), the conversions, the kernel registry and the errors.
"""

from __future__ import annotations

import numpy as np
import pytest
import transform_helpers as H

START = [[0, 0], [22, 0], [22, 16], [0, 16]]
END = [[2, 1], [20, 3], [21, 15], [1, 14]]
COEFFS = [1.1, 0.1, -1.0, 0.05, 0.9, 2.0, 0.001, 0.002]


def _displacement(L):
    d = (np.random.default_rng(5).random((1, 17, 23, 2)).astype(np.float32) - 0.5) * 0.3
    return L.tensor(d)


GEOMETRY = {
    "horizontal_flip": lambda F, L, x: F.horizontal_flip(x),
    "vertical_flip": lambda F, L, x: F.vertical_flip(x),
    "resize": lambda F, L, x: F.resize(x, [9, 13]),
    "resize_up": lambda F, L, x: F.resize(x, 30),
    "resize_max_size": lambda F, L, x: F.resize(x, None, max_size=19),
    "resize_bicubic": lambda F, L, x: F.resize(x, [9, 13], interpolation="bicubic"),
    "resize_lanczos": lambda F, L, x: F.resize(x, [9, 13],
                                               interpolation=F.InterpolationMode.LANCZOS),
    "resize_nearest": lambda F, L, x: F.resize(x, [9, 13], interpolation=0),
    "resize_nearest_exact": lambda F, L, x: F.resize(x, [31, 11],
                                                     interpolation="nearest-exact"),
    "affine": lambda F, L, x: F.affine(x, 15.0, [2, -3], 1.2, [10.0, 5.0]),
    "affine_bilinear": lambda F, L, x: F.affine(x, -7.0, [1, 1], 0.8, 3.0, "bilinear", fill=5,
                                                center=[3, 4]),
    "rotate": lambda F, L, x: F.rotate(x, 33.0),
    "rotate_expand": lambda F, L, x: F.rotate(x, -21.0, "bilinear", expand=True, fill=7),
    "rotate_90": lambda F, L, x: F.rotate(x, 90.0, expand=True),
    "rotate_180": lambda F, L, x: F.rotate(x, 180.0),
    "pad": lambda F, L, x: F.pad(x, [1, 2, 3, 4], fill=5),
    "pad_reflect": lambda F, L, x: F.pad(x, 2, padding_mode="reflect"),
    "pad_symmetric": lambda F, L, x: F.pad(x, [2, 1], padding_mode="symmetric"),
    "crop": lambda F, L, x: F.crop(x, 2, 3, 10, 12),
    "crop_outside": lambda F, L, x: F.crop(x, -2, 3, 30, 12),
    "perspective": lambda F, L, x: F.perspective(x, START, END),
    "perspective_coefficients": lambda F, L, x: F.perspective(x, None, None, "nearest", fill=3,
                                                              coefficients=COEFFS),
    "elastic": lambda F, L, x: F.elastic(x, _displacement(L)),
    "center_crop": lambda F, L, x: F.center_crop(x, [10, 11]),
    "center_crop_larger": lambda F, L, x: F.center_crop(x, [20, 30]),
    "resized_crop": lambda F, L, x: F.resized_crop(x, 1, 2, 10, 12, [7, 8]),
    "five_crop": lambda F, L, x: list(F.five_crop(x, [5, 7])),
    "ten_crop": lambda F, L, x: list(F.ten_crop(x, [5, 7], vertical_flip=True)),
}
COLOR = {
    "rgb_to_grayscale": lambda F, L, x: F.rgb_to_grayscale(x),
    "rgb_to_grayscale_3": lambda F, L, x: F.rgb_to_grayscale(x, 3),
    "grayscale_to_rgb": lambda F, L, x: F.grayscale_to_rgb(x),
    "adjust_brightness": lambda F, L, x: F.adjust_brightness(x, 1.3),
    "adjust_saturation": lambda F, L, x: F.adjust_saturation(x, 0.6),
    "adjust_contrast": lambda F, L, x: F.adjust_contrast(x, 1.7),
    "adjust_sharpness": lambda F, L, x: F.adjust_sharpness(x, 1.7),
    "adjust_hue": lambda F, L, x: F.adjust_hue(x, 0.2),
    "adjust_gamma": lambda F, L, x: F.adjust_gamma(x, 0.8, 1.1),
    "posterize": lambda F, L, x: F.posterize(x, 3),
    "solarize": lambda F, L, x: F.solarize(x, 100),
    "autocontrast": lambda F, L, x: F.autocontrast(x),
    "equalize": lambda F, L, x: F.equalize(x),
    "invert": lambda F, L, x: F.invert(x),
    "permute_channels": lambda F, L, x: F.permute_channels(x, [2, 0, 1]),
    "gaussian_blur": lambda F, L, x: F.gaussian_blur(x, [3, 5], [0.7, 1.3]),
    "to_dtype": lambda F, L, x: F.to_dtype(x, L.float32, scale=True),
    "to_dtype_int16": lambda F, L, x: F.to_dtype(x, L.int16, scale=True),
}
# float results of convolutions and transcendental functions: float32 tolerances
APPROX = {"adjust_gamma", "gaussian_blur", "adjust_sharpness", "elastic"}
IMAGES = ["image", "image_f", "batch", "video", "pil", "mask"]
ROTATED = ("boxes_XYWHR", "boxes_CXCYWHR", "boxes_XYXYXYXY")
BOXES = ["boxes_int"] + [f"boxes_{f}" for f in H.BOXES] + ["keypoints"]


def _cases():
    for name in GEOMETRY:
        for kind in IMAGES + BOXES:
            yield pytest.param(name, kind, id=f"{name}-{kind}")
    for name in COLOR:
        for kind in IMAGES + ["boxes_XYXY", "keypoints"]:
            yield pytest.param(name, kind, id=f"{name}-{kind}")


def _make(side, kind):
    if kind == "image_f":
        return side.make("image_f")
    if kind == "batch":
        return side.make("batch")
    return side.make(kind)


@pytest.mark.parametrize("name,kind", list(_cases()))
def test_dispatcher_matches_torchvision(name, kind, ours, theirs):
    fn = {**GEOMETRY, **COLOR}[name]
    H.same_error(lambda: fn(ours.F2, ours.L, _make(ours, kind)),
                 lambda: fn(theirs.F2, theirs.L, _make(theirs, kind)))
    try:
        expected = fn(theirs.F2, theirs.L, _make(theirs, kind))
    except Exception:  # noqa: BLE001  (both raised the same error: checked above)
        return
    got = fn(ours.F2, ours.L, _make(ours, kind))
    if kind in ROTATED and name in GEOMETRY:
        truth = fn(theirs.F2, theirs.L, _make(theirs, kind + "@64"))
        H.same_or_as_accurate(got, expected, truth)
        return
    approx = name in APPROX and kind in ("image_f", "keypoints")
    H.same(got, expected, approx=approx)


FORMATS = list(H.BOXES)


@pytest.mark.parametrize("old", FORMATS)
@pytest.mark.parametrize("new", FORMATS)
def test_convert_bounding_box_format(old, new, ours, theirs):
    def run(side, suffix=""):
        F2, L = side.F2, side.L
        boxes = side.make(f"boxes_{old}{suffix}")
        out = []
        for call in (lambda: F2.convert_bounding_box_format(boxes, new_format=new),
                     lambda: F2.convert_bounding_box_format(
                         boxes.as_subclass(L.Tensor), old_format=old, new_format=new)):
            try:
                out.append(call())
            except Exception as e:  # noqa: BLE001
                out.append(f"{type(e).__name__}: {H._norm(str(e))}")
        return out

    H.same_or_as_accurate(run(ours), run(theirs), run(theirs, "@64"))


@pytest.mark.parametrize("kind", ["boxes_XYXY", "boxes_XYWH", "boxes_CXCYWH", "boxes_XYWHR",
                                  "boxes_CXCYWHR", "boxes_XYXYXYXY", "boxes_int", "keypoints"])
def test_clamping(kind, ours, theirs):
    def run(side, suffix=""):
        F2, L = side.F2, side.L
        x = side.make(kind + suffix)
        moved = side.T.wrap(x.as_subclass(L.Tensor) * 1.5 - 3, like=x) if kind != "boxes_int" \
            else side.T.wrap(x.as_subclass(L.Tensor) * 2 - 3, like=x)
        if kind == "keypoints":
            return [F2.clamp_keypoints(moved),
                    F2.clamp_keypoints(moved.as_subclass(L.Tensor), canvas_size=(10, 12))]
        plain = moved.as_subclass(L.Tensor)
        return [F2.clamp_bounding_boxes(moved),
                F2.clamp_bounding_boxes(moved, clamping_mode="hard"),
                F2.clamp_bounding_boxes(plain, format=x.format, canvas_size=(10, 12),
                                        clamping_mode="soft"),
                F2.clamp_bounding_boxes(plain, format=x.format, canvas_size=(10, 12),
                                        clamping_mode="hard")]

    H.same_or_as_accurate(run(ours), run(theirs), run(theirs, "@64"))


def test_sizes_and_conversions(ours, theirs):
    from PIL import Image

    def run(side):
        F2, L = side.F2, side.L
        out = []
        for kind in ("image", "batch", "video", "mask", "boxes_XYXY", "keypoints", "pil"):
            x = side.make(kind)
            out.append(F2.get_size(x))
            if kind in ("image", "batch", "video", "pil"):
                out += [F2.get_dimensions(x), F2.get_num_channels(x)]
        out.append(F2.get_num_frames(side.make("video")))
        pil = Image.fromarray(H.PIL_RGB)
        out += [F2.to_image(pil), F2.to_image(H.PIL_RGB), F2.to_image(L.tensor(H.IMG_U8)),
                F2.pil_to_tensor(pil), F2.to_pil_image(side.make("image")),
                F2.to_dtype(side.make("image"), L.float64, scale=True),
                F2.to_dtype(side.make("video"), L.uint8),
                F2.to_dtype(side.make("image_f"), L.uint8, scale=True),
                F2.normalize(side.make("image_f"), [0.4, 0.5, 0.6], [0.2, 0.3, 0.25]),
                F2.erase(side.make("image"), 2, 3, 5, 6, L.tensor(7, dtype=L.uint8)),
                F2.uniform_temporal_subsample(side.make("video"), 3),
                F2.convert_image_dtype(L.tensor(H.IMG_U8), L.float32),
                F2.to_tensor(pil), F2.to_grayscale(pil, 3), F2.get_image_size(pil),
                F2.get_image_num_channels(pil)]
        return out

    H.same(run(ours), run(theirs))


def test_sanitize_bounding_boxes(ours, theirs):
    def run(side):
        F2, L, T = side.F2, side.L, side.T
        boxes = T.BoundingBoxes([[1., 2., 10., 12.], [5., 5., 5., 9.], [3., 3., 3.5, 3.5],
                                 [-5., -5., -1., -1.], [0., 0., 30., 30.]], format="XYXY",
                                canvas_size=(17, 23))
        points = T.KeyPoints([[1., 2.], [-1., 3.], [30., 4.], [5., 5.]], canvas_size=(17, 23))
        return [list(F2.sanitize_bounding_boxes(boxes)),
                list(F2.sanitize_bounding_boxes(boxes, min_size=2.0, min_area=20.0)),
                list(F2.sanitize_bounding_boxes(boxes.as_subclass(L.Tensor), format="XYXY",
                                                canvas_size=(17, 23))),
                list(F2.sanitize_keypoints(points))]

    H.same(run(ours), run(theirs))


def test_gaussian_noise(ours, theirs):
    def run(side):
        side.seed(3)
        F2 = side.F2
        return [F2.gaussian_noise(side.make("image_f")),
                F2.gaussian_noise(side.make("image_f"), 0.2, 0.3, clip=False),
                F2.gaussian_noise(side.make("video").float())]

    expected = run(theirs)  # (torch first: transform_helpers.SharedDraws)
    H.same(run(ours), expected)


def test_jpeg(ours, theirs):
    """The JPEG round trip (torchvision's io codec: libjpeg-turbo's bytes), pixel for pixel;
    its errors are torchvision's."""
    def run(side):
        F2 = side.F2
        return [F2.jpeg(side.make("image"), 75), F2.jpeg(side.make("batch"), 30),
                F2.jpeg(side.make("pil"), 50), F2.jpeg(side.make("video"), 90),
                F2.jpeg(side.make("gray"), 10)]

    H.same(run(ours), run(theirs))
    for quality in (0, 101):
        H.same_error(lambda q=quality: ours.F2.jpeg(ours.make("image"), q),
                     lambda q=quality: theirs.F2.jpeg(theirs.make("image"), q))
    for shape, dtype in (((3, 4, 4), "float32"), ((2, 4, 4), "uint8"), ((4, 4), "uint8"),
                         ((4, 4, 4), "uint8")):
        H.same_error(lambda s=shape, d=dtype: ours.F2.jpeg(
                         ours.L.zeros(s, dtype=getattr(ours.L, d)), 50),
                     lambda s=shape, d=dtype: theirs.F2.jpeg(
                         theirs.L.zeros(s, dtype=getattr(theirs.L, d)), 50))


def test_register_kernel(ours, theirs):
    def run(side):
        F2, L, T = side.F2, side.L, side.T

        class MyType(T.TVTensor):
            pass

        @F2.register_kernel(F2.horizontal_flip, MyType)
        def _flip(inpt, *args, **kwargs):
            return inpt.as_subclass(L.Tensor) * 0 + 9

        my = L.ones(1, 2, 3).as_subclass(MyType)
        out = [F2.horizontal_flip(my)]
        try:
            F2.register_kernel(F2.horizontal_flip, MyType)(lambda x: x)
        except Exception as e:  # noqa: BLE001
            out.append(f"{type(e).__name__}: {H._norm(str(e))}")
        try:
            F2.vertical_flip(my)
        except Exception as e:  # noqa: BLE001
            out.append(f"{type(e).__name__}: {H._norm(str(e))}")
        return out

    got, expected = run(ours), run(theirs)
    H.same(got[0], expected[0], check_types=False)
    assert [_no_address(m) for m in got[1:]] == [_no_address(m) for m in expected[1:]]


def _no_address(message: str) -> str:
    import re

    return re.sub(r" at 0x[0-9a-f]+", "", message)


ERRORS = [
    lambda F, L, T: F.resize(T.Image(L.zeros(3, 4, 4)), [1, 2, 3]),
    lambda F, L, T: F.resize(T.Image(L.zeros(3, 4, 4)), None),
    lambda F, L, T: F.resize(T.Image(L.zeros(3, 4, 4)), [5, 5], max_size=6),
    lambda F, L, T: F.rotate(T.Image(L.zeros(3, 4, 4)), 30, interpolation="bicubic"),
    lambda F, L, T: F.affine(T.Image(L.zeros(3, 4, 4)), 0, [1], 1.0, 0),
    lambda F, L, T: F.affine(T.Image(L.zeros(3, 4, 4)), 0, [1, 2], 0.0, 0),
    lambda F, L, T: F.pad(T.Image(L.zeros(3, 4, 4)), [1, 2, 3]),
    lambda F, L, T: F.pad(T.Image(L.zeros(3, 4, 4)), 1, padding_mode="wrap"),
    lambda F, L, T: F.perspective(T.Image(L.zeros(3, 4, 4)), None, None),
    lambda F, L, T: F.perspective(T.Image(L.zeros(3, 4, 4)), None, None,
                                  coefficients=[1.0] * 7),
    lambda F, L, T: F.elastic(T.Image(L.zeros(3, 4, 4)), L.zeros(1, 3, 4, 2)),
    lambda F, L, T: F.elastic(T.Image(L.zeros(3, 4, 4)), [1]),
    lambda F, L, T: F.adjust_hue(T.Image(L.zeros(3, 4, 4)), 0.7),
    lambda F, L, T: F.adjust_brightness(T.Image(L.zeros(3, 4, 4)), -1.0),
    lambda F, L, T: F.adjust_contrast(T.Image(L.zeros(2, 4, 4)), 1.0),
    lambda F, L, T: F.rgb_to_grayscale(T.Image(L.zeros(2, 4, 4))),
    lambda F, L, T: F.posterize(T.Image(L.zeros(3, 4, 4, dtype=L.uint8)), 9),
    lambda F, L, T: F.solarize(T.Image(L.zeros(3, 4, 4)), 2.0),
    lambda F, L, T: F.gaussian_blur(T.Image(L.zeros(3, 4, 4)), [3, 4]),
    lambda F, L, T: F.gaussian_blur(T.Image(L.zeros(3, 4, 4)), 3, [-1.0]),
    lambda F, L, T: F.normalize(T.Image(L.zeros(3, 4, 4, dtype=L.uint8)), [0.5], [0.5]),
    lambda F, L, T: F.normalize(T.Image(L.zeros(3, 4, 4)), [0.5], [0.0]),
    lambda F, L, T: F.to_dtype(T.Image(L.zeros(3, 4, 4)), L.int64, scale=True),
    lambda F, L, T: F.five_crop(T.Image(L.zeros(3, 4, 4)), [5, 5]),
    lambda F, L, T: F.crop(T.Mask(L.zeros(4)), 0, 0, 1, 1),
    lambda F, L, T: F.convert_bounding_box_format(L.zeros(2, 4), new_format="XYWH"),
    lambda F, L, T: F.convert_bounding_box_format(
        T.BoundingBoxes(L.zeros(2, 4), format="XYXY", canvas_size=(3, 3)),
        old_format="XYWH", new_format="XYWH"),
    lambda F, L, T: F.clamp_bounding_boxes(L.zeros(2, 4)),
    lambda F, L, T: F.clamp_bounding_boxes(
        T.BoundingBoxes(L.zeros(2, 4), format="XYXY", canvas_size=(3, 3)), format="XYXY"),
    lambda F, L, T: F.clamp_keypoints(L.zeros(2, 2)),
    lambda F, L, T: F.sanitize_bounding_boxes(L.zeros(2, 4)),
    lambda F, L, T: F.sanitize_bounding_boxes(
        T.BoundingBoxes(L.zeros(2, 4), format="XYXY", canvas_size=(3, 3)), format="XYXY"),
    lambda F, L, T: F.horizontal_flip("x"),
    lambda F, L, T: F.uniform_temporal_subsample(T.Video(L.zeros(2, 3, 4, 4)), 0),
    lambda F, L, T: F.get_num_frames(T.Image(L.zeros(3, 4, 4))),
    lambda F, L, T: F.grayscale_to_rgb(T.Image(L.zeros(2, 4, 4))),
    lambda F, L, T: F.permute_channels(T.Image(L.zeros(3, 4, 4)), [0, 1]),
    lambda F, L, T: F.gaussian_noise(T.Image(L.zeros(3, 4, 4, dtype=L.uint8))),
    lambda F, L, T: F.gaussian_noise(T.Image(L.zeros(3, 4, 4)), sigma=-1.0),
    lambda F, L, T: F.erase(T.Image(L.zeros(3, 4, 4)), 0, 0, 2, 2, L.zeros(1), inplace=True),
    lambda F, L, T: F.to_image("x"),
]


@pytest.mark.parametrize("case", ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_errors(case, ours, theirs):
    H.same_error(lambda: case(ours.F2, ours.L, ours.T),
                 lambda: case(theirs.F2, theirs.L, theirs.T))
