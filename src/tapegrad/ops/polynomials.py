"""The classical orthogonal polynomials of ``torch.special``: Chebyshev (T, U, V, W and their
shifted forms on [0, 1]), Hermite (physicists' H and probabilists' He), Laguerre and Legendre.

Each is evaluated as torch evaluates it: the three-term recurrence, in the result's own dtype,
run up to the element's degree ``n`` (truncated to an integer); some kinds switch to the closed
trigonometric form for large ``n`` inside (-1, 1), and each has its exact values at the ends
of its interval. ``n < 0`` gives 0. torch gives these functions no derivative: the results
never require grad.

    T_{k+1}(x) = 2x T_k(x) - T_{k-1}(x)          T_n(x) = cos(n acos x)      (|x| < 1, n > 6)
    H_{k+1}(x) = 2x H_k(x) - 2k H_{k-1}(x)       He_{k+1}(x) = x He_k(x) - k He_{k-1}(x)
    (k+1) L_{k+1}(x) = (2k+1-x) L_k(x) - k L_{k-1}(x)
    (k+1) P_{k+1}(x) = (2k+1) x P_k(x) - k P_{k-1}(x)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import _dtype
from .._tensor import Tensor

_NUMBERS = (bool, int, float)


def _fused(a: np.ndarray, q: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a q - b`` rounded once, as a fused multiply-add (torch's float32 kernels contract the
    product into an FMA; float32 products are exact in float64)."""
    if a.dtype == np.float32:
        return (a.astype(np.float64) * q - b.astype(np.float64)).astype(np.float32)
    return a * q - b


def _recurrence(x: np.ndarray, n: np.ndarray, first: np.ndarray,
                step: Callable[[int, np.ndarray], tuple]) -> np.ndarray:
    """Degree ``n`` (per element) of the sequence 1, ``first``, ... where each next term is
    ``(a q - b) / d`` for ``a, b, d = step(k, p)`` (q the last term, p the one before)."""
    one = np.ones_like(x)
    p, q = one, first * one
    top = int(n.max()) if n.size else 0
    with np.errstate(all="ignore"):
        for k in range(2, top + 1):
            a, b, d = step(k, p)
            r = _fused(a * one, q, b * one)
            if d != 1:
                r = r / x.dtype.type(d)
            more = k <= n
            p, q = np.where(more, q, p), np.where(more, r, q)
    return np.where(n == 0, one, q)


def _ends(x: np.ndarray, n: np.ndarray, value: np.ndarray,
          cases: list[tuple[np.ndarray, Any]]) -> np.ndarray:
    """``value``, overridden by the first matching ``(condition, value)`` case."""
    for cond, v in reversed(cases):
        value = np.where(cond, v, value)
    return value


def _t(x: np.ndarray, n: np.ndarray, big: int = 6) -> np.ndarray:
    two_x = x + x
    v = _recurrence(x, n, x, lambda k, p: (two_x, p, 1))
    even = n % 2 == 0
    with np.errstate(all="ignore"):
        trig = np.cos(n * np.arccos(x))
    return _ends(x, n, v, [(n < 0, 0), (np.abs(x) == 1, np.where((x > 0) | even, 1, -1)),
                           ((n > big) & (np.abs(x) < 1), trig)])


def _u(x: np.ndarray, n: np.ndarray, big: int = 8) -> np.ndarray:
    two_x = x + x
    v = _recurrence(x, n, two_x, lambda k, p: (two_x, p, 1))
    even = n % 2 == 0
    with np.errstate(all="ignore"):
        theta = np.arccos(x)
        s = np.sin(theta)
        trig = np.where(s != 0, np.sin((n + 1) * theta) / s, (n + 1) * np.cos((n + 1) * theta) / x)
    return _ends(x, n, v, [(n < 0, 0),
                           (np.abs(x) == 1, np.where((x > 0) | even, n + 1, -(n + 1))),
                           ((n > big) & (np.abs(x) < 1), trig)])


def _v(x: np.ndarray, n: np.ndarray, big: int = 8) -> np.ndarray:
    two_x = x + x
    v = _recurrence(x, n, two_x - 1, lambda k, p: (two_x, p, 1))
    odd_sign = np.where(n % 2 == 0, n + n + 1, -(n + n + 1))
    with np.errstate(all="ignore"):
        theta = np.arccos(x)
        trig = np.where(np.sin(theta / 2) != 1, np.cos((n + 0.5) * theta) / np.cos(theta / 2),
                        odd_sign)
    return _ends(x, n, v, [(n < 0, 0), (np.abs(x) == 1, np.where(x > 0, 1, odd_sign)),
                           ((n > big) & (np.abs(x) < 1), trig)])


