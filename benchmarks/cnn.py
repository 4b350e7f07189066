"""cnn: two 3x3 convolutions with ReLU, a linear classifier, cross-entropy, one SGD step.

conv 1->16 3x3, ReLU, conv 16->32 3x3, ReLU, flatten, linear 32*24*24 -> 10 on a batch of
28x28 single-channel images; ``F.cross_entropy``, ``optim.SGD`` lr 0.01. Reported in ms per step.
"""

from __future__ import annotations

from types import ModuleType

import numpy as np

from ._harness import Step, WeightBank, Workload, training_step


def config(quick: bool) -> dict:
    return {"batch": 2 if quick else 32, "image": 28, "classes": 10, "lr": 0.01}


def build(lib: ModuleType, image: int, classes: int):
    """The model, written once against the torch API."""
    nn = lib.nn
    side = image - 4  # two valid 3x3 convolutions
    return nn.Sequential(
        nn.Conv2d(1, 16, 3), nn.ReLU(),
        nn.Conv2d(16, 32, 3), nn.ReLU(),
        nn.Flatten(),
        nn.Linear(32 * side * side, classes),
    )


def setup(lib: ModuleType, cfg: dict, bank: WeightBank) -> Step:
    batch, image, classes = cfg["batch"], cfg["image"], cfg["classes"]
    model = build(lib, image, classes)
    bank.load(lib, model)
    x = bank.tensor(lib, "x", lambda r: r.standard_normal((batch, 1, image, image),
                                                          dtype=np.float32))
    y = bank.tensor(lib, "y", lambda r: r.integers(0, classes, batch, dtype=np.int64))
    F = lib.nn.functional
    opt = lib.optim.SGD(model.parameters(), lr=cfg["lr"])
    return training_step(lambda: F.cross_entropy(model(x), y), opt)


WORKLOAD = Workload(
    name="cnn",
    unit="ms/step",
    requires=("nn.Sequential", "nn.Conv2d", "nn.ReLU", "nn.Flatten", "nn.Linear",
              "nn.functional.cross_entropy", "optim.SGD"),
    config=config,
    setup=setup,
    per_step=lambda sec, cfg: sec * 1e3,
    describe=lambda cfg: (f"conv1->16, conv16->32 3x3, linear to {cfg['classes']}, "
                          f"batch {cfg['batch']} of {cfg['image']}x{cfg['image']}, SGD"),
)
