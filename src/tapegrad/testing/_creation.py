"""``make_tensor``: a tensor of a shape and dtype filled with values drawn uniformly from
``[low, high)``, the same values as torch's after the same ``manual_seed``.

The draws are the library's own: ``randint(low, high, shape)`` for booleans and integers (by
default ``[-9, 10)``, booleans ``[0, 2)``), ``empty(shape).uniform_(low, high)`` for floats
(by default ``[-9, 9)``; complex numbers draw their real and imaginary parts through
``view_as_real``). Bounds outside the dtype's range are clamped to it (integer bounds then
rounded up); a range wider than the dtype's largest value is drawn halved and doubled.
"""

from __future__ import annotations

import collections.abc
import math
import warnings
from typing import Any

from .. import _creation, _random
from .._finfo import finfo, iinfo
from .._tensor import Tensor
from ..ops.complex import view_as_real

_INTEGRAL = ("uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64")
_FLOATING = ("float16", "bfloat16", "float32", "float64")
_COMPLEX = ("complex32", "complex64", "complex128")


def _bounds(low: float | None, high: float | None, dtype: Any, lowest: float, highest: float,
            default_low: float, default_high: float, integral: bool) -> tuple:
    """``(low, high)`` checked against each other and the dtype's range ``[lowest,
    highest)`` and clamped into it."""
    low = default_low if low is None else low
    high = default_high if high is None else high
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low!r} and high={high!r}")
    if low == high and not integral:
        warnings.warn("Passing `low==high` to `torch.testing.make_tensor` for floating or "
                      "complex types is deprecated since 2.1 and will be removed in 2.3. "
                      "Use `torch.full(...)` instead.", FutureWarning, stacklevel=3)
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lowest or low >= highest:
        raise ValueError(f"The value interval specified by `low` and `high` is [{low}, {high}), "
                         f"but {dtype} only supports [{lowest}, {highest})")
    low, high = min(max(low, lowest), highest), min(max(high, lowest), highest)
    if integral:  # no value below low; randint's high is exclusive, so it rounds up too
        return math.ceil(low), math.ceil(high)
    return low, high


def make_tensor(*shape: Any, dtype: Any, device: Any, low: float | None = None,
                high: float | None = None, requires_grad: bool = False,
                noncontiguous: bool = False, exclude_zero: bool = False,
                memory_format: Any = None) -> Tensor:
    """A tensor of ``shape`` (sizes, or one sequence of them) and ``dtype`` with values drawn
    uniformly from ``[low, high)``; ``noncontiguous`` takes every other element of a tensor
    twice as long in the last dimension, ``exclude_zero`` replaces zeros by 1 (integers) or the
    dtype's smallest normal number.

    Example:
        >>> import tapegrad as torch
        >>> torch.testing.make_tensor(2, 3, dtype=torch.float32, device="cpu").shape
        torch.Size([2, 3])
    """
    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = tuple(shape[0])
    if noncontiguous and memory_format is not None:
        raise ValueError("The parameters `noncontiguous` and `memory_format` are mutually "
                         f"exclusive, but got noncontiguous={noncontiguous!r} and "
                         f"memory_format={memory_format!r}")
    name = getattr(dtype, "name", None)
    integral = name == "bool" or name in _INTEGRAL
    if requires_grad and integral:
        raise ValueError("`requires_grad=True` is not supported for boolean and integral "
                         f"dtypes, but got dtype={dtype!r}")
    noncontiguous = noncontiguous and math.prod(shape) > 1
    if noncontiguous:  # doubled, so that the elements kept are not all alike
        shape = (*shape[:-1], 2 * shape[-1])

    if name == "bool":
        low, high = _bounds(low, high, dtype, 0, 2, 0, 2, True)
        result = _random.randint(low, high, shape, device=device, dtype=dtype)
    elif name in _INTEGRAL:
        ints = iinfo(dtype)
        # randint cannot draw int64's largest value (its bounds are int64s)
        highest = ints.max + (0 if name == "int64" else 1)
        low, high = _bounds(low, high, dtype, ints.min, highest, -9, 10, True)
        result = _random.randint(low, high, shape, device=device, dtype=dtype)
    elif name in _FLOATING or name in _COMPLEX:
        floats = finfo(dtype)
        largest = floats.max
        low, high = _bounds(low, high, dtype, floats.min, largest, -9, 9, False)
        result = _creation.empty(shape, device=device, dtype=dtype)
        target = view_as_real(result) if name in _COMPLEX else result
        if high - low >= largest:  # uniform_ needs high - low within the dtype's range
            target.uniform_(low / 2, high / 2).mul_(2)
        else:
            target.uniform_(low, high)
    else:
        raise TypeError(f"The requested dtype '{dtype}' is not supported by "
                        "torch.testing.make_tensor(). To request support, file an issue at: "
                        "https://github.com/pytorch/pytorch/issues")

    if noncontiguous:
        result = result[..., 1::2]
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if exclude_zero:
        result[result == 0] = 1 if integral else finfo(dtype).tiny
    if not integral:
        result.requires_grad = requires_grad
    return result
