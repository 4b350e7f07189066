"""``torch.amp``: automatic mixed precision, as a CPU-only build of torch has it for CUDA.

Mixed-precision training code reads::

    scaler = torch.amp.GradScaler("cuda")
    with torch.autocast(device_type="cuda", dtype=torch.float16):
        loss = loss_fn(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()

Without CUDA, torch warns once and disables both: ``autocast`` changes nothing and the scaler
passes the loss through and calls ``optimizer.step()``. tapegrad does exactly that.

On the CPU, ``GradScaler("cpu")`` scales as torch's does (``_amp_update_scale_`` below holds
the rule), and ``autocast("cpu", dtype=torch.bfloat16 | torch.float16)`` runs the ops on
torch's CPU lists in the low type or in float32 (_autocast.py has the mechanism and the
per-thread state, _autocast_lists.py the lists).
"""

from __future__ import annotations

import functools
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal

import numpy as np

from .. import _creation, _dtype
from .._device import device as _device
from .._naming import public
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad

__all__ = ["GradScaler", "autocast", "custom_bwd", "custom_fwd", "is_autocast_available"]


def _autocast_module() -> Any:
    """The autocast mechanism and its per-thread state (tapegrad/_autocast.py)."""
    # _autocast: loaded on first use, so importing tapegrad.cuda or tapegrad.amp does not load it
    from .. import _autocast

    return _autocast


def is_autocast_available(device_type: str) -> bool:
    """Whether ``device_type`` has an autocast (torch's list: cpu, cuda, xpu, mps, ...)."""
    return _device(device_type).type in _autocast_module()._DEFAULT_DTYPES


_SUPPORTED = "torch.bfloat16, torch.float16"


@public(".amp.autocast_mode")
class autocast:
    """``torch.autocast(device_type, dtype=None, enabled=True, cache_enabled=None)``: inside the
    region, the ops on autocast's lists compute in ``dtype`` (bfloat16 by default on the CPU),
    or in float32, or in their inputs' widest type (see _autocast_lists.py).

    A context manager and a decorator. Regions nest; ``enabled=False`` turns autocast off in an
    inner region. For "cuda" it warns and is disabled, as on a CPU-only torch.

    Example:
        >>> import tapegrad as torch
        >>> a = torch.ones(2, 2)
        >>> with torch.autocast("cpu"):
        ...     (a @ a).dtype
        torch.bfloat16
    """

    def __init__(self, device_type: str, dtype: Any = None, enabled: bool = True,
                 cache_enabled: bool | None = None) -> None:
        _autocast = _autocast_module()

        if not isinstance(device_type, str):
            kind = type(device_type)
            shown = (f"<class '{__name__.split('.')[0]}.device'>" if kind is _device
                     else str(kind))  # a torch.device, as torch names its class
            raise ValueError(f"Expected `device_type` of type `str`, got: `{shown}`")
        self.fast_dtype = _autocast.get_autocast_dtype(device_type) if dtype is None else dtype
        self.device = device_type
        if not is_autocast_available(self.device):
            raise RuntimeError(
                f"User specified an unsupported autocast device_type '{self.device}'")
        self._cache_enabled = (_autocast.is_autocast_cache_enabled() if cache_enabled is None
                               else cache_enabled)
        if enabled:
            if self.device == "cuda":
                warnings.warn("CUDA is not available or torch_xla is imported. Disabling "
                              "autocast.", UserWarning, stacklevel=2)
                enabled = False
            elif self.fast_dtype not in (_dtype.bfloat16, _dtype.float16):
                name = self.device.upper()
                warnings.warn(f"In {name} autocast, but the target dtype is not supported. "
                              f"Disabling autocast.\n{name} Autocast only supports dtypes of "
                              f"{_SUPPORTED} currently.", UserWarning, stacklevel=2)
                enabled = False
        self._enabled = enabled

    def __enter__(self) -> autocast:
        _autocast = _autocast_module()

        self.prev_cache_enabled = _autocast.is_autocast_cache_enabled()
        self.prev = _autocast.is_autocast_enabled(self.device)
        self.prev_fastdtype = _autocast.get_autocast_dtype(self.device)
        _autocast.set_autocast_dtype(self.device, self.fast_dtype)
        _autocast.set_autocast_enabled(self.device, self._enabled)
        _autocast.autocast_increment_nesting()
        _autocast.set_autocast_cache_enabled(self._cache_enabled)
        return self

    def __exit__(self, *exc: Any) -> Literal[False]:
        _autocast = _autocast_module()

        if _autocast.autocast_decrement_nesting() == 0:
            _autocast.clear_autocast_cache()
        _autocast.set_autocast_enabled(self.device, self.prev)
        _autocast.set_autocast_dtype(self.device, self.prev_fastdtype)
        _autocast.set_autocast_cache_enabled(self.prev_cache_enabled)
        return False

    def __call__(self, func: Callable) -> Callable:
        if not callable(func):
            raise TypeError(
                f"autocast()(func) requires a callable, but got {type(func).__name__}. "
                "Did you mean to use autocast as a context manager? For example:\n"
                "    with torch.autocast(device_type=...):\n"
                "        output = model(input)"
            )

        @functools.wraps(func)
        def decorate_autocast(*args: Any, **kwargs: Any) -> Any:
            with self:
                return func(*args, **kwargs)

        return decorate_autocast


