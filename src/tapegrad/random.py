"""``torch.random``: the default generator's state, and ``fork_rng`` to run a block without
disturbing it.

    >>> import tapegrad as torch
    >>> _ = torch.manual_seed(0)
    >>> with torch.random.fork_rng():
    ...     _ = torch.rand(3)                  # draws inside the block...
    >>> torch.rand(1)                         # ...leave the stream where it was
    tensor([0.4963])

The generator itself is ``_random.py``'s (torch's MT19937 stream, bit for bit); this module is
torch's module of the same name over it.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Generator, Iterable, Iterator  # noqa: F401 (torch.random.Generator)
from typing import Any

from . import _device
from . import accelerator as _accelerator
from ._random import (
    default_generator,
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
    thread_safe_generator,
)

__all__ = ["fork_rng", "get_rng_state", "initial_seed", "manual_seed", "seed", "set_rng_state",
           "thread_safe_generator", "default_generator"]

_fork_rng_warned_already = False


@contextlib.contextmanager
def fork_rng(devices: Iterable[Any] | None = None, enabled: bool = True,
             _caller: str = "fork_rng", _devices_kw: str = "devices",
             device_type: str | None = None) -> Iterator[None]:
    """Run the block, then put the random state back as it was: the CPU generator's always,
    and the generators of ``devices`` of ``device_type`` (by default the current accelerator's
    type, else "cuda": every device of it, of which a CPU-only build has none).
    ``enabled=False`` forks nothing."""
    if device_type == "meta":
        yield
        return
    current = _accelerator.current_accelerator()
    device_type = device_type or (current.type if current is not None else "cuda")
    device_mod = _device.get_device_module(device_type)
    if not enabled:
        yield
        return
    if devices is None:
        global _fork_rng_warned_already
        count = device_mod.device_count()
        if count > 1 and not _fork_rng_warned_already:
            name = device_type.upper()
            warnings.warn(f"{name} reports that you have {count} available devices, and you have "
                          f"used {_caller} without explicitly specifying which devices are being "
                          f"used. Set the '{_devices_kw}' keyword argument of {_caller} to the "
                          "devices you use.", stacklevel=3)
            _fork_rng_warned_already = True
        devices = list(range(count))
    else:
        devices = list(devices)  # (a generator would be used up by the first pass)
    cpu_state = get_rng_state()
    device_states = [device_mod.get_rng_state(d) for d in devices]
    try:
        yield
    finally:
        set_rng_state(cpu_state)
        for d, state in zip(devices, device_states, strict=True):
            device_mod.set_rng_state(state, d)
