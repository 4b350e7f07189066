"""The MNIST family against torchvision on generated idx files: lengths, reprs, attributes, every
item (PIL image mode and pixels, target type and value), errors, the legacy processed files and
the idx reader."""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest
from vision_dataset_files import (
    assert_same_dataset,
    idx_bytes,
    plain,
    write_idx,
    write_mnist_raw,
)


class Twice:
    """A target transform with a repr of two lines (the dataset repr indents the second)."""

    def __call__(self, target):
        return (target, target)

    def __repr__(self):
        return "Twice(\n    copies=2\n)"


class Size:
    def __call__(self, img):
        return img.size

    def __repr__(self):
        return "Size()"


class _Sized:
    size = (4, 5)


ATTRS = ("data", "targets", "classes", "class_to_idx", "train", "raw_folder",
         "processed_folder", "root", "transform", "target_transform")


def _raise(fn, *args, **kwargs):
    """``(type name, message)`` of what ``fn(*args, **kwargs)`` raises, None if nothing."""
    try:
        fn(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001  (compared between the two libraries)
        return type(exc).__name__, str(exc)
    return None


@pytest.mark.parametrize("name", ["MNIST", "FashionMNIST", "KMNIST"])
@pytest.mark.parametrize("train", [True, False])
def test_mnist_like_items(vision, tv, tmp_path, name, train):
    write_mnist_raw(tmp_path / name / "raw", seed=len(name))
    theirs = getattr(tv.datasets, name)(str(tmp_path), train=train)
    ours = getattr(vision.datasets, name)(str(tmp_path), train=train)
    assert_same_dataset(ours, theirs, ATTRS)
    assert type(ours[0][1]) is int and ours[0][0].mode == "L"
    for index in (-1, np.int64(5), 1000, -1000, np.int32(-1000)):
        assert _raise(lambda i: plain(ours[i]), index) == _raise(lambda i: plain(theirs[i]),
                                                                  index)
        if _raise(lambda i: theirs[i], index) is None:
            assert plain(ours[index]) == plain(theirs[index])


def test_transforms_in_items_and_repr(vision, tv, tmp_path):
    write_mnist_raw(tmp_path / "MNIST" / "raw")
    kwargs = dict(train=False, transform=Size(), target_transform=Twice())
    theirs = tv.datasets.MNIST(str(tmp_path), **kwargs)
    ours = vision.datasets.MNIST(str(tmp_path), **kwargs)
    assert_same_dataset(ours, theirs, indices=range(5))
    assert "Target transform: Twice(\n" in repr(ours)
    assert repr(ours.transforms) == repr(theirs.transforms)
    assert ours.transforms(_Sized(), 2) == theirs.transforms(_Sized(), 2) == ((4, 5), (2, 2))


def test_root_is_expanded_and_pathlib_kept(vision, tv, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    write_mnist_raw(tmp_path / "data" / "MNIST" / "raw")
    for root in ("~/data", tmp_path / "data"):
        assert_same_dataset(vision.datasets.MNIST(root), tv.datasets.MNIST(root), ATTRS,
                            indices=[0, -1])


def test_missing_files_and_bad_arguments(vision, tv, tmp_path):
    for make in (lambda d: d.MNIST(str(tmp_path)),
                 lambda d: d.FashionMNIST(str(tmp_path), train=False, download=False),
                 lambda d: d.EMNIST(str(tmp_path), split="letters"),
                 lambda d: d.EMNIST(str(tmp_path), split="nope"),
                 lambda d: d.EMNIST(str(tmp_path), split=3),
                 lambda d: d.QMNIST(str(tmp_path), what="test10"),
                 lambda d: d.QMNIST(str(tmp_path), what="nist"),
                 lambda d: d.MNIST(str(tmp_path), transform=Size(), transforms=Twice())):
        theirs, ours = _raise(make, tv.datasets), _raise(make, vision.datasets)
        assert theirs is not None and ours == theirs


def test_renamed_attributes_warn(vision, tv, tmp_path):
    write_mnist_raw(tmp_path / "MNIST" / "raw")
    got = []
    for datasets in (tv.datasets, vision.datasets):
        ds = datasets.MNIST(str(tmp_path), train=False)
        record = []
        for attr in ("train_labels", "test_labels", "train_data", "test_data"):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                value = getattr(ds, attr)
            record.append((plain(value), [(w.category.__name__, str(w.message))
                                          for w in caught]))
        got.append(record)
    assert got[0] == got[1]


def test_legacy_processed_files_are_read(vision, tv, tmp_path, oracle):
    rng = np.random.default_rng(3)
    processed = tmp_path / "MNIST" / "processed"
    processed.mkdir(parents=True)
    for name, n in (("training.pt", 6), ("test.pt", 4)):
        data = oracle.from_numpy(rng.integers(0, 256, (n, 28, 28), dtype=np.uint8))
        targets = oracle.from_numpy(rng.integers(0, 10, n))
        oracle.save((data, targets), str(processed / name))
    for train in (True, False):
        assert_same_dataset(vision.datasets.MNIST(str(tmp_path), train=train),
                            tv.datasets.MNIST(str(tmp_path), train=train), ATTRS)


@pytest.mark.parametrize("split", ["byclass", "bymerge", "balanced", "letters", "digits",
                                   "mnist"])
def test_emnist_splits(vision, tv, tmp_path, split):
    raw = tmp_path / "EMNIST" / "raw"
    rng = np.random.default_rng(7)
    for part, n in (("train", 9), ("test", 5)):
        write_idx(str(raw / f"emnist-{split}-{part}-images-idx3-ubyte"),
                  rng.integers(0, 256, (n, 28, 28), dtype=np.uint8))
        write_idx(str(raw / f"emnist-{split}-{part}-labels-idx1-ubyte"),
                  rng.integers(0, 10, n, dtype=np.uint8))
    for train in (True, False):
        theirs = tv.datasets.EMNIST(str(tmp_path), split=split, train=train)
        ours = vision.datasets.EMNIST(str(tmp_path), split=split, train=train)
        assert_same_dataset(ours, theirs, ATTRS + ("split", "images_file", "labels_file",
                                                   "training_file", "test_file"))


def _write_qmnist(raw, rng):
    for prefix, n in (("qmnist-train", 7), ("qmnist-test", 12), ("xnist", 5)):
        write_idx(str(raw / f"{prefix}-images-idx3-ubyte"),
                  rng.integers(0, 256, (n, 28, 28), dtype=np.uint8))
        labels = rng.integers(0, 70000, (n, 8)).astype(np.int32)
        labels[:, 0] = rng.integers(0, 10, n)
        write_idx(str(raw / f"{prefix}-labels-idx2-int"), labels)


@pytest.mark.parametrize("what", [None, "train", "test", "test10k", "test50k", "nist"])
@pytest.mark.parametrize("compat", [True, False])
def test_qmnist(vision, tv, tmp_path, what, compat):
    _write_qmnist(tmp_path / "QMNIST" / "raw", np.random.default_rng(11))
    kwargs = dict(what=what, compat=compat, train=what is None)
    theirs = tv.datasets.QMNIST(str(tmp_path), **kwargs)
    ours = vision.datasets.QMNIST(str(tmp_path), **kwargs)
    assert_same_dataset(ours, theirs, ATTRS + ("what", "compat", "data_file", "images_file",
                                               "labels_file"))


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "float32", "float64"])
@pytest.mark.parametrize("shape", [(5,), (2, 3), (2, 3, 4)])
def test_idx_reader(vision, tv, tmp_path, dtype, shape):
    rng = np.random.default_rng(1)
    values = (rng.standard_normal(shape) * 100).astype(dtype)
    path = str(tmp_path / "f-idx")
    write_idx(path, values)
    ours = vision.datasets.mnist.read_sn3_pascalvincent_tensor(path)
    theirs = tv.datasets.mnist.read_sn3_pascalvincent_tensor(path)
    assert plain(ours) == plain(theirs)
    np.testing.assert_array_equal(ours.numpy(), values)
    readers = ("read_label_file", "read_image_file")
    for reader in readers:
        assert _raise(getattr(vision.datasets.mnist, reader), path) == \
            _raise(getattr(tv.datasets.mnist, reader), path)


