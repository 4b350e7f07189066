"""The v2 transform classes (``transforms.v2.*``) against torchvision: reprs, and the samples they
return with the same seeds: detection samples (an image with its boxes, labels and masks in a
dict), images alone (TVTensor, plain tensor, PIL, float), keypoints, videos and batches.

As torchvision's test_transforms_v2.py: each transform moves every part of a sample together
(the same draw for the image and its boxes), passes through what it does not transform (ints,
strings, None, labels), transforms a plain tensor only when no image is there (the first one),
pickles, and raises torchvision's errors for bad arguments and inputs.
"""

from __future__ import annotations

import numpy as np
import pytest
import transform_helpers as H

SEEDS = range(4)


def _make(V, L):
    IM = V.InterpolationMode
    return {
        "random_resized_crop": lambda: V.RandomResizedCrop(13),
        "random_resized_crop_bicubic": lambda: V.RandomResizedCrop(
            (9, 12), scale=(0.3, 0.9), ratio=(0.5, 2.0), interpolation=IM.BICUBIC),
        "random_crop": lambda: V.RandomCrop(10, padding=2),
        "random_crop_pad_if_needed": lambda: V.RandomCrop((20, 30), pad_if_needed=True,
                                                          fill=3),
        "horizontal_flip": lambda: V.RandomHorizontalFlip(),
        "vertical_flip": lambda: V.RandomVerticalFlip(0.7),
        "rotation": lambda: V.RandomRotation(30),
        "rotation_expand": lambda: V.RandomRotation((-40, 10), "bilinear", expand=True, fill=3),
        "affine": lambda: V.RandomAffine(20, translate=(0.1, 0.2), scale=(0.8, 1.2),
                                         shear=(-5, 5, -3, 3)),
        "perspective": lambda: V.RandomPerspective(0.4, p=1.0),
        "elastic": lambda: V.ElasticTransform(20.0, 3.0),
        "zoom_out": lambda: V.RandomZoomOut(fill=5, p=1.0),
        "scale_jitter": lambda: V.ScaleJitter((20, 30)),
        "shortest_size": lambda: V.RandomShortestSize([10, 12, 14], max_size=25),
        "random_resize": lambda: V.RandomResize(8, 20),
        "resize": lambda: V.Resize(11),
        "center_crop": lambda: V.CenterCrop((10, 12)),
        "pad": lambda: V.Pad([1, 2], fill={"others": 4}),
        "color_jitter": lambda: V.ColorJitter(0.4, 0.4, 0.4, 0.1),
        "photometric_distort": lambda: V.RandomPhotometricDistort(p=0.8),
        "channel_permutation": lambda: V.RandomChannelPermutation(),
        "grayscale": lambda: V.RandomGrayscale(0.5),
        "gaussian_blur": lambda: V.GaussianBlur(5, (0.5, 2.0)),
        "invert": lambda: V.RandomInvert(),
        "posterize": lambda: V.RandomPosterize(3),
        "solarize": lambda: V.RandomSolarize(100),
        "autocontrast": lambda: V.RandomAutocontrast(),
        "equalize": lambda: V.RandomEqualize(),
        "sharpness": lambda: V.RandomAdjustSharpness(2.0),
        "erasing": lambda: V.RandomErasing(p=1.0, value="random"),
        "erasing_value": lambda: V.RandomErasing(p=1.0, value=[1, 2, 3]),
        "autoaugment": lambda: V.AutoAugment(),
        "randaugment": lambda: V.RandAugment(),
        "trivialaugment": lambda: V.TrivialAugmentWide(),
        "augmix": lambda: V.AugMix(),
        "jpeg": lambda: V.JPEG((30, 90)),
        "choice": lambda: V.RandomChoice([V.RandomHorizontalFlip(1.0), V.RandomVerticalFlip(1.0),
                                          V.CenterCrop(9)]),
        "order": lambda: V.RandomOrder([V.RandomHorizontalFlip(1.0), V.RandomCrop(12),
                                        V.ColorJitter(0.3)]),
        "apply": lambda: V.RandomApply([V.RandomCrop(9), V.RandomHorizontalFlip()], p=0.6),
        "to_dtype": lambda: V.Compose([V.ToImage(), V.ToDtype(L.float32, scale=True),
                                       V.Normalize([0.5] * 3, [0.2] * 3)]),
        "to_dtype_dict": lambda: V.ToDtype({"others": None, "Image": L.float64}),
        "convert_format": lambda: V.ConvertBoundingBoxFormat("CXCYWH"),
        "clamp": lambda: V.Compose([V.RandomAffine(30, (0.3, 0.3)), V.ClampBoundingBoxes(),
                                    V.ClampKeyPoints()]),
        "set_clamping_mode": lambda: V.Compose([V.SetClampingMode("hard"),
                                                V.RandomRotation(40)]),
        "identity": lambda: V.Identity(),
        "lambda": lambda: V.Lambda(lambda x: x * 2),
        "pure_tensor": lambda: V.ToPureTensor(),
        "gaussian_noise": lambda: V.Compose([V.ToDtype(L.float32, scale=True),
                                             V.GaussianNoise(0.1, 0.2)]),
    }


