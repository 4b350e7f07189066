"""The v1 transform classes (``transforms.*``) against torchvision: their reprs, and their
outputs with the same seeds (the same draws from torch's generator and Python's ``random``, so
the same crops, angles and jitter factors) on uint8, batched, float and PIL images.

As torchvision's test_transforms.py: every random transform with its default and non-default
arguments, the containers (Compose, RandomApply, RandomChoice, RandomOrder), the conversions
(ToTensor, PILToTensor, ToPILImage, ConvertImageDtype), LinearTransformation, Lambda and the
errors of bad construction arguments.
"""

from __future__ import annotations

import numpy as np
import pytest
import transform_helpers as H

SEEDS = [0, 1, 2, 3]


def _make(T, L):
    IM = T.InterpolationMode
    return {
        "random_resized_crop": lambda: T.RandomResizedCrop(13),
        "random_resized_crop_bicubic": lambda: T.RandomResizedCrop(
            (9, 12), scale=(0.3, 0.9), ratio=(0.5, 2.0), interpolation=IM.BICUBIC),
        "random_crop": lambda: T.RandomCrop(10, padding=2),
        "random_crop_pad_if_needed": lambda: T.RandomCrop(
            (20, 30), pad_if_needed=True, padding_mode="reflect"),
        "random_crop_fill": lambda: T.RandomCrop(12, padding=[1, 2, 3, 4], fill=9),
        "hflip": lambda: T.RandomHorizontalFlip(),
        "vflip": lambda: T.RandomVerticalFlip(0.7),
        "rotation": lambda: T.RandomRotation(30),
        "rotation_expand": lambda: T.RandomRotation((-40, 10), IM.BILINEAR, expand=True, fill=3),
        "affine": lambda: T.RandomAffine(20, translate=(0.1, 0.2), scale=(0.8, 1.2),
                                         shear=(-5, 5, -3, 3)),
        "affine_shear_one": lambda: T.RandomAffine(0, shear=10, interpolation=IM.BILINEAR),
        "perspective": lambda: T.RandomPerspective(0.4, p=1.0),
        "perspective_bilinear": lambda: T.RandomPerspective(0.2, p=0.6, fill=[4.0]),
        "color_jitter": lambda: T.ColorJitter(0.4, 0.4, 0.4, 0.1),
        "color_jitter_ranges": lambda: T.ColorJitter((0.8, 1.5), 0.0, (0.1, 2.0), (-0.3, 0.2)),
        "random_grayscale": lambda: T.RandomGrayscale(0.5),
        "grayscale": lambda: T.Grayscale(3),
        "gaussian_blur": lambda: T.GaussianBlur(5, (0.5, 2.0)),
        "gaussian_blur_rect": lambda: T.GaussianBlur((3, 7)),
        "invert": lambda: T.RandomInvert(),
        "posterize": lambda: T.RandomPosterize(3),
        "solarize": lambda: T.RandomSolarize(128),
        "sharpness": lambda: T.RandomAdjustSharpness(2.0),
        "autocontrast": lambda: T.RandomAutocontrast(),
        "equalize": lambda: T.RandomEqualize(),
        "elastic": lambda: T.ElasticTransform(20.0, 3.0),
        "elastic_nearest": lambda: T.ElasticTransform((10.0, 30.0), (2.0, 4.0), IM.NEAREST,
                                                      fill=5.0),
        "resize": lambda: T.Resize(11),
        "resize_max_size": lambda: T.Resize(12, max_size=15),
        "center_crop": lambda: T.CenterCrop((10, 12)),
        "pad": lambda: T.Pad([1, 2], fill=4, padding_mode="constant"),
        "pad_symmetric": lambda: T.Pad(2, padding_mode="symmetric"),
        "five_crop": lambda: T.FiveCrop(7),
        "ten_crop": lambda: T.TenCrop((6, 8), vertical_flip=True),
        "random_apply": lambda: T.RandomApply([T.RandomCrop(9), T.RandomHorizontalFlip()], p=0.6),
        "random_choice": lambda: T.RandomChoice(
            [T.RandomHorizontalFlip(1.0), T.RandomVerticalFlip(1.0), T.CenterCrop(9)],
            p=[0.2, 0.5, 0.3]),
        "random_order": lambda: T.RandomOrder(
            [T.RandomHorizontalFlip(1.0), T.RandomCrop(12), T.ColorJitter(0.3)]),
        "compose": lambda: T.Compose([T.RandomCrop(12, padding=1), T.RandomHorizontalFlip(),
                                      T.ColorJitter(brightness=0.2)]),
    }


