"""Counting and bucketing, without gradients: histc, histogram, histogramdd, bincount,
bucketize, searchsorted, isin, unravel_index.

The histograms place each element as torch's CPU kernel does, so that values on a bin edge
land in the same bin: with a number of bins, the position is computed by linear interpolation
in the input's dtype, ``int((x - lo) * bins / (hi - lo))``, then corrected against the edges
(torch's "local search"); with explicit edges, by binary search. The last bin is closed on the
right, elements outside ``[lo, hi]`` are not counted. The edges of evenly spaced bins are
torch's ``linspace`` (from both ends toward the middle).
"""

from __future__ import annotations

import builtins
from typing import Any, Literal

import numpy as np

from .. import return_types
from .._dtype import from_numpy_dtype
from .._tensor import Tensor
from ._registry import nondiff, scalar_type_name

_Histogram = return_types.histogram.of
_Histogramdd = return_types.histogramdd.of


def _t(a: Any) -> Tensor:
    return Tensor._make(np.asarray(a))


def _data(x: Any) -> np.ndarray:
    return x._data if isinstance(x, Tensor) else np.asarray(x)


def _linspace(lo: Any, hi: Any, n: int, dtype: Any) -> np.ndarray:
    """torch's linspace: the first half counted from ``lo``, the second from ``hi``."""
    if n == 1:
        return np.array([lo], dtype=dtype)
    lo, hi = dtype.type(lo), dtype.type(hi)
    step = (hi - lo) / dtype.type(n - 1)
    i = np.arange(n)
    half = n // 2
    return np.where(i < half, lo + step * i.astype(dtype),
                    hi - step * (n - 1 - i).astype(dtype)).astype(dtype)


def _float_check(x: np.ndarray, name: str) -> None:
    if x.dtype.kind != "f":
        raise NotImplementedError(f'"{name}" not implemented for '
                                  f"'{scalar_type_name(from_numpy_dtype(x.dtype))}'")


def _positions(col: np.ndarray, edges: np.ndarray, linear: bool, search: bool) -> np.ndarray:
    """The bin of each element of ``col`` (-1 where it is not counted)."""
    lo, hi = edges[0], edges[-1]
    nb = len(edges) - 1
    inside = (col >= lo) & (col <= hi)
    if linear:
        with np.errstate(all="ignore"):
            raw = (col - lo) * col.dtype.type(nb) / (hi - lo)
        pos = np.where(inside, raw, 0).astype(np.int64)
        pos = np.minimum(pos, nb - 1)
        if search:  # torch's correction: the edge the element really lies after
            for p in range(len(col)):
                if inside[p]:
                    a, b = max(pos[p] - 1, 0), min(pos[p] + 2, nb + 1)
                    pos[p] = a + np.searchsorted(edges[a:b], col[p], side="right") - 1
    else:
        pos = np.searchsorted(edges, col, side="right") - 1
    pos = np.where(pos >= nb, nb - 1, pos)  # the last edge closes the last bin
    return np.where(inside, pos, -1)


def _histdd(x: np.ndarray, edges: list, weight: np.ndarray | None, density: bool,
            linear: bool, search: bool = True) -> np.ndarray:
    d = len(edges)
    pts = x.reshape(-1, d)
    w = weight.reshape(-1) if weight is not None else None
    shape = tuple(len(e) - 1 for e in edges)
    hist = np.zeros(shape, dtype=x.dtype)
    keep = np.ones(pts.shape[0], bool)
    coords = []
    for k in range(d):
        pos = _positions(pts[:, k], edges[k], linear, search)
        keep &= pos >= 0
        coords.append(pos)
    idx = tuple(c[keep] for c in coords)
    np.add.at(hist, idx, w[keep].astype(x.dtype) if w is not None else x.dtype.type(1))
    if density:
        total = hist.sum()
        widths = np.ones(shape, dtype=x.dtype)
        for k, e in enumerate(edges):
            sh = [1] * d
            sh[k] = len(e) - 1
            widths = widths * np.diff(e).reshape(sh)
        hist = (hist / total / widths).astype(x.dtype)
    return hist


