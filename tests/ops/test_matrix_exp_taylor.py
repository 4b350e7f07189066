"""matrix_exp by torch's Taylor scaling and squaring: float32 results are torch's bit for bit.

op_db's samples are 5 x 5 matrices of 1-norm ~ 30, which all take the degree-18 route with
squaring; these pin every degree (1, 2, 4, 8, 12, 18 chosen by the 1-norm), batches (always
degree 18, each matrix its own number of squarings), and the product orders of sizes 7 (torch's
small kernel), 9-11 and 12+ (MKL's), outputs and gradients.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import tapegrad


def _bits_equal(ours: tapegrad.Tensor, theirs: torch.Tensor) -> None:
    a = np.ascontiguousarray(ours.detach().numpy())
    b = np.ascontiguousarray(theirs.detach().numpy())
    assert a.dtype == b.dtype and a.shape == b.shape
    same = (a == b) | (np.isnan(a) & np.isnan(b))
    assert same.all(), f"{(~same).sum()} of {a.size} elements differ"


def _matrix(shape: tuple, norm: float, seed: int) -> np.ndarray:
    """A random float32 matrix (stack) scaled to the given 1-norm."""
    a = np.random.default_rng(seed).standard_normal(shape)
    return (a * (norm / np.abs(a).sum(-2).max())).astype(np.float32)


# 1-norms inside each degree's interval (float32 thresholds 1.2e-7, 6e-4, 0.05, 0.58, 1.46, 3.01)
@pytest.mark.parametrize("norm", [1e-8, 3e-4, 0.03, 0.4, 1.2, 2.5, 40.0])
def test_float32_each_degree(norm):
    x = _matrix((6, 6), norm, seed=int(norm * 1e3) % 97)
    g = np.random.default_rng(1).standard_normal(x.shape).astype(np.float32)
    t = torch.from_numpy(x).requires_grad_()
    o = tapegrad.from_numpy(x).requires_grad_()
    yt, yo = torch.linalg.matrix_exp(t), tapegrad.linalg.matrix_exp(o)
    _bits_equal(yo, yt)
    (gt,) = torch.autograd.grad(yt, t, torch.from_numpy(g))
    (go,) = tapegrad.autograd.grad(yo, o, tapegrad.from_numpy(g))
    _bits_equal(go, gt)


@pytest.mark.parametrize("n", [2, 7, 12, 20])
def test_float32_batches(n):
    x = np.stack([_matrix((n, n), nrm, seed=n + i) for i, nrm in enumerate((0.1, 2.0, 9.0, 50.0))])
    _bits_equal(tapegrad.matrix_exp(tapegrad.from_numpy(x)), torch.matrix_exp(torch.from_numpy(x)))


def test_float64_and_complex_close_to_torch():
    for norm in (0.02, 0.2, 1.0, 30.0):
        x = _matrix((2, 5, 5), norm, seed=3).astype(np.float64)
        x = x[0] + 1j * x[1]
        for arr in (x.real.copy(), x, x.astype(np.complex64)):
            ours = tapegrad.linalg.matrix_exp(tapegrad.from_numpy(arr)).numpy()
            theirs = torch.linalg.matrix_exp(torch.from_numpy(arr)).numpy()
            tol = 1e-14 if arr.dtype.itemsize >= 8 and arr.dtype != np.complex64 else 2e-6
            np.testing.assert_allclose(ours, theirs, rtol=tol, atol=tol * np.abs(theirs).max())


def test_trivial_sizes():
    for shape in ((0, 0), (3, 1, 1), (2, 0, 0)):
        x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
        _bits_equal(tapegrad.linalg.matrix_exp(tapegrad.from_numpy(x)),
                    torch.linalg.matrix_exp(torch.from_numpy(x)))
