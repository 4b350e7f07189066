"""cov and corrcoef beyond torch's OpInfo samples: the method forms, integer and complex
inputs, the degrees-of-freedom warning and argument errors (ops/statistics.py)."""

from __future__ import annotations

import pytest


def test_cov_corrcoef_forms(compare):
    def scenario(L):
        x = L.tensor([[0.0, 1.0, 2.0, 4.0], [2.0, 1.0, 0.5, 0.0]], dtype=L.float64,
                     requires_grad=True)
        fw = L.tensor([1, 2, 1, 3])
        aw = L.tensor([0.5, 1.0, 2.0, 1.0], dtype=L.float64)
        c = x.cov(correction=0, fweights=fw, aweights=aw)
        r = x.corrcoef()
        g, = L.autograd.grad(c.sum() + r.sum(), x)
        z = L.tensor([[1 + 1j, 2 - 1j, 0.5j], [1.0 + 0j, 3 + 0j, -1j]])
        return (c, r, g, L.cov(L.tensor([1, 2, 4])), L.corrcoef(L.tensor([1.0, 2.0, 4.0])),
                L.cov(z), L.corrcoef(z))

    compare(scenario)


def test_cov_degrees_of_freedom_warning(compare):
    compare(lambda L: L.cov(L.tensor([1.0, 2.0]), correction=2))


@pytest.mark.parametrize("call", [
    lambda L: L.cov(L.ones(2, 2, 2)),
    lambda L: L.cov(L.tensor([True, False])),
    lambda L: L.cov(L.ones(3), fweights=L.tensor([1.0, 2.0, 3.0])),
    lambda L: L.cov(L.ones(3), aweights=L.tensor([1, 2, 3])),
    lambda L: L.cov(L.ones(3), fweights=L.tensor([1, 2])),
    lambda L: L.cov(L.ones(3), aweights=L.tensor([1.0, -2.0, 3.0])),
    lambda L: L.cov(L.ones(3), fweights=L.tensor([0, 0, 0])),
    lambda L: L.corrcoef(L.ones(2, 2, 2)),
])
def test_cov_errors(compare, call):
    compare(call)