def _edges_for(col: np.ndarray, bins: Any, lo: Any, hi: Any, k: int, name: str) -> tuple:
    """(edges, linear?) for one dim: bins a count (even bins) or a tensor of edges."""
    if isinstance(bins, (Tensor, np.ndarray)):
        e = (bins._data if isinstance(bins, Tensor) else bins).astype(col.dtype)
        if e.ndim != 1 or e.size < 1:
            raise RuntimeError(f"{name}(): bins tensor should have one dimension, but got "
                               f"{e.ndim} dimensions in the bins tensor for dimension {k}")
        return e, False
    n = int(bins)
    if n <= 0:
        raise RuntimeError(f"{name}(): bins must be > 0, but got {n} for dimension {k}")
    if lo is None:  # the data's range ([0, 1] for no data)
        lo, hi = (col.min(), col.max()) if col.size else (0.0, 1.0)
    lo, hi = col.dtype.type(lo), col.dtype.type(hi)
    if lo > hi:
        raise RuntimeError(f"{name}(): max must be larger than min, but got min {lo} max {hi} "
                           f"for dimension {k}")
    if lo == hi:
        lo, hi = lo - col.dtype.type(0.5), hi + col.dtype.type(0.5)
    return _linspace(lo, hi, n + 1, col.dtype), True


def histc(input: Tensor, bins: int = 100, min: Any = 0, max: Any = 0) -> Tensor:
    """Counts in ``bins`` equal bins over [min, max] (the data's range when min == max)."""
    return _histc(input, bins=bins, min=min, max=max)


@nondiff("histc")
def _histc(x: np.ndarray, *, bins: int, min: Any, max: Any) -> np.ndarray:
    _float_check(x, "histogram_cpu")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for "
                           "dimension 0")
    lo, hi = x.dtype.type(min), x.dtype.type(max)
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    if lo == hi and x.size:
        lo, hi = x.min(), x.max()
    if lo == hi:
        lo, hi = lo - x.dtype.type(1), hi + x.dtype.type(1)
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{lo}, {hi}] is not finite")
    edges = _linspace(lo, hi, int(bins) + 1, x.dtype)
    return np.asarray(_histdd(x.reshape(-1, 1), [edges], None, False, linear=True,
                              search=False))


def histogram(input: Tensor, bins: Any = 100, *, range: Any = None, weight: Any = None,
              density: bool = False) -> Any:
    """(hist, bin_edges): counts (or weights' sums, or a density) in the bins."""
    lo, hi = (None, None) if range is None else range
    return _Histogram(*_histogram(input, bins, weight, lo=lo, hi=hi, density=bool(density)))


@nondiff("histogram", outputs=2)
def _histogram(x: np.ndarray, bins: Any, w: Any, *, lo: Any, hi: Any,
               density: bool) -> tuple:
    _float_check(x, "histogram_cpu")
    col = x.reshape(-1)
    edges, linear = _edges_for(col, bins, lo, hi, 0, "torch.histogram")
    if w is not None:
        w = np.asarray(w)
    hist = _histdd(col.reshape(-1, 1), [edges], w, density, linear)
    return np.asarray(hist), np.asarray(edges)


def histogramdd(input: Tensor, bins: Any, range: Any = None, weight: Any = None,
                density: bool = False) -> Any:
    """(hist, bin_edges) of the points ``input[..., :]`` over a grid of bins."""
    x = input._data
    _float_check(x, "histogramdd")
    d = x.shape[-1] if x.ndim else 1
    if isinstance(bins, (list, tuple)):
        _check_bins_list(bins)
        if len(bins) != d:
            raise RuntimeError("histogramdd: The size of bins must be equal to the innermost "
                               "dimension of the input.")
        per = list(bins)
    else:
        per = [bins] * d
    given = [b for b in per if isinstance(b, (Tensor, np.ndarray))]  # edges passed as tensors
    counts = tuple(None if isinstance(b, (Tensor, np.ndarray)) else b for b in per)
    out = _histogramdd(input, weight, *given, counts=counts,
                       range=None if range is None else tuple(range), density=bool(density))
    return _Histogramdd(out[0], tuple(out[1:]))


