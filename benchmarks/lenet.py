"""lenet-epoch: one training epoch of d2l-zh's LeNet over 10,000 FashionMNIST images.

The model, its initialization and the loop are the book's (chapter 6.6, ``train_ch6``):
two 5x5 convolutions, sigmoids, 2x2 average pooling, three linear layers; ``xavier_uniform_``
on every Linear and Conv2d weight; ``nn.CrossEntropyLoss``, ``optim.SGD`` lr 0.9; batches of
256 from a shuffled ``DataLoader`` over a ``TensorDataset`` of the first 10,000 training images,
scaled to [0, 1] (``N x 1 x 28 x 28`` float32). One step of the harness is one whole epoch,
the data loader's batching included; it is reported in seconds per epoch.

The images are read with gzip and NumPy from Debian's package (``fashion-mnist``:
``/usr/share/datasets/fashion-mnist``), so both libraries train on the same arrays. Without the
files the workload makes uint8 images and labels from a seeded NumPy generator instead and says
so in its description.

Both libraries are seeded alike (``manual_seed`` before the initialization, a seeded generator
for the shuffle), so they start from the same weights and see the same batches; the loss a step
returns is that of the epoch's first batch, before the optimizer has moved anything.
"""

from __future__ import annotations

import gzip
import os
from types import ModuleType

import numpy as np

from ._harness import Step, Timing, WeightBank, Workload

DATA_DIR = "/usr/share/datasets/fashion-mnist"
IMAGES = "train-images-idx3-ubyte.gz"
LABELS = "train-labels-idx1-ubyte.gz"
SEED = 0


def _files_present() -> bool:
    return all(os.path.exists(os.path.join(DATA_DIR, f)) for f in (IMAGES, LABELS))


def config(quick: bool) -> dict:
    real = _files_present()
    return {"images": 64 if quick else 10_000, "batch": 32 if quick else 256, "lr": 0.9,
            "data": "FashionMNIST images" if real else
            f"synthetic uint8 images (no FashionMNIST files in {DATA_DIR})"}


def _read_idx(name: str, header: int, count: int) -> np.ndarray:
    """The first ``count`` bytes after an IDX file's header (gzip streams: only those are
    decompressed)."""
    with gzip.open(os.path.join(DATA_DIR, name), "rb") as f:
        raw = f.read(header + count)
    if len(raw) < header + count:
        raise ValueError(f"{name}: fewer than {count} bytes of data")
    return np.frombuffer(raw, dtype=np.uint8, offset=header)


def load_data(n: int, bank: WeightBank) -> tuple[np.ndarray, np.ndarray]:
    """(images float32 (n, 1, 28, 28) in [0, 1], labels int64 (n,)), made once per bank."""

    def images(rng: np.random.Generator) -> np.ndarray:
        if _files_present():
            u8 = _read_idx(IMAGES, 16, n * 28 * 28)
        else:
            u8 = rng.integers(0, 256, n * 28 * 28, dtype=np.uint8)
        return (u8.astype(np.float32) / np.float32(255)).reshape(n, 1, 28, 28)

    def labels(rng: np.random.Generator) -> np.ndarray:
        if _files_present():
            return _read_idx(LABELS, 8, n).astype(np.int64)
        return rng.integers(0, 10, n, dtype=np.int64)

    return bank.array(f"images:{n}", images), bank.array(f"labels:{n}", labels)


def build(lib: ModuleType):
    """d2l-zh's LeNet, written once against the torch API."""
    nn = lib.nn
    return nn.Sequential(
        nn.Conv2d(1, 6, kernel_size=5, padding=2), nn.Sigmoid(),
        nn.AvgPool2d(kernel_size=2, stride=2),
        nn.Conv2d(6, 16, kernel_size=5), nn.Sigmoid(),
        nn.AvgPool2d(kernel_size=2, stride=2),
        nn.Flatten(),
        nn.Linear(16 * 5 * 5, 120), nn.Sigmoid(),
        nn.Linear(120, 84), nn.Sigmoid(),
        nn.Linear(84, 10))


def setup(lib: ModuleType, cfg: dict, bank: WeightBank) -> Step:
    nn, data = lib.nn, lib.utils.data
    images, labels = load_data(cfg["images"], bank)
    dataset = data.TensorDataset(lib.tensor(images.copy()), lib.tensor(labels.copy()))
    train_iter = data.DataLoader(dataset, batch_size=cfg["batch"], shuffle=True,
                                 generator=lib.Generator().manual_seed(SEED))

    def init_weights(m):
        if type(m) is nn.Linear or type(m) is nn.Conv2d:
            nn.init.xavier_uniform_(m.weight)

    lib.manual_seed(SEED)
    net = build(lib)
    net.apply(init_weights)
    optimizer = lib.optim.SGD(net.parameters(), lr=cfg["lr"])
    loss = nn.CrossEntropyLoss()

    def epoch():
        first = None
        for X, y in train_iter:
            optimizer.zero_grad()
            l = loss(net(X), y)  # noqa: E741 (the book's name)
            l.backward()
            optimizer.step()
            if first is None:
                first = l
        return first

    return epoch


WORKLOAD = Workload(
    name="lenet-epoch",
    unit="s/epoch",
    requires=("nn.Sequential", "nn.Conv2d", "nn.Sigmoid", "nn.AvgPool2d", "nn.Flatten",
              "nn.Linear", "nn.CrossEntropyLoss", "nn.init.xavier_uniform_", "optim.SGD",
              "utils.data.DataLoader", "utils.data.TensorDataset", "Generator"),
    config=config,
    setup=setup,
    per_step=lambda sec, cfg: sec,
    describe=lambda cfg: (f"d2l LeNet (sigmoid, avg-pool), SGD lr {cfg['lr']}, one epoch of "
                          f"{cfg['images']:,} {cfg['data']}, batch {cfg['batch']}"),
    # an epoch is long enough to time on its own, and the first one (the loss check) warmed up
    # both libraries: no warm-up epochs before each turn
    timing=Timing(warmup=0, repeats=5, min_repeat_s=0.0),
)
