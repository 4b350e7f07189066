"""The orthogonal polynomials of torch.special (ops/polynomials.py) against torch: a grid of
points (the interval ends, inside, outside) and degrees (negative, small, past the switch to
the trigonometric form); no gradients; argument errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from cpu_kernels import VECTORIZED

import tapegrad
from tapegrad.ops import polynomials

XS = np.array([-2, -1.5, -1, -0.7, -0.3, 0, 0.2, 0.5, 0.9, 1, 1.3, 2.5])
NS = np.arange(-2, 14, dtype=np.float64)


@pytest.mark.parametrize("name", polynomials.__all__)
def test_grid_matches_torch_float64(name):
    x, n = np.meshgrid(XS, NS)
    want = getattr(torch.special, name)(torch.tensor(x), torch.tensor(n)).numpy()
    got = getattr(tapegrad.special, name)(tapegrad.tensor(x), tapegrad.tensor(n)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", polynomials.__all__)
def test_number_arguments_dtypes_and_no_grad(name):
    fn, ref = getattr(tapegrad.special, name), getattr(torch.special, name)
    x = tapegrad.tensor([0.25, 0.75], requires_grad=True)
    y = fn(x, 3.7)  # a fractional degree is truncated
    assert not y.requires_grad and y.grad_fn is None
    np.testing.assert_allclose(y.numpy(), ref(torch.tensor([0.25, 0.75]), 3.7).numpy(),
                               rtol=1e-6)
    np.testing.assert_allclose(fn(0.5, tapegrad.tensor([2, 3])).numpy(),
                               ref(0.5, torch.tensor([2, 3])).numpy(), rtol=1e-6)
    assert fn(tapegrad.tensor([1, 2]), tapegrad.tensor([2, 3])).dtype == tapegrad.float32
    with pytest.raises(TypeError, match="received an invalid combination of arguments"):
        fn(0.5, 2)


def test_float32_recurrence_rounds_as_torch():
    rng = np.random.default_rng(0)
    x = rng.uniform(-9, 9, 2000).astype(np.float32)
    n = rng.integers(0, 12, 2000).astype(np.float32)
    for name in ("hermite_polynomial_he", "hermite_polynomial_h", "laguerre_polynomial_l",
                 "legendre_polynomial_p"):
        want = getattr(torch.special, name)(torch.tensor(x), torch.tensor(n)).numpy()
        got = getattr(tapegrad.special, name)(tapegrad.tensor(x), tapegrad.tensor(n)).numpy()
        # (torch's scalar kernels, tests/cpu_kernels.py, do not fuse the recurrence's
        # multiply-adds: the same recurrence rounded otherwise, up to 1e-4 apart where it
        # cancels)
        np.testing.assert_allclose(got, want, rtol=2e-6 if VECTORIZED else 2e-4, atol=0)