def is_autocast_enabled(device_type: str = "cuda") -> bool:
    """Whether autocast is on for ``device_type`` in this thread (no argument: "cuda")."""
    _autocast = _autocast_module()

    return _autocast.is_autocast_enabled(device_type)


def _cast_inputs(value: Any, device_type: str, dtype: Any) -> Any:
    """Cast the floating-point (not float64) tensors in ``value``, through lists, tuples,
    dicts and other iterables, as custom_fwd's ``cast_inputs`` does."""
    if isinstance(value, Tensor):
        eligible = (value.is_floating_point() and value.device.type == device_type
                    and value.dtype is not _dtype.float64)
        return value.to(dtype) if eligible else value
    if isinstance(value, (str, bytes)):
        return value
    if isinstance(value, Mapping):
        return {_cast_inputs(k, device_type, dtype): _cast_inputs(v, device_type, dtype)
                for k, v in value.items()}
    if isinstance(value, Iterable) and not _is_ndarray(value):
        items = (_cast_inputs(v, device_type, dtype) for v in value)
        if isinstance(value, (list, tuple)):
            return type(value)(items)
        return items
    return value


def _is_ndarray(value: Any) -> bool:
    return isinstance(value, np.ndarray)


def custom_fwd(fwd: Callable | None = None, *, device_type: str,
               cast_inputs: Any = None) -> Callable:
    """Decorator for a custom Function's ``forward``. With ``cast_inputs``, inside an autocast
    region it casts the floating-point tensor arguments to that dtype and runs ``forward`` with
    autocast off; without, ``forward`` runs under the current autocast state. Either way it
    records that state for ``custom_bwd``."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)
    _autocast = _autocast_module()

    @functools.wraps(fwd)
    def decorate_fwd(*args: Any, **kwargs: Any) -> Any:
        args[0]._dtype = _autocast.get_autocast_dtype(device_type)
        if cast_inputs is None:
            args[0]._fwd_used_autocast = _autocast.is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        args[0]._fwd_used_autocast = False
        if _autocast.is_autocast_enabled(device_type):
            with autocast(device_type=device_type, enabled=False):
                return fwd(*_cast_inputs(args, device_type, cast_inputs),
                           **_cast_inputs(kwargs, device_type, cast_inputs))
        return fwd(*args, **kwargs)

    return decorate_fwd


def custom_bwd(bwd: Callable | None = None, *, device_type: str) -> Callable:
    """Decorator for a custom Function's ``backward``: runs it under the autocast state its
    ``forward`` saw (see ``custom_fwd``)."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args: Any, **kwargs: Any) -> Any:
        with autocast(device_type=device_type, enabled=args[0]._fwd_used_autocast,
                      dtype=args[0]._dtype):
            return bwd(*args, **kwargs)

    return decorate_bwd


