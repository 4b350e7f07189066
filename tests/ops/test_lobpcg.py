"""torch.lobpcg: LOBPCG eigenpairs and their gradient, compared with real torch."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import tapegrad as tg


def _spd(seed: int, m: int, batch: tuple[int, ...] = ()) -> np.ndarray:
    # Q diag(1..m, squared) Q^T: well-separated eigenvalues, so both libraries converge quickly
    q = np.linalg.qr(np.random.RandomState(seed).randn(*batch, m, m))[0]
    d = np.arange(1.0, m + 1) ** 2
    return (q * d) @ np.swapaxes(q, -1, -2)


def _signed(v: np.ndarray) -> np.ndarray:
    # eigenvectors are defined up to sign: make each column's largest entry positive
    idx = np.abs(v).argmax(-2)[..., None, :]
    return v * np.sign(np.take_along_axis(v, idx, -2))


def _run(a: np.ndarray, b: np.ndarray | None = None, **kw):
    torch.manual_seed(0)
    tg.manual_seed(0)
    e1, v1 = torch.lobpcg(torch.tensor(a), B=None if b is None else torch.tensor(b), **kw)
    e2, v2 = tg.lobpcg(tg.tensor(a), B=None if b is None else tg.tensor(b), **kw)
    return e1.numpy(), v1.numpy(), e2.numpy(), v2.numpy()


@pytest.mark.parametrize("method", [None, "ortho", "basic"])
@pytest.mark.parametrize("largest", [None, True, False])
def test_eigenpairs_match_torch(method, largest):
    e1, v1, e2, v2 = _run(_spd(0, 20), k=3, method=method, largest=largest)
    assert e2.shape == e1.shape == (3,) and v2.shape == v1.shape == (20, 3)
    np.testing.assert_allclose(e2, e1, rtol=1e-10)
    np.testing.assert_allclose(_signed(v2), _signed(v1), atol=1e-6)


@pytest.mark.parametrize("method", ["ortho", "basic"])
@pytest.mark.parametrize("largest", [True, False])
def test_generalized_with_b(method, largest):
    import scipy.linalg

    a, b = _spd(1, 18), _spd(2, 18)
    e1, v1, e2, v2 = _run(a, b, k=2, method=method, largest=largest)
    # the generalized problem's eigenpairs, from mathematics (scipy) and from torch
    ew, vw = scipy.linalg.eigh(a, b)
    sel = slice(None, -3, -1) if largest else slice(0, 2)
    np.testing.assert_allclose(e2, ew[sel], rtol=1e-8)
    np.testing.assert_allclose(_signed(v2), _signed(vw[:, sel]), atol=1e-5)
    np.testing.assert_allclose(e2, e1, rtol=1e-8)
    np.testing.assert_allclose(_signed(v2), _signed(v1), atol=1e-5)


def test_batched_and_given_x():
    a = _spd(3, 15, (2, 3))
    e1, v1, e2, v2 = _run(a, k=2, largest=False)
    assert e2.shape == (2, 3, 2) and v2.shape == (2, 3, 15, 2)
    np.testing.assert_allclose(e2, e1, rtol=1e-10)
    np.testing.assert_allclose(_signed(v2), _signed(v1), atol=1e-6)
    x = np.random.RandomState(4).randn(15, 3)
    e1, v1, e2, v2 = _run(a[0, 0], X=None, n=3, k=2)
    np.testing.assert_allclose(e2, e1, rtol=1e-10)
    e1, v1 = torch.lobpcg(torch.tensor(a[0, 0]), X=torch.tensor(x))
    e2, v2 = tg.lobpcg(tg.tensor(a[0, 0]), X=tg.tensor(x))
    assert e2.shape == (3,)
    np.testing.assert_allclose(e2.numpy(), e1.numpy(), rtol=1e-10)
    np.testing.assert_allclose(_signed(v2.numpy()), _signed(v1.numpy()), atol=1e-6)


def test_float32():
    a = _spd(5, 16).astype(np.float32)
    e1, v1, e2, v2 = _run(a, k=2)
    assert e2.dtype == np.float32 and v2.dtype == np.float32
    np.testing.assert_allclose(e2, e1, rtol=1e-5)
    np.testing.assert_allclose(_signed(v2), _signed(v1), atol=1e-3)


def test_random_start_is_randn_of_default_generator():
    # niter=1: no iteration past the Rayleigh-Ritz of the random start
    a = _spd(6, 12)
    e1, v1, e2, v2 = _run(a, k=2, niter=1, method="basic")
    np.testing.assert_allclose(e2, e1, rtol=1e-10)
    np.testing.assert_allclose(_signed(v2), _signed(v1), atol=1e-8)


def _err(lib, *args, **kw):
    with pytest.raises(Exception) as info:
        lib.lobpcg(*args, **kw)
    return type(info.value), str(info.value)


@pytest.mark.parametrize("case", ["rows", "square", "b_shape", "x_shape"])
def test_argument_errors(case):
    a = _spd(7, 9)
    def call(lib):
        t = lib.tensor
        if case == "rows":
            return _err(lib, t(a), k=4)
        if case == "square":
            return _err(lib, t(a[:, :8]))
        if case == "b_shape":
            return _err(lib, t(a), B=t(a[:8, :8]))
        return _err(lib, t(a), X=t(np.ones((8, 2))))
    assert call(tg) == call(torch)


@pytest.mark.parametrize("largest", [True, False])
def test_gradient_symmetric(largest):
    a = np.random.RandomState(8).randn(12, 12)  # not symmetric: both symmetrize
    a = a @ a.T + 0.5 * (a - a.T)
    w = np.random.RandomState(9).randn(12, 2)
    grads = []
    for lib in (torch, tg):
        lib.manual_seed(0)
        x = lib.tensor(a, requires_grad=True)
        e, v = lib.lobpcg(x, k=2, largest=largest)
        v = v * lib.sign(v[:1].detach())
        ((e ** 2).sum() + (v * lib.tensor(w)).sum()).backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-5, atol=1e-5 * np.abs(grads[0]).max())


def test_gradient_batched_eigenvalues():
    a = _spd(12, 10, (2,))
    grads = []
    for lib in (torch, tg):
        lib.manual_seed(0)
        x = lib.tensor(a, requires_grad=True)
        e, _ = lib.lobpcg(x, k=2)
        (e * lib.tensor([1.0, -2.0])).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], atol=1e-6)


def test_gradient_with_b_is_refused():
    a, b = _spd(10, 9), _spd(11, 9)
    for lib in (torch, tg):
        e, _ = lib.lobpcg(lib.tensor(a, requires_grad=True), B=lib.tensor(b))
        with pytest.raises(ValueError, match="B != I"):
            e.sum().backward()


@pytest.mark.parametrize("method", ["ortho", "basic"])
def test_preconditioner(method):
    a = _spd(13, 15)
    ik = np.diag(1 / np.diag(a))  # Jacobi preconditioner
    out = []
    for lib in (torch, tg):
        lib.manual_seed(0)
        e, v = lib.lobpcg(lib.tensor(a), k=2, iK=lib.tensor(ik), method=method, largest=False)
        out.append((e.numpy(), _signed(v.numpy())))
    np.testing.assert_allclose(out[1][0], out[0][0], rtol=1e-10)
    np.testing.assert_allclose(out[1][1], out[0][1], atol=1e-6)
