"""Finite differences and numerical integration along a dimension: ``diff``, ``gradient``,
``trapezoid`` (``trapz``) and ``cumulative_trapezoid``.

Each is a composite of differentiable ops, put together as torch puts it together, so the
result carries torch's ``grad_fn`` (``diff`` ends in a subtraction, ``gradient`` in a ``cat``,
``trapezoid`` in a multiplication or a division by 2, ``cumulative_trapezoid`` in a ``cumsum``
or a division) and float32 rounds as torch's does. Integer inputs follow torch's promotion:
a difference of integers stays an integer; a scale by a float makes the default float dtype.

    diff:        out_i = x_{i+1} - x_i                     (n times; bool: x_{i+1} xor x_i)
    gradient:    (x_{i+1} - x_{i-1}) / 2h inside, one-sided differences at the two edges
    trapezoid:   sum_i (x_{i+1} - x_i) (y_i + y_{i+1}) / 2
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._tensor import Tensor, _wrap_dim
from .elementwise import copy_
from .factories import zeros, zeros_like
from .nn_common import _div_scalar, _mul_scalar  # x / c, x * c with a number c (ATen's nodes)
from .shape import cat


def _slice(t: Tensor, dim: int, start: int | None, stop: int | None = None) -> Tensor:
    """``t`` restricted to ``start:stop`` along ``dim`` (at::slice)."""
    return t[(slice(None),) * dim + (slice(start, stop),)]


# ---------------------------------------------------------------------------------------------
# diff
# ---------------------------------------------------------------------------------------------

def _check_edge(input: Tensor, t: Tensor, dim: int) -> None:
    if t.ndim != input.ndim:
        raise RuntimeError("diff expects prepend or append to be the same dimension as input")
    for d in range(input.ndim):
        if d != dim and t.shape[d] != input.shape[d]:
            raise RuntimeError(
                "diff expects the shape of tensor to prepend or append to match that of input "
                f"except along the differencing dimension; input.size({d}) = {input.shape[d]}, "
                f"but got tensor.size({d}) = {t.shape[d]}")


def diff(input: Tensor, n: int = 1, dim: int = -1, prepend: Tensor | None = None,
         append: Tensor | None = None) -> Tensor:
    """The n-th forward difference along ``dim``, after gluing ``prepend`` and ``append`` on.

    >>> import tapegrad as torch
    >>> torch.diff(torch.tensor([1, 3, 2]))
    tensor([ 2, -1])
    """
    for name, edge in (("prepend", prepend), ("append", append)):
        if edge is not None and not isinstance(edge, Tensor):
            raise TypeError(f"diff(): argument '{name}' must be Tensor, not "
                            f"{type(edge).__name__}")
    if input.ndim < 1:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = _wrap_dim(dim, input.ndim)
    if n == 0:  # a copy of the input alone, as torch makes it (zeros_like(x).copy_(x))
        return copy_(zeros_like(input), input)
    parts = []
    for edge, before in ((prepend, True), (append, False)):
        if edge is None:
            continue
        _check_edge(input, edge, d)
        parts.append((edge, before))
    x = input
    if parts:
        x = cat([p for p, b in parts if b] + [input] + [p for p, b in parts if not b], d)
    for _ in range(min(n, x.shape[d])):
        hi, lo = _slice(x, d, 1), _slice(x, d, None, -1)
        x = hi.logical_xor(lo) if x._data.dtype == np.bool_ else hi - lo
    return x


# ---------------------------------------------------------------------------------------------
# gradient
# ---------------------------------------------------------------------------------------------

_SPACING_LEN = ("torch.gradient expected spacing to be unspecified, a scalar, or a list of length "
                "equal to 'self.dim() = {ndim}', since dim argument was not given, but got a list "
                "of length {n}")
_SPACING_DIM = ("torch.gradient expected spacing to be unspecified, a scalar or it's spacing and "
                "dim arguments to have the same length, but got a spacing argument of length {n} "
                "and a dim argument of length {d}.")


def _gradient_dims(input: Tensor, dim: Any) -> tuple[list[int], bool]:
    """The dims asked for (all by default) and whether a dim was given."""
    if dim is None:
        return list(range(input.ndim)), False
    dims = [dim] if isinstance(dim, int) else list(dim)
    seen = set()
    for d in dims:
        w = _wrap_dim(d, input.ndim)
        if w in seen:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        seen.add(w)
    return dims, True


def gradient(input: Tensor, *, spacing: Any = None, dim: Any = None,
             edge_order: int = 1) -> tuple:
    """Central differences of ``input`` along each dim in ``dim`` (every dim by default),
    one-sided (first or second order, ``edge_order``) at the edges. ``spacing`` is a number
    (the step of every dim), a list of numbers (one step per dim), or a list of 1-d tensors
    (the coordinates of the samples along each dim). Returns one tensor per dim.

    >>> import tapegrad as torch
    >>> torch.gradient(torch.tensor([1., 2., 4., 8.]))
    (tensor([1.0000, 1.5000, 3.0000, 4.0000]),)
    """
    if input.dtype.name == "uint8":
        raise RuntimeError("torch.gradient does not support uint8 input.")
    dims, given = _gradient_dims(input, dim)
    tensors = isinstance(spacing, (list, tuple)) and any(isinstance(s, Tensor) for s in spacing)
    if isinstance(spacing, (list, tuple)):
        n = len(spacing)
        if not given and n != input.ndim:
            raise RuntimeError(_SPACING_LEN.format(ndim=input.ndim, n=n))
        if given and n != len(dims):
            raise RuntimeError(_SPACING_DIM.format(n=n, d=len(dims)))
        steps = list(spacing)
    elif isinstance(spacing, Tensor):
        raise TypeError("gradient(): argument 'spacing' must be tuple of Tensors, not Tensor")
    else:
        steps = [1.0 if spacing is None else spacing] * len(dims)
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    for d in dims:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError(
                "torch.gradient expected each dimension size to be at least edge_order+1")
    if tensors:
        for s in steps:
            if s.ndim != 1:
                raise RuntimeError("torch.gradient expected each element of spacing to have one "
                                   f"dimension, but got an element with {s.ndim} dimensions!")
        return tuple(_gradient_coords(input, s, _wrap_dim(d, input.ndim), edge_order)
                     for s, d in zip(steps, dims, strict=True))
    return tuple(_gradient_step(input, h, _wrap_dim(d, input.ndim), edge_order)
                 for h, d in zip(steps, dims, strict=True))


def _gradient_step(x: Tensor, h: Any, d: int, edge_order: int) -> Tensor:
    """Evenly spaced samples, step ``h``."""
    center = (_slice(x, d, 2) - _slice(x, d, 0, -2)) / h
    if edge_order == 1:
        first = (_slice(x, d, 1, 2) - _slice(x, d, 0, 1)) / h
        last = (_slice(x, d, -1) - _slice(x, d, -2, -1)) / h
    else:  # second-order one-sided: (-3/2 x0 + 2 x1 - 1/2 x2) / h, and its mirror
        first = (_slice(x, d, 0, 1) * -1.5 + _slice(x, d, 1, 2) * 2
                 - _slice(x, d, 2, 3) * 0.5) / h
        last = (_slice(x, d, -3, -2) * 0.5 + _slice(x, d, -2, -1) * -2
                + _slice(x, d, -1) * 1.5) / h
    return cat([first, center / 2, last], d)


def _gradient_coords(x: Tensor, coords: Tensor, d: int, edge_order: int) -> Tensor:
    """Samples at the coordinates ``coords``: the second-order three-point formula of
    unevenly spaced points, h1 = x_i - x_{i-1}, h2 = x_{i+1} - x_i:
    f' ~ -h2/(h1(h1+h2)) f_{i-1} + (h2-h1)/(h1 h2) f_i + h1/(h2(h1+h2)) f_{i+1}."""
    shape = [1] * x.ndim
    shape[d] = -1
    h = diff(coords, 1, 0)
    h1, h2 = _slice(h, 0, None, -1), _slice(h, 0, 1)
    a = (-h2 / (h1 * (h1 + h2))).reshape(shape)
    b = ((h2 - h1) / (h1 * h2)).reshape(shape)
    c = (h1 / (h2 * (h1 + h2))).reshape(shape)
    center = a * _slice(x, d, 0, -2) + b * _slice(x, d, 1, -1) + c * _slice(x, d, 2)
    if edge_order == 1:
        first = (_slice(x, d, 1, 2) - _slice(x, d, 0, 1)) / h[0]
        last = (_slice(x, d, -1) - _slice(x, d, -2, -1)) / h[-1]
    else:
        h0, h1_ = h[0], h[1]
        a = -(2.0 * h0 + h1_) / (h0 * (h0 + h1_))
        b = (h0 + h1_) / (h0 * h1_)
        c = (-h0) / (h1_ * (h0 + h1_))
        first = a * _slice(x, d, 0, 1) + b * _slice(x, d, 1, 2) + c * _slice(x, d, 2, 3)
        hl, hk = h[-1], h[-2]
        a = hl / (hk * (hl + hk))
        b = -(hl + hk) / (hl * hk)
        c = (2 * hl + hk) / (hl * (hl + hk))
        last = a * _slice(x, d, -3, -2) + b * _slice(x, d, -2, -1) + c * _slice(x, d, -1)
    return cat([first, center, last], d)


