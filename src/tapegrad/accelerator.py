"""``torch.accelerator``: the device-agnostic accelerator API, with no accelerator present.

``current_accelerator()`` is None and ``device_count()`` is 0, so device-agnostic code such as
``torch.accelerator.current_accelerator() or torch.device("cpu")`` picks the CPU; the calls that
need a device raise torch's ``RuntimeError: Cannot access accelerator device when none is
available.``
"""

from __future__ import annotations

import warnings
from typing import Any

from ._device import NO_ACCELERATOR

__all__ = [
    "current_accelerator", "current_device_idx", "current_device_index", "current_stream",
    "device_count", "device_index", "empty_cache", "is_available", "set_device_idx",
    "set_device_index", "set_stream", "synchronize",
]


def is_available() -> bool:
    """False: tapegrad runs on the CPU."""
    return False


def current_accelerator(check_available: bool = False) -> Any:
    """None: there is no accelerator."""
    return None


def device_count() -> int:
    return 0


def _none(*args: Any, **kwargs: Any) -> Any:
    raise RuntimeError(NO_ACCELERATOR)


current_device_index = set_device_index = synchronize = current_stream = _none
empty_cache = empty_host_cache = memory_allocated = max_memory_allocated = _none
memory_reserved = max_memory_reserved = memory_stats = get_memory_info = _none
reset_peak_memory_stats = reset_accumulated_memory_stats = get_device_capability = _none


def current_device_idx() -> int:
    warnings.warn("Use `current_device_index` instead.", FutureWarning, stacklevel=2)
    return _none()


def set_device_idx(device: Any) -> None:
    warnings.warn("Use `set_device_index` instead.", FutureWarning, stacklevel=2)
    _none()


def set_stream(stream: Any) -> None:
    raise TypeError(
        "_accelerator_setStream(): incompatible function arguments. The following argument "
        f"types are supported:\n    1. (arg0: torch.Stream) -> None\n\nInvoked with: {stream}"
    )


class device_index:
    """``with torch.accelerator.device_index(i)``: None selects nothing; an index fails."""

    def __init__(self, device: Any, /) -> None:
        self.idx = device

    def __enter__(self) -> None:
        if self.idx is not None:
            _none()

    def __exit__(self, *exc: Any) -> None:
        if self.idx is not None:
            _none()