class _Names:
    InterpolationMode = type("IM", (), {"BICUBIC": 3})

    def __getattr__(self, name):
        return lambda *a, **k: None


NAMES = list(_make(_Names(), _Names()))
KINDS = ["detection", "image", "plain", "pil", "float", "keypoints"]
# integer-only color operations: not on float images
UINT8_ONLY = {"posterize", "equalize", "solarize", "autoaugment", "randaugment", "trivialaugment",
              "augmix", "jpeg"}
# operations whose float results come from convolutions or transcendental functions
APPROX = {"gaussian_blur", "sharpness", "elastic", "photometric_distort", "color_jitter"}


def sample(side, kind):
    L, T = side.L, side.T
    if kind == "detection":
        return (side.make("image"),
                {"boxes": side.make("boxes_XYXY"), "labels": L.tensor([1, 2, 3]),
                 "masks": side.make("mask"), "name": "x", "id": 3, "none": None})
    if kind == "image":
        return side.make("image")
    if kind == "plain":
        return side.make("u8")
    if kind == "pil":
        return side.make("pil")
    if kind == "float":
        return T.Image(L.tensor(H.IMG_F))
    if kind in ("keypoints", "keypoints@64"):
        suffix = kind[9:]
        return (side.make("image"), side.make("keypoints" + suffix),
                side.make("boxes_CXCYWHR" + suffix))
    raise ValueError(kind)


def _cases():
    for name in NAMES:
        for kind in KINDS:
            if name in UINT8_ONLY and kind == "float":
                continue
            yield pytest.param(name, kind, id=f"{name}-{kind}")


def _run(side, transform, kind, seed):
    side.seed(seed)
    try:
        return transform(sample(side, kind))
    except Exception as e:  # noqa: BLE001  (compared between the two libraries)
        return f"{type(e).__name__}: {H._norm(str(e))}"


@pytest.mark.parametrize("name,kind", list(_cases()))
def test_transform_matches_torchvision(name, kind, ours, theirs):
    t_ours, t_theirs = _make(ours.V2, ours.L)[name](), _make(theirs.V2, theirs.L)[name]()
    if name != "lambda":
        assert repr(t_ours) == repr(t_theirs)
    for seed in SEEDS:
        expected = _run(theirs, t_theirs, kind, seed)
        got = _run(ours, t_ours, kind, seed)
        if kind == "keypoints":  # rotated boxes: torch's accuracy, against the float64 result
            H.same_or_as_accurate(got, expected, _run(theirs, t_theirs, "keypoints@64", seed))
            continue
        approx = (name in APPROX and kind == "float") or name == "elastic"
        H.same(got, expected, approx=approx)


