"""``Adamax``: Adam with the infinity norm in place of the second moment (Kingma & Ba, 2014, §7).

For each parameter with a gradient (torch's single-tensor algorithm, in place on the arrays)::

    g = -grad if maximize else grad;  step += 1;  g = g + wd*p   (weight_decay != 0)
    m = lerp(m, g, 1-beta1)
    u = max(u*beta2, |g| + eps)
    p = p + (-lr / (1 - beta1**step)) * m / u

``state``: ``step`` (0-d, float32 or the float64 default dtype), ``exp_avg``, ``exp_inf``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._tensor import Tensor
from ..ops.reduction import amax
from ..ops.shape import cat
from . import _docs
from . import _single_tensor as st
from . import optimizer as base

__all__ = ["Adamax"]


class Adamax(st.SingleTensorOptimizer):
    __doc__ = _docs.optimizer_doc(
        "Adamax: Adam based on the infinity norm.",
        [_docs.learning_rate("2e-3"),
         "betas: coefficients of the running average and of the decaying maximum\n"
         "(default (0.9, 0.999)).",
         "eps: term added to ``|g|`` (default 1e-8).",
         _docs.L2_PENALTY,
         _docs.SINGLE_TENSOR_FLAGS],
        "Adamax([w], lr=0.1)", "[ 0.9000, -1.9000]")

    _state_buffers = ("exp_avg", "exp_inf")

    def __init__(self, params: Any, lr: float | Tensor = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, foreach: bool | None = None, *, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:
        base._check_adam_arguments(lr, eps, betas, weight_decay)
        super().__init__(params, base._defaults(
            locals(), "lr betas eps weight_decay foreach maximize differentiable capturable"))

    def _options(self, group: dict) -> tuple:
        """What ``_update`` reads after ``p, state, step``."""
        beta1, beta2 = group["betas"]
        return (base._to_scalar(group["lr"]), beta1, beta2, group["eps"], group["weight_decay"],
                group["maximize"])

    def _update(self, p: Tensor, state: dict, step: float, lr: float, beta1: float,
                beta2: float, eps: float, weight_decay: float, maximize: bool) -> None:
        """torch's single-tensor update on the arrays (module docstring)."""
        param = base._real(p._data)
        g = st.gradient_for_step(p, maximize, weight_decay=weight_decay)
        avg_t, inf_t = state["exp_avg"], state["exp_inf"]
        exp_avg, exp_inf = base._real(avg_t._data), base._real(inf_t._data)

        base.lerp_(exp_avg, g, 1 - beta1)
        base._bump(avg_t)
        base.mul_(exp_inf, beta2)
        norm = base.add_scalar(np.abs(base._w(g)), eps, param)
        if exp_inf.dtype == norm.dtype:
            np.maximum(exp_inf, norm, out=exp_inf)
        else:
            np.copyto(exp_inf, np.maximum(base._w(exp_inf), norm), casting="unsafe")
        base._bump(inf_t, 2)
        clr = lr / (1 - beta1**step)
        base.addcdiv_(param, exp_avg, exp_inf, -clr)
        base._bump(p)

    def _differentiable_update(self, param: Tensor, state: dict, step: float, lr: float,
                               beta1: float, beta2: float, eps: float, weight_decay: float,
                               maximize: bool) -> None:
        """The same update in tapegrad ops, recorded by autograd (``differentiable=True``); the
        running maximum is an ``amax`` over the two candidates, as in torch."""
        grad = st.gradient_for_differentiable_step(param, maximize, weight_decay=weight_decay)
        exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
        exp_avg.copy_(exp_avg.lerp(grad, 1 - beta1))
        norm_buf = cat([exp_inf.mul_(beta2).unsqueeze(0), grad.abs().add(eps).unsqueeze(0)], 0)
        exp_inf.copy_(amax(norm_buf, 0, keepdim=False))
        clr = lr / (1 - beta1**step)
        param.copy_(param.addcdiv(exp_avg, exp_inf, value=-clr))