def _check_bins_list(bins: Any) -> None:
    """torch's argument parser on a list of bins: all ints (counts) or all tensors (edges)."""
    def is_int(b: Any) -> bool:
        return isinstance(b, (int, np.integer)) and not isinstance(b, bool)

    if not bins:
        return
    if is_int(bins[0]):
        for i, b in enumerate(bins):
            if not is_int(b):
                raise TypeError(f"histogramdd(): argument 'bins' failed to unpack the object at "
                                f"pos {i + 1} with error \"type must be tuple of ints,but got "
                                f"{type(b).__name__}\"")
        return
    for i, b in enumerate(bins):
        if not isinstance(b, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 1, but got "
                            f"{type(b).__name__}")


@nondiff("histogramdd", outputs=2)  # (a tuple of any length: the counts, then d edge arrays)
def _histogramdd(x: np.ndarray, w: Any, *given: np.ndarray, counts: tuple, range: Any,
                 density: bool) -> tuple:
    d = len(counts)
    pts = x.reshape(-1, d)
    edges: list = []
    linear = True
    supplied = iter(given)
    for k in builtins.range(d):
        lo = hi = None
        if range is not None:
            lo, hi = range[2 * k], range[2 * k + 1]
        b = counts[k] if counts[k] is not None else next(supplied)
        e, lin = _edges_for(pts[:, k], b, lo, hi, k, "torch.histogramdd")
        linear = linear and lin
        edges.append(e)
    hist = _histdd(pts, edges, np.asarray(w) if w is not None else None, density, linear)
    return (np.asarray(hist),) + tuple(np.asarray(e) for e in edges)


def bincount(input: Tensor, weights: Any = None, minlength: int = 0) -> Tensor:
    """How often each non-negative integer occurs (or the sum of its weights)."""
    return _bincount(input, weights, minlength=minlength)


