"""The textbook chapters of the corpus: where each one expects its data and its book's package.

A chapter of d2l-zh (``d2lzh_*``) or of Dive-into-DL-PyTorch (``diveintodl_*``) is run as a
reader runs it, from the book's own folder layout, rebuilt in the run's empty directory ``ROOT``:

    ROOT/work/                          the chapter runs here (d2l-zh's notebooks sit one level
                                        below the repository root, so their data is ../data)
    ROOT/data/FashionMNIST/raw/         d2l-zh's ``load_data_fashion_mnist(root="../data")``
    ROOT/d2lzh_pytorch/                 Dive-into-DL's package, found by its chapters'
                                        ``sys.path.append("..")``
    ROOT/Datasets/FashionMNIST/FashionMNIST/raw/
                                        Dive-into-DL's ``root="~/Datasets/FashionMNIST"``,
                                        with ``HOME=ROOT``

d2l-zh's package is the published ``d2l`` wheel (``pip install --no-deps d2l==0.17.6``: it pins
old NumPy and pandas releases that Python 3.11 cannot build; the functions its chapters call are
those of d2l-zh's own ``d2l/torch.py``); Dive-into-DL's ``d2lzh_pytorch`` is in ``corpus/``, as
its repository has it (SOURCES.md lists the one edit).

The FashionMNIST files are the real ones, from Debian's ``dataset-fashion-mnist`` package
(/usr/share/datasets/fashion-mnist/): a chapter gets the first ``n`` training and test images,
written as the uncompressed files torchvision reads, so that it finds them and downloads
nothing. ``SUBSETS`` gives each chapter's sizes (the default otherwise); the only other edits to
a chapter are fewer epochs (SOURCES.md). matplotlib draws without a screen (``MPLBACKEND=Agg``):
the books' plotting helpers run unchanged, and a figure shown with IPython's ``display`` prints
its text form, ``<Figure size 350x250 with 1 Axes>``, as it does outside a notebook.
"""

from __future__ import annotations

import gzip
import shutil
import struct
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus"
FASHION_MNIST = Path("/usr/share/datasets/fashion-mnist")
PREFIXES = ("d2lzh_", "diveintodl_")

# FashionMNIST training and test images a chapter sees, when not the default: each chapter
# trains on one batch size, and d2l-zh's train_ch6 prints its progress every fifth of the
# batches of an epoch, so it needs five batches at least
DEFAULT_SUBSET = (1280, 512)
SUBSETS: dict[str, tuple[int, int]] = {
    # batches of 128, images resized to 224x224 or 96x96: five batches
    "d2lzh_alexnet": (640, 128),
    "d2lzh_vgg": (640, 128),
    "d2lzh_nin": (640, 128),
    "d2lzh_googlenet": (640, 256),
    # Dive-into-DL's train_ch5 has no such need: its 224x224 and 96x96 chapters get two batches
    "diveintodl_5_6_alexnet": (256, 128),
    "diveintodl_5_7_vgg": (128, 64),
    "diveintodl_5_8_nin": (256, 128),
    "diveintodl_5_9_googlenet": (256, 128),
    "diveintodl_5_11_resnet": (512, 256),
    "diveintodl_5_12_densenet": (512, 256),
}


def is_book(name: str) -> bool:
    """Whether corpus program ``name`` is a textbook chapter."""
    return name.startswith(PREFIXES)


def _write_subset(raw: Path, n_train: int, n_test: int) -> None:
    """The first images and labels of each split, as torchvision's uncompressed idx files."""
    if not FASHION_MNIST.is_dir():
        raise FileNotFoundError(
            f"{FASHION_MNIST} is missing: the textbook programs train on Debian's real "
            "FashionMNIST files (apt-get install dataset-fashion-mnist)")
    raw.mkdir(parents=True, exist_ok=True)
    for split, count in (("train", n_train), ("t10k", n_test)):
        for kind, item_size, header_size in (("images-idx3-ubyte", 28 * 28, 16),
                                             ("labels-idx1-ubyte", 1, 8)):
            with gzip.open(FASHION_MNIST / f"{split}-{kind}.gz") as f:
                header = bytearray(f.read(header_size))
                body = f.read(count * item_size)
            header[4:8] = struct.pack(">I", count)  # the item count, big-endian
            (raw / f"{split}-{kind}").write_bytes(bytes(header) + body)


def prepare(name: str, root: Path) -> Path:
    """Lay out chapter ``name``'s book folders under ``root``; the directory to run it in."""
    n_train, n_test = SUBSETS.get(name, DEFAULT_SUBSET)
    if name.startswith("d2lzh_"):
        _write_subset(root / "data" / "FashionMNIST" / "raw", n_train, n_test)
    else:
        _write_subset(root / "Datasets" / "FashionMNIST" / "FashionMNIST" / "raw",
                      n_train, n_test)
        shutil.copytree(CORPUS / "d2lzh_pytorch", root / "d2lzh_pytorch")
    work = root / "work"
    work.mkdir()
    return work


def environment(root: Path) -> dict[str, str]:
    """The variables a chapter runs with: its home folder and a screenless matplotlib."""
    return {"HOME": str(root), "MPLBACKEND": "Agg"}
