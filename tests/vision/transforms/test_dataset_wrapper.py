"""``datasets.wrap_dataset_for_transforms_v2`` (``tv_tensors._dataset_wrapper``) against
torchvision's: the wrapped class, the samples through the dataset's own transforms (run after
the wrapping), the attributes read through, pickling, and the errors."""

from __future__ import annotations

import os
import pickle

import numpy as np
import pytest
import transform_helpers as H


def _tree(root):
    """root/<class>/<n>.png: RGB images of a few sizes in two classes."""
    from PIL import Image

    rng = np.random.default_rng(0)
    for i, (cls, size) in enumerate([("cat", (9, 7)), ("cat", (12, 10)), ("dog", (8, 8)),
                                     ("dog", (15, 11))]):
        os.makedirs(os.path.join(root, cls), exist_ok=True)
        arr = rng.integers(0, 256, (size[1], size[0], 3), dtype=np.uint8)
        Image.fromarray(arr).save(os.path.join(root, cls, f"{i}.png"))


def _wrapped(side, root, **kwargs):
    V2 = side.V2
    transform = V2.Compose([V2.ToImage(), V2.RandomResizedCrop(6), V2.RandomHorizontalFlip(),
                            V2.ToDtype(side.L.float32, scale=True)])
    dataset = side.sub("datasets").ImageFolder(str(root), transform=transform, **kwargs)
    return side.sub("datasets").wrap_dataset_for_transforms_v2(dataset)


def test_image_folder(ours, theirs, tmp_path):
    _tree(tmp_path)
    got, expected = _wrapped(ours, tmp_path), _wrapped(theirs, tmp_path)
    assert type(got).__name__ == type(expected).__name__ == "WrappedImageFolder"
    assert isinstance(got, ours.sub("datasets").ImageFolder)
    assert len(got) == len(expected) == 4
    assert got.classes == expected.classes and got.class_to_idx == expected.class_to_idx
    assert got.transform is not None and got._dataset.transform is None
    for seed in range(3):
        for i in range(len(got)):
            theirs.seed(seed)
            b = expected[i]
            ours.seed(seed)
            H.same(got[i], b)


def test_pickle(ours, theirs, tmp_path):
    _tree(tmp_path)
    got = pickle.loads(pickle.dumps(_wrapped(ours, tmp_path)))
    expected = pickle.loads(pickle.dumps(_wrapped(theirs, tmp_path)))
    assert type(got).__name__ == type(expected).__name__
    assert got.transform is not None and got._dataset.transform is None
    theirs.seed(0)
    b = expected[1]
    ours.seed(0)
    H.same(got[1], b)


def test_errors(ours, theirs, tmp_path):
    _tree(tmp_path)

    def make(side, case):
        datasets = side.sub("datasets")

        class Custom(datasets.VisionDataset):
            pass

        wrap = datasets.wrap_dataset_for_transforms_v2
        folder = datasets.ImageFolder(str(tmp_path))
        if case == "not a dataset":
            return wrap([1, 2])
        if case == "custom":
            return wrap(Custom(str(tmp_path)))
        if case == "no wrapper":
            return wrap(datasets.FakeData(size=2))
        if case == "target keys":
            return wrap(folder, target_keys={"boxes"})
        if case == "bad target keys":
            return wrap(folder, target_keys=3)
        return wrap(folder, target_keys=[1])

    for case in ("not a dataset", "custom", "no wrapper", "target keys", "bad target keys",
                 "keys not strings"):
        H.same_error(lambda c=case: make(ours, c), lambda c=case: make(theirs, c))


@pytest.mark.parametrize("name", ["MNIST", "CIFAR10", "DatasetFolder", "SVHN"])
def test_registered(name, ours, theirs):
    """Which of the package's datasets have a wrapper (classification ones pass through)."""
    if ours.tv is theirs.tv:  # (--lib torch: the oracle's own registry)
        return
    from tapegrad.vision.tv_tensors import _dataset_wrapper as W

    ours_cls = getattr(ours.sub("datasets"), name)
    theirs_module = theirs.sub("tv_tensors._dataset_wrapper")
    theirs_cls = getattr(theirs.sub("datasets"), name)
    assert (W._factory_for(ours_cls) is not None) == (
        theirs_cls in theirs_module.WRAPPER_FACTORIES)


def test_knows_every_dataset_of_the_package(ours, theirs):
    """The wrapper takes the package's datasets from their own modules (the package's
    ``__init__`` imports the wrapper): its list is the package's."""
    if ours.tv is theirs.tv:
        return
    from tapegrad.vision.tv_tensors import _dataset_wrapper as W

    assert sorted(W._DATASETS) == sorted(ours.sub("datasets").__all__)
    assert all(getattr(ours.sub("datasets"), name) is cls for name, cls in W._DATASETS.items())
