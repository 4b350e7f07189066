"""The nn ops torch also exposes at top level, under their ATen signatures: ``torch.conv2d``,
``torch.batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
cudnn_enabled)``, ``torch.lstm(input, hx, params, ...)``, ``torch.kl_div(input, target, 1)``...

These differ from ``nn.functional``'s forms in argument order (``torch.batch_norm`` takes the
weight before the running statistics, ``torch.embedding`` the weight before the indices),
in how a reduction is named (an int: 0 none, 1 mean, 2 sum; omitted, it is 0, as in torch's
Python binding) and in what they return (``torch.adaptive_max_pool1d`` always returns the
indices too). Each one maps its arguments onto
the ``nn.functional`` op that does the work.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .. import _creation
from .._tensor import Tensor
from ..ops import rnn as K
from ..ops import shape as sh
from . import functional as F

_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def _reduction(reduction: Any) -> str:
    if isinstance(reduction, str):
        return reduction
    return _REDUCTIONS[int(reduction)]


def _stride(stride: Any) -> Any:
    """ATen's ``stride=[]`` means "the kernel size", as nn.functional's ``stride=None``."""
    return None if isinstance(stride, (list, tuple)) and len(stride) == 0 else stride


# -- convolution -------------------------------------------------------------------------------

conv1d, conv2d, conv3d = F.conv1d, F.conv2d, F.conv3d
conv_transpose1d, conv_transpose2d, conv_transpose3d = (
    F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)


def convolution(input: Tensor, weight: Tensor, bias: Tensor | None, stride: Any, padding: Any,
                dilation: Any, transposed: bool, output_padding: Any, groups: int) -> Tensor:
    """The one entry every convolution goes through: the spatial rank comes from the weight."""
    dims = weight.ndim - 2
    if transposed:
        conv = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[dims - 1]
        return conv(input, weight, bias, stride, padding, output_padding, groups, dilation)
    return (F.conv1d, F.conv2d, F.conv3d)[dims - 1](input, weight, bias, stride, padding,
                                                     dilation, groups)


def conv_tbc(input: Tensor, weight: Tensor, bias: Tensor, pad: int = 0) -> Tensor:
    """A 1-d convolution over time-major input (time, batch, channels); weight (k, in, out)."""
    if input.ndim != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.ndim != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, "
                           "out_channels.")
    if bias.ndim != 1:
        raise RuntimeError("Bias must be 1-D")
    out = F.conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, padding=pad)
    return out.permute(2, 0, 1)


# -- normalization -----------------------------------------------------------------------------

def batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,
               running_mean: Tensor | None, running_var: Tensor | None, training: bool,
               momentum: float, eps: float, cudnn_enabled: bool) -> Tensor:
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,
                  running_mean: Tensor | None, running_var: Tensor | None,
                  use_input_stats: bool, momentum: float, eps: float,
                  cudnn_enabled: bool) -> Tensor:
    return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                           momentum, eps)


def layer_norm(input: Tensor, normalized_shape: Any, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-05,
               cudnn_enable: bool = True) -> Tensor:
    return F.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-05,
               cudnn_enabled: bool = True) -> Tensor:
    return F.group_norm(input, num_groups, weight, bias, eps)


rms_norm = F.rms_norm


# -- embeddings --------------------------------------------------------------------------------

def embedding(weight: Tensor, indices: Tensor, padding_idx: int = -1,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows of ``weight``; ``padding_idx`` (``-1``: none) gets no gradient."""
    return F.embedding(indices, weight, None if padding_idx < 0 else padding_idx,
                       scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


# -- dropout -----------------------------------------------------------------------------------

def dropout(input: Tensor, p: float, train: bool) -> Tensor:
    return F.dropout(input, p, train)


def dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    return F.dropout(input, p, train, inplace=True)


def alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    return F.alpha_dropout(input, p, train)


def alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    return F.alpha_dropout(input, p, train, inplace=True)


def feature_alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    return F.feature_alpha_dropout(input, p, train)


def feature_alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    return F.feature_alpha_dropout(input, p, train, inplace=True)


def _feature_mask(input: Tensor, p: float) -> Tensor:
    """One keep/drop draw per (sample, channel), broadcast over the rest, scaled by 1/(1-p)."""
    shape = tuple(input.shape[:2]) + (1,) * (input.ndim - 2)
    if p == 1:
        return _creation.zeros(shape, dtype=input.dtype)
    keep = _creation.empty(shape, dtype=input.dtype).bernoulli_(1 - p)
    return keep.div_(1 - p)


def _check_p(p: float) -> None:
    if p < 0 or p > 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")


def feature_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """Dropout of whole channels (dim 1): every feature map is kept or zeroed at once."""
    _check_p(p)
    if not train or p == 0 or input.numel() == 0:
        return input
    return input * _feature_mask(input, p)


def feature_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    _check_p(p)
    if not train or p == 0 or input.numel() == 0:
        return input
    return input.mul_(_feature_mask(input, p))


def native_dropout(input: Tensor, p: float, train: bool | None) -> tuple[Tensor, Tensor]:
    """``(output, mask)``: the mask says which elements were kept (all of them when not
    training)."""
    if train is False or p == 0:
        return input.clone(), _creation.ones(input.shape, dtype=_bool())
    keep = _creation.empty(input.shape, dtype=input.dtype).bernoulli_(1 - p)
    scale = 0.0 if p == 1 else 1.0 / (1 - p)
    return input * keep * scale, keep.to(_bool())


def _bool() -> Any:
    from .. import _dtype

    return _dtype.bool_


# -- activations -------------------------------------------------------------------------------

def celu(input: Tensor, alpha: float = 1.0) -> Tensor:
    return F.celu(input, alpha)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return F.celu_(input, alpha)


def selu(input: Tensor) -> Tensor:
    return F.selu(input)


def selu_(input: Tensor) -> Tensor:
    return F.selu_(input)


def rrelu(input: Tensor, lower: float = 0.125, upper: float = 1.0 / 3.0, training: bool = False,
          generator: Any = None) -> Tensor:
    return F.rrelu(input, lower, upper, training)


def rrelu_(input: Tensor, lower: float = 0.125, upper: float = 1.0 / 3.0,
           training: bool = False, generator: Any = None) -> Tensor:
    return F.rrelu_(input, lower, upper, training)


def threshold(input: Tensor, threshold: float, value: float) -> Tensor:
    return F.threshold(input, threshold, value)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    return F.threshold_(input, threshold, value)


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    return F.hardshrink(input, lambd)


prelu = F.prelu
pixel_shuffle, pixel_unshuffle = F.pixel_shuffle, F.pixel_unshuffle
channel_shuffle = native_channel_shuffle = F.channel_shuffle


# -- pooling -----------------------------------------------------------------------------------

adaptive_avg_pool1d = F.adaptive_avg_pool1d


def adaptive_max_pool1d(input: Tensor, output_size: Any) -> tuple[Tensor, Tensor]:
    """The maxima and their indices (always both, unlike nn.functional's)."""
    return F.adaptive_max_pool1d(input, output_size, return_indices=True)


def avg_pool1d(input: Tensor, kernel_size: Any, stride: Any = (), padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True) -> Tensor:
    return F.avg_pool1d(input, kernel_size, _stride(stride), padding, ceil_mode,
                        count_include_pad)


def max_pool1d(input: Tensor, kernel_size: Any, stride: Any = (), padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False) -> Tensor:
    return F.max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool1d_with_indices(input: Tensor, kernel_size: Any, stride: Any = (),
                            padding: Any = 0, dilation: Any = 1,
                            ceil_mode: bool = False) -> tuple[Tensor, Tensor]:
    return F.max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode,
                        return_indices=True)


