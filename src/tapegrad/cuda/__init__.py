"""``torch.cuda`` as a CPU-only build of torch has it: no device, and torch's answers.

tapegrad computes on the CPU only, so this is the namespace of a torch built without CUDA,
call for call (each checked against such a build):

* what a program asks before choosing a device answers plainly: ``is_available()`` is False,
  ``device_count()`` is 0, ``is_initialized()`` is False, the memory counters are 0;
* what such a build lets a program call harmlessly does nothing: ``manual_seed``,
  ``manual_seed_all``, ``seed``, ``seed_all``, ``empty_cache``, ``set_rng_state``, a
  ``device(-1)`` or ``stream(None)`` context;
* everything that needs a GPU raises what that build raises, mostly
  ``AssertionError: Torch not compiled with CUDA enabled`` (``current_device``,
  ``synchronize``, ``get_device_name``, ``init``, ...).

Example:
    >>> import tapegrad as torch
    >>> device = "cuda" if torch.cuda.is_available() else "cpu"
    >>> device
    'cpu'
"""

from __future__ import annotations

import warnings
from collections import OrderedDict
from typing import Any, Literal

from .._device import NO_CUDA
from .._device import device as _torch_device
from .._legacy import cuda_tensor_types
from .._naming import public
from . import amp

__all__ = [
    "OutOfMemoryError", "Event", "Stream", "StreamContext", "amp", "can_device_access_peer",
    "current_device", "current_stream", "default_stream", "device", "device_count",
    "device_of", "empty_cache", "get_arch_list", "get_device_capability", "get_device_name",
    "get_device_properties", "get_gencode_flags", "get_rng_state", "get_rng_state_all", "init",
    "initial_seed", "ipc_collect", "is_available", "is_bf16_supported", "is_initialized",
    "manual_seed", "manual_seed_all", "max_memory_allocated", "max_memory_reserved",
    "mem_get_info", "memory_allocated", "memory_reserved", "memory_stats", "memory_summary",
    "reset_peak_memory_stats", "seed", "seed_all", "set_device", "set_rng_state",
    "set_rng_state_all", "set_stream", "stream", "synchronize",
]


