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

import numpy as np

from .. import _creation, _dtype
from .._dtype import LEGACY_NAMES
from .._tensor import Tensor
from ..autograd.grad_mode import is_grad_enabled
from ..ops import rnn as K
from ..ops import shape as sh
from . import functional as F
from .functional._embedding import _embedding_renorm

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


conv_tbc = F.conv_tbc  # torch.conv_tbc is torch.nn.functional.conv_tbc


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


def _index_check(t: Tensor, what: str, arg: str = "#1") -> None:
    if t.dtype.name not in ("int64", "int32"):
        raise RuntimeError(
            f"Expected tensor for argument {arg} 'indices' to have one of the following scalar "
            f"types: Long, Int; but got torch.{LEGACY_NAMES.get(t.dtype.name, 'Tensor')} "
            f"instead (while checking arguments for {what})")


def embedding_bag(weight: Tensor, indices: Tensor, offsets: Tensor,
                  scale_grad_by_freq: bool = False, mode: int = 0, sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """The kernel's form of ``nn.functional.embedding_bag``: mode an int (0 sum, 1 mean,
    2 max), and its bookkeeping next to the bags: ``(output, offset2bag, bag_size,
    max_indices)``.

    ``offset2bag`` is each index's bag (left empty by sum over float32/half weights without
    padding, which does not need it); ``bag_size`` the bag's count of indices (0s in sum mode:
    one per offset, or one per bag for a weight that requires grad); ``max_indices`` the
    weight row each maximum came from (max mode; 0 for an empty bag), ``bag_size`` again in
    mean mode and 0s in sum mode. Like torch's, offset2bag and bag_size count the indices
    after ``include_last_offset``'s last offset in the last bag.
    """
    if mode not in (0, 1, 2):
        raise RuntimeError("`mode` must be sum, mean, or max.")
    _index_check(indices, "embedding_bag")
    _index_check(offsets, "embedding_bag")
    if weight.ndim != 2:
        raise RuntimeError(f"weight has to be a 2D Tensor, but got Tensor of dimension "
                           f"{weight.ndim}")
    if offsets.ndim != 1:
        raise RuntimeError(f"offsets has to be a 1D Tensor, but got Tensor of dimension "
                           f"{offsets.ndim}")
    off = offsets._data.astype(np.int64)
    idx = indices._data.astype(np.int64).reshape(-1)
    n_in = indices.shape[0] if indices.ndim else 1
    if off.size and off[0] != 0:
        raise RuntimeError(
            "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start "
            f"from position 0. However, got {off[0]}\n[ torch.LongTensor{{}} ]")
    if off.size and off[-1] > n_in:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {n_in} but "
                           f"got offsets[-1] of {off[-1]}")
    if per_sample_weights is not None and mode != 0:
        raise RuntimeError("embedding_bag: per_sample_weights only supported with mode='sum'")
    out = F.embedding_bag(indices, weight, offsets, scale_grad_by_freq=scale_grad_by_freq,
                          mode=("sum", "mean", "max")[mode], sparse=sparse,
                          per_sample_weights=per_sample_weights,
                          include_last_offset=include_last_offset, padding_idx=padding_idx)
    int_dt = np.int32 if indices.dtype.name == offsets.dtype.name == "int32" else np.int64
    n_bags = max(len(off) - 1, 0) if include_last_offset else len(off)
    starts = off[:n_bags]
    pad = None if padding_idx is None else (padding_idx % weight.shape[0])
    keep = idx != pad if pad is not None else np.ones(idx.size, dtype=bool)
    bag_of = np.searchsorted(starts, np.arange(idx.size), side="right") - 1
    fast_sum = mode == 0 and pad is None and weight.dtype.name in (
        "float32", "float16", "bfloat16") and weight._data.strides[1] == weight.element_size()
    offset2bag = np.zeros(0, int_dt) if fast_sum else bag_of.astype(int_dt)
    if mode == 0:  # one per offset, or per bag when the weight requires grad
        bag_size = np.zeros(n_bags if weight.requires_grad else len(off), int_dt)
        return (out, Tensor._make(offset2bag), Tensor._make(bag_size),
                Tensor._make(bag_size.copy()))
    inside = keep & (bag_of >= 0)
    bag_size = np.bincount(bag_of[inside], minlength=n_bags)[:n_bags].astype(int_dt)
    if mode == 1:
        return (out, Tensor._make(offset2bag), Tensor._make(bag_size),
                Tensor._make(bag_size.copy()))
    w = weight._data
    max_indices = np.zeros((n_bags, w.shape[1]), int_dt)
    for b in range(n_bags):
        rows = idx[inside & (bag_of == b)]
        if rows.size:
            max_indices[b] = rows[np.argmax(w[rows], axis=0)]
    return out, Tensor._make(offset2bag), Tensor._make(bag_size), Tensor._make(max_indices)


