"""Gradient clipping: ``clip_grad_norm_`` (rescale all gradients together) and
``clip_grad_value_`` (clamp each element).

``clip_grad_norm_`` follows torch's computation order: one p-norm per gradient, then the
p-norm of those norms (``total_norm``); ``clip_coef = max_norm / (total_norm + 1e-6)``,
clamped to at most 1.0, multiplies every gradient in place.
"""

from __future__ import annotations

import types
import warnings
from collections.abc import Iterable
from typing import Any

import numpy as np

from ..._creation import tensor as _tensor
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ...ops.reduction import vector_norm
from ...ops.shape import stack

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "get_total_norm",
           "clip_grads_with_norm_"]

_TensorOrTensors = Tensor | Iterable[Tensor]


def get_total_norm(tensors: _TensorOrTensors, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """The p-norm of the p-norms of ``tensors`` (as if they were one concatenated vector)."""
    with no_grad():
        tensors = [tensors] if isinstance(tensors, Tensor) else list(tensors)
        norm_type = float(norm_type)
        if not tensors:
            return _tensor(0.0)
        norms = [vector_norm(t, norm_type) for t in tensors]
        total = vector_norm(stack(norms), norm_type)
        if error_if_nonfinite and bool((total.isnan() | total.isinf()).item()):
            raise RuntimeError(
                f"The total norm of order {norm_type} for gradients from `parameters` is "
                "non-finite, so it cannot be clipped. To disable this error and scale the "
                "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`"
            )
        return total


def clip_grads_with_norm_(parameters: _TensorOrTensors, max_norm: float, total_norm: Tensor,
                          foreach: bool | None = None) -> None:
    """Scale the gradients by ``min(1, max_norm / (total_norm + 1e-6))`` in place."""
    with no_grad():
        if isinstance(parameters, Tensor):
            parameters = [parameters]
        grads = [p.grad for p in parameters if p.grad is not None]
        max_norm = float(max_norm)
        if not grads:
            return
        clip_coef = max_norm / (total_norm + 1e-6)
        clip_coef_clamped = clip_coef.clamp(max=1.0)
        with np.errstate(invalid="ignore"):  # inf * 0 is nan, silently, as in torch
            for g in grads:
                g.mul_(clip_coef_clamped.to(g.dtype))


def clip_grad_norm_(parameters: _TensorOrTensors, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """Rescale the gradients of ``parameters`` so that their total norm is at most
    ``max_norm``; returns the total norm before clipping.

    Example:
        >>> import tapegrad as torch
        >>> w = torch.nn.Parameter(torch.ones(4))
        >>> w.grad = torch.full((4,), 3.0)
        >>> torch.nn.utils.clip_grad_norm_([w], 1.0)
        tensor(6.)
    """
    with no_grad():
        if isinstance(parameters, Tensor):
            parameters = [parameters]
        else:
            is_generator = isinstance(parameters, types.GeneratorType)
            parameters = list(parameters)
            if is_generator and len(parameters) == 0:
                warnings.warn(
                    "`parameters` is an empty generator, no gradient clipping will occur.",
                    stacklevel=3,
                )
        grads = [p.grad for p in parameters if p.grad is not None]
        total_norm = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
        clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
        return total_norm


def clip_grad_norm(parameters: _TensorOrTensors, max_norm: float, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """Deprecated alias of :func:`clip_grad_norm_`."""
    warnings.warn(
        "`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
        "`torch.nn.utils.clip_grad_norm_`.",
        FutureWarning,
        stacklevel=2,
    )
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters: _TensorOrTensors, clip_value: float,
                     foreach: bool | None = None) -> None:
    """Clamp every gradient element into [-clip_value, clip_value] in place."""
    with no_grad():
        if isinstance(parameters, Tensor):
            parameters = [parameters]
        clip_value = float(clip_value)
        for p in parameters:
            g: Any = p.grad
            if g is not None:
                g.clamp_(min=-clip_value, max=clip_value)
