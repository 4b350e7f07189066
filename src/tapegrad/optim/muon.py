"""``Muon``: SGD with Nesterov momentum whose update is orthogonalized (its singular values
pushed towards one) by a few Newton-Schulz iterations, for 2-D parameters.

For each parameter with a gradient (torch's algorithm, written with tensor ops)::

    buf.lerp_(g, 1 - momentum);  u = g.lerp(buf, momentum) if nesterov else buf
    X = bfloat16(u) (transposed when taller than wide);  X /= max(||X||, eps)
    ns_steps times:  A = X @ X.T;  B = b*A + c*A@A;  X = a*X + B@X      (a, b, c: coefficients)
    p *= 1 - lr * weight_decay;  p -= lr * ratio * X
    ratio: sqrt(max(1, rows/cols)) ("original", the default), 0.2 * sqrt(max(rows, cols))
           ("match_rms_adamw")
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .._naming import public
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from ..ops.linalg import addmm
from .optimizer import Optimizer, _run_closure, _to_scalar

__all__ = ["Muon"]


def _zeropower_via_newtonschulz(grad: Tensor, ns_coefficients: tuple, ns_steps: int,
                                eps: float) -> Tensor:
    """The Newton-Schulz orthogonalization of a matrix, in bfloat16."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if len(grad.shape) != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    x = grad.bfloat16()
    tall = grad.size(0) > grad.size(1)
    if tall:
        x = x.T
    x.div_(x.norm().clamp(min=eps))
    for _ in range(ns_steps):
        gram = x @ x.T
        update = addmm(gram, gram, gram, beta=b, alpha=c)
        x = addmm(x, update, x, beta=a)
    return x.T if tall else x


def _adjust_lr(lr: float, adjust_lr_fn: str | None, shape: Any) -> float:
    rows, cols = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        return lr * math.sqrt(max(1, rows / cols))
    if adjust_lr_fn == "match_rms_adamw":
        return lr * 0.2 * math.sqrt(max(rows, cols))
    return lr


@public(".optim")  # (torch's names its package)
class Muon(Optimizer):
    """Muon (Jordan et al., 2024): momentum, then an orthogonalized update; 2-D parameters
    only (use another optimizer for biases and embeddings).

    Args:
        params: 2-D tensors or parameter groups to optimize.
        lr: learning rate (default 1e-3).
        weight_decay: decoupled weight decay (default 0.1).
        momentum: momentum factor (default 0.95).
        nesterov: Nesterov momentum (default True).
        ns_coefficients: the Newton-Schulz coefficients (a, b, c).
        eps: floor of the norm the update is divided by (default 1e-7).
        ns_steps: Newton-Schulz iterations (default 5).
        adjust_lr_fn: None or "original" (by the aspect ratio), or "match_rms_adamw".
    """

    def __init__(self, params: Any, lr: float = 1e-3, weight_decay: float = 0.1,
                 momentum: float = 0.95, nesterov: bool = True,
                 ns_coefficients: tuple = (3.4445, -4.775, 2.0315), eps: float = 1e-07,
                 ns_steps: int = 5, adjust_lr_fn: str | None = None) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ("original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = {"lr": lr, "weight_decay": weight_decay, "momentum": momentum,
                    "nesterov": nesterov, "ns_coefficients": ns_coefficients, "eps": eps,
                    "ns_steps": ns_steps, "adjust_lr_fn": adjust_lr_fn}
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError("Muon only supports 2D parameters whereas we found a "
                                     f"parameter with size: {p.size()}")

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform a single optimization step; ``closure`` re-evaluates the loss."""
        loss = _run_closure(closure)
        with no_grad():
            for group in self.param_groups:
                lr = _to_scalar(group["lr"])
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    if p.is_complex():
                        raise RuntimeError("Muon does not support complex parameters")
                    grad = p.grad
                    if grad.ndim != 2:
                        raise ValueError("Param gradient must be a 2D matrix")
                    state = self.state[p]
                    if "momentum_buffer" not in state:
                        state["momentum_buffer"] = grad.new_zeros(grad.shape)
                    buf = state["momentum_buffer"]
                    buf.lerp_(grad, 1 - group["momentum"])
                    update = grad.lerp(buf, group["momentum"]) if group["nesterov"] else buf
                    update = _zeropower_via_newtonschulz(update, group["ns_coefficients"],
                                                         group["ns_steps"], group["eps"])
                    p.mul_(1 - lr * group["weight_decay"])
                    p.add_(update, alpha=-_adjust_lr(lr, group["adjust_lr_fn"], p.shape))
        return loss
