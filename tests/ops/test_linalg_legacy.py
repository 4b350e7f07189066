"""The older torch.* linear-algebra names (ops/linalg_legacy.py): vander, chain_matmul,
addmv_, and the stubs of the functions torch removed in 1.9, which raise its error."""

from __future__ import annotations

import pytest


def test_vander(compare):
    def scenario(L):
        x = L.tensor([1.0, 2.0, 3.0])
        return (L.vander(x), L.vander(x, N=2, increasing=True), L.vander(x, N=0),
                L.vander(L.tensor([True, False])), L.vander(L.tensor([2, 3], dtype=L.int8), 3))

    compare(scenario)


def test_vander_gradient_is_refused_as_in_torch(compare):
    # torch computes the powers by an in-place running product: no gradient
    def scenario(L):
        x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        return L.autograd.grad(L.vander(x).sum(), x)

    compare(scenario)


@pytest.mark.parametrize("call", [
    lambda L: L.vander(L.ones(2, 2)),
    lambda L: L.vander(L.ones(2), N=-1),
])
def test_vander_errors(compare, call):
    compare(call)


def test_chain_matmul_and_addmv_(lib, oracle):
    import warnings

    for L in (lib, oracle):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch warns once a process: not compared
            a = L.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
            r = L.chain_matmul(a, L.tensor([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]]), L.ones(3, 1))
            one = L.chain_matmul(a)
            t = L.ones(2)
            L.addmv_(t, L.ones(2, 3), L.tensor([1.0, 2.0, 3.0]), beta=2, alpha=3)
            with pytest.raises(RuntimeError, match="Expected one or more matrices"):
                L.chain_matmul()
            with pytest.raises(RuntimeError, match="Tensor dimension is 1, expected 2 instead"):
                L.chain_matmul(L.ones(2), L.ones(2, 2))
        assert r.tolist() == [[6.0], [14.0]]
        assert type(one.grad_fn).__name__ == "CloneBackward0"
        assert t.tolist() == [20.0, 20.0]


@pytest.mark.parametrize("call", [
    lambda L: L.eig(L.ones(2, 2)),
    lambda L: L.ones(2, 2).eig(True),
    lambda L: L.symeig(L.ones(2, 2)),
    lambda L: L.ones(2, 2).symeig(),
    lambda L: L.lstsq(L.ones(2, 2), L.ones(2, 2)),
    lambda L: L.ones(2, 2).lstsq(L.ones(2, 2)),
    lambda L: L.solve(L.ones(2, 2), L.ones(2, 2)),
    lambda L: L.ones(2, 2).solve(L.ones(2, 2)),
    lambda L: L.matrix_rank(L.ones(2, 2)),
])
def test_removed_functions(compare, call):
    compare(call)
