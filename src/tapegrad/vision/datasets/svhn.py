"""``SVHN``: the Street View House Numbers, 32 x 32 colour digit crops, from MATLAB files.

``root/train_32x32.mat`` (or ``test_``, ``extra_``) holds ``X`` (32, 32, 3, N) and ``y`` (N, 1);
it is read with ``scipy.io.loadmat``. The digit 0 is labelled 10 in the files and 0 here (as
torchvision does, so that the labels are 0..9). ``data`` is a uint8 array ``(N, 3, 32, 32)``,
``labels`` an int64 array; an item is ``(PIL RGB image, int)``.
"""

from __future__ import annotations

import os.path
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from .utils import check_integrity, download_url, verify_str_arg
from .vision import VisionDataset, _transform_pair

__all__ = ["SVHN"]


class SVHN(VisionDataset):
    """`SVHN <http://ufldl.stanford.edu/housenumbers/>`_.

    Args:
        root: the folder holding ``<split>_32x32.mat``.
        split: ``'train'``, ``'test'`` or ``'extra'``.
        transform: applied to the PIL image.
        target_transform: applied to the label.
        download: fetch the file unless it is there with the right MD5.
    """

    split_list = {
        "train": ["http://ufldl.stanford.edu/housenumbers/train_32x32.mat", "train_32x32.mat",
                  "e26dedcc434d2e4c54c9b2d4a06d8373"],
        "test": ["http://ufldl.stanford.edu/housenumbers/test_32x32.mat", "test_32x32.mat",
                 "eb5a983be6a315427106f1b164d9cef3"],
        "extra": ["http://ufldl.stanford.edu/housenumbers/extra_32x32.mat", "extra_32x32.mat",
                  "a93ce644f1a588dc4d68dda5feec44a7"],
    }

    def __init__(self, root: str | Path, split: str = "train", transform: Callable | None = None,
                 target_transform: Callable | None = None, download: bool = False) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.split = verify_str_arg(split, "split", tuple(self.split_list.keys()))
        self.url, self.filename, self.file_md5 = self.split_list[split]
        if download:
            self.download()
        if not self._check_integrity():
            raise RuntimeError("Dataset not found or corrupted. You can use download=True to "
                               "download it")
        import scipy.io  # scipy: optional, loaded on first use

        loaded = scipy.io.loadmat(os.path.join(self.root, self.filename))
        self.labels = loaded["y"].astype(np.int64).squeeze()
        np.place(self.labels, self.labels == 10, 0)
        self.data = np.transpose(loaded["X"], (3, 2, 0, 1))  # (H, W, C, N) -> (N, C, H, W)

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        """``(image, label)``, each through its transform when one is set."""
        from PIL import Image  # PIL: optional (pip install pillow), loaded on first use

        img = Image.fromarray(np.transpose(self.data[index], (1, 2, 0)))
        target = int(self.labels[index])
        return _transform_pair(self.transform, self.target_transform, img, target)

    def __len__(self) -> int:
        return len(self.data)

    def _check_integrity(self) -> bool:
        md5 = self.split_list[self.split][2]
        return check_integrity(os.path.join(self.root, self.filename), md5)

    def download(self) -> None:
        download_url(self.url, self.root, self.filename, self.split_list[self.split][2])

    def extra_repr(self) -> str:
        return f"Split: {self.split}"
