"""``Adam`` (and, with ``decoupled_weight_decay=True``, AdamW's update).

For each parameter with a gradient (torch's single-tensor algorithm, in place on the arrays)::

    g = -grad if maximize else grad;  step += 1
    p = p * (1 - lr*wd)  (decoupled)  |  g = g + wd*p  (L2)          (weight_decay != 0)
    m = lerp(m, g, 1-beta1);  v = v*beta2 + (1-beta2)*g*g
    bc1 = 1 - beta1**step;  bc2 = 1 - beta2**step                     (Python floats)
    vmax = max(vmax, v)                                               (amsgrad)
    denom = sqrt(v or vmax) / sqrt(bc2) + eps
    p = p + (-lr/bc1) * m / denom

``state['step']`` is a 0-d float32 tensor (float64 when that is the default dtype).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._tensor import Tensor
from . import optimizer as base
from ._single_tensor import adam_step_term, gradient_for_step, parameter_steps, update_moments_
from .optimizer import Optimizer

__all__ = ["Adam"]


class Adam(Optimizer):
    """Adam: adaptive moment estimation (Kingma & Ba, 2014).

    Args:
        params: tensors or parameter groups to optimize.
        lr: learning rate (default 1e-3).
        betas: coefficients of the running averages of the gradient and its square
            (default (0.9, 0.999)).
        eps: term added to the denominator (default 1e-8).
        weight_decay: L2 penalty, or decoupled decay when ``decoupled_weight_decay`` (default 0).
        amsgrad: use the AMSGrad variant (default False).
        maximize: maximize the objective (default False).
        decoupled_weight_decay: AdamW's weight decay (default False).

    Example:
        >>> import tapegrad as torch
        >>> w = torch.tensor([1.0, -2.0], requires_grad=True)
        >>> opt = torch.optim.Adam([w], lr=0.1)
        >>> (w ** 2).sum().backward()
        >>> opt.step()
        >>> w
        tensor([ 0.9000, -1.9000], requires_grad=True)
    """

    def __init__(self, params: Any, lr: float | Tensor = 1e-3,
                 betas: tuple[Any, Any] = (0.9, 0.999), eps: float = 1e-8, weight_decay: float = 0,
                 amsgrad: bool = False, *, foreach: bool | None = None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False, fused: bool | None = None,
                 decoupled_weight_decay: bool = False) -> None:
        if isinstance(lr, Tensor):
            if foreach and not capturable:
                raise ValueError(
                    "lr as a Tensor is not supported for capturable=False and foreach=True"
                )
        base._check_adam_arguments(lr, eps, betas, weight_decay)
        if not (
            (isinstance(betas[0], float) and isinstance(betas[1], float))
            or (isinstance(betas[0], Tensor) and isinstance(betas[1], Tensor))
        ):
            raise ValueError("betas must be either both floats or both Tensors")
        for i in (0, 1):
            if isinstance(betas[i], Tensor):
                if not capturable and foreach:
                    raise ValueError(
                        f"betas[{i}] as a Tensor is not supported for capturable=False and "
                        "foreach=True"
                    )
                if betas[i].numel() != 1:
                    raise ValueError(f"Tensor betas[{i}] must be 1-element")
        betas = tuple(b.reshape(()) if isinstance(b, Tensor) else b for b in betas)
        if differentiable:
            raise NotImplementedError("tapegrad optimizers do not support differentiable=True")
        super().__init__(params, base._defaults(
            locals(), "lr betas eps weight_decay amsgrad maximize foreach capturable "
                      "differentiable fused decoupled_weight_decay"))
        if fused and foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        base._restore_group_options(self, amsgrad=False, maximize=False, foreach=None,
                                    capturable=False, differentiable=False,
                                    decoupled_weight_decay=False, fused=None)
        for group in self.param_groups:
            capturable_or_fused = bool(group["capturable"] or group["fused"])
            base._steps_as_tensors(self.state, group["params"], capturable_or_fused)

    @base._use_grad_for_differentiable
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform a single optimization step; ``closure`` re-evaluates the loss."""
        loss = base._run_closure(closure)
        for group in self.param_groups:
            lr = base._to_scalar(group["lr"])
            beta1, beta2 = (base._to_scalar(b) for b in group["betas"])
            eps = group["eps"]
            weight_decay = base._to_scalar(group["weight_decay"])
            amsgrad = group["amsgrad"]
            maximize = group["maximize"]
            decoupled = group["decoupled_weight_decay"]
            for p, state, step in parameter_steps(self, group, _new_state):
                param = base._real(p._data)
                g = gradient_for_step(p, maximize, lr, weight_decay, decoupled)
                exp_avg, exp_avg_sq = update_moments_(state, g, beta1, beta2)

                second = exp_avg_sq
                if amsgrad:
                    max_t = state["max_exp_avg_sq"]
                    second = base._real(max_t._data)
                    np.maximum(second, exp_avg_sq, out=second)
                    base._bump(max_t)
                base.add_term_(param, adam_step_term(exp_avg, second, step, lr, beta1, beta2, eps,
                                                     param))
                base._bump(p)
        return loss


def _new_state(p: Tensor, group: dict) -> dict:
    """A parameter's first state: the step count (float32 when capturable or fused), the two
    moments, and the running maximum of the second with ``amsgrad``."""
    state = {"step": base._step_tensor(bool(group["capturable"] or group["fused"])),
             "exp_avg": base._zeros_like(p), "exp_avg_sq": base._zeros_like(p)}
    if group["amsgrad"]:
        state["max_exp_avg_sq"] = base._zeros_like(p)
    return state
