"""Ordering ops: sort, argsort, msort, topk, kthvalue, median, nanmedian, mode, cummax, cummin,
aminmax, logcumsumexp, unique, unique_consecutive.

Most of them pick elements of the input along a dim and return (values, indices). The indices
are found in NumPy (a stable sort: equal elements keep their order, NaN sorts last as in
torch), and one registry entry per op takes the values (``np.take_along_axis``), so each op
records its own node (SortBackward0, TopkBackward0, ...). Their backward is the same: the
gradient of each picked value goes back to the place it was picked from (``scatter_add`` into
zeros), whose own backward (``gather``) gives the second derivative.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from .. import return_types
from .._dtype import get_default_dtype
from .._out import rule as out_rule
from .._sort_emulation import (
    StdAlgorithms,
    greater_nan_largest,
    less_nan_largest,
    quickselect,
    topk_positions,
    value_index_pairs,
)
from .._tensor import Tensor, _wrap_dim
from . import _registry
from . import indexing as ix
from ._empty_checks import _empty_check
from ._registry import defop, nondiff
from .elementwise import reject_complex, where


def _t(a: Any) -> Tensor:
    return Tensor._make(np.asarray(a))


def _picker(name: str, node: str) -> Any:
    """A registry entry ``(x, dim=, index=, squeeze=)``: x's values at ``index`` along dim."""

    @defop(name, node=node)
    def forward(x: np.ndarray, *, dim: int, index: np.ndarray, squeeze: bool) -> np.ndarray:
        if x.ndim == 0:
            return x.reshape(index.shape).copy()
        v = np.take_along_axis(x, index, dim)
        return np.squeeze(v, dim) if squeeze else v

    @forward.backward
    def picker_backward(ctx: Any, grad: Tensor) -> tuple:
        # each value's gradient back where it came from
        p = ctx.params

        def add(zeros: Tensor) -> Tensor:
            g = grad.unsqueeze(p["dim"]) if p["squeeze"] else grad
            return ix.scatter_add(zeros, p["dim"], _t(p["index"]), g)

        return ix.gradient_into_zeros(ctx, grad, add)

    return forward


_sort_values = _picker("sort_values", "SortBackward0")
_sort_stable_values = _picker("sort_stable_values", "SortBackward1")
_topk_values = _picker("topk_values", "TopkBackward0")
_kthvalue_values = _picker("kthvalue_values", "KthvalueBackward0")
_median_dim_values = _picker("median_dim_values", "MedianBackward1")
_nanmedian_dim_values = _picker("nanmedian_dim_values", "NanmedianBackward1")
_mode_values = _picker("mode_values", "ModeBackward0")
_cummax_values = _picker("cummax_values", "CummaxBackward0")
_cummin_values = _picker("cummin_values", "CumminBackward0")

_Sort = return_types.sort.of
_Topk = return_types.topk.of
_Kth = return_types.kthvalue.of
_Median = return_types.median.of
_Nanmedian = return_types.nanmedian.of
_Mode = return_types.mode.of
_Cummax = return_types.cummax.of
_Cummin = return_types.cummin.of
_Aminmax = return_types.aminmax.of


def _order(x: np.ndarray, dim: int, descending: bool) -> np.ndarray:
    """Stable order along ``dim``: ascending with NaN last, or descending with NaN first and
    equal elements still in their original order (the ascending order of the reversed array,
    reversed)."""
    if not descending:
        return np.argsort(x, axis=dim, kind="stable")
    n = x.shape[dim]
    rev = np.flip(np.argsort(np.flip(x, dim), axis=dim, kind="stable"), dim)
    return n - 1 - rev


@nondiff("sort_indices")
def _sort_indices(x: np.ndarray, *, dim: int, descending: bool, stable: bool) -> np.ndarray:
    """The int64 indices of torch's CPU sort along ``dim`` (``_sort_order``)."""
    if x.ndim == 0:
        return np.zeros((), np.int64)
    return _sort_order(x, dim, descending, stable).astype(np.int64)


