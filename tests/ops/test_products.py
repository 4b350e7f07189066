"""kron, block_diag, combinations, constant_pad_nd (ops/shape_composite.py) and torch.cross
(ops/linalg.py) beyond torch's OpInfo samples: method forms, dtypes, empty inputs, complex
gradients and errors."""

from __future__ import annotations

import warnings

import pytest


def test_kron_block_diag_combinations(compare):
    def scenario(L):
        a = L.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        b = L.tensor([1.0, -1.0, 0.5], requires_grad=True)
        k = a.kron(b)
        bd = L.block_diag(a, b, L.tensor(7.0), L.ones(0, 2))
        c = L.combinations(b, 2, with_replacement=True)
        g = L.autograd.grad(k.sum() + (bd * bd).sum() + c.prod(1).sum(), (a, b))
        mixed = L.block_diag(L.tensor([True]), L.tensor([2], dtype=L.uint8))
        ints = L.kron(L.ones(2, 1, dtype=L.int64), L.ones(3))
        return (k, bd, c, g, L.block_diag(), mixed, L.combinations(b, 0),
                L.combinations(L.ones(0), 2), ints)

    compare(scenario)


@pytest.mark.parametrize("call", [
    lambda L: L.block_diag(L.ones(2, 2, 2)),
    lambda L: L.combinations(L.ones(2, 2)),
    lambda L: L.combinations(L.ones(2), r=-1),
    lambda L: L.constant_pad_nd(L.ones(2, 2), [1]),
    lambda L: L.constant_pad_nd(L.ones(2, 2), [1, 1, 1, 1, 1, 1]),
    lambda L: L.constant_pad_nd(L.ones(2, 2), [-3, 0]),
])
def test_errors(compare, call):
    compare(call)


def test_constant_pad_nd(compare):
    def scenario(L):
        x = L.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
        p = L.constant_pad_nd(x, [1, -1, 0, 2], 9.0)
        return p, L.autograd.grad(p.sum(), x)[0], L.constant_pad_nd(L.ones(2, dtype=L.int64),
                                                                   [1, 1], 1.5)

    compare(scenario)


def test_cross(compare):
    def scenario(L):
        a = L.tensor([[1.0, 0.0, 2.0], [0.5, 1.0, -1.0]], requires_grad=True)
        b = L.tensor([[0.0, 1.0, 1.0], [2.0, 0.0, 1.0]], requires_grad=True)
        z = L.tensor([[1 + 1j, 2j, 3.0], [1j, 1.0, -1j]], requires_grad=True)
        w = L.tensor([[2.0, 1j, 1 - 1j], [1.0, 1.0, 1.0]], requires_grad=True)
        c = a.cross(b, dim=1)
        cz = L.linalg.cross(z, w)
        g = L.autograd.grad(c.sum(), (a, b))
        gz = L.autograd.grad(cz.abs().sum(), (z, w))
        return c, g, cz, gz

    compare(scenario)


def test_cross_default_dim(lib):
    # without dim, torch.cross takes the first dim of size 3 (and warns once, deprecated)
    x = lib.tensor([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
    y = lib.tensor([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = lib.cross(x, y)
        with pytest.raises(RuntimeError, match="no dimension of size 3 in input"):
            lib.cross(lib.ones(2, 2), lib.ones(2, 2))
    assert got.tolist() == lib.linalg.cross(x, y, dim=0).tolist()
