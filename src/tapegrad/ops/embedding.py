"""Embeddings: ``embedding`` (a row lookup whose backward sums the rows' gradients) and
``embedding_bag`` (sums, means or maxima over bags of rows, with per-sample weights).
"""


from __future__ import annotations

from typing import Any

import numpy as np

from .._tensor import Tensor
from . import indexing as ix
from . import reduction as rd
from ._registry import defop
from ._tangents import linear_tangent

# ---------------------------------------------------------------------------------------------
# Embedding
# ---------------------------------------------------------------------------------------------

@defop("embedding", node="EmbeddingBackward0")
def _embedding(w: np.ndarray, *, indices: np.ndarray, padding_idx: Any,
               scale_grad_by_freq: bool) -> np.ndarray:
    return np.take(w, indices, axis=0)


def _row_sums(n_rows: int, index: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """out[i] = sum of rows[j] with index[j] == i (a one-hot product when that is small)."""
    if n_rows * index.size <= 1 << 22:
        onehot = (np.arange(n_rows)[:, None] == index[None, :]).astype(rows.dtype)
        return onehot @ rows
    out = np.zeros((n_rows,) + rows.shape[1:], dtype=rows.dtype)
    np.add.at(out, index, rows)
    return out


# forward mode, as torch: the looked-up rows of the tangent (padding row included: the output
# does depend on it, whatever the backward rule's convention)
_embedding.jvp(linear_tangent(_embedding))


def _embedding_rows(ctx: Any, g: Any) -> tuple:
    """(rows, indices): the output gradient ``g`` (an array, or a Tensor with create_graph)
    as rows of the table's width, the padding row's dropped and the frequency scaling
    applied; and the flat indices."""
    p = ctx.params
    n_rows, d = ctx.input_shapes[0]
    idx = p["indices"].reshape(-1)
    tensors = isinstance(g, Tensor)
    rows = g.reshape(-1, d)
    if p["padding_idx"] is not None:
        keep = (idx != p["padding_idx"])[:, None]
        rows = rows * (Tensor._make(keep) if tensors else keep)
    if p["scale_grad_by_freq"]:
        counts = np.bincount(idx, minlength=n_rows)
        scale = (1.0 / counts[idx])[:, None].astype(g._data.dtype if tensors else g.dtype)
        rows = rows * (Tensor._make(scale) if tensors else scale)
    return rows, idx


@_embedding.backward
def embedding_backward(ctx: Any, grad: Tensor) -> tuple:
    # every looked-up row sends its gradient back (summed)
    rows, idx = _embedding_rows(ctx, grad)
    zeros = Tensor._make(np.zeros(ctx.input_shapes[0], dtype=grad._data.dtype))
    return (ix.index_put(zeros, (idx,), rows, accumulate=True),)


# ---------------------------------------------------------------------------------------------
# Embedding bags
# ---------------------------------------------------------------------------------------------

@defop("embedding_bag", node="EmbeddingBagBackward0", save=(0, 1))
def _embedding_bag(w: np.ndarray, psw: Any, *, indices: np.ndarray, segment: np.ndarray,
                   keep: np.ndarray, n_bags: int, mode: int, scale_grad_by_freq: bool,
                   _cache: dict, summed: Any = None) -> np.ndarray:
    """Bags of rows: segment[j] is the bag of indices[j]; rows with keep False are left out
    (padding_idx). mode 0 sum, 1 mean, 2 max. ``summed`` (mean): the indices a bag's sum
    takes when it is not all of them (torch's count, and gradient, take them all)."""
    rows = w[indices]
    if psw is not None:
        rows = rows * psw[:, None]
    seg, rows = segment[keep], rows[keep]
    d = w.shape[1]
    if mode == 2:
        out = np.full((n_bags, d), -np.inf, dtype=w.dtype)
        np.maximum.at(out, seg, rows)
        pos = np.where(rows == out[seg], np.arange(len(seg))[:, None], len(seg))
        first = np.full((n_bags, d), len(seg), dtype=np.int64)
        np.minimum.at(first, seg, pos)
        empty = first == len(seg)
        out[empty] = 0
        kept_index = indices[keep]
        _cache["max_rows"] = np.where(empty, -1, kept_index[np.minimum(first, len(seg) - 1)])
        return out
    if summed is not None:
        part = summed[keep]
        out = _row_sums(n_bags, seg[part], rows[part]) if part.any() else np.zeros(
            (n_bags, d), dtype=w.dtype)
    else:
        out = _row_sums(n_bags, seg, rows) if len(seg) else np.zeros((n_bags, d), dtype=w.dtype)
    if mode == 1:
        counts = np.bincount(seg, minlength=n_bags)
        out = out / np.maximum(counts, 1)[:, None].astype(w.dtype)
        _cache["counts"] = counts
    return out.astype(w.dtype, copy=False)


def max_bag_hits(ctx: Any) -> tuple:
    """max mode: (the bags' elements that took a row, their positions in the flat table)."""
    v, d = ctx.input_shapes[0]
    rows = ctx.params["_cache"]["max_rows"]
    hit = rows >= 0
    cols = np.broadcast_to(np.arange(d), rows.shape)[hit]
    return hit, rows[hit] * d + cols


def bag_scales(ctx: Any, dt: Any) -> np.ndarray:
    """sum and mean modes: the factor on each kept row's gradient (1, 1 / its bag's count,
    and 1 / its index's count with scale_grad_by_freq)."""
    p = ctx.params
    idx, seg = p["indices"][p["keep"]], p["segment"][p["keep"]]
    scale = np.ones(len(seg), dtype=dt)
    if p["mode"] == 1:
        scale = scale / np.maximum(p["_cache"]["counts"], 1)[seg].astype(dt)
    if p.get("scale_grad_by_freq"):
        counts = np.bincount(idx, minlength=ctx.input_shapes[0][0])
        scale = scale / counts[idx].astype(dt)
    return scale


@_embedding_bag.backward
def embedding_bag_backward(ctx: Any, grad: Tensor) -> tuple:
    # each bag's gradient to the rows it was made of
    p = ctx.params
    v, d = ctx.input_shapes[0]
    need_w, need_psw = ctx.needs_input_grad
    idx, seg, keep = p["indices"][p["keep"]], p["segment"][p["keep"]], p["keep"]
    dt = grad._data.dtype
    gw = gpsw = None
    if p["mode"] == 2:
        hit, flat = max_bag_hits(ctx)
        zeros = Tensor._make(np.zeros(v * d, dtype=dt))
        gw = ix.index_put(zeros, (flat,), grad[Tensor._make(hit)], accumulate=True)
        return gw.reshape(v, d), None
    scale = bag_scales(ctx, dt)
    per_row = grad[Tensor._make(seg)]
    w_saved, psw_saved = ctx.saved
    if need_psw:
        wrows = w_saved[Tensor._make(idx)]
        full = np.zeros(len(keep), dtype=dt)
        part = rd.sum(per_row * wrows, (-1,), False) * Tensor._make(scale)
        gpsw = ix.index_put(Tensor._make(full), (np.nonzero(keep)[0],), part)
    if need_w:
        factor = Tensor._make(scale[:, None])
        if psw_saved is not None:
            factor = psw_saved[Tensor._make(np.nonzero(keep)[0])].unsqueeze(1) * factor
        zeros = Tensor._make(np.zeros((v, d), dtype=dt))
        gw = ix.index_put(zeros, (idx,), per_row * factor, accumulate=True)
    return gw, gpsw
