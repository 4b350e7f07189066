"""Scaled dot-product attention: torch's fused CPU kernel as one node for q, k and v
(``ScaledDotProductFlashAttentionForCpuBackward0``), with grouped key/value heads.
"""


from __future__ import annotations

from typing import Any

import numpy as np

from . import shape as sh
from ._registry import defop
from .activations import _safe_softmax, _safe_softmax_np
from .nn_common import _Arrays, _fast_sum, _rule_body

# ---------------------------------------------------------------------------------------------
# Scaled dot-product attention (torch's fused CPU kernel: one node for q, k, v)
#
#   S = q k^T scale + mask;  P = softmax(S) (rows that are all -inf give 0);  out = P v
#   backward: dv = P^T g;  dP = g v^T;  dS = P (dP - rowsum(g * out));  dq = dS k scale;
#             dk = dS^T q scale
# ---------------------------------------------------------------------------------------------

def _repeat_heads(x: Any, groups: int, B: Any) -> Any:
    if groups == 1:
        return x
    if B.tensors:
        return sh.repeat_interleave(x, groups, dim=-3)
    return np.repeat(x, groups, axis=-3)


def _sum_heads(x: Any, groups: int, B: Any) -> Any:
    if groups == 1:
        return x
    shape = tuple(x.shape)
    grouped = shape[:-3] + (shape[-3] // groups, groups) + shape[-2:]
    return B.sum(B.reshape(x, grouped), (len(shape) - 2,), False)


@defop("sdpa", node="ScaledDotProductFlashAttentionForCpuBackward0", save=(0, 1, 2))
def _sdpa(q: np.ndarray, k: np.ndarray, v: np.ndarray, *, scale: float, mask: Any,
          groups: int, _cache: dict) -> np.ndarray:
    k = _repeat_heads(k, groups, _Arrays)
    v = _repeat_heads(v, groups, _Arrays)
    s = np.matmul(q, np.swapaxes(k, -1, -2))
    s *= scale
    if mask is not None:
        s += mask
    prob = _safe_softmax_np(s, -1)
    # the result laid out like the query, as torch's fused kernel allocates it: heads split
    # from a (B, T, H * D) projection give an output whose transpose back to (B, T, H, D)
    # is contiguous already (no copy for the usual ``.transpose(1, 2).contiguous()``)
    like_q = v.shape[-1] == q.shape[-1] and prob.shape[:-1] == q.shape[:-1]
    out = np.matmul(prob, v, out=np.empty_like(q) if like_q else None)
    _cache["prob"] = prob
    _cache["out"] = out
    return out


@_rule_body(_sdpa)
def sdpa_backward(B: Any, ctx: Any, saved: Any, g: Any) -> tuple:  # see the section comment
    q, k, v = saved
    p = ctx.params
    groups, scale = p["groups"], p["scale"]
    kr = _repeat_heads(k, groups, B)
    vr = _repeat_heads(v, groups, B)
    if B.tensors:
        s = B.matmul(q, B.mT(kr)) * scale
        if p["mask"] is not None:
            s = s + B.const(p["mask"])
        prob = _safe_softmax(s, dim=s.ndim - 1)
        out = B.matmul(prob, vr)
    else:
        cache = p["_cache"]
        if "prob" not in cache:  # a second backward: recompute the forward's intermediates
            _sdpa.forward(q, k, v, scale=scale, mask=p["mask"], groups=groups, _cache=cache)
        prob, out = cache.pop("prob"), cache.pop("out")
        if groups == 1:
            return _sdpa_grads(B, g, q, k, v, prob, out, scale, ctx.needs_input_grad)
    need_q, need_k, need_v = ctx.needs_input_grad
    gq = gk = gv = None
    if need_v:
        gv = B.out(_sum_heads(B.matmul(B.mT(prob), g), groups, B))
    if need_q or need_k:
        dp = B.matmul(g, B.mT(vr))
        ds = prob * (dp - B.sum(g * out, (-1,)))
        if need_q:
            gq = B.out(B.matmul(ds, kr) * scale)
        if need_k:
            gk = B.out(_sum_heads(B.matmul(B.mT(ds), q) * scale, groups, B))
    return gq, gk, gv



def _sdpa_grads(B: Any, g: np.ndarray, q: np.ndarray, k: np.ndarray, v: np.ndarray,
                prob: np.ndarray, out: np.ndarray, scale: float, needs: tuple) -> tuple:
    """The rule above on the arrays, one key/value head per query head. Each gradient is
    written in its input's memory layout: q, k and v are usually (B, T, H, D) projections seen
    as (B, H, T, D), and a gradient laid out the same way goes back through that transpose and
    view without a copy (three copies of the whole activation per attention layer otherwise).
    The scale is applied once, to ds, instead of to both of its products."""
    need_q, need_k, need_v = needs
    gq = gk = gv = None
    if need_v:
        gv = np.matmul(np.swapaxes(prob, -1, -2), g, out=np.empty_like(v))
    if need_q or need_k:
        ds = np.matmul(g, np.swapaxes(v, -1, -2))  # dp
        ds -= _fast_sum(g * out, (-1,), True)
        ds *= prob
        ds *= scale
        if need_q:
            gq = np.matmul(ds, k, out=np.empty_like(q))
        if need_k:
            gk = np.matmul(np.swapaxes(ds, -1, -2), q, out=np.empty_like(k))
    return tuple(None if a is None else B.out(a) for a in (gq, gk, gv))
