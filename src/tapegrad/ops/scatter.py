"""Writing into a tensor by index, out of place: index_add / index_copy / index_fill /
index_reduce (slices chosen by a 1-d index along ``dim``), scatter_reduce (elements chosen by an
index of the source's shape, as scatter), put / take (flat positions), masked_scatter /
masked_select (positions chosen by a boolean mask).

Each op has its own node, named as torch names it (IndexAddBackward0, TakeBackward0...), and a
backward rule written with the family's own ops, so second derivatives come for free: what an
op writes, its backward reads back (index_select, gather, take, masked_select), and what it
reads, its backward writes back (index_add, scatter_add, put, masked_scatter).

The index_* forwards move ``dim`` to the front (``_front``), so one NumPy ``ufunc.at`` call
does the work along the first axis whatever the input's rank; 0-d inputs act as 1-element
vectors, as in torch.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._dtype import from_numpy_dtype
from .._out import rule as out_rule
from .._tensor import Tensor, _wrap_dim
from . import indexing as ix
from ._registry import apply_, defop, scalar_type_name, value_check
from .elementwise import _broadcast_error, where
from .indexing import _check_scatter, _fill_scalar
from .shape import cat

_UFUNC = {"sum": np.add, "prod": np.multiply, "mean": np.add, "amax": np.maximum,
          "amin": np.minimum}


def _front(a: np.ndarray, dim: int) -> np.ndarray:
    """A view of ``a`` with ``dim`` first (a 0-d array as a 1-element vector)."""
    return np.moveaxis(a, dim, 0) if a.ndim else a.reshape(1)


def _t(a: np.ndarray) -> Tensor:
    return Tensor._make(a)


def _dtype_name(a: np.ndarray) -> str:
    return scalar_type_name(from_numpy_dtype(a.dtype))


def _zeros(shape: Any, like: Tensor) -> Tensor:
    return _t(np.zeros(tuple(shape), dtype=like._data.dtype))


INTERNAL_OVERLAP_MESSAGE = (
    "unsupported operation: more than one element of the written-to tensor refers to a single "
    "memory location. Please clone() the tensor before performing the operation."
)


# ---------------------------------------------------------------------------------------------
# index_add, index_copy, index_fill, index_reduce: slices along ``dim`` chosen by a 1-d index
# ---------------------------------------------------------------------------------------------

@value_check
def _check_index(name: str, shape: tuple, dim: int, index: np.ndarray) -> None:
    if index.dtype not in (np.int64, np.int32):
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index but got: "
                           f"{_dtype_name(index)}")
    if index.ndim > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector, but got dim: {index.ndim}"
                         f" with type: {_dtype_name(index)} and size: {list(index.shape)}")
    n = shape[dim] if shape else 1
    bad = index[(index >= n) | (index < -n)]
    if bad.size:
        prefix = f"{name}(): " if name == "index_copy_" else ""
        raise IndexError(f"{prefix}index {int(bad.reshape(-1)[0])} is out of bounds for "
                         f"dimension {dim} with size {n}")


def _check_source(name: str, x: np.ndarray, dim: int, index: np.ndarray,
                  src: np.ndarray) -> None:
    k = index.size
    xs, ss = list(x.shape) or [1], list(src.shape) or [1]
    xs_rest, ss_rest = xs[:dim] + xs[dim + 1:], ss[:dim] + ss[dim + 1:]
    if name == "index_copy_":
        if src.dtype != x.dtype:
            raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, "
                               f"but got (self) {_dtype_name(x)} and (source) {_dtype_name(src)}")
        if len(ss) != len(xs) or xs_rest != ss_rest or ss[dim] != k:
            raise RuntimeError(
                "index_copy_(): Source/destination tensor must have same slice shapes. "
                f"Destination slice shape: {' '.join(map(str, xs_rest))} at dimension {dim} and "
                f"source slice shape: {' '.join(map(str, ss_rest))} at dimension 0.")
        return
    if src.dtype != x.dtype:
        raise RuntimeError(f"{name}(): self ({_dtype_name(x)}) and source ({_dtype_name(src)}) "
                           "must have the same scalar type")
    if len(ss) != len(xs) or xs_rest != ss_rest:
        raise RuntimeError(
            "source tensor shape must match self tensor shape, excluding the specified "
            f"dimension. Got self.shape = {list(x.shape)} source.shape = {list(src.shape)}")
    if ss[dim] != k:
        raise IndexError(f"{name}(): Number of indices ({k}) should be equal to "
                         f"source.size(dim) ({ss[dim]})")


@defop("index_add", node="IndexAddBackward0")
def _index_add(x: np.ndarray, src: np.ndarray, *, dim: int, index: np.ndarray,
               alpha: Any) -> np.ndarray:
    out = x.copy()
    s = _front(src, dim)
    if alpha != 1:  # integers wrap around as in torch (uint8 with alpha=-1)
        s = (s.astype(np.int64) * int(alpha) if x.dtype.kind in "iu" else s * alpha).astype(
            x.dtype)
    np.add.at(_front(out, dim), index.reshape(-1), s)
    return out


@_index_add.backward
def index_add_backward(ctx: Any, grad: Tensor) -> tuple:
    # x passes through; source gets alpha * its slices
    p = ctx.params
    gsrc = None
    if ctx.needs_input_grad[1]:
        gsrc = index_select_nd(grad, p["dim"], p["index"], ctx.input_shapes[1])
        if p["alpha"] != 1:
            gsrc = gsrc * p["alpha"]
    return grad, gsrc


def index_select_nd(grad: Tensor, dim: int, index: np.ndarray, shape: Any) -> Tensor:
    """``grad.index_select(dim, index)`` shaped like the source (0-d sources stay 0-d)."""
    g = ix.index_select(grad, dim, _t(index.reshape(-1)))
    return g.reshape(tuple(shape)) if tuple(g.shape) != tuple(shape) else g


def _prep(name: str, input: Tensor, dim: int, index: Tensor, source: Any = None) -> tuple:
    d = _wrap_dim(dim, input.ndim)
    idx = index._data
    _check_index(name, input._data.shape, d, idx)
    if source is not None:
        _check_source(name, input._data, d, idx, source._data)
    return d, _positions(idx, input.shape[d] if input.ndim else 1)


@value_check
def _positions(idx: np.ndarray, n: int) -> np.ndarray:
    """A checked index with its negative entries counted from the end."""
    return np.where(idx < 0, idx + n, idx)


def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *,
              alpha: Any = 1) -> Tensor:
    d, idx = _prep("index_add_", input, dim, index, source)
    return _index_add(input, source, dim=d, index=idx, alpha=alpha)


def index_add_(input: Tensor, dim: int, index: Tensor, source: Tensor, *,
               alpha: Any = 1) -> Tensor:
    d, idx = _prep("index_add_", input, dim, index, source)
    return apply_(_index_add, input, source, dim=d, index=idx, alpha=alpha)


@defop("index_copy", node="IndexCopyBackward0")
def _index_copy(x: np.ndarray, src: np.ndarray, *, dim: int, index: np.ndarray) -> np.ndarray:
    out = x.copy()
    _front(out, dim)[index.reshape(-1)] = _front(src, dim)
    return out


@_index_copy.backward
def index_copy_backward(ctx: Any, grad: Tensor) -> tuple:
    # copied-over slices get nothing; source gets theirs
    p = ctx.params
    need_x, need_src = ctx.needs_input_grad
    gx = index_fill(grad, p["dim"], _t(p["index"]), 0) if need_x else None
    gsrc = index_select_nd(grad, p["dim"], p["index"], ctx.input_shapes[1]) if need_src else None
    return gx, gsrc


def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    d, idx = _prep("index_copy_", input, dim, index, source)
    return _index_copy(input, source, dim=d, index=idx)


out_rule("index_add", "index_copy", "index_reduce", "scatter_reduce", "take",
         "masked_select", no_overlap=True)  # (out may not be, or share memory with, an input)
out_rule("masked_select", check=ix.same_scalar_type("masked_select"))


def _take_out(args: tuple, out: Any) -> None:
    """take's out rule: out has the input's dtype."""
    x = args[0]
    if isinstance(out, Tensor) and isinstance(x, Tensor) and out.dtype is not x.dtype:
        raise RuntimeError(f"take(): self and out expected to have the same dtype, but got "
                           f"self.dtype = {scalar_type_name(x.dtype)} and out.dtype = "
                           f"{scalar_type_name(out.dtype)}")


out_rule("take", check=_take_out)


def index_copy_(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    d, idx = _prep("index_copy_", input, dim, index, source)
    return apply_(_index_copy, input, source, dim=d, index=idx)


@defop("index_fill", node="IndexFillBackward0")
def _index_fill(x: np.ndarray, *, dim: int, index: np.ndarray, value: Any) -> np.ndarray:
    out = x.copy()
    _front(out, dim)[index.reshape(-1)] = value
    return out


@_index_fill.backward
def index_fill_backward(ctx: Any, grad: Tensor) -> tuple:  # filled slices get nothing
    p = ctx.params
    return (index_fill(grad, p["dim"], _t(p["index"]), 0),)


@defop("index_fill_tensor", node="IndexFillBackward1")
def _index_fill_tensor(x: np.ndarray, value: np.ndarray, *, dim: int,
                       index: np.ndarray) -> np.ndarray:
    out = x.copy()
    _front(out, dim)[index.reshape(-1)] = value
    return out


@_index_fill_tensor.backward
def index_fill_tensor_backward(ctx: Any, grad: Tensor) -> tuple:
    # the value gets the sum over the slices it filled
    p = ctx.params
    need_x, need_v = ctx.needs_input_grad
    gx = index_fill(grad, p["dim"], _t(p["index"]), 0) if need_x else None
    gv = None
    if need_v:
        idx = np.unique(p["index"])
        gv = ix.index_select(grad, p["dim"], _t(idx)).sum()
    return gx, gv


def _fill_value(input: Tensor, value: Any) -> Any:
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError("index_fill_ only supports a 0-dimensional value tensor, but got "
                               f"tensor with {value.ndim} dimension(s).")
        if value._requires_grad or value._fw_grad is not None:
            return value
    return _fill_scalar(input, value)


def index_fill(input: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    d, idx = _prep("index_fill_", input, dim, index)
    value = _fill_value(input, value)
    if isinstance(value, Tensor):
        if value._requires_grad or value._fw_grad is not None:
            return _index_fill_tensor(input, value, dim=d, index=idx)
        value = value.item()
    return _index_fill(input, dim=d, index=idx, value=value)


def index_fill_(input: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    d, idx = _prep("index_fill_", input, dim, index)
    value = _fill_value(input, value)
    if isinstance(value, Tensor):
        if value._requires_grad or value._fw_grad is not None:
            return apply_(_index_fill_tensor, input, value, dim=d, index=idx)
        value = value.item()
    return apply_(_index_fill, input, dim=d, index=idx, value=value)


# index_reduce and scatter_reduce share their forward (a ufunc applied at positions) and their
# backward (formulas over the positions each source element went to): ``_Where`` says where.


def _reduce_at(out: np.ndarray, pos: tuple, src: np.ndarray, reduce: str,
               include_self: bool) -> np.ndarray:
    """Reduce ``src`` into ``out`` (modified) at the fancy-index ``pos`` (one per element)."""
    if not include_self:  # the reduction's identity where something lands
        ident: Any = {"sum": 0, "mean": 0, "prod": 1}.get(reduce)
        if ident is not None:
            pass
        elif out.dtype.kind == "f":
            ident = -np.inf if reduce == "amax" else np.inf
        elif out.dtype.kind in "iu":
            info = np.iinfo(out.dtype)
            ident = info.min if reduce == "amax" else info.max
        else:  # bool
            ident = reduce == "amin"
        out[pos] = ident
    _UFUNC[reduce].at(out, pos, src)
    if reduce == "mean":
        count = np.zeros(out.shape, dtype=np.int64)
        np.add.at(count, pos, 1)
        if include_self:
            count += 1
        count = np.maximum(count, 1)
        if out.dtype.kind == "f":
            out /= count
        else:
            np.floor_divide(out, count, out=out, casting="unsafe")
    return out


def prod_grads(grad: Tensor, x: Tensor, src: Tensor, result: Tensor, take: Any, put_add: Any,
               again: Any) -> tuple:
    """The product of the others, without dividing by a zero: x's zeros count as ones in the
    product x's gradient needs (``again(x', src)`` reruns the op); a source element that is
    the only zero among those landing on its place gets the product with itself as one."""
    x1 = x.masked_fill(x == 0, 1.0)
    gx = grad * again(x1, src) / x1
    src_zero = src == 0
    zeros_there = take(put_add(src_zero.to(grad.dtype)))
    single = src_zero & (zeros_there == 1)
    others = again(x, src.masked_fill(single, 1.0))
    gsrc = where(single, take(grad * others), take(grad * result) / src.masked_fill(src_zero,
                                                                                     1.0))
    return gx, gsrc


def _reduce_backward(grad: Tensor, x: Tensor, src: Tensor, result: Tensor, reduce: str,
                     include_self: bool, take: Any, put_add: Any, touched: Tensor,
                     needs: tuple, again: Any = None) -> tuple:
    """The gradients of a reduce-at op. ``take(t)`` reads ``t`` at each source element's
    destination; ``put_add(t)`` adds a source-shaped ``t`` at the destinations (a new tensor
    shaped like x); ``touched`` is 1. where some source element landed."""
    gx = gsrc = None
    keep = 1.0 - touched if not include_self else None  # x's share where it counts
    if reduce == "sum":
        gx, gsrc = grad, take(grad)
    elif reduce == "mean":  # d/dv mean = 1/N at each destination
        n = put_add(Tensor._make(np.ones(src.shape, dtype=grad._data.dtype)))
        n = n + (1.0 if include_self else 0.0)
        n = n.masked_fill(n == 0, 1.0)
        gx, gsrc = grad / n, take(grad / n)
    elif reduce == "prod":  # d/dv prod = the product of the others (zeros taken care of)
        gx, gsrc = prod_grads(grad, x, src, result, take, put_add, again)
    else:  # amax/amin: the gradient is shared evenly by the elements equal to the result
        x_is = (x == result).to(grad.dtype)
        if keep is not None:
            x_is = x_is * keep
        src_is = (src == take(result)).to(grad.dtype)
        n = x_is + put_add(src_is)
        gd = grad / n
        gx, gsrc = x_is * gd, src_is * take(gd)
    if keep is not None and reduce != "amax" and reduce != "amin":
        gx = gx * keep
    return (gx if needs[0] else None), (gsrc if needs[1] else None)


@defop("index_reduce", node="IndexReduceBackward0", save=(0, 1), save_output=True)
def _index_reduce(x: np.ndarray, src: np.ndarray, *, dim: int, index: np.ndarray,
                  reduce: str, include_self: bool) -> np.ndarray:
    out = x.copy()
    _reduce_at(_front(out, dim), (index.reshape(-1),), _front(src, dim), reduce, include_self)
    return out


@_index_reduce.backward
def index_reduce_backward(ctx: Any, grad: Tensor) -> tuple:
    x, src, result = ctx.saved
    p = ctx.params
    dim, index = p["dim"], p["index"]
    shape = ctx.input_shapes[0] or x.shape
    hit = np.zeros(tuple(x.shape)[dim] if x.ndim else 1, dtype=grad._data.dtype)
    hit[index.reshape(-1)] = 1
    hshape = [1] * x.ndim
    if x.ndim:
        hshape[dim] = hit.size
    touched = _t(hit.reshape(hshape))

    def take(t: Tensor) -> Tensor:
        return index_select_nd(t, dim, index, src.shape)

    def put_add(t: Tensor) -> Tensor:
        return index_add(_zeros(shape, t), dim, _t(index), t)

    def again(a: Tensor, b: Tensor) -> Tensor:
        return _index_reduce(a, b, **p)

    return _reduce_backward(grad, x, src, result, p["reduce"], p["include_self"], take,
                            put_add, touched, ctx.needs_input_grad, again)


_INDEX_REDUCE = ("prod", "mean", "amax", "amin")


def _index_reduce_args(input: Tensor, dim: int, index: Tensor, source: Tensor,
                       reduce: str) -> tuple:
    if reduce not in _INDEX_REDUCE:
        raise RuntimeError("index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    return _prep("index_reduce_", input, dim, index, source)


def index_reduce(input: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                 include_self: bool = True) -> Tensor:
    d, idx = _index_reduce_args(input, dim, index, source, reduce)
    return _index_reduce(input, source, dim=d, index=idx, reduce=reduce,
                         include_self=bool(include_self))


def index_reduce_(input: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                  include_self: bool = True) -> Tensor:
    d, idx = _index_reduce_args(input, dim, index, source, reduce)
    return apply_(_index_reduce, input, source, dim=d, index=idx, reduce=reduce,
                  include_self=bool(include_self))


# ---------------------------------------------------------------------------------------------
# scatter_reduce: scatter's addressing, a reduction where several elements land on one place
# ---------------------------------------------------------------------------------------------

def _scatter_pos(index: np.ndarray, dim: int, ndim: int) -> tuple:
    if ndim == 0:
        return (index.reshape(-1) * 0,)
    return ix._full_index(index, dim)


def _src_part(src: np.ndarray, index: np.ndarray) -> np.ndarray:
    if src.ndim == 0:
        return src.reshape(index.shape) if index.size == 1 else np.broadcast_to(src, index.shape)
    return src[tuple(slice(0, s) for s in index.shape)]


@defop("scatter_reduce", node="ScatterReduceBackward0", save=(0, 1), save_output=True)
def _scatter_reduce(x: np.ndarray, src: np.ndarray, *, dim: int, index: np.ndarray,
                    reduce: str, include_self: bool) -> np.ndarray:
    out = x.copy()
    view = out if out.ndim else out.reshape(1)
    part = _src_part(src, index)
    pos = _scatter_pos(index, dim, out.ndim)
    _reduce_at(view, pos, part.reshape(-1) if out.ndim == 0 else part, reduce, include_self)
    return out


@_scatter_reduce.backward
def scatter_reduce_backward(ctx: Any, grad: Tensor) -> tuple:
    x, src, result = ctx.saved
    p = ctx.params
    dim, index = p["dim"], p["index"]
    shape = tuple(x.shape)
    it = _t(index)
    hit = np.zeros(shape, dtype=grad._data.dtype)
    (hit if hit.ndim else hit.reshape(1))[_scatter_pos(index, dim, hit.ndim)] = 1
    touched = _t(hit)
    src_shape = tuple(src.shape)

    def take(t: Tensor) -> Tensor:
        g = ix.gather(t, dim, it) if t.ndim else t.reshape(1)[_t(index.reshape(-1) * 0)]
        g = g.reshape(index.shape)
        if tuple(g.shape) != src_shape:
            g = ix._pad_to(g, src_shape)
        return g

    def put_add(t: Tensor) -> Tensor:
        part = t[tuple(slice(0, s) for s in index.shape)] if t.ndim else t
        if not shape:
            return part.reshape(-1).sum().reshape(())
        return ix.scatter_add(_zeros(shape, t), dim, it, part)

    def again(a: Tensor, b: Tensor) -> Tensor:
        return _scatter_reduce(a, b, **p)

    return _reduce_backward(grad, x, src, result, p["reduce"], p["include_self"], take,
                            put_add, touched, ctx.needs_input_grad, again)


_SCATTER_REDUCE = ("sum", "prod", "mean", "amax", "amin")


def _scatter_reduce_args(input: Tensor, dim: int, index: Tensor, src: Tensor,
                         reduce: str) -> tuple:
    if reduce not in _SCATTER_REDUCE:
        raise RuntimeError("reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    d = _wrap_dim(dim, input.ndim)
    _check_scatter("scatter_reduce", input._data, d, index._data, src._data)
    idx = index._data
    return d, np.where(idx < 0, idx + (input.shape[d] if input.ndim else 1), idx)


def scatter_reduce(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                   include_self: bool = True) -> Tensor:
    d, idx = _scatter_reduce_args(input, dim, index, src, reduce)
    return _scatter_reduce(input, src, dim=d, index=idx, reduce=reduce,
                           include_self=bool(include_self))


def scatter_reduce_(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                    include_self: bool = True) -> Tensor:
    d, idx = _scatter_reduce_args(input, dim, index, src, reduce)
    return apply_(_scatter_reduce, input, src, dim=d, index=idx, reduce=reduce,
                  include_self=bool(include_self))


# ---------------------------------------------------------------------------------------------
# put and take: flat (row-major) positions
# ---------------------------------------------------------------------------------------------

def _flat_index(x: np.ndarray, index: np.ndarray) -> np.ndarray:
    if index.dtype != np.int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got "
                           f"{_dtype_name(index)}")
    n = x.size
    bad = index[(index >= n) | (index < -n)]
    if bad.size:
        raise IndexError(f"out of range: tried to access index {int(bad.reshape(-1)[0])} on a "
                         f"tensor of {n} elements.")
    return np.where(index < 0, index + n, index)


@defop("take", node="TakeBackward0")
def _take(x: np.ndarray, *, index: np.ndarray) -> np.ndarray:
    return np.array(x.reshape(-1)[index], copy=True)


@_take.backward
def take_backward(ctx: Any, grad: Tensor) -> tuple:
    # add each read element's gradient back to its place
    zeros = _t(np.zeros(ctx.input_shapes[0], dtype=grad._data.dtype))
    return (put(zeros, _t(ctx.params["index"]), grad, accumulate=True),)


def take(input: Tensor, index: Tensor) -> Tensor:
    idx = _flat_index(input._data, index._data)
    return _take(input, index=idx)


@defop("put", node="PutBackward0")
def _put(x: np.ndarray, src: np.ndarray, *, index: np.ndarray, accumulate: bool) -> np.ndarray:
    out = x.copy()
    flat = out.reshape(-1)
    if accumulate:
        np.add.at(flat, index.reshape(-1), src.reshape(-1))
    else:
        flat[index.reshape(-1)] = src.reshape(-1)
    return out


@_put.backward
def put_backward(ctx: Any, grad: Tensor) -> tuple:  # written places: from source; the rest: from x
    p = ctx.params
    need_x, need_src = ctx.needs_input_grad
    it = _t(p["index"])
    gx = gsrc = None
    if need_x:
        gx = grad if p["accumulate"] else put(grad, it, _zeros(it.shape, grad))
    if need_src:
        gsrc = take(grad, it).reshape(ctx.input_shapes[1])
    return gx, gsrc


def _put_args(input: Tensor, index: Tensor, source: Tensor) -> np.ndarray:
    if source._data.dtype != input._data.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {_dtype_name(input._data)} and source.dtype = "
                           f"{_dtype_name(source._data)}")
    if index._data.size != source._data.size:
        raise RuntimeError(f"put_(): Expected source and index to have the same number of "
                           f"elements, but got source.numel() = {source._data.size}, "
                           f"index.numel() = {index._data.size}")
    return _flat_index(input._data, index._data)


def put(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    idx = _put_args(input, index, source)
    return _put(input, source, index=idx, accumulate=bool(accumulate))


def put_(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    idx = _put_args(input, index, source)
    return apply_(_put, input, source, index=idx, accumulate=bool(accumulate))


# ---------------------------------------------------------------------------------------------
# masked_scatter and masked_select
# ---------------------------------------------------------------------------------------------

@defop("masked_scatter", node="MaskedScatterBackward0")
def _masked_scatter(x: np.ndarray, src: np.ndarray, *, mask: np.ndarray) -> np.ndarray:
    shape = np.broadcast_shapes(x.shape, mask.shape)
    out = np.array(np.broadcast_to(x, shape), copy=True)
    m = np.broadcast_to(mask, shape)
    count = int(m.sum())
    if count > src.size:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    out[m] = src.reshape(-1)[:count]
    return out


@_masked_scatter.backward
def masked_scatter_backward(ctx: Any, grad: Tensor) -> tuple:
    # masked places: from source, in order; the rest: x
    mask = _t(ctx.params["mask"])
    need_x, need_src = ctx.needs_input_grad
    gx = ix.masked_fill(grad, mask, 0.0) if need_x else None
    gsrc = None
    if need_src:
        src_shape = ctx.input_shapes[1]
        picked = masked_select(grad, mask)
        n = int(np.prod(src_shape))
        if picked.shape[0] < n:
            picked = cat([picked, _zeros((n - picked.shape[0],), grad)])
        gsrc = picked.reshape(src_shape)
    return gx, gsrc


def _mask_for(name: str, input: Tensor, mask: Any) -> np.ndarray:
    m = mask._data if isinstance(mask, Tensor) else np.asarray(mask)
    if m.dtype != np.bool_:
        raise RuntimeError(f"{name} only supports boolean masks, but got mask with dtype "
                           f"{_dtype_name(m)}")
    return m


def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    m = _mask_for("masked_scatter_", input, mask)
    if source._data.dtype != input._data.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but "
                           f"got {_dtype_name(input._data)} and {_dtype_name(source._data)}")
    return _masked_scatter(input, source, mask=m)


def masked_scatter_(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    m = _mask_for("masked_scatter_", input, mask)
    if source._data.dtype != input._data.dtype:
        raise RuntimeError(f"masked_scatter_: expected self and source to have same dtypes but "
                           f"got {_dtype_name(input._data)} and {_dtype_name(source._data)}")
    if np.broadcast_shapes(input._data.shape, m.shape) != input._data.shape:
        raise RuntimeError(f"masked_scatter_: expected mask to be broadcastable to self's shape "
                           f"{list(input.shape)}")
    return apply_(_masked_scatter, input, source, mask=m)


@defop("masked_select", node="MaskedSelectBackward0")
def _masked_select(x: np.ndarray, *, mask: np.ndarray) -> np.ndarray:
    shape = np.broadcast_shapes(x.shape, mask.shape)
    return np.array(np.broadcast_to(x, shape)[np.broadcast_to(mask, shape)], copy=True)


# the output's length is the number of selected places: checked at each replay of a program
_masked_select.dynamic_shape = True


@_masked_select.backward
def masked_select_backward(ctx: Any, grad: Tensor) -> tuple:
    # back to the selected places (the engine sums to x)
    mask = ctx.params["mask"]
    shape = np.broadcast_shapes(ctx.input_shapes[0], mask.shape)
    zeros = _t(np.zeros(shape, dtype=grad._data.dtype))
    return (masked_scatter(zeros, _t(np.broadcast_to(mask, shape)), grad),)


def masked_select(input: Tensor, mask: Tensor) -> Tensor:
    m = _mask_for("masked_select", input, mask)
    try:
        np.broadcast_shapes(input._data.shape, m.shape)
    except ValueError:
        raise _broadcast_error(input._data, m) from None
    return _masked_select(input, mask=m)


# ---------------------------------------------------------------------------------------------
# nonzero_static
# ---------------------------------------------------------------------------------------------

def nonzero_static(input: Tensor, *, size: int, fill_value: int = -1) -> Tensor:
    """The first ``size`` rows of ``nonzero(input)``, padded with ``fill_value``."""
    if size < 0:
        raise RuntimeError(f"nonzero_static: 'size' must be an non-negative integer, but got: "
                           f"{size}")
    idx = ix.nonzero(input)._data
    ndim = input.ndim
    out = np.full((size, ndim), fill_value, dtype=np.int64)
    k = min(size, idx.shape[0])
    out[:k] = idx[:k]
    return _t(out)


METHODS = {
    "index_add": index_add, "index_add_": index_add_, "index_copy": index_copy,
    "index_copy_": index_copy_, "index_fill": index_fill, "index_fill_": index_fill_,
    "index_reduce": index_reduce, "index_reduce_": index_reduce_,
    "scatter_reduce": scatter_reduce, "scatter_reduce_": scatter_reduce_, "put": put,
    "put_": put_, "take": take, "masked_scatter": masked_scatter,
    "masked_scatter_": masked_scatter_, "masked_select": masked_select,
    "nonzero_static": nonzero_static,
}

__all__ = ["index_add", "index_copy", "index_fill", "index_reduce", "scatter_reduce", "put",
           "take", "masked_scatter", "masked_select", "nonzero_static"]
