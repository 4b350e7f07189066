"""Tensor printing that matches PyTorch's ``repr``/``str`` character for character.

PyTorch prints a tensor as ``tensor([...], <suffixes>)``, choosing for floating tensors
between a fixed-point, an "integer-valued" (``21.``) and a scientific layout from the
nonzero finite values, padding every element to one column width, wrapping long rows at
``linewidth``, and summarizing tensors with more than ``threshold`` elements with ``...``.
This module reproduces that output for NumPy arrays so that :class:`tapegrad.Tensor` can print
exactly like ``torch.Tensor``.  Print options are module-level state, like
``torch._tensor_str.PRINT_OPTS``; change them with :func:`set_printoptions` or, temporarily,
with the :func:`printoptions` context manager.
"""

from __future__ import annotations

import contextlib
import dataclasses
import html
import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from ._dtype import from_chalf

__all__ = ["format_tensor", "get_printoptions", "printoptions", "set_printoptions"]


@dataclasses.dataclass
class _PrintOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


_OPTS = _PrintOptions()

_PROFILES: dict[str, dict[str, Any]] = {
    "default": {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80},
    "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
    "full": {"precision": 4, "threshold": math.inf, "edgeitems": 3, "linewidth": 80},
}


def set_printoptions(
    precision: int | None = None,
    threshold: float | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    profile: str | None = None,
    sci_mode: bool | None = None,
) -> None:
    """Set the options used to print tensors, as ``torch.set_printoptions`` does.

    Args:
        precision: Digits after the decimal point for floating values.
        threshold: Element count above which a tensor is summarized with ``...``.
        edgeitems: Items shown at each end of every summarized dimension.
        linewidth: Characters per line used to wrap rows and suffixes.
        profile: ``'default'``, ``'short'`` or ``'full'``; applied before the explicit options.
            Any other name is ignored.
        sci_mode: ``True``/``False`` to force or forbid scientific notation; ``None`` (also the
            value used when omitted, as in torch) lets the values decide.
    """
    if profile is not None and profile in _PROFILES:
        for key, value in _PROFILES[profile].items():
            setattr(_OPTS, key, value)
    if precision is not None:
        _OPTS.precision = precision
    if threshold is not None:
        _OPTS.threshold = threshold
    if edgeitems is not None:
        _OPTS.edgeitems = edgeitems
    if linewidth is not None:
        _OPTS.linewidth = linewidth
    _OPTS.sci_mode = sci_mode


def get_printoptions() -> dict[str, Any]:
    """Return a copy of the current print options.

    Returns:
        A dict with keys ``precision``, ``threshold``, ``edgeitems``, ``linewidth`` and
        ``sci_mode``, suitable for ``set_printoptions(**options)``.
    """
    return dataclasses.asdict(_OPTS)


@contextlib.contextmanager
def printoptions(**kwargs: Any) -> Iterator[None]:
    """Temporarily change the print options; they are restored on exit.

    Args:
        **kwargs: Any arguments accepted by :func:`set_printoptions`.
    """
    saved = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**saved)


# --------------------------------------------------------------------------------------------
# dtypes

_DTYPE_ALIASES = {
    "float": "float32",
    "double": "float64",
    "half": "float16",
    "long": "int64",
    "int": "int32",
    "short": "int16",
    "cfloat": "complex64",
    "cdouble": "complex128",
}

