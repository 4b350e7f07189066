"""``torch.amp``: automatic mixed precision, as a CPU-only build of torch has it for CUDA.

Mixed-precision training code reads::

    scaler = torch.amp.GradScaler("cuda")
    with torch.autocast(device_type="cuda", dtype=torch.float16):
        loss = loss_fn(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()

Without CUDA, torch warns once and disables both: ``autocast`` changes nothing and the scaler
passes the loss through and calls ``optimizer.step()``. tapegrad does exactly that. Autocast
and gradient scaling on the CPU (which do change dtypes in torch) are not implemented yet and
raise ``NotImplementedError`` rather than compute in another precision than torch would.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any, Literal

from . import _dtype
from ._device import device as _device

__all__ = ["GradScaler", "autocast", "custom_bwd", "custom_fwd", "is_autocast_available"]


def is_autocast_available(device_type: str) -> bool:
    return _device(device_type).type in ("cpu", "cuda")


def _cpu_amp_missing(what: str) -> NotImplementedError:
    return NotImplementedError(
        f"tapegrad does not implement {what} on the CPU yet (torch would compute in lower "
        f"precision there); pass enabled=False, or leave it out"
    )


class autocast:
    """``torch.autocast(device_type, dtype=None, enabled=True, cache_enabled=None)``.

    For "cuda" it warns and is disabled, as on a CPU-only torch: the block runs unchanged.
    """

    def __init__(self, device_type: str, dtype: Any = None, enabled: bool = True,
                 cache_enabled: bool | None = None) -> None:
        if not isinstance(device_type, str):
            raise ValueError(
                f"Expected `device_type` of type `str`, got: `{type(device_type)}`"
            )
        self.device = _device(device_type).type
        self.fast_dtype = dtype if dtype is not None else (
            _dtype.float16 if self.device == "cuda" else _dtype.bfloat16)
        self._cache_enabled = True if cache_enabled is None else cache_enabled
        if enabled and self.device == "cuda":
            warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.",
                          UserWarning, stacklevel=2)
            enabled = False
        if enabled:
            raise _cpu_amp_missing("autocast")
        self._enabled = False

    def __enter__(self) -> autocast:
        return self

    def __exit__(self, *exc: Any) -> Literal[False]:
        return False

    def __call__(self, func: Callable) -> Callable:
        @functools.wraps(func)
        def decorated(*args: Any, **kwargs: Any) -> Any:
            with self:
                return func(*args, **kwargs)

        return decorated


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """False: autocast is never on in tapegrad."""
    return False


def custom_fwd(fwd: Callable | None = None, *, device_type: str = "cuda",
               cast_inputs: Any = None) -> Callable:
    """Decorator for a custom Function's forward under autocast: nothing to do here."""
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)
    return fwd


def custom_bwd(bwd: Callable | None = None, *, device_type: str = "cuda") -> Callable:
    """Decorator for a custom Function's backward under autocast: nothing to do here."""
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)
    return bwd


class GradScaler:
    """``torch.amp.GradScaler``: for "cuda" it warns and is disabled, as on a CPU-only torch.

    Disabled, ``scale(loss)`` is ``loss``, ``step(opt)`` is ``opt.step()``, and ``unscale_``
    and ``update`` do nothing, so an AMP training loop runs in full precision unchanged.
    """

    def __init__(self, device: str = "cuda", init_scale: float = 2.0**16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        self._device = device
        if enabled and _device(device).type == "cuda":
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  "
                          "Disabling.", UserWarning, stacklevel=2)
            enabled = False
        if enabled:
            raise _cpu_amp_missing("GradScaler")
        self._enabled = False

    def is_enabled(self) -> bool:
        return self._enabled

    def scale(self, outputs: Any) -> Any:
        return outputs

    def unscale_(self, optimizer: Any) -> None:
        return None

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale: Any = None) -> None:
        return None

    def get_scale(self) -> float:
        return 1.0

    def get_growth_factor(self) -> float:
        return self._growth_factor  # type: ignore[attr-defined]  # torch: AttributeError

    def get_backoff_factor(self) -> float:
        return self._backoff_factor  # type: ignore[attr-defined]

    def get_growth_interval(self) -> int:
        return self._growth_interval  # type: ignore[attr-defined]

    def state_dict(self) -> dict:
        return {}

    def load_state_dict(self, state_dict: dict) -> None:
        return None
