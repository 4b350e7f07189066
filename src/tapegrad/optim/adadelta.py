"""``Adadelta``: a per-coordinate step size from running averages of squared gradients and of
squared updates, so the update has the parameter's units (Zeiler, 2012).

For each parameter with a gradient (torch's single-tensor algorithm, in place on the arrays)::

    step += 1;  g = -grad if maximize else grad;  g = g + wd*p   (weight_decay != 0)
    sq = sq*rho + (1-rho)*g*g
    delta = sqrt(acc + eps) / sqrt(sq + eps) * g
    acc = acc*rho + (1-rho)*delta*delta
    p = p - lr*delta

``state``: ``step`` (0-d, float32 or the float64 default dtype), ``square_avg``, ``acc_delta``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._tensor import Tensor
from ._single_tensor import (
    gradient_for_differentiable_step,
    gradient_for_step,
    parameter_steps,
    square_average_,
    square_average_differentiable_,
)
from .optimizer import (
    Optimizer,
    _bump,
    _capturable_error,
    _check_lr,
    _check_non_negative,
    _real,
    _restore_group_flags,
    _run_closure,
    _step_tensor,
    _to_scalar,
    _use_grad_for_differentiable,
    _w,
    _zeros_like,
    add_scalar,
    add_scaled_exact_,
    round_as,
    sqrt_,
)

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """Adadelta (Zeiler, 2012).

    Args:
        params: tensors or parameter groups to optimize.
        lr: coefficient that scales delta before it is applied (default 1.0).
        rho: coefficient of the running averages (default 0.9).
        eps: term added inside the square roots (default 1e-6).
        weight_decay: L2 penalty (default 0).
        foreach: accepted; the single-tensor update runs either way (torch's multi-tensor
            kernels give the same numbers up to rounding).
        capturable: accepted; True makes ``step`` raise torch's CPU error (capturing needs an
            accelerator).
        differentiable: record the update with autograd, so that a loss computed from the
            updated (non-leaf) parameters differentiates through the step (real parameters).
        maximize: maximize the objective (default False).

    Example:
        >>> import tapegrad as torch
        >>> w = torch.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = torch.optim.Adadelta([w], lr=1.0)
        >>> (w ** 2).sum().backward()
        >>> opt.step()
        >>> w
        tensor([ 0.9968, -1.9968], requires_grad=True)
    """

    def __init__(
        self,
        params: Any,
        lr: float | Tensor = 1.0,
        rho: float = 0.9,
        eps: float = 1e-6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        capturable: bool = False,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        _check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        _check_non_negative(epsilon=eps, weight_decay=weight_decay)
        defaults = {
            "lr": lr,
            "rho": rho,
            "eps": eps,
            "weight_decay": weight_decay,
            "maximize": maximize,
            "capturable": capturable,
            "foreach": foreach,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        _restore_group_flags(self)

    @_use_grad_for_differentiable
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform a single optimization step; ``closure`` re-evaluates the loss."""
        loss = _run_closure(closure)
        for group in self.param_groups:
            lr = _to_scalar(group["lr"])
            rho = group["rho"]
            eps = group["eps"]
            weight_decay = group["weight_decay"]
            maximize = group["maximize"]
            for p, state, _ in parameter_steps(self, group, _new_state,
                                               _capturable_error(xla=False)):
                if group["differentiable"]:
                    _differentiable_update(p, state, lr, rho, eps, weight_decay, maximize)
                    continue
                param = _real(p._data)
                g = gradient_for_step(p, maximize, weight_decay=weight_decay)
                sq_t, acc_t = state["square_avg"], state["acc_delta"]
                square_avg, acc_delta = _real(sq_t._data), _real(acc_t._data)

                square_average_(sq_t, g, rho)
                std = sqrt_(add_scalar(_w(square_avg), eps, param), param)
                delta = sqrt_(add_scalar(_w(acc_delta), eps, param), param)
                delta = round_as(np.divide(delta, std, out=delta), param)
                delta = round_as(np.multiply(delta, _w(g), out=delta), param)
                square_average_(acc_t, delta, rho)
                add_scaled_exact_(param, delta, -lr)
                _bump(p)
        return loss


def _new_state(p: Tensor, group: dict) -> dict:
    """A parameter's first state: the step count and the two running averages."""
    return {"step": _step_tensor(False), "square_avg": _zeros_like(p),
            "acc_delta": _zeros_like(p)}


def _differentiable_update(
    param: Tensor,
    state: dict,
    lr: float,
    rho: float,
    eps: float,
    weight_decay: float,
    maximize: bool,
) -> None:
    """The same update in tapegrad ops, recorded by autograd (``differentiable=True``)."""
    grad = gradient_for_differentiable_step(param, maximize, weight_decay=weight_decay)
    square_avg, acc_delta = state["square_avg"], state["acc_delta"]
    square_average_differentiable_(square_avg, grad, rho)
    std = square_avg.add(eps).sqrt_()
    delta = acc_delta.add(eps).sqrt_().clone()
    delta.div_(std).mul_(grad)
    square_average_differentiable_(acc_delta, delta, rho)
    param.add_(delta, alpha=-lr)