def max_pool2d(input: Tensor, kernel_size: Any, stride: Any = (), padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False) -> Tensor:
    return F.max_pool2d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool3d(input: Tensor, kernel_size: Any, stride: Any = (), padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False) -> Tensor:
    return F.max_pool3d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


# -- losses and distances ----------------------------------------------------------------------

def kl_div(input: Tensor, target: Tensor, reduction: Any = 0, *,
           log_target: bool = False) -> Tensor:
    """The pointwise KL divergence; "mean" is over every element (no batchmean warning)."""
    how = _reduction(reduction)
    if how == "mean":
        return F.kl_div(input, target, reduction="none", log_target=log_target).mean()
    return F.kl_div(input, target, reduction=how, log_target=log_target)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor,
                                     weight: Tensor | None = None,
                                     pos_weight: Tensor | None = None,
                                     reduction: Any = 0) -> Tensor:
    return F.binary_cross_entropy_with_logits(input, target, weight,
                                              reduction=_reduction(reduction),
                                              pos_weight=pos_weight)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          reduction: Any = 0) -> Tensor:
    return F.cosine_embedding_loss(input1, input2, target, margin,
                                   reduction=_reduction(reduction))


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,
                         reduction: Any = 0) -> Tensor:
    return F.hinge_embedding_loss(input, target, margin, reduction=_reduction(reduction))


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        reduction: Any = 0) -> Tensor:
    return F.margin_ranking_loss(input1, input2, target, margin,
                                 reduction=_reduction(reduction))


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool, full: bool, eps: float,
                     reduction: Any) -> Tensor:
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps,
                              reduction=_reduction(reduction))


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor,
                        margin: float = 1.0, p: float = 2.0, eps: float = 1e-06,
                        swap: bool = False, reduction: Any = 0) -> Tensor:
    return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                 reduction=_reduction(reduction))


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Any, target_lengths: Any,
             blank: int = 0, reduction: Any = 0, zero_infinity: bool = False) -> Tensor:
    return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                      _reduction(reduction), zero_infinity)


