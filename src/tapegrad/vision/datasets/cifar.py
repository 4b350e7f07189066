"""``CIFAR10`` and ``CIFAR100``: 32 x 32 colour images, 50,000 for training and 10,000 for test.

The files are the Python pickles of the original release, unpacked from its ``.tar.gz`` into
``root/cifar-10-batches-py`` (``data_batch_1`` .. ``_5``, ``test_batch``, ``batches.meta``) or
``root/cifar-100-python`` (``train``, ``test``, ``meta``); each is checked against its MD5 before
use. ``data`` is a uint8 NumPy array ``(N, 32, 32, 3)``, ``targets`` a list of ints, and an item
is ``(PIL RGB image, int)``. The pickles are read with Python's pickle, as torchvision reads them:
only open files from a source you trust.
"""

from __future__ import annotations

import os.path
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from .utils import check_integrity, download_and_extract_archive
from .vision import VisionDataset, _transform_pair

__all__ = ["CIFAR10", "CIFAR100"]


class CIFAR10(VisionDataset):
    """`CIFAR10 <https://www.cs.toronto.edu/~kriz/cifar.html>`_: ten classes (airplane ...
    truck).

    Args:
        root: the folder holding ``cifar-10-batches-py`` (or to download it into).
        train: the five training batches (True) or the test batch.
        transform: applied to the PIL image.
        target_transform: applied to the class index.
        download: fetch and unpack the archive unless the files are there and intact.
    """

    base_folder = "cifar-10-batches-py"
    url = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"
    filename = "cifar-10-python.tar.gz"
    tgz_md5 = "c58f30108f718f92721af3b95e74349a"
    train_list = [
        ["data_batch_1", "c99cafc152244af753f735de768cd75f"],
        ["data_batch_2", "d4bba439e000b95fd0a9bffe97cbabec"],
        ["data_batch_3", "54ebc095f3ab1f0389bbae665268c751"],
        ["data_batch_4", "634d18415352ddfa80567beed471001a"],
        ["data_batch_5", "482c414d41f54cd18b22e5b47cb7c3cb"],
    ]
    test_list = [
        ["test_batch", "40351d587109b95175f43aff81a1287e"],
    ]
    meta = {
        "filename": "batches.meta",
        "key": "label_names",
        "md5": "5ff9c542aee3614f3951f8cda6e48888",
    }

    def __init__(self, root: str | Path, train: bool = True, transform: Callable | None = None,
                 target_transform: Callable | None = None, download: bool = False) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.train = train
        if download:
            self.download()
        if not self._check_integrity():
            raise RuntimeError("Dataset not found or corrupted. You can use download=True to "
                               "download it")
        batches, self.targets = [], []
        for name, _ in self.train_list if self.train else self.test_list:
            with open(os.path.join(self.root, self.base_folder, name), "rb") as fh:
                entry = pickle.load(fh, encoding="latin1")
            batches.append(entry["data"])
            self.targets.extend(entry["labels"] if "labels" in entry else entry["fine_labels"])
        # the pickles hold rows of 3072 bytes: the red plane, then green, then blue
        self.data: Any = np.vstack(batches).reshape(-1, 3, 32, 32).transpose((0, 2, 3, 1))
        self._load_meta()

    def _load_meta(self) -> None:
        path = os.path.join(self.root, self.base_folder, self.meta["filename"])
        if not check_integrity(path, self.meta["md5"]):
            raise RuntimeError("Dataset metadata file not found or corrupted. You can use "
                               "download=True to download it")
        with open(path, "rb") as fh:
            self.classes = pickle.load(fh, encoding="latin1")[self.meta["key"]]
        self.class_to_idx = {name: i for i, name in enumerate(self.classes)}

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        """``(image, class index)``, each through its transform when one is set."""
        from PIL import Image  # PIL: optional (pip install pillow), loaded on first use

        img, target = Image.fromarray(self.data[index]), self.targets[index]
        return _transform_pair(self.transform, self.target_transform, img, target)

    def __len__(self) -> int:
        return len(self.data)

    def _check_integrity(self) -> bool:
        return all(check_integrity(os.path.join(self.root, self.base_folder, name), md5)
                   for name, md5 in self.train_list + self.test_list)

    def download(self) -> None:
        if self._check_integrity():
            return
        download_and_extract_archive(self.url, self.root, filename=self.filename,
                                     md5=self.tgz_md5)

    def extra_repr(self) -> str:
        return f"Split: {'Train' if self.train is True else 'Test'}"


class CIFAR100(CIFAR10):
    """`CIFAR100 <https://www.cs.toronto.edu/~kriz/cifar.html>`_: a hundred classes; targets are
    the fine labels. Same arguments as :class:`CIFAR10`."""

    base_folder = "cifar-100-python"
    url = "https://www.cs.toronto.edu/~kriz/cifar-100-python.tar.gz"
    filename = "cifar-100-python.tar.gz"
    tgz_md5 = "eb9058c3a382ffc7106e4002c42a8d85"
    train_list = [
        ["train", "16019d7e3df5f24257cddd939b257f8d"],
    ]
    test_list = [
        ["test", "f0ef6b0ae62326f3e7ffdfab6717acfc"],
    ]
    meta = {
        "filename": "meta",
        "key": "fine_label_names",
        "md5": "7973b15100ade9c7d40fb424638fde48",
    }
