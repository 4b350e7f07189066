"""Weight averaging: Stochastic Weight Averaging (SWA) and exponential moving averages (EMA).

    swa_model = AveragedModel(model)                 # a deep copy, plus n_averaged = 0
    swa_sched = SWALR(opt, swa_lr=0.05)              # anneal each group's lr to swa_lr
    for epoch in range(n):
        train(model, opt)
        if epoch >= swa_start:
            swa_model.update_parameters(model)      # average <- average + (p - average)/(n+1)
            swa_sched.step()
    update_bn(loader, swa_model)                     # recompute BatchNorm statistics

``AveragedModel.update_parameters`` copies the model's parameters on its first call and then
folds them into the average with ``avg_fn(averaged, current, n_averaged)`` (one tensor at a
time, returning the new value) or ``multi_avg_fn(averaged_list, current_list, n_averaged)``
(lists of one dtype, updated in place); by default the equal-weight SWA average. The
``get_*_avg_fn`` factories build the SWA and EMA versions of both. Buffers are copied from the
model, or averaged too with ``use_buffers=True``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable
from copy import deepcopy
from typing import Any

import numpy as np

from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from ..nn.modules.batchnorm import _BatchNorm
from ..nn.modules.module import Module
from .lr_scheduler import LRScheduler, _format_param, _warn_get_lr_outside_step
from .optimizer import Optimizer, _bump, lerp_

__all__ = [
    "AveragedModel",
    "update_bn",
    "SWALR",
    "get_ema_multi_avg_fn",
    "get_swa_multi_avg_fn",
    "get_ema_avg_fn",
    "get_swa_avg_fn",
]

PARAM_LIST = tuple[Tensor, ...] | list[Tensor]


def _is_float_or_complex(t: Tensor) -> bool:
    return t.is_floating_point() or t.is_complex()


def _lerp_in_place(averaged: PARAM_LIST, current: PARAM_LIST, weight: float) -> None:
    """``a.lerp_(c, weight)`` for each pair, with torch's lerp rounding."""
    for a, c in zip(averaged, current, strict=True):
        lerp_(a._data, c._data, weight)
        _bump(a)


def _check_decay(decay: float) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(
            f"Invalid decay value {decay} provided. Please provide a value in [0,1] range."
        )