UINT8_ONLY = {"posterize", "equalize", "solarize"}  # the rest also take float images
RGB_ONLY = {"color_jitter", "color_jitter_ranges", "grayscale", "random_grayscale"}


class _Names:
    """A stand-in for the transforms module: lists the case names without a library."""

    InterpolationMode = type("IM", (), {"BILINEAR": 2, "BICUBIC": 3, "NEAREST": 0})

    def __getattr__(self, name):
        return lambda *a, **k: None


def _cases():
    for name in _make(_Names(), None):
        for kind in ("u8", "batch", "float", "pil", "gray"):
            if name in UINT8_ONLY and kind == "float":
                continue
            if name in RGB_ONLY and kind == "gray":
                continue
            yield pytest.param(name, kind, id=f"{name}-{kind}")


@pytest.mark.parametrize("name,kind", list(_cases()))
def test_random_transform_matches_torchvision(name, kind, ours, theirs):
    t_ours, t_theirs = _make(ours.TR, ours.L)[name](), _make(theirs.TR, theirs.L)[name]()
    assert repr(t_ours) == repr(t_theirs)
    for seed in SEEDS:
        theirs.seed(seed)
        expected = t_theirs(theirs.make(kind))
        ours.seed(seed)
        got = t_ours(ours.make(kind))
        H.same(got, expected, approx=kind == "float")


def test_to_tensor_normalize_pipeline(ours, theirs):
    def pipeline(T):
        return T.Compose([T.RandomCrop(32, padding=4), T.RandomHorizontalFlip(), T.ToTensor(),
                          T.Normalize((0.4914, 0.4822, 0.4465), (0.247, 0.243, 0.261))])

    img = np.random.default_rng(3).integers(0, 256, (32, 32, 3), dtype=np.uint8)
    from PIL import Image

    t_ours, t_theirs = pipeline(ours.TR), pipeline(theirs.TR)
    assert repr(t_ours) == repr(t_theirs)
    for seed in range(6):
        theirs.seed(seed)
        expected = t_theirs(Image.fromarray(img))
        ours.seed(seed)
        H.same(t_ours(Image.fromarray(img)), expected)


def test_conversions(ours, theirs):
    from PIL import Image

    def run(side):
        T, L = side.TR, side.L
        pil = Image.fromarray(H.PIL_RGB)
        out = [T.ToTensor()(pil), T.PILToTensor()(pil), T.ToTensor()(H.PIL_L),
               T.ToPILImage()(L.tensor(H.IMG_U8)), T.ToPILImage("RGB")(L.tensor(H.IMG_F)),
               T.ToPILImage()(H.PIL_RGB),
               T.ConvertImageDtype(L.float64)(L.tensor(H.IMG_U8)),
               T.ConvertImageDtype(L.uint8)(L.tensor(H.IMG_F)),
               T.Normalize([0.5, 0.4, 0.3], [0.2, 0.2, 0.3])(L.tensor(H.IMG_F)),
               T.RandomErasing(p=1.0, value="random")]
        reprs = [repr(T.ToTensor()), repr(T.PILToTensor()), repr(T.ToPILImage("L")),
                 repr(T.ConvertImageDtype(L.float16)), repr(T.Normalize([0.5], [0.5], True)),
                 repr(out.pop())]
        return out, reprs

    got, got_reprs = run(ours)
    expected, expected_reprs = run(theirs)
    H.same(got, expected)
    assert got_reprs == expected_reprs


