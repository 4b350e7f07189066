"""mlp: a 784-256-256-10 ReLU network, cross-entropy, one SGD step (lr 0.01) per iteration.

The MNIST-sized classic: three ``nn.Linear`` (fused addmm), two ``nn.ReLU``,
``nn.CrossEntropyLoss``, ``optim.SGD``. Reported in ms per step
(``zero_grad``, forward, ``backward``, ``step``).
"""

from __future__ import annotations

from types import ModuleType

import numpy as np

from ._harness import Step, WeightBank, Workload, training_step


def config(quick: bool) -> dict:
    return {"batch": 8 if quick else 64, "sizes": (784, 256, 256, 10), "lr": 0.01}


def build(lib: ModuleType, sizes: tuple[int, ...]):
    """The model, written once against the torch API."""
    nn = lib.nn
    d_in, h1, h2, d_out = sizes
    return nn.Sequential(
        nn.Linear(d_in, h1), nn.ReLU(),
        nn.Linear(h1, h2), nn.ReLU(),
        nn.Linear(h2, d_out),
    )


def setup(lib: ModuleType, cfg: dict, bank: WeightBank) -> Step:
    batch, sizes = cfg["batch"], cfg["sizes"]
    model = build(lib, sizes)
    bank.load(lib, model)
    x = bank.tensor(lib, "x", lambda r: r.standard_normal((batch, sizes[0]), dtype=np.float32))
    y = bank.tensor(lib, "y", lambda r: r.integers(0, sizes[-1], batch, dtype=np.int64))
    loss_fn = lib.nn.CrossEntropyLoss()
    opt = lib.optim.SGD(model.parameters(), lr=cfg["lr"])
    return training_step(lambda: loss_fn(model(x), y), opt)


WORKLOAD = Workload(
    name="mlp",
    unit="ms/step",
    requires=("nn.Sequential", "nn.Linear", "nn.ReLU", "nn.CrossEntropyLoss", "optim.SGD"),
    config=config,
    setup=setup,
    per_step=lambda sec, cfg: sec * 1e3,
    describe=lambda cfg: ("-".join(map(str, cfg["sizes"])) +
                          f" ReLU MLP, cross-entropy, batch {cfg['batch']}, SGD"),
)
