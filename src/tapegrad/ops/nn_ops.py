"""The neural-network entries behind ``tapegrad.nn.functional``, one module per family.

Each family module holds fused entries torch also records as one node, a NumPy forward and its
backward rule side by side, in Tensor terms (the first-order paths of the rules a training
step runs are in ops/fast_paths.py; ``nn_common`` explains what the families share):

    nn_common       array/Tensor namespaces, linked gradients, scalar arithmetic (MulBackward1)
    erf             erf and the normal CDF (GELU)
    activations     gelu, silu, softplus, elu, leaky_relu, hardtanh, glu, prelu, rrelu, ...
    losses          mse, smooth_l1, huber, binary cross entropy, nll, margin losses, ctc
    normalization   layer_norm, batch_norm, group_norm
    embedding       embedding, embedding_bag
    padding         constant, reflection, replication and circular pads
    conv            convolution (im2col), unfold, fold
    pooling         max, average, adaptive max pooling, max unpooling
    resampling      adaptive average pooling and upsampling (separable maps), pixel shuffle
    attention       scaled dot-product attention

This module imports them in that order and lists the registry entries they add (``NAMES``).
"""

from __future__ import annotations

from ._registry import REGISTRY

_BEFORE = set(REGISTRY)

# registers the families' entries, in this order
# isort: off
from . import nn_common  # noqa: E402, F401
from . import erf  # noqa: E402, F401
from . import activations  # noqa: E402, F401
from . import losses  # noqa: E402, F401
from . import normalization  # noqa: E402, F401
from . import embedding  # noqa: E402, F401
from . import padding  # noqa: E402, F401
from . import conv  # noqa: E402, F401
from . import pooling  # noqa: E402, F401
from . import resampling  # noqa: E402, F401
from . import attention  # noqa: E402, F401
# isort: on

# The registry entries these modules add (tests check that every one is exercised).
NAMES = tuple(name for name in REGISTRY if name not in _BEFORE)
