"""``RMSprop``: divide the gradient by a running root-mean-square of its recent magnitudes.

For each parameter with a gradient (torch's single-tensor algorithm, in place on the arrays)::

    g = -grad if maximize else grad;  step += 1;  g = g + wd*p   (weight_decay != 0)
    sq = sq*alpha + (1-alpha)*g*g
    avg = sqrt(sq - ga*ga) with ga = lerp(ga, g, 1-alpha)   (centered)  |  sqrt(sq)
    avg = avg + eps
    buf = buf*momentum + g/avg;  p = p - lr*buf             (momentum > 0)
    p = p + (-lr)*g/avg                                     (otherwise)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._tensor import Tensor
from . import _docs
from . import _single_tensor as st
from . import optimizer as base
from .optimizer import Optimizer

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    __doc__ = _docs.optimizer_doc(
        "RMSprop (Hinton's lecture 6e), optionally centered and with momentum.",
        [_docs.learning_rate("1e-2"),
         "alpha: smoothing constant (default 0.99).",
         _docs.eps_denominator("1e-8"),
         _docs.L2_PENALTY,
         "momentum: momentum factor (default 0).",
         "centered: normalize by an estimate of the gradient's variance (default False).",
         _docs.MAXIMIZE],
        "RMSprop([w], lr=0.01)", "[ 0.9000, -1.9000]")

    def __init__(self, params: Any, lr: float | Tensor = 1e-2, alpha: float = 0.99,
                 eps: float = 1e-8, weight_decay: float = 0, momentum: float = 0,
                 centered: bool = False, capturable: bool = False, foreach: bool | None = None,
                 maximize: bool = False, differentiable: bool = False) -> None:
        base._check_lr(lr)
        base._check_non_negative(epsilon=eps, momentum=momentum, weight_decay=weight_decay,
                                 alpha=alpha)
        if differentiable:
            raise NotImplementedError("tapegrad optimizers do not support differentiable=True")
        defaults = base._defaults(locals(), "lr momentum alpha eps centered weight_decay "
                                  "capturable foreach maximize differentiable")
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        base._restore_group_options(self, momentum=0, centered=False, foreach=None, maximize=False,
                                    differentiable=False, capturable=False)
        for group in self.param_groups:
            base._steps_as_tensors(self.state, group["params"], False)

    @base._use_grad_for_differentiable
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform a single optimization step; ``closure`` re-evaluates the loss."""
        loss = base._run_closure(closure)
        for group in self.param_groups:
            lr = base._to_scalar(group["lr"])
            alpha, eps, weight_decay, momentum, centered, maximize = st.group_options(
                group, "alpha eps weight_decay momentum centered maximize")
            for p, state, _ in st.parameter_steps(self, group, _new_state):
                param = base._real(p._data)
                g = st.gradient_for_step(p, maximize, weight_decay=weight_decay)
                st.square_average_(state["square_avg"], g, alpha)
                square_avg = base._real(state["square_avg"]._data)
                grad_avg = None
                if centered:
                    ga_t = state["grad_avg"]
                    grad_avg = base._real(ga_t._data)
                    base.lerp_(grad_avg, g, 1 - alpha)
                    base._bump(ga_t)
                avg = st.rmsprop_denominator(square_avg, grad_avg, eps, param)

                if momentum > 0:
                    buf_t = state["momentum_buffer"]
                    buf = base._real(buf_t._data)
                    st.rmsprop_momentum_array_(buf, g, avg, momentum)
                    base._bump(buf_t, 2)
                    base.add_scaled_exact_(param, buf, -lr)
                else:
                    base.addcdiv_(param, g, avg, -lr)
                base._bump(p)
        return loss


def _new_state(p: Tensor, group: dict) -> dict:
    """A parameter's first state: the step count, the average of squared gradients, and the
    momentum buffer and the gradients' average when ``momentum`` and ``centered`` ask for them."""
    state = {"step": base._step_tensor(False), "square_avg": base._zeros_like(p)}
    if group["momentum"] > 0:
        state["momentum_buffer"] = base._zeros_like(p)
    if group["centered"]:
        state["grad_avg"] = base._zeros_like(p)
    return state
