"""NumPy's floating-point warnings, silenced inside tapegrad as torch never prints them.

NumPy reports an overflow, an underflow, a division by zero or an invalid operation
(``RuntimeWarning: overflow encountered in multiply``) after a ufunc that produced one; torch's
kernels never do: float16 overflowing to inf, ``0/0`` giving NaN and ``log(0)`` giving -inf are
silent. tapegrad therefore ignores these warnings, but only where tapegrad's own code raised them:

    warnings filter: RuntimeWarning, message "<kind> encountered in ...", module "tapegrad.*"

The filter is matched only when NumPy actually warns (the rare case), so it costs no op
anything, unlike ``np.errstate`` around each op (a context manager per call). It leaves NumPy's
error state alone (``np.seterr`` would change it for the user's own NumPy code too), and a
warning from the user's own NumPy code still shows: its module is not tapegrad's.

A ``warnings.catch_warnings()`` block restores the filter list it found when it exits, so a
tapegrad first imported inside one (pytest imports test modules inside one) loses the filter;
the engine, at the start of every backward pass, checks that ``ENTRY`` is still in front (one
identity test, well under a microsecond) and calls ``install()`` when it is not (a filter added
since, ``simplefilter("always")``, may shadow it too). Until then a forward op may still show
NumPy's warning.
float16 results that overflow are cast without warning in any case (ops/low_precision.py).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

MESSAGE = r"(overflow|underflow|divide by zero|invalid value) encountered in "


def install() -> None:
    """Add the filter in front (``warnings.filterwarnings`` drops an identical earlier entry)."""
    global ENTRY
    warnings.filterwarnings("ignore", message=MESSAGE, category=RuntimeWarning,
                            module=r"tapegrad(\.|$)")
    ENTRY = warnings.filters[0]


ENTRY: tuple | None = None  # the filter as installed: the engine checks it is still in front
install()


def mean(x: Any, axis: Any = None, keepdims: bool = False, dtype: Any = None) -> Any:
    """``np.mean``, silent on empty input as torch's mean (NaN over no elements).

    NumPy's mean over no elements is NaN too, but ``np.mean`` then warns "Mean of empty
    slice" and "invalid value encountered in divide" from NumPy's own module, which the filter
    above does not match (and must not: the user's own ``np.mean`` warns as ever). An empty
    input is answered here without calling it: every element of the result is a mean over no
    elements (or the result itself is empty)."""
    if x.size:
        return np.mean(x, axis=axis, keepdims=keepdims, dtype=dtype)
    shape = np.shape(np.sum(x, axis=axis, keepdims=keepdims, dtype=dtype))
    out_dtype = np.dtype(dtype) if dtype is not None else x.dtype
    if out_dtype.kind == "c":
        return np.full(shape, complex(np.nan, np.nan), dtype=out_dtype)
    return np.full(shape, np.nan, dtype=out_dtype)