def test_idx_reader_rejects_bad_headers(vision, tv, tmp_path):
    cases = {
        "zero-dims": bytes([0, 0, 8, 0]) + b"\x00" * 8,
        "four-dims": idx_bytes(np.zeros((1, 1, 1, 2), np.uint8)),
        "bad-type": bytes([0, 0, 7, 1, 0, 0, 0, 1, 5]),
        "short": idx_bytes(np.zeros((2, 3), np.uint8))[:-2],
    }
    for name, data in cases.items():
        path = tmp_path / name
        path.write_bytes(data)
        for strict in (True, False):
            theirs = _raise(tv.datasets.mnist.read_sn3_pascalvincent_tensor, str(path),
                            strict=strict)
            ours = _raise(vision.datasets.mnist.read_sn3_pascalvincent_tensor, str(path),
                          strict=strict)
            assert theirs is not None and ours == theirs, name


def test_mnist_attributes_of_the_classes(vision, tv):
    for name in ("MNIST", "FashionMNIST", "KMNIST", "EMNIST", "QMNIST"):
        ours, theirs = getattr(vision.datasets, name), getattr(tv.datasets, name)
        for attr in ("mirrors", "resources", "classes", "training_file", "test_file", "url",
                     "md5", "splits", "classes_split_dict", "subsets"):
            assert getattr(ours, attr, None) == getattr(theirs, attr, None), (name, attr)
    ours = {k: str(v).replace("tapegrad", "torch")
            for k, v in vision.datasets.mnist.SN3_PASCALVINCENT_TYPEMAP.items()}
    assert ours == {k: str(v) for k, v in tv.datasets.mnist.SN3_PASCALVINCENT_TYPEMAP.items()}


