"""The pieces torch's single-tensor optimizer steps share, written once.

Every ``step`` of Adam, NAdam, RAdam, Adamax, Adadelta, ASGD, Rprop, Adagrad and RMSprop has
the same outline for each parameter group::

    for p, state, step in parameter_steps(optimizer, group, new_state):   # step += 1 done
        if group["differentiable"]:
            <the update in tapegrad ops, recorded by autograd>
        else:
            g = gradient_for_step(p, maximize, lr, weight_decay)  # negated, weight decay
            <the algorithm's own arithmetic on the arrays>

Adadelta, Adamax, ASGD, NAdam, RAdam and Rprop take that outline from
:class:`SingleTensorOptimizer` (their ``step``, the flags they document, the restoring of old
pickles); Adam, Adagrad and RMSprop write it in their own ``step``.

This module holds that outline's shared parts: the loop over the parameters that have a
gradient (lazy state, capturable refusal, step count), the weight decay, and the running
averages several algorithms keep (Adam's two moments, a decaying average of squares), each in
array form (the kernels of ``optimizer.py``, in place, version counters bumped as torch's
in-place ops would) and in autograd form (``differentiable=True``).

The arithmetic of Adam's, SGD's and RMSprop's updates is here too, on arrays only (the
``*_array_`` functions and the ``*_term`` functions that return what is added to a
parameter): their ``step`` calls these on each parameter, and a compiled training step's
replay (``tapegrad/compiler/optim_replay.py``) calls the same functions on several small
parameters' values at once. Every one of them is elementwise with the same scalars for every
element, so each element gets the same bits either way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from .._tensor import Tensor
from .optimizer import (
    Optimizer,
    _bump,
    _capturable_error,
    _check_real,
    _fma,
    _increment_step,
    _opmath,
    _params_with_grad,
    _real,
    _restore_group_options,
    _run_closure,
    _sc_add,
    _scalar_tensor,
    _step_tensor,
    _update_grad,
    _use_grad_for_differentiable,
    _w,
    _zeros_like,
    add_scaled,
    add_scaled_,
    addcdiv_,
    addcdiv_term,
    addcmul_,
    lerp_,
    mul_,
    round_as,
    sqrt_add,
)

__all__ = [
    "SingleTensorOptimizer",
    "adam_moments_array_",
    "adam_step_term",
    "gradient_for_differentiable_step",
    "gradient_for_step",
    "parameter_steps",
    "rmsprop_denominator",
    "rmsprop_momentum_array_",
    "sgd_direction",
    "sgd_momentum_array_",
    "square_average_",
    "square_average_array_",
    "square_average_differentiable_",
    "update_moments_",
    "update_moments_differentiable_",
]


def group_options(group: dict, names: str) -> tuple:
    """The values of the options ``names`` (space-separated) in parameter ``group``, in that
    order: what a ``step`` reads once per group."""
    return tuple(group[name] for name in names.split())


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


class SingleTensorOptimizer(Optimizer):
    """The base of the optimizers whose ``step`` is the outline above, written once: Adadelta,
    Adamax, ASGD, NAdam, RAdam and Rprop.

    Their constructors take torch's flags, which mean the same in each:

    * ``foreach``: accepted; the single-tensor update runs either way (torch's multi-tensor
      kernels give the same numbers up to rounding).
    * ``capturable``: accepted; True makes ``step`` raise torch's CPU error (capturing needs an
      accelerator).
    * ``differentiable``: record the update with autograd, so that a loss computed from the
      updated (non-leaf) parameters differentiates through the step (real parameters).
    * ``maximize``: maximize the objective (default False).

    A subclass gives its update in two forms that take the same arguments,
    ``_update(p, state, step, *options)`` on the arrays and ``_differentiable_update(...)`` in
    tapegrad ops; ``_options(group)``, the group's hyper-parameters they read (once per group);
    and a parameter's first state, as ``_state_buffers`` or ``_new_state(p, group)`` (see
    :func:`parameter_steps`).
    """

    # torch's wording of the capturable error (see ``optimizer._capturable_error``)
    _capturable_holders = "params and state_steps"
    _capturable_on_xla = True
    # flags an older pickle's groups may lack besides the four above (restored as False), and
    # the state entries it may hold as plain numbers (restored as 0-d tensors)
    _extra_flags: tuple[str, ...] = ()
    _number_state: tuple[str, ...] = ("step",)

    # the buffers of zeros a parameter's first state holds after its step count
    _state_buffers: tuple[str, ...] = ()

    _options: Callable[[dict], tuple]
    _update: Callable[..., None]
    _differentiable_update: Callable[..., None]

    def _new_state(self, p: Tensor, group: dict) -> dict:
        """A parameter's first state: the step count (0-d, of the scalar dtype) and a buffer of
        zeros like ``p`` for each of ``_state_buffers`` (a subclass whose state holds more
        overrides this)."""
        state = {"step": _step_tensor(False)}
        for name in self._state_buffers:
            state[name] = _zeros_like(p)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        _restore_group_options(self, foreach=None, maximize=False, differentiable=False,
                               capturable=False, **dict.fromkeys(self._extra_flags, False))
        for group in self.param_groups:
            for p in group["params"]:
                p_state = self.state.get(p, [])
                if len(p_state) != 0:
                    for key in self._number_state:
                        if not isinstance(p_state[key], Tensor):
                            p_state[key] = _scalar_tensor(float(p_state[key]))

    @_use_grad_for_differentiable
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform a single optimization step; ``closure`` re-evaluates the loss."""
        loss = _run_closure(closure)
        for group in self.param_groups:
            options = self._options(group)
            update = self._differentiable_update if group["differentiable"] else self._update
            error = _capturable_error(self._capturable_holders, self._capturable_on_xla)
            for p, state, step in parameter_steps(self, group, self._new_state, error):
                update(p, state, step, *options)
        return loss


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
    square_average_array_(_real(average_t._data), x, decay)
    _bump(average_t, 2)