# ---------------------------------------------------------------------------------------------
# trapezoid, cumulative_trapezoid
# ---------------------------------------------------------------------------------------------

def _integration_args(name: str, y: Tensor, x: Any, dx: Any, dim: int) -> tuple:
    """(wrapped dim, x viewed so that its differences broadcast against y's, or None)."""
    if y.ndim == 0:
        if name == "trapezoid":
            raise IndexError("Dimension specified as -1 but tensor has no dimensions"
                             if dim == -1 else f"Dimension specified as {dim} but tensor has "
                             "no dimensions")
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, y.ndim)
    if x is not None and dx is not None:
        raise TypeError(f"{name}() received an invalid combination of arguments - got both x "
                        "and dx")
    if isinstance(x, Tensor):
        if y._data.dtype == np.bool_ or x._data.dtype == np.bool_:
            raise RuntimeError(f"{name}: received a bool input for `x` or `y`, but bool is not "
                               "supported")
        if x.ndim == 1:
            if x.shape[0] != y.shape[d]:
                raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
            shape = [1] * y.ndim
            shape[d] = x.shape[0]
            x = x.reshape(shape)
        elif x.ndim < y.ndim:
            x = x.reshape((1,) * (y.ndim - x.ndim) + tuple(x.shape))
        return d, x
    if x is not None:  # trapezoid(y, 2.0): a number in x's place is dx
        dx = x
    if y._data.dtype == np.bool_:
        raise RuntimeError(f"{name}: received a bool input for `y`, but bool is not supported")
    if dx is not None and (isinstance(dx, (bool, complex)) or isinstance(dx, Tensor)):
        raise RuntimeError(f"{name}: Currently, we only support dx as a real number.")
    return d, None