def sort(input: Tensor, dim: int = -1, descending: bool = False, *, stable: Any = None) -> Any:
    """(values, indices) along ``dim``; equal elements keep their order (torch's CPU sort)."""
    reject_complex(input, " Sort does not support complex dtypes on CPU", RuntimeError)
    d = _wrap_dim(dim, input.ndim)
    idx = _sort_index(input, d, bool(descending), bool(stable))
    op = _sort_stable_values if stable is not None else _sort_values
    return _Sort(op(input, dim=d, index=idx._data, squeeze=False), idx)


def argsort(input: Tensor, dim: int = -1, descending: bool = False, *, stable: bool = False
            ) -> Tensor:
    reject_complex(input, " Sort does not support complex dtypes on CPU", RuntimeError)
    d = _wrap_dim(dim, input.ndim)  # (0 for a 0-d tensor, which takes dims 0 and -1)
    return _sort_index(input, d, bool(descending), bool(stable))


def _sort_index(input: Tensor, d: int, descending: bool, stable: bool) -> Tensor:
    if _registry._SPECIAL:  # a capture listens: through the registry (``nondiff``)
        return _sort_indices(input, dim=d, descending=descending, stable=stable)
    return Tensor._make(_sort_indices.forward(input._data, dim=d, descending=descending,
                                              stable=stable))  # the same, without the detour


# torch sorts a 1-d integer (not bool) tensor of this many elements or more in ascending order
# with a radix sort, which is stable; every other row goes through the standard library's sort
# (``StdAlgorithms.sort``).
_RADIX_SORT_NUMEL = 32768


def _sort_order(x: np.ndarray, d: int, descending: bool, stable: bool) -> np.ndarray:
    """The indices of torch's CPU sort along ``d``. ``stable=False`` (the default) is the
    standard library's introsort of (value, index) pairs by value: equal values end in the
    order it leaves them, which ``StdAlgorithms.sort`` replays (in Python: about 60 ms for a row of
    8000 elements with ties). Rows without ties have one order, rows of 16 elements or fewer
    are insertion-sorted (stable), a dim of stride 0 is left in place and long 1-d integer
    tensors are radix-sorted: NumPy's stable order gives all of these."""
    n = x.shape[d]
    order = _order(x, d, descending)
    radix = (x.ndim == 1 and n >= _RADIX_SORT_NUMEL and not descending
             and x.dtype.kind in "iu")
    if stable or n <= 16 or x.strides[d] == 0 or radix:
        return order
    ranked = np.take_along_axis(x, order, d)  # equal values (NaNs too) end up side by side
    first, rest = np.take(ranked, np.arange(n - 1), axis=d), np.take(ranked, np.arange(1, n),
                                                                     axis=d)
    ties = first == rest
    if x.dtype.kind in "fc":
        ties |= (first != first) & (rest != rest)
    if not ties.any():
        return order
    comp = greater_nan_largest if descending else less_nan_largest
    rows = np.moveaxis(x, d, -1).reshape(-1, n)
    out = np.moveaxis(order, d, -1).reshape(-1, n).copy()
    for r in np.flatnonzero(np.moveaxis(ties, d, -1).reshape(-1, n - 1).any(axis=1)):
        row = value_index_pairs(rows[r])
        StdAlgorithms(row, comp).sort(0, n)
        out[r] = [i for _, i in row]
    return np.moveaxis(out.reshape(np.moveaxis(order, d, -1).shape), -1, d)


def msort(input: Tensor) -> Tensor:
    """Sorted along the first dim."""
    return sort(input, 0).values


@nondiff("topk_indices")
def _topk_indices(x: np.ndarray, *, dim: int, k: int, largest: bool, sorted: bool
                  ) -> np.ndarray:
    """The int64 indices of torch's CPU topk along ``dim``: its selection replayed where ties
    (or NaNs) make the order depend on it, else the first ``k`` of the stable order."""
    if x.ndim == 0:
        return np.zeros((), np.int64)
    if k and (not sorted or _needs_emulation(x, dim)):
        return _rows_apply(x, dim, lambda row: topk_positions(row, k, largest, sorted), k)
    return np.take(_order(x, dim, largest), np.arange(k), axis=dim).astype(np.int64)


