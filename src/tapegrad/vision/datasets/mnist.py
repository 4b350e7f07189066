"""The MNIST family: ``MNIST``, ``FashionMNIST``, ``KMNIST``, ``EMNIST``, ``QMNIST``.

All keep their files as torchvision does, in ``root/<ClassName>/raw``: the uncompressed idx
files (``train-images-idx3-ubyte``, ...), read whole into a ``uint8`` tensor ``data`` of shape
``(N, 28, 28)`` and an ``int64`` tensor ``targets``. An item is ``(PIL image of mode 'L',
int)``. ``download=True`` fetches the ``.gz`` files from the class's ``mirrors`` (tried in
order), checks their MD5 and unpacks them; nothing is fetched when the idx files are there.

The idx format ("SN3 Pascal Vincent"): a big-endian header, two zero bytes, a type code (8
uint8, 9 int8, 11 int16, 12 int32, 13 float32, 14 float64), the number of dimensions, then
one 4-byte big-endian size per dimension, then the values, big-endian.
"""

from __future__ import annotations

import os
import shutil
import string
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.error import URLError

import numpy as np

from ... import _creation, _dtype
from ..._tensor import Tensor
from ..utils import _Image_fromarray
from .utils import check_integrity, download_and_extract_archive, extract_archive, verify_str_arg
from .vision import VisionDataset, _transform_pair

__all__ = ["MNIST", "FashionMNIST", "KMNIST", "EMNIST", "QMNIST", "read_sn3_pascalvincent_tensor",
           "read_image_file", "read_label_file"]


def _renamed(old: str, new: str) -> property:
    """The read-only attribute ``old``, which warns that it has been renamed ``new``."""

    def get(self: Any) -> Tensor:
        warnings.warn(f"{old} has been renamed {new}", stacklevel=2)
        return getattr(self, new)

    return property(get)


def _idx_files(train_images_md5: str, train_labels_md5: str, test_images_md5: str,
               test_labels_md5: str) -> list[tuple[str, str]]:
    """The ``resources`` of a dataset in MNIST's layout: its four gzipped IDX files (training
    images and labels, test images and labels) under MNIST's names, with their MD5 sums."""
    names = ["train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
             "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"]
    md5s = [train_images_md5, train_labels_md5, test_images_md5, test_labels_md5]
    return list(zip(names, md5s, strict=True))


