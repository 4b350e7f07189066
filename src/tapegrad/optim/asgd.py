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

from collections.abc import Callable
from typing import Any

import numpy as np

from .._dtype import get_default_dtype
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
    _scalar_dtype,
    _step_tensor,
    _to_scalar,
    _use_grad_for_differentiable,
    _w,
    _zeros_like,
    add_scaled_exact_,
    mul_,
    round_as,
)

__all__ = ["ASGD"]


def _scalar_tensor(value: Any) -> Tensor:
    """A 0-d tensor of the scalar dtype holding ``value``."""
    return Tensor._make(np.array(value, dtype=_scalar_dtype().np))


class ASGD(Optimizer):
    """Averaged SGD.

    Args:
        params: tensors or parameter groups to optimize.
        lr: learning rate (default 1e-2).
        lambd: decay term (default 1e-4).
        alpha: power for the eta update (default 0.75).
        t0: step at which averaging starts (default 1e6).
        weight_decay: L2 penalty (default 0).
        foreach: accepted; the single-tensor update runs either way (torch's multi-tensor
            kernel computes eta from the float32 step tensor: relative differences near 1e-7).
        capturable: accepted; True makes ``step`` raise torch's CPU error (capturing needs an
            accelerator).
        differentiable: record the update with autograd, so that a loss computed from the
            updated (non-leaf) parameters differentiates through the step (real parameters).
        maximize: maximize the objective (default False).

    Example:
        >>> import tapegrad as torch
        >>> w = torch.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = torch.optim.ASGD([w], lr=0.1)
        >>> (w ** 2).sum().backward()
        >>> opt.step()
        >>> w
        tensor([ 0.8000, -1.6000], requires_grad=True)
    """

    def __init__(
        self,
        params: Any,
        lr: float | Tensor = 1e-2,
        lambd: float = 1e-4,
        alpha: float = 0.75,
        t0: float = 1e6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        _check_lr(lr)
        _check_non_negative(weight_decay=weight_decay)
        defaults = {
            "lr": lr,
            "lambd": lambd,
            "alpha": alpha,
            "t0": t0,
            "weight_decay": weight_decay,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
            "capturable": capturable,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        _restore_group_flags(self, steps=False)
        for group in self.param_groups:  # old state: step, eta and mu as numbers
            for p in group["params"]:
                p_state = self.state.get(p, [])
                if len(p_state) != 0:
                    for key in ("step", "eta", "mu"):
                        if not isinstance(p_state[key], Tensor):
                            p_state[key] = _scalar_tensor(float(p_state[key]))

    @_use_grad_for_differentiable
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform a single optimization step; ``closure`` re-evaluates the loss."""
        loss = _run_closure(closure)
        for group in self.param_groups:
            lr = _to_scalar(group["lr"])
            lambd = group["lambd"]
            alpha = group["alpha"]
            t0 = group["t0"]
            weight_decay = group["weight_decay"]
            maximize = group["maximize"]
            holders = "params, mus, etas, and state_steps"
            for p, state, step in parameter_steps(self, group, _new_state,
                                                  _capturable_error(holders)):
                if group["differentiable"]:
                    _differentiable_update(
                        p, state, step, lr, lambd, alpha, t0, weight_decay, maximize
                    )
                    continue
                param = _real(p._data)
                ax_t, eta_t, mu_t = state["ax"], state["eta"], state["mu"]
                ax = _real(ax_t._data)
                g = gradient_for_step(p, maximize, weight_decay=weight_decay)

                eta = float(eta_t._data)
                mul_(param, 1 - lambd * eta)
                add_scaled_exact_(param, g, -eta)
                _bump(p, 2)
                mu = float(mu_t._data)
                if mu != 1:
                    # ax.add_(param.sub(ax).mul_(mu)): three torch ops; mu (0-d) keeps its value
                    diff = round_as(np.subtract(_w(param), _w(ax)), param)
                    diff = round_as(
                        np.multiply(diff, mu_t._data.astype(diff.dtype), out=diff), param
                    )
                    np.copyto(ax, np.add(_w(ax), diff), casting="unsafe")
                else:
                    np.copyto(ax, param)
                _bump(ax_t)
                _next_eta_and_mu(eta_t, mu_t, step, lr, lambd, alpha, t0)
        return loss


def _new_state(p: Tensor, group: dict) -> dict:
    """A parameter's first state: the step count, eta (starting at lr), mu and the average."""
    return {"step": _step_tensor(False), "eta": _scalar_tensor(_to_scalar(group["lr"])),
            "mu": _scalar_tensor(1.0), "ax": _zeros_like(p)}


def _next_eta_and_mu(
    eta: Tensor, mu: Tensor, step: float, lr: float, lambd: float, alpha: float, t0: float
) -> None:
    """``eta.copy_(torch.as_tensor(...))`` and the same for ``mu``: each number is rounded to
    the default dtype (``as_tensor``), then copied into the state tensor's own dtype."""
    as_tensor = get_default_dtype().np.type
    eta._data[()] = as_tensor(lr / ((1 + lambd * lr * step) ** alpha))
    mu._data[()] = as_tensor(1 / max(1, step - t0))
    _bump(eta)
    _bump(mu)


def _differentiable_update(
    param: Tensor,
    state: dict,
    step: float,
    lr: float,
    lambd: float,
    alpha: float,
    t0: float,
    weight_decay: float,
    maximize: bool,
) -> None:
    """The same update in tapegrad ops, recorded by autograd (``differentiable=True``)."""
    grad = gradient_for_differentiable_step(param, maximize, weight_decay=weight_decay)
    eta, mu, ax = state["eta"], state["mu"], state["ax"]
    eta_value = eta.item()
    param.mul_(1 - lambd * eta_value)
    param.add_(grad, alpha=-eta_value)
    if mu.item() != 1:
        ax.add_(param.sub(ax).mul_(mu))
    else:
        ax.copy_(param)
    _next_eta_and_mu(eta, mu, step, lr, lambd, alpha, t0)
