"""op-overhead: the fixed Python cost of one recorded op, forward and backward.

A chain of mixed elementwise ops with Python scalars (``* 1.01``, ``+ 0.5``, ``tanh``,
``- 0.25``) on a float32[16] vector, then ``.sum().backward()``. The data is tiny, so the time is
almost all per-op bookkeeping: dispatch, node recording, the engine's loop. Reported in µs per op
(step time / ops in the chain).
"""

from __future__ import annotations

from types import ModuleType

import numpy as np

from ._harness import Step, WeightBank, Workload


def config(quick: bool) -> dict:
    return {"n_ops": 20 if quick else 200, "size": 16}


def setup(lib: ModuleType, cfg: dict, bank: WeightBank) -> Step:
    x = bank.tensor(lib, "x", lambda rng: rng.uniform(-1, 1, cfg["size"]).astype(np.float32))
    x.requires_grad_()
    n_ops = cfg["n_ops"]

    def step():
        x.grad = None
        y = x
        for i in range(n_ops):
            kind = i % 4
            if kind == 0:
                y = y * 1.01
            elif kind == 1:
                y = y + 0.5
            elif kind == 2:
                y = y.tanh()
            else:
                y = y - 0.25
        loss = y.sum()
        loss.backward()
        return loss

    return step


WORKLOAD = Workload(
    name="op-overhead",
    unit="us/op",
    requires=("tanh",),
    config=config,
    setup=setup,
    per_step=lambda sec, cfg: sec / cfg["n_ops"] * 1e6,
    describe=lambda cfg: (f"{cfg['n_ops']} mixed mul/add/tanh/sub on float32[{cfg['size']}], "
                          "fwd+bwd"),
)
