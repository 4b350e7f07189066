"""``Adagrad``: per-coordinate learning rates from the sum of squared gradients.

For each parameter with a gradient (torch's single-tensor algorithm, in place on the arrays)::

    step += 1;  g = -grad if maximize else grad;  g = g + wd*p   (weight_decay != 0)
    clr = lr / (1 + (step - 1) * lr_decay)                        (Python floats)
    sum = sum + g*g
    p = p + (-clr) * g / (sqrt(sum) + eps)

Unlike the other optimizers, Adagrad creates its state (``step``, ``sum`` filled with
``initial_accumulator_value``) in the constructor, for every parameter.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._tensor import Tensor
from . import _docs
from . import optimizer as base
from ._single_tensor import gradient_for_step, parameter_steps
from .optimizer import Optimizer

__all__ = ["Adagrad"]


def _full_like(p: Tensor, value: Any) -> Tensor:
    if p._data.dtype.kind == "c":
        value = complex(value, value)
    return Tensor._make(np.full_like(p._data, value))


class Adagrad(Optimizer):
    __doc__ = _docs.optimizer_doc(
        "Adagrad (Duchi et al., 2011).",
        [_docs.learning_rate("1e-2"),
         "lr_decay: learning rate decay (default 0).",
         _docs.L2_PENALTY,
         "initial_accumulator_value: starting value of the sum of squares (default 0).",
         _docs.eps_denominator("1e-10"),
         _docs.MAXIMIZE],
        "Adagrad([w], lr=0.1)", "[ 0.9000, -1.9000]")

    def __init__(self, params: Any, lr: float | Tensor = 1e-2, lr_decay: float = 0,
                 weight_decay: float = 0, initial_accumulator_value: float = 0, eps: float = 1e-10,
                 foreach: bool | None = None, *, maximize: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        base._check_lr(lr)
        base._check_non_negative(lr_decay=lr_decay, weight_decay=weight_decay,
                                 initial_accumulator_value=initial_accumulator_value, epsilon=eps)
        if differentiable:
            raise NotImplementedError("tapegrad optimizers do not support differentiable=True")
        defaults = base._defaults(locals(), "lr lr_decay eps weight_decay "
                                  "initial_accumulator_value foreach maximize differentiable fused")
        super().__init__(params, defaults)
        if fused and foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = base._step_tensor(bool(group["fused"]))
                state["sum"] = _full_like(p, initial_accumulator_value)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        base._restore_group_options(self, foreach=None, maximize=False, differentiable=False,
                                    fused=None)
        fused = None
        for group in self.param_groups:
            fused = group["fused"]
            base._steps_as_tensors(self.state, group["params"], bool(fused))
        for s in self.state.values():
            if "step" in s and not isinstance(s["step"], Tensor):
                s["step"] = base._as_step_tensor(s["step"], bool(fused))

    def _new_state(self, p: Tensor, group: dict) -> dict:
        """A parameter's state when its own was emptied (torch fills it in ``__init__``): the
        sum starts at the optimizer's (not the group's) ``initial_accumulator_value``."""
        return {"step": base._step_tensor(bool(group["fused"])),
                "sum": _full_like(p, self.defaults["initial_accumulator_value"])}

    def share_memory(self) -> None:
        """A no-op: tapegrad tensors live in this process only."""

    @base._use_grad_for_differentiable
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform a single optimization step; ``closure`` re-evaluates the loss."""
        loss = base._run_closure(closure)
        for group in self.param_groups:
            lr = base._to_scalar(group["lr"])
            lr_decay = group["lr_decay"]
            weight_decay = group["weight_decay"]
            eps = group["eps"]
            maximize = group["maximize"]
            for p, state, step in parameter_steps(self, group, self._new_state):
                param = base._real(p._data)
                g = gradient_for_step(p, maximize, weight_decay=weight_decay)
                sum_t = state["sum"]
                clr = lr / (1 + (step - 1) * lr_decay)
                state_sum = base._real(sum_t._data)
                base.addcmul_(state_sum, g, g, 1)
                base._bump(sum_t)
                std = base.sqrt_add(state_sum, None, eps)
                base.addcdiv_(param, g, std, -clr)
                base._bump(p)
        return loss
