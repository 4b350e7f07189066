"""torch.conv2d, torch.batch_norm, torch.lstm, ... (nn/_toplevel.py): tapegrad's top-level nn
forms under torch's positional (ATen) signatures, against torch: values and gradients."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import tapegrad

RNG = np.random.default_rng(0)


def _arr(*shape):
    return RNG.standard_normal(shape)


X4, W4, B4 = _arr(2, 3, 5, 5), _arr(4, 3, 3, 3), _arr(4)
X3, W3 = _arr(2, 3, 7), _arr(4, 3, 2)
BN = (_arr(3), _arr(3), _arr(3), np.abs(_arr(3)) + 0.5)  # weight, bias, running mean, var
TBC_X, TBC_W, TBC_B = _arr(6, 2, 3), _arr(3, 3, 4), _arr(4)
P1, P2 = np.abs(_arr(4, 5)) / 5, np.abs(_arr(4, 5)) / 5
TARGET = np.array([1.0, -1.0, 1.0, -1.0])
THETA = _arr(2, 2, 3)
POS = np.abs(_arr(5))

# name -> (call(m, t) where t makes a tensor requiring grad from an array, [arrays])
CASES = {
    "conv1d": (lambda m, a: m.conv1d(a[0], a[1], None, 2, 1), [X3, W3]),
    "conv2d": (lambda m, a: m.conv2d(a[0], a[1], a[2], 1, 1, 1, 1), [X4, W4, B4]),
    "conv3d": (lambda m, a: m.conv3d(a[0], a[1]), [_arr(1, 2, 4, 4, 4), _arr(3, 2, 2, 2, 2)]),
    "conv_transpose1d": (lambda m, a: m.conv_transpose1d(a[0], a[1], None, 2, 1, 1),
                         [X3, _arr(3, 2, 3)]),
    "conv_transpose2d": (lambda m, a: m.conv_transpose2d(a[0], a[1], None, 2),
                         [X4, _arr(3, 2, 2, 2)]),
    "conv_transpose3d": (lambda m, a: m.conv_transpose3d(a[0], a[1]),
                         [_arr(1, 2, 3, 3, 3), _arr(2, 2, 2, 2, 2)]),
    "convolution": (lambda m, a: m.convolution(a[0], a[1], a[2], [1, 1], [1, 0], [1, 1],
                                               False, [0, 0], 1), [X4, W4, B4]),
    "convolution_t": (lambda m, a: m.convolution(a[0], a[1], None, [2], [1], [1], True, [1],
                                                 1), [X3, _arr(3, 2, 3)]),
    "conv_tbc": (lambda m, a: m.conv_tbc(a[0], a[1], a[2], 1), [TBC_X, TBC_W, TBC_B]),
    "batch_norm": (lambda m, a: m.batch_norm(a[0], a[1], a[2], m.tensor(BN[2]),
                                             m.tensor(BN[3]), False, 0.1, 1e-5, False),
                   [X4, BN[0], BN[1]]),
    "batch_norm_train": (lambda m, a: m.batch_norm(a[0], a[1], a[2], None, None, True, 0.1,
                                                   1e-5, False), [X4, BN[0], BN[1]]),
    "instance_norm": (lambda m, a: m.instance_norm(a[0], a[1], a[2], None, None, True, 0.1,
                                                   1e-5, False), [X4, BN[0], BN[1]]),
    "layer_norm": (lambda m, a: m.layer_norm(a[0], [5, 5], a[1]), [X4, _arr(5, 5)]),
    "group_norm": (lambda m, a: m.group_norm(a[0], 1, a[1], a[2], 1e-5, True),
                   [X4, BN[0], BN[1]]),
    "rms_norm": (lambda m, a: m.rms_norm(a[0], [5], a[1]), [X4, _arr(5)]),
    "embedding": (lambda m, a: m.embedding(a[0], m.tensor([[0, 2], [1, 0]]), 0),
                  [_arr(3, 4)]),
    "celu": (lambda m, a: m.celu(a[0], 0.7), [_arr(6)]),
    "selu": (lambda m, a: m.selu(a[0]), [_arr(6)]),
    "rrelu": (lambda m, a: m.rrelu(a[0]), [_arr(6)]),
    "threshold": (lambda m, a: m.threshold(a[0], 0.1, -2.0), [_arr(6)]),
    "hardshrink": (lambda m, a: m.hardshrink(a[0], 0.3), [_arr(6)]),
    "Tensor.hardshrink": (lambda m, a: a[0].hardshrink(), [_arr(6)]),
    "prelu": (lambda m, a: m.prelu(a[0], a[1]), [X4, _arr(3)]),
    "Tensor.prelu": (lambda m, a: a[0].prelu(a[1]), [X4, _arr(1)]),
    "pixel_shuffle": (lambda m, a: m.pixel_shuffle(a[0], 2), [_arr(1, 8, 2, 2)]),
    "pixel_unshuffle": (lambda m, a: m.pixel_unshuffle(a[0], 2), [_arr(1, 2, 4, 4)]),
    "channel_shuffle": (lambda m, a: m.channel_shuffle(a[0], 2), [_arr(1, 4, 2, 2)]),
    # torch has no derivative for native_channel_shuffle: compared on a constant
    "native_channel_shuffle": (lambda m, a: m.native_channel_shuffle(m.tensor(a[0].detach(
        ).numpy()), 2), [_arr(1, 4, 2, 2)]),
    "adaptive_avg_pool1d": (lambda m, a: m.adaptive_avg_pool1d(a[0], 3), [X3]),
    "adaptive_max_pool1d": (lambda m, a: m.adaptive_max_pool1d(a[0], [3]), [X3]),
    "avg_pool1d": (lambda m, a: m.avg_pool1d(a[0], 3, [], 1), [X3]),
    "max_pool1d": (lambda m, a: m.max_pool1d(a[0], [2]), [X3]),
    "max_pool1d_with_indices": (lambda m, a: m.max_pool1d_with_indices(a[0], 3, 2, 1), [X3]),
    "max_pool2d": (lambda m, a: m.max_pool2d(a[0], 2, [], 0, 1, True), [X4]),
    "max_pool3d": (lambda m, a: m.max_pool3d(a[0], 2), [_arr(1, 2, 4, 4, 4)]),
    "kl_div": (lambda m, a: m.kl_div(a[0], a[1]), [np.log(P1), P2]),
    "kl_div_sum_log": (lambda m, a: m.kl_div(a[0], a[1], 2, log_target=True),
                       [np.log(P1), np.log(P2)]),
    "binary_cross_entropy_with_logits": (
        lambda m, a: m.binary_cross_entropy_with_logits(a[0], a[1], None, m.tensor(POS), 2),
        [_arr(4, 5), P1]),
    "binary_cross_entropy_with_logits_none": (
        lambda m, a: m.binary_cross_entropy_with_logits(a[0], a[1]), [_arr(4, 5), P1]),
    "kl_div_mean": (lambda m, a: m.kl_div(a[0], a[1], 1), [np.log(P1), P2]),
    "ctc_loss_mean": (lambda m, a: m.ctc_loss(a[0].log_softmax(2), m.tensor([[1, 2], [2, 2]]),
                                              [6, 5], [2, 2], 0, 1), [_arr(6, 2, 3)]),
    "cosine_embedding_loss": (lambda m, a: m.cosine_embedding_loss(
        a[0], a[1], m.tensor(TARGET), 0.1, 0), [_arr(4, 5), _arr(4, 5)]),
    "hinge_embedding_loss": (lambda m, a: m.hinge_embedding_loss(
        a[0], m.tensor(TARGET).reshape(4, 1), 1.0, 1), [_arr(4, 1)]),
    "margin_ranking_loss": (lambda m, a: m.margin_ranking_loss(a[0], a[1], m.tensor(TARGET)),
                            [_arr(4), _arr(4)]),
    "poisson_nll_loss": (lambda m, a: m.poisson_nll_loss(a[0], a[1], True, True, 1e-8, 1),
                         [_arr(4, 5), np.abs(_arr(4, 5)) * 3]),
    "triplet_margin_loss": (lambda m, a: m.triplet_margin_loss(a[0], a[1], a[2], 1.0, 2.0,
                                                               1e-6, True, 2),
                            [_arr(4, 5), _arr(4, 5), _arr(4, 5)]),
    "ctc_loss": (lambda m, a: m.ctc_loss(a[0].log_softmax(2), m.tensor([[1, 2], [2, 2]]),
                                         [6, 5], [2, 2]), [_arr(6, 2, 3)]),
    "cosine_similarity": (lambda m, a: m.cosine_similarity(a[0], a[1], 0), [_arr(4, 5),
                                                                             _arr(4, 5)]),
    "pairwise_distance": (lambda m, a: m.pairwise_distance(a[0], a[1], 1.5, 1e-6, True),
                          [_arr(4, 5), _arr(4, 5)]),
    "bilinear": (lambda m, a: m.bilinear(a[0], a[1], a[2], a[3]),
                 [_arr(4, 2), _arr(4, 3), _arr(5, 2, 3), _arr(5)]),
    "affine_grid_generator": (lambda m, a: m.affine_grid_generator(a[0], [2, 1, 3, 4], False),
                              [THETA]),
    "dropout_eval": (lambda m, a: m.dropout(a[0], 0.5, False), [_arr(6)]),
    "alpha_dropout_eval": (lambda m, a: m.alpha_dropout(a[0], 0.5, False), [_arr(6)]),
    "feature_dropout_eval": (lambda m, a: m.feature_dropout(a[0], 0.5, False), [X4]),
    "feature_alpha_dropout_eval": (lambda m, a: m.feature_alpha_dropout(a[0], 0.5, False),
                                   [X4]),
    "dropout_p1": (lambda m, a: m.dropout(a[0], 1.0, True), [_arr(6)]),
    "feature_dropout_p1": (lambda m, a: m.feature_dropout(a[0], 1.0, True), [X4]),
    "native_dropout_eval": (lambda m, a: m.native_dropout(a[0], 0.5, False), [_arr(6)]),
}

H = 3  # the recurrent cases: hidden size 3, input size 2


def _rnn_params(gates, layers=1, directions=1):
    out = []
    for layer in range(layers):
        for _ in range(directions):
            size = 2 if layer == 0 else H * directions
            out += [_arr(gates * H, size), _arr(gates * H, H), _arr(gates * H), _arr(gates * H)]
    return out


LSTM_P = _rnn_params(4, 2, 2)
GRU_P = _rnn_params(3, 1, 2)
TANH_P = _rnn_params(1, 2)
SEQ = _arr(5, 2, 2)
CASES.update({
    "lstm": (lambda m, a: m.lstm(a[0], (a[1], a[2]), a[3:], True, 2, 0.0, False, True, False),
             [SEQ, _arr(4, 2, H), _arr(4, 2, H), *LSTM_P]),
    "gru": (lambda m, a: m.gru(a[0], a[1], a[2:], True, 1, 0.0, True, True, True),
            [_arr(2, 5, 2), _arr(2, 2, H), *GRU_P]),
    "rnn_tanh": (lambda m, a: m.rnn_tanh(a[0], a[1], a[2:], True, 2, 0.0, False, False, False),
                 [SEQ, _arr(2, 2, H), *TANH_P]),
    "rnn_relu_nobias": (lambda m, a: m.rnn_relu(a[0], a[1], [a[2], a[3]], False, 1, 0.0,
                                                False, False, False),
                        [SEQ, _arr(1, 2, H), TANH_P[0], TANH_P[1]]),
    "lstm_cell": (lambda m, a: m.lstm_cell(a[0], [a[1], a[2]], *a[3:]),
                  [SEQ[0], _arr(2, H), _arr(2, H), *LSTM_P[:4]]),
    "gru_cell": (lambda m, a: m.gru_cell(a[0], a[1], *a[2:]), [SEQ[0], _arr(2, H),
                                                                  *GRU_P[:4]]),
    "rnn_tanh_cell": (lambda m, a: m.rnn_tanh_cell(a[0], a[1], a[2], a[3]),
                      [SEQ[0], _arr(2, H), *TANH_P[:2]]),
    "rnn_relu_cell": (lambda m, a: m.rnn_relu_cell(a[0], a[1], *TANH_P_T(m)[:4]),
                      [SEQ[0], _arr(2, H)]),
})


def TANH_P_T(m):  # noqa: N802 - constant weights as tensors of the library m
    return [m.tensor(p) for p in TANH_P]


def _run(m, name):
    call, arrays = CASES[name]
    inputs = [m.tensor(a, requires_grad=True) for a in arrays]
    out = call(m, inputs)
    outs = [o for o in (out if isinstance(out, tuple) else (out,))]
    floats = [o for o in outs if o.dtype.is_floating_point and o.requires_grad]
    if floats:
        sum(((o * o).sum() for o in floats), m.tensor(0.0, dtype=m.float64)).backward()
    grads = [None if x.grad is None else x.grad.numpy() for x in inputs]
    return [o.detach().numpy() for o in outs], grads


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name):
    got, got_grads = _run(tapegrad, name)
    want, want_grads = _run(torch, name)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-7, atol=1e-10)
    for g, w in zip(got_grads, want_grads, strict=True):
        assert (g is None) == (w is None)
        if w is not None:
            np.testing.assert_allclose(g, w, rtol=1e-7, atol=1e-10)


def test_training_dropout_keeps_or_zeroes_whole_channels():
    x = tapegrad.ones(8, 16, 3, 3)
    y = tapegrad.feature_dropout(x, 0.5, True)
    per_channel = y.reshape(8, 16, 9)
    assert bool(((per_channel == 0).all(-1) | (per_channel == 2).all(-1)).all())
    out, mask = tapegrad.native_dropout(x, 0.5, True)
    assert mask.dtype == tapegrad.bool
    assert bool(((out == 2) == mask).all())


def test_inplace_forms_return_their_input():
    for m in (tapegrad, torch):
        x = m.tensor([-1.0, 0.5, 2.0])
        assert m.threshold_(x, 1.0, 9.0) is x
        assert x.tolist() == [9.0, 9.0, 2.0]
        assert m.celu_(x) is x and m.selu_(x) is x and m.dropout_(x, 0.0, True) is x


EMB_W = _arr(10, 3)
EMB_IDX = np.array([1, 2, 4, 5, 4, 3, 2, 9])


@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("variant", ["plain", "include_last_offset", "padding_idx", "float64",
                                     "int32", "per_sample_weights"])
def test_embedding_bag_kernel_form(mode, variant):
    """torch.embedding_bag: the bags, and the kernel's offset2bag, bag_size, max_indices."""
    if variant == "per_sample_weights" and mode != 0:
        return
    psw = _arr(8)

    def run(m):
        w = m.tensor(EMB_W, dtype=m.float64 if variant == "float64" else m.float32,
                     requires_grad=True)
        itype = m.int32 if variant == "int32" else m.int64
        idx, off = m.tensor(EMB_IDX, dtype=itype), m.tensor([0, 4, 4], dtype=itype)
        args = [False, mode, False, None, variant == "include_last_offset"]
        if variant == "padding_idx":
            args.append(4)
        if variant == "per_sample_weights":
            args[3] = m.tensor(psw, dtype=m.float32)
        outs = m.embedding_bag(w, idx, off, *args)
        outs[0].sum().backward()
        return [o.detach().numpy() for o in outs] + [w.grad.numpy()], type(outs[0].grad_fn)

    (got, got_node), (want, want_node) = run(tapegrad), run(torch)
    assert got_node.__name__ == want_node.__name__ == "EmbeddingBagBackward0"
    if variant == "include_last_offset" and mode == 0:
        # the indices after the last offset: torch's float32 sum leaves their rows' gradient
        # uninitialised (tapegrad: 0), so the weight's gradient is not compared
        got, want = got[:-1], want[:-1]
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)


