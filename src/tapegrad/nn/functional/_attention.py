"""Attention: ``scaled_dot_product_attention`` and ``multi_head_attention_forward`` (the
computation behind ``nn.MultiheadAttention``), with the mask conversion the Transformer layers
share (``_canonical_mask``)."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from ... import _dtype
from ..._creation import zeros, zeros_like
from ..._tensor import Tensor
from ...ops import attention as K
from ...ops import elementwise as ew
from ...ops import linalg as la
from ...ops import nn_common as C
from ...ops import shape as sh
from ...ops.activations import _safe_softmax
from ...ops.linalg import baddbmm, bmm
from ...ops.shape import cat
from ._activations import softmax
from ._common import _lower_name
from ._dropout import dropout
from ._linear import linear
from ._padding import pad

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


def _canonical_mask(mask: Tensor | None, mask_name: str, other_type: Any, other_name: str,
                    target_type: Any, check_other: bool = True) -> Tensor | None:
    """A boolean mask becomes a float mask (-inf where True); float masks pass through."""
    if mask is None:
        return None
    mask_dtype = mask.dtype
    is_float = mask.is_floating_point()
    if mask_dtype is not _dtype.bool_ and not is_float:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask_dtype is not other_type:
        warnings.warn(
            f"Support for mismatched {mask_name} and {other_name} is deprecated. Use same type "
            "for both instead.",
            stacklevel=2,
        )
    if not is_float:
        mask = zeros_like(mask, dtype=target_type).masked_fill_(mask, float("-inf"))
    return mask


def _mha_shape_check(query: Tensor, key: Tensor, value: Tensor,
                     key_padding_mask: Tensor | None, attn_mask: Tensor | None,
                     num_heads: int) -> bool:
    """True for batched (3-D) inputs; torch's AssertionErrors for inconsistent ranks."""
    rank = query.dim()
    if rank not in (2, 3):
        raise AssertionError(
            "query should be unbatched 2D or batched 3D tensor but received "
            f"{rank}-D query tensor"
        )
    batched = rank == 3
    which = "For batched (3-D) `query`" if batched else "For unbatched (2-D) `query`"
    if key.dim() != rank or value.dim() != rank:
        raise AssertionError(
            f"{which}, expected `key` and `value` to be {rank}-D but found "
            f"{key.dim()}-D and {value.dim()}-D tensors respectively"
        )
    if key_padding_mask is not None and key_padding_mask.dim() != rank - 1:
        raise AssertionError(
            f"{which}, expected `key_padding_mask` to be `None` or {rank - 1}-D but found "
            f"{key_padding_mask.dim()}-D tensor instead"
        )
    if attn_mask is not None and attn_mask.dim() not in (2, 3):
        raise AssertionError(
            f"{which}, expected `attn_mask` to be `None`, 2-D or 3-D but found "
            f"{attn_mask.dim()}-D tensor instead"
        )
    if not batched and attn_mask is not None and attn_mask.dim() == 3:
        expected = (num_heads, query.shape[0], key.shape[0])
        if attn_mask.shape != expected:
            raise AssertionError(
                f"Expected `attn_mask` shape to be {expected} but got {attn_mask.shape}"
            )
    return batched