cosine_similarity, pairwise_distance, bilinear = (
    F.cosine_similarity, F.pairwise_distance, F.bilinear)


def affine_grid_generator(theta: Tensor, size: Sequence[int], align_corners: bool) -> Tensor:
    return F.affine_grid(theta, list(size), align_corners)


# -- recurrent layers over flat weight lists ---------------------------------------------------

def _recurrent(mode: str, input: Tensor, h0: Tensor, c0: Tensor | None, params: Sequence,
               has_biases: bool, num_layers: int, dropout: float, train: bool,
               bidirectional: bool, batch_first: bool) -> tuple:
    """All layers of an RNN whose weights come as one flat list, layer by layer and direction
    by direction: ``w_ih, w_hh`` (then ``b_ih, b_hh`` with biases)."""
    entry = K.LAYERS[mode]
    directions = 2 if bidirectional else 1
    per = 4 if has_biases else 2
    if len(params) != num_layers * directions * per:
        raise RuntimeError(f"{mode.lower()}: expected {num_layers * directions * per} "
                           f"parameters, got {len(params)}")
    x = input.transpose(0, 1) if batch_first else input
    if x.size(0) == 0:
        raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
    h_list: list = []
    c_list: list = []
    for layer in range(num_layers):
        outs = []
        for direction in range(directions):
            k = layer * directions + direction
            w = list(params[k * per:(k + 1) * per])
            b_ih, b_hh = (w[2], w[3]) if has_biases else (None, None)
            res = entry(x, h0[k], None if c0 is None else c0[k], w[0], w[1], b_ih, b_hh, None,
                        batch_sizes=None, reverse=direction == 1, _cache={})
            outs.append(res[0])
            h_list.append(res[1])
            if c0 is not None:
                c_list.append(res[2])
        x = sh.cat(outs, -1) if directions == 2 else outs[0]
        if dropout != 0 and train and layer < num_layers - 1:
            x = F.dropout(x, dropout, True)
    out = x.transpose(0, 1) if batch_first else x
    if c0 is None:
        return out, sh.stack(h_list, 0)
    return out, sh.stack(h_list, 0), sh.stack(c_list, 0)