def test_embedding_bag_kernel_form_errors():
    def msg(m, f):
        with pytest.raises(Exception) as info:
            f(m)
        return type(info.value), str(info.value).replace("tapegrad", "torch")

    w = _arr(10, 3)
    calls = [
        lambda m: m.embedding_bag(m.tensor(w), m.tensor(EMB_IDX), m.tensor([0, 4]), False, 3),
        lambda m: m.embedding_bag(m.tensor(w), m.tensor(EMB_IDX * 1.0), m.tensor([0, 4])),
        lambda m: m.embedding_bag(m.tensor(w[0]), m.tensor(EMB_IDX), m.tensor([0, 4])),
        lambda m: m.embedding_bag(m.tensor(w), m.tensor(EMB_IDX), m.tensor([[0, 4]])),
        lambda m: m.embedding_bag(m.tensor(w), m.tensor(EMB_IDX), m.tensor([0, 9])),
        lambda m: m.embedding_bag(m.tensor(w), m.tensor(EMB_IDX), m.tensor([0, 4]), False, 1,
                                  False, m.ones(8, dtype=m.float64)),
        lambda m: m.embedding_renorm_(m.tensor(w), m.tensor([0.0]), 1.0, 2.0),
        lambda m: m.embedding_renorm_(m.tensor(w[0]), m.tensor([0]), 1.0, 2.0),
        lambda m: m.embedding_renorm_(m.tensor(w), m.tensor([12]), 1.0, 2.0),
        lambda m: m.embedding_renorm_(m.tensor(w, requires_grad=True), m.tensor([0]), 1.0, 2.0),
        lambda m: m.embedding_renorm_(m.tensor(w).long(), m.tensor([0]), 1.0, 2.0),
    ]
    for call in calls:
        assert msg(tapegrad, call) == msg(torch, call)