class MNIST(VisionDataset):
    """`MNIST <http://yann.lecun.com/exdb/mnist/>`_: 60,000 training and 10,000 test images
    of handwritten digits, 28 x 28 grey levels.

    Args:
        root: the folder holding ``MNIST/raw/train-images-idx3-ubyte`` and the other files.
        train: the training set (True) or the test set.
        transform: applied to the PIL image.
        target_transform: applied to the class index.
        download: fetch the files into ``root`` unless they are there.
    """

    mirrors = [
        "https://ossci-datasets.s3.amazonaws.com/mnist/",
        "http://yann.lecun.com/exdb/mnist/",
    ]
    resources = _idx_files("f68b3c2dcbeaaa9fbdd348bbdeb94873", "d53e105ee54ea40749a09fcbcd1e9432",
                           "9fb629c4189551a2d022fa330f9573f3", "ec29112dd5afa0611ce80d1b7f02629c")
    # the tensors older torchvision versions cached in root/<name>/processed (still read)
    training_file = "training.pt"
    test_file = "test.pt"
    classes = ["0 - zero", "1 - one", "2 - two", "3 - three", "4 - four", "5 - five", "6 - six",
               "7 - seven", "8 - eight", "9 - nine"]

    train_labels = _renamed("train_labels", "targets")
    test_labels = _renamed("test_labels", "targets")
    train_data = _renamed("train_data", "data")
    test_data = _renamed("test_data", "data")

    def __init__(self, root: str | Path, train: bool = True, transform: Callable | None = None,
                 target_transform: Callable | None = None, download: bool = False) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.train = train
        if self._check_legacy_exist():
            self.data, self.targets = self._load_legacy_data()
            return
        if download:
            self.download()
        if not self._check_exists():
            raise RuntimeError("Dataset not found. You can use download=True to download it")
        self.data, self.targets = self._load_data()

    def _check_legacy_exist(self) -> bool:
        if not os.path.exists(self.processed_folder):
            return False
        return all(check_integrity(os.path.join(self.processed_folder, name))
                   for name in (self.training_file, self.test_file))

    def _load_legacy_data(self) -> Any:
        from ...serialization import load  # tapegrad.serialization: loaded on first use

        name = self.training_file if self.train else self.test_file
        return load(os.path.join(self.processed_folder, name), weights_only=True)

    def _load_data(self) -> tuple[Tensor, Tensor]:
        split = "train" if self.train else "t10k"
        data = read_image_file(os.path.join(self.raw_folder, f"{split}-images-idx3-ubyte"))
        targets = read_label_file(os.path.join(self.raw_folder, f"{split}-labels-idx1-ubyte"))
        return data, targets

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        """``(image, class index)``, each through its transform when one is set."""
        if type(index) is int and -len(self.data) <= index < len(self.data):  # the common case
            img = _Image_fromarray(self.data.numpy()[index], mode="L")
            target = int(self.targets.numpy()[index])
        else:
            img = _Image_fromarray(self.data[index].numpy(), mode="L")
            target = int(self.targets[index])
        return _transform_pair(self.transform, self.target_transform, img, target)

    def __len__(self) -> int:
        return len(self.data)

    @property
    def raw_folder(self) -> str:
        return os.path.join(self.root, type(self).__name__, "raw")

    @property
    def processed_folder(self) -> str:
        return os.path.join(self.root, type(self).__name__, "processed")

    @property
    def class_to_idx(self) -> dict[str, int]:
        return {name: i for i, name in enumerate(self.classes)}

    def _check_exists(self) -> bool:
        return all(check_integrity(os.path.join(self.raw_folder,
                                                os.path.splitext(os.path.basename(url))[0]))
                   for url, _ in self.resources)

    def download(self) -> None:
        """Fetch and unpack the files the dataset lacks, trying each mirror in turn."""
        if self._check_exists():
            return
        os.makedirs(self.raw_folder, exist_ok=True)
        for filename, md5 in self.resources:
            errors: list[Exception] = []
            for mirror in self.mirrors:
                try:
                    download_and_extract_archive(f"{mirror}{filename}",
                                                 download_root=self.raw_folder,
                                                 filename=filename, md5=md5)
                except (RuntimeError, URLError) as exc:
                    errors.append(exc)
                    continue
                break
            else:
                report = f"Error downloading {filename}:\n"
                for mirror, err in zip(self.mirrors, errors, strict=False):
                    report += f"Tried {mirror}, got:\n{str(err)}\n"
                raise RuntimeError(report)

    def extra_repr(self) -> str:
        return f"Split: {'Train' if self.train is True else 'Test'}"


class FashionMNIST(MNIST):
    """`Fashion-MNIST <https://github.com/zalandoresearch/fashion-mnist>`_: Zalando's article
    images, 28 x 28 grey levels, ten classes; MNIST's sizes and file layout
    (``root/FashionMNIST/raw``)."""

    mirrors = ["http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/"]
    resources = _idx_files("8d4fb7e6c68d591d4c3dfef9ec88bf0d", "25c81989df183df01b3e8a0aad5dffbe",
                           "bef4ecab320f06d8554ea6380940ec79", "bb300cfdad3c16e7a12a480ee83cd310")
    classes = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt",
               "Sneaker", "Bag", "Ankle boot"]


class KMNIST(MNIST):
    """`Kuzushiji-MNIST <https://github.com/rois-codh/kmnist>`_: cursive Japanese characters,
    ten classes, MNIST's sizes and layout (``root/KMNIST/raw``)."""

    mirrors = ["http://codh.rois.ac.jp/kmnist/dataset/kmnist/"]
    resources = _idx_files("bdb82020997e1d708af4cf47b453dcf7", "e144d726b3acfaa3e44228e80efcd344",
                           "5c965bf0a639b31b8f53240b1b52f4d7", "7320c461ea6c1c855c0b718fb2a4b134")
    classes = ["o", "ki", "su", "tsu", "na", "ha", "ma", "ya", "re", "wo"]