class _Stage:
    """Where one optimizer is in the scaler's iteration: READY, UNSCALED, STEPPED."""

    READY, UNSCALED, STEPPED = 0, 1, 2


def _fresh_optimizer_state() -> dict:
    return {"stage": _Stage.READY, "found_inf_per_device": {}}


def _amp_foreach_non_finite_check_and_unscale_(grads: list, found_inf: Any,
                                               inv_scale: Any) -> None:
    """``torch._amp_foreach_non_finite_check_and_unscale_``: multiply every gradient by
    ``inv_scale`` in place, and set ``found_inf`` to 1.0 if any of them holds an inf or a NaN.

    Every gradient is multiplied, found or not (torch's CPU kernel does the same); the step
    that follows is the one that is skipped.
    """

    for g in grads:
        if not g.isfinite().all().item():
            found_inf.fill_(1.0)
        g.mul_(inv_scale)  # in float32, rounded once to g's dtype (torch's "opmath")


def _amp_update_scale_(scale: Any, growth_tracker: Any, found_inf: Any, growth_factor: float,
                       backoff_factor: float, growth_interval: int) -> Any:
    """``torch._amp_update_scale_``: the loss scale's rule, in float32.

    An inf or NaN this iteration: scale *= backoff_factor and the run of good steps restarts.
    Otherwise one more good step; after ``growth_interval`` of them, scale *= growth_factor
    (unless that overflows float32) and the count restarts.
    """
    current = np.float32(scale.item())
    if found_inf.item():
        scale.fill_(float(current * np.float32(backoff_factor)))
        growth_tracker.fill_(0)
    else:
        successful = int(growth_tracker.item()) + 1
        if successful == growth_interval:
            grown = current * np.float32(growth_factor)
            if np.isfinite(grown):
                scale.fill_(float(grown))
            growth_tracker.fill_(0)
        else:
            growth_tracker.fill_(successful)
    return scale