FASHION = "/usr/share/datasets/fashion-mnist"
# MD5 sums of the four uncompressed Fashion-MNIST files as Zalando published them (the .gz files
# Debian ships are compressed again, so their own sums differ from torchvision's `resources`)
FASHION_RAW_MD5 = {
    "train-images-idx3-ubyte": "f4a8712d7a061bf5bd6d2ca38dc4d50a",
    "train-labels-idx1-ubyte": "9018921c3c673c538a1fc5bad174d6f9",
    "t10k-images-idx3-ubyte": "8181f5470baa50b63fa0f6fddb340f0a",
    "t10k-labels-idx1-ubyte": "15d484375f8d13e6eb1aabb0c3f46965",
}


@pytest.mark.skipif(not os.path.isdir(FASHION),
                    reason="Debian's dataset-fashion-mnist is not installed (apt install "
                           "dataset-fashion-mnist)")
def test_fashion_mnist_from_debian_files(vision, tv, tmp_path):
    """The recipe for learners: unpack Debian's four .gz files into root/FashionMNIST/raw with
    ``datasets.utils.extract_archive``; FashionMNIST(root, download=True) then finds them."""
    raw = tmp_path / "FashionMNIST" / "raw"
    for datasets, folder in ((tv.datasets, tmp_path / "tv"), (vision.datasets, tmp_path / "us")):
        raw = folder / "FashionMNIST" / "raw"
        os.makedirs(raw)
        for name in FASHION_RAW_MD5:
            datasets.utils.extract_archive(f"{FASHION}/{name}.gz", str(raw))
        for name, md5 in FASHION_RAW_MD5.items():
            assert datasets.utils.check_integrity(str(raw / name), md5)
        assert sorted(os.listdir(raw)) == sorted(FASHION_RAW_MD5)
    for train, n in ((True, 60000), (False, 10000)):
        theirs = tv.datasets.FashionMNIST(str(tmp_path / "tv"), train=train, download=True)
        ours = vision.datasets.FashionMNIST(str(tmp_path / "us"), train=train, download=True)
        assert len(ours) == n == len(theirs)
        assert repr(ours).replace("/us", "/tv") == repr(theirs)
        np.testing.assert_array_equal(ours.data.numpy(), theirs.data.numpy())
        np.testing.assert_array_equal(ours.targets.numpy(), theirs.targets.numpy())
        for i in (0, 1, n // 2, n - 1):
            assert plain(ours[i]) == plain(theirs[i])
    assert ours.classes[9] == "Ankle boot" and int(theirs.targets[0]) == 9
