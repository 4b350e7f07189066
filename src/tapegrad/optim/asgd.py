"""``ASGD``: averaged stochastic gradient descent (Polyak & Juditsky, 1992).

For each parameter with a gradient (torch's single-tensor algorithm, in place on the arrays)::

    g = -grad if maximize else grad;  step += 1;  g = g + wd*p   (weight_decay != 0)
    p = p * (1 - lambd*eta);  p = p - eta*g
    ax = ax + (p - ax)*mu  (mu != 1)  |  ax = p
    eta = lr / (1 + lambd*lr*step)**alpha;  mu = 1 / max(1, step - t0)

``eta`` and ``mu`` are 0-d tensors of the scalar dtype (float32 unless the default dtype is
float64), so their values pass through that dtype between steps as in torch; ``ax`` is the
running average, which starts once ``step`` exceeds ``t0``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._dtype import get_default_dtype
from .._tensor import Tensor
from . import _docs
from . import _single_tensor as st
from . import optimizer as base

__all__ = ["ASGD"]


class ASGD(st.SingleTensorOptimizer):
    __doc__ = _docs.optimizer_doc(
        "Averaged SGD.",
        [_docs.learning_rate("1e-2"),
         "lambd: decay term (default 1e-4).",
         "alpha: power for the eta update (default 0.75).",
         "t0: step at which averaging starts (default 1e6).",
         _docs.L2_PENALTY,
         "foreach: accepted; the single-tensor update runs either way (torch's multi-tensor\n"
         "kernel computes eta from the float32 step tensor: relative differences near 1e-7).",
         "capturable, differentiable, maximize: torch's flags, documented once in\n"
         "``optim._single_tensor.SingleTensorOptimizer``."],
        "ASGD([w], lr=0.1)", "[ 0.8000, -1.6000]")

    _capturable_holders = "params, mus, etas, and state_steps"
    _number_state = ("step", "eta", "mu")

    def __init__(self, params: Any, lr: float | Tensor = 1e-2, lambd: float = 1e-4,
                 alpha: float = 0.75, t0: float = 1e6, weight_decay: float = 0,
                 foreach: bool | None = None, maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False) -> None:
        base._check_lr(lr)
        base._check_non_negative(weight_decay=weight_decay)
        super().__init__(params, base._defaults(
            locals(), "lr lambd alpha t0 weight_decay foreach maximize differentiable capturable"))

    def _options(self, group: dict) -> tuple:
        """What ``_update`` reads after ``p, state, step``."""
        return (base._to_scalar(group["lr"]), group["lambd"], group["alpha"], group["t0"],
                group["weight_decay"], group["maximize"])

    def _update(self, p: Tensor, state: dict, step: float, lr: float, lambd: float,
                alpha: float, t0: float, weight_decay: float, maximize: bool) -> None:
        """torch's single-tensor update on the arrays (module docstring)."""
        param = base._real(p._data)
        ax_t, eta_t, mu_t = state["ax"], state["eta"], state["mu"]
        ax = base._real(ax_t._data)
        g = st.gradient_for_step(p, maximize, weight_decay=weight_decay)

        eta = float(eta_t._data)
        base.mul_(param, 1 - lambd * eta)
        base.add_scaled_exact_(param, g, -eta)
        base._bump(p, 2)
        mu = float(mu_t._data)
        if mu != 1:
            # ax.add_(param.sub(ax).mul_(mu)): three torch ops; mu (0-d) keeps its value
            diff = base.round_as(np.subtract(base._w(param), base._w(ax)), param)
            diff = base.round_as(np.multiply(diff, mu_t._data.astype(diff.dtype), out=diff), param)
            np.copyto(ax, np.add(base._w(ax), diff), casting="unsafe")
        else:
            np.copyto(ax, param)
        base._bump(ax_t)
        _next_eta_and_mu(eta_t, mu_t, step, lr, lambd, alpha, t0)

    def _differentiable_update(self, param: Tensor, state: dict, step: float, lr: float,
                               lambd: float, alpha: float, t0: float, weight_decay: float,
                               maximize: bool) -> None:
        """The same update in tapegrad ops, recorded by autograd (``differentiable=True``)."""
        grad = st.gradient_for_differentiable_step(param, maximize, weight_decay=weight_decay)
        eta, mu, ax = state["eta"], state["mu"], state["ax"]
        eta_value = eta.item()
        param.mul_(1 - lambd * eta_value)
        param.add_(grad, alpha=-eta_value)
        if mu.item() != 1:
            ax.add_(param.sub(ax).mul_(mu))
        else:
            ax.copy_(param)
        _next_eta_and_mu(eta, mu, step, lr, lambd, alpha, t0)

    def _new_state(self, p: Tensor, group: dict) -> dict:
        """A parameter's first state: the step count, eta (starting at lr), mu and the
        average."""
        return {"step": base._step_tensor(False),
                "eta": base._scalar_tensor(base._to_scalar(group["lr"])),
                "mu": base._scalar_tensor(1.0), "ax": base._zeros_like(p)}


def _next_eta_and_mu(
    eta: Tensor, mu: Tensor, step: float, lr: float, lambd: float, alpha: float, t0: float
) -> None:
    """``eta.copy_(torch.as_tensor(...))`` and the same for ``mu``: each number is rounded to
    the default dtype (``as_tensor``), then copied into the state tensor's own dtype."""
    as_tensor = get_default_dtype().np.type
    eta._data[()] = as_tensor(lr / ((1 + lambd * lr * step) ** alpha))
    mu._data[()] = as_tensor(1 / max(1, step - t0))
    base._bump(eta)
    base._bump(mu)
