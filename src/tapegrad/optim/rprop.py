"""``Rprop``: resilient backpropagation, a per-coordinate step size driven by gradient signs
(Riedmiller & Braun, 1993).

For each parameter with a gradient (torch's single-tensor algorithm, in place on the arrays)::

    step += 1;  g = -grad if maximize else grad
    s = sign(g * prev) mapped  +1 -> etaplus,  -1 -> etaminus,  0 -> 1
    step_size = clamp(step_size * s, step_size_min, step_size_max)
    g = 0 where s == etaminus (the sign flipped: skip this coordinate once)
    p = p - sign(g) * step_size;  prev = g

``state``: ``step`` (0-d), ``prev``, ``step_size`` (starts filled with ``lr``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._tensor import Tensor
from . import _docs
from . import _single_tensor as st
from .optimizer import (
    _bump,
    _check_lr,
    _defaults,
    _real,
    _step_tensor,
    _to_scalar,
    _w,
    _zeros_like,
    addcmul_,
)

__all__ = ["Rprop"]


class Rprop(st.SingleTensorOptimizer):
    __doc__ = _docs.optimizer_doc(
        "Rprop: the resilient backpropagation algorithm.",
        ["lr: initial step size (default 1e-2).",
         "etas: (etaminus, etaplus), the factors that shrink / grow a step size\n"
         "(default (0.5, 1.2)).",
         "step_sizes: the smallest and largest allowed step sizes (default (1e-6, 50)).",
         _docs.SINGLE_TENSOR_FLAGS],
        "Rprop([w], lr=0.1)", "[ 0.9000, -1.9000]")

    def __init__(self, params: Any, lr: float | Tensor = 1e-2,
                 etas: tuple[float, float] = (0.5, 1.2),
                 step_sizes: tuple[float, float] = (1e-6, 50), *, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        _check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        super().__init__(params, _defaults(
            locals(), "lr etas step_sizes foreach maximize differentiable capturable"))

    def _options(self, group: dict) -> tuple:
        """What ``_update`` reads after ``p, state, step``."""
        etaminus, etaplus = group["etas"]
        step_size_min, step_size_max = group["step_sizes"]
        return etaminus, etaplus, step_size_min, step_size_max, group["maximize"]

    def _update(self, p: Tensor, state: dict, step: float, etaminus: float, etaplus: float,
                step_size_min: float, step_size_max: float, maximize: bool) -> None:
        """torch's single-tensor update on the arrays (module docstring)."""
        g = st.gradient_for_step(p, maximize)
        prev_t, size_t = state["prev"], state["step_size"]
        param, prev, step_size = _real(p._data), _real(prev_t._data), _real(size_t._data)

        # the sign array has the gradient's dtype: the etas are rounded to it
        sign = np.sign(np.multiply(g, prev))
        sign_type = sign.dtype.type
        flipped = sign < 0
        sign[sign > 0] = sign_type(etaplus)
        sign[flipped] = sign_type(etaminus)
        sign[sign == 0] = 1
        ws = _w(step_size)
        np.multiply(ws, _w(sign), out=ws)
        np.clip(ws, ws.dtype.type(step_size_min), ws.dtype.type(step_size_max), out=ws)
        np.copyto(step_size, ws, casting="unsafe")
        _bump(size_t, 2)

        g = np.array(g, copy=True)
        g[sign == sign_type(etaminus)] = 0
        addcmul_(param, np.sign(g), step_size, -1)
        _bump(p)
        np.copyto(prev, g)
        _bump(prev_t)

    def _differentiable_update(self, param: Tensor, state: dict, step: float, etaminus: float,
                               etaplus: float, step_size_min: float, step_size_max: float,
                               maximize: bool) -> None:
        """The same update in tapegrad ops, recorded by autograd (``differentiable=True``)."""
        grad = st.gradient_for_differentiable_step(param, maximize)
        prev, step_size = state["prev"], state["step_size"]
        sign = grad.mul(prev.clone()).sign()
        sign[sign.gt(0)] = etaplus
        sign[sign.lt(0)] = etaminus
        sign[sign.eq(0)] = 1
        step_size.mul_(sign).clamp_(step_size_min, step_size_max)
        grad = grad.clone()
        grad[sign.eq(etaminus)] = 0
        param.copy_(param.addcmul(grad.sign(), step_size, value=-1))
        prev.copy_(grad)

    def _new_state(self, p: Tensor, group: dict) -> dict:
        """A parameter's first state: the step count, the previous gradient, and every
        element's step size starting at lr (lr + lr i for a complex parameter)."""
        lr = _to_scalar(group["lr"])
        if p._data.dtype.kind == "c":
            lr = complex(lr, lr)
        grad = p._grad
        assert grad is not None  # (only parameters with a gradient get a state)
        return {"step": _step_tensor(False), "prev": _zeros_like(p),
                "step_size": Tensor._make(np.full_like(grad._data, lr))}