@pytest.mark.parametrize("kind", ["u8", "float", "batch"])
def test_random_erasing(kind, ours, theirs):
    def make(T):
        return [T.RandomErasing(p=1.0), T.RandomErasing(p=1.0, value="random"),
                T.RandomErasing(p=0.7, scale=(0.1, 0.2), ratio=(0.5, 1.5), value=[1, 2, 3]),
                T.RandomErasing(p=1.0, value=5, inplace=True)]

    for t_ours, t_theirs in zip(make(ours.TR), make(theirs.TR), strict=True):
        assert repr(t_ours) == repr(t_theirs)
        for seed in SEEDS:
            theirs.seed(seed)
            expected = t_theirs(theirs.make(kind))
            ours.seed(seed)
            H.same(t_ours(ours.make(kind)), expected)


def test_linear_transformation_and_lambda(ours, theirs):
    rng = np.random.default_rng(4)
    matrix = rng.random((12, 12)).astype(np.float32)
    mean = rng.random(12).astype(np.float32)
    x = rng.random((3, 2, 2)).astype(np.float32)

    def run(side):
        L, T = side.L, side.TR
        lt = T.LinearTransformation(L.tensor(matrix), L.tensor(mean))
        lam = T.Lambda(lambda t: t * 2)
        return lt(L.tensor(x)), lam(L.tensor(x)), repr(lt).split("\n")[0], repr(lam)

    got, expected = run(ours), run(theirs)
    H.same(got[0], expected[0], approx=True)
    H.same(got[1], expected[1])
    assert got[2] == expected[2]
    assert got[3].split(" at ")[0] == expected[3].split(" at ")[0]


@pytest.mark.parametrize("kind", ["u8", "pil"])
def test_transforms_are_modules(kind, ours, theirs):
    """The random transforms are nn.Modules: scriptable-style containers (nn.Sequential) run
    them in order and draw the same values."""

    def make(side):
        T = side.TR
        return side.L.nn.Sequential(T.RandomCrop(12), T.RandomHorizontalFlip(),
                                    T.ColorJitter(0.2, 0.2))

    t_ours, t_theirs = make(ours), make(theirs)
    assert repr(t_ours) == repr(t_theirs)
    for seed in SEEDS:
        theirs.seed(seed)
        expected = t_theirs(theirs.make(kind))
        ours.seed(seed)
        H.same(t_ours(ours.make(kind)), expected)


def test_get_params(ours, theirs):
    def run(side, seed):
        T = side.TR
        img = side.make("u8")
        side.seed(seed)
        return [T.RandomCrop.get_params(img, (9, 10)),
                T.RandomResizedCrop.get_params(img, [0.08, 1.0], [3 / 4, 4 / 3]),
                T.RandomRotation.get_params([-30.0, 30.0]),
                T.RandomAffine.get_params([-10.0, 10.0], [0.1, 0.1], [0.9, 1.1],
                                          [-5.0, 5.0, -5.0, 5.0], [23, 17]),
                T.RandomPerspective.get_params(23, 17, 0.5),
                T.ColorJitter.get_params([0.5, 1.5], None, [0.8, 1.2], [-0.1, 0.1]),
                T.GaussianBlur.get_params(0.1, 2.0),
                T.RandomErasing.get_params(img.float(), (0.02, 0.33), (0.3, 3.3), [0.0]),
                T.ElasticTransform.get_params([50.0, 50.0], [2.0, 2.0], [17, 23])]

    for seed in SEEDS:
        # torch first: under torch's scalar kernels each draw of ours is checked against
        # torch's there (torch_values.py) and goes on as torch's
        expected = run(theirs, seed)
        got = run(ours, seed)
        assert len(got) == len(expected)
        for i, (a, b) in enumerate(zip(got, expected, strict=True)):
            # the elastic displacement is blurred by a convolution: float32 tolerances
            H.same(_plain(a), _plain(b), check_types=False, approx=i == 8)


def _plain(x):
    """Tensors as arrays and tuples as lists, to compare draws of either library."""
    if hasattr(x, "detach"):
        return np.asarray(x.detach().numpy())
    if isinstance(x, (tuple, list)):
        return [_plain(v) for v in x]
    return x


