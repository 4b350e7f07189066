"""NumPy's BLAS (tapegrad/_blas.py): ``y += alpha * x`` with torch's single rounding, the
cases it leaves to NumPy, the opt-out, and the SGD step that uses it; the thread count behind
``get_num_threads`` / ``set_num_threads``."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from cpu_kernels import assert_fused

import tapegrad
from tapegrad import _blas

needs_blas = pytest.mark.skipif(
    not _blas.available(), reason="NumPy's BLAS here has no axpy with 64-bit integers")


@needs_blas
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("size", [1024, 1031, 200_704])
def test_axpy_rounds_as_torch_add_with_alpha(dtype: str, size: int) -> None:
    rng = np.random.default_rng(size)
    x = rng.standard_normal(size).astype(dtype)
    y = rng.standard_normal(size).astype(dtype)
    alpha = -0.0123456789
    want = torch.from_numpy(y.copy()).add_(torch.from_numpy(x), alpha=alpha).numpy()
    got = y.copy()
    assert _blas.axpy(alpha, x, got)
    assert_fused(got, want, alpha * x)  # (torch's scalar kernels round alpha * x first)


def test_axpy_declines_what_it_cannot_do() -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal(4096).astype(np.float32)
    cases = {
        "small": (x[:100], x[:100].copy() * 2),
        "strided": (x[::2], np.zeros(2048, np.float32)),
        "mixed dtypes": (x, np.zeros(4096, np.float64)),
        "float16": (x.astype(np.float16), np.zeros(4096, np.float16)),
        "overlapping": (x[:2048], x[1024:3072]),
        "sizes differ": (x, np.zeros(2048, np.float32)),
        "read-only": (x, np.zeros(4096, np.float32)),
    }
    cases["read-only"][1].flags.writeable = False
    for name, (a, b) in cases.items():
        before = b.copy()
        assert not _blas.axpy(0.5, a, b), name
        np.testing.assert_array_equal(b, before, err_msg=name)


def test_opt_out(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TAPEGRAD_BLAS_AXPY", "0")
    assert not [k for k in _blas._find() if isinstance(k, np.dtype)]


@needs_blas
def test_sgd_step_is_torch_bit_for_bit() -> None:
    """A 784x256 float32 weight, where add_scaled_ takes the BLAS route."""
    rng = np.random.default_rng(3)
    w0 = rng.standard_normal((256, 784)).astype(np.float32)
    g0 = rng.standard_normal((256, 784)).astype(np.float32)

    def step(L):
        w = L.nn.Parameter(L.tensor(w0))
        w.grad = L.tensor(g0)
        L.optim.SGD([w], lr=0.0123).step()
        return w.detach().numpy()

    assert_fused(step(tapegrad), step(torch), 0.0123 * g0)  # (see the axpy test)


@pytest.fixture
def restore_threads():
    before_t, before_ours = torch.get_num_threads(), tapegrad.get_num_threads()
    yield
    torch.set_num_threads(before_t)
    tapegrad.set_num_threads(before_ours)


def test_num_threads_round_trip(restore_threads) -> None:
    assert tapegrad.get_num_threads() >= 1
    for n in (1, 2, np.int64(1)):
        tapegrad.set_num_threads(n)
        torch.set_num_threads(n)
        assert tapegrad.get_num_threads() == torch.get_num_threads() == int(n)
        assert isinstance(tapegrad.get_num_threads(), int)


@pytest.mark.skipif(_blas.get_threads() is None, reason="NumPy's BLAS here has no thread count")
def test_num_threads_sets_the_blas(restore_threads) -> None:
    tapegrad.set_num_threads(1)
    assert _blas.get_threads() == 1
    tapegrad.set_num_threads(2)
    assert _blas.get_threads() == 2


@pytest.mark.parametrize("value", [0, -1, 2.0, True, None, "2", [1], np.float64(2), 2**31])
def test_set_num_threads_errors_match_torch(value, restore_threads) -> None:
    with pytest.raises(Exception) as want:
        torch.set_num_threads(value)
    with pytest.raises(type(want.value)) as got:
        tapegrad.set_num_threads(value)
    assert str(got.value) == str(want.value)
