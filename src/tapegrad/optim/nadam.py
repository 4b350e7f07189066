"""``NAdam``: Adam with Nesterov momentum (Dozat, 2016), with momentum decay.

For each parameter with a gradient (torch's single-tensor algorithm, in place on the arrays)::

    g = -grad if maximize else grad;  step += 1
    p = p * (1 - lr*wd)  (decoupled)  |  g = g + wd*p  (L2)          (weight_decay != 0)
    mu_t = beta1 * (1 - 0.5 * 0.96**(step * momentum_decay))        (mu_next: step + 1)
    mu_product = mu_product * mu_t                                  (a 0-d tensor)
    m = lerp(m, g, 1-beta1);  v = v*beta2 + (1-beta2)*g*g
    denom = sqrt(v / (1 - beta2**step)) + eps
    p = p + (-lr*(1-mu_t)/(1-mu_product)) * g / denom
    p = p + (-lr*mu_next/(1-mu_product*mu_next)) * m / denom

``state``: ``step`` and ``mu_product`` (0-d, float32 or the float64 default dtype: the product
is rounded to it every step, as in torch), ``exp_avg``, ``exp_avg_sq``.
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
    update_moments_,
    update_moments_differentiable_,
)
from .adamax import _check_betas
from .optimizer import (
    Optimizer,
    _bump,
    _capturable_error,
    _check_lr,
    _check_non_negative,
    _opmath,
    _real,
    _restore_group_flags,
    _run_closure,
    _scalar_dtype,
    _step_tensor,
    _to_scalar,
    _use_grad_for_differentiable,
    _w,
    _zeros_like,
    add_scalar,
    addcdiv_,
    round_as,
    sqrt_,
)

__all__ = ["NAdam"]


class NAdam(Optimizer):
    """NAdam: Nesterov-accelerated Adam.

    Args:
        params: tensors or parameter groups to optimize.
        lr: learning rate (default 2e-3).
        betas: coefficients of the running averages (default (0.9, 0.999)).
        eps: term added to the denominator (default 1e-8).
        weight_decay: L2 penalty, or decoupled decay when ``decoupled_weight_decay``
            (default 0).
        momentum_decay: the momentum decay psi (default 4e-3).
        decoupled_weight_decay: AdamW-style weight decay (NAdamW) (default False).
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
        >>> opt = torch.optim.NAdam([w], lr=0.1)
        >>> (w ** 2).sum().backward()
        >>> opt.step()
        >>> w
        tensor([ 0.8944, -1.8944], requires_grad=True)
    """

    def __init__(
        self,
        params: Any,
        lr: float | Tensor = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum_decay: float = 4e-3,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        _check_lr(lr)
        _check_non_negative(epsilon=eps)
        _check_betas(betas)
        _check_non_negative(weight_decay=weight_decay, momentum_decay=momentum_decay)
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "momentum_decay": momentum_decay,
            "decoupled_weight_decay": decoupled_weight_decay,
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        _restore_group_flags(self, "decoupled_weight_decay", steps=False)
        for group in self.param_groups:  # old state: step and mu_product as numbers
            for p in group["params"]:
                p_state = self.state.get(p, [])
                if len(p_state) != 0:
                    for key in ("step", "mu_product"):
                        if not isinstance(p_state[key], Tensor):
                            value = np.array(float(p_state[key]), dtype=_scalar_dtype().np)
                            p_state[key] = Tensor._make(value)

    @_use_grad_for_differentiable
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform a single optimization step; ``closure`` re-evaluates the loss."""
        loss = _run_closure(closure)
        for group in self.param_groups:
            lr = _to_scalar(group["lr"])
            beta1, beta2 = group["betas"]
            eps = group["eps"]
            weight_decay = group["weight_decay"]
            momentum_decay = group["momentum_decay"]
            decoupled = group["decoupled_weight_decay"]
            maximize = group["maximize"]
            holders = "params, mu_products and state_steps"
            for p, state, step in parameter_steps(self, group, _new_state,
                                                  _capturable_error(holders)):
                if group["differentiable"]:
                    _differentiable_update(
                        p,
                        state,
                        step,
                        lr,
                        beta1,
                        beta2,
                        eps,
                        weight_decay,
                        momentum_decay,
                        decoupled,
                        maximize,
                    )
                    continue
                param = _real(p._data)
                bias_correction2 = 1 - beta2**step
                g = gradient_for_step(p, maximize, lr, weight_decay, decoupled)
                mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
                mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
                mp_t = state["mu_product"]
                mp = mp_t._data
                np.multiply(mp, mp.dtype.type(mu), out=mp)  # a 0-d tensor times a number
                _bump(mp_t)
                mu_product = float(mp)

                exp_avg, exp_avg_sq = update_moments_(state, g, beta1, beta2)
                denom = round_as(
                    np.divide(_w(exp_avg_sq), _opmath(param).type(bias_correction2)), param
                )
                denom = add_scalar(sqrt_(denom, param), eps, param)
                mu_product_next = mu_product * mu_next
                addcdiv_(param, g, denom, -lr * (1.0 - mu) / (1.0 - mu_product))
                addcdiv_(param, exp_avg, denom, (-lr * mu_next) / (1.0 - mu_product_next))
                _bump(p, 2)
        return loss


def _new_state(p: Tensor, group: dict) -> dict:
    """A parameter's first state: the step count, the product of the momentum coefficients
    (a 0-d tensor of the step's dtype) and Adam's two moments."""
    return {"step": _step_tensor(False),
            "mu_product": Tensor._make(np.ones((), dtype=_scalar_dtype().np)),
            "exp_avg": _zeros_like(p), "exp_avg_sq": _zeros_like(p)}


def _differentiable_update(
    param: Tensor,
    state: dict,
    step: float,
    lr: float,
    beta1: float,
    beta2: float,
    eps: float,
    weight_decay: float,
    momentum_decay: float,
    decoupled: bool,
    maximize: bool,
) -> None:
    """The same update in tapegrad ops, recorded by autograd (``differentiable=True``): as in
    torch, the two step sizes are 0-d tensors computed from ``mu_product`` and scale the
    gradient and the momentum before the two ``addcdiv``s."""
    bias_correction2 = 1 - beta2**step
    grad = gradient_for_differentiable_step(param, maximize, lr, weight_decay, decoupled)
    mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
    mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
    mu_product, exp_avg, exp_avg_sq = state["mu_product"], state["exp_avg"], state["exp_avg_sq"]
    mu_product.mul_(mu)
    update_moments_differentiable_(state, grad, beta1, beta2)
    denom = exp_avg_sq.div(bias_correction2).sqrt().add(eps)
    mu_product_next = mu_product * mu_next
    grad = grad * (-lr * (1.0 - mu) / (1.0 - mu_product))
    exp_avg = exp_avg * (-lr * mu_next / (1.0 - mu_product_next))
    param.copy_(param.addcdiv(grad, denom))
    param.copy_(param.addcdiv(exp_avg, denom))
