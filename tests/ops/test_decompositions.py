"""linalg.eig and linalg.eigvals (ops/decompositions.py) beyond torch's OpInfo samples:
complex input, the float32 -> complex64 results, gradients of gauge-invariant functions, the
phase error, and argument errors."""

from __future__ import annotations

import pytest


def test_eig_values_and_gradients(compare):
    def scenario(L):
        a = L.tensor([[0.0, -1.0, 0.2], [1.0, 0.1, 0.0], [0.3, 0.0, 2.0]], dtype=L.float64,
                     requires_grad=True)
        w, v = L.linalg.eig(a)
        g = L.autograd.grad((w * w).real.sum() + v.abs().sum(), a)[0]
        z = L.tensor([[1 + 1j, 2.0], [0.5j, -1.0]], requires_grad=True)
        wz = L.linalg.eigvals(z)
        gz = L.autograd.grad(wz.abs().sum(), z)[0]
        w32 = L.linalg.eigvals(L.tensor([[2.0, 1.0], [0.0, 3.0]]))
        return w, v.abs(), g, wz, gz, w32

    compare(scenario)


def test_eig_phase_dependent_loss_is_refused(compare):
    def scenario(L):
        a = L.tensor([[2.0, 1.0], [0.5, 3.0]], dtype=L.float64, requires_grad=True)
        _, v = L.linalg.eig(a)
        return L.autograd.grad(v.real.sum(), a)

    compare(scenario)


@pytest.mark.parametrize("call", [
    lambda L: L.linalg.eig(L.ones(2, 3)),
    lambda L: L.linalg.eig(L.ones(3)),
    lambda L: L.linalg.eig(L.ones(2, 2, dtype=L.int64)),
    lambda L: L.linalg.eigvals(L.ones(2, 3)),
    lambda L: L.linalg.eig(L.tensor([[1.0, float("nan")], [0.0, 1.0]])),
])
def test_eig_errors(compare, call):
    compare(call)
