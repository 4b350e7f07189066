"""``torchvision.utils`` against torchvision: make_grid's tensors, save_image's file bytes, the
draw functions' pixels, flow_to_image's colors, and every error and warning, element for
element."""

from __future__ import annotations

import io
import warnings

import numpy as np
import pytest
import torchcompare


def _pair(lib, oracle, array):
    """The same values as a tensor of the library under test and as a torch tensor."""
    return lib.from_numpy(np.array(array)), oracle.from_numpy(np.array(array))


def _record(fn, *args, **kwargs):
    """What a call returned (tensor values exactly), raised or warned, comparably."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = fn(*args, **kwargs)
            if torchcompare.is_tensor(out):
                result = ("tensor", torchcompare.dtype_name(out.dtype), tuple(out.shape),
                          out.detach().numpy().tolist())
            else:
                result = ("value", out)
        except Exception as exc:  # noqa: BLE001  (compared between the two libraries)
            result = ("raised", type(exc).__name__, torchcompare.normalize_text(str(exc)))
    return result, [(w.category.__name__, str(w.message)) for w in caught]


def _same(vision_fn, tv_fn, ours_args, their_args, **kwargs):
    theirs = _record(tv_fn, *their_args, **kwargs)
    ours = _record(vision_fn, *ours_args, **kwargs)
    assert ours == theirs
    return theirs


RNG = np.random.default_rng(0)
BATCH = RNG.random((5, 3, 4, 6), dtype=np.float32) * 3 - 1


# -- make_grid ----------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs", [
    {}, {"nrow": 2}, {"nrow": 10, "padding": 0}, {"padding": 3, "pad_value": 0.25},
    {"normalize": True}, {"normalize": True, "value_range": (-0.5, 0.5)},
    {"normalize": True, "scale_each": True}, {"normalize": True, "value_range": (0, 1),
                                              "scale_each": True},
    {"normalize": True, "value_range": [0, 1]}, {"nrow": 3, "padding": 1, "normalize": True},
])
def test_make_grid_batch(vision, tv, lib, oracle, kwargs):
    ours, theirs = _pair(lib, oracle, BATCH)
    record = _same(vision.utils.make_grid, tv.utils.make_grid, (ours,), (theirs,), **kwargs)
    if record[0][0] == "tensor":
        np.testing.assert_array_equal(ours.numpy(), BATCH)  # the input is left as it was


@pytest.mark.parametrize("shape", [(4, 5), (1, 4, 5), (3, 4, 5), (2, 4, 5), (1, 3, 4, 5),
                                   (3, 1, 4, 5), (2, 2, 4, 5), (1, 1, 1, 1)])
def test_make_grid_shapes(vision, tv, lib, oracle, shape):
    ours, theirs = _pair(lib, oracle, RNG.random(shape, dtype=np.float32))
    _same(vision.utils.make_grid, tv.utils.make_grid, (ours,), (theirs,), nrow=3)
    _same(vision.utils.make_grid, tv.utils.make_grid, (ours,), (theirs,), normalize=True)


def test_make_grid_lists_dtypes_and_errors(vision, tv, lib, oracle):
    images = [RNG.random((3, 4, 4), dtype=np.float32) for _ in range(3)]
    ours = [lib.from_numpy(a) for a in images]
    theirs = [oracle.from_numpy(a) for a in images]
    _same(vision.utils.make_grid, tv.utils.make_grid, (ours,), (theirs,), nrow=2)
    u8 = RNG.integers(0, 256, (3, 3, 5, 5), dtype=np.uint8)
    _same(vision.utils.make_grid, tv.utils.make_grid, *zip(_pair(lib, oracle, u8),
                                                              strict=True), pad_value=255)
    f64 = RNG.random((2, 3, 2, 2))
    _same(vision.utils.make_grid, tv.utils.make_grid, *zip(_pair(lib, oracle, f64),
                                                              strict=True), normalize=True)
    for bad_ours, bad_theirs in (([ours[0], 3], [theirs[0], 3]), (images, images),
                                 ("x", "x"), ((ours[0],), (theirs[0],))):
        _same(vision.utils.make_grid, tv.utils.make_grid, (bad_ours,), (bad_theirs,))
    _same(vision.utils.make_grid, tv.utils.make_grid, (ours[0],), (theirs[0],),
          normalize=True, value_range=[0, 1])


# -- save_image ---------------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", ["png", "jpg", "bmp", "tiff"])
@pytest.mark.parametrize("kwargs", [{}, {"nrow": 2, "padding": 1, "normalize": True}])
def test_save_image_bytes(vision, tv, lib, oracle, tmp_path, fmt, kwargs):
    ours, theirs = _pair(lib, oracle, BATCH)
    tv.utils.save_image(theirs, str(tmp_path / f"theirs.{fmt}"), **kwargs)
    vision.utils.save_image(ours, str(tmp_path / f"ours.{fmt}"), **kwargs)
    assert (tmp_path / f"ours.{fmt}").read_bytes() == (tmp_path / f"theirs.{fmt}").read_bytes()


def test_save_image_file_object_and_one_image(vision, tv, lib, oracle, tmp_path):
    image = RNG.random((1, 7, 9), dtype=np.float32)
    ours, theirs = _pair(lib, oracle, image)
    a, b = io.BytesIO(), io.BytesIO()
    tv.utils.save_image(theirs, a, format="PNG")
    vision.utils.save_image(ours, b, format="PNG")
    assert a.getvalue() == b.getvalue()
    tv.utils.save_image(list(oracle.from_numpy(BATCH)), str(tmp_path / "t.png"))
    vision.utils.save_image(list(lib.from_numpy(BATCH)), str(tmp_path / "o.png"))
    assert (tmp_path / "t.png").read_bytes() == (tmp_path / "o.png").read_bytes()
    with pytest.raises(ValueError) as theirs_err:
        tv.utils.save_image(theirs, io.BytesIO())
    with pytest.raises(ValueError) as ours_err:
        vision.utils.save_image(ours, io.BytesIO())
    assert str(ours_err.value) == str(theirs_err.value)


# -- draw_bounding_boxes ------------------------------------------------------------------------

IMAGE = RNG.integers(0, 256, (3, 40, 50), dtype=np.uint8)
BOXES = np.array([[2, 3, 20, 30], [10, 5, 45, 38], [0, 0, 49, 39], [25.7, 9.2, 30.9, 12.5]],
                 dtype=np.float32)
ROTATED = np.array([[5, 5, 30, 8, 27, 30, 3, 27], [40, 2, 48, 10, 40, 18, 32, 10]],
                   dtype=np.float32)


@pytest.mark.parametrize("kwargs", [
    {},
    {"labels": ["cat", "dog", "a long label", ""], "width": 2},
    {"colors": "red", "fill": True},
    {"colors": ["red", (0, 255, 0), "#FF00FF", "yellow", "blue"], "width": 3},
    {"colors": (10, 20, 30), "labels": ["a", "b", "c", "d"], "fill_labels": True},
    {"labels": ["a", "b", "c", "d"], "label_colors": "white",
     "label_background_colors": ["black", "red", "green", "blue"], "fill_labels": True},
    {"labels": ["a", "b", "c", "d"], "label_colors": ["red", "green", "blue", "white"]},
    {"font_size": 12},
])
@pytest.mark.parametrize("image_kind", ["uint8", "float", "gray"])
def test_draw_bounding_boxes(vision, tv, lib, oracle, kwargs, image_kind):
    image = IMAGE
    if image_kind == "float":
        image = IMAGE.astype(np.float32) / 255
    elif image_kind == "gray":
        image = IMAGE[:1]
    img_ours, img_theirs = _pair(lib, oracle, image)
    box_ours, box_theirs = _pair(lib, oracle, BOXES)
    record = _same(vision.utils.draw_bounding_boxes, tv.utils.draw_bounding_boxes,
                   (img_ours, box_ours), (img_theirs, box_theirs), **kwargs)
    assert record[0][0] == "tensor"


@pytest.mark.parametrize("fill", [False, True])
def test_draw_rotated_boxes(vision, tv, lib, oracle, fill):
    img_ours, img_theirs = _pair(lib, oracle, IMAGE)
    box_ours, box_theirs = _pair(lib, oracle, ROTATED)
    _same(vision.utils.draw_bounding_boxes, tv.utils.draw_bounding_boxes,
          (img_ours, box_ours), (img_theirs, box_theirs), fill=fill, labels=["r", "s"],
          width=2)


def test_draw_bounding_boxes_errors_and_warnings(vision, tv, lib, oracle):
    img = _pair(lib, oracle, IMAGE)
    boxes = _pair(lib, oracle, BOXES)
    cases = [
        (IMAGE, boxes),                                   # not a tensor
        (_pair(lib, oracle, IMAGE.astype(np.int32)), boxes),
        (_pair(lib, oracle, IMAGE[None]), boxes),
        (_pair(lib, oracle, IMAGE[:2]), boxes),
        (img, _pair(lib, oracle, BOXES[:, [2, 1, 0, 3]])),  # xmin > xmax
        (img, _pair(lib, oracle, np.zeros((0, 4), np.float32))),
    ]
    for image, box in cases:
        ours_img, theirs_img = image if isinstance(image, tuple) else (image, image)
        _same(vision.utils.draw_bounding_boxes, tv.utils.draw_bounding_boxes,
              (ours_img, box[0]), (theirs_img, box[1]))
    for kwargs in ({"labels": ["a"]}, {"colors": ["red"]}, {"colors": 3},
                   {"colors": (1, 2)}, {"colors": "not-a-color"}):
        _same(vision.utils.draw_bounding_boxes, tv.utils.draw_bounding_boxes,
              (img[0], boxes[0]), (img[1], boxes[1]), **kwargs)


# -- draw_segmentation_masks --------------------------------------------------------------------

MASKS = RNG.random((3, 40, 50)) > 0.6


@pytest.mark.parametrize("kwargs", [{}, {"alpha": 0.3}, {"alpha": 1.0, "colors": "blue"},
                                    {"colors": ["red", (0, 10, 200), "#123456"]},
                                    {"colors": (255, 0, 0), "alpha": 0}])
@pytest.mark.parametrize("image_kind", ["uint8", "float32", "float64"])
def test_draw_segmentation_masks(vision, tv, lib, oracle, kwargs, image_kind):
    image = IMAGE if image_kind == "uint8" else (IMAGE / 255).astype(image_kind)
    img_ours, img_theirs = _pair(lib, oracle, image)
    mask_ours, mask_theirs = _pair(lib, oracle, MASKS)
    record = _same(vision.utils.draw_segmentation_masks, tv.utils.draw_segmentation_masks,
                   (img_ours, mask_ours), (img_theirs, mask_theirs), **kwargs)
    assert record[0][0] == "tensor"
    _same(vision.utils.draw_segmentation_masks, tv.utils.draw_segmentation_masks,
          (img_ours, mask_ours[0]), (img_theirs, mask_theirs[0]), **kwargs)


def test_draw_segmentation_masks_errors(vision, tv, lib, oracle):
    img = _pair(lib, oracle, IMAGE)
    masks = _pair(lib, oracle, MASKS)
    cases = [
        ((IMAGE, IMAGE), masks),
        (_pair(lib, oracle, IMAGE.astype(np.int64)), masks),
        (_pair(lib, oracle, IMAGE[None]), masks),
        (_pair(lib, oracle, IMAGE[:1]), masks),
        (img, _pair(lib, oracle, MASKS[None])),
        (img, _pair(lib, oracle, MASKS.astype(np.uint8))),
        (img, _pair(lib, oracle, MASKS[:, :10])),
        (img, _pair(lib, oracle, MASKS[:0])),
        (img, _pair(lib, oracle, MASKS[:2])),
    ]
    for image, mask in cases:
        _same(vision.utils.draw_segmentation_masks, tv.utils.draw_segmentation_masks,
              (image[0], mask[0]), (image[1], mask[1]), colors=["red", "green", "blue"][
                  :max(1, mask[1].shape[0] if mask[1].ndim == 3 else 1)])


# -- draw_keypoints -----------------------------------------------------------------------------

KEYPOINTS = np.array([[[5, 5], [20, 8], [30, 30], [45.6, 2.2]],
                      [[10, 35], [12, 20], [40, 25], [1, 1]]], dtype=np.float32)
VISIBLE = np.array([[True, True, False, True], [True, True, True, False]])


@pytest.mark.parametrize("kwargs", [
    {}, {"colors": "red", "radius": 3}, {"connectivity": [(0, 1), (1, 2), (2, 3)], "width": 2},
    {"connectivity": [(0, 3)], "colors": (0, 0, 255), "radius": 0},
])
@pytest.mark.parametrize("visibility", [None, "2d", "3d"])
@pytest.mark.parametrize("image_kind", ["uint8", "float32"])
def test_draw_keypoints(vision, tv, lib, oracle, kwargs, visibility, image_kind):
    image = IMAGE if image_kind == "uint8" else (IMAGE / 255).astype(np.float32)
    img_ours, img_theirs = _pair(lib, oracle, image)
    kp_ours, kp_theirs = _pair(lib, oracle, KEYPOINTS)
    if visibility is not None:
        vis = VISIBLE if visibility == "2d" else VISIBLE[..., None]
        kwargs = {**kwargs, "visibility": None}
        kwargs_ours = {**kwargs, "visibility": lib.from_numpy(vis)}
        kwargs_theirs = {**kwargs, "visibility": oracle.from_numpy(vis)}
    else:
        kwargs_ours = kwargs_theirs = kwargs
    theirs = _record(tv.utils.draw_keypoints, img_theirs, kp_theirs, **kwargs_theirs)
    ours = _record(vision.utils.draw_keypoints, img_ours, kp_ours, **kwargs_ours)
    assert ours == theirs and theirs[0][0] == "tensor"


def test_draw_keypoints_errors(vision, tv, lib, oracle):
    img = _pair(lib, oracle, IMAGE)
    kp = _pair(lib, oracle, KEYPOINTS)
    cases = [
        ((IMAGE, IMAGE), kp, None),
        (_pair(lib, oracle, IMAGE.astype(np.int16)), kp, None),
        (_pair(lib, oracle, IMAGE[None]), kp, None),
        (_pair(lib, oracle, IMAGE[:1]), kp, None),
        (img, _pair(lib, oracle, KEYPOINTS[0]), None),
        (img, kp, _pair(lib, oracle, VISIBLE[0])),
        (img, kp, _pair(lib, oracle, VISIBLE[:, :2])),
    ]
    for image, points, vis in cases:
        extra = ({}, {}) if vis is None else ({"visibility": vis[0]}, {"visibility": vis[1]})
        theirs = _record(tv.utils.draw_keypoints, image[1], points[1], **extra[1])
        ours = _record(vision.utils.draw_keypoints, image[0], points[0], **extra[0])
        assert ours == theirs and theirs[0][0] == "raised"


# -- flow_to_image ------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(2, 6, 7), (3, 2, 5, 4), (1, 2, 1, 1)])
def test_flow_to_image(vision, tv, lib, oracle, shape):
    flow = (RNG.standard_normal(shape) * 4).astype(np.float32)
    ours, theirs = _pair(lib, oracle, flow)
    record = _same(vision.utils.flow_to_image, tv.utils.flow_to_image, (ours,), (theirs,))
    assert record[0][0] == "tensor"


def test_flow_to_image_errors_and_zero_flow(vision, tv, lib, oracle):
    for flow in (np.zeros((2, 3, 3), np.float32), np.zeros((2, 3, 3), np.float64),
                 np.zeros((3, 3, 3), np.float32), np.zeros((1, 1, 2, 3, 3), np.float32),
                 np.zeros((2, 3), np.float32)):
        ours, theirs = _pair(lib, oracle, flow)
        _same(vision.utils.flow_to_image, tv.utils.flow_to_image, (ours,), (theirs,))


def test_colorwheel_and_palette(vision, tv):
    ours = vision.utils._make_colorwheel()
    theirs = tv.utils._make_colorwheel()
    assert ours.numpy().tolist() == theirs.numpy().tolist()
    assert [tuple(int(v) for v in c) for c in vision.utils._generate_color_palette(7)] == \
        [tuple(int(v) for v in c) for c in tv.utils._generate_color_palette(7)]
    assert vision.utils._make_ntuple(3, 2) == tv.utils._make_ntuple(3, 2)
    assert vision.utils._make_ntuple([1, 2], 2) == tv.utils._make_ntuple([1, 2], 2)
    assert sorted(vision.utils.__all__) == sorted(tv.utils.__all__)


def test_modules_load_pillow_only_when_used(lib_name):
    if lib_name == "torch":
        pytest.skip("checks tapegrad.vision's imports")
    import os
    import subprocess
    import sys

    import tapegrad

    src = os.path.dirname(os.path.dirname(tapegrad.__file__))
    code = ("import sys\n"
            "import tapegrad.vision.datasets, tapegrad.vision.io, tapegrad.vision.utils\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('PIL', 'scipy')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, env={**os.environ, "PYTHONPATH": src})
    assert out.returncode == 0, out.stderr
    assert out.stdout == "[]\n"