def embedding_renorm_(weight: Tensor, indices: Tensor, max_norm: float,
                      norm_type: float) -> Tensor:
    """Rescale in place, without recording it, each row of ``weight`` named in ``indices``
    whose ``norm_type``-norm exceeds ``max_norm``: ``row *= max_norm / (norm + 1e-7)``."""
    _index_check(indices, "embedding_renorm_", "#2")
    if weight.ndim != 2:
        raise RuntimeError(f"Expected 2-dimensional tensor, but got {weight.ndim}-dimensional "
                           "tensor for argument #1 'self' (while checking arguments for "
                           "embedding_renorm_)")
    if weight.requires_grad and weight.grad_fn is None and _grad_enabled():
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")
    w = weight._data
    if w.dtype.kind not in "fc" and w.dtype.name != "bfloat16":
        kind = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char",
                "uint8": "Byte", "bool": "Bool"}[w.dtype.name]
        raise RuntimeError("norm(): input dtype should be either floating point or complex. "
                           f"Got {kind} instead.")
    rows = np.unique(indices._data.astype(np.int64))
    if rows.size and (rows[0] < -w.shape[0] or rows[-1] >= w.shape[0]):
        bad = rows[-1] if rows[-1] >= w.shape[0] else rows[0]
        raise IndexError(f"select(): index {bad} out of range for tensor of size "
                         f"{list(w.shape)} at dimension 0")
    _embedding_renorm(weight, rows, max_norm, norm_type)
    return weight


def _grad_enabled() -> bool:
    return is_grad_enabled()


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


def max_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False) -> Tensor:
    return F.max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool1d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None,
                            padding: Any = 0, dilation: Any = 1,
                            ceil_mode: bool = False) -> tuple[Tensor, Tensor]:
    return F.max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode,
                        return_indices=True)


def max_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False) -> Tensor:
    return F.max_pool2d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool3d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
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
               bidirectional: bool, batch_first: bool, batch_sizes: Any = None) -> tuple:
    """All layers of an RNN whose weights come as one flat list, layer by layer and direction
    by direction: ``w_ih, w_hh`` (then ``b_ih, b_hh`` with biases). With ``batch_sizes``,
    ``input`` is a packed sequence's data (its rows step by step), and so is the output."""
    entry = K.LAYERS[mode]
    directions = 2 if bidirectional else 1
    per = 4 if has_biases else 2
    if len(params) != num_layers * directions * per:
        raise RuntimeError(f"{mode.lower()}: expected {num_layers * directions * per} "
                           f"parameters, got {len(params)}")
    sizes = None if batch_sizes is None else tuple(int(b) for b in batch_sizes.tolist())
    x = input.transpose(0, 1) if batch_first and sizes is None else input
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
                        batch_sizes=sizes, reverse=direction == 1, _cache={})
            outs.append(res[0])
            h_list.append(res[1])
            if c0 is not None:
                c_list.append(res[2])
        x = sh.cat(outs, -1) if directions == 2 else outs[0]
        if dropout != 0 and train and layer < num_layers - 1:
            x = F.dropout(x, dropout, True)
    out = x.transpose(0, 1) if batch_first and sizes is None else x
    if c0 is None:
        return out, sh.stack(h_list, 0)
    return out, sh.stack(h_list, 0), sh.stack(c_list, 0)


