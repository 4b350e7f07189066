"""stft and istft (ops/spectral.py) against torch: values, gradients of every input, grad_fn
names and torch's error messages, over the arguments OpInfo's samples leave out (windows
shorter than n_fft, align_to_window, pad modes, normalized, length, complex output)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import tapegrad

rng = np.random.default_rng(0)


def _spec(*shape: int) -> np.ndarray:
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def _window(n: int) -> np.ndarray:
    return np.hanning(n) + 0.5  # no zeros: istft divides by the overlap-added window


CASES: dict[str, tuple[list, Callable]] = {
    "defaults": ([rng.standard_normal(50)],
                 lambda L, x: L.stft(x, 8, return_complex=True)),
    "batch_window_hop": ([rng.standard_normal((3, 50)), np.hanning(8)],
                         lambda L, x, w: L.stft(x, 8, 3, window=w, return_complex=True)),
    "short_window_normalized": ([rng.standard_normal(50), np.hanning(5)],
                                lambda L, x, w: L.stft(x, 8, 2, 5, window=w, normalized=True,
                                                       return_complex=True)),
    "short_no_window": ([rng.standard_normal(50)],
                        lambda L, x: L.stft(x, 8, 2, 5, center=False, return_complex=True)),
    "align_to_window": ([rng.standard_normal((2, 40)), np.hanning(5)],
                        lambda L, x, w: L.stft(x, 8, 3, 5, window=w, center=False,
                                               align_to_window=True, return_complex=True)),
    "constant_pad": ([rng.standard_normal((2, 50))],
                     lambda L, x: L.stft(x, 8, pad_mode="constant", return_complex=True)),
    "replicate_twosided": ([rng.standard_normal((2, 50))],
                           lambda L, x: L.stft(x, 8, pad_mode="replicate", onesided=False,
                                               return_complex=True)),
    "real_output": ([rng.standard_normal((2, 50))],
                    lambda L, x: L.stft(x, 8, window=L.ones(8, dtype=L.float64),
                                        return_complex=False)),
    "method": ([rng.standard_normal((2, 50))],
               lambda L, x: x.stft(8, window=L.ones(8, dtype=L.float64), return_complex=True)),
    "complex_input": ([_spec(40)], lambda L, x: L.stft(x, 8, window=L.ones(8, dtype=L.float64))),
    "float32": ([rng.standard_normal(40).astype(np.float32)],
                lambda L, x: L.stft(x, 8, window=L.ones(8), return_complex=True)),
    "istft": ([_spec(5, 11), _window(8)], lambda L, X, w: L.istft(X, 8, window=w)),
    "istft_longer_length": ([_spec(2, 5, 11), _window(8)],
                            lambda L, X, w: L.istft(X, 8, window=w, length=40)),
    "istft_shorter_length": ([_spec(5, 11), _window(8)],
                             lambda L, X, w: L.istft(X, 8, window=w, length=17)),
    "istft_short_window": ([_spec(5, 11), _window(6)],
                           lambda L, X, w: L.istft(X, 8, 2, 6, window=w, normalized=True)),
    "istft_twosided": ([_spec(8, 11), _window(8)],
                       lambda L, X, w: L.istft(X, 8, window=w, onesided=False)),
    "istft_complex_output": ([_spec(8, 11), _window(8)],
                             lambda L, X, w: L.istft(X, 8, window=w, return_complex=True)),
    "istft_method": ([_spec(5, 11)], lambda L, X: X.istft(8, window=L.ones(8, dtype=L.float64))),
    "round_trip": ([rng.standard_normal((2, 64))],
                   lambda L, x: L.istft(L.stft(x, 16, 4, window=L.hann_window(16, dtype=L.float64),
                                               return_complex=True),
                                        16, 4, window=L.hann_window(16, dtype=L.float64),
                                        length=64)),
}


def _run(lib: Any, arrays: list, fn: Callable) -> tuple:
    """The output (real view), its grad_fn name and the gradients of every input."""
    inputs = [lib.from_numpy(a.copy()).requires_grad_() for a in arrays]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = fn(lib, *inputs)
    real = lib.view_as_real(out) if out.is_complex() else out
    values = real.detach().numpy()
    cot = lib.from_numpy(np.cos(np.arange(values.size)).reshape(values.shape).astype(
        values.dtype))
    grads = lib.autograd.grad(real, inputs, cot)
    return values, type(out.grad_fn).__name__, [g.numpy() for g in grads]


@pytest.mark.parametrize("case", list(CASES))
def test_stft_istft_match_torch(case: str) -> None:
    arrays, fn = CASES[case]
    values, node, grads = _run(tapegrad, arrays, fn)
    t_values, t_node, t_grads = _run(torch, arrays, fn)
    assert node == t_node
    assert values.dtype == t_values.dtype and values.shape == t_values.shape
    f32 = values.dtype == np.float32
    tol = {"rtol": 1e-5, "atol": 1e-5} if f32 else {"rtol": 1e-10, "atol": 1e-12}
    np.testing.assert_allclose(values, t_values, **tol)
    for g, t in zip(grads, t_grads, strict=True):
        np.testing.assert_allclose(g, t, **tol)


x20 = rng.standard_normal(20).astype(np.float32)
X20 = torch.stft(torch.from_numpy(x20), 8, window=torch.ones(8), return_complex=True).numpy()

ERRORS: list[Callable] = [
    lambda L, x, X: L.stft(x, 8),
    lambda L, x, X: L.stft(x, 30, return_complex=True, center=False),
    lambda L, x, X: L.stft(x, 30, win_length=5, return_complex=True, center=False),
    lambda L, x, X: L.stft(x, 8, hop_length=0, return_complex=True),
    lambda L, x, X: L.stft(x, 8, win_length=9, return_complex=True),
    lambda L, x, X: L.stft(x, 8, window=L.ones(7), return_complex=True),
    lambda L, x, X: L.stft(x.reshape(2, 2, 5), 4, return_complex=True),
    lambda L, x, X: L.stft(x.to(L.complex64), 8, onesided=True, return_complex=True),
    lambda L, x, X: L.stft(x.int(), 8, return_complex=True),
    lambda L, x, X: L.stft(x, 8, return_complex=True, align_to_window=True),
    lambda L, x, X: L.stft(x.reshape(1, 20), 8, 1, 7, center=False, align_to_window=True,
                           return_complex=True),
    lambda L, x, X: L.istft(X, 8, window=L.zeros(8)),
    lambda L, x, X: L.istft(X.real, 8),
    lambda L, x, X: L.istft(X, 10),
    lambda L, x, X: L.istft(X, 8, onesided=False),
    lambda L, x, X: L.istft(X, 8, hop_length=9),
    lambda L, x, X: L.istft(X, 8, win_length=9),
    lambda L, x, X: L.istft(X, 8, window=L.ones(7)),
    lambda L, x, X: L.istft(X[:, :0], 8),
    lambda L, x, X: L.istft(X[None, None], 8),
    lambda L, x, X: L.istft(X, 8, return_complex=True),
]


@pytest.mark.parametrize("n", range(len(ERRORS)))
def test_stft_istft_errors_match_torch(n: int) -> None:
    seen = []
    for lib in (torch, tapegrad):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(Exception) as info:
                ERRORS[n](lib, lib.from_numpy(x20), lib.from_numpy(X20))
        seen.append((type(info.value).__name__, str(info.value).replace("tapegrad", "torch")))
    assert seen[0] == seen[1]