def square_average_array_(average: np.ndarray, x: np.ndarray, decay: float) -> None:
    """:func:`square_average_` on the average's array (no version bump)."""
    mul_(average, decay)
    addcmul_(average, x, x, 1 - decay)


def update_moments_(
    state: dict, g: np.ndarray, beta1: float, beta2: float
) -> tuple[np.ndarray, np.ndarray]:
    """Adam's running moments in place: ``exp_avg = lerp(exp_avg, g, 1-beta1)`` and
    ``exp_avg_sq = exp_avg_sq*beta2 + (1-beta2)*g*g``; returns the two updated arrays."""
    exp_avg_t, exp_avg_sq_t = state["exp_avg"], state["exp_avg_sq"]
    exp_avg, exp_avg_sq = _real(exp_avg_t._data), _real(exp_avg_sq_t._data)
    adam_moments_array_(exp_avg, exp_avg_sq, g, beta1, beta2)
    _bump(exp_avg_t)
    _bump(exp_avg_sq_t, 2)
    return exp_avg, exp_avg_sq


def adam_moments_array_(exp_avg: np.ndarray, exp_avg_sq: np.ndarray, g: np.ndarray,
                        beta1: float, beta2: float) -> None:
    """:func:`update_moments_` on the moments' arrays (no version bumps)."""
    lerp_(exp_avg, g, 1 - beta1)
    square_average_array_(exp_avg_sq, g, beta2)


def adam_step_term(exp_avg: np.ndarray, second: np.ndarray, step: float, lr: float,
                   beta1: float, beta2: float, eps: float, like: np.ndarray) -> np.ndarray:
    """What Adam adds to a parameter (``like``: its array, for the compute type):
    ``(-lr/bc1) * exp_avg / (sqrt(second)/sqrt(bc2) + eps)`` with the bias corrections
    ``bc = 1 - beta**step``; ``second`` is ``exp_avg_sq`` (or its running maximum, amsgrad).
    torch's ``param.addcdiv_(exp_avg, denom, value=-step_size)`` is ``add_term_`` of it."""
    bias_correction1 = 1 - beta1**step
    bias_correction2 = 1 - beta2**step
    step_size = lr / bias_correction1
    denom = sqrt_add(second, bias_correction2**0.5, eps)
    return addcdiv_term(exp_avg, denom, -step_size, like)


def sgd_momentum_array_(buf: np.ndarray, g: np.ndarray, momentum: float,
                        dampening: float) -> None:
    """SGD's momentum buffer after its first step: ``buf = buf*momentum + (1-dampening)*g``
    (torch's ``mul_`` then ``add_``)."""
    mul_(buf, momentum)
    add_scaled_(buf, g, 1 - dampening)


def sgd_direction(g: np.ndarray, buf: np.ndarray, momentum: float,
                  nesterov: bool) -> np.ndarray:
    """The direction SGD with momentum steps along: ``g + momentum*buf`` (Nesterov, a new
    array) or the buffer itself."""
    return add_scaled(g, buf, momentum) if nesterov else buf


def rmsprop_denominator(square_avg: np.ndarray, grad_avg: np.ndarray | None, eps: float,
                        like: np.ndarray) -> np.ndarray:
    """RMSprop's ``sqrt(square_avg - grad_avg**2) + eps`` (centered: ``grad_avg`` given,
    ``addcmul(grad_avg, grad_avg, value=-1).sqrt_()``) or ``sqrt(square_avg) + eps``, a new
    array in ``like``'s compute type, rounded as torch's ops round each result."""
    if grad_avg is not None:
        ga = _w(grad_avg)
        avg = round_as(_fma(np.negative(ga), ga, _w(square_avg), _opmath(like)), like)
        avg = round_as(np.sqrt(avg, out=avg), like)
    else:
        avg = round_as(np.sqrt(_w(square_avg)), like)
    return round_as(np.add(avg, _sc_add(eps, like), out=avg), like)


def rmsprop_momentum_array_(buf: np.ndarray, g: np.ndarray, avg: np.ndarray,
                            momentum: float) -> None:
    """RMSprop's momentum buffer: ``buf = buf*momentum + g/avg`` (``mul_``, ``addcdiv_``)."""
    mul_(buf, momentum)
    addcdiv_(buf, g, avg, 1)


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