@pytest.mark.parametrize("name", ["mixup", "cutmix"])
def test_mixup_cutmix(name, ours, theirs):
    def run(side, seed):
        V2, L = side.V2, side.L
        t = {"mixup": V2.MixUp(num_classes=5), "cutmix": V2.CutMix(alpha=0.5, num_classes=5)}
        side.seed(seed)
        images = side.T.Image(L.tensor(H.IMG_B).float())
        return [t[name](images, L.tensor([0, 3])),
                t[name](L.tensor(H.IMG_B).double(), L.tensor([1, 4])), repr(t[name])]

    for seed in SEEDS:
        H.same(run(ours, seed), run(theirs, seed))
    for images, labels in (((2, 3, 4, 4), [[0, 1]]), ((2, 3, 4, 4), [0, 1, 2]),
                           ((3, 4, 4), [0, 1, 2])):
        H.same_error(lambda i=images, lb=labels: ours.V2.MixUp(num_classes=5)(
                         ours.L.zeros(i), ours.L.tensor(lb)),
                     lambda i=images, lb=labels: theirs.V2.MixUp(num_classes=5)(
                         theirs.L.zeros(i), theirs.L.tensor(lb)))
    # uint8 images: the in-place blend refuses the float factor, as torch's mul_ does
    H.same_error(lambda: ours.V2.CutMix(num_classes=5)(ours.L.tensor(H.IMG_B),
                                                       ours.L.tensor([0, 1])),
                 lambda: theirs.V2.CutMix(num_classes=5)(theirs.L.tensor(H.IMG_B),
                                                         theirs.L.tensor([0, 1])))
    H.same_error(lambda: ours.V2.MixUp(num_classes=5)(ours.L.tensor(H.IMG_B),
                                                      ours.L.tensor([0, 1])),
                 lambda: theirs.V2.MixUp(num_classes=5)(theirs.L.tensor(H.IMG_B),
                                                        theirs.L.tensor([0, 1])))


def test_sanitize_bounding_boxes(ours, theirs):
    def run(side):
        V2, L, T = side.V2, side.L, side.T
        boxes = T.BoundingBoxes([[1., 2., 10., 12.], [5., 5., 5., 9.], [3., 3., 3.5, 3.5],
                                 [-5., -5., -1., -1.], [0., 0., 30., 30.]], format="XYXY",
                                canvas_size=(17, 23))
        labels = L.tensor([1, 2, 3, 4, 5])
        img = side.make("image")
        return [V2.SanitizeBoundingBoxes()((img, {"boxes": boxes, "labels": labels})),
                V2.SanitizeBoundingBoxes(min_size=2.0, labels_getter=lambda s: s[1]["lbl"])(
                    (img, {"boxes": boxes, "lbl": labels})),
                V2.SanitizeBoundingBoxes(labels_getter=None)({"boxes": boxes, "x": 1}),
                V2.SanitizeBoundingBoxes()({"boxes": T.wrap(boxes[:0], like=boxes),
                                            "labels": labels[:0]}),
                repr(V2.SanitizeBoundingBoxes(min_area=3.0))]

    H.same(run(ours), run(theirs))


def test_iou_crop_then_sanitize(ours, theirs):
    """The detection tutorials' RandomIoUCrop + SanitizeBoundingBoxes: the crop draws until a
    box overlaps enough (ops.box_iou), then the boxes left outside go with their labels."""
    import importlib

    try:
        importlib.import_module(ours.tv.__name__ + ".ops.boxes")
    except ImportError:
        pytest.skip("RandomIoUCrop measures the overlaps with vision.ops.box_iou, which the "
                    "models' package (vision.ops) provides")

    def run(side, seed):
        V2 = side.V2
        t = V2.Compose([V2.RandomIoUCrop(), V2.SanitizeBoundingBoxes()])
        side.seed(seed)
        s = (side.make("image"), {"boxes": side.make("boxes_XYXY"),
                                  "labels": side.L.tensor([1, 2, 3]), "masks": side.make("mask")})
        return t(s)

    assert repr(ours.V2.RandomIoUCrop()) == repr(theirs.V2.RandomIoUCrop())
    for seed in range(12):
        H.same(run(ours, seed), run(theirs, seed))


