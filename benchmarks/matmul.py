"""matmul: 1024x1024 float32 ``a @ b`` forward and backward, against NumPy's bare ``a @ b``.

``c = a @ b`` with both requiring grad, then ``c.sum().backward()``: three matrix products
(forward, ``grad @ b.T``, ``a.T @ grad``) of 2 n^3 flops each. Reported in GFLOP/s; the ratio
column is tapegrad / NumPy's bare ``a @ b`` (1.0 = no overhead over the BLAS).
"""

from __future__ import annotations

from types import ModuleType

import numpy as np

from ._harness import Baseline, Step, Timing, WeightBank, Workload


def config(quick: bool) -> dict:
    return {"n": 128 if quick else 1024}


def _operand(key: str, n: int):
    # positive entries keep c.sum() far from zero, so the loss check is a relative one
    return key, lambda rng: rng.uniform(0.0, 1.0, (n, n)).astype(np.float32)


def setup(lib: ModuleType, cfg: dict, bank: WeightBank) -> Step:
    a = bank.tensor(lib, *_operand("a", cfg["n"])).requires_grad_()
    b = bank.tensor(lib, *_operand("b", cfg["n"])).requires_grad_()

    def step():
        a.grad = None
        b.grad = None
        loss = (a @ b).sum()
        loss.backward()
        return loss

    return step


def numpy_setup(cfg: dict, bank: WeightBank) -> Step:
    a = bank.array(*_operand("a", cfg["n"]))
    b = bank.array(*_operand("b", cfg["n"]))
    return lambda: a @ b


def numpy_same_work(cfg: dict, bank: WeightBank) -> Step:
    """The step's work written out in NumPy: the product, its sum, the sum's gradient as a
    dense matrix (a BLAS product cannot read a broadcast) and the two gradient products. What
    tapegrad adds to NumPy is its ratio to this."""
    a = bank.array(*_operand("a", cfg["n"]))
    b = bank.array(*_operand("b", cfg["n"]))

    def step():
        c = a @ b
        total = c.sum()
        g = np.ascontiguousarray(np.broadcast_to(np.ones((), c.dtype), c.shape))
        return total, g @ b.T, a.T @ g

    return step


def _gflops(matmuls: int):
    return lambda sec, cfg: matmuls * 2 * cfg["n"] ** 3 / sec / 1e9


WORKLOAD = Workload(
    name="matmul",
    unit="GFLOP/s",
    requires=("matmul",),
    config=config,
    setup=setup,
    per_step=_gflops(3),
    describe=lambda cfg: f"{cfg['n']}x{cfg['n']} float32 a @ b fwd+bwd (3 matmuls)",
    higher_is_better=True,
    timing=Timing(warmup=2, repeats=5, min_repeat_s=0.5),
    baseline=Baseline("numpy", numpy_setup, _gflops(1)),
    references=(Baseline("numpy, the same work by hand", numpy_same_work, _gflops(3)),),
)
