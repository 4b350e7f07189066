"""torch.segment_reduce (ops/segments.py): every reduction, lengths and offsets, leading
dims, ``initial``, the gradient, and the errors."""

from __future__ import annotations

import pytest

CASES = [
    ([2.0, 2.0, 3.0, 0.0, 5.0, 0.0, 1.0], {"lengths": [2, 2, 2, 1]}),
    ([2.0, 2.0, 3.0, 0.0, 5.0, 0.0, 1.0], {"lengths": [2, 0, 5], "initial": 2.0}),
    ([2.0, 2.0, 3.0, 0.0, 5.0, 0.0, 1.0], {"offsets": [1, 3, 3, 7]}),
    ([[-3.0, -2.0, -1.0, 0.0, 1.0, 2.0], [3.0, 4.0, 5.0, 6.0, 7.0, 8.0]],
     {"lengths": [[2, 4], [3, 3]], "axis": 1}),
    ([[1.0, 2.0], [3.0, 4.0], [0.0, 1.0], [-1.0, 5.0]], {"lengths": [1, 0, 3], "initial": -1.0}),
]


@pytest.mark.parametrize("reduce", ["sum", "mean", "max", "min", "prod"])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_segment_reduce(compare, reduce, case):
    data, kw = CASES[case]

    def scenario(L):
        d = L.tensor(data, dtype=L.float64, requires_grad=True)
        k = {a: L.tensor(b) if isinstance(b, list) else b for a, b in kw.items()}
        r = L.segment_reduce(d, reduce, **k)
        g = L.linspace(-1, 2, r.numel(), dtype=L.float64).reshape(r.shape)
        return r, L.autograd.grad(r, d, g)[0]

    compare(scenario)


@pytest.mark.parametrize("call", [
    lambda L: L.segment_reduce(L.ones(3), "foo", lengths=L.tensor([3])),
    lambda L: L.segment_reduce(L.ones(3), "sum"),
    lambda L: L.segment_reduce(L.ones(3), "sum", lengths=L.tensor([1, 1])),
    lambda L: L.segment_reduce(L.ones(3), "sum", indices=L.tensor([0, 0, 1])),
    lambda L: L.segment_reduce(L.ones(3), "sum", lengths=L.tensor([1.0, 2.0])),
    lambda L: L.segment_reduce(L.tensor([1, 2, 3]), "sum", lengths=L.tensor([1, 2])),
    lambda L: L.segment_reduce(L.ones(3), "sum", lengths=L.tensor([-1, 4])),
    lambda L: L.segment_reduce(L.ones(2, 3), "sum", lengths=L.tensor([1, 1]), axis=1),
])
def test_segment_reduce_errors(compare, call):
    compare(call)


def test_segment_reduce_gradient_has_no_derivative(compare):
    def scenario(L):
        d = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        r = L.segment_reduce(d, "prod", lengths=L.tensor([3]))
        g, = L.autograd.grad(r.sum(), d, create_graph=True)
        return L.autograd.grad(g.sum(), d)

    compare(scenario)
