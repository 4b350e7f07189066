"""``tapegrad.nn.functional``: torch's functional neural-network API, on the op registry.

Every function has torch's signature, defaults, result dtype, ``grad_fn`` node and error
messages. Hot or numerically delicate pieces are single registry entries in the ops families
(``ops/activations.py``, ``ops/normalization.py``, ``ops/conv.py``, ``ops/losses.py``,
``ops/attention.py``, ...: ``gelu``, ``layer_norm``, ``convolution``, ``nll_loss``, attention);
the rest is built from ordinary tensor ops the way torch builds it, so the graph prints the same
nodes::

    F.linear(x, w, b)         2-D x: one AddmmBackward0 (x @ w.T + b in one product)
    F.cross_entropy(z, t)     NllLossBackward0 -> LogSoftmaxBackward0 -> z
    F.conv2d(x, w, b)         one ConvolutionBackward0 (im2col + one matrix product)
    F.dropout(x, p)           MulBackward0(x, noise), the noise drawn as torch draws it

The functions live in one module per family, and this package gathers them::

    _linear          linear, bilinear
    _activations     relu, gelu, silu, elu, hardtanh, glu, prelu, rrelu, softmax, ...
    _dropout         dropout, dropout1d/2d/3d, alpha_dropout, feature_alpha_dropout
    _losses          mse, l1, cross_entropy, nll, bce, kl_div, margin losses, ctc_loss, ...
    _distance        cosine_similarity, pairwise_distance, pdist
    _normalization   layer_norm, rms_norm, batch_norm, group_norm, instance_norm, normalize
    _embedding       embedding, embedding_bag, one_hot
    _padding         pad
    _convolution     conv1d/2d/3d, conv_transpose1d/2d/3d, unfold, fold
    _pooling         max, avg, adaptive, lp, fractional pooling, max_unpool
    _vision          interpolate, upsample*, pixel_shuffle, channel_shuffle, grid_sample
    _attention       scaled_dot_product_attention, multi_head_attention_forward
    _common          dtype names for messages, broadcasting a pair, assert_int_or_pair

and, as torch.nn.functional does, it also exports ``grouped_mm`` (``ops/grouped_mm.py``), the
``__torch_function__`` checks (``tapegrad/overrides.py``) and ``boolean_dispatch``
(``tapegrad/_jit_internal.py``).

This package imports nothing from ``tapegrad.nn`` itself, so ``nn/__init__`` can import it.
"""

from __future__ import annotations

from ._activations import (
    celu,
    celu_,
    elu,
    elu_,
    gelu,
    glu,
    gumbel_softmax,
    hardshrink,
    hardsigmoid,
    hardswish,
    hardtanh,
    hardtanh_,
    leaky_relu,
    leaky_relu_,
    log_softmax,
    logsigmoid,
    mish,
    prelu,
    relu,
    relu6,
    relu_,
    rrelu,
    rrelu_,
    selu,
    selu_,
    sigmoid,
    silu,
    softmax,
    softmin,
    softplus,
    softshrink,
    softsign,
    tanh,
    tanhshrink,
    threshold,
    threshold_,
)
from ._attention import (
    multi_head_attention_forward,
    scaled_dot_product_attention,
)
from ._convolution import (
    conv1d,
    conv2d,
    conv3d,
    conv_tbc,  # noqa: F401 - public (torch.conv_tbc too), outside __all__ as torch's
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose3d,
    fold,
    unfold,
)
from ._distance import (
    cosine_similarity,
    pairwise_distance,
    pdist,
)
from ._dropout import (
    alpha_dropout,
    dropout,
    dropout1d,
    dropout2d,
    dropout3d,
    feature_alpha_dropout,
)
from ._embedding import (
    embedding,
    embedding_bag,
    one_hot,
)
from ._linear import (
    bilinear,
    linear,
)
from ._losses import (
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cosine_embedding_loss,
    cross_entropy,
    ctc_loss,  # noqa: F401 - public, outside __all__ as before
    gaussian_nll_loss,
    hinge_embedding_loss,
    huber_loss,
    kl_div,
    l1_loss,
    linear_cross_entropy,
    margin_ranking_loss,
    mse_loss,
    multi_margin_loss,
    multilabel_margin_loss,
    multilabel_soft_margin_loss,
    nll_loss,
    poisson_nll_loss,
    smooth_l1_loss,
    soft_margin_loss,
    triplet_margin_loss,
    triplet_margin_with_distance_loss,
)
from ._normalization import (
    _check_batch_norm_args,  # noqa: F401 - nn._native uses it
    _check_normalized,  # noqa: F401 - nn._native uses it
    batch_norm,
    group_norm,
    instance_norm,
    layer_norm,
    local_response_norm,
    normalize,
    rms_norm,
)
from ._padding import (
    pad,
)
from ._pooling import (
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_avg_pool3d,
    adaptive_max_pool1d,
    adaptive_max_pool1d_with_indices,
    adaptive_max_pool2d,
    adaptive_max_pool2d_with_indices,
    adaptive_max_pool3d,  # noqa: F401 - public, outside __all__ as before
    adaptive_max_pool3d_with_indices,
    avg_pool1d,
    avg_pool2d,
    avg_pool3d,
    fractional_max_pool2d,
    fractional_max_pool2d_with_indices,
    fractional_max_pool3d,
    fractional_max_pool3d_with_indices,
    lp_pool1d,
    lp_pool2d,
    lp_pool3d,
    max_pool1d,
    max_pool1d_with_indices,
    max_pool2d,
    max_pool2d_with_indices,
    max_pool3d,
    max_pool3d_with_indices,
    max_unpool1d,
    max_unpool2d,
    max_unpool3d,
)
from ._vision import (
    affine_grid,
    channel_shuffle,
    grid_sample,
    interpolate,
    native_channel_shuffle,
    pixel_shuffle,
    pixel_unshuffle,
    upsample,
    upsample_bilinear,
    upsample_nearest,
)

