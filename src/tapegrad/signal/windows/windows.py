"""The window functions of torch.signal.windows (Hann, Gaussian, Kaiser, ...): ``M`` samples of
a taper, built from tapegrad ops in the order torch builds them (so float32 rounds alike).

``sym=True`` gives the symmetric window (filter design); ``sym=False`` the periodic one (spectral
analysis): the symmetric window of ``M + 1`` points without its last. Each is a cosine sum,
an exponential or a Bessel taper of a ``linspace`` grid ``k``:

    general_cosine: sum_i (-1)^i a_i cos(i k),  k = 0 .. 2 pi (M - 1) / (M - 1 or M)
    hann / hamming: general_cosine with a = (alpha, 1 - alpha)
    gaussian: exp(-k^2), k = n / (std sqrt 2);   exponential: exp(-|n - center| / tau)
    kaiser: I0(sqrt(beta^2 - k^2)) / I0(beta), k = -beta .. beta
    bartlett: 1 - |k|, k = -1 .. 1;              cosine: sin(k), k = pi (n + 1/2) / M
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from ... import _creation, _dtype
from ..._layout import strided
from ..._tensor import Tensor
from ...ops import elementwise as ew
from ...ops import reduction as rd
from ...ops import special as sp

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
           "general_hamming", "hamming", "hann", "kaiser", "nuttall"]


def _checks(name: str, M: int, dtype: Any, layout: Any) -> Any:
    """torch's argument checks; returns the dtype (the default one when None)."""
    if dtype is None:
        dtype = _dtype.get_default_dtype()
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not None and layout is not strided and layout != "torch.strided":
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    if dtype not in (_dtype.float32, _dtype.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")
    return dtype


def _empty(dtype: Any, requires_grad: bool) -> Tensor:
    return _creation.empty((0,), dtype=dtype, requires_grad=requires_grad)


def _grid(start: Any, end: Any, M: int, dtype: Any, requires_grad: bool) -> Tensor:
    return _creation.linspace(start, end, M, dtype=dtype, requires_grad=requires_grad)


def exponential(M: int, *, center: float | None = None, tau: float = 1.0, sym: bool = True,
                dtype: Any = None, layout: Any = None, device: Any = None,
                requires_grad: bool = False) -> Tensor:
    dtype = _checks("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if M == 0:
        return _empty(dtype, requires_grad)
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    constant = 1 / tau
    k = _grid(-center * constant, (-center + (M - 1)) * constant, M, dtype, requires_grad)
    return ew.exp(-ew.abs(k))


def cosine(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = None,
           device: Any = None, requires_grad: bool = False) -> Tensor:
    dtype = _checks("cosine", M, dtype, layout)
    if M == 0:
        return _empty(dtype, requires_grad)
    start = 0.5
    constant = math.pi / (M + 1 if not sym and M > 1 else M)
    k = _grid(start * constant, (start + (M - 1)) * constant, M, dtype, requires_grad)
    return ew.sin(k)


def gaussian(M: int, *, std: float = 1.0, sym: bool = True, dtype: Any = None,
             layout: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    dtype = _checks("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    if M == 0:
        return _empty(dtype, requires_grad)
    start = -(M if not sym and M > 1 else M - 1) / 2.0
    constant = 1 / (std * math.sqrt(2))
    k = _grid(start * constant, (start + (M - 1)) * constant, M, dtype, requires_grad)
    return ew.exp(-(k**2))


def kaiser(M: int, *, beta: float = 12.0, sym: bool = True, dtype: Any = None,
           layout: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    dtype = _checks("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    if M == 0:
        return _empty(dtype, requires_grad)
    if M == 1:
        return _creation.ones((1,), dtype=dtype, requires_grad=requires_grad)
    b = _creation.tensor(beta, dtype=dtype)
    start = -b
    constant = 2.0 * b / (M if not sym else M - 1)
    end = ew.minimum(b, start + (M - 1) * constant)
    k = _grid(start.item(), end.item(), M, dtype, requires_grad)
    return sp.i0(ew.sqrt(b * b - ew.pow(k, 2))) / sp.i0(b)


def hamming(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = None,
            device: Any = None, requires_grad: bool = False) -> Tensor:
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, requires_grad=requires_grad)


def hann(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = None,
         device: Any = None, requires_grad: bool = False) -> Tensor:
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout,
                           requires_grad=requires_grad)


def blackman(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = None,
             device: Any = None, requires_grad: bool = False) -> Tensor:
    dtype = _checks("blackman", M, dtype, layout)
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype,
                          requires_grad=requires_grad)


def bartlett(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = None,
             device: Any = None, requires_grad: bool = False) -> Tensor:
    dtype = _checks("bartlett", M, dtype, layout)
    if M == 0:
        return _empty(dtype, requires_grad)
    if M == 1:
        return _creation.ones((1,), dtype=dtype, requires_grad=requires_grad)
    start = -1
    constant = 2 / (M if not sym else M - 1)
    k = _grid(start, start + (M - 1) * constant, M, dtype, requires_grad)
    return 1 - ew.abs(k)


def general_cosine(M: int, *, a: Iterable, sym: bool = True, dtype: Any = None,
                   layout: Any = None, device: Any = None,
                   requires_grad: bool = False) -> Tensor:
    dtype = _checks("general_cosine", M, dtype, layout)
    if M == 0:
        return _empty(dtype, requires_grad)
    if M == 1:
        return _creation.ones((1,), dtype=dtype, requires_grad=requires_grad)
    if not isinstance(a, Iterable):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    constant = 2 * math.pi / (M if not sym else M - 1)
    k = _grid(0, (M - 1) * constant, M, dtype, requires_grad)
    a_i = _creation.tensor([(-1) ** i * w for i, w in enumerate(a)], dtype=dtype,
                           requires_grad=requires_grad)
    i = _creation.arange(a_i.shape[0], dtype=a_i.dtype, requires_grad=a_i.requires_grad)
    return rd.sum(a_i.unsqueeze(-1) * ew.cos(i.unsqueeze(-1) * k), 0)


def general_hamming(M: int, *, alpha: float = 0.54, sym: bool = True, dtype: Any = None,
                    layout: Any = None, device: Any = None,
                    requires_grad: bool = False) -> Tensor:
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout,
                          requires_grad=requires_grad)


def nuttall(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = None,
            device: Any = None, requires_grad: bool = False) -> Tensor:
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym,
                          dtype=dtype, layout=layout, requires_grad=requires_grad)
