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


def _input_grad(conv: Any, input_size: Any, weight: Tensor, grad_output: Tensor, stride: Any,
                padding: Any, dilation: Any, groups: int) -> Tensor:
    with enable_grad():
        x = zeros(tuple(input_size), dtype=grad_output.dtype, requires_grad=True)
        out = conv(x, weight.detach(), None, stride, padding, dilation, groups)
        return _grad(out, x, grad_output)[0]


def _weight_grad(conv: Any, input: Tensor, weight_size: Any, grad_output: Tensor,
                 stride: Any, padding: Any, dilation: Any, groups: int) -> Tensor:
    with enable_grad():
        w = zeros(tuple(weight_size), dtype=grad_output.dtype, requires_grad=True)
        out = conv(input.detach(), w, None, stride, padding, dilation, groups)
        return _grad(out, w, grad_output)[0]


def conv1d_input(input_size: Any, weight: Tensor, grad_output: Tensor, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """The gradient of ``conv1d`` with respect to its input (of size ``input_size``)."""
    return _input_grad(F.conv1d, input_size, weight, grad_output, stride, padding, dilation,
                       groups)


def conv1d_weight(input: Tensor, weight_size: Any, grad_output: Tensor, stride: Any = 1,
                  padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """The gradient of ``conv1d`` with respect to its weight (of size ``weight_size``)."""
    return _weight_grad(F.conv1d, input, weight_size, grad_output, stride, padding, dilation,
                        groups)


def conv2d_input(input_size: Any, weight: Tensor, grad_output: Tensor, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """The gradient of ``conv2d`` with respect to its input (of size ``input_size``)."""
    return _input_grad(F.conv2d, input_size, weight, grad_output, stride, padding, dilation,
                       groups)


def conv2d_weight(input: Tensor, weight_size: Any, grad_output: Tensor, stride: Any = 1,
                  padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """The gradient of ``conv2d`` with respect to its weight (of size ``weight_size``)."""
    return _weight_grad(F.conv2d, input, weight_size, grad_output, stride, padding, dilation,
                        groups)


def conv3d_input(input_size: Any, weight: Tensor, grad_output: Tensor, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """The gradient of ``conv3d`` with respect to its input (of size ``input_size``)."""
    return _input_grad(F.conv3d, input_size, weight, grad_output, stride, padding, dilation,
                       groups)


def conv3d_weight(input: Tensor, weight_size: Any, grad_output: Tensor, stride: Any = 1,
                  padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """The gradient of ``conv3d`` with respect to its weight (of size ``weight_size``)."""
    return _weight_grad(F.conv3d, input, weight_size, grad_output, stride, padding, dilation,
                        groups)
