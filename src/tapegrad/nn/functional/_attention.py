"""Attention: ``scaled_dot_product_attention`` and ``multi_head_attention_forward``."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..._tensor import Tensor
from ...ops import attention as K
from ...ops import elementwise as ew
from ...ops import linalg as la
from ...ops import nn_common as C
from ...ops import shape as sh
from ...ops.activations import _safe_softmax
from ._common import _lower_name
from ._dropout import dropout

# ---------------------------------------------------------------------------------------------
# Attention
# ---------------------------------------------------------------------------------------------

def _attn_mask_array(attn_mask: Tensor, q: Tensor) -> np.ndarray:
    m = attn_mask._data
    if m.dtype == np.bool_:
        add = np.zeros(m.shape, dtype=q._data.dtype)
        add[~m] = -np.inf
        return add
    return m.astype(q._data.dtype, copy=False)


def _causal_mask(lq: int, lk: int) -> np.ndarray:
    return np.tril(np.ones((lq, lk), dtype=bool))


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor,
                                 attn_mask: Tensor | None = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, *, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """softmax(q k^T * scale + mask) v over the last two dims.

    4-D inputs without dropout take torch's fused CPU path: one node
    (ScaledDotProductFlashAttentionForCpuBackward0). Other cases are composed like torch's math
    path (q and k scaled by sqrt(scale), matmul, SafeSoftmaxBackward0, dropout, matmul), with
    the dropout noise drawn as torch draws it. Rows with no allowed key give zeros.
    """
    if query.ndim < 2 or key.ndim < 2 or value.ndim < 2:
        raise RuntimeError(
            "Expected query, key, and value to all be  at least 2 dimensional, but got query.dim:"
            f" {query.ndim} key.dim: {key.ndim} and value.dim: {value.ndim} instead."
        )
    if not (query.dtype == key.dtype == value.dtype):
        raise RuntimeError(
            "Expected query, key, and value to have the same dtype, but got query.dtype: "
            f"{_lower_name(query)} key.dtype: {_lower_name(key)} and value.dtype: "
            f"{_lower_name(value)} instead."
        )
    if attn_mask is not None and attn_mask.dtype.name != "bool" and (
        attn_mask.dtype != query.dtype
    ):
        raise RuntimeError(
            "Expected attn_mask dtype to be bool or float or to match query dtype, but got "
            f"attn_mask.dtype: {_lower_name(attn_mask)} and  query.dtype: {_lower_name(query)} "
            "instead."
        )
    if dropout_p < 0.0 or dropout_p > 1.0:
        raise RuntimeError(
            f"dropout probability has to be between 0 and 1, but got {dropout_p}"
        )
    lq, lk = query.shape[-2], key.shape[-2]
    d = query.shape[-1]
    sc = 1.0 / math.sqrt(d) if scale is None else float(scale)
    groups = 1
    if enable_gqa and query.ndim >= 3 and key.shape[-3] != query.shape[-3]:
        hq, hk, hv = query.shape[-3], key.shape[-3], value.shape[-3]
        if hq % hk or hq % hv:
            raise RuntimeError(
                "Number of heads in key and value must divide the number of heads in "
            )
        groups = hq // hk
    mask = None
    if attn_mask is not None:
        mask = _attn_mask_array(attn_mask, query)
    if is_causal:
        causal = np.where(_causal_mask(lq, lk), 0.0, -np.inf).astype(query._data.dtype)
        mask = causal if mask is None else mask + causal
    if mask is not None:
        try:
            np.broadcast_shapes(mask.shape, tuple(query.shape[:-1]) + (lk,))
        except ValueError:
            raise ew._broadcast_error(np.empty(tuple(query.shape[:-1]) + (lk,)), mask) from None
    fused = (query.ndim == 4 and key.ndim == 4 and value.ndim == 4 and dropout_p == 0.0
             and value.shape[-1] == d and key.shape[-1] == d and lq > 0 and lk > 0
             and (attn_mask is None or not attn_mask._requires_grad))
    if fused:
        if groups == 1 and (key.shape[-3] != query.shape[-3]
                            or value.shape[-3] != query.shape[-3]):
            raise ew._broadcast_error(query._data[..., :1, :1], key._data[..., :1, :1])
        return K._sdpa(query, key, value, scale=sc, mask=mask, groups=groups, _cache={})
    return _sdpa_math(query, key, value, attn_mask, mask, dropout_p, sc, groups)


def _sdpa_math(q: Tensor, k: Tensor, v: Tensor, attn_mask: Tensor | None, mask: Any,
               dropout_p: float, scale: float, groups: int) -> Tensor:
    root = math.sqrt(abs(scale))  # torch scales q and k by sqrt(scale) each (q's sign flips)
    if groups > 1:
        k = sh.repeat_interleave(k, groups, dim=-3)
        v = sh.repeat_interleave(v, groups, dim=-3)
    qs = C._mul_scalar(q, other=root if scale >= 0 else -root)
    ks = C._mul_scalar(k, other=root)
    attn = la.matmul(qs, ks.transpose(-2, -1))
    if mask is not None:
        if attn_mask is not None and attn_mask._requires_grad and attn_mask.is_floating_point():
            attn = attn + attn_mask
        else:
            attn = attn + Tensor._make(mask)
    attn = _safe_softmax(attn, dim=attn.ndim - 1)
    if dropout_p > 0.0:
        attn = dropout(attn, dropout_p, True)
    return la.matmul(attn, v)


def multi_head_attention_forward(
    query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
    in_proj_weight: Tensor | None, in_proj_bias: Tensor | None, bias_k: Tensor | None,
    bias_v: Tensor | None, add_zero_attn: bool, dropout_p: float, out_proj_weight: Tensor,
    out_proj_bias: Tensor | None, training: bool = True,
    key_padding_mask: Tensor | None = None, need_weights: bool = True,
    attn_mask: Tensor | None = None, use_separate_proj_weight: bool = False,
    q_proj_weight: Tensor | None = None, k_proj_weight: Tensor | None = None,
    v_proj_weight: Tensor | None = None, static_k: Tensor | None = None,
    static_v: Tensor | None = None, average_attn_weights: bool = True,
    is_causal: bool = False,
) -> tuple[Tensor, Tensor | None]:
    """``F.multi_head_attention_forward``: the computation behind ``nn.MultiheadAttention``
    (defined beside the module in ``nn/modules/activation.py``)."""
    from ..modules.activation import multi_head_attention_forward as mha

    return mha(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
               bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
               training, key_padding_mask, need_weights, attn_mask, use_separate_proj_weight,
               q_proj_weight, k_proj_weight, v_proj_weight, static_k, static_v,
               average_attn_weights, is_causal)
