"""``torch.cpu.amp``: the deprecated spellings of ``torch.amp`` for the CPU."""

from __future__ import annotations

import warnings
from typing import Any

from ... import amp as _amp
from ..._dtype import bfloat16

__all__ = ["GradScaler", "autocast"]


class autocast(_amp.autocast):
    """``torch.cpu.amp.autocast(enabled=True, dtype=torch.bfloat16, cache_enabled=True)``:
    ``torch.amp.autocast("cpu", ...)``, with torch's deprecation warning."""

    def __init__(self, enabled: bool = True, dtype: Any = bfloat16,
                 cache_enabled: bool = True) -> None:
        warnings.warn("`torch.cpu.amp.autocast(args...)` is deprecated. Please use "
                      "`torch.amp.autocast('cpu', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cpu", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(_amp.GradScaler):
    """``torch.cpu.amp.GradScaler(...)``: ``torch.amp.GradScaler("cpu", ...)``, with torch's
    deprecation warning."""

    def __init__(self, init_scale: float = 2.0**16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000,
                 enabled: bool = True) -> None:
        warnings.warn("`torch.cpu.amp.GradScaler(args...)` is deprecated. Please use "
                      "`torch.amp.GradScaler('cpu', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cpu", init_scale, growth_factor, backoff_factor, growth_interval,
                         enabled)