def test_pure_tensor_heuristic(ours, theirs):
    """A plain tensor is transformed only when the sample holds no image, video or PIL image,
    and only the first one."""
    def run(side):
        V2, L = side.V2, side.L
        flip = V2.RandomHorizontalFlip(1.0)
        u8 = side.make("u8")
        return [flip((u8, u8, side.make("boxes_XYXY"))), flip((side.make("image"), u8)),
                flip({"a": u8, "b": side.make("mask")}), flip([side.make("pil"), u8]),
                flip((1, "a", None, 2.5, u8)), flip(L.tensor(7))]

    H.same(run(ours), run(theirs))


@pytest.mark.parametrize("name", ["random_crop", "color_jitter", "autoaugment", "rotation",
                                  "erasing", "compose"])
def test_pickle(name, ours, theirs, roundtrip):
    def make(side):
        if name == "compose":
            V2 = side.V2
            return V2.Compose([V2.RandomCrop(10), V2.RandomHorizontalFlip()])
        return _make(side.V2, side.L)[name]()

    t_ours, t_theirs = roundtrip(make(ours)), roundtrip(make(theirs))
    assert repr(t_ours) == repr(t_theirs)
    for seed in SEEDS:
        expected = _run(theirs, t_theirs, "detection", seed)  # (torch first: SharedDraws)
        H.same(_run(ours, t_ours, "detection", seed), expected)


def test_misc_transforms(ours, theirs):
    rng = np.random.default_rng(4)
    matrix = rng.random((12, 12)).astype(np.float32)
    mean = rng.random(12).astype(np.float32)

    def run(side):
        V2, L, T = side.V2, side.L, side.T
        lt = V2.LinearTransformation(L.tensor(matrix), L.tensor(mean))
        video = side.make("video")
        return [lt(T.Image(L.tensor(rng_image()))),
                V2.UniformTemporalSubsample(1)(video), repr(V2.UniformTemporalSubsample(3)),
                V2.ToImage()(side.make("pil")), V2.PILToTensor()(side.make("pil")),
                V2.ToPILImage()(side.make("image")), V2.ToPureTensor()(side.make("image")),
                V2.ConvertImageDtype(L.float64)(side.make("image")),
                V2.Lambda(lambda x: x + 1, L.Tensor)((side.make("u8"), 3)),
                V2.Grayscale(3)(side.make("image")), V2.RGB()(side.make("gray")),
                repr(V2.Lambda(lambda x: x, int)).split(" at ")[0],
                repr(V2.ToDtype({"others": None, "Image": L.float64}, scale=True))]

    H.same(run(ours), run(theirs), approx=True)


def rng_image():
    return np.random.default_rng(8).random((3, 2, 2)).astype(np.float32)


def test_five_ten_crop_warn_and_pass(ours, theirs):
    def run(side):
        V2 = side.V2
        return [V2.FiveCrop(7)(side.make("image")), V2.TenCrop(6)(side.make("u8")),
                repr(V2.TenCrop((5, 6), vertical_flip=True))]

    H.same(run(ours), run(theirs))


