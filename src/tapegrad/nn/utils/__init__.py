"""``tapegrad.nn.utils``: gradient clipping, parameter/vector conversion, sequence packing
(``rnn``), parametrizations (``parametrize``, ``parametrizations``) and the hook-based
``weight_norm`` / ``spectral_norm``. Pruning lives in ``nn.utils.prune``, imported explicitly
as in torch (``import tapegrad.nn.utils.prune as prune``)."""

from . import clip_grad, convert_parameters, parametrizations, parametrize, rnn
from .clip_grad import (
    clip_grad_norm,
    clip_grad_norm_,
    clip_grad_value_,
    clip_grads_with_norm_,
    get_total_norm,
)
from .convert_parameters import parameters_to_vector, vector_to_parameters
from .spectral_norm import remove_spectral_norm, spectral_norm
from .weight_norm import remove_weight_norm, weight_norm

__all__ = [
    "clip_grad",
    "clip_grad_norm",
    "clip_grad_norm_",
    "clip_grad_value_",
    "clip_grads_with_norm_",
    "convert_parameters",
    "get_total_norm",
    "parameters_to_vector",
    "parametrizations",
    "parametrize",
    "remove_spectral_norm",
    "remove_weight_norm",
    "spectral_norm",
    "vector_to_parameters",
    "weight_norm",
]
__all__ += ["rnn"]
