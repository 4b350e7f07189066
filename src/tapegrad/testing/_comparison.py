"""``assert_close``: are two (possibly nested) results close, and if not, what differs, in
torch's words.

The inputs are walked together: sequences item by item (the same length), mappings key by key
(the same keys), and each pair of leaves is compared by the first kind that takes both:

* ``None`` and ``None``;
* booleans (``bool``, ``numpy.bool_``): the same truth;
* numbers (``int``, ``float``, ``complex``, NumPy scalars): equal, or within the tolerances of
  their type (int64, float64, complex128);
* tensors, or values of one kind that make one (NumPy arrays): the same shape, layout,
  device, dtype (and strides with ``check_stride``), then ``|actual - expected| <= atol +
  rtol * |expected|`` elementwise, with tolerances of the dtype unless given.

The first difference raises: an ``AssertionError`` saying what differs (for tensors, how many
elements, and the greatest absolute and relative differences and where), followed by where in
the nesting it occurred; a ``TypeError`` for values no kind takes.
"""

from __future__ import annotations

import cmath
import collections.abc
import contextlib
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import _dtype
from .._creation import as_tensor
from .._tensor import Tensor
from ..ops.elementwise import isclose_kernel

# (rtol, atol) of each dtype; other dtypes (integers, bool) compare exactly
PRECISIONS = {
    "float16": (0.001, 1e-5),
    "bfloat16": (0.016, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
    "complex32": (0.001, 1e-5),
    "complex64": (1.3e-6, 1e-5),
    "complex128": (1e-7, 1e-7),
}
_NUMBER_DTYPES = {int: "int64", float: "float64", complex: "complex128"}


class Mismatch(Exception):
    """A difference found: the exception type and message to raise, and where in the nesting
    (keys and indices)."""

    def __init__(self, kind: type[Exception], msg: str, where: tuple = ()) -> None:
        super().__init__(msg)
        self.kind = kind
        self.msg = msg
        self.where = where

    def error(self, msg: str | Callable[[str], str] | None = None) -> Exception:
        if isinstance(msg, str):
            return self.kind(msg)
        text = self.msg
        if self.where:
            text += "\n\nThe failure occurred for item " + "".join(
                str([item]) for item in self.where)
        return self.kind(msg(text) if callable(msg) else text)


class _NotThisKind(Exception):
    """These two values are not for this comparison (the next one is tried)."""


def tolerances(dtypes: list[str], rtol: float | None, atol: float | None,
               where: tuple) -> tuple[float, float]:
    """``(rtol, atol)``: both given, or the loosest defaults of ``dtypes``."""
    if (rtol is None) != (atol is None):
        raise Mismatch(ValueError, "Both 'rtol' and 'atol' must be either specified or "
                                   f"omitted, but got no {'rtol' if rtol is None else 'atol'}.",
                       where)
    if rtol is not None and atol is not None:
        return rtol, atol
    pairs = [PRECISIONS.get(d, (0.0, 0.0)) for d in dtypes]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def _difference_message(name: str, extra: str | None, abs_diff: Any, abs_at: Any,
                        rel_diff: Any, rel_at: Any, rtol: float, atol: float) -> str:
    """``<name> are not close!`` (``equal`` without tolerances), then ``extra`` and the
    greatest absolute and relative differences (where, and what was allowed)."""
    exact = rtol == 0 and atol == 0
    lines = [f"{name} are not {'equal' if exact else 'close'}!", ""]
    if extra:
        lines.append(extra.strip())
    for kind, diff, at, tol in (("absolute", abs_diff, abs_at, atol),
                                ("relative", rel_diff, rel_at, rtol)):
        line = (f"{kind.title()} difference: {diff}" if at is None else
                f"Greatest {kind} difference: {diff} at index {at}")
        if not exact:
            line += f" (up to {tol} allowed)"
        lines.append(line)
    return "\n".join(lines).strip()


def scalar_message(actual: Any, expected: Any, rtol: float, atol: float) -> str:
    diff = abs(actual - expected)
    rel = float("inf") if expected == 0 else diff / abs(expected)
    return _difference_message("Scalars", f"Expected {expected} but got {actual}.", diff, None,
                               rel, None, rtol, atol)


def tensor_message(actual: Tensor, expected: Tensor, close: np.ndarray, rtol: float,
                   atol: float) -> str:
    """The mismatch counts and the greatest differences among the elements not close."""
    total = close.size
    wrong = total - int(close.sum())
    extra = f"Mismatched elements: {wrong} / {total} ({wrong / total:.1%})"
    a = actual.detach().reshape(-1)
    e = expected.detach().reshape(-1)
    if not (actual.dtype.is_floating_point or actual.dtype.is_complex):
        a, e = a.to(_dtype.int64), e.to(_dtype.int64)  # (no overflow in the difference)
    flat_close = Tensor._make(close.reshape(-1))
    abs_diff = (a - e).abs()
    abs_diff[flat_close] = 0
    rel_diff = abs_diff / e.abs()
    rel_diff[flat_close] = 0
    abs_max, abs_at = abs_diff.max(0)
    rel_max, rel_at = rel_diff.max(0)

    def index(flat: int) -> tuple:
        return tuple(int(i) for i in np.unravel_index(flat, close.shape)) if close.shape else ()

    return _difference_message("Tensor-likes", extra, abs_max.item(), index(int(abs_at)),
                               rel_max.item(), index(int(rel_at)), rtol, atol)


# -- the kinds of leaves -----------------------------------------------------------------------

# Each kind takes the two leaves (or raises _NotThisKind) and returns their comparison, run once
# every leaf has found its kind (so that a leaf no kind takes is reported before a difference).

def _compare_none(actual: Any, expected: Any, where: tuple, **_: Any) -> Callable[[], None]:
    if not (actual is None or expected is None):
        raise _NotThisKind

    def compare() -> None:
        if not (actual is None and expected is None):
            raise Mismatch(AssertionError, f"None mismatch: {actual} is not {expected}", where)

    return compare


def _compare_bools(actual: Any, expected: Any, where: tuple, **_: Any) -> Callable[[], None]:
    kinds = (bool, np.bool_)
    if not (isinstance(actual, kinds) and isinstance(expected, kinds)):
        raise _NotThisKind
    a, e = bool(actual), bool(expected)

    def compare() -> None:
        if a is not e:
            raise Mismatch(AssertionError, f"Booleans mismatch: {a} is not {e}", where)

    return compare


def _compare_numbers(actual: Any, expected: Any, where: tuple, *, rtol: float | None,
                     atol: float | None, equal_nan: bool, **_: Any) -> Callable[[], None]:
    kinds = (int, float, complex, np.number)
    if not (isinstance(actual, kinds) and isinstance(expected, kinds)):
        raise _NotThisKind
    a = actual.item() if isinstance(actual, np.number) else actual
    e = expected.item() if isinstance(expected, np.number) else expected
    rtol, atol = tolerances([_NUMBER_DTYPES[type(v)] for v in (a, e)], rtol, atol, where)

    def compare() -> None:
        if a == e or (equal_nan and cmath.isnan(a) and cmath.isnan(e)):
            return
        diff = abs(a - e)
        if cmath.isfinite(diff) and diff <= atol + rtol * abs(e):
            return
        raise Mismatch(AssertionError, scalar_message(a, e, rtol, atol), where)

    return compare


def _as_tensor(value: Any) -> Tensor:
    if isinstance(value, Tensor):
        return value
    try:
        return as_tensor(value)
    except Exception:  # noqa: BLE001 - anything that makes no tensor is not this kind
        raise _NotThisKind from None


def _compare_tensors(actual: Any, expected: Any, where: tuple, *, allow_subclasses: bool,
                     rtol: float | None, atol: float | None, equal_nan: bool,
                     check_device: bool, check_dtype: bool, check_layout: bool,
                     check_stride: bool) -> Callable[[], None]:
    if not (isinstance(actual, type(expected)) or isinstance(expected, type(actual))):
        raise _NotThisKind
    if not allow_subclasses and type(actual) is not type(expected):
        raise _NotThisKind
    a, e = _as_tensor(actual), _as_tensor(expected)
    rtol, atol = tolerances([a.dtype.name, e.dtype.name], rtol, atol, where)
    return lambda: _compare_tensor_values(a, e, where, rtol, atol, equal_nan, check_device,
                                          check_dtype, check_layout, check_stride)


def _compare_tensor_values(a: Tensor, e: Tensor, where: tuple, rtol: float, atol: float,
                           equal_nan: bool, check_device: bool, check_dtype: bool,
                           check_layout: bool, check_stride: bool) -> None:

    def differs(attribute: str, mine: Any, theirs: Any) -> Mismatch:
        return Mismatch(AssertionError, f"The values for attribute '{attribute}' do not match: "
                                        f"{mine} != {theirs}.", where)

    if a.shape != e.shape:
        raise differs("shape", a.shape, e.shape)
    if a.layout is not e.layout and check_layout:
        raise differs("layout", a.layout, e.layout)
    if check_stride and a.stride() != e.stride():
        raise differs("stride()", a.stride(), e.stride())
    if check_device and a.device != e.device:
        raise differs("device", a.device, e.device)
    if check_dtype and a.dtype is not e.dtype:
        raise differs("dtype", a.dtype, e.dtype)
    if a.dtype is not e.dtype:  # compared in their common dtype (wide unsigned as int64)
        da, de = (_dtype.int64 if d.name in ("uint16", "uint32", "uint64") else d
                  for d in (a.dtype, e.dtype))
        common = _dtype.promote_types(da, de)
        a, e = a.to(common), e.to(common)
    close = np.asarray(isclose_kernel(a.detach()._data, e.detach()._data, rtol=rtol, atol=atol,
                                      equal_nan=equal_nan))
    if close.all():
        return
    if a.ndim == 0:
        raise Mismatch(AssertionError, scalar_message(a.item(), e.item(), rtol, atol), where)
    raise Mismatch(AssertionError, tensor_message(a, e, close, rtol, atol), where)


_KINDS = (_compare_none, _compare_bools, _compare_numbers, _compare_tensors)


def _pairs(actual: Any, expected: Any, where: tuple) -> list:
    """The leaves to compare, in order: ``(actual, expected, where)``."""
    sequence = collections.abc.Sequence
    if (isinstance(actual, sequence) and not isinstance(actual, str)
            and isinstance(expected, sequence) and not isinstance(expected, str)):
        if len(actual) != len(expected):
            raise Mismatch(AssertionError, "The length of the sequences mismatch: "
                                           f"{len(actual)} != {len(expected)}", where)
        out = []
        for i in range(len(actual)):
            out += _pairs(actual[i], expected[i], (*where, i))
        return out
    mapping = collections.abc.Mapping
    if isinstance(actual, mapping) and isinstance(expected, mapping):
        mine, theirs = set(actual.keys()), set(expected.keys())
        if mine != theirs:
            raise Mismatch(AssertionError,
                           "The keys of the mappings do not match:\n"
                           f"Missing keys in the actual mapping: {sorted(theirs - mine)}\n"
                           f"Additional keys in the actual mapping: {sorted(mine - theirs)}",
                           where)
        keys: Any = mine
        with contextlib.suppress(Exception):
            keys = sorted(keys)
        out = []
        for key in keys:
            out += _pairs(actual[key], expected[key], (*where, key))
        return out
    return [(actual, expected, where)]


def assert_close(actual: Any, expected: Any, *, allow_subclasses: bool = True,
                 rtol: float | None = None, atol: float | None = None, equal_nan: bool = False,
                 check_device: bool = True, check_dtype: bool = True, check_layout: bool = True,
                 check_stride: bool = False, msg: str | Callable[[str], str] | None = None
                 ) -> None:
    """Assert that ``actual`` and ``expected`` are close (see the module docstring); ``msg``
    replaces the message (a callable gets the message and returns the one to raise).

    Example:
        >>> import tapegrad as torch
        >>> torch.testing.assert_close(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0]))
    """
    __tracebackhide__ = True
    options: dict[str, Any] = {"allow_subclasses": allow_subclasses, "rtol": rtol, "atol": atol,
               "equal_nan": equal_nan, "check_device": check_device,
               "check_dtype": check_dtype, "check_layout": check_layout,
               "check_stride": check_stride}
    try:
        comparisons = []
        for a, e, where in _pairs(actual, expected, ()):
            for kind in _KINDS:
                try:
                    comparisons.append(kind(a, e, where, **options))
                    break
                except _NotThisKind:
                    continue
            else:
                raise Mismatch(TypeError, "No comparison pair was able to handle inputs of type "
                                          f"{type(a)} and {type(e)}.", where)
        for compare in comparisons:
            compare()
    except Mismatch as found:
        raise found.error(msg) from None
