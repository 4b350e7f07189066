"""Indexing: ``x[...]`` and ``x[...] = v``, gather, scatter, scatter_add, index_select,
masked_fill, index_put.

``x[key]`` is taken apart the way torch does it: ints, slices, None and Ellipsis become a chain of
views (select, slice, unsqueeze), and integer tensors / lists / boolean masks then become one
``index`` op (IndexBackward0) whose backward scatter-adds, so repeated indices accumulate.
``x[key] = v`` writes through the same views (CopySlices), or through ``index_put_``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import _dtype
from .._out import rule as out_rule
from .._tensor import Tensor, _wrap_dim
from . import _registry
from . import shape as S
from ._registry import (
    apply,
    apply_,
    check_no_overlap,
    cpp_type_name,
    defop,
    nondiff,
    value_check,
)
from .elementwise import _broadcast_error


def _is_advanced(k: Any) -> bool:
    if isinstance(k, Tensor):
        return k.ndim > 0 or k._data.dtype == np.bool_
    if isinstance(k, np.ndarray):
        return True
    return isinstance(k, (list, tuple)) or isinstance(k, bool)


def _to_index_array(k: Any) -> np.ndarray:
    if isinstance(k, Tensor):
        a = k._data
    elif isinstance(k, np.ndarray):
        a = k
    else:
        a = np.asarray(_unwrap_list(k))
    if a.dtype.kind == "f":
        raise IndexError(
            "tensors used as indices must be long, int, byte or bool tensors"
        )
    if a.dtype == np.uint8:
        a = a.astype(bool)
    return a


def _unwrap_list(k: Any) -> Any:
    if isinstance(k, Tensor):
        return k._data
    if isinstance(k, (list, tuple)):
        return [_unwrap_list(v) for v in k]
    return k


def _normalize_key(key: Any) -> tuple:
    if not isinstance(key, tuple):
        key = (key,)
    return key


def _count_dims(key: tuple) -> int:
    n = 0
    for k in key:
        if k is None or k is Ellipsis:
            continue
        if isinstance(k, bool) or (isinstance(k, Tensor) and k._data.dtype == np.bool_ and
                                   k.ndim == 0):
            continue
        if (isinstance(k, Tensor) and k._data.dtype == np.bool_) or (
            isinstance(k, np.ndarray) and k.dtype == np.bool_
        ):
            n += k.ndim
        else:
            n += 1
    return n


def getitem(x: Tensor, key: Any) -> Tensor:
    """``x[key]`` with torch's semantics and nodes."""
    key = _normalize_key(key)
    ndim = x.ndim
    used = _count_dims(key)
    if used > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    if key.count(Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if not any(_is_advanced(k) for k in key):
        return _basic(x, key, ndim - used)
    return _advanced(x, key)


def _basic(x: Tensor, key: tuple, fill: int) -> Tensor:
    """Ints, slices, None and Ellipsis: a chain of views, left to right."""
    if key == (Ellipsis,) or key == ():
        return S.alias(x)
    out = x
    dim = 0  # position in the result so far
    src = 0  # position in x (what torch's messages count)
    for k in key:
        if k is Ellipsis:
            dim += fill
            src += fill
        elif k is None:
            out = S.unsqueeze(out, dim)
            dim += 1
        elif isinstance(k, slice):
            if k == slice(None) or k == slice(None, None, None):
                if len(key) == 1:
                    out = S.slice_dim(out, dim, None, None, None)
                dim += 1
                src += 1
                continue
            out = S.slice_dim(out, dim, k.start, k.stop, k.step)
            dim += 1
            src += 1
        else:
            if isinstance(k, Tensor):
                k = k.item()
            try:
                i = k.__index__()
            except AttributeError:
                raise IndexError(
                    "only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                    "Variables are valid indices (got " + type(k).__name__ + ")"
                ) from None
            n = out.shape[dim]
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for dimension {src} with size {n}")
            out = S.select(out, dim, i)
            src += 1
    return out


def _advanced(x: Tensor, key: tuple) -> Tensor:
    """Integer arrays and masks: one gather (IndexBackward0) after the basic part."""
    np_key: list = []
    for k in key:
        if isinstance(k, Tensor) and k.ndim == 0 and k._data.dtype != np.bool_:
            np_key.append(int(k.item()))
        elif _is_advanced(k):
            np_key.append(_to_index_array(k))
        elif isinstance(k, np.integer):
            np_key.append(int(k))
        else:
            np_key.append(k)
    _check_bounds(x._data.shape, *np_key)
    return _index(x, key=tuple(np_key))


@value_check
def _check_bounds(shape: tuple, *key: Any) -> None:
    """An index key's masks match the shape and its integers and index arrays lie in range."""
    dim = 0
    fill = len(shape) - _count_dims(key)
    for k in key:
        if k is Ellipsis:
            dim += fill
            continue
        if k is None:
            continue
        if isinstance(k, np.ndarray) and k.dtype == np.bool_:
            for j in range(k.ndim):
                if k.shape[j] != shape[dim + j]:
                    raise IndexError(
                        f"The shape of the mask {list(k.shape)} at index {j} does not match the "
                        f"shape of the indexed tensor {list(shape)} at index {dim + j}"
                    )
            dim += k.ndim
            continue
        if isinstance(k, np.ndarray) and k.size:
            n = shape[dim]
            bad = k[(k >= n) | (k < -n)]
            if bad.size:
                raise IndexError(
                    f"index {int(bad.reshape(-1)[0])} is out of bounds for dimension {dim} with "
                    f"size {n}"
                )
        elif isinstance(k, int) and not isinstance(k, bool):
            n = shape[dim]
            if not -n <= k < n:
                raise IndexError(f"index {k} is out of bounds for dimension {dim} with size {n}")
        dim += 1


@defop("index", node="IndexBackward0")
def _index(x: np.ndarray, *, key: tuple) -> np.ndarray:
    return np.array(x[key], copy=True)


@_index.backward
def index_backward(ctx: Any, grad: Tensor) -> tuple:
    # scatter-add back: repeated indices accumulate
    zeros = Tensor._make(np.zeros(ctx.input_shapes[0], dtype=grad._data.dtype))
    return (index_put(zeros, ctx.params["key"], grad, accumulate=True),)


@defop("index_put", node="IndexPutBackward0")
def _index_put(x: np.ndarray, values: Any, *, key: tuple, accumulate: bool) -> np.ndarray:
    out = x.copy()
    if isinstance(values, np.ndarray) and values.dtype != x.dtype:
        values = values.astype(x.dtype)
    try:
        if accumulate:
            np.add.at(out, key, values)
        else:
            out[key] = values
    except ValueError:
        target = np.shape(x[key])
        raise RuntimeError(
            f"shape mismatch: value tensor of shape {list(np.shape(values))} cannot be broadcast "
            f"to indexing result of shape {list(target)}"
        ) from None
    return out


@_index_put.backward
def index_put_backward(ctx: Any, grad: Tensor) -> tuple:
    # written positions: from values; the rest: from x
    key, accumulate = ctx.params["key"], ctx.params["accumulate"]
    need_x, need_v = ctx.needs_input_grad
    gx = gv = None
    if need_x:
        gx = grad if accumulate else index_put(grad, key, 0.0)
    if need_v:
        gv = _index(grad, key=key)
    return gx, gv


def index_put(input: Tensor, indices: Any, values: Any, accumulate: bool = False) -> Tensor:
    """Out of place: a copy of ``input`` with ``values`` written (or added) at ``indices``."""
    key = tuple(_to_index_array(k) if _is_advanced(k) else k for k in _normalize_key(indices))
    return _index_put(input, values, key=key, accumulate=accumulate)


def index_put_(x: Tensor, key: Any, values: Any, accumulate: bool = False) -> Tensor:
    key = tuple(_to_index_array(k) if _is_advanced(k) else k for k in _normalize_key(key))
    return apply_(_index_put, x, values, key=key, accumulate=accumulate)


def take_flat(flat: Tensor, index: Tensor) -> Tensor:
    return _index(flat, key=(index._data,))


def put_flat(flat: Tensor, index: Tensor, values: Any) -> Tensor:
    return _index_put(flat, values, key=(index._data,), accumulate=False)


def setitem(x: Tensor, key: Any, value: Any) -> None:
    """``x[key] = value``: through a view and copy_ for basic keys, else index_put_."""
    if isinstance(value, (list, tuple)):
        value = Tensor._make(np.asarray(value, dtype=x._data.dtype))
    nkey = _normalize_key(key)
    if not any(_is_advanced(k) for k in nkey):
        used = _count_dims(nkey)
        if used > x.ndim:
            raise IndexError(f"too many indices for tensor of dimension {x.ndim}")
        target = _basic(x, nkey, x.ndim - used)
        if isinstance(value, Tensor):
            if value._data.shape != target._data.shape:
                # torch drops the value's leading 1s, then expands it to the target (expand's
                # errors, not copy's)
                shape = value._data.shape
                while shape and shape[0] == 1 and len(shape) > target.ndim:
                    shape = shape[1:]
                value = value.reshape(shape).expand(target._data.shape)
            target.copy_(value)
        else:
            check_no_overlap(target)  # (torch copies the number in: the overlap check holds)
            target.fill_(value)
        return
    np_key: list[Any] = []
    for k in nkey:
        if isinstance(k, Tensor) and k.ndim == 0 and k._data.dtype != np.bool_:
            np_key.append(int(k.item()))
        elif _is_advanced(k):
            np_key.append(_to_index_array(k))
        else:
            np_key.append(k)
    _check_bounds(x._data.shape, *np_key)
    apply_(_index_put, x, value, key=tuple(np_key), accumulate=False)


# ---------------------------------------------------------------------------------------------
# gather, scatter, scatter_add, index_select, masked_fill
# ---------------------------------------------------------------------------------------------

def _full_index(index: np.ndarray, dim: int) -> tuple:
    """NumPy fancy-index tuple addressing ``out[i][j]...`` with ``index`` along ``dim``."""
    grids: list[np.ndarray] = list(np.indices(index.shape, sparse=True))
    grids[dim] = index
    return tuple(grids)


def _check_gather(x: np.ndarray, dim: int, index: np.ndarray, name: str) -> None:
    if index.dtype not in (np.int64, np.int32) and index.size:
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")
    if index.ndim != x.ndim and not (index.ndim <= 1 and x.ndim <= 1) and index.size:
        raise RuntimeError(
            "Index tensor must have the same number of dimensions as input tensor"
        )
    n = x.shape[dim] if x.ndim else 1
    if index.size and (index.max() >= n or index.min() < -n):
        bad = int(index[(index >= n) | (index < -n)].reshape(-1)[0])
        raise RuntimeError(f"index {bad} is out of bounds for dimension {dim} with size {n}")


@defop("gather", node="GatherBackward0")
def _gather(x: np.ndarray, *, dim: int, index: np.ndarray) -> np.ndarray:
    _check_gather(x, dim, index, "gather")
    if index.size == 0:
        return np.empty(index.shape, dtype=x.dtype)
    if x.ndim == 0:
        return x.reshape(index.shape).copy()
    return x[_full_index(index, dim)]


@_gather.backward
def gather_backward(ctx: Any, grad: Tensor) -> tuple:
    # scatter-add the gradient back to where it came from
    p = ctx.params
    zeros = Tensor._make(np.zeros(ctx.input_shapes[0], dtype=grad._data.dtype))
    return (scatter_add(zeros, p["dim"], Tensor._make(p["index"]), grad),)


def gather(input: Tensor, dim: int, index: Tensor, *, sparse_grad: bool = False) -> Tensor:
    d = _wrap_dim(dim, input.ndim)
    x, idx = input._data, index._data
    if idx.ndim == x.ndim:
        for k in range(x.ndim):
            if k != d and idx.shape[k] > x.shape[k]:
                raise RuntimeError(
                    f"Size does not match at dimension {k} expected index {list(idx.shape)} to "
                    f"be no larger than self {list(x.shape)} apart from dimension {d}")
    return _gather(input, dim=d, index=idx)


out_rule("gather", no_overlap=True, dtype="exact")


@defop("scatter_add", node="ScatterAddBackward0")
def _scatter_add(x: np.ndarray, src: np.ndarray, *, dim: int, index: np.ndarray) -> np.ndarray:
    _check_gather(x, dim, index, "scatter_add")
    out = x.copy()
    if index.size == 0:
        return out
    src = src[tuple(slice(0, s) for s in index.shape)] if src.ndim else src
    if x.ndim == 0:  # a 0-d input: one place, written once per index element
        np.add.at(out.reshape(1), index.reshape(-1) * 0, src.astype(x.dtype).reshape(-1))
        return out
    np.add.at(out, _full_index(index, dim), src.astype(x.dtype, copy=False))
    return out


@_scatter_add.backward
def scatter_add_backward(ctx: Any, grad: Tensor) -> tuple:
    # x passes through; src gets the gradient it added to
    p = ctx.params
    need_x, need_src = ctx.needs_input_grad
    gsrc = None
    if need_src:
        gsrc = gather(grad, p["dim"], Tensor._make(p["index"]))
        src_shape = ctx.input_shapes[1]
        if tuple(gsrc.shape) != tuple(src_shape):
            gsrc = _pad_to(gsrc, src_shape)
    return (grad if need_x else None), gsrc


def _pad_to(g: Tensor, shape: tuple) -> Tensor:
    zeros = Tensor._make(np.zeros(shape, dtype=g._data.dtype))
    return index_put(zeros, tuple(slice(0, s) for s in g.shape), g)


def gradient_into_zeros(ctx: Any, grad: Tensor, add: Callable[[Tensor], Tensor]) -> tuple:
    """The input gradient of an op whose output values were taken from places of its one
    input: ``add(zeros)`` adds ``grad`` back into zeros of the input's shape and dtype; a 0-d
    input, taken whole, gets the sum of ``grad``."""
    shape = ctx.input_shapes[0]
    zeros = Tensor._make(np.zeros(shape, dtype=grad._data.dtype))
    if len(shape) == 0:
        return (zeros + grad.sum(),)
    return (add(zeros),)


def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    _check_scatter_src("scatter_add", input, _wrap_dim(dim, input.ndim), index, src)
    return _scatter_add(input, src, dim=_wrap_dim(dim, input.ndim), index=index._data)


def scatter_add_(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    return apply_(_scatter_add, input, src, dim=_wrap_dim(dim, input.ndim), index=index._data)


@defop("scatter", node="ScatterBackward0")
def _scatter(x: np.ndarray, src: np.ndarray, *, dim: int, index: np.ndarray) -> np.ndarray:
    _check_gather(x, dim, index, "scatter")
    out = x.copy()
    src = src[tuple(slice(0, s) for s in index.shape)] if src.ndim else src
    if x.ndim == 0:
        out.reshape(1)[index.reshape(-1) * 0] = src.reshape(-1)
        return out
    out[_full_index(index, dim)] = src
    return out


@_scatter.backward
def scatter_backward(ctx: Any, grad: Tensor) -> tuple:
    # overwritten positions get nothing; src gets theirs
    p = ctx.params
    index = Tensor._make(p["index"])
    need_x, need_src = ctx.needs_input_grad
    gx = scatter(grad, p["dim"], index, 0.0) if need_x else None
    gsrc = None
    if need_src:
        gsrc = gather(grad, p["dim"], index)
        if tuple(gsrc.shape) != tuple(ctx.input_shapes[1]):
            gsrc = _pad_to(gsrc, ctx.input_shapes[1])
    return gx, gsrc


@defop("scatter_value", node="ScatterBackward1")
def _scatter_value(x: np.ndarray, *, dim: int, index: np.ndarray, value: Any) -> np.ndarray:
    _check_gather(x, dim, index, "scatter")
    out = x.copy()
    if x.ndim == 0:
        out.reshape(1)[index.reshape(-1) * 0] = value
        return out
    out[_full_index(index, dim)] = value
    return out


@_scatter_value.backward
def scatter_value_backward(ctx: Any, grad: Tensor) -> tuple:  # overwritten positions get nothing
    p = ctx.params
    return (scatter(grad, p["dim"], Tensor._make(p["index"]), 0.0),)


def _check_scatter(name: str, x: np.ndarray, dim: int, index: np.ndarray,
                   src: np.ndarray) -> None:
    if index.dtype not in (np.int64, np.int32) and index.size:
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")
    if src.dtype != x.dtype:  # torch names scatter here whichever of the family it is
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    if index.size == 0:
        return  # nothing is written: torch checks no more
    if index.ndim != x.ndim and not (index.ndim <= 1 and x.ndim <= 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    if index.ndim != src.ndim and not (index.ndim <= 1 and src.ndim <= 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    ish, xsh, ssh = index.shape, x.shape, src.shape
    for d in range(index.ndim if x.ndim else 0):
        if ish[d] > ssh[d] or (d != dim and ish[d] > xsh[d]):
            raise RuntimeError(
                f"Expected index {list(ish)} to be no larger than self {list(xsh)} apart from "
                f"dimension {dim} and to be no larger size than src {list(ssh)}")
    n = x.shape[dim] if x.ndim else 1
    bad = index[(index >= n) | (index < -n)]
    if bad.size:
        raise RuntimeError(f"index {int(bad.reshape(-1)[0])} is out of bounds for dimension "
                           f"{dim} with size {n}")


def _check_scatter_src(name: str, input: Tensor, dim: int, index: Tensor, src: Any) -> None:
    if isinstance(src, Tensor):
        _check_scatter(name, input._data, dim, index._data, src._data)


def scatter(input: Tensor, dim: int, index: Tensor, src: Any = None, *, value: Any = None,
            reduce: Any = None) -> Tensor:
    d = _wrap_dim(dim, input.ndim)
    _check_scatter_src("scatter", input, d, index, src)
    if src is None:
        src = value
    if reduce is not None:
        if reduce == "add":
            if not isinstance(src, Tensor):
                src = Tensor._make(np.full(index.shape, src, dtype=input._data.dtype))
            return scatter_add(input, d, index, src)
        raise NotImplementedError(f"scatter reduce={reduce!r} is not supported")
    if isinstance(src, Tensor):
        return _scatter(input, src, dim=d, index=index._data)
    return _scatter_value(input, dim=d, index=index._data, value=src)


def scatter_(input: Tensor, dim: int, index: Tensor, src: Any = None, *,
             value: Any = None) -> Tensor:
    d = _wrap_dim(dim, input.ndim)
    if src is None:
        src = value
    if isinstance(src, Tensor):
        return apply_(_scatter, input, src, dim=d, index=index._data)
    return apply_(_scatter_value, input, dim=d, index=index._data, value=src)


@defop("index_select", node="IndexSelectBackward0")
def _index_select(x: np.ndarray, *, dim: int, index: np.ndarray) -> np.ndarray:
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if index.dtype.kind not in "iu":
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    n = x.shape[dim] if x.ndim else 1
    if index.size and (index.max() >= n or index.min() < 0):
        raise IndexError("index out of range in self")
    if x.ndim == 0:  # torch: the result of a 0-d input is 0-d (the index has one element)
        return x.reshape(1)[index.reshape(-1)].reshape(())
    return np.take(x, index.reshape(-1), axis=dim)


@_index_select.backward
def index_select_backward(ctx: Any, grad: Tensor) -> tuple:
    # add each selected slice's gradient back (accumulates)
    p = ctx.params
    zeros = Tensor._make(np.zeros(ctx.input_shapes[0], dtype=grad._data.dtype))
    if grad.ndim == 0 or len(ctx.input_shapes[0]) == 0:
        return (index_put(zeros, (), grad.reshape(()), accumulate=True),)
    key = (slice(None),) * p["dim"] + (p["index"].reshape(-1),)
    return (index_put(zeros, key, grad, accumulate=True),)


def index_select(input: Tensor, dim: int, index: Tensor) -> Tensor:
    return _index_select(input, dim=_wrap_dim(dim, input.ndim), index=index._data)


def same_scalar_type(name: str) -> Any:
    """The out rule of index_select and masked_select: out has the input's dtype."""
    def check(args: tuple, out: Any) -> None:
        if isinstance(out, Tensor) and out.dtype is not args[0].dtype:
            raise RuntimeError(f"{name}(): self and result must have the same scalar type")

    return check


out_rule("index_select", check=same_scalar_type("index_select"), no_overlap=True)


def _mask_array(mask: Any, name: str) -> np.ndarray:
    m = mask._data if isinstance(mask, Tensor) else np.asarray(mask)
    if m.dtype != np.bool_:
        raise RuntimeError(f"{name} only supports boolean masks, but got mask with dtype "
                           f"{cpp_type_name(_dtype.from_numpy_dtype(m.dtype))}")
    return m


@defop("masked_fill", node="MaskedFillBackward0")
def _masked_fill(x: np.ndarray, *, mask: np.ndarray, value: Any) -> np.ndarray:
    try:
        return np.where(mask, np.asarray(value, dtype=x.dtype), x)
    except ValueError:
        raise _broadcast_error(x, mask) from None


@_masked_fill.backward
def masked_fill_backward(ctx: Any, grad: Tensor) -> tuple:  # filled positions get no gradient
    mask = Tensor._make(ctx.params["mask"])
    return (grad.masked_fill(mask, 0.0),)


@defop("masked_fill_tensor", node="MaskedFillBackward1")
def _masked_fill_tensor(x: np.ndarray, value: np.ndarray, *, mask: np.ndarray) -> np.ndarray:
    return np.where(mask, value.astype(x.dtype), x)


@_masked_fill_tensor.backward
def masked_fill_tensor_backward(ctx: Any, grad: Tensor) -> tuple:
    # x keeps the unfilled positions, value the filled ones
    mask = Tensor._make(ctx.params["mask"])
    need_x, need_v = ctx.needs_input_grad
    gx = grad.masked_fill(mask, 0.0) if need_x else None
    gv = (grad * mask).sum() if need_v else None
    return gx, gv


def masked_fill(input: Tensor, mask: Any, value: Any) -> Tensor:
    m = _mask_array(mask, "masked_fill_")
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(
                "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                f"{value.ndim} dimension(s)."
            )
        if value._requires_grad or value._fw_grad is not None:
            return _masked_fill_tensor(input, value, mask=m)
    return _masked_fill(input, mask=m, value=_fill_scalar(input, value))


def _fill_scalar(input: Tensor, value: Any, cast_tensor: bool = False) -> Any:
    """A fill value as torch converts it to ``input``'s dtype: a number (or a 0-d tensor's,
    unless ``cast_tensor``: then a cast) through the checked conversion (its overflow error)."""
    if isinstance(value, Tensor):
        if cast_tensor:
            return value._data.astype(input._data.dtype)[()]
        value = value.item()
    if isinstance(value, (bool, int, float, complex)):
        return _dtype.checked_scalar(value, input._data.dtype)
    return value


def masked_fill_(input: Tensor, mask: Any, value: Any) -> Tensor:
    m = _mask_array(mask, "masked_fill_")
    if isinstance(value, Tensor):
        if value._requires_grad or value._fw_grad is not None:
            return apply_(_masked_fill_tensor, input, value, mask=m)
    return apply_(_masked_fill, input, mask=m, value=_fill_scalar(input, value))


@nondiff("nonzero", dynamic_shape=True)
def _nonzero(x: np.ndarray) -> np.ndarray:
    """The coordinates of the nonzero elements, one row each (int64, shape (n, ndim))."""
    if x.ndim == 0:  # torch: a 0-d input has one place and no coordinates
        return np.zeros((int(bool(x)), 0), np.int64)
    return np.stack(np.nonzero(x), axis=1).astype(np.int64)


def nonzero(input: Tensor, *, as_tuple: bool = False) -> Any:
    if _registry._SPECIAL:  # a capture listens: through the registry (``nondiff``)
        nz = _nonzero(input)
    else:  # the same, without the detour
        nz = Tensor._make(_nonzero.forward(input._data))
    if not as_tuple:
        return nz
    if input.ndim == 0:  # a zero per row of no coordinates (the sum over none of them)
        return (nz.sum(1),)
    return tuple(c.contiguous() for c in nz.unbind(1))  # one (contiguous) column per dim


def take_along_dim(input: Tensor, indices: Tensor, dim: Any = None) -> Tensor:
    if dim is None:
        return gather(input.reshape(-1), 0, indices.reshape(-1))
    # torch broadcasts input and indices against each other in every dim but ``dim``
    d = _wrap_dim(dim, input.ndim)
    if input.ndim == indices.ndim and input.ndim:
        a, b = list(input.shape), list(indices.shape)
        a[d] = b[d] = 1
        try:
            common = list(np.broadcast_shapes(tuple(a), tuple(b)))
        except ValueError:
            common = None
        if common is not None:
            shape_in = common.copy()
            shape_in[d] = input.shape[d]
            shape_ix = common.copy()
            shape_ix[d] = indices.shape[d]
            if tuple(shape_in) != tuple(input.shape):
                input = input.expand(tuple(shape_in))
            if tuple(shape_ix) != tuple(indices.shape):
                indices = indices.expand(tuple(shape_ix))
    return gather(input, d, indices)


__all__ = ["getitem", "setitem", "gather", "scatter", "scatter_add", "index_select",
           "masked_fill", "index_put", "apply"]
