"""``Adafactor``: Adam's second moment kept factored, as a row and a column average for
matrices (memory O(m + n) instead of O(mn)), with a relative step size.

For each parameter with a gradient (torch's single-tensor algorithm, written with tensor ops)::

    step += 1;  beta2_t = 1 - step**beta2_decay;  rho = min(lr, 1/sqrt(step))
    alpha = max(eps2, RMS(p)) * rho
    p *= 1 - lr * weight_decay
    matrices: row_var.lerp_(mean(g*g over the last dim), 1 - beta2_t);  col_var likewise over
              the one before;  v = row_var @ col_var / max(mean(row_var), eps1)
    vectors:  variance.lerp_(g*g, 1 - beta2_t);  v = variance
    u = g / sqrt(max(v, eps1**2));  p -= alpha / max(1, RMS(u) / d) * u

(``eps1`` defaults to the parameter dtype's machine epsilon; ``maximize`` negates g.)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._finfo import finfo
from .._naming import public
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from .optimizer import Optimizer, _run_closure, _step_tensor, _to_scalar

__all__ = ["Adafactor"]


@public(".optim")  # (torch's names its package)
class Adafactor(Optimizer):
    """Adafactor (Shazeer and Stern, 2018).

    Args:
        params: tensors or parameter groups to optimize.
        lr: the largest relative step size (default 1e-2).
        beta2_decay: the second moment's decay exponent (default -0.8).
        eps: (eps1, eps2): the floor of the second moment (None: the dtype's epsilon) and of
            the parameter's RMS (default (None, 1e-3)).
        d: the update's RMS clipping threshold (default 1.0).
        weight_decay: decoupled weight decay (default 0).
        maximize: maximize the objective (default False).
    """

    def __init__(self, params: Any, lr: float | Tensor = 1e-2, beta2_decay: float = -0.8,
                 eps: tuple = (None, 1e-3), d: float = 1.0, weight_decay: float = 0.0, *,
                 foreach: bool | None = None, maximize: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = {"lr": lr, "beta2_decay": beta2_decay, "eps": eps, "d": d,
                    "weight_decay": weight_decay, "foreach": foreach, "maximize": maximize}
        super().__init__(params, defaults)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform a single optimization step; ``closure`` re-evaluates the loss."""
        loss = _run_closure(closure)
        with no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        self._update(p, group)
        return loss

    def _update(self, p: Tensor, group: dict) -> None:
        if p.is_complex():
            raise RuntimeError("Adafactor does not support complex parameters")
        grad: Any = p.grad
        if group["maximize"]:
            grad = -grad
        state = self.state[p]
        if len(state) == 0:
            state["step"] = _step_tensor(False)
            if grad.dim() > 1:
                state["row_var"] = grad.new_zeros([*grad.shape[:-1], 1])
                state["col_var"] = grad.new_zeros([*grad.shape[:-2], 1, grad.shape[-1]])
            else:
                state["variance"] = grad.new_zeros(grad.shape)
        lr = _to_scalar(group["lr"])
        eps1, eps2 = group["eps"]
        if eps1 is None:
            eps1 = finfo(p.dtype).eps
        step_t = state["step"]
        step_t += 1
        step = step_t.item()
        one_minus_beta2_t = step ** group["beta2_decay"]
        rho = min(lr, 1 / (step ** 0.5))
        alpha = max(eps2, p.norm(2).item() / (p.numel() ** 0.5)) * rho
        if group["weight_decay"] != 0:
            p.mul_(1 - lr * group["weight_decay"])
        if grad.dim() > 1:
            row_var, col_var = state["row_var"], state["col_var"]
            row_mean = grad.norm(dim=-1, keepdim=True).square_().div_(grad.size(-1))
            row_var.lerp_(row_mean, one_minus_beta2_t)
            col_mean = grad.norm(dim=-2, keepdim=True).square_().div_(grad.size(-2))
            col_var.lerp_(col_mean, one_minus_beta2_t)
            var_estimate = row_var @ col_var
            var_estimate.div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=eps1))
        else:
            variance = state["variance"]
            variance.lerp_(grad * grad, one_minus_beta2_t)
            var_estimate = variance.clone()
        update = var_estimate.clamp_(min=eps1 * eps1).rsqrt_()
        update.mul_(grad)
        denom = max(1.0, update.norm(2).item() / ((update.numel() ** 0.5) * group["d"]))
        p.add_(update, alpha=-alpha / denom)
