"""torch.cond and torch.while_loop in eager mode (_control_flow.py): the branch taken, the loop
run, and torch's argument checks (compared with torch where torch answers without compiling)."""

from __future__ import annotations

import pytest


def test_cond_runs_the_chosen_branch(lib):
    x = lib.tensor([0.0, 1.0], requires_grad=True)
    up = lib.cond(lib.tensor(True), lambda t: t.cos(), lambda t: t.sin(), (x,))
    down = lib.cond(lib.tensor([0]), lambda t: (t + 1, t * 3), lambda t: (t - 1, t * 2), [x])
    assert up.tolist() == x.detach().cos().tolist()
    assert down[0].tolist() == [-1.0, 0.0] and down[1].tolist() == [0.0, 2.0]
    assert lib.autograd.grad(up.sum(), x)[0].tolist() == (-x.detach().sin()).tolist()


def test_cond_with_a_constant(compare):
    compare(lambda L: L.cond(0, lambda t: t + 1, lambda t: t - 1, (L.tensor([1, 2]),)))


@pytest.mark.parametrize("call", [
    lambda L: L.cond(L.ones(2), lambda: 1, lambda: 2),
    lambda L: L.cond("yes", lambda: 1, lambda: 2),
    lambda L: L.cond(L.tensor(True), 1, lambda: 2),
    lambda L: L.cond(L.tensor(True), lambda t: t, lambda t: t, (1,)),
    lambda L: L.while_loop(1, lambda t: t, (L.ones(1),)),
    lambda L: L.while_loop(lambda t: True, lambda t: t, (1.5,)),
])
def test_argument_errors(compare, call):
    compare(call)


def test_while_loop(lib):
    i, x = lib.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x * 2),
                          (lib.tensor(0), lib.tensor([1.0, -1.0])))
    assert i.item() == 3 and x.tolist() == [8.0, -8.0]
    n, y = lib.while_loop(lambda n, y: y.sum() < 10, lambda n, y: (n + 1, y + 1),
                          (0, lib.ones(2)))
    assert n == 4 and y.tolist() == [5.0, 5.0]