# torch.lstm & co. take a padded batch or a packed sequence's data and batch sizes: two
# overloads whose positions hold different things, bound here as torch's parser binds them.
_PADDED = ("input", "hx", "params", "has_biases", "num_layers", "dropout", "train",
           "bidirectional", "batch_first")
_PACKED = ("data", "batch_sizes", "hx", "params", "has_biases", "num_layers", "dropout",
           "train", "bidirectional")


def _rnn_call(name: str, mode: str, args: tuple, kwargs: dict) -> tuple:
    """``(output, h_n[, c_n])`` of ``torch.<name>`` in either form: the packed one when
    ``batch_sizes`` (a tensor where the padded form has ``hx`` for lstm, ``params``
    otherwise) is given."""
    lstm = mode == "LSTM"
    second = args[1] if len(args) > 1 else None
    third = args[2] if len(args) > 2 else None
    packed = "data" in kwargs or "batch_sizes" in kwargs or (
        isinstance(second, Tensor) if lstm else isinstance(third, Tensor))
    names = _PACKED if packed else _PADDED
    if len(args) > len(names):
        raise TypeError(f"{name}() takes {len(names)} positional arguments but {len(args)} "
                        "were given")
    bound = dict(zip(names, args, strict=False))
    for k, v in kwargs.items():
        if k not in names or k in bound:
            raise TypeError(f"{name}() got an unexpected keyword argument '{k}'")
        bound[k] = v
    missing = [k for k in names if k not in bound]
    if missing:
        raise TypeError(f"{name}() missing {len(missing)} required positional arguments: "
                        + ", ".join(f'"{k}"' for k in missing))
    hx = bound["hx"]
    h0, c0 = (hx[0], hx[1]) if lstm else (hx, None)
    x = bound["data"] if packed else bound["input"]
    return _recurrent(mode, x, h0, c0, bound["params"], bound["has_biases"],
                      bound["num_layers"], bound["dropout"], bound["train"],
                      bound["bidirectional"], False if packed else bound["batch_first"],
                      bound["batch_sizes"] if packed else None)


def lstm(*args: Any, **kwargs: Any) -> tuple[Tensor, Tensor, Tensor]:
    """``(output, h_n, c_n)`` of a multi-layer LSTM: ``lstm(input, hx, params, has_biases,
    num_layers, dropout, train, bidirectional, batch_first)``, ``hx`` being ``(h_0, c_0)``,
    or on a packed sequence ``lstm(data, batch_sizes, hx, params, has_biases, num_layers,
    dropout, train, bidirectional)``."""
    return _rnn_call("lstm", "LSTM", args, kwargs)


def gru(*args: Any, **kwargs: Any) -> tuple[Tensor, Tensor]:
    """``(output, h_n)`` of a multi-layer GRU (the two forms of :func:`lstm`, ``hx`` one
    tensor)."""
    return _rnn_call("gru", "GRU", args, kwargs)


def rnn_tanh(*args: Any, **kwargs: Any) -> tuple[Tensor, Tensor]:
    """``(output, h_n)`` of a multi-layer Elman RNN with tanh."""
    return _rnn_call("rnn_tanh", "RNN_TANH", args, kwargs)


def rnn_relu(*args: Any, **kwargs: Any) -> tuple[Tensor, Tensor]:
    """``(output, h_n)`` of a multi-layer Elman RNN with ReLU."""
    return _rnn_call("rnn_relu", "RNN_RELU", args, kwargs)


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
__all__ += ["embedding_bag", "embedding_renorm_"]