@nondiff("bincount", dynamic_shape=True)  # (its length is the largest value + 1)
def _bincount(x: np.ndarray, w: Any, *, minlength: int) -> np.ndarray:
    if x.dtype.kind not in "iu":
        raise NotImplementedError(f'"bincount_cpu" not implemented for '
                                  f"'{scalar_type_name(from_numpy_dtype(x.dtype))}'")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if x.ndim != 1 or (x.size and x.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    w = np.asarray(w) if w is not None else None
    if w is not None and (w.ndim != 1 or w.shape[0] != x.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    n = builtins.max(int(x.max()) + 1 if x.size else 0, int(minlength))
    if w is None:
        return np.bincount(x.astype(np.int64), minlength=n).astype(np.int64)
    out_dtype = np.float32 if w.dtype == np.float32 else np.float64
    return np.bincount(x.astype(np.int64), weights=w.astype(np.float64),
                       minlength=n).astype(out_dtype)


def _int_out(a: np.ndarray, out_int32: bool) -> np.ndarray:
    return np.asarray(a).astype(np.int32 if out_int32 else np.int64)


@nondiff("bucketize")
def _bucketize(x: Any, b: np.ndarray, *, right: bool, out_int32: bool) -> np.ndarray:
    return _int_out(np.searchsorted(b, np.asarray(x), side="right" if right else "left"),
                    out_int32)


def bucketize(input: Any, boundaries: Tensor, *, out_int32: bool = False,
              right: bool = False) -> Tensor:
    """The bucket of each value: boundaries[i-1] < x <= boundaries[i] (``right``: <, <=)."""
    b = boundaries._data
    if b.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({b.ndim})")
    res = _bucketize(input, boundaries, right=bool(right), out_int32=out_int32)
    return res


@nondiff("searchsorted")
def _searchsorted(seq: np.ndarray, x: Any, sorter: np.ndarray | None, *, right: bool,
                  out_int32: bool) -> np.ndarray:
    """searchsorted on the last dim: one sorted row for all values, or row by row."""
    if sorter is not None:
        seq = np.take_along_axis(seq, sorter.astype(np.int64), -1)
    x = np.asarray(x)
    how: Literal["left", "right"] = "right" if right else "left"
    if seq.ndim <= 1:
        return _int_out(np.searchsorted(seq.reshape(-1), x, side=how), out_int32)
    if x.ndim != seq.ndim or x.shape[:-1] != seq.shape[:-1]:
        raise RuntimeError(
            "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
            "dimensions of boundaries tensor and input value tensor must match, but we got "
            f"boundaries tensor {list(seq.shape)} and input value tensor {list(x.shape)}")
    res = np.zeros(x.shape, np.int64)
    if x.size:
        rows_s = seq.reshape(-1, seq.shape[-1])
        rows_x = x.reshape(-1, x.shape[-1])
        res = np.stack([np.searchsorted(s, v, side=how) for s, v in zip(
            rows_s, rows_x, strict=True)]).reshape(x.shape)
    return _int_out(res, out_int32)


def searchsorted(sorted_sequence: Tensor, input: Any, *, out_int32: bool = False,
                 right: bool = False, side: Any = None, sorter: Any = None) -> Tensor:
    """Where each value would go in the (innermost rows of) ``sorted_sequence``."""
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but "
                               f"got {side}")
        if side == "left" and right:
            raise RuntimeError("torch.searchsorted(): side and right can't be set to "
                               "opposites, got side of left while right was True")
        right = side == "right"
    result = _searchsorted(sorted_sequence, input, sorter, right=bool(right),
                           out_int32=out_int32)
    return result


def isin(elements: Any = None, test_elements: Any = None, *, assume_unique: bool = False,
         invert: bool = False, element: Any = None, test_element: Any = None) -> Tensor:
    """Whether each element is among ``test_elements`` (``invert``: is not); ``element`` and
    ``test_element`` are torch's names for a number in either place."""
    if element is not None:
        elements = element
    if test_element is not None:
        test_elements = test_element
    if elements is None or test_elements is None:
        raise TypeError('isin() missing 1 required positional arguments: '
                        f'"{"elements" if elements is None else "test_elements"}"')
    return _isin(elements, test_elements, invert=bool(invert))


@nondiff("isin")
def _isin(elements: Any, test_elements: Any, *, invert: bool) -> np.ndarray:
    return np.asarray(np.isin(np.asarray(elements), np.asarray(test_elements), invert=invert))


def unravel_index(indices: Any, shape: Any) -> tuple:
    """Flat (row-major) indices -> one tensor of coordinates per dim of ``shape``."""
    idx = _data(indices)
    if idx.dtype.kind not in "iu":
        raise TypeError(f"expected 'indices' to be integer dtype, but got "
                        f"{from_numpy_dtype(idx.dtype)}")
    shape = (int(shape),) if not isinstance(shape, (list, tuple)) else tuple(int(s)
                                                                              for s in shape)
    if any(s < 0 for s in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    return _unravel_index(indices, shape=shape)


@nondiff("unravel_index", outputs=-1)  # (one output per dim of ``shape``)
def _unravel_index(idx: Any, *, shape: tuple) -> tuple:
    idx = np.asarray(idx).astype(np.int64)
    out = []
    stride = 1
    for s in reversed(shape):
        out.append(np.mod(np.floor_divide(idx, stride), s) if s else idx * 0)
        stride *= s
    return tuple(reversed(out))


METHODS = {"histc": histc, "histogram": histogram, "bincount": bincount}

__all__ = ["histc", "histogram", "histogramdd", "bincount", "bucketize", "searchsorted", "isin",
           "unravel_index"]
