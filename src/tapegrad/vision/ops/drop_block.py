"""DropBlock (Ghiasi et al. 2018): dropout for convolutional features that drops contiguous
``block_size`` squares (cubes in 3-D) instead of single activations, rescaling the rest so that
the mean is kept. Block centres are drawn with probability ``gamma``, chosen so that about a
fraction ``p`` of the activations is dropped."""

from ... import empty, nn
from ..._tensor import Tensor
from ...nn import functional as F


def _drop_block(input: Tensor, p: float, block_size: int, inplace: bool, eps: float,
                training: bool, dims: int) -> Tensor:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"drop probability has to be between 0 and 1, but got {p}.")
    if input.ndim != dims + 2:
        raise ValueError(f"input should be {dims + 2} dimensional. Got {input.ndim} dimensions.")
    if not training or p == 0.0:
        return input
    sizes = input.size()[2:]
    block_size = min(block_size, *sizes)
    if block_size % 2 == 0:
        raise ValueError(f"block size should be odd. Got {block_size} which is even.")
    # gamma = p * volume / (block_size^dims * number of valid block centres)
    numerator = p
    centres = 1
    for s in sizes:
        numerator = numerator * s  # (p * H) * W, in this order
        centres *= s - block_size + 1
    gamma = numerator / ((block_size ** dims) * centres)
    noise = empty((*input.size()[:2], *(s - block_size + 1 for s in sizes)), dtype=input.dtype,
                  device=input.device)
    noise.bernoulli_(gamma)
    # each drawn centre grows into a block: pad, then a max filter of the block's size
    noise = F.pad(noise, [block_size // 2] * (2 * dims), value=0)
    pool = F.max_pool2d if dims == 2 else F.max_pool3d
    noise = pool(noise, stride=(1,) * dims, kernel_size=(block_size,) * dims,
                 padding=block_size // 2)
    noise = 1 - noise
    normalize_scale = noise.numel() / (eps + noise.sum())
    if inplace:
        input.mul_(noise).mul_(normalize_scale)
    else:
        input = input * noise * normalize_scale
    return input


def drop_block2d(input: Tensor, p: float, block_size: int, inplace: bool = False,
                 eps: float = 1e-06, training: bool = True) -> Tensor:
    """DropBlock on (N, C, H, W): drop ``block_size`` x ``block_size`` squares (odd, at most the
    image's size) so that about a fraction ``p`` of the activations is zeroed; in training."""
    return _drop_block(input, p, block_size, inplace, eps, training, 2)


def drop_block3d(input: Tensor, p: float, block_size: int, inplace: bool = False,
                 eps: float = 1e-06, training: bool = True) -> Tensor:
    """DropBlock on (N, C, D, H, W), dropping cubes."""
    return _drop_block(input, p, block_size, inplace, eps, training, 3)


class DropBlock2d(nn.Module):
    """``drop_block2d`` as a layer (active in training only)."""

    def __init__(self, p: float, block_size: int, inplace: bool = False,
                 eps: float = 1e-06) -> None:
        super().__init__()
        self.p = p
        self.block_size = block_size
        self.inplace = inplace
        self.eps = eps

    def forward(self, input: Tensor) -> Tensor:
        return drop_block2d(input, self.p, self.block_size, self.inplace, self.eps,
                            self.training)

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__}(p={self.p}, block_size={self.block_size}, "
                f"inplace={self.inplace})")


class DropBlock3d(DropBlock2d):
    """``drop_block3d`` as a layer."""

    def __init__(self, p: float, block_size: int, inplace: bool = False,
                 eps: float = 1e-06) -> None:
        super().__init__(p, block_size, inplace, eps)

    def forward(self, input: Tensor) -> Tensor:
        return drop_block3d(input, self.p, self.block_size, self.inplace, self.eps,
                            self.training)
