"""Window functions against torch: torch.hann_window & co. (_window_functions.py) and
torch.signal.windows (signal/windows/windows.py; OpInfo covers these too)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import tapegrad

ATEN = ["hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window"]


@pytest.mark.parametrize("name", ATEN)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_aten_windows_match_torch(name, dtype):
    for n in (0, 1, 2, 3, 8, 17, 101):
        for periodic in (True, False):
            want = getattr(torch, name)(n, periodic, dtype=getattr(torch, dtype))
            got = getattr(tapegrad, name)(n, periodic, dtype=getattr(tapegrad, dtype))
            assert got.dtype.name == dtype and tuple(got.shape) == tuple(want.shape)
            tol = dict(rtol=1.3e-6, atol=1e-6) if dtype == "float32" else dict(rtol=1e-12,
                                                                               atol=1e-12)
            np.testing.assert_allclose(got.numpy(), want.numpy(), **tol)


def test_aten_window_arguments():
    np.testing.assert_allclose(tapegrad.hamming_window(9, False, 0.6, 0.3).numpy(),
                               torch.hamming_window(9, False, 0.6, 0.3).numpy(), rtol=1e-6)
    np.testing.assert_allclose(tapegrad.kaiser_window(9, True, 5.0).numpy(),
                               torch.kaiser_window(9, True, 5.0).numpy(), rtol=1e-6)
    assert tapegrad.hann_window(4).dtype == tapegrad.float32
    w = tapegrad.hann_window(4, requires_grad=True)
    assert w.requires_grad and w.is_leaf


@pytest.mark.parametrize("call", [lambda m: m.hann_window(-1),
                                  lambda m: m.blackman_window(3, dtype=m.int64)])
def test_aten_window_errors(call):
    with pytest.raises(RuntimeError) as want:
        call(torch)
    with pytest.raises(RuntimeError) as got:
        call(tapegrad)
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize("name,kwargs", [
    ("bartlett", {}), ("blackman", {}), ("cosine", {}), ("exponential", {"tau": 2.0}),
    ("gaussian", {"std": 0.7}), ("general_cosine", {"a": [0.5, 0.3, 0.2]}),
    ("general_hamming", {"alpha": 0.6}), ("hamming", {}), ("hann", {}),
    ("kaiser", {"beta": 4.0}), ("nuttall", {}),
])
def test_signal_windows_match_torch(name, kwargs):
    for m in (0, 1, 2, 7, 16):
        for sym in (True, False):
            want = getattr(torch.signal.windows, name)(m, sym=sym, **kwargs)
            got = getattr(tapegrad.signal.windows, name)(m, sym=sym, **kwargs)
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1.3e-6, atol=1e-7)


@pytest.mark.parametrize("call", [
    lambda m: m.signal.windows.hann(-1), lambda m: m.signal.windows.gaussian(3, std=0),
    lambda m: m.signal.windows.exponential(3, center=1.0),
    lambda m: m.signal.windows.kaiser(3, dtype=m.int64),
    lambda m: m.signal.windows.general_cosine(3, a=[]),
])
def test_signal_window_errors(call):
    with pytest.raises(Exception) as want:
        call(torch)
    with pytest.raises(type(want.value)) as got:
        call(tapegrad)
    assert str(got.value) == str(want.value)
