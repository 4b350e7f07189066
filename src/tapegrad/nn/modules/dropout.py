"""Dropout layers: zero elements (Dropout), channels (Dropout1d/2d/3d) or apply alpha dropout,
with probability ``p`` in training mode; identity in eval mode.

The noise comes from ``F.dropout`` & co., which draw from the global generator as torch does
(``bernoulli(1 - p) / (1 - p)``), so seeded runs drop the same elements.
"""

from __future__ import annotations

from typing import Any

from ..._tensor import Tensor
from .. import functional as F
from .module import Module
from .utils import _functional_layer, _per_dimension_classes

__all__ = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
           "FeatureAlphaDropout"]


class _DropoutNd(Module):
    """The dropout layers: ``p`` and ``inplace``; forward runs the subclass's ``_fn``."""

    __constants__ = ["p", "inplace"]
    _fn: Any

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"

    def forward(self, input: Tensor) -> Tensor:
        return self._fn(input, self.p, self.training, self.inplace)


class _AlphaDropoutNd(_DropoutNd):
    """AlphaDropout and FeatureAlphaDropout, which (as in torch) never work in place."""

    def forward(self, input: Tensor) -> Tensor:
        return self._fn(input, self.p, self.training)


Dropout = _functional_layer(
    "Dropout", _DropoutNd, F.dropout,
    """Zero each element with probability p and scale the rest by 1 / (1 - p) (training).

    Example:
        >>> import tapegrad as torch
        >>> torch.nn.Dropout(0.2).eval()(torch.ones(3))
        tensor([1., 1., 1.])
    """, __name__)
Dropout1d, Dropout2d, Dropout3d = _per_dimension_classes(
    "Dropout{nd}d", lambda nd: (_DropoutNd,), "Zero whole channels of (N, C, {spatial}) inputs.",
    __name__, lambda nd: {"_fn": staticmethod((F.dropout1d, F.dropout2d, F.dropout3d)[nd - 1])},
    own=("forward",))
AlphaDropout = _functional_layer("AlphaDropout", _AlphaDropoutNd, F.alpha_dropout,
                                 "Dropout that keeps the mean and variance of SELU activations.",
                                 __name__)
FeatureAlphaDropout = _functional_layer("FeatureAlphaDropout", _AlphaDropoutNd,
                                        F.feature_alpha_dropout,
                                        "Alpha dropout of whole channels.", __name__)