_FLOAT_DTYPES = {"float16", "bfloat16", "float32", "float64"}
_COMPLEX_DTYPES = {"complex32", "complex64", "complex128"}
_INT_DTYPES = {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"}


def _canonical_dtype(name: str) -> str:
    name = name.removeprefix("torch.")
    name = _DTYPE_ALIASES.get(name, name)
    if name not in _FLOAT_DTYPES | _COMPLEX_DTYPES | _INT_DTYPES | {"bool"}:
        raise ValueError(f"format_tensor: unsupported dtype {name!r}")
    return name


def _complex_partner(default_dtype: str) -> str:
    return "complex128" if default_dtype == "float64" else "complex64"


def _round_to_bfloat16(values: np.ndarray) -> np.ndarray:
    """Round float32 values to the nearest bfloat16 (ties to even), returned as float32."""
    values = np.array(values, dtype=np.float32, order="C")
    bits = values.view(np.uint32).astype(np.uint64)
    lsb = (bits >> 16) & 1
    rounded = ((bits + 0x7FFF + lsb) & 0xFFFF0000).astype(np.uint32).view(np.float32)
    return np.where(np.isnan(values), values, rounded)


def _as_numpy(data: Any, dtype: str) -> np.ndarray:
    """Convert ``data`` to the NumPy array whose values torch would print for ``dtype``."""
    arr = np.asarray(data)
    if dtype == "float16":
        # torch prints half-precision tensors after converting them to float32.
        return arr.astype(np.float16).astype(np.float32)
    if dtype == "complex32":  # float16 pairs (_dtype.CHALF_NP), printed as complex64 values
        if arr.dtype.names:
            return from_chalf(arr)
        return arr.astype(np.complex64)
    if dtype == "bfloat16":
        if arr.dtype.kind not in "biufc":
            return arr.astype(np.float32)  # an ml_dtypes.bfloat16 array: exact
        return _round_to_bfloat16(arr.astype(np.float32))
    target = np.dtype(dtype)
    if arr.dtype != target:
        arr = arr.astype(target)
    return arr


# --------------------------------------------------------------------------------------------
# element formatting


class _Formatter:
    """Decides the layout shared by all elements of a tensor and formats single elements.

    Args:
        values: The elements the layout is chosen from (the summarized tensor when summarizing).
        floating: Whether the values are floating point.
    """

    def __init__(self, values: np.ndarray, floating: bool) -> None:
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.width = 1
        flat = values.reshape(-1)
        if not floating:
            if flat.size:
                self.width = max(len(str(v)) for v in np.unique(flat).tolist())
            return

        flat = flat.astype(np.float64)
        nonzero = flat[np.isfinite(flat) & (flat != 0)]
        if nonzero.size == 0:
            # Nothing to choose a layout from: integer layout, width 1, options ignored.
            return
        magnitudes = np.abs(nonzero)
        lo, hi = float(magnitudes.min()), float(magnitudes.max())
        self.int_mode = bool(np.all(nonzero == np.ceil(nonzero)))
        if _OPTS.sci_mode is not None:
            self.sci_mode = _OPTS.sci_mode
        elif self.int_mode:
            self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8
        else:
            self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
        # The width comes from the nonzero finite values only; zeros, nan and inf may be wider.
        distinct = np.unique(nonzero).tolist()
        self.width = max(len(self.format(v)) for v in distinct)

    def format(self, value: Any) -> str:
        """Format one element, right-aligned to the common width."""
        if not self.floating:
            text = str(value)
        elif self.sci_mode:
            text = f"{value:.{_OPTS.precision}e}"
        elif self.int_mode:
            text = f"{value:.0f}"
            if math.isfinite(value):
                text += "."
        else:
            text = f"{value:.{_OPTS.precision}f}"
        return text.rjust(self.width)


def _join_complex(real: str, imag: str) -> str:
    imag = (imag + "j").lstrip()
    if imag[0] in "+-":
        return real + imag
    return real + "+" + imag


# --------------------------------------------------------------------------------------------
# layout


def _summarized(arr: np.ndarray, edge: int) -> np.ndarray:
    """Keep only the elements a summarized print shows (``edge`` at each end of each dim)."""
    for axis, size in enumerate(arr.shape):
        if size > 2 * edge:
            keep = np.r_[0:edge, size - edge : size]
            arr = np.take(arr, keep, axis=axis)
    return arr


class _Layout:
    """Builds the bracketed body of a non-empty tensor."""

    def __init__(self, arr: np.ndarray, summarize: bool, complex_: bool) -> None:
        self.summarize = summarize
        self.edge = _OPTS.edgeitems
        sample = _summarized(arr, self.edge) if summarize else arr
        if complex_:
            self.real: _Formatter = _Formatter(sample.real, True)
            self.imag: _Formatter | None = _Formatter(sample.imag, True)
        else:
            self.real = _Formatter(sample, arr.dtype.kind in "fc")
            self.imag = None

    def _element(self, value: Any) -> str:
        if self.imag is None:
            return self.real.format(value)
        return _join_complex(self.real.format(value.real), self.imag.format(value.imag))

    def _shown(self, size: int) -> tuple[range, bool, range]:
        """Indices shown before and after the ``...`` of a dimension of length ``size``."""
        if self.summarize and size > 2 * self.edge:
            return range(self.edge), True, range(size - self.edge, size)
        return range(size), False, range(0)

    def _vector(self, arr: np.ndarray, indent: int) -> str:
        item_width = self.real.width + 2
        if self.imag is not None:
            item_width += self.imag.width + 1
        per_line = max(1, math.floor((_OPTS.linewidth - indent) / item_width))
        head, gap, tail = self._shown(arr.shape[0])
        if gap:
            items = [self._element(v) for v in arr[: head.stop].tolist()]
            items.append(" ...")
            items += [self._element(v) for v in arr[tail.start :].tolist()]
        else:
            items = [self._element(v) for v in arr.tolist()]
        lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"

    def render(self, arr: np.ndarray, indent: int) -> str:
        """Return the text of ``arr`` whose first line starts at column ``indent``."""
        if arr.ndim == 0:
            return self._element(arr.item())
        if arr.ndim == 1:
            return self._vector(arr, indent)
        head, gap, tail = self._shown(arr.shape[0])
        parts = [self.render(arr[i], indent + 1) for i in head]
        if gap:
            parts.append("...")
            parts += [self.render(arr[i], indent + 1) for i in tail]
        separator = "," + "\n" * (arr.ndim - 1) + " " * (indent + 1)
        return "[" + separator.join(parts) + "]"


def _add_suffixes(text: str, suffixes: list[str], indent: int) -> str:
    """Append ``, suffix`` items, moving one to a new line when it would pass ``linewidth``."""
    pieces = [text]
    line_length = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if line_length + len(suffix) + 2 > _OPTS.linewidth:
            pieces.append(",\n" + " " * indent + suffix)
            line_length = indent + len(suffix)
        else:
            pieces.append(", " + suffix)
            line_length += len(suffix) + 2
    pieces.append(")")
    return "".join(pieces)


def format_tensor(
    data: np.ndarray,
    dtype_name: str,
    *,
    requires_grad: bool = False,
    grad_fn_name: str | None = None,
    prefix: str = "tensor(",
    default_dtype: str = "float32",
    tangent: str | None = None,
) -> str:
    """Return what torch prints for ``repr(t)`` of a CPU tensor whose values are ``data``.

    Args:
        data: The tensor's values; for ``bfloat16`` either an ``ml_dtypes.bfloat16`` array or
            float32 values (rounded to bfloat16 if they are not representable).
        dtype_name: torch's dtype name without ``torch.``, e.g. ``'float32'`` or ``'int64'``.
        requires_grad: Add ``requires_grad=True`` (only when there is no ``grad_fn_name``).
        grad_fn_name: Name of the tensor's backward node, printed as ``grad_fn=<name>``.
        prefix: Text before the values; continuation lines are indented by its length.
        default_dtype: torch's current default floating dtype, which is printed without a
            ``dtype=`` suffix.
        tangent: The printed forward-mode tangent of a dual tensor (``tangent=...``).

    Returns:
        The tensor's repr, e.g. ``'tensor([1.5000, 2.0000], dtype=torch.float64)'``.
    """
    dtype = _canonical_dtype(dtype_name)
    default_dtype = _canonical_dtype(default_dtype)
    arr = _as_numpy(data, dtype)
    indent = len(prefix)
    suffixes = []
    if arr.size == 0:
        if arr.ndim != 1:
            suffixes.append(f"size={tuple(int(n) for n in arr.shape)}")
        if dtype != default_dtype:
            suffixes.append(f"dtype=torch.{dtype}")
        body = "[]"
    else:
        summarize = arr.size > _OPTS.threshold
        if not _OPTS.edgeitems:
            suffixes.append(f"size={tuple(int(n) for n in arr.shape)}")
        if dtype not in (default_dtype, _complex_partner(default_dtype), "int64", "bool"):
            suffixes.append(f"dtype=torch.{dtype}")
        if summarize and not _OPTS.edgeitems and arr.ndim > 0:
            body = "[...]"
        else:
            layout = _Layout(arr, summarize, dtype in _COMPLEX_DTYPES)
            body = layout.render(arr, indent)
    if grad_fn_name is not None:
        suffixes.append(f"grad_fn=<{grad_fn_name}>")
    elif requires_grad:
        suffixes.append("requires_grad=True")
    if tangent is not None:
        suffixes.append(f"tangent={tangent}")
    return _add_suffixes(prefix + body, suffixes, indent)


def html_summary(tensor: Any) -> str:
    """A tensor for Jupyter's rich display (``Tensor._repr_html_``): a header line with its
    shape, dtype and place in the graph, then its exact ``repr``. ``repr`` itself is unchanged."""
    fn = tensor.grad_fn
    if fn is not None:
        state = f"grad_fn={fn.name().split('::')[-1]}"
    elif tensor.requires_grad:
        state = "leaf, requires_grad=True"
    else:
        state = "no grad"
    shape = "×".join(str(s) for s in tensor.shape) or "scalar"
    head = f"Tensor {shape} · {tensor.dtype} · {state}"
    return (f"<div><small>{html.escape(head)}</small><pre>{html.escape(repr(tensor))}"
            "</pre></div>")
