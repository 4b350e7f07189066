"""``Adamax``: Adam with the infinity norm in place of the second moment (Kingma & Ba, 2014, §7).

For each parameter with a gradient (torch's single-tensor algorithm, in place on the arrays)::

    g = -grad if maximize else grad;  step += 1;  g = g + wd*p   (weight_decay != 0)
    m = lerp(m, g, 1-beta1)
    u = max(u*beta2, |g| + eps)
    p = p + (-lr / (1 - beta1**step)) * m / u

``state``: ``step`` (0-d, float32 or the float64 default dtype), ``exp_avg``, ``exp_inf``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._tensor import Tensor
from ._single_tensor import gradient_for_differentiable_step, gradient_for_step, parameter_steps
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
    addcdiv_,
    lerp_,
    mul_,
)

__all__ = ["Adamax"]


def _check_betas(betas: Any) -> None:
    for i in (0, 1):
        if not 0.0 <= betas[i] < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {betas[i]}")


class Adamax(Optimizer):
    """Adamax: Adam based on the infinity norm.

    Args:
        params: tensors or parameter groups to optimize.
        lr: learning rate (default 2e-3).
        betas: coefficients of the running average and of the decaying maximum
            (default (0.9, 0.999)).
        eps: term added to ``|g|`` (default 1e-8).
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
        >>> opt = torch.optim.Adamax([w], lr=0.1)
        >>> (w ** 2).sum().backward()
        >>> opt.step()
        >>> w
        tensor([ 0.9000, -1.9000], requires_grad=True)
    """

    def __init__(
        self,
        params: Any,
        lr: float | Tensor = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        _check_lr(lr)
        _check_non_negative(epsilon=eps)
        _check_betas(betas)
        _check_non_negative(weight_decay=weight_decay)
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
            "capturable": capturable,
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
            beta1, beta2 = group["betas"]
            eps = group["eps"]
            weight_decay = group["weight_decay"]
            maximize = group["maximize"]
            for p, state, step in parameter_steps(self, group, _new_state, _capturable_error()):
                if group["differentiable"]:
                    _differentiable_update(
                        p, state, step, lr, beta1, beta2, eps, weight_decay, maximize
                    )
                    continue
                param = _real(p._data)
                g = gradient_for_step(p, maximize, weight_decay=weight_decay)
                avg_t, inf_t = state["exp_avg"], state["exp_inf"]
                exp_avg, exp_inf = _real(avg_t._data), _real(inf_t._data)

                lerp_(exp_avg, g, 1 - beta1)
                _bump(avg_t)
                mul_(exp_inf, beta2)
                norm = add_scalar(np.abs(_w(g)), eps, param)
                if exp_inf.dtype == norm.dtype:
                    np.maximum(exp_inf, norm, out=exp_inf)
                else:
                    np.copyto(exp_inf, np.maximum(_w(exp_inf), norm), casting="unsafe")
                _bump(inf_t, 2)
                clr = lr / (1 - beta1**step)
                addcdiv_(param, exp_avg, exp_inf, -clr)
                _bump(p)
        return loss


def _new_state(p: Tensor, group: dict) -> dict:
    """A parameter's first state: the step count and the two running buffers."""
    return {"step": _step_tensor(False), "exp_avg": _zeros_like(p), "exp_inf": _zeros_like(p)}


def _differentiable_update(
    param: Tensor,
    state: dict,
    step: float,
    lr: float,
    beta1: float,
    beta2: float,
    eps: float,
    weight_decay: float,
    maximize: bool,
) -> None:
    """The same update in tapegrad ops, recorded by autograd (``differentiable=True``); the
    running maximum is an ``amax`` over the two candidates, as in torch."""
    grad = gradient_for_differentiable_step(param, maximize, weight_decay=weight_decay)
    from .. import amax, cat

    exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
    exp_avg.copy_(exp_avg.lerp(grad, 1 - beta1))
    norm_buf = cat([exp_inf.mul_(beta2).unsqueeze(0), grad.abs().add(eps).unsqueeze(0)], 0)
    exp_inf.copy_(amax(norm_buf, 0, keepdim=False))
    clr = lr / (1 - beta1**step)
    param.copy_(param.addcdiv(exp_avg, exp_inf, value=-clr))
