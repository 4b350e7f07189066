"""The pieces torch's single-tensor optimizer steps share, written once.

Every ``step`` of Adam, NAdam, RAdam, Adamax, Adadelta, ASGD, Rprop, Adagrad and RMSprop has
the same outline for each parameter group::

    for p, state, step in parameter_steps(optimizer, group, new_state):   # step += 1 done
        if group["differentiable"]:
            <the update in tapegrad ops, recorded by autograd>
        else:
            g = gradient_for_step(p, maximize, lr, weight_decay)  # negated, weight decay
            <the algorithm's own arithmetic on the arrays>

This module holds that outline's shared parts: the loop over the parameters that have a
gradient (lazy state, capturable refusal, step count), the weight decay, and the running
averages several algorithms keep (Adam's two moments, a decaying average of squares), each in
array form (the kernels of ``optimizer.py``, in place, version counters bumped as torch's
in-place ops would) and in autograd form (``differentiable=True``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

from .._tensor import Tensor
from .optimizer import (
    Optimizer,
    _bump,
    _check_real,
    _increment_step,
    _params_with_grad,
    _real,
    _update_grad,
    add_scaled,
    addcmul_,
    lerp_,
    mul_,
)

__all__ = [
    "gradient_for_differentiable_step",
    "gradient_for_step",
    "parameter_steps",
    "square_average_",
    "square_average_differentiable_",
    "update_moments_",
    "update_moments_differentiable_",
]


def parameter_steps(
    optimizer: Optimizer,
    group: dict,
    new_state: Callable[[Tensor, dict], dict],
    capturable_error: AssertionError | None = None,
) -> Iterator[tuple[Tensor, dict, float]]:
    """The parameters of ``group`` that have a gradient, each as ``(p, state, step)``, in
    torch's single-tensor order.

    First every empty state is filled with ``new_state(p, group)`` (torch creates the buffers
    lazily, for all parameters before any update). Then, parameter by parameter,
    ``state['step'] += 1`` and ``step`` is the new count. With ``capturable=True`` in the group
    and a ``capturable_error`` given (the optimizers whose CPU step refuses capturing), that
    error is raised at the first parameter, before anything is updated.
    """
    state_of = optimizer.state
    for p in _params_with_grad(optimizer, group, new_state):
        if capturable_error is not None and group["capturable"]:
            raise capturable_error
        state = state_of[p]
        yield p, state, _increment_step(state["step"])


# ---------------------------------------------------------------------------------------------
# Array form: in place on the parameter's and the state's ndarrays
# ---------------------------------------------------------------------------------------------


def gradient_for_step(
    p: Tensor, maximize: bool, lr: float = 0.0, weight_decay: float = 0.0,
    decoupled: bool = False,
) -> np.ndarray:
    """The gradient array an update uses: ``p.grad`` seen as real pairs, negated when
    maximizing, then weight decay (none when ``weight_decay`` is 0):

    decoupled (AdamW-style): ``p.mul_(1 - lr*weight_decay)``, the gradient unchanged;
    otherwise (an L2 penalty): ``g + weight_decay*p``, a new array.
    """
    grad = p._grad
    assert grad is not None  # (only parameters with a gradient are stepped)
    g = _update_grad(grad, maximize)
    if weight_decay == 0:
        return g
    param = _real(p._data)
    if decoupled:
        mul_(param, 1 - lr * weight_decay)
        _bump(p)
        return g
    return add_scaled(g, param, weight_decay)


def square_average_(average_t: Tensor, x: np.ndarray, decay: float) -> None:
    """``average = average*decay + (1-decay)*x*x`` in place (torch's ``mul_`` then
    ``addcmul_``: two version bumps)."""
    average = _real(average_t._data)
    mul_(average, decay)
    addcmul_(average, x, x, 1 - decay)
    _bump(average_t, 2)


def update_moments_(
    state: dict, g: np.ndarray, beta1: float, beta2: float
) -> tuple[np.ndarray, np.ndarray]:
    """Adam's running moments in place: ``exp_avg = lerp(exp_avg, g, 1-beta1)`` and
    ``exp_avg_sq = exp_avg_sq*beta2 + (1-beta2)*g*g``; returns the two updated arrays."""
    exp_avg_t = state["exp_avg"]
    exp_avg = _real(exp_avg_t._data)
    lerp_(exp_avg, g, 1 - beta1)
    _bump(exp_avg_t)
    square_average_(state["exp_avg_sq"], g, beta2)
    return exp_avg, _real(state["exp_avg_sq"]._data)


# ---------------------------------------------------------------------------------------------
# Autograd form (differentiable=True): the same updates in tapegrad ops, as torch writes them
# ---------------------------------------------------------------------------------------------


def gradient_for_differentiable_step(
    param: Tensor, maximize: bool, lr: float = 0.0, weight_decay: float = 0.0,
    decoupled: bool = False,
) -> Tensor:
    """:func:`gradient_for_step` in tapegrad ops (``-param.grad``, then ``param.mul_`` or
    ``grad.add(param, alpha=weight_decay)``). Complex parameters are refused (the recorded
    updates are written for real ones)."""
    grad = param.grad
    assert grad is not None  # (only parameters with a gradient are stepped)
    _check_real(param)
    if maximize:
        grad = -grad
    if weight_decay != 0:
        if decoupled:
            param.mul_(1 - lr * weight_decay)
        else:
            grad = grad.add(param, alpha=weight_decay)
    return grad


def square_average_differentiable_(average: Tensor, x: Tensor, decay: float) -> None:
    """:func:`square_average_` recorded by autograd."""
    average.mul_(decay)
    average.copy_(average.addcmul(x, x, value=1 - decay))


def update_moments_differentiable_(state: dict, grad: Tensor, beta1: float, beta2: float) -> None:
    """:func:`update_moments_` recorded by autograd."""
    exp_avg = state["exp_avg"]
    exp_avg.copy_(exp_avg.lerp(grad, 1 - beta1))
    square_average_differentiable_(state["exp_avg_sq"], grad, beta2)
