"""``torchvision.datasets``: datasets of images, with torchvision's files, folders and downloads.

    MNIST, FashionMNIST, KMNIST, EMNIST, QMNIST   root/<Name>/raw/*-idx?-ubyte (mnist.py)
    CIFAR10, CIFAR100                             root/cifar-10-batches-py, ... (cifar.py)
    SVHN                                          root/<split>_32x32.mat (svhn.py)
    ImageFolder, DatasetFolder                    root/<class>/<file> (folder.py)
    FakeData                                      random images (fakedata.py)
    VisionDataset                                 the base class (vision.py)

``download=True`` fetches from the same addresses as torchvision (a class's ``mirrors``,
``url``, ``resources``: change them to point a dataset at another server) and checks the same
MD5 sums; ``datasets.utils`` has the download and archive helpers.

Offline, with Debian's ``dataset-fashion-mnist`` package, unpack its files into the folder
FashionMNIST reads (Debian compressed them again, so the ``.gz`` files themselves do not match
torchvision's MD5 sums; the unpacked files are Zalando's)::

    import os
    from torchvision.datasets.utils import extract_archive
    os.makedirs("data/FashionMNIST/raw", exist_ok=True)
    for name in ["train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                 "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"]:
        extract_archive(f"/usr/share/datasets/fashion-mnist/{name}.gz", "data/FashionMNIST/raw")
    FashionMNIST(root="data", download=True)   # finds the files: nothing is downloaded
"""

from .cifar import CIFAR10, CIFAR100
from .fakedata import FakeData
from .folder import DatasetFolder, ImageFolder
from .mnist import EMNIST, KMNIST, MNIST, QMNIST, FashionMNIST
from .svhn import SVHN
from .vision import VisionDataset

__all__ = ("ImageFolder", "DatasetFolder", "FakeData", "CIFAR10", "CIFAR100", "EMNIST",
           "FashionMNIST", "QMNIST", "MNIST", "KMNIST", "SVHN", "VisionDataset")


def __getattr__(name: str) -> object:
    # torchvision.datasets.wrap_dataset_for_transforms_v2 lives with the v2 transforms' types
    # (tv_tensors/_dataset_wrapper.py, which imports the datasets from their own modules); it is
    # imported when first asked for, as torchvision's is, since it brings the v2 transforms and
    # Pillow with it
    if name == "wrap_dataset_for_transforms_v2":
        try:
            # vision.tv_tensors: loaded on first use (it imports vision.datasets)
            from ..tv_tensors._dataset_wrapper import wrap_dataset_for_transforms_v2
        except ModuleNotFoundError:
            pass
        else:
            return wrap_dataset_for_transforms_v2
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
