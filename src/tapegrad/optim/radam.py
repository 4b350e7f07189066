"""``RAdam``: Adam with a rectified adaptive learning rate (Liu et al., 2019).

For each parameter with a gradient (torch's single-tensor algorithm, in place on the arrays)::

    g = -grad if maximize else grad;  step += 1
    p = p * (1 - lr*wd)  (decoupled)  |  g = g + wd*p  (L2)          (weight_decay != 0)
    m = lerp(m, g, 1-beta1);  v = v*beta2 + (1-beta2)*g*g
    bc1 = 1 - beta1**step;  bc2 = 1 - beta2**step
    rho_inf = 2/(1-beta2) - 1;  rho_t = rho_inf - 2*step*beta2**step/bc2
    rho_t > 5:   p = p - m/bc1 * lr * (sqrt(bc2) * 1/(sqrt(v) + eps)) * rect
                 rect = sqrt((rho_t-4)(rho_t-2)rho_inf / ((rho_inf-4)(rho_inf-2)rho_t))
    otherwise:   p = p - m/bc1 * lr                               (plain momentum SGD)

``state``: ``step`` (0-d, float32 or the float64 default dtype), ``exp_avg``, ``exp_avg_sq``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._tensor import Tensor
from . import _docs
from . import _single_tensor as st
from . import optimizer as base

__all__ = ["RAdam"]


class RAdam(st.SingleTensorOptimizer):
    __doc__ = _docs.optimizer_doc(
        "RAdam: rectified Adam.",
        [_docs.learning_rate("1e-3"),
         "betas: coefficients of the running averages (default (0.9, 0.999)).",
         _docs.eps_denominator("1e-8"),
         _docs.L2_OR_DECOUPLED,
         "decoupled_weight_decay: AdamW-style weight decay (default False).",
         _docs.SINGLE_TENSOR_FLAGS],
        "RAdam([w], lr=0.1)", "[ 0.8000, -1.6000]")

    _extra_flags = ("decoupled_weight_decay",)
    _state_buffers = ("exp_avg", "exp_avg_sq")

    def __init__(self, params: Any, lr: float | Tensor = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, decoupled_weight_decay: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        base._check_adam_arguments(lr, eps, betas, weight_decay)
        super().__init__(params, base._defaults(
            locals(), "lr betas eps weight_decay maximize foreach capturable "
                      "decoupled_weight_decay differentiable"))

    def _options(self, group: dict) -> tuple:
        """What ``_update`` reads after ``p, state, step``."""
        beta1, beta2 = group["betas"]
        return (base._to_scalar(group["lr"]), beta1, beta2, group["eps"], group["weight_decay"],
                group["decoupled_weight_decay"], group["maximize"])

    def _update(self, p: Tensor, state: dict, step: float, lr: float, beta1: float,
                beta2: float, eps: float, weight_decay: float, decoupled: bool,
                maximize: bool) -> None:
        """torch's single-tensor update on the arrays (module docstring)."""
        param = base._real(p._data)
        g = st.gradient_for_step(p, maximize, lr, weight_decay, decoupled)
        exp_avg, exp_avg_sq = st.update_moments_(state, g, beta1, beta2)

        op = base._opmath(param).type
        bias_correction1 = 1 - beta1**step
        bias_correction2 = 1 - beta2**step
        update = base.round_as(np.divide(base._w(exp_avg), op(bias_correction1)), param)
        update = base.round_as(np.multiply(update, op(lr), out=update), param)
        rect = _rectification(step, beta2)
        if rect is not None:
            # (bc2 ** 0.5) / t is torch's t.reciprocal() * bc2 ** 0.5
            adaptive = base.add_scalar(
                base.round_as(np.sqrt(base._w(exp_avg_sq)), param), eps, param)
            adaptive = base.round_as(np.reciprocal(adaptive, out=adaptive), param)
            adaptive = base.round_as(
                np.multiply(adaptive, op(bias_correction2**0.5), out=adaptive), param
            )
            update = base.round_as(np.multiply(update, adaptive, out=update), param)
            update = base.round_as(np.multiply(update, op(rect), out=update), param)
        base.add_scaled_exact_(param, update, -1.0)
        base._bump(p)

    def _differentiable_update(self, param: Tensor, state: dict, step: float, lr: float,
                               beta1: float, beta2: float, eps: float, weight_decay: float,
                               decoupled: bool, maximize: bool) -> None:
        """The same update in tapegrad ops, recorded by autograd (``differentiable=True``)."""
        grad = st.gradient_for_differentiable_step(param, maximize, lr, weight_decay, decoupled)
        st.update_moments_differentiable_(state, grad, beta1, beta2)
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        bias_correction1 = 1 - beta1**step
        bias_correction2 = 1 - beta2**step
        bias_corrected_exp_avg = exp_avg / bias_correction1
        rect = _rectification(step, beta2)
        if rect is not None:
            adaptive_lr = (bias_correction2**0.5) / exp_avg_sq.sqrt().add(eps)
            param.add_(bias_corrected_exp_avg * lr * adaptive_lr * rect, alpha=-1.0)
        else:
            param.add_(bias_corrected_exp_avg * lr, alpha=-1.0)


def _rectification(step: float, beta2: float) -> float | None:
    """The variance rectification term at ``step``, or None while the approximated SMA length
    ``rho_t`` is at most 5 (the variance is not tractable yet: the step is plain momentum)."""
    bias_correction2 = 1 - beta2**step
    rho_inf = 2 / (1 - beta2) - 1
    rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
    if not rho_t > 5.0:  # (a NaN rho_t too)
        return None
    return ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
