"""``SparseAdam``: the masked Adam that torch runs on sparse-layout gradients (those of
``nn.Embedding(sparse=True)``): only the rows a batch touched update their moments and values.

tapegrad has no sparse-layout tensors: every gradient it produces is dense. So, as in torch
for a dense gradient, ``step()`` raises ``RuntimeError: SparseAdam does not support dense
gradients, please consider Adam instead``. The class exists so that programs that build it (and
its validation, state_dict and repr) run unchanged; use ``Adam`` for the update itself.

torch's update, for reference (with ``g`` the coalesced sparse gradient and its rows ``i``)::

    m[i] += (g - m[i]) * (1-beta1);  v[i] += (g*g - v[i]) * (1-beta2)
    p[i] -= lr * sqrt(1 - beta2**step) / (1 - beta1**step) * m[i] / (sqrt(v[i]) + eps)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from .optimizer import Optimizer, _check_betas, _run_closure

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """SparseAdam: Adam for sparse gradients (tapegrad's gradients are all dense, see above).

    Args:
        params: tensors or parameter groups to optimize (dense, real).
        lr: learning rate (default 1e-3).
        betas: coefficients of the running averages (default (0.9, 0.999)).
        eps: term added to the denominator (default 1e-8).
        maximize: maximize the objective (default False).

    Example:
        >>> import tapegrad as torch
        >>> opt = torch.optim.SparseAdam([torch.zeros(3, requires_grad=True)], lr=0.1)
        >>> opt.defaults["lr"]
        0.1
    """

    def __init__(self, params: Any, lr: float | Tensor = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 maximize: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        # SparseAdam alone wants lr and eps strictly positive
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        _check_betas(betas)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "maximize": maximize}
        super().__init__(params, defaults)
        complex_params = []
        for index, group in enumerate(self.param_groups):
            for d_index, param in enumerate(group["params"]):
                if param.is_complex():
                    complex_params.append([index, d_index])
        if complex_params:
            raise ValueError(
                f"Complex params at indices {complex_params}: SparseAdam does not support "
                "complex parameters"
            )

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Evaluate ``closure``; then any parameter with a (necessarily dense) gradient raises
        torch's error for a dense gradient."""
        with no_grad():
            loss = _run_closure(closure)
            for group in self.param_groups:
                for p in group["params"]:
                    if p._grad is not None:
                        raise RuntimeError(
                            "SparseAdam does not support dense gradients, please consider Adam "
                            "instead"
                        )
        return loss