@public(".amp.grad_scaler")
class GradScaler:
    """``torch.amp.GradScaler``: dynamic loss scaling, so that small float16 gradients survive.

    A float16 gradient below 6e-8 rounds to zero. The scaler multiplies the loss by a large
    factor S before ``backward`` (every gradient is then S times larger, above the underflow
    line), divides the gradients by S again before the optimizer uses them (``unscale_``),
    skips the step when that finds an inf or a NaN (S was too large: the gradients overflowed),
    and adapts S (``update``): halve it after an overflow, double it after ``growth_interval``
    good steps in a row. The arithmetic is torch's, so a run's sequence of scales equals torch's.

    For "cuda" it warns and is disabled, as on a CPU-only torch: ``scale(loss)`` is ``loss``,
    ``step(opt)`` is ``opt.step()``, and ``unscale_`` and ``update`` do nothing.
    """

    def __init__(self, device: str = "cuda", init_scale: float = 2.0**16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        self._device = device
        if enabled and _device(device).type == "cuda":
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  "
                          "Disabling.", UserWarning, stacklevel=2)
            enabled = False
        self._enabled = enabled
        if enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale: Any = None  # a float32 0-d tensor, created by the first scale()
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker: Any = None  # an int32 0-d tensor: good steps in a row
            self._per_optimizer_states: dict[int, dict] = defaultdict(_fresh_optimizer_state)

    def _check_scale_growth_tracker(self, funcname: str) -> tuple:
        fix = ("This may indicate your script did not use scaler.scale(loss or outputs) "
               "earlier in the iteration.")
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  " + fix)
        if self._growth_tracker is None:
            raise AssertionError(f"Attempted {funcname} but _growth_tracker is None.  " + fix)
        return self._scale, self._growth_tracker

    def _lazy_init_scale_growth_tracker(self) -> None:
        self._scale = _creation.full((), self._init_scale, dtype=_dtype.float32)
        self._growth_tracker = _creation.full((), self._init_growth_tracker,
                                              dtype=_dtype.int32)

    def is_enabled(self) -> bool:
        return self._enabled

    def scale(self, outputs: Any) -> Any:
        """``outputs * S``: a tensor, or a list/tuple/iterable of them (same structure)."""
        if not self._enabled:
            return outputs
        def apply_scale(val: Any) -> Any:
            if isinstance(val, Tensor):
                if self._scale is None:
                    self._lazy_init_scale_growth_tracker()
                return val * self._scale
            if isinstance(val, Iterable):
                scaled = map(apply_scale, val)
                if isinstance(val, (list, tuple)):
                    return type(val)(scaled)
                return scaled
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")

        return apply_scale(outputs)

    def _unscale_grads_(self, optimizer: Any, inv_scale: Any, found_inf: Any,
                        allow_fp16: bool) -> dict:
        by_dtype: dict[Any, list] = defaultdict(list)
        with no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    if not isinstance(param, Tensor):
                        raise AssertionError(
                            f"expected param to be torch.Tensor, got {type(param).__name__}")
                    if param.grad is None:
                        continue
                    if not allow_fp16 and param.grad.dtype == _dtype.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    by_dtype[param.grad.dtype].append(param.grad)
            for grads in by_dtype.values():
                _amp_foreach_non_finite_check_and_unscale_(grads, found_inf, inv_scale)
        return {found_inf.device: found_inf}

    def unscale_(self, optimizer: Any) -> None:
        """Divide ``optimizer``'s gradients by S (for clipping them, say), once per step."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] == _Stage.UNSCALED:
            raise RuntimeError(
                "unscale_() has already been called on this optimizer since the last update().")
        if state["stage"] == _Stage.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        # 1/S in float64, then rounded to float32, as torch computes it
        inv_scale = self._scale.double().reciprocal().float()
        found_inf = _creation.full((), 0.0, dtype=_dtype.float32)
        state["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale, found_inf,
                                                             False)
        state["stage"] = _Stage.UNSCALED

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """Unscale (if not done yet), then ``optimizer.step()`` unless a gradient is inf/NaN."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scale_growth_tracker("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] == _Stage.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] == _Stage.READY:
            self.unscale_(optimizer)
        if len(state["found_inf_per_device"]) == 0:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = None
        if not sum(v.item() for v in state["found_inf_per_device"].values()):
            retval = optimizer.step(*args, **kwargs)
        state["stage"] = _Stage.STEPPED
        return retval

    def update(self, new_scale: Any = None) -> None:
        """Adapt S from what this iteration's ``unscale_`` calls found (or set it)."""
        if not self._enabled:
            return
        scale, growth_tracker = self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, float):
                scale.fill_(new_scale)
            else:
                reason = ("new_scale should be a float or a 1-element torch.cuda.FloatTensor or "
                          "torch.FloatTensor with requires_grad=False.")
                if (new_scale.device.type != self._device or new_scale.numel() != 1
                        or new_scale.requires_grad is True):
                    raise AssertionError(reason)
                scale.copy_(new_scale)
        else:
            found_infs = [found_inf for state in self._per_optimizer_states.values()
                          for found_inf in state["found_inf_per_device"].values()]
            if len(found_infs) == 0:
                raise AssertionError("No inf checks were recorded prior to update.")
            combined = found_infs[0]
            for extra in found_infs[1:]:
                combined += extra
            _amp_update_scale_(scale, growth_tracker, combined, self._growth_factor,
                               self._backoff_factor, self._growth_interval)
        self._per_optimizer_states = defaultdict(_fresh_optimizer_state)

    def get_scale(self) -> float:
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else self._scale.item()

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = new_interval

    def _get_growth_tracker(self) -> int:
        if not self._enabled:
            return 0
        if self._growth_tracker is None:
            return self._init_growth_tracker
        return int(self._growth_tracker.item())

    def state_dict(self) -> dict:
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict: dict) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        if self._enabled:
            if len(self._per_optimizer_states) != 0:
                raise AssertionError("A GradScaler instance may only be pickled at the beginning "
                                     "of an iteration, or at the end after scaler.update().")
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = None
            state["_growth_tracker"] = None
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