def _w(x: np.ndarray, n: np.ndarray, big: int = 8) -> np.ndarray:
    two_x = x + x
    v = _recurrence(x, n, two_x + 1, lambda k, p: (two_x, p, 1))
    at_ends = np.where(x > 0, n + n + 1, np.where(n % 2 == 0, 1, -1))
    with np.errstate(all="ignore"):
        theta = np.arccos(x)
        trig = np.where(np.cos(theta / 2) != 1, np.sin((n + 0.5) * theta) / np.sin(theta / 2),
                        at_ends)
    return _ends(x, n, v, [(n < 0, 0), (np.abs(x) == 1, at_ends),
                           ((n > big) & (np.abs(x) < 1), trig)])


def _shifted(kind: Callable, big: int) -> Callable:
    """The shifted polynomial on [0, 1]: the polynomial at ``2x - 1`` (torch switches to the
    trigonometric form from degree ``big + 1``)."""
    return lambda x, n: kind(x + x - 1, n, big)


def _h(x: np.ndarray, n: np.ndarray) -> np.ndarray:
    two_x = x + x
    v = _recurrence(x, n, two_x, lambda k, p: (two_x, x.dtype.type(2 * (k - 1)) * p, 1))
    return np.where(n < 0, 0, v)


def _he(x: np.ndarray, n: np.ndarray) -> np.ndarray:
    v = _recurrence(x, n, x, lambda k, p: (x, x.dtype.type(k - 1) * p, 1))
    return np.where(n < 0, 0, v)


def _l(x: np.ndarray, n: np.ndarray) -> np.ndarray:
    one_minus_x = 1 - x
    v = _recurrence(x, n, one_minus_x,
                    lambda k, p: (2 * (k - 1) + one_minus_x, x.dtype.type(k - 1) * p, k))
    return _ends(x, n, v, [(n < 0, 0), (np.abs(x) == 0, 1)])


def _p(x: np.ndarray, n: np.ndarray) -> np.ndarray:
    v = _recurrence(x, n, x, lambda k, p: (x.dtype.type(2 * k - 1) * x, x.dtype.type(k - 1) * p, k))
    at_ends = np.where((x > 0) | (n % 2 == 0), 1, -1)
    return _ends(x, n, v, [(n < 0, 0), (np.abs(x) == 1, at_ends)])


def _public(name: str, kernel: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Callable:
    def fn(x: Any, n: Any) -> Tensor:
        if not isinstance(x, Tensor) and not isinstance(n, Tensor):
            raise TypeError(
                f"special_{name}() received an invalid combination of arguments - got "
                f"({type(x).__name__}, {type(n).__name__}), but expected one of:\n"
                " * (Tensor x, Tensor n, *, Tensor out = None)\n"
                " * (Number x, Tensor n, *, Tensor out = None)\n"
                " * (Tensor x, Number n, *, Tensor out = None)\n")
        for v in (x, n):
            if not isinstance(v, (Tensor,) + _NUMBERS):
                raise TypeError(f"special_{name}(): argument 'n' must be Tensor, not "
                                f"{type(v).__name__}")
        dt = _dtype.result_type(x, n)
        if not dt.is_floating_point:
            dt = _dtype.get_default_dtype()
        x = np.asarray(x._data if isinstance(x, Tensor) else x, dtype=dt.np)
        deg = np.asarray(n._data if isinstance(n, Tensor) else n, dtype=dt.np)
        x, deg = np.broadcast_arrays(x, deg)
        with np.errstate(invalid="ignore"):
            degree = np.where(np.isfinite(deg), deg, 0).astype(np.int64)
        return Tensor._make(np.asarray(kernel(x, degree), dtype=dt.np))

    fn.__name__ = fn.__qualname__ = name
    return fn


chebyshev_polynomial_t = _public("chebyshev_polynomial_t", _t)
chebyshev_polynomial_u = _public("chebyshev_polynomial_u", _u)
chebyshev_polynomial_v = _public("chebyshev_polynomial_v", _v)
chebyshev_polynomial_w = _public("chebyshev_polynomial_w", _w)
shifted_chebyshev_polynomial_t = _public("shifted_chebyshev_polynomial_t",
                                         _shifted(_t, 6))
shifted_chebyshev_polynomial_u = _public("shifted_chebyshev_polynomial_u",
                                         _shifted(_u, 6))
shifted_chebyshev_polynomial_v = _public("shifted_chebyshev_polynomial_v",
                                         _shifted(_v, 6))
shifted_chebyshev_polynomial_w = _public("shifted_chebyshev_polynomial_w",
                                         _shifted(_w, 4))
hermite_polynomial_h = _public("hermite_polynomial_h", _h)
hermite_polynomial_he = _public("hermite_polynomial_he", _he)
laguerre_polynomial_l = _public("laguerre_polynomial_l", _l)
legendre_polynomial_p = _public("legendre_polynomial_p", _p)

__all__ = [
    "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
    "chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
    "laguerre_polynomial_l", "legendre_polynomial_p", "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w",
]