def trapezoid(y: Tensor, x: Any = None, *, dx: Any = 1, dim: int = -1) -> Tensor:
    """The trapezoidal rule along ``dim``: samples ``y`` at points ``x`` (a tensor), or
    spaced ``dx`` apart (1 by default).

    >>> import tapegrad as torch
    >>> torch.trapezoid(torch.tensor([1., 5., 10.]))
    tensor(10.5000)
    """
    d, xs = _integration_args("trapezoid", y, x, None if x is not None and dx == 1 else dx, dim)
    if y.shape[d] == 0:  # no samples: an integral of 0, as NumPy
        shape = list(y.shape)
        del shape[d]
        return zeros(shape, dtype=y.dtype)
    if xs is not None:  # sum((x_{i+1} - x_i) (y_i + y_{i+1})) / 2
        step = _slice(xs, d, 1) - _slice(xs, d, None, -1)
        return _div_scalar((step * (_slice(y, d, 1) + _slice(y, d, None, -1))).sum(d),
                           other=2.0)
    h = 1.0 if dx is None else (x if x is not None else dx)
    # evenly spaced: (sum(y) - (y_0 + y_last) / 2) h
    return _mul_scalar(y.sum(d) - (y.select(d, 0) + y.select(d, -1)) * 0.5, other=float(h))


def trapz(y: Tensor, x: Any = None, *, dx: Any = 1, dim: int = -1) -> Tensor:
    """An alias of :func:`trapezoid`."""
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y: Tensor, x: Any = None, *, dx: Any = 1, dim: int = -1) -> Tensor:
    """The running trapezoidal integral along ``dim`` (one fewer element than ``y``).

    >>> import tapegrad as torch
    >>> torch.cumulative_trapezoid(torch.tensor([1., 5., 10.]))
    tensor([ 3.0000, 10.5000])
    """
    d, xs = _integration_args("cumulative_trapezoid", y, x,
                              None if x is not None and dx == 1 else dx, dim)
    pairs = _slice(y, d, None, -1) + _slice(y, d, 1)
    if xs is not None:  # cumsum((x_{i+1} - x_i) (y_i + y_{i+1})) / 2
        step = _slice(xs, d, 1) - _slice(xs, d, None, -1)
        return _div_scalar((step * pairs).cumsum(d), other=2.0)
    h = 1.0 if dx is None else (x if x is not None else dx)
    return (float(h) / 2.0 * pairs).cumsum(d)


METHODS = {"diff": diff}

__all__ = ["diff", "gradient", "trapezoid", "trapz", "cumulative_trapezoid"]
