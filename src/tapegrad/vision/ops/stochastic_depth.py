"""Stochastic depth (Huang et al. 2016): in training, a residual branch's output is dropped,
for the whole batch or row by row, with probability ``p``, and kept ones are scaled by
``1 / (1 - p)`` so that the expected output is unchanged."""

from ... import empty, nn
from ..._tensor import Tensor


def stochastic_depth(input: Tensor, p: float, mode: str, training: bool = True) -> Tensor:
    """Zero ``input`` (``mode="batch"``) or each of its rows (``mode="row"``) with probability
    ``p``, scaling the rest by ``1 / (1 - p)``; the identity outside training or for ``p=0``."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"drop probability has to be between 0 and 1, but got {p}")
    if mode not in ["batch", "row"]:
        raise ValueError(f"mode has to be either 'batch' or 'row', but got {mode}")
    if not training or p == 0.0:
        return input
    survival_rate = 1.0 - p
    if mode == "row":
        size = [input.shape[0]] + [1] * (input.ndim - 1)
    else:
        size = [1] * input.ndim
    # one Bernoulli draw per row (or one in all), from the default generator
    noise = empty(size, dtype=input.dtype, device=input.device).bernoulli_(survival_rate)
    if survival_rate > 0.0:
        noise.div_(survival_rate)
    return input * noise


class StochasticDepth(nn.Module):
    """``stochastic_depth`` as a layer: drops with probability ``p`` in training only."""

    def __init__(self, p: float, mode: str) -> None:
        super().__init__()
        self.p = p
        self.mode = mode

    def forward(self, input: Tensor) -> Tensor:
        return stochastic_depth(input, self.p, self.mode, self.training)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(p={self.p}, mode={self.mode})"