class EMNIST(MNIST):
    """`EMNIST <https://www.nist.gov/itl/products-and-services/emnist-dataset>`_: handwritten
    digits and letters in six splits.

    Args:
        root: the folder holding ``EMNIST/raw/emnist-<split>-train-images-idx3-ubyte``, ...
        split: ``'byclass'``, ``'bymerge'``, ``'balanced'``, ``'letters'``, ``'digits'`` or
            ``'mnist'``.
        **kwargs: ``train``, ``transform``, ``target_transform``, ``download`` (as MNIST's).
    """

    url = "https://biometrics.nist.gov/cs_links/EMNIST/gzip.zip"
    md5 = "58c8d27c78d21e728a6bc7b3cc06412e"
    splits = ("byclass", "bymerge", "balanced", "letters", "digits", "mnist")
    # letters whose upper and lower case are merged into one class in 'bymerge'/'balanced'
    _merged_classes = {"c", "i", "j", "k", "l", "m", "o", "p", "s", "u", "v", "w", "x", "y", "z"}
    _all_classes = set(string.digits + string.ascii_letters)
    classes_split_dict = {
        "byclass": sorted(_all_classes),
        "bymerge": sorted(_all_classes - _merged_classes),
        "balanced": sorted(_all_classes - _merged_classes),
        "letters": ["N/A"] + list(string.ascii_lowercase),
        "digits": list(string.digits),
        "mnist": list(string.digits),
    }

    def __init__(self, root: str | Path, split: str, **kwargs: Any) -> None:
        self.split = verify_str_arg(split, "split", self.splits)
        self.training_file = self._training_file(split)
        self.test_file = self._test_file(split)
        super().__init__(root, **kwargs)
        self.classes = self.classes_split_dict[self.split]

    @staticmethod
    def _training_file(split: str) -> str:
        return f"training_{split}.pt"

    @staticmethod
    def _test_file(split: str) -> str:
        return f"test_{split}.pt"

    @property
    def _file_prefix(self) -> str:
        return f"emnist-{self.split}-{'train' if self.train else 'test'}"

    @property
    def images_file(self) -> str:
        return os.path.join(self.raw_folder, f"{self._file_prefix}-images-idx3-ubyte")

    @property
    def labels_file(self) -> str:
        return os.path.join(self.raw_folder, f"{self._file_prefix}-labels-idx1-ubyte")

    def _load_data(self) -> tuple[Tensor, Tensor]:
        return read_image_file(self.images_file), read_label_file(self.labels_file)

    def _check_exists(self) -> bool:
        return all(check_integrity(f) for f in (self.images_file, self.labels_file))

    def download(self) -> None:
        """Fetch NIST's ``gzip.zip`` (every split), unpack each ``.gz`` inside into raw/."""
        if self._check_exists():
            return
        os.makedirs(self.raw_folder, exist_ok=True)
        download_and_extract_archive(self.url, download_root=self.raw_folder, md5=self.md5)
        gzip_folder = os.path.join(self.raw_folder, "gzip")
        for name in os.listdir(gzip_folder):
            if name.endswith(".gz"):
                extract_archive(os.path.join(gzip_folder, name), self.raw_folder)
        shutil.rmtree(gzip_folder)


