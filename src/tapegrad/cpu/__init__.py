"""``torch.cpu``: the CPU as a device module; here for ``torch.cpu.amp`` (see tapegrad.amp)."""

from __future__ import annotations

from . import amp

__all__ = ["amp", "device_count", "is_available", "synchronize"]


def is_available() -> bool:
    """The CPU is always there."""
    return True


def device_count() -> int:
    return 1


def synchronize(device: object = None) -> None:
    """Nothing to wait for: CPU ops run to completion when called."""
