"""torch.hann_window, hamming_window, blackman_window, bartlett_window and kaiser_window: the
window functions torch has at top level (ATen's; torch.signal.windows has the newer set).

``periodic=True`` (the default) gives the window for spectral analysis: the symmetric window
of ``window_length + 1`` points without its last. With ``N`` the symmetric length and
``n = 0 .. N - 1``:

    hamming: alpha - beta cos(2 pi n / (N - 1))        hann: hamming with alpha = beta = 1/2
    blackman: 0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))
    bartlett: 1 - |2n / (N - 1) - 1|
    kaiser: I0(beta sqrt(1 - ((n - (N - 1)/2) / ((N - 1)/2))^2)) / I0(beta)

Values are computed in float64 and rounded to the requested floating dtype.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from . import _creation, _dtype
from ._tensor import Tensor

_CPP_NAMES = {"int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
              "uint8": "unsigned char", "bool": "bool", "complex64": "c10::complex<float>",
              "complex128": "c10::complex<double>"}


def _window(name: str, window_length: int, periodic: bool, dtype: Any, requires_grad: bool,
            values: Callable[[np.ndarray, int], np.ndarray]) -> Tensor:
    if dtype is None:
        dtype = _dtype.get_default_dtype()
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got "
                           f"window_length={window_length}")
    if not dtype.is_floating_point:
        rg = "true" if requires_grad else "false (default)"
        raise RuntimeError(
            f"{name} expects floating point dtypes, got: TensorOptions(dtype="
            f"{_CPP_NAMES.get(dtype.name, dtype.name)}, device=cpu, layout=Strided (default), "
            f"requires_grad={rg}, pinned_memory=false, memory_format=(nullopt))")
    if window_length == 0:
        return _creation.empty((0,), dtype=dtype, requires_grad=requires_grad)
    if window_length == 1:
        return _creation.ones((1,), dtype=dtype, requires_grad=requires_grad)
    N = window_length + 1 if periodic else window_length
    w = values(np.arange(N, dtype=np.float64), N)[:window_length]
    out = Tensor._make(np.ascontiguousarray(w).astype(dtype.np))
    out.requires_grad_(requires_grad)
    return out


def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54,
                   beta: float = 0.46, *, dtype: Any = None, layout: Any = None,
                   device: Any = None, pin_memory: bool = False,
                   requires_grad: bool = False) -> Tensor:
    return _window("hamming_window", window_length, periodic, dtype, requires_grad,
                   lambda n, N: alpha - beta * np.cos(2 * np.pi * n / (N - 1)))


def hann_window(window_length: int, periodic: bool = True, *, dtype: Any = None,
                layout: Any = None, device: Any = None, pin_memory: bool = False,
                requires_grad: bool = False) -> Tensor:
    return _window("hann_window", window_length, periodic, dtype, requires_grad,
                   lambda n, N: 0.5 - 0.5 * np.cos(2 * np.pi * n / (N - 1)))


def blackman_window(window_length: int, periodic: bool = True, *, dtype: Any = None,
                    layout: Any = None, device: Any = None, pin_memory: bool = False,
                    requires_grad: bool = False) -> Tensor:
    return _window("blackman_window", window_length, periodic, dtype, requires_grad,
                   lambda n, N: (0.42 - 0.5 * np.cos(2 * np.pi * n / (N - 1))
                                 + 0.08 * np.cos(4 * np.pi * n / (N - 1))))


def bartlett_window(window_length: int, periodic: bool = True, *, dtype: Any = None,
                    layout: Any = None, device: Any = None, pin_memory: bool = False,
                    requires_grad: bool = False) -> Tensor:
    return _window("bartlett_window", window_length, periodic, dtype, requires_grad,
                   lambda n, N: 1 - np.abs(2 * n / (N - 1) - 1))


def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0, *,
                  dtype: Any = None, layout: Any = None, device: Any = None,
                  pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    def values(n: np.ndarray, N: int) -> np.ndarray:
        half = (N - 1) / 2
        return np.i0(beta * np.sqrt(np.clip(1 - ((n - half) / half) ** 2, 0, None))) / np.i0(beta)

    return _window("kaiser_window", window_length, periodic, dtype, requires_grad, values)


__all__ = ["bartlett_window", "blackman_window", "hamming_window", "hann_window",
           "kaiser_window"]
