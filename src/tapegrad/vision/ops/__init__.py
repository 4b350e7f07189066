"""torchvision.ops: the layers the models share (more to come in this package)."""

from .misc import (
    MLP,
    Conv2dNormActivation,
    Conv3dNormActivation,
    FrozenBatchNorm2d,
    Permute,
    SqueezeExcitation,
)
from .stochastic_depth import StochasticDepth, stochastic_depth

__all__ = ["stochastic_depth", "StochasticDepth", "FrozenBatchNorm2d", "Conv2dNormActivation",
           "Conv3dNormActivation", "SqueezeExcitation", "MLP", "Permute"]
