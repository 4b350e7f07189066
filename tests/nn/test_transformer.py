"""nn.Transformer, TransformerDecoder(Layer) against torch: parameter names and initial values
after the same seed, outputs and gradients (with dropout in training mode, masks, key padding,
batch_first, norm_first), and the errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from cpu_kernels import assert_draws

import tapegrad as tg


def _fixed(L, m, seed=0):
    """``m``'s parameters from NumPy: the same values whatever random kernels torch runs
    (tests/cpu_kernels.py); the initial draws are test_initial_parameters_bit_for_bit's subject.
    Consumes no draws, so the dropout masks that follow are the same."""
    rng = np.random.default_rng(seed)
    with L.no_grad():
        for p in m.parameters():
            p.copy_(L.tensor(rng.uniform(-0.4, 0.4, tuple(p.shape))))
    return m


def _run_transformer(L, train, norm_first, batch_first, masks):
    L.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the encoder's nested-tensor notice (tested elsewhere)
        m = L.nn.Transformer(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=2,
                             dim_feedforward=16, dropout=0.1, norm_first=norm_first,
                             batch_first=batch_first).double()
    _fixed(L, m)
    m.train(train)
    S, T, N = 5, 4, 3
    shape_s = (N, S, 8) if batch_first else (S, N, 8)
    shape_t = (N, T, 8) if batch_first else (T, N, 8)
    src = L.randn(*shape_s, dtype=L.float64)
    tgt = L.randn(*shape_t, dtype=L.float64)
    kw = {}
    if masks:
        kw["tgt_mask"] = m.generate_square_subsequent_mask(T, dtype=L.float64)
        pad = L.tensor([[False] * 4 + [True], [False] * 5, [False] * 3 + [True] * 2])
        kw["src_key_padding_mask"] = pad
        kw["memory_key_padding_mask"] = pad
    out = m(src, tgt, **kw)
    out.pow(2).sum().backward()
    names = [n for n, _ in m.named_parameters()]
    values = ([out.detach().numpy()] + [p.detach().numpy() for p in m.parameters()]
              + [p.grad.numpy() for p in m.parameters()])
    return names, values


@pytest.mark.parametrize("train,norm_first,batch_first,masks", [
    (False, False, False, False), (True, False, False, True), (False, True, True, True),
    (True, True, True, False)])
def test_transformer_matches_torch(train, norm_first, batch_first, masks):
    names_t, vals_t = _run_transformer(torch, train, norm_first, batch_first, masks)
    names_g, vals_g = _run_transformer(tg, train, norm_first, batch_first, masks)
    assert names_g == names_t
    for a, b in zip(vals_g, vals_t, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_initial_parameters_bit_for_bit_in_float32():
    out = []
    for L in (torch, tg):
        L.manual_seed(3)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m = L.nn.Transformer(d_model=16, nhead=4, num_encoder_layers=1,
                                 num_decoder_layers=1, dim_feedforward=32)
        out.append([p.detach().numpy() for p in m.parameters()])
    for a, b in zip(out[1], out[0], strict=True):
        assert_draws(a, b)


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer_and_stack(norm_first):
    res = []
    for L in (torch, tg):
        L.manual_seed(1)
        layer = _fixed(L, L.nn.TransformerDecoderLayer(d_model=6, nhead=3, dim_feedforward=12,
                                                       dropout=0.0, activation="gelu",
                                                       norm_first=norm_first).double(), seed=1)
        dec = _fixed(L, L.nn.TransformerDecoder(layer, num_layers=2,
                                                norm=L.nn.LayerNorm(6).double()))
        tgt = L.randn(4, 2, 6, dtype=L.float64, requires_grad=True)
        mem = L.randn(3, 2, 6, dtype=L.float64, requires_grad=True)
        mask = L.nn.Transformer.generate_square_subsequent_mask(4, dtype=L.float64)
        y = dec(tgt, mem, tgt_mask=mask, tgt_is_causal=True)
        y2 = layer(tgt[:, 0], mem[:, 0])  # unbatched
        (y.sum() + y2.pow(2).sum()).backward()
        res.append([y.detach().numpy(), y2.detach().numpy(), tgt.grad.numpy(), mem.grad.numpy()])
    for a, b in zip(res[1], res[0], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_transformer_errors_and_mask():
    for L in (torch, tg):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m = L.nn.Transformer(d_model=4, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
                                 dim_feedforward=8)
        with pytest.raises(RuntimeError, match="the batch number of src and tgt must be equal"):
            m(L.randn(3, 2, 4), L.randn(3, 1, 4))
        with pytest.raises(RuntimeError, match="the feature number of src and tgt must be equal"):
            m(L.randn(3, 2, 4), L.randn(3, 2, 5))
    np.testing.assert_array_equal(
        tg.nn.Transformer.generate_square_subsequent_mask(3).numpy(),
        torch.nn.Transformer.generate_square_subsequent_mask(3).numpy())


def test_multi_head_attention_forward_is_public():
    res = []
    for L in (torch, tg):
        L.manual_seed(0)
        mha = _fixed(L, L.nn.MultiheadAttention(4, 2).double())
        q = L.randn(3, 2, 4, dtype=L.float64)
        out, w = L.nn.functional.multi_head_attention_forward(
            q, q, q, 4, 2, mha.in_proj_weight, mha.in_proj_bias, None, None, False, 0.0,
            mha.out_proj.weight, mha.out_proj.bias, training=False)
        res.append([out.detach().numpy(), w.detach().numpy()])
    for a, b in zip(res[1], res[0], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_decoder_layer_second_order_gradients():
    # torch's CPU flash-attention kernel has no double backward; its math kernel (the formula
    # tapegrad's attention differentiates) has, so torch runs with that one
    from torch.nn.attention import SDPBackend, sdpa_kernel

    res = []
    for L in (torch, tg):
        L.manual_seed(2)
        layer = L.nn.TransformerDecoderLayer(d_model=4, nhead=2, dim_feedforward=8,
                                             dropout=0.0).double()
        tgt = L.randn(3, 2, 4, dtype=L.float64, requires_grad=True)
        mem = L.randn(2, 2, 4, dtype=L.float64, requires_grad=True)
        mask = L.nn.Transformer.generate_square_subsequent_mask(3, dtype=L.float64)
        if L is torch:
            with sdpa_kernel(SDPBackend.MATH):
                y = layer(tgt, mem, tgt_mask=mask)
        else:
            y = layer(tgt, mem, tgt_mask=mask)
        g_tgt, g_mem = L.autograd.grad(y.pow(2).sum(), [tgt, mem], create_graph=True)
        h = L.autograd.grad(g_tgt.pow(2).sum() + g_mem.sum(),
                            [tgt, mem, layer.linear1.weight, layer.self_attn.in_proj_weight])
        res.append([g_tgt.detach().numpy(), g_mem.detach().numpy()] + [t.numpy() for t in h])
    for a, b in zip(res[1], res[0], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10)