def topk(input: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True
         ) -> Any:
    reject_complex(input, " topk does not support complex dtypes on CPU", RuntimeError)
    x = input._data
    d = _wrap_dim(dim, input.ndim)
    n = x.shape[d] if x.ndim else 1
    if not 0 <= k <= n:
        raise RuntimeError("selected index k out of range")
    idx = _topk_indices(input, dim=d, k=k, largest=bool(largest), sorted=bool(sorted))
    return _Topk(_topk_values(input, dim=d, index=idx._data, squeeze=False), idx)


def _select_kth(x: np.ndarray, d: int, k: int) -> np.ndarray:
    """The index (keepdim shape) of the k-th smallest (0-based) along ``d``, NaN largest."""
    if _needs_emulation(x, d):
        def pick(row: np.ndarray) -> list:
            pairs = value_index_pairs(row)
            quickselect(pairs, k)
            return [pairs[k][1]]

        return _rows_apply(x, d, pick, 1)
    order = _order(x, d, False)
    return np.take(order, [k], axis=d).astype(np.int64)


def _dim_result(cls: Any, op: Any, input: Tensor, d: int, idx: Tensor | None,
                keepdim: bool) -> Any:
    """(values, indices) from the keepdim-shaped indices along ``d`` (an entry's output)."""
    x = input._data
    if x.ndim == 0:
        return cls(op(input, dim=0, index=np.zeros((), np.int64), squeeze=False),
                   _t(np.zeros((), np.int64)))
    assert idx is not None
    values = op(input, dim=d, index=idx._data, squeeze=not keepdim)
    return cls(values, idx if keepdim else idx.squeeze(d))


@nondiff("kthvalue_indices")
def _kthvalue_indices(x: np.ndarray, *, dim: int, k: int) -> np.ndarray:
    return _select_kth(x, dim, k - 1)


def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False) -> Any:
    reject_complex(input, " topk does not support complex dtypes on CPU", RuntimeError)
    x = input._data
    d = _wrap_dim(dim, input.ndim)
    n = x.shape[d] if x.ndim else 1
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    idx = _kthvalue_indices(input, dim=d, k=k) if x.ndim else None
    return _dim_result(_Kth, _kthvalue_values, input, d, idx, keepdim)


