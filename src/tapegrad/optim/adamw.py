"""``AdamW``: Adam with decoupled weight decay (Loshchilov & Hutter), ``p *= 1 - lr*wd`` before
the Adam update instead of adding ``wd*p`` to the gradient. The arithmetic lives in adam.py."""

from __future__ import annotations

from typing import Any

from .._tensor import Tensor
from .adam import Adam

__all__ = ["AdamW"]


class AdamW(Adam):
    """AdamW: Adam whose weight decay does not pass through the moment estimates.

    Args:
        params: tensors or parameter groups to optimize.
        lr: learning rate (default 1e-3).
        betas: running-average coefficients (default (0.9, 0.999)).
        eps: term added to the denominator (default 1e-8).
        weight_decay: decoupled weight decay coefficient (default 1e-2).
        amsgrad: use the AMSGrad variant (default False).
        maximize: maximize the objective (default False).

    Example:
        >>> import tapegrad as torch
        >>> w = torch.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = torch.optim.AdamW([w], lr=0.1)
        >>> (w ** 2).sum().backward()
        >>> opt.step()
        >>> w
        tensor([ 0.8990, -1.8980], requires_grad=True)
    """

    def __init__(self, params: Any, lr: float | Tensor = 1e-3,
                 betas: tuple[Any, Any] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        super().__init__(
            params,
            lr,
            betas,
            eps,
            weight_decay,
            amsgrad,
            foreach=foreach,
            maximize=maximize,
            capturable=capturable,
            differentiable=differentiable,
            fused=fused,
            decoupled_weight_decay=True,
        )

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True