def _in_projection_packed(q: Tensor, k: Tensor, v: Tensor, w: Tensor,
                          b: Tensor | None) -> tuple[Tensor, Tensor, Tensor]:
    """q, k, v projected with the packed (3E, E) weight: one product for self-attention."""
    e = q.size(-1)
    if k is v:
        if q is k:
            proj = linear(q, w, b)
            proj = proj.unflatten(-1, (3, e)).unsqueeze(0).transpose(0, -2).squeeze(-2)
            proj = proj.contiguous()
            return proj[0], proj[1], proj[2]
        w_q, w_kv = w.split([e, e * 2])
        b_q, b_kv = (None, None) if b is None else b.split([e, e * 2])
        q_proj = linear(q, w_q, b_q)
        kv = linear(k, w_kv, b_kv)
        kv = kv.unflatten(-1, (2, e)).unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()
        return q_proj, kv[0], kv[1]
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def _in_projection(q: Tensor, k: Tensor, v: Tensor, w_q: Tensor, w_k: Tensor, w_v: Tensor,
                   b_q: Tensor | None, b_k: Tensor | None,
                   b_v: Tensor | None) -> tuple[Tensor, Tensor, Tensor]:
    """q, k, v projected with separate weights (kdim / vdim differ from embed_dim)."""
    eq, ek, ev = q.size(-1), k.size(-1), v.size(-1)
    for what, wt, shape in (("query", w_q, (eq, eq)), ("key", w_k, (eq, ek)),
                            ("value", w_v, (eq, ev))):
        if wt.shape != shape:
            raise AssertionError(f"expecting {what} weights shape of {shape}, but got {wt.shape}")
    for what, bt in (("query", b_q), ("key", b_k), ("value", b_v)):
        if bt is not None and bt.shape != (eq,):
            raise AssertionError(f"expecting {what} bias shape of {(eq,)}, but got {bt.shape}")
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


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
    """torch's ``F.multi_head_attention_forward`` on (L, N, E) inputs (or unbatched (L, E)).

    Project q, k, v; split into heads (N*H, L, E/H); weights = softmax(q k^T / sqrt(E/H) +
    mask); output = out_proj(weights v). With ``need_weights=False`` the attention itself runs
    through ``F.scaled_dot_product_attention``.
    """
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    key_padding_mask = _canonical_mask(
        key_padding_mask, "key_padding_mask", None if attn_mask is None else attn_mask.dtype,
        "attn_mask", query.dtype,
    )
    if is_causal and attn_mask is None:
        raise RuntimeError(
            "Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
            "method `generate_square_subsequent_mask` to create this mask."
        )
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # scaled_dot_product_attention applies the causal mask itself
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype,
                                    check_other=False)
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise AssertionError(
            f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}"
        )
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if key.shape[:2] != value.shape[:2]:
            raise AssertionError(
                f"key's sequence and batch dims {key.shape[:2]} do not match value's "
                f"{value.shape[:2]}"
            )
        for name, wt in (("q", q_proj_weight), ("k", k_proj_weight), ("v", v_proj_weight)):
            if wt is None:
                raise AssertionError(
                    f"use_separate_proj_weight is True but {name}_proj_weight is None"
                )
        # checked just above; tells type checkers the weights are not None
        assert q_proj_weight is not None and k_proj_weight is not None
        assert v_proj_weight is not None
        b_q, b_k, b_v = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
        q, k, v = _in_projection(query, key, value, q_proj_weight, k_proj_weight,
                                 v_proj_weight, b_q, b_k, b_v)
    else:
        if key.shape != value.shape:
            raise AssertionError(
                f"key shape {key.shape} does not match value shape {value.shape}"
            )
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)

    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if attn_mask.shape != (tgt_len, src_len):
                raise RuntimeError(
                    f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be "
                    f"{(tgt_len, src_len)}."
                )
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            want = (bsz * num_heads, tgt_len, src_len)
            if attn_mask.shape != want:
                raise RuntimeError(
                    f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be {want}."
                )
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")

    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = cat([k, bias_k.repeat(1, bsz, 1)])
        v = cat([v, bias_v.repeat(1, bsz, 1)])
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")

    # heads: (L, N, E) -> (N*H, L, E/H)
    q = q.view(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = (k.view(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
         if static_k is None else static_k)
    v = (v.view(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
         if static_v is None else static_v)
    if add_zero_attn:
        zeros_shape = (bsz * num_heads, 1, head_dim)
        k = cat([k, zeros(zeros_shape, dtype=k.dtype)], dim=1)
        v = cat([v, zeros(zeros_shape, dtype=v.dtype)], dim=1)
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    src_len = k.size(1)
    if key_padding_mask is not None:
        if key_padding_mask.shape[0] != bsz:
            raise AssertionError(
                f"Expected key_padded_mask.shape[0] to be {bsz}, but got "
                f"{key_padding_mask.shape[0]}"
            )
        if key_padding_mask.shape[1] != src_len:
            raise AssertionError(
                f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                f"{key_padding_mask.shape[1]}"
            )
        key_padding_mask = (key_padding_mask.view(bsz, 1, 1, src_len)
                            .expand(-1, num_heads, -1, -1).reshape(bsz * num_heads, 1, src_len))
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask
    if not training:
        dropout_p = 0.0

    if need_weights:
        e = q.shape[-1]
        q_scaled = q * math.sqrt(1.0 / float(e))
        if is_causal and attn_mask is None:
            raise AssertionError("FIXME: is_causal not implemented for need_weights")
        if attn_mask is not None:  # as torch: one baddbmm (whose autocast casts the mask too)
            scores = baddbmm(attn_mask, q_scaled, k.transpose(-2, -1))
        else:
            scores = bmm(q_scaled, k.transpose(-2, -1))
        weights = softmax(scores, dim=-1)
        if dropout_p > 0.0:
            weights = dropout(weights, p=dropout_p)
        out = bmm(weights, v)
        out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = linear(out, out_proj_weight, out_proj_bias)
        out = out.view(tgt_len, bsz, out.size(1))
        weights = weights.view(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(dim=1)
        if not is_batched:
            out = out.squeeze(1)
            weights = weights.squeeze(0)
        return out, weights
    if attn_mask is not None:
        if attn_mask.size(0) == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.view(bsz, num_heads, -1, src_len)
    q = q.view(bsz, num_heads, tgt_len, head_dim)
    k = k.view(bsz, num_heads, src_len, head_dim)
    v = v.view(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias)
    out = out.view(tgt_len, bsz, out.size(1))
    if not is_batched:
        out = out.squeeze(1)
    return out, None