@pytest.mark.parametrize("norm_type", [1.0, 2.0, 3.0, float("inf")])
def test_embedding_renorm_(norm_type):
    w = _arr(6, 4) * 3
    idx = np.array([0, 1, 1, 4])
    outs = []
    for m in (tapegrad, torch):
        t = m.tensor(w, dtype=m.float32)
        before = t._version
        r = m.embedding_renorm_(t, m.tensor(idx), 1.5, norm_type)
        assert r is t and t._version == before + 1
        outs.append(t.numpy())
    np.testing.assert_allclose(outs[0], outs[1], rtol=1.3e-6, atol=1e-6)


@pytest.mark.parametrize("shape", [(4, 3), (4, 3, 5), (2, 3, 4, 5), (1, 3)])
def test_batch_norm_update_stats(shape):
    x, rm0 = _arr(*shape), _arr(3)
    res = []
    for m in (tapegrad, torch):
        rm, rv = m.tensor(rm0), m.tensor(np.abs(BN[3]))
        xt = m.tensor(x, requires_grad=True)
        mean, var = m.batch_norm_update_stats(xt, rm, rv, 0.3)
        assert mean.requires_grad and type(mean.grad_fn).__name__ == "NotImplemented"
        with pytest.raises(RuntimeError, match="derivative for aten::batch_norm_update_stats "
                                               "is not implemented"):
            mean.sum().backward()
        res.append([mean.detach().numpy(), var.detach().numpy(), rm.numpy(), rv.numpy()])
        none = m.batch_norm_update_stats(xt.detach(), None, None, 0.3)
        np.testing.assert_array_equal(none[0].numpy(), mean.detach().numpy())
    for g, w in zip(*res, strict=True):
        assert g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12, equal_nan=True)