ERRORS = [
    lambda T, L: T.RandomCrop(10)(L.zeros(3, 4, 4)),
    lambda T, L: T.RandomCrop([1, 2, 3]),
    lambda T, L: T.RandomResizedCrop(10, scale=(0.9, 0.1)),
    lambda T, L: T.RandomResizedCrop(10, interpolation=2),
    lambda T, L: T.RandomRotation(-10),
    lambda T, L: T.RandomRotation([10]),
    lambda T, L: T.RandomRotation(10, center=[1]),
    lambda T, L: T.RandomAffine(10, translate=[0.1]),
    lambda T, L: T.RandomAffine(10, translate=[1.5, 0.1]),
    lambda T, L: T.RandomAffine(10, scale=[-1.0, 1.0]),
    lambda T, L: T.RandomAffine(10, shear=[1, 2, 3]),
    lambda T, L: T.RandomAffine(10, fill="x"),
    lambda T, L: T.ColorJitter(brightness=-1),
    lambda T, L: T.ColorJitter(hue=0.7),
    lambda T, L: T.ColorJitter(contrast=[1.0]),
    lambda T, L: T.ColorJitter(saturation="x"),
    lambda T, L: T.GaussianBlur(4),
    lambda T, L: T.GaussianBlur(3, sigma=(2.0, 1.0)),
    lambda T, L: T.GaussianBlur(3, sigma=-1.0),
    lambda T, L: T.GaussianBlur(3, sigma="x"),
    lambda T, L: T.RandomErasing(value="x"),
    lambda T, L: T.RandomErasing(scale=(0.5, 0.1)),
    lambda T, L: T.RandomErasing(p=2.0),
    lambda T, L: T.RandomErasing(scale=[-1.0, 0.5]),
    lambda T, L: T.RandomErasing(value=[1, 2])(L.zeros(3, 8, 8)),
    lambda T, L: T.Pad("x"),
    lambda T, L: T.Pad([1, 2, 3]),
    lambda T, L: T.Pad(1, fill=[1, 2, 3], padding_mode="wrap"),
    lambda T, L: T.Resize("x"),
    lambda T, L: T.Resize([1, 2, 3]),
    lambda T, L: T.Normalize([0.5], [0.5])(L.zeros(3, 4, 4, dtype=L.uint8)),
    lambda T, L: T.Grayscale(2)(L.zeros(3, 4, 4)),
    lambda T, L: T.RandomApply([T.RandomCrop(2)], p=[0.5]),
    lambda T, L: T.RandomChoice([T.RandomCrop(2)], p=[0.5, 0.5]),
    lambda T, L: T.RandomChoice([T.RandomCrop(2)], p="x"),
    lambda T, L: T.RandomOrder([1])(L.zeros(1)),
    lambda T, L: T.LinearTransformation(L.zeros(3, 4), L.zeros(3)),
    lambda T, L: T.LinearTransformation(L.zeros(3, 3), L.zeros(4)),
    lambda T, L: T.LinearTransformation(L.zeros(3, 3), L.zeros(3))(L.zeros(2, 2)),
    lambda T, L: T.LinearTransformation(L.zeros(3, 3), L.zeros(3, dtype=L.float64)),
    lambda T, L: T.Lambda(3),
    lambda T, L: T.ElasticTransform("x"),
    lambda T, L: T.ElasticTransform(1.0, "x"),
    lambda T, L: T.ElasticTransform(1.0, 1.0, interpolation=2),
    lambda T, L: T.ElasticTransform(1.0, 1.0, fill="x"),
    lambda T, L: T.RandomPerspective(interpolation=5),
    lambda T, L: T.FiveCrop([1, 2, 3]),
    lambda T, L: T.TenCrop([5, 5])(L.zeros(3, 4, 4)),
    lambda T, L: T.ToPILImage()(L.zeros(4, 4, 4, 4)),
    lambda T, L: T.ConvertImageDtype(L.int32)(L.zeros(3, 4, 4)),
]


@pytest.mark.parametrize("case", ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_errors(case, ours, theirs):
    H.same_error(lambda: case(ours.TR, ours.L), lambda: case(theirs.TR, theirs.L))
