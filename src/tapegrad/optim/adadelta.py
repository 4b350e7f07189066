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

from typing import Any

import numpy as np

from .._tensor import Tensor
from . import _docs
from . import _single_tensor as st
from . import optimizer as base

__all__ = ["Adadelta"]


class Adadelta(st.SingleTensorOptimizer):
    __doc__ = _docs.optimizer_doc(
        "Adadelta (Zeiler, 2012).",
        ["lr: coefficient that scales delta before it is applied (default 1.0).",
         "rho: coefficient of the running averages (default 0.9).",
         "eps: term added inside the square roots (default 1e-6).",
         _docs.L2_PENALTY,
         _docs.SINGLE_TENSOR_FLAGS],
        "Adadelta([w], lr=1.0)", "[ 0.9968, -1.9968]")

    _capturable_on_xla = False
    _state_buffers = ("square_avg", "acc_delta")

    def __init__(self, params: Any, lr: float | Tensor = 1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0, foreach: bool | None = None, *, capturable: bool = False,
                 maximize: bool = False, differentiable: bool = False) -> None:
        base._check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        base._check_non_negative(epsilon=eps, weight_decay=weight_decay)
        super().__init__(params, base._defaults(
            locals(), "lr rho eps weight_decay maximize capturable foreach differentiable"))

    def _options(self, group: dict) -> tuple:
        """What ``_update`` reads after ``p, state, step``."""
        return (base._to_scalar(group["lr"]), group["rho"], group["eps"], group["weight_decay"],
                group["maximize"])

    def _update(self, p: Tensor, state: dict, step: float, lr: float, rho: float, eps: float,
                weight_decay: float, maximize: bool) -> None:
        """torch's single-tensor update on the arrays (module docstring)."""
        param = base._real(p._data)
        g = st.gradient_for_step(p, maximize, weight_decay=weight_decay)
        sq_t, acc_t = state["square_avg"], state["acc_delta"]
        square_avg, acc_delta = base._real(sq_t._data), base._real(acc_t._data)

        st.square_average_(sq_t, g, rho)
        std = base.sqrt_(base.add_scalar(base._w(square_avg), eps, param), param)
        delta = base.sqrt_(base.add_scalar(base._w(acc_delta), eps, param), param)
        delta = base.round_as(np.divide(delta, std, out=delta), param)
        delta = base.round_as(np.multiply(delta, base._w(g), out=delta), param)
        st.square_average_(acc_t, delta, rho)
        base.add_scaled_exact_(param, delta, -lr)
        base._bump(p)

    def _differentiable_update(self, param: Tensor, state: dict, step: float, lr: float,
                               rho: float, eps: float, weight_decay: float,
                               maximize: bool) -> None:
        """The same update in tapegrad ops, recorded by autograd (``differentiable=True``)."""
        grad = st.gradient_for_differentiable_step(param, maximize, weight_decay=weight_decay)
        square_avg, acc_delta = state["square_avg"], state["acc_delta"]
        st.square_average_differentiable_(square_avg, grad, rho)
        std = square_avg.add(eps).sqrt_()
        delta = acc_delta.add(eps).sqrt_().clone()
        delta.div_(std).mul_(grad)
        st.square_average_differentiable_(acc_delta, delta, rho)
        param.add_(delta, alpha=-lr)