class QMNIST(MNIST):
    """`QMNIST <https://github.com/facebookresearch/qmnist>`_: MNIST rebuilt from NIST, with
    the full metadata of each digit.

    Args:
        root: the folder holding ``QMNIST/raw``.
        what: ``'train'``, ``'test'`` (60,000 images), ``'test10k'`` (the ones matching MNIST's
            test set), ``'test50k'`` (the rest) or ``'nist'`` (all of NIST's digits); default
            ``'train'`` or ``'test'`` after ``train``.
        compat: targets are class indices (True) or the ``int64`` row of eight metadata
            values (class, NIST writer id, ...).
        train: picks ``what`` when it is not given.
        **kwargs: ``transform``, ``target_transform``, ``download``.
    """

    subsets = {"train": "train", "test": "test", "test10k": "test", "test50k": "test",
               "nist": "nist"}
    _base = "https://raw.githubusercontent.com/facebookresearch/qmnist/master/"
    resources: dict[str, list[tuple[str, str]]] = {  # type: ignore[assignment]
        "train": [
            (_base + "qmnist-train-images-idx3-ubyte.gz", "ed72d4157d28c017586c42bc6afe6370"),
            (_base + "qmnist-train-labels-idx2-int.gz", "0058f8dd561b90ffdd0f734c6a30e5e4"),
        ],
        "test": [
            (_base + "qmnist-test-images-idx3-ubyte.gz", "1394631089c404de565df7b7aeaf9412"),
            (_base + "qmnist-test-labels-idx2-int.gz", "5b5b05890a5e13444e108efe57b788aa"),
        ],
        "nist": [
            (_base + "xnist-images-idx3-ubyte.xz", "7f124b3b8ab81486c9d8c2749c17f834"),
            (_base + "xnist-labels-idx2-int.xz", "5ed0e788978e45d4a8bd4b7caec3d79d"),
        ],
    }
    del _base
    classes = ["0 - zero", "1 - one", "2 - two", "3 - three", "4 - four", "5 - five", "6 - six",
               "7 - seven", "8 - eight", "9 - nine"]

    def __init__(self, root: str | Path, what: str | None = None, compat: bool = True,
                 train: bool = True, **kwargs: Any) -> None:
        if what is None:
            what = "train" if train else "test"
        self.what = verify_str_arg(what, "what", tuple(self.subsets.keys()))
        self.compat = compat
        self.data_file = what + ".pt"
        self.training_file = self.data_file
        self.test_file = self.data_file
        super().__init__(root, train, **kwargs)

    def _raw_path(self, which: int) -> str:
        url, _ = self.resources[self.subsets[self.what]][which]
        return os.path.join(self.raw_folder, os.path.splitext(os.path.basename(url))[0])

    @property
    def images_file(self) -> str:
        return self._raw_path(0)

    @property
    def labels_file(self) -> str:
        return self._raw_path(1)

    def _check_exists(self) -> bool:
        return all(check_integrity(f) for f in (self.images_file, self.labels_file))

    def _load_data(self) -> tuple[Tensor, Tensor]:
        data = read_sn3_pascalvincent_tensor(self.images_file)
        if data.dtype != _dtype.uint8:
            raise TypeError(f"data should be of dtype torch.uint8 instead of {data.dtype}")
        if data.ndimension() != 3:
            # torchvision's message (its braces are printed as they are)
            raise ValueError("data should have 3 dimensions instead of {data.ndimension()}")
        targets = read_sn3_pascalvincent_tensor(self.labels_file).long()
        if targets.ndimension() != 2:
            raise ValueError(f"targets should have 2 dimensions instead of "
                             f"{targets.ndimension()}")
        if self.what == "test10k":
            data, targets = data[0:10000, :, :].clone(), targets[0:10000, :].clone()
        elif self.what == "test50k":
            data, targets = data[10000:, :, :].clone(), targets[10000:, :].clone()
        return data, targets

    def download(self) -> None:
        """Fetch only the files of the subset asked for (``what``)."""
        if self._check_exists():
            return
        os.makedirs(self.raw_folder, exist_ok=True)
        for url, md5 in self.resources[self.subsets[self.what]]:
            download_and_extract_archive(url, self.raw_folder, md5=md5)

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        img, target = self.data[index], self.targets[index]
        img = _Image_fromarray(img.numpy(), mode="L")
        if self.transform is not None:
            img = self.transform(img)
        if self.compat:
            target = int(target[0])
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def extra_repr(self) -> str:
        return f"Split: {self.what}"


# -- the idx files ------------------------------------------------------------------------------

def get_int(b: bytes) -> int:
    """A big-endian unsigned integer."""
    return int.from_bytes(b, "big")


_IDX_TYPES = {8: np.uint8, 9: np.int8, 11: np.int16, 12: np.int32, 13: np.float32,
              14: np.float64}
SN3_PASCALVINCENT_TYPEMAP = {code: _dtype.from_numpy_dtype(np.dtype(t))
                             for code, t in _IDX_TYPES.items()}


def read_sn3_pascalvincent_tensor(path: str, strict: bool = True) -> Tensor:
    """An idx file as a tensor of its type and shape (``strict``: the value count must match
    the header's sizes)."""
    with open(path, "rb") as fh:
        raw = fh.read()
    magic = get_int(raw[0:4])
    ndim, code = magic % 256, magic // 256
    assert 1 <= ndim <= 3
    assert 8 <= code <= 14
    kind = np.dtype(_IDX_TYPES[code])
    sizes = [get_int(raw[4 * (i + 1):4 * (i + 2)]) for i in range(ndim)]
    values = np.frombuffer(raw, dtype=kind.newbyteorder(">"), offset=4 * (ndim + 1))
    parsed = _creation.from_numpy(values.astype(kind))  # native byte order, a writable copy
    assert parsed.shape[0] == np.prod(sizes) or not strict
    return parsed.view(*sizes)


def _read_uint8_file(path: str, ndim: int) -> Tensor:
    """An idx file checked to hold uint8 values in ``ndim`` dimensions."""
    x = read_sn3_pascalvincent_tensor(path, strict=False)
    if x.dtype != _dtype.uint8:
        raise TypeError(f"x should be of dtype torch.uint8 instead of {x.dtype}")
    if x.ndimension() != ndim:
        raise ValueError(f"x should have {ndim} dimension instead of {x.ndimension()}")
    return x


def read_label_file(path: str) -> Tensor:
    """A 1-d uint8 idx file (labels) as an int64 tensor."""
    return _read_uint8_file(path, 1).long()


def read_image_file(path: str) -> Tensor:
    """A 3-d uint8 idx file (images) as a uint8 tensor ``(N, H, W)``."""
    return _read_uint8_file(path, 3)