__all__ = [
    "channel_shuffle", "native_channel_shuffle", "affine_grid", "grid_sample",
    "fractional_max_pool2d", "fractional_max_pool3d", "fractional_max_pool2d_with_indices",
    "fractional_max_pool3d_with_indices", "pdist", "linear_cross_entropy",
    "multi_head_attention_forward",
    "linear", "bilinear", "relu", "relu_", "relu6", "leaky_relu", "leaky_relu_", "gelu",
    "silu", "mish", "softplus", "elu", "elu_", "selu", "selu_", "celu", "celu_", "hardtanh",
    "hardtanh_", "hardsigmoid", "hardswish", "sigmoid", "tanh", "logsigmoid", "softsign",
    "tanhshrink", "threshold", "threshold_", "hardshrink", "softshrink", "glu", "prelu",
    "softmax", "softmin", "log_softmax", "dropout", "dropout1d", "dropout2d", "dropout3d",
    "alpha_dropout", "feature_alpha_dropout", "mse_loss", "l1_loss", "smooth_l1_loss",
    "huber_loss", "soft_margin_loss", "cross_entropy", "nll_loss", "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "kl_div", "cosine_similarity", "pairwise_distance",
    "cosine_embedding_loss", "margin_ranking_loss", "hinge_embedding_loss",
    "triplet_margin_loss", "layer_norm", "rms_norm", "batch_norm", "group_norm",
    "instance_norm", "normalize", "embedding", "one_hot", "pad", "conv1d", "conv2d", "conv3d",
    "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "max_pool1d", "max_pool2d",
    "max_pool1d_with_indices", "max_pool2d_with_indices", "avg_pool1d", "avg_pool2d",
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_max_pool1d", "adaptive_max_pool2d",
    "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
    "adaptive_max_pool3d_with_indices", "unfold", "fold",
    "scaled_dot_product_attention", "max_pool3d", "max_pool3d_with_indices", "avg_pool3d",
    "adaptive_avg_pool3d", "max_unpool1d", "max_unpool2d", "max_unpool3d", "lp_pool1d",
    "lp_pool2d", "lp_pool3d", "local_response_norm", "pixel_shuffle", "pixel_unshuffle",
    "interpolate", "upsample", "upsample_nearest", "upsample_bilinear", "rrelu", "rrelu_",
    "poisson_nll_loss", "gaussian_nll_loss", "multilabel_soft_margin_loss",
    "triplet_margin_with_distance_loss", "multi_margin_loss", "multilabel_margin_loss",
    "embedding_bag", "gumbel_softmax",
]

# torch's functions say they are torch.nn.functional's: so do these (typename, help, pickling)
for _name in __all__ + ["adaptive_max_pool3d", "ctc_loss"]:
    globals()[_name].__module__ = __name__
del _name

# -- also exported by torch.nn.functional: the grouped product and the dispatch helpers ------
# (public, outside __all__ as torch's are)
from ..._jit_internal import boolean_dispatch  # noqa: E402, F401
from ...ops.grouped_mm import grouped_mm  # noqa: E402
from ...overrides import (  # noqa: E402, F401
    handle_torch_function,
    has_torch_function,
    has_torch_function_unary,
    has_torch_function_variadic,
)
from ._common import assert_int_or_pair  # noqa: E402

for _fn in (assert_int_or_pair, grouped_mm):
    _fn.__module__ = __name__
del _fn

# -- out=: the functions torch's torch._C._nn gives one (one seam for every function: _out.py)

from ... import _out  # noqa: E402

_out.install(globals(), "avg_pool2d avg_pool3d gelu hardshrink linear logsigmoid softplus "
                        "softshrink")
