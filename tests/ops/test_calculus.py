"""diff, gradient, trapezoid and cumulative_trapezoid beyond torch's OpInfo samples: the method
form, argument errors, integer inputs and the number-spacing forms (ops/calculus.py)."""

from __future__ import annotations

import pytest


def test_diff_method_and_bool(compare):
    def scenario(L):
        x = L.tensor([[1.0, 4.0, 9.0], [2.0, 3.0, 7.0]], requires_grad=True)
        d = x.diff(dim=0)
        b = L.tensor([True, False, False, True]).diff()
        u = L.tensor([1, 3, 7], dtype=L.uint8).diff(prepend=L.tensor([5], dtype=L.uint8))
        g, = L.autograd.grad(x.diff(n=2).sum(), x)
        return d, b, u, g, L.diff(x, n=0)

    compare(scenario)


@pytest.mark.parametrize("call", [
    lambda L: L.diff(L.tensor(1.0)),
    lambda L: L.diff(L.ones(3), n=-2),
    lambda L: L.diff(L.ones(3), prepend=1.0),
    lambda L: L.diff(L.ones(2, 3), prepend=L.ones(3)),
    lambda L: L.diff(L.ones(2, 3), append=L.ones(3, 1)),
    lambda L: L.diff(L.ones(2, 3), dim=2),
])
def test_diff_errors(compare, call):
    compare(call)


def test_gradient_forms(compare):
    def scenario(L):
        x = L.tensor([[1.0, 2.0, 4.0, 8.0], [0.0, 1.0, 1.0, 2.0], [3.0, 1.0, 4.0, 1.0]])
        i = L.tensor([1, 2, 4, 8, 16])
        coords = L.tensor([0.0, 1.0, 1.5, 3.5])
        return (L.gradient(x), L.gradient(x, spacing=2.0, dim=1, edge_order=2),
                L.gradient(x, spacing=[0.5, 2], dim=[1, 0]),
                L.gradient(x, spacing=(coords,), dim=1, edge_order=2),
                L.gradient(i), L.gradient(i, spacing=3))

    compare(scenario)


@pytest.mark.parametrize("call", [
    lambda L: L.gradient(L.tensor([1, 2, 3], dtype=L.uint8)),
    lambda L: L.gradient(L.ones(3, 3), spacing=[1.0, 2.0, 3.0]),
    lambda L: L.gradient(L.ones(3, 3), spacing=[L.ones(3, 3)], dim=0),
    lambda L: L.gradient(L.ones(3, 3), dim=[0, -2]),
    lambda L: L.gradient(L.ones(3, 2), edge_order=2),
])
def test_gradient_errors(compare, call):
    compare(call)


def test_trapezoid_forms(compare):
    def scenario(L):
        y = L.tensor([[1.0, 5.0, 10.0], [2.0, 2.0, 3.0]], requires_grad=True)
        x = L.tensor([0.0, 1.0, 3.0])
        out = (L.trapezoid(y), L.trapezoid(y, x), L.trapezoid(y, dx=0.5, dim=0),
               L.trapz(y, x), L.trapz(y, dx=2), L.cumulative_trapezoid(y, x),
               L.cumulative_trapezoid(y, dx=3, dim=0), L.trapezoid(L.tensor([1, 2, 4])),
               L.cumulative_trapezoid(L.tensor([1, 2, 4]), L.tensor([0, 2, 3])),
               L.trapezoid(L.ones(2, 0)), L.cumulative_trapezoid(L.ones(2, 1)))
        g, = L.autograd.grad(L.trapezoid(y, x).sum() + L.cumulative_trapezoid(y).sum(), y)
        return out, g

    compare(scenario)


@pytest.mark.parametrize("call", [
    lambda L: L.trapezoid(L.tensor([True, False])),
    lambda L: L.trapezoid(L.ones(2, 3), L.ones(2)),
    lambda L: L.trapezoid(L.ones(3), dx=True),
    lambda L: L.cumulative_trapezoid(L.ones(2, 3), L.ones(2)),
    lambda L: L.cumulative_trapezoid(L.tensor([True, False]), dx=1.0),
])
def test_trapezoid_errors(compare, call):
    compare(call)