def lstm(input: Tensor, hx: Sequence[Tensor], params: Sequence[Tensor], has_biases: bool,
         num_layers: int, dropout: float, train: bool, bidirectional: bool,
         batch_first: bool) -> tuple[Tensor, Tensor, Tensor]:
    """``(output, h_n, c_n)`` of a multi-layer LSTM; ``hx`` is ``(h_0, c_0)``."""
    return _recurrent("LSTM", input, hx[0], hx[1], params, has_biases, num_layers, dropout,
                      train, bidirectional, batch_first)


def gru(input: Tensor, hx: Tensor, params: Sequence[Tensor], has_biases: bool,
        num_layers: int, dropout: float, train: bool, bidirectional: bool,
        batch_first: bool) -> tuple[Tensor, Tensor]:
    return _recurrent("GRU", input, hx, None, params, has_biases, num_layers, dropout, train,
                      bidirectional, batch_first)


def rnn_tanh(input: Tensor, hx: Tensor, params: Sequence[Tensor], has_biases: bool,
             num_layers: int, dropout: float, train: bool, bidirectional: bool,
             batch_first: bool) -> tuple[Tensor, Tensor]:
    return _recurrent("RNN_TANH", input, hx, None, params, has_biases, num_layers, dropout,
                      train, bidirectional, batch_first)


def rnn_relu(input: Tensor, hx: Tensor, params: Sequence[Tensor], has_biases: bool,
             num_layers: int, dropout: float, train: bool, bidirectional: bool,
             batch_first: bool) -> tuple[Tensor, Tensor]:
    return _recurrent("RNN_RELU", input, hx, None, params, has_biases, num_layers, dropout,
                      train, bidirectional, batch_first)


def _cell(mode: str, input: Tensor, h: Tensor, c: Tensor | None, w_ih: Tensor, w_hh: Tensor,
          b_ih: Tensor | None, b_hh: Tensor | None) -> tuple:
    """One step on (batch, features) rows."""
    res = K.LAYERS[mode](input, h, c, w_ih, w_hh, b_ih, b_hh, None,
                         batch_sizes=(input.size(0),), reverse=False, _cache={})
    return res[1:]


def lstm_cell(input: Tensor, hx: Sequence[Tensor], w_ih: Tensor, w_hh: Tensor,
              b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> tuple[Tensor, Tensor]:
    h, c = _cell("LSTM", input, hx[0], hx[1], w_ih, w_hh, b_ih, b_hh)
    return h, c


def gru_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None,
             b_hh: Tensor | None = None) -> Tensor:
    return _cell("GRU", input, hx, None, w_ih, w_hh, b_ih, b_hh)[0]


def rnn_tanh_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,
                  b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> Tensor:
    return _cell("RNN_TANH", input, hx, None, w_ih, w_hh, b_ih, b_hh)[0]


def rnn_relu_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,
                  b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> Tensor:
    return _cell("RNN_RELU", input, hx, None, w_ih, w_hh, b_ih, b_hh)[0]


__all__ = [
    "adaptive_avg_pool1d", "adaptive_max_pool1d", "affine_grid_generator", "alpha_dropout",
    "alpha_dropout_", "avg_pool1d", "batch_norm", "bilinear",
    "binary_cross_entropy_with_logits", "celu", "celu_", "channel_shuffle", "conv1d", "conv2d",
    "conv3d", "conv_tbc", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "convolution", "cosine_embedding_loss", "cosine_similarity", "ctc_loss", "dropout",
    "dropout_", "embedding", "feature_alpha_dropout", "feature_alpha_dropout_",
    "feature_dropout", "feature_dropout_", "group_norm", "gru", "gru_cell", "hardshrink",
    "hinge_embedding_loss", "instance_norm", "kl_div", "layer_norm", "lstm", "lstm_cell",
    "margin_ranking_loss", "max_pool1d", "max_pool1d_with_indices", "max_pool2d", "max_pool3d",
    "native_channel_shuffle", "native_dropout", "pairwise_distance", "pixel_shuffle",
    "pixel_unshuffle", "poisson_nll_loss", "prelu", "rms_norm", "rnn_relu", "rnn_relu_cell",
    "rnn_tanh", "rnn_tanh_cell", "rrelu", "rrelu_", "selu", "selu_", "threshold", "threshold_",
    "triplet_margin_loss",
]
