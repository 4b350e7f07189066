"""Normalisation layers in training mode whose input does not require grad (a batch of data):
the backward reaches the affine parameters and matches torch (BatchNorm, InstanceNorm,
GroupNorm and LayerNorm, 2-D to 5-D input, float32 and float64, first and second order)."""

from __future__ import annotations

import numpy as np
import pytest

NORMS = [
    ("BatchNorm1d", lambda L: L.nn.BatchNorm1d(3), (4, 3)),
    ("BatchNorm1d-3d", lambda L: L.nn.BatchNorm1d(3), (4, 3, 5)),
    ("BatchNorm2d", lambda L: L.nn.BatchNorm2d(3), (4, 3, 2, 2)),
    ("BatchNorm3d", lambda L: L.nn.BatchNorm3d(3), (2, 3, 2, 2, 2)),
    ("BatchNorm2d-nostats", lambda L: L.nn.BatchNorm2d(3, track_running_stats=False),
     (4, 3, 2, 2)),
    ("InstanceNorm1d-affine", lambda L: L.nn.InstanceNorm1d(3, affine=True), (4, 3, 5)),
    ("GroupNorm", lambda L: L.nn.GroupNorm(1, 3), (4, 3, 2)),
    ("LayerNorm", lambda L: L.nn.LayerNorm(3), (4, 3)),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name,ctor,shape", NORMS, ids=[n for n, _, _ in NORMS])
def test_backward_when_input_does_not_require_grad(compare, name, ctor, shape, dtype):
    def scenario(L):
        m = ctor(L)
        if dtype == np.float64:
            m = m.double()
        x = L.tensor(np.random.default_rng(0).standard_normal(shape).astype(dtype))
        y = m(x)
        y.pow(2).sum().backward()
        return y, [(n, p.grad) for n, p in m.named_parameters()], list(m.buffers())

    tol = 1e-5 if dtype == np.float32 else 1e-10
    compare(scenario, rtol=tol, atol=tol)


def test_issue_example_runs_as_in_torch(compare):
    def scenario(L):
        L.manual_seed(0)
        bn = L.nn.BatchNorm1d(3)
        bn(L.randn(4, 3)).pow(2).sum().backward()
        return bn.weight.grad, bn.bias.grad, bn.running_mean, bn.running_var

    compare(scenario, rtol=1e-5, atol=1e-6)


def test_second_order_through_the_weight(compare):
    def scenario(L):
        bn = L.nn.BatchNorm2d(2).double()
        x = L.tensor(np.random.default_rng(1).standard_normal((3, 2, 2, 2)))
        y = bn(x)
        (gw,) = L.autograd.grad(y.pow(3).sum(), bn.weight, create_graph=True)
        (ggw,) = L.autograd.grad(gw.sum(), bn.weight)
        return gw.detach(), ggw  # (the double-backward node names are another matter)

    compare(scenario, rtol=1e-10, atol=1e-10)
