"""``torch.segment_reduce``: reduce consecutive segments of ``data`` along ``axis``.

The segments are given by their ``lengths`` or by ``offsets`` (segment i is
``offsets[i]:offsets[i+1]``); both may have leading dims, matching ``data``'s before ``axis``
(one set of segments per leading index). Reductions: sum, mean, max, min, prod; an empty
segment gives ``initial`` when given, else the reduction's identity (0, nan, -inf, inf, 1), and
``initial`` joins every non-empty segment's reduction too (mean: (initial + sum) / length).

The gradient (``SegmentReduceBackward0``) is torch's: the segment's gradient spread over its
elements (mean: divided by the length; max/min: to the elements equal to the result, a positive one
divided among ties as torch's kernel does; prod: the product of the other elements). As in
torch, that gradient has no derivative itself.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._tensor import Tensor, _wrap_dim
from ._registry import defop, scalar_type_name

_REDUCTIONS = ("sum", "mean", "max", "min", "prod")
_EMPTY = {"sum": 0.0, "mean": np.nan, "max": -np.inf, "min": np.inf, "prod": 1.0}


def _bounds(offsets: np.ndarray) -> list:
    """(..., S + 1) offsets -> flat list of (leading index, segment, start, stop)."""
    out = []
    for lead in np.ndindex(offsets.shape[:-1]):
        row = offsets[lead]
        for s in range(len(row) - 1):
            out.append((lead, s, int(row[s]), int(row[s + 1])))
    return out


def _reduce(seg: np.ndarray, reduce: str, initial: Any, axis: int) -> np.ndarray:
    n = seg.shape[axis]
    if n == 0:
        value = _EMPTY[reduce] if initial is None else initial
        return np.full(np.delete(seg.shape, axis), value, dtype=seg.dtype)
    if reduce == "sum":
        r = seg.sum(axis)
    elif reduce == "mean":
        r = seg.sum(axis)
    elif reduce == "max":
        r = seg.max(axis)
    elif reduce == "min":
        r = seg.min(axis)
    else:
        r = seg.prod(axis)
    if initial is not None:
        r = {"sum": np.add, "mean": np.add, "max": np.maximum, "min": np.minimum,
             "prod": np.multiply}[reduce](r, seg.dtype.type(initial))
    if reduce == "mean":
        r = r / n
    return np.asarray(r, dtype=seg.dtype)


def _index(lead: tuple, axis: int, pos: Any) -> tuple:
    return lead + (slice(None),) * (axis - len(lead)) + (pos,)


@defop("segment_reduce", node="SegmentReduceBackward0", save=(0,), save_output=True)
def _segment_reduce(data: np.ndarray, *, reduce: str, offsets: np.ndarray, axis: int,
                    initial: Any) -> np.ndarray:
    nseg = offsets.shape[-1] - 1
    shape = list(data.shape)
    shape[axis] = nseg
    out = np.empty(shape, dtype=data.dtype)
    k = offsets.ndim - 1  # leading dims that index the segment sets
    for lead, s, start, stop in _bounds(offsets):
        seg = data[_index(lead, axis, slice(start, stop))]
        out[_index(lead, axis, s)] = _reduce(seg, reduce, initial, axis - k)
    return out


@_segment_reduce.backward
def segment_reduce_backward(ctx: Any, grad: Tensor) -> tuple:
    # each segment's gradient spread over its elements
    data, out = ctx.saved
    return (_segment_reduce_backward(grad, data, out, **ctx.params),)


@defop("segment_reduce_backward", node="NotImplemented")
def _segment_reduce_backward(grad: np.ndarray, data: np.ndarray, out: np.ndarray, *,
                             reduce: str, offsets: np.ndarray, axis: int,
                             initial: Any) -> np.ndarray:
    res = np.zeros_like(data)
    k = offsets.ndim - 1
    ax = axis - k
    for lead, s, start, stop in _bounds(offsets):
        n = stop - start
        if n == 0:
            continue
        where = _index(lead, axis, slice(start, stop))
        seg = data[where]
        g = np.expand_dims(grad[_index(lead, axis, s)], ax)
        if reduce == "sum":
            res[where] = np.broadcast_to(g, seg.shape)
        elif reduce == "mean":
            res[where] = np.broadcast_to(g / n, seg.shape)
        elif reduce in ("max", "min"):
            # torch's kernel: each element equal to the result (or NaN) gets the gradient;
            # with ties, the positive ones are divided by the number of ties
            hit = (seg == np.expand_dims(out[_index(lead, axis, s)], ax)) | np.isnan(seg)
            count = hit.sum(ax, keepdims=True)
            gi = np.where(hit, g, 0)
            res[where] = np.where((count >= 2) & (gi > 0), gi / np.maximum(count, 1), gi)
        else:  # prod: the product of the others (with initial), zeros counted apart
            zeros = (seg == 0).sum(ax, keepdims=True)
            safe = np.where(seg == 0, 1, seg)
            others = np.prod(safe, axis=ax, keepdims=True)
            if initial is not None:
                others = others * initial
            res[where] = g * np.where(zeros == 0, others / safe,
                                      np.where((zeros == 1) & (seg == 0), others, 0))
    return res


_segment_reduce_backward.node_cls._cpp_name = "torch::autograd::NotImplemented"


@_segment_reduce_backward.backward
def segment_reduce_backward_backward(ctx: Any, grad: Any) -> tuple:
    raise RuntimeError("derivative for aten::_segment_reduce_backward is not implemented")


@_segment_reduce.jvp
def segment_reduce_jvp(tangents: list, inputs: tuple, out: Tensor, *, reduce: str,
                       offsets: np.ndarray, axis: int, initial: Any) -> Tensor:
    # d out_s = sum over segment s of (d out_s / d x_j) dx_j
    # (torch has no forward-mode derivative here: tapegrad gives the derivative's tangent)
    (t,), (data,) = tangents, inputs
    weights = _segment_reduce_backward.forward(
        np.ones(out.shape, dtype=data._data.dtype), data._data, out._data, reduce=reduce,
        offsets=offsets, axis=axis, initial=initial)
    return Tensor._make(_segment_reduce.forward(t._data * weights, reduce="sum",
                                                offsets=offsets, axis=axis, initial=None))


def segment_reduce(data: Tensor, reduce: str, *, lengths: Tensor | None = None,
                   indices: Tensor | None = None, offsets: Tensor | None = None,
                   axis: int = 0, unsafe: bool = False, initial: Any = None) -> Tensor:
    """Reduce (sum, mean, max, min, prod) the segments of ``data`` along ``axis`` that
    ``lengths`` or ``offsets`` define.

    >>> import tapegrad as torch
    >>> torch.segment_reduce(torch.tensor([1., 2., 3., 4.]), "sum", lengths=torch.tensor([1, 3]))
    tensor([1., 9.])
    """
    if reduce not in _REDUCTIONS:
        raise RuntimeError("reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    if indices is not None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    if lengths is None and offsets is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined.")
    axis = _wrap_dim(axis, data.ndim)
    segs = lengths if lengths is not None else offsets
    assert segs is not None
    if segs._data.dtype.kind not in "iu":
        kernel = "_segment_reduce_lengths_cpu_kernel1" if lengths is not None else \
            "_segment_reduce_offsets_cpu_kernel1"
        raise NotImplementedError(f"\"{kernel}\" not implemented for "
                                  f"'{scalar_type_name(segs.dtype)}'")
    if data._data.dtype.kind != "f":
        raise NotImplementedError("\"_segment_reduce_cpu\" not implemented for "
                                  f"'{scalar_type_name(data.dtype)}'")
    if axis != segs.ndim - 1:
        raise RuntimeError("segment_reduce(): Expected axis to be the last dimension of "
                           f"{'lengths' if lengths is not None else 'offsets'} but got {axis}.")
    arr = segs._data.astype(np.int64)
    if lengths is not None:
        if (arr < 0).any():
            raise RuntimeError("lengths contains negative value!")
        if not unsafe and (arr.sum(-1) != data.shape[axis]).any():
            raise RuntimeError("segment_reduce(): Expected all rows of lengths along axis to sum "
                               "to data.size(lengths.dim()-1) when !unsafe.")
        zero = np.zeros(arr.shape[:-1] + (1,), dtype=np.int64)
        arr = np.concatenate([zero, np.cumsum(arr, -1)], -1)
    elif (np.diff(arr, axis=-1) < 0).any():
        raise RuntimeError("Expected segment_length >= 0 to be true, but got false.  (Could this "
                           "error message be improved?  If so, please report an enhancement "
                           "request to PyTorch.)")
    return _segment_reduce(data, reduce=reduce, offsets=arr, axis=axis, initial=initial)


__all__ = ["segment_reduce"]
