"""``tapegrad.nn.utils``: gradient clipping, parameter/vector conversion, sequence packing."""

from . import clip_grad, convert_parameters, rnn
from .clip_grad import (
    clip_grad_norm,
    clip_grad_norm_,
    clip_grad_value_,
    clip_grads_with_norm_,
    get_total_norm,
)
from .convert_parameters import parameters_to_vector, vector_to_parameters

__all__ = [
    "clip_grad",
    "clip_grad_norm",
    "clip_grad_norm_",
    "clip_grad_value_",
    "clip_grads_with_norm_",
    "convert_parameters",
    "get_total_norm",
    "parameters_to_vector",
    "vector_to_parameters",
]
__all__ += ["rnn"]
