"""The focal loss (Lin et al. 2017, RetinaNet): binary cross-entropy scaled down for
well-classified examples, ``FL = alpha_t * (1 - p_t) ** gamma * CE``."""

from ... import sigmoid
from ..._tensor import Tensor
from ...nn import functional as F


def sigmoid_focal_loss(inputs: Tensor, targets: Tensor, alpha: float = 0.25, gamma: float = 2,
                       reduction: str = "none") -> Tensor:
    """The focal loss of logits ``inputs`` against binary ``targets`` (same shape): ``alpha``
    weighs the positives (``1 - alpha`` the negatives; -1 for no weighting), ``gamma`` the
    focusing; ``reduction`` 'none', 'mean' or 'sum'."""
    if not (0 <= alpha <= 1) and alpha != -1:
        raise ValueError(f"Invalid alpha value: {alpha}. alpha must be in the range [0,1] or -1 "
                         "for ignore.")
    p = sigmoid(inputs)
    ce_loss = F.binary_cross_entropy_with_logits(inputs, targets, reduction="none")
    p_t = p * targets + (1 - p) * (1 - targets)
    loss = ce_loss * ((1 - p_t) ** gamma)
    if alpha >= 0:
        alpha_t = alpha * targets + (1 - alpha) * (1 - targets)
        loss = alpha_t * loss
    return _reduce(loss, reduction, empty_mean=False)


def _reduce(loss: Tensor, reduction: str, empty_mean: bool) -> Tensor:
    """The reduction of the box and focal losses (``empty_mean``: the mean of no boxes is 0)."""
    if reduction == "none":
        return loss
    if reduction == "mean":
        if empty_mean and loss.numel() == 0:
            return 0.0 * loss.sum()
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(f"Invalid Value for arg 'reduction': '{reduction} \n Supported reduction "
                     "modes: 'none', 'mean', 'sum'")
