"""deep-chain: a very long graph of scalar ops, then one backward.

``y = y * 1.0000001`` and ``y = y + 1e-7`` alternate 100,000 times on a 0-dim float32 tensor;
then ``y.backward()``. Measures the per-node cost at scale and, above all, the memory one long
graph holds (the engine must not recurse, and must free buffers as it goes). Reported in seconds
per forward + backward.
"""

from __future__ import annotations

from types import ModuleType

import numpy as np

from ._harness import Step, Timing, WeightBank, Workload


def config(quick: bool) -> dict:
    return {"n_ops": 1000 if quick else 100_000}


def setup(lib: ModuleType, cfg: dict, bank: WeightBank) -> Step:
    x = bank.tensor(lib, "x", lambda rng: np.array(1.0, dtype=np.float32))
    x.requires_grad_()
    n_ops = cfg["n_ops"]

    def step():
        x.grad = None
        y = x
        for i in range(n_ops):
            y = y * 1.0000001 if i % 2 == 0 else y + 1e-7
        y.backward()
        return y

    return step


WORKLOAD = Workload(
    name="deep-chain",
    unit="s",
    requires=(),
    config=config,
    setup=setup,
    per_step=lambda sec, cfg: sec,
    describe=lambda cfg: f"{cfg['n_ops']:,} alternating scalar mul/add, then backward",
    timing=Timing(warmup=0, repeats=3, min_repeat_s=0.0),
)
