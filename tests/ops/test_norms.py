"""dist, renorm and the legacy norm spellings (ops/norms.py), beyond torch's OpInfo samples:
every p, the in-place and method forms, second derivatives, and the errors."""

from __future__ import annotations

import warnings

import pytest


@pytest.mark.parametrize("p", [1, 2, 3, 0.5, float("inf"), float("-inf")])
def test_dist_every_p(compare, p):
    def scenario(L):
        a = L.tensor([[1.0, -2.0, 3.0], [0.5, 0.0, -1.0]], dtype=L.float64, requires_grad=True)
        b = L.tensor([0.25, -2.5, 1.5], dtype=L.float64, requires_grad=True)
        d = a.dist(b, p)
        ga, gb = L.autograd.grad(d, (a, b), create_graph=True)
        gga, = L.autograd.grad((ga * ga).sum() + gb.sum(), a, allow_unused=True)
        return d, ga.detach(), gb.detach(), gga

    compare(scenario)


def test_renorm_forms(compare):
    def scenario(L):
        x = L.tensor([[3.0, 4.0, 0.0], [0.3, 0.4, 0.0], [1.0, 1.0, 1.0]], dtype=L.float64,
                     requires_grad=True)
        r = L.renorm(x, 2, 0, 1.0)
        g, = L.autograd.grad((r * r * r).sum(), x, create_graph=True)
        gg, = L.autograd.grad(g.sum(), x)
        y = x.detach().clone()
        y.renorm_(1, 1, 2.0)
        return r, g.detach(), gg, y, x.renorm(float("inf"), -1, 0.5)

    compare(scenario)


@pytest.mark.parametrize("call", [
    lambda L: L.renorm(L.ones(2, 2), 0, 0, 1.0),
    lambda L: L.renorm(L.ones(2, 2), 2, 0, -1.0),
    lambda L: L.renorm(L.ones(2), 2, 0, 1.0),
    lambda L: L.renorm(L.ones(2, 2), 2, 2, 1.0),
    lambda L: L.renorm(L.ones(2, 2, dtype=L.int64), 2, 0, 1.0),
    lambda L: L.dist(L.ones(2, dtype=L.int64), L.ones(2)),
    lambda L: L.dist(L.ones(2), L.ones(3)),
])
def test_errors(compare, call):
    compare(call)


def test_legacy_norms(compare):
    def scenario(L):
        x = L.tensor([[3.0, 4.0], [1.0, -2.0], [0.5, 0.0]], requires_grad=True)
        with warnings.catch_warnings():  # deprecated: warned once a process (not compared)
            warnings.simplefilter("ignore")
            f = L.frobenius_norm(x, (0, 1))
            f1 = L.frobenius_norm(x, 1, True)
            n = L.nuclear_norm(x)
            nk = L.nuclear_norm(x, (0, 1), keepdim=True)
        g, = L.autograd.grad(f + f1.sum() + n, x)
        return f, f1, n, nk, g

    compare(scenario)


@pytest.mark.parametrize("call", [
    lambda L: L.frobenius_norm(L.ones(2, 2, 2), (0, 1, 2)),
    lambda L: L.nuclear_norm(L.ones(3)),
])
def test_legacy_norm_errors(compare, call):
    def scenario(L):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return call(L)

    compare(scenario)


def test_native_norm_has_no_strided_kernel(lib):
    with pytest.raises(NotImplementedError, match="Could not run 'aten::native_norm'"):
        lib.native_norm(lib.ones(2))