ERRORS = [
    lambda V, L, T: V.RandomCrop(30)(T.Image(L.zeros(3, 4, 4))),
    lambda V, L, T: V.RandomResizedCrop(10, scale=(0.9, 0.1)),
    lambda V, L, T: V.RandomRotation(-10),
    lambda V, L, T: V.RandomAffine(10, translate=[1.5, 0.1]),
    lambda V, L, T: V.RandomAffine(10, shear=[1, 2, 3]),
    lambda V, L, T: V.ColorJitter(hue=0.7),
    lambda V, L, T: V.GaussianBlur(4),
    lambda V, L, T: V.RandomErasing(value="x"),
    lambda V, L, T: V.RandomErasing(scale=(0.5, 0.1)),
    lambda V, L, T: V.RandomZoomOut(side_range=(0.5, 2.0)),
    lambda V, L, T: V.RandomIoUCrop(sampler_options=[2.0]),
    lambda V, L, T: V.ScaleJitter((10, 10), scale_range=(0.5,)),
    lambda V, L, T: V.Resize(None),
    lambda V, L, T: V.Resize("x"),
    lambda V, L, T: V.Pad([1, 2, 3]),
    lambda V, L, T: V.Pad(1, fill={"Image": "x"}),
    lambda V, L, T: V.ToDtype({"Image": L.float32})(
        (T.Image(L.zeros(3, 2, 2)), T.Video(L.zeros(1, 3, 2, 2)))),
    lambda V, L, T: V.ToDtype(L.float32, scale=True)(T.BoundingBoxes(
        L.zeros(1, 4), format="XYXY", canvas_size=(2, 2))),
    lambda V, L, T: V.Normalize([0.5], [0.5])(T.Image(L.zeros(3, 4, 4, dtype=L.uint8))),
    lambda V, L, T: V.RandomChoice([V.RandomCrop(2)], p=[0.5, 0.5]),
    lambda V, L, T: V.RandomApply([V.RandomCrop(2)], p=2.0),
    lambda V, L, T: V.RandomOrder([V.RandomCrop(2)])(1),
    lambda V, L, T: V.Compose(V.RandomCrop(2)),
    lambda V, L, T: V.Compose([]),
    lambda V, L, T: V.MixUp(alpha=-1.0),
    lambda V, L, T: V.CutMix(num_classes=0),
    lambda V, L, T: V.JPEG(0),
    lambda V, L, T: V.JPEG((50, 10)),
    lambda V, L, T: V.AutoAugment()(T.Image(L.zeros(3, 8, 8)), T.Image(L.zeros(3, 8, 8))),
    lambda V, L, T: V.RandomHorizontalFlip()(T.Image(L.zeros(3, 4, 4)),
                                              T.Video(L.zeros(1, 3, 5, 5))),
    lambda V, L, T: V.RandomCrop(2)((T.Image(L.zeros(3, 4, 4)), T.Image(L.zeros(3, 5, 5)))),
    lambda V, L, T: V.SanitizeBoundingBoxes()(T.Image(L.zeros(3, 4, 4))),
    lambda V, L, T: V.SanitizeBoundingBoxes(labels_getter="x"),
    lambda V, L, T: V.SanitizeBoundingBoxes()({"boxes": T.BoundingBoxes(
        L.zeros(2, 4), format="XYXY", canvas_size=(3, 3)), "labels": L.zeros(3)}),
    lambda V, L, T: V.ConvertBoundingBoxFormat("ABCD"),
    lambda V, L, T: V.LinearTransformation(L.zeros(3, 4), L.zeros(3)),
    lambda V, L, T: V.UniformTemporalSubsample(0)(T.Video(L.zeros(2, 3, 4, 4))),
    lambda V, L, T: V.GaussianNoise(sigma=-1.0)(T.Image(L.zeros(3, 4, 4))),
    lambda V, L, T: V.ElasticTransform("x"),
    lambda V, L, T: V.RandomPerspective(distortion_scale=2.0),
    lambda V, L, T: V.Lambda(3),
    lambda V, L, T: V.ToPILImage()(T.BoundingBoxes(
        L.zeros(1, 4), format="XYXY", canvas_size=(2, 2))),
]


@pytest.mark.parametrize("case", ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_errors(case, ours, theirs):
    def run(side):
        side.seed(0)
        return case(side.V2, side.L, side.T)

    H.same_error(lambda: run(ours), lambda: run(theirs))
