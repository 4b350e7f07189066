"""InstanceNorm1d/2d/3d: normalise each channel of each sample over its spatial dims.

No affine parameters and no running statistics by default (``affine=False``,
``track_running_stats=False``); ``forward`` is ``F.instance_norm``. Unbatched inputs are
accepted.
"""

from __future__ import annotations

import warnings
from typing import Any

from ..._tensor import Tensor
from .. import functional as F
from .batchnorm import _LazyNormBase, _NormBase
from .utils import _per_dimension_classes

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LazyInstanceNorm1d",
           "LazyInstanceNorm2d", "LazyInstanceNorm3d"]


class _InstanceNorm(_NormBase):
    _no_batch_dim = 0
    _dims: tuple[int, ...] = ()

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1,
                 affine: bool = False, track_running_stats: bool = False, device: Any = None,
                 dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() not in self._dims:
            a, b = self._dims
            raise ValueError(f"expected {a}D or {b}D input (got {input.dim()}D input)")

    def _apply_instance_norm(self, input: Tensor) -> Tensor:
        return F.instance_norm(input, self.running_mean, self.running_var, self.weight,
                               self.bias, self.training or not self.track_running_stats,
                               self.momentum if self.momentum is not None else 0.0, self.eps)

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        feature_dim = input.dim() - self._no_batch_dim
        if input.size(feature_dim) != self.num_features:
            if self.affine:
                raise ValueError(
                    f"expected input's size at dim={feature_dim} to match num_features "
                    f"({self.num_features}), but got: {input.size(feature_dim)}."
                )
            warnings.warn(
                f"input's size at dim={feature_dim} does not match num_features. You can "
                "silence this warning by not passing in num_features, which is not used "
                "because affine=False",
                stacklevel=2,
            )
        if input.dim() == self._no_batch_dim:
            return self._apply_instance_norm(input.unsqueeze(0)).squeeze(0)
        return self._apply_instance_norm(input)


def _instance_norm_dims(nd: int) -> dict[str, Any]:
    """The ranks an InstanceNorm over ``nd`` spatial dims accepts: nd + 1 (unbatched), nd + 2."""
    return {"_no_batch_dim": nd + 1, "_dims": (nd + 1, nd + 2)}


InstanceNorm1d, InstanceNorm2d, InstanceNorm3d = _per_dimension_classes(
    "InstanceNorm{nd}d", lambda nd: (_InstanceNorm,),
    "Instance normalisation over (N, C, {spatial}) or (C, {spatial}) inputs.", __name__,
    _instance_norm_dims)
LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d = _per_dimension_classes(
    "LazyInstanceNorm{nd}d", lambda nd: (_LazyNormBase, _InstanceNorm),
    "An InstanceNorm{nd}d whose ``num_features`` is its first input's (see lazy.py).", __name__,
    lambda nd: {"cls_to_become": (InstanceNorm1d, InstanceNorm2d, InstanceNorm3d)[nd - 1],
                **_instance_norm_dims(nd)})