def _no_cuda(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError(NO_CUDA)


def _missing_binding(name: str) -> AttributeError:
    # A CPU-only torch reaches for a CUDA binding its C extension was built without.
    return AttributeError(f"module 'torch._C' has no attribute '{name}'")


@public("")
class OutOfMemoryError(RuntimeError):
    """``torch.cuda.OutOfMemoryError`` (``torch.OutOfMemoryError``)."""

_initialized = False


# -- availability -----------------------------------------------------------------------------


def is_available() -> bool:
    """False: tapegrad has no CUDA device."""
    return False


def device_count() -> int:
    """0: tapegrad has no CUDA device."""
    return 0


def is_initialized() -> bool:
    return False


def is_bf16_supported(including_emulation: bool = True) -> bool:
    return False


def is_tf32_supported() -> bool:
    return False


def get_arch_list() -> list[str]:
    return []


def get_gencode_flags() -> str:
    return ""


init = _lazy_init = current_device = current_blas_handle = _no_cuda
get_device_name = get_device_capability = get_device_properties = _no_cuda
synchronize = ipc_collect = mem_get_info = can_device_access_peer = _no_cuda
current_stream = default_stream = set_sync_debug_mode = get_sync_debug_mode = _no_cuda
caching_allocator_alloc = caching_allocator_delete = set_per_process_memory_fraction = _no_cuda
cudart = _no_cuda


def _nvml(*args: Any, **kwargs: Any) -> Any:
    raise ModuleNotFoundError("nvidia-ml-py does not seem to be installed or it can't be imported.")


utilization = memory_usage = temperature = power_draw = clock_rate = _nvml


def list_gpu_processes(device: Any = None) -> str:
    return "pynvml module not found, please install nvidia-ml-py"


def _device_index(dev: Any, optional: bool = False) -> int | None:
    """A CUDA device's index from an int, a string or a device (torch's checks)."""
    if isinstance(dev, str):
        dev = _torch_device(dev)
    index: Any = None
    if isinstance(dev, _torch_device):
        if dev.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {dev}")
        index = dev.index
    elif isinstance(dev, int) and not isinstance(dev, bool):
        index = dev
    if index is None and not optional:
        raise ValueError(
            f"Expected a torch.device with a specified index or an integer, but got:{dev}"
        )
    return index


def set_device(device: Any) -> None:
    """A negative index is ignored; any other CUDA device fails as on a CPU-only build."""
    index = _device_index(device)
    if index is not None and index >= 0:
        raise _missing_binding("_cuda_setDevice")


class device:
    """``with torch.cuda.device(i)``: selecting a GPU, which a CPU-only build cannot."""

    def __init__(self, device: Any) -> None:
        self.idx = _device_index(device, optional=True)
        self.prev_idx = -1

    def __enter__(self) -> None:
        if self.idx is None:  # torch compares the index with -1
            raise TypeError("'<' not supported between instances of 'NoneType' and 'int'")
        if self.idx == -1:
            return
        raise RuntimeError("PyTorch was compiled without CUDA support")

    def __exit__(self, *exc: Any) -> Literal[False]:
        return False


class device_of(device):
    """``with torch.cuda.device_of(tensor)``: a CPU tensor selects nothing."""

    def __init__(self, obj: Any) -> None:
        super().__init__(-1)


# -- streams and events ------------------------------------------------------------------------


class Stream:
    """``torch.cuda.Stream``: cannot be made without CUDA."""

    def __new__(cls, device: Any = None, priority: int = 0, **kwargs: Any) -> Stream:
        raise RuntimeError("torch.cuda.Stream requires CUDA support")


class Event:
    """``torch.cuda.Event``: cannot be made without CUDA."""

    def __new__(cls, enable_timing: bool = False, blocking: bool = False,
                interprocess: bool = False) -> Event:
        raise RuntimeError("Tried to instantiate dummy base class Event")


class StreamContext:
    """``with torch.cuda.stream(s)``: with ``s`` None (the only stream here), nothing."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream

    def __enter__(self) -> None:
        if self.stream is not None:
            _no_cuda()

    def __exit__(self, *exc: Any) -> None:
        return None


def stream(stream: Any) -> StreamContext:
    return StreamContext(stream)


def set_stream(stream: Any) -> None:
    if stream is not None:
        _no_cuda()


# -- random numbers ----------------------------------------------------------------------------


def manual_seed(seed: Any) -> None:
    """Nothing to seed (a CPU-only build queues the call for a GPU that never comes)."""
    int(seed)


def manual_seed_all(seed: Any) -> None:
    int(seed)


def seed() -> None:
    return None


def seed_all() -> None:
    return None


initial_seed = get_rng_state = _no_cuda


def get_rng_state_all() -> list:
    return []


def set_rng_state(new_state: Any, device: Any = "cuda") -> None:
    return None


def set_rng_state_all(new_states: Any) -> None:
    return None


# -- memory ------------------------------------------------------------------------------------


def empty_cache() -> None:
    """Nothing cached: does nothing."""
    return None


def memory_allocated(device: Any = None) -> int:
    return 0


max_memory_allocated = memory_reserved = max_memory_reserved = memory_allocated


def memory_cached(device: Any = None) -> int:
    warnings.warn("`torch.cuda.memory_cached` has been renamed to `torch.cuda.memory_reserved`",
                  FutureWarning, stacklevel=2)
    return 0


def max_memory_cached(device: Any = None) -> int:
    warnings.warn(
        "`torch.cuda.max_memory_cached` has been renamed to `torch.cuda.max_memory_reserved`",
        FutureWarning, stacklevel=2,
    )
    return 0


def memory_stats(device: Any = None) -> OrderedDict:
    return OrderedDict()


def host_memory_stats() -> OrderedDict:
    return OrderedDict()


def memory_summary(device: Any = None, abbreviated: bool = False) -> str:
    raise KeyError("allocated_bytes.all.current")  # the summary reads an empty stats dict


def reset_peak_memory_stats(device: Any = None) -> None:
    raise _missing_binding("_cuda_resetPeakMemoryStats")


def reset_max_memory_allocated(device: Any = None) -> None:
    warnings.warn(
        "torch.cuda.reset_max_memory_allocated now calls torch.cuda.reset_peak_memory_stats, "
        "which resets /all/ peak memory stats.", FutureWarning, stacklevel=2,
    )
    reset_peak_memory_stats(device)


# -- legacy typed tensors: torch.cuda.FloatTensor, ... -----------------------------------------


def _install_legacy_types() -> None:
    globals().update(cuda_tensor_types())


_install_legacy_types()
