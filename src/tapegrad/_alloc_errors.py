"""Allocations that cannot be made, reported as torch reports them.

NumPy refuses an array in two ways: ``ValueError("array is too big; ...")`` when the size in
bytes does not fit its index type, and ``MemoryError`` when the C library's allocator says no.
torch raises ``RuntimeError`` in both cases, so that ``except RuntimeError`` catches them:

* ``Storage size calculation overflowed with sizes=[...]`` when the number of bytes does not fit
  a signed 64-bit integer (checked before anything is allocated);
* ``[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate memory:
  you tried to allocate N bytes. Error code 12 (Cannot allocate memory)`` when the allocator
  fails (which sizes fail depends on the machine: its memory and the kernel's overcommit rule).

The factories check sizes with :func:`check_sizes`; the op dispatcher (``ops/_registry.py``),
the factories and the backward engine turn a ``MemoryError`` into torch's error with
:func:`out_of_memory`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

_INT64_MAX = (1 << 63) - 1


def storage_overflow(sizes: Any) -> RuntimeError:
    return RuntimeError(
        f"Storage size calculation overflowed with sizes=[{', '.join(str(int(s)) for s in sizes)}]")


def check_sizes(sizes: tuple, itemsize: int) -> None:
    """torch's error when ``prod(sizes) * itemsize`` bytes do not fit an int64."""
    nbytes = itemsize
    for s in sizes:
        nbytes *= s
    if nbytes > _INT64_MAX:
        raise storage_overflow(sizes)


def out_of_memory(exc: BaseException, nbytes: int | None = None) -> RuntimeError:
    """torch's allocator error for NumPy's ``MemoryError`` (the bytes asked for: ``nbytes``,
    or what NumPy says it tried)."""
    shape, dtype = getattr(exc, "shape", None), getattr(exc, "dtype", None)
    if nbytes is None and shape is not None and dtype is not None:
        nbytes = int(np.prod(shape, dtype=object)) * np.dtype(dtype).itemsize
    if nbytes is not None:
        asked = f"you tried to allocate {nbytes} bytes."
    else:
        asked = "you tried to allocate more memory than is available."
    return RuntimeError(
        "[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate "
        f"memory: {asked} Error code 12 (Cannot allocate memory)")
