"""``SGD``: stochastic gradient descent with momentum, dampening, Nesterov and weight decay.

For each parameter with a gradient (torch's single-tensor algorithm, in place on the arrays)::

    g = -grad if maximize else grad
    g = g + weight_decay * p                        (weight_decay != 0)
    buf = g (first step) | buf*momentum + (1-dampening)*g
    g = g + momentum*buf (nesterov) | buf           (momentum != 0)
    p = p - lr * g
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._tensor import Tensor
from ._single_tensor import sgd_direction, sgd_momentum_array_
from .optimizer import (
    Optimizer,
    _bump,
    _defaults,
    _real,
    _restore_group_options,
    _run_closure,
    _to_scalar,
    _update_grad,
    _use_grad_for_differentiable,
    add_scaled,
    add_scaled_,
)

__all__ = ["SGD"]


class SGD(Optimizer):
    """Stochastic gradient descent (optionally with momentum).

    Args:
        params: tensors or parameter groups to optimize.
        lr: learning rate (default 1e-3).
        momentum: momentum factor (default 0).
        dampening: dampening for momentum (default 0).
        weight_decay: L2 penalty (default 0).
        nesterov: use Nesterov momentum (default False).
        maximize: maximize the objective instead of minimizing (default False).

    Example:
        >>> import tapegrad as torch
        >>> w = torch.tensor([1.0, -1.0], requires_grad=True)
        >>> opt = torch.optim.SGD([w], lr=0.1, momentum=0.9)
        >>> (w ** 2).sum().backward()
        >>> opt.step()
        >>> w
        tensor([ 0.8000, -0.8000], requires_grad=True)
    """

    def __init__(self, params: Any, lr: float | Tensor = 1e-3, momentum: float = 0,
                 dampening: float = 0, weight_decay: float | Tensor = 0, nesterov: bool = False, *,
                 maximize: bool = False, foreach: bool | None = None, differentiable: bool = False,
                 fused: bool | None = None) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        # torch's SGD tests ``< 0`` (a NaN passes), where the others use ``not 0 <= x``
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = _defaults(locals(), "lr momentum dampening weight_decay nesterov maximize "
                             "foreach differentiable fused")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        if differentiable:
            raise NotImplementedError("tapegrad optimizers do not support differentiable=True")
        super().__init__(params, defaults)
        if fused and foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        _restore_group_options(self, nesterov=False, maximize=False, foreach=None,
                               differentiable=False, fused=False)

    @_use_grad_for_differentiable
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform a single optimization step; ``closure`` re-evaluates the loss."""
        loss = _run_closure(closure)
        for group in self.param_groups:
            lr = _to_scalar(group["lr"])
            weight_decay = _to_scalar(group["weight_decay"])
            momentum = group["momentum"]
            dampening = group["dampening"]
            nesterov = group["nesterov"]
            maximize = group["maximize"]
            for p in group["params"]:
                grad_t = p._grad
                if grad_t is None:
                    continue
                param = _real(p._data)
                g = _update_grad(grad_t, maximize)
                if weight_decay != 0:
                    g = add_scaled(g, param, weight_decay)
                if momentum != 0:
                    state = self.state[p]
                    buf_t = state.get("momentum_buffer")
                    if buf_t is None:
                        first = np.array(g, copy=True)  # torch: grad.detach().clone()
                        if grad_t._data.dtype.kind == "c":
                            first = first.view(grad_t._data.dtype)
                        buf_t = Tensor._make(first)
                    else:
                        sgd_momentum_array_(_real(buf_t._data), g, momentum, dampening)
                        _bump(buf_t, 2)
                    state["momentum_buffer"] = buf_t
                    g = sgd_direction(g, _real(buf_t._data), momentum, nesterov)
                add_scaled_(param, g, -lr)
                _bump(p)
        return loss
