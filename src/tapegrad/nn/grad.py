"""``torch.nn.grad``: the gradients of a convolution with respect to its input and to its
weight, given the gradient of its output (what a hand-written backward of a convolution
needs). Each runs the convolution once under autograd and asks for the one gradient."""

from __future__ import annotations

from typing import Any

from .._creation import zeros
from .._tensor import Tensor
from ..autograd import grad as _grad
from ..autograd.grad_mode import enable_grad
from . import functional as F

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input",
           "conv3d_weight"]


def _gradients_of(conv: Any, name: str) -> tuple[Any, Any]:
    """The public pair ``<name>_input`` and ``<name>_weight`` for the convolution ``conv``
    (``F.conv1d`` & co.): each runs ``conv`` once under autograd, with zeros of the requested
    size in place of the tensor it differentiates by, and asks for that one gradient."""

    def input_grad(input_size: Any, weight: Tensor, grad_output: Tensor, stride: Any = 1,
                   padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
        with enable_grad():
            x = zeros(tuple(input_size), dtype=grad_output.dtype, requires_grad=True)
            out = conv(x, weight.detach(), None, stride, padding, dilation, groups)
            return _grad(out, x, grad_output)[0]

    def weight_grad(input: Tensor, weight_size: Any, grad_output: Tensor, stride: Any = 1,
                    padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
        with enable_grad():
            w = zeros(tuple(weight_size), dtype=grad_output.dtype, requires_grad=True)
            out = conv(input.detach(), w, None, stride, padding, dilation, groups)
            return _grad(out, w, grad_output)[0]

    for fn, wrt in ((input_grad, "input"), (weight_grad, "weight")):
        fn.__name__ = fn.__qualname__ = f"{name}_{wrt}"
        fn.__doc__ = (f"The gradient of ``{name}`` with respect to its {wrt} (of size "
                      f"``{wrt}_size``).")
    return input_grad, weight_grad


conv1d_input, conv1d_weight = _gradients_of(F.conv1d, "conv1d")
conv2d_input, conv2d_weight = _gradients_of(F.conv2d, "conv2d")
conv3d_input, conv3d_weight = _gradients_of(F.conv3d, "conv3d")
