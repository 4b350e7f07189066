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

from typing import Any

import numpy as np

from .._tensor import Tensor
from . import _docs
from . import _single_tensor as st
from . import optimizer as base

__all__ = ["NAdam"]


class NAdam(st.SingleTensorOptimizer):
    __doc__ = _docs.optimizer_doc(
        "NAdam: Nesterov-accelerated Adam.",
        [_docs.learning_rate("2e-3"),
         "betas: coefficients of the running averages (default (0.9, 0.999)).",
         _docs.eps_denominator("1e-8"),
         _docs.L2_OR_DECOUPLED,
         "momentum_decay: the momentum decay psi (default 4e-3).",
         "decoupled_weight_decay: AdamW-style weight decay (NAdamW) (default False).",
         _docs.SINGLE_TENSOR_FLAGS],
        "NAdam([w], lr=0.1)", "[ 0.8944, -1.8944]")

    _capturable_holders = "params, mu_products and state_steps"
    _extra_flags = ("decoupled_weight_decay",)
    _number_state = ("step", "mu_product")

    def __init__(self, params: Any, lr: float | Tensor = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        base._check_adam_arguments(lr, eps, betas, weight_decay)
        base._check_non_negative(momentum_decay=momentum_decay)
        super().__init__(params, base._defaults(
            locals(), "lr betas eps weight_decay momentum_decay decoupled_weight_decay maximize "
                      "foreach capturable differentiable"))

    def _options(self, group: dict) -> tuple:
        """What ``_update`` reads after ``p, state, step``."""
        beta1, beta2 = group["betas"]
        return (base._to_scalar(group["lr"]), beta1, beta2, group["eps"], group["weight_decay"],
                group["momentum_decay"], group["decoupled_weight_decay"], group["maximize"])

    def _update(self, p: Tensor, state: dict, step: float, lr: float, beta1: float,
                beta2: float, eps: float, weight_decay: float, momentum_decay: float,
                decoupled: bool, maximize: bool) -> None:
        """torch's single-tensor update on the arrays (module docstring)."""
        param = base._real(p._data)
        bias_correction2 = 1 - beta2**step
        g = st.gradient_for_step(p, maximize, lr, weight_decay, decoupled)
        mu, mu_next = _momentum_coefficients(step, beta1, momentum_decay)
        mp_t = state["mu_product"]
        mp = mp_t._data
        np.multiply(mp, mp.dtype.type(mu), out=mp)  # a 0-d tensor times a number
        base._bump(mp_t)
        mu_product = float(mp)

        exp_avg, exp_avg_sq = st.update_moments_(state, g, beta1, beta2)
        denom = base.round_as(
            np.divide(base._w(exp_avg_sq), base._opmath(param).type(bias_correction2)), param)
        denom = base.add_scalar(base.sqrt_(denom, param), eps, param)
        mu_product_next = mu_product * mu_next
        base.addcdiv_(param, g, denom, -lr * (1.0 - mu) / (1.0 - mu_product))
        base.addcdiv_(param, exp_avg, denom, (-lr * mu_next) / (1.0 - mu_product_next))
        base._bump(p, 2)

    def _differentiable_update(self, param: Tensor, state: dict, step: float, lr: float,
                               beta1: float, beta2: float, eps: float, weight_decay: float,
                               momentum_decay: float, decoupled: bool, maximize: bool) -> None:
        """The same update in tapegrad ops, recorded by autograd (``differentiable=True``): as
        in torch, the two step sizes are 0-d tensors computed from ``mu_product`` and scale the
        gradient and the momentum before the two ``addcdiv``s."""
        bias_correction2 = 1 - beta2**step
        grad = st.gradient_for_differentiable_step(param, maximize, lr, weight_decay, decoupled)
        mu, mu_next = _momentum_coefficients(step, beta1, momentum_decay)
        mu_product, exp_avg = state["mu_product"], state["exp_avg"]
        mu_product.mul_(mu)
        st.update_moments_differentiable_(state, grad, beta1, beta2)
        denom = state["exp_avg_sq"].div(bias_correction2).sqrt().add(eps)
        mu_product_next = mu_product * mu_next
        grad = grad * (-lr * (1.0 - mu) / (1.0 - mu_product))
        exp_avg = exp_avg * (-lr * mu_next / (1.0 - mu_product_next))
        param.copy_(param.addcdiv(grad, denom))
        param.copy_(param.addcdiv(exp_avg, denom))

    def _new_state(self, p: Tensor, group: dict) -> dict:
        """A parameter's first state: the step count, the product of the momentum coefficients
        (a 0-d tensor of the step's dtype) and Adam's two moments."""
        return {"step": base._step_tensor(False), "mu_product": base._scalar_tensor(1.0),
                "exp_avg": base._zeros_like(p), "exp_avg_sq": base._zeros_like(p)}


def _momentum_coefficients(step: float, beta1: float, momentum_decay: float) -> tuple:
    """``mu_t`` and ``mu_next``, the momentum coefficients at ``step`` and at ``step + 1``."""
    mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
    mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
    return mu, mu_next
