"""as_strided_scatter: values as torch's, and the true gradient (torch 2.13's own gradient of
the input is wrong: it passes the gradient of the overwritten region and zeroes the rest, and
fails torch's own gradcheck)."""

from __future__ import annotations

import numpy as np
import torch

import tapegrad


def _pair(shape, seed):
    arr = np.random.default_rng(seed).standard_normal(shape)
    return (torch.tensor(arr, requires_grad=True),
            tapegrad.tensor(arr, requires_grad=True))


def test_as_strided_scatter_values_and_grad_fn():
    ta, ga = _pair((3, 3), 0)
    ts, gs = _pair((2, 2), 1)
    t = torch.as_strided_scatter(ta, ts, (2, 2), (1, 2))
    g = tapegrad.as_strided_scatter(ga, gs, (2, 2), (1, 2))
    np.testing.assert_allclose(g.detach().numpy(), t.detach().numpy())
    assert type(g.grad_fn).__name__ == type(t.grad_fn).__name__ == "AsStridedScatterBackward0"
    assert torch.equal(ta.as_strided_scatter(ts, (2, 2), (1, 2)), t)
    np.testing.assert_allclose(ga.as_strided_scatter(gs, (2, 2), (1, 2)).detach().numpy(),
                               t.detach().numpy())


def test_as_strided_scatter_gradients_are_true():
    _, ga = _pair((3, 3), 2)
    _, gs = _pair((2, 2), 3)

    def f(a, s):
        return tapegrad.as_strided_scatter(a, s, (2, 2), (1, 2), 1)

    assert tapegrad.autograd.gradcheck(f, (ga, gs))
    assert tapegrad.autograd.gradgradcheck(f, (ga, gs))
    g = tapegrad.arange(9.0, dtype=tapegrad.float64).reshape(3, 3)
    gx, gsrc = tapegrad.autograd.grad(f(ga, gs), (ga, gs), g)
    # the region (flat positions 1, 3, 2, 4) comes from src; the rest from the input
    assert gx.reshape(-1).tolist() == [0.0, 0.0, 0.0, 0.0, 0.0, 5.0, 6.0, 7.0, 8.0]
    assert gsrc.tolist() == [[1.0, 3.0], [2.0, 4.0]]


def test_as_strided_scatter_out_of_bounds():
    a = tapegrad.zeros(4, 4)
    try:
        tapegrad.as_strided_scatter(a, tapegrad.zeros(2, 2), (2, 2), (200, 200))
    except RuntimeError as e:
        assert "out of bounds for storage of size" in str(e)
    else:
        raise AssertionError("no error")
