"""Scaled dot-product attention: torch's fused CPU kernel as one node for q, k and v
(``ScaledDotProductFlashAttentionForCpuBackward0``), with grouped key/value heads.
"""


from __future__ import annotations

from typing import Any

import numpy as np

from .._tensor import Tensor
from . import reduction as rd
from . import shape as sh
from ._registry import defop
from .activations import _safe_softmax, _safe_softmax_np
from .linalg import matmul

# ---------------------------------------------------------------------------------------------
# Scaled dot-product attention (torch's fused CPU kernel: one node for q, k, v)
#
#   S = q k^T scale + mask;  P = softmax(S) (rows that are all -inf give 0);  out = P v
#   backward: dv = P^T g;  dP = g v^T;  dS = P (dP - rowsum(g * out));  dq = dS k scale;
#             dk = dS^T q scale
# ---------------------------------------------------------------------------------------------

def repeat_heads(x: np.ndarray, groups: int) -> np.ndarray:
    """Each key/value head repeated for its ``groups`` query heads."""
    return x if groups == 1 else np.repeat(x, groups, axis=-3)


def _sum_heads(x: Tensor, groups: int) -> Tensor:
    """The gradients of a key/value head's ``groups`` copies summed (repeat_heads' rule)."""
    if groups == 1:
        return x
    shape = tuple(x.shape)
    grouped = shape[:-3] + (shape[-3] // groups, groups) + shape[-2:]
    return rd.sum(sh.reshape(x, grouped), (len(shape) - 2,), False)


@defop("sdpa", node="ScaledDotProductFlashAttentionForCpuBackward0", save=(0, 1, 2))
def _sdpa(q: np.ndarray, k: np.ndarray, v: np.ndarray, *, scale: float, mask: Any,
          groups: int, _cache: dict) -> np.ndarray:
    k = repeat_heads(k, groups)
    v = repeat_heads(v, groups)
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


@_sdpa.backward
def sdpa_backward(ctx: Any, grad: Tensor) -> tuple:  # see the section comment
    q, k, v = ctx.saved
    p = ctx.params
    groups, scale = p["groups"], p["scale"]
    kr = k if groups == 1 else sh.repeat_interleave(k, groups, dim=-3)
    vr = v if groups == 1 else sh.repeat_interleave(v, groups, dim=-3)
    s = matmul(q, sh.transpose(kr, -1, -2)) * scale
    if p["mask"] is not None:
        s = s + Tensor._make(p["mask"])
    prob = _safe_softmax(s, dim=s.ndim - 1)
    out = matmul(prob, vr)
    need_q, need_k, need_v = ctx.needs_input_grad
    gq = gk = gv = None
    if need_v:
        gv = _sum_heads(matmul(sh.transpose(prob, -1, -2), grad), groups)
    if need_q or need_k:
        dp = matmul(grad, sh.transpose(vr, -1, -2))
        ds = prob * (dp - rd.sum(grad * out, (-1,), True))
        if need_q:
            gq = matmul(ds, kr) * scale
        if need_k:
            gk = _sum_heads(matmul(sh.transpose(ds, -1, -2), q) * scale, groups)
    return gq, gk, gv
