"""Adafactor and Muon against torch: the parameters and state after a few steps with the same
gradients (to the last bits of torch's fused kernels), and the constructors' errors."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

CASES = [
    ("Adafactor", {}), ("Adafactor", {"weight_decay": 0.1, "maximize": True}),
    ("Adafactor", {"lr": 0.5, "beta2_decay": -0.5, "eps": (1e-20, 1e-2), "d": 2.0}),
    ("Muon", {}), ("Muon", {"nesterov": False, "adjust_lr_fn": "match_rms_adamw"}),
    ("Muon", {"momentum": 0.5, "ns_steps": 3, "weight_decay": 0.0, "adjust_lr_fn": "original"}),
]


@pytest.mark.parametrize("name,options", CASES)
def test_steps_are_torchs(lib, name, options):
    # the values drawn once, by torch, and given to both: the last bits of a draw depend on the
    # CPU kernels torch runs (the optimizer alone is compared)
    torch.manual_seed(0)
    shapes = [(6, 4), (3, 5), (4,)]  # (w taller than wide: Muon transposes)
    starts = [torch.randn(*s).numpy() for s in shapes]
    grads = []
    for step in range(4):
        torch.manual_seed(10 + step)
        grads.append([(torch.randn(*s) * (step + 1)).numpy() for s in shapes])
    results = []
    for L in (torch, lib):
        w, v, b = (L.tensor(a, requires_grad=True) for a in starts)
        params = [w, v] if name == "Muon" else [w, v, b]
        opt = getattr(L.optim, name)(params, **options)
        for step in range(4):
            for p, g in zip(params, grads[step][:len(params)], strict=True):
                p.grad = L.tensor(g)
            opt.step()
        results.append([p.detach().numpy().copy() for p in params]
                       + [s.numpy().copy() for p in params for s in opt.state[p].values()])
    # torch's vectorized kernels round lerp with a fused multiply-add and sum norms in their
    # own order: a last float32 bit may differ
    for e, a in zip(*results, strict=True):
        np.testing.assert_allclose(a, e, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name,options", [
    ("Adafactor", {"lr": -1.0}), ("Adafactor", {"beta2_decay": 0.5}),
    ("Adafactor", {"eps": (-1.0, 1e-3)}), ("Adafactor", {"eps": (None, -1.0)}),
    ("Adafactor", {"d": 0.5}), ("Adafactor", {"weight_decay": -1.0}),
    ("Muon", {"lr": -1.0}), ("Muon", {"momentum": -1.0}), ("Muon", {"weight_decay": -1.0}),
    ("Muon", {"adjust_lr_fn": "other"}), ("Muon", {"vector": True}),
])
def test_constructor_errors(compare, name, options):
    def scenario(L):
        kwargs = dict(options)
        shape = (3,) if kwargs.pop("vector", False) else (2, 2)
        return getattr(L.optim, name)([L.zeros(shape, requires_grad=True)], **kwargs)

    compare(scenario)


def test_muon_step_errors(compare):
    def scenario(L):
        w = L.zeros(2, 2, dtype=L.complex64, requires_grad=True)
        w.grad = L.ones(2, 2, dtype=L.complex64)
        return L.optim.Muon([w]).step()

    compare(scenario)