def _median_index(x: np.ndarray, d: int, ignore_nan: bool) -> np.ndarray:
    """torch's lower median along ``d``: NaN wins (median) or is skipped (nanmedian)."""
    order = _order(x, d, False)
    n = x.shape[d]
    if x.dtype.kind != "f":
        return np.take(order, [(n - 1) // 2], axis=d).astype(np.int64)
    nans = np.isnan(x).sum(axis=d, keepdims=True)
    if ignore_nan:
        valid = n - nans
        k = np.where(valid > 0, (valid - 1) // 2, 0)
    else:  # any NaN: the first NaN (NaNs sort last, in order)
        k = np.where(nans > 0, n - nans, (n - 1) // 2)
    return np.take_along_axis(order, k, d).astype(np.int64)


@nondiff("median_indices")
def _median_indices(x: np.ndarray, *, dim: int, ignore_nan: bool) -> np.ndarray:
    return _median_index(x, dim, ignore_nan)


@defop("median", node="MedianBackward0", save=(0,), save_output=True)
def _median_all(x: np.ndarray, *, ignore_nan: bool) -> np.ndarray:
    flat = x.reshape(-1)
    i = _median_index(flat, 0, ignore_nan)
    return flat[i].reshape(())


@_median_all.backward
def median_all_backward(ctx: Any, grad: Tensor) -> tuple:
    # shared evenly by the elements equal to the median
    x, y = ctx.saved
    mask = (x == y) | (x.isnan() & y.isnan())
    return (grad * mask / mask.sum(),)


_nanmedian_all = defop("nanmedian", node="NanmedianBackward0", save=(0,), save_output=True)(
    _median_all.forward)
_nanmedian_all.backward(_median_all.rule)


def _median(name: str, input: Tensor, dim: Any, keepdim: bool) -> Any:
    nan = name == "nanmedian"
    x = input._data
    if dim is None:
        if x.size == 0:
            return _t(np.array(np.nan, dtype=x.dtype) if x.dtype.kind == "f" else
                           np.zeros((), x.dtype))
        op = _nanmedian_all if nan else _median_all
        return op(input, ignore_nan=nan)
    d = _wrap_dim(dim, input.ndim)
    if x.ndim:
        _empty_check(x, name, d)
    cls = _Nanmedian if nan else _Median
    op = _nanmedian_dim_values if nan else _median_dim_values
    idx = _median_indices(input, dim=d, ignore_nan=nan) if x.ndim else None
    return _dim_result(cls, op, input, d, idx, keepdim)


def median(input: Tensor, dim: Any = None, keepdim: bool = False) -> Any:
    """The lower median; with ``dim``, (values, indices). NaN propagates."""
    return _median("median", input, dim, keepdim)


def nanmedian(input: Tensor, dim: Any = None, keepdim: bool = False) -> Any:
    """median ignoring NaN (NaN only where a row is all NaN)."""
    return _median("nanmedian", input, dim, keepdim)


@nondiff("mode_indices")
def _mode_indices(x: np.ndarray, *, dim: int) -> np.ndarray:
    return _rows_apply(x, dim, _mode_row, 1)


def mode(input: Tensor, dim: int = -1, keepdim: bool = False) -> Any:
    """The most frequent value along ``dim`` (the smallest of equally frequent ones) and the
    index of its last occurrence."""
    x = input._data
    d = _wrap_dim(dim, input.ndim)
    if x.ndim == 0:
        return _dim_result(_Mode, _mode_values, input, d, None, keepdim)
    _empty_check(x, "mode", d)
    idx = _mode_indices(input, dim=d)
    return _dim_result(_Mode, _mode_values, input, d, idx, keepdim)


@nondiff("cum_extreme_indices")
def _cum_extreme(x: np.ndarray, *, dim: int, largest: bool) -> np.ndarray:
    """For each place along ``dim``, the index of the largest (smallest) value so far."""
    d = dim
    if x.ndim == 0 or x.size == 0:
        return np.zeros(x.shape, np.int64)
    xm = np.moveaxis(x, d, -1)
    n = xm.shape[-1]
    best = np.zeros(xm.shape, np.int64)
    cur_v = xm[..., 0].copy()
    cur_i = np.zeros(xm.shape[:-1], np.int64)
    isf = x.dtype.kind == "f"
    for j in range(1, n):
        v = xm[..., j]
        # torch: a later equal value takes over, and NaN, once met, stays
        take = (v >= cur_v) if largest else (v <= cur_v)
        if isf:
            take = (take | np.isnan(v)) & ~(np.isnan(cur_v) & ~np.isnan(v))
        cur_v = np.where(take, v, cur_v)
        cur_i = np.where(take, j, cur_i)
        best[..., j] = cur_i
    return np.moveaxis(best, -1, d)


def cummax(input: Tensor, dim: int) -> Any:
    d = _wrap_dim(dim, input.ndim)
    idx = _cum_extreme(input, dim=d, largest=True)
    return _Cummax(_cummax_values(input, dim=d, index=idx._data, squeeze=False), idx)


def cummin(input: Tensor, dim: int) -> Any:
    d = _wrap_dim(dim, input.ndim)
    idx = _cum_extreme(input, dim=d, largest=False)
    return _Cummin(_cummin_values(input, dim=d, index=idx._data, squeeze=False), idx)


@defop("aminmax", node="AminmaxBackward0", save=(0,), save_output=True, outputs=2)
def _aminmax(x: np.ndarray, *, dim: Any, keepdim: bool) -> tuple:
    if dim is None:
        return np.asarray(np.min(x)), np.asarray(np.max(x))
    return np.min(x, axis=dim, keepdims=keepdim), np.max(x, axis=dim, keepdims=keepdim)


@_aminmax.backward
def aminmax_backward(ctx: Any, grads: list) -> tuple:
    # each extreme's gradient shared by its equals
    x, lo = ctx.saved
    p = ctx.params
    hi = Tensor._make(_aminmax.forward(x._data, dim=p["dim"], keepdim=p["keepdim"])[1])
    out: Any = None
    grads = (list(grads) + [None])[:2]  # the engine omits trailing outputs' None
    for g, y in zip(grads, (lo.detach(), hi), strict=True):
        if g is None:
            continue
        if p["dim"] is not None and not p["keepdim"] and x.ndim:
            g, y = g.unsqueeze(p["dim"]), y.unsqueeze(p["dim"])
        mask = x == y
        count = mask.sum() if p["dim"] is None else mask.sum(p["dim"], keepdim=True)
        part = g * mask / count
        out = part if out is None else out + part
    return (out,)


def aminmax(input: Tensor, *, dim: Any = None, keepdim: bool = False) -> Any:
    x = input._data
    if dim is None:
        if x.size == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as "
                               "the operation has no identity.")
        d = None
    else:
        d = _wrap_dim(dim, input.ndim)
        if x.size == 0 and x.ndim and x.shape[d] == 0:
            raise IndexError(f"aminmax: Expected reduction dim {d} to have non-zero size.")
        if x.ndim == 0:
            d = None
    lo, hi = _aminmax(input, dim=d, keepdim=bool(keepdim))
    return _Aminmax(lo, hi)


out_rule("kthvalue", no_overlap=True)


@defop("logcumsumexp", node="LogcumsumexpBackward0", save=(0,), save_output=True)
def _logcumsumexp(x: np.ndarray, *, dim: int) -> np.ndarray:
    if x.ndim == 0:
        return x.copy()
    if x.dtype == np.float32:  # accumulated in double, as torch's CPU kernel does
        return np.logaddexp.accumulate(x.astype(np.float64), axis=dim).astype(np.float32)
    return np.logaddexp.accumulate(x, axis=dim)


@_logcumsumexp.backward
def logcumsumexp_backward(ctx: Any, grad: Tensor) -> tuple:  # dy_j/dx_i = exp(x_i - y_j) for i <= j
    x, y = ctx.saved
    d = ctx.params["dim"]
    if x.ndim == 0:
        return (grad,)
    # sum_{j >= i} g_j exp(x_i - y_j), in log space to stay finite: the positive and the
    # negative parts of g each as exp(x_i + reverse-logcumsumexp(log|g_j| - y_j))
    # (the lowest finite number stands for log 0, so that nothing turns into NaN)
    lowest = Tensor._make(np.asarray(np.finfo(grad._data.dtype).min, dtype=grad._data.dtype))
    log_abs = grad.abs().log()

    def part(mask: Tensor) -> Tensor:
        a = where(mask, log_abs, lowest) - y
        return (x + _logcumsumexp(a.flip(d), dim=d).flip(d)).exp()

    return (part(grad > 0) - part(grad < 0),)


@_logcumsumexp.jvp
def logcumsumexp_jvp(tangents: list, inputs: tuple, out: Tensor, *, dim: int) -> Tensor:
    # dy_j = sum_{i <= j} exp(x_i - y_j) dx_i, with exp(x - c) for c the row's largest x
    (t,), (x,) = tangents, inputs
    if x.ndim == 0:
        return t
    c = x.detach().amax(dim, keepdim=True)
    return (t * (x - c).exp()).cumsum(dim) * (c - out).exp()


def logcumsumexp(input: Tensor, dim: int) -> Tensor:
    d = _wrap_dim(dim, input.ndim)
    if input._data.dtype.kind in "iub":
        input = input.to(_float_default())
    return _logcumsumexp(input, dim=d)


def _float_default() -> Any:
    return get_default_dtype()


# ---------------------------------------------------------------------------------------------
# torch's CPU selection order, where ties (or NaNs) make it matter: ``_sort_emulation``
# ---------------------------------------------------------------------------------------------

def _mode_row(values: np.ndarray) -> list:
    """torch's CPU mode of one row: (value, index) pairs sorted by value with the standard
    library's sort, the first longest run wins, and its last pair gives the index."""
    row = value_index_pairs(values)
    StdAlgorithms(row, operator.lt).sort(0, len(row))
    best_i, best_n, run = 0, 0, 0
    for i in range(len(row)):
        run += 1
        if i == len(row) - 1 or row[i][0] != row[i + 1][0]:
            if run > best_n:
                best_i, best_n = row[i][1], run
            run = 0
    return [best_i]


def _rows_apply(x: np.ndarray, d: int, fn: Any, width: int) -> np.ndarray:
    """``fn(row) -> list of width indices`` over every row along ``d``; keepdim layout."""
    xm = np.moveaxis(x, d, -1)
    rows = xm.reshape(-1, xm.shape[-1])
    out = np.empty((rows.shape[0], width), np.int64)
    for r, row in enumerate(rows):
        out[r] = fn(row)
    return np.moveaxis(out.reshape(xm.shape[:-1] + (width,)), -1, d)


def _needs_emulation(x: np.ndarray, d: int) -> bool:
    """Ties (or NaNs) along ``d``: the picked indices depend on torch's algorithm."""
    if x.size == 0 or x.shape[d] < 2:
        return False
    s = np.sort(x, axis=d)
    ties = np.take(s, np.arange(1, x.shape[d]), axis=d) == np.take(s, np.arange(
        x.shape[d] - 1), axis=d)
    return bool(ties.any()) or (x.dtype.kind == "f" and bool(np.isnan(x).any()))


# ---------------------------------------------------------------------------------------------
# unique, unique_consecutive (no gradient)
# ---------------------------------------------------------------------------------------------

@nondiff("unique", outputs=3, dynamic_shape=True)
def _unique(x: np.ndarray, *, dim: int | None) -> tuple:
    """(sorted distinct values, the inverse index of each element, the counts), int64."""
    if dim is None:
        vals, inv, counts = np.unique(x.reshape(-1), return_inverse=True, return_counts=True)
        inv = inv.reshape(x.shape)
    elif x.shape[dim] == 0:
        vals, inv, counts = x.copy(), np.zeros(0, np.int64), np.zeros(0, np.int64)
    else:
        vals, inv, counts = np.unique(x, axis=dim, return_inverse=True, return_counts=True)
        inv = inv.reshape(-1)
    return vals, inv.astype(np.int64), counts.astype(np.int64)


def _picked(vals: Tensor, inv: Tensor, counts: Tensor, return_inverse: bool,
            return_counts: bool) -> Any:
    """The values, with the inverse and the counts where asked for."""
    res = [vals] + [inv] * bool(return_inverse) + [counts] * bool(return_counts)
    return res[0] if len(res) == 1 else tuple(res)


def unique(input: Tensor, sorted: bool = True, return_inverse: bool = False,
           return_counts: bool = False, dim: Any = None) -> Any:
    d = None if dim is None else _wrap_dim(dim, input.ndim)
    vals, inv, counts = _unique(input, dim=d)
    return _picked(vals, inv, counts, return_inverse, return_counts)


@nondiff("unique_consecutive", outputs=3, dynamic_shape=True)
def _unique_consecutive(x: np.ndarray, *, dim: int | None) -> tuple:
    """(the first of each run of equal values (or slices along ``dim``), each element's run,
    each run's length), int64."""
    if dim is None:
        flat = x.reshape(-1)
        if flat.size == 0:
            change = np.zeros(0, bool)
        else:
            change = np.concatenate([[True], flat[1:] != flat[:-1]])
        vals = flat[change]
        inv = (np.cumsum(change) - 1).reshape(x.shape)
        starts = np.flatnonzero(change)
        n = flat.size
    else:
        xm = np.moveaxis(x, dim, 0)
        n = xm.shape[0]
        if n == 0:
            change = np.zeros(0, bool)
        else:
            rest = int(np.prod(xm.shape[1:]))
            diff = (xm[1:] != xm[:-1]).reshape(n - 1, rest).any(axis=1)
            change = np.concatenate([[True], diff])
        vals = np.moveaxis(xm[change], 0, dim)
        inv = np.cumsum(change) - 1
        starts = np.flatnonzero(change)
    counts = np.diff(np.append(starts, n))
    return (np.ascontiguousarray(vals), inv.astype(np.int64), counts.astype(np.int64))


def unique_consecutive(input: Tensor, return_inverse: bool = False, return_counts: bool = False,
                       dim: Any = None) -> Any:
    d = None if dim is None else _wrap_dim(dim, input.ndim)
    vals, inv, counts = _unique_consecutive(input, dim=d)
    return _picked(vals, inv, counts, return_inverse, return_counts)


METHODS = {
    "sort": sort, "argsort": argsort, "msort": msort, "topk": topk, "kthvalue": kthvalue,
    "median": median, "nanmedian": nanmedian, "mode": mode, "cummax": cummax,
    "cummin": cummin, "aminmax": aminmax, "logcumsumexp": logcumsumexp, "unique": unique,
    "unique_consecutive": unique_consecutive,
}

__all__ = list(METHODS)