def get_ema_multi_avg_fn(decay: float = 0.999) -> Callable[..., None]:
    """A ``multi_avg_fn`` for an exponential moving average: ``ema = lerp(ema, p, 1-decay)``.

    Example:
        >>> import tapegrad as torch
        >>> ema = [torch.tensor([0.0])]
        >>> torch.optim.swa_utils.get_ema_multi_avg_fn(0.9)(ema, [torch.tensor([1.0])], 1)
        >>> ema
        [tensor([0.1000])]
    """
    _check_decay(decay)

    def ema_update(ema_param_list: PARAM_LIST, current_param_list: PARAM_LIST, _: Any) -> None:
        with no_grad():
            if _is_float_or_complex(ema_param_list[0]):
                _lerp_in_place(ema_param_list, current_param_list, 1 - decay)
            else:
                for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                    p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn() -> Callable[..., None]:
    """A ``multi_avg_fn`` for the equal-weight average:
    ``avg = lerp(avg, p, 1/(n_averaged+1))``.

    Example:
        >>> import tapegrad as torch
        >>> avg = [torch.tensor([1.0])]
        >>> torch.optim.swa_utils.get_swa_multi_avg_fn()(avg, [torch.tensor([4.0])], 2)
        >>> avg
        [tensor([2.])]
    """

    def swa_update(
        averaged_param_list: PARAM_LIST, current_param_list: PARAM_LIST, num_averaged: Tensor | int
    ) -> None:
        with no_grad():
            if _is_float_or_complex(averaged_param_list[0]):
                # a tensor count gives a tensor weight of the default dtype, rounded to it
                weight = 1 / (num_averaged + 1)
                _lerp_in_place(averaged_param_list, current_param_list, float(weight))
            elif isinstance(num_averaged, Tensor):
                raise RuntimeError(
                    "Integer division with addcdiv is no longer supported, and in a future  "
                    "release addcdiv will perform a true division of tensor1 and tensor2. The "
                    "historic addcdiv behavior can be implemented as (input + value * "
                    "torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as "
                    "(input + value * tensor1 / tensor2) for float inputs. The future addcdiv "
                    "behavior is just the latter implementation: (input + value * tensor1 / "
                    "tensor2), for all dtypes."
                )
            else:
                raise RuntimeError(
                    "For integral input tensors, argument alpha must not be a floating point "
                    "number."
                )

    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> Callable[..., Tensor]:
    """An ``avg_fn`` for an exponential moving average: ``decay*ema + (1-decay)*p``.

    Example:
        >>> import tapegrad as torch
        >>> torch.optim.swa_utils.get_ema_avg_fn(0.9)(torch.tensor([0.0]), torch.tensor([1.0]), 1)
        tensor([0.1000])
    """
    _check_decay(decay)

    def ema_update(ema_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        with no_grad():
            return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn() -> Callable[..., Tensor]:
    """An ``avg_fn`` for the equal-weight average: ``avg + (p - avg) / (n_averaged + 1)``.

    Example:
        >>> import tapegrad as torch
        >>> torch.optim.swa_utils.get_swa_avg_fn()(torch.tensor([1.0]), torch.tensor([4.0]), 2)
        tensor([2.])
    """

    def swa_update(
        averaged_param: Tensor, current_param: Tensor, num_averaged: Tensor | int
    ) -> Tensor:
        with no_grad():
            return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


def _group_by_dtype(
    averaged: list[Tensor], current: list[Tensor]
) -> list[tuple[list[Tensor], list[Tensor]]]:
    """The pairs split by dtype, in order of first appearance (torch groups by device and
    dtype; tapegrad has one device)."""
    groups: dict[Any, tuple[list[Tensor], list[Tensor]]] = {}
    for a, c in zip(averaged, current, strict=True):
        mine, theirs = groups.setdefault(a.dtype, ([], []))
        mine.append(a)
        theirs.append(c)
    return list(groups.values())


class AveragedModel(Module):
    """A copy of ``model`` whose parameters are an average of ``model``'s over time.

    Args:
        model: the module to average (deep-copied).
        device: where to keep the copy (tapegrad: the CPU).
        avg_fn: ``avg_fn(averaged, current, n_averaged) -> new averaged`` for one tensor.
        multi_avg_fn: ``multi_avg_fn(averaged_list, current_list, n_averaged)``, in place.
        use_buffers: average the buffers too (default False: copy them from ``model``).

    Example:
        >>> import tapegrad as torch
        >>> model = torch.nn.Linear(1, 1, bias=False)
        >>> swa = torch.optim.swa_utils.AveragedModel(model)
        >>> for w in (1.0, 2.0, 6.0):
        ...     with torch.no_grad():
        ...         _ = model.weight.fill_(w)
        ...     swa.update_parameters(model)
        >>> swa.module.weight.item(), swa.n_averaged.item()
        (3.0, 3)
    """

    n_averaged: Tensor

    def __init__(self, model: Module, device: Any = None,
                 avg_fn: Callable[[Tensor, Tensor, Tensor | int], Tensor] | None = None,
                 multi_avg_fn: Callable[[PARAM_LIST, PARAM_LIST, Tensor | int], None] | None = None,
                 use_buffers: bool = False) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", Tensor._make(np.array(0, dtype=np.int64)))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """Run the averaged copy."""
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Module) -> None:
        """Fold ``model``'s current parameters (and buffers, with ``use_buffers``) into the
        average; the first call copies them."""
        self_param = (
            itertools.chain(self.module.parameters(), self.module.buffers())
            if self.use_buffers
            else self.parameters()
        )
        model_param = (
            itertools.chain(model.parameters(), model.buffers())
            if self.use_buffers
            else model.parameters()
        )
        averaged: list[Tensor] = []
        current: list[Tensor] = []
        copy_param = bool(self.n_averaged == 0)
        # torch zips without strict here: the shorter of the two lists decides
        for p_averaged, p_model in zip(self_param, model_param):  # noqa: B905
            p_model_ = p_model.detach()
            averaged.append(p_averaged.detach())
            current.append(p_model_)
            if copy_param:
                p_averaged.detach().copy_(p_model_)

        if self.n_averaged > 0:
            if self.multi_avg_fn is not None or self.avg_fn is None:
                for mine, theirs in _group_by_dtype(averaged, current):
                    if self.multi_avg_fn:
                        self.multi_avg_fn(mine, theirs, self.n_averaged)
                    else:  # torch's CPU path: the SWA average one tensor at a time
                        avg_fn = get_swa_avg_fn()
                        for p_averaged, p_model in zip(mine, theirs, strict=True):
                            p_averaged.copy_(avg_fn(p_averaged, p_model, self.n_averaged))
            else:
                for p_averaged, p_model in zip(averaged, current, strict=True):
                    p_averaged.detach().copy_(
                        self.avg_fn(p_averaged.detach(), p_model, self.n_averaged)
                    )

        if not self.use_buffers:
            # the buffers (e.g. BatchNorm's running statistics) follow the model
            for b_swa, b_model in zip(self.module.buffers(), model.buffers(), strict=True):
                b_swa.detach().copy_(b_model.detach())
        with no_grad():
            self.n_averaged += 1


def update_bn(loader: Iterable[Any], model: Module, device: Any = None) -> None:
    """Recompute the BatchNorm running statistics of ``model`` with one pass over ``loader``.

    Each BatchNorm's statistics are reset and its ``momentum`` set to None (a cumulative
    average over the batches) for the pass, then restored, as is the training mode. A batch
    that is a list or tuple contributes its first element.

    Example:
        >>> import tapegrad as torch
        >>> model = torch.nn.BatchNorm1d(1)
        >>> torch.optim.swa_utils.update_bn([torch.tensor([[1.0], [3.0]])], model)
        >>> model.running_mean
        tensor([2.])
    """
    with no_grad():
        momenta = {}
        for module in model.modules():
            if isinstance(module, _BatchNorm):
                module.reset_running_stats()
                momenta[module] = module.momentum
        if not momenta:
            return
        was_training = model.training
        model.train()
        for module in momenta:
            module.momentum = None
        for batch in loader:
            if isinstance(batch, (list, tuple)):
                batch = batch[0]
            if device is not None:
                batch = batch.to(device)
            model(batch)
        for bn_module in momenta:
            bn_module.momentum = momenta[bn_module]
        model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's lr to ``swa_lr`` over ``anneal_epochs`` steps, then hold it.

    With ``t = min(1, step / anneal_epochs)`` and ``alpha = (1 - cos(pi t)) / 2`` (``'cos'``)
    or ``t`` (``'linear'``), the lr is ``swa_lr * alpha + lr0 * (1 - alpha)``, where ``lr0`` is
    recovered from the group's current lr (so the schedule composes with others).

    Args:
        optimizer: the wrapped optimizer.
        swa_lr: the target lr, one for all groups or a list with one per group.
        anneal_epochs: number of annealing steps (default 10; 0: jump to ``swa_lr``).
        anneal_strategy: ``'cos'`` (default) or ``'linear'``.
        last_epoch: index of the last epoch (default -1).

    Example:
        >>> import tapegrad as torch
        >>> opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
        >>> sched = torch.optim.swa_utils.SWALR(opt, swa_lr=0.5, anneal_epochs=2,
        ...                                     anneal_strategy="linear")
        >>> for _ in range(2):
        ...     opt.step()
        ...     sched.step()
        >>> sched.get_last_lr()
        [0.5]
    """

    def __init__(self, optimizer: Optimizer, swa_lr: float | list[float], anneal_epochs: int = 10,
                 anneal_strategy: str = "cos", last_epoch: int = -1) -> None:
        swa_lrs = _format_param("swa_lr", optimizer, swa_lr)
        for lr, group in zip(swa_lrs, optimizer.param_groups, strict=True):
            group["swa_lr"] = lr
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(
                f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}"
            )
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t: float) -> float:
        return t

    @staticmethod
    def _cosine_anneal(t: float) -> float:
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr: float, swa_lr: float, alpha: float) -> float:
        """The lr the schedule started from, given the current lr at annealing ``alpha``."""
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self) -> list[Any]:
        """The annealed lr of each group for the current step."""
        _warn_get_lr_outside_step(self)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [
            self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
            for group in self.optimizer.param_groups
        ]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [
            group["swa_lr"] * alpha + lr * (1 - alpha)
            for group, lr in zip(self.optimizer.param_groups, prev_lrs, strict=True)
        ]

    def _set_anneal_func(self, anneal_strategy: str) -> None:
        self._anneal_strategy = anneal_strategy
        if anneal_strategy == "cos":
            self.anneal_func = self._cosine_anneal
        else:
            self.anneal_func = self._linear_anneal

    def state_dict(self) -> dict[str, Any]:
        """Everything but the optimizer and the anneal function."""
        return {
            key: value
            for key, value in self.__dict__.items()
            if key not in ("optimizer", "anneal_func")
        }

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore a ``state_dict()`` (the anneal function from the saved strategy)."""
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
