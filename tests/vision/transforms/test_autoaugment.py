"""``transforms.autoaugment`` (AutoAugment with its three policies, RandAugment,
TrivialAugmentWide, AugMix) and the weights' presets (``transforms._presets``) against
torchvision: reprs, the augmentation spaces (magnitude bins), the sub-policies drawn per seed
and the augmented images of uint8, batched, one-channel and PIL inputs.
"""

from __future__ import annotations

import numpy as np
import pytest
import transform_helpers as H

SEEDS = range(8)


def _make(T, L):
    P = T.AutoAugmentPolicy
    IM = T.InterpolationMode
    return {
        "autoaugment_imagenet": lambda: T.AutoAugment(),
        "autoaugment_cifar10": lambda: T.AutoAugment(P.CIFAR10, IM.BILINEAR),
        "autoaugment_svhn_fill": lambda: T.AutoAugment(P.SVHN, fill=[1, 2, 3]),
        "randaugment": lambda: T.RandAugment(),
        "randaugment_strong": lambda: T.RandAugment(3, 15, 21, IM.BILINEAR, fill=7),
        "trivialaugment": lambda: T.TrivialAugmentWide(),
        "trivialaugment_bins": lambda: T.TrivialAugmentWide(11, IM.BILINEAR),
        "augmix": lambda: T.AugMix(),
        "augmix_no_all_ops": lambda: T.AugMix(2, 2, 1, 0.5, all_ops=False),
    }


NAMES = ["autoaugment_imagenet", "autoaugment_cifar10", "autoaugment_svhn_fill", "randaugment",
         "randaugment_strong", "trivialaugment", "trivialaugment_bins", "augmix",
         "augmix_no_all_ops"]
FILLED = {"autoaugment_svhn_fill"}  # a fill of three values: three-channel images only


@pytest.mark.parametrize("kind", ["u8", "batch", "pil", "gray"])
@pytest.mark.parametrize("name", NAMES)
def test_autoaugment_matches_torchvision(name, kind, ours, theirs):
    if name in FILLED and kind == "gray":
        pytest.skip("three fill values for one channel")
    t_ours, t_theirs = _make(ours.TR, ours.L)[name](), _make(theirs.TR, theirs.L)[name]()
    assert repr(t_ours) == repr(t_theirs)
    for seed in SEEDS:
        theirs.seed(seed)
        expected = t_theirs(theirs.make(kind))
        ours.seed(seed)
        H.same(t_ours(ours.make(kind)), expected)


def test_policies_and_spaces(ours, theirs):
    def run(side):
        T = side.TR
        out = []
        for policy in T.AutoAugmentPolicy:
            aa = T.AutoAugment(policy)
            out.append((str(policy), aa.policies))
            space = aa._augmentation_space(10, (17, 23))
            out.append({k: (_plain(m), s) for k, (m, s) in space.items()})
        for space in (T.RandAugment()._augmentation_space(31, (17, 23)),
                      T.TrivialAugmentWide()._augmentation_space(31)):
            out.append({k: (_plain(m), s) for k, (m, s) in space.items()})
        space = T.AugMix()._augmentation_space(10, (17, 23))
        out.append({k: (_plain(m), s) for k, (m, s) in space.items()})
        return out

    got, expected = run(ours), run(theirs)
    assert len(got) == len(expected)
    for a, b in zip(got, expected, strict=True):
        if isinstance(b, dict):
            assert list(a) == list(b)
            for k in b:
                np.testing.assert_array_equal(a[k][0], b[k][0])
                assert a[k][1] == b[k][1]
        else:
            assert a == b


def test_get_params(ours, theirs):
    def run(side):
        out = []
        for seed in SEEDS:
            side.seed(seed)
            i, probs, signs = side.TR.AutoAugment.get_params(25)
            out.append((i, _plain(probs).tolist(), _plain(signs).tolist()))
        return out

    assert run(ours) == run(theirs)


def _plain(x):
    return np.asarray(x.detach().numpy()) if hasattr(x, "detach") else x


ERRORS = [
    lambda T, L: T.AutoAugment("imagenet"),
    lambda T, L: T.AutoAugment()(L.zeros(3, 8, 8)),
    lambda T, L: T.AugMix(severity=11),
    lambda T, L: T.AugMix()(L.zeros(3, 8, 8, dtype=L.uint8)[0]),
    lambda T, L: T.RandAugment()([1]),
    lambda T, L: T.TrivialAugmentWide()(L.zeros(8, 8, dtype=L.uint8)),
]


@pytest.mark.parametrize("case", ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_errors(case, ours, theirs):
    def run(side, seed):
        side.seed(seed)  # (the draws decide which operation meets the bad input)
        return case(side.TR, side.L)

    for seed in SEEDS:
        H.same_error(lambda s=seed: run(ours, s), lambda s=seed: run(theirs, s))


# --------------------------------------------------------------------------------------------
# the presets of the pretrained weights
# --------------------------------------------------------------------------------------------


def _presets(side):
    P = side.sub("transforms._presets")
    IM = side.TR.InterpolationMode
    return {
        "classification": P.ImageClassification(crop_size=13, resize_size=15),
        "classification_bicubic": P.ImageClassification(
            crop_size=9, resize_size=11, mean=(0.5, 0.5, 0.5), std=(0.2, 0.2, 0.2),
            interpolation=IM.BICUBIC, antialias=False),
        "detection": P.ObjectDetection(),
        "segmentation": P.SemanticSegmentation(resize_size=12),
        "segmentation_none": P.SemanticSegmentation(resize_size=None),
        "video": P.VideoClassification(crop_size=(8, 9), resize_size=(12, 14)),
        "flow": P.OpticalFlow(),
    }


PRESETS = ["classification", "classification_bicubic", "detection", "segmentation",
           "segmentation_none", "video", "flow"]


@pytest.mark.parametrize("kind", ["u8", "batch", "pil", "float"])
@pytest.mark.parametrize("name", PRESETS)
def test_presets(name, kind, ours, theirs):
    p_ours, p_theirs = _presets(ours)[name], _presets(theirs)[name]
    assert repr(p_ours) == repr(p_theirs)
    assert p_ours.describe() == p_theirs.describe()
    if name == "video":
        if kind == "pil":
            pytest.skip("videos are tensors")
        args_ours = (ours.make("batch").unsqueeze(0),)
        args_theirs = (theirs.make("batch").unsqueeze(0),)
    elif name == "flow":
        args_ours = (ours.make(kind), ours.make(kind))
        args_theirs = (theirs.make(kind), theirs.make(kind))
    else:
        args_ours, args_theirs = (ours.make(kind),), (theirs.make(kind),)
    H.same(p_ours(*args_ours), p_theirs(*args_theirs), approx=kind == "float")
