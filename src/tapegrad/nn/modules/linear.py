"""Identity, Linear (y = x W^T + b) and Bilinear (y = x1^T A x2 + b).

``Linear(in, out)`` draws its weight with ``kaiming_uniform_(a=sqrt(5))`` and then its bias from
U(-1/sqrt(in), 1/sqrt(in)), in that order, so ``manual_seed(s); Linear(in, out)`` has torch's
exact values.
"""

from __future__ import annotations

import math
from typing import Any

from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from .. import functional as F
from .. import init
from ..parameter import UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module
from .utils import _add_weight_and_bias, _reset_bias

__all__ = ["Bilinear", "Identity", "LazyLinear", "Linear", "NonDynamicallyQuantizableLinear"]


class Identity(Module):
    """Returns its input unchanged (any constructor arguments are ignored)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:
        return input


class Linear(Module):
    """``y = x @ weight.T + bias`` with weight (out_features, in_features).

    Example:
        >>> import tapegrad as torch
        >>> layer = torch.nn.Linear(4, 2)
        >>> layer(torch.randn(3, 4)).shape
        torch.Size([3, 2])
    """

    __constants__ = ["in_features", "out_features"]

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        _add_weight_and_bias(self, (out_features, in_features), bias, out_features, device,
                             dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """torch's default init: kaiming_uniform_(a=sqrt(5)), then the bias."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        _reset_bias(self.weight, self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class LazyLinear(LazyModuleMixin, Linear):
    """A Linear whose ``in_features`` is the last size of its first input (see lazy.py).

    Example:
        >>> import tapegrad as torch
        >>> layer = torch.nn.LazyLinear(2)
        >>> layer(torch.randn(3, 4)).shape, type(layer).__name__
        (torch.Size([3, 2]), 'Linear')
    """

    cls_to_become = Linear
    weight: UninitializedParameter
    bias: UninitializedParameter

    def __init__(self, out_features: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor) -> None:  # type: ignore[override]
        """``in_features`` from ``input``'s last size; the parameters made and initialized."""
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()


class NonDynamicallyQuantizableLinear(Linear):
    """A Linear under another name (MultiheadAttention's ``out_proj``)."""


class Bilinear(Module):
    """``y[n, o] = x1[n] @ weight[o] @ x2[n] + bias[o]``."""

    __constants__ = ["in1_features", "in2_features", "out_features"]

    def __init__(self, in1_features: int, in2_features: int, out_features: int,
                 bias: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        _add_weight_and_bias(self, (out_features, in1_features, in2_features), bias,
                             out_features, device, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.in1_features <= 0:
            raise ValueError(
                f"in1_features must be > 0, but got (in1_features={self.in1_features})"
            )
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")
