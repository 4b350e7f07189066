"""``torch.backends.cudnn``: cuDNN is not available; its flags are kept as set."""

from __future__ import annotations

import types
from typing import Any

from ._flag_helpers import become, bool_flag, flag_context

_state: dict[str, Any] = {"enabled": True, "benchmark": False, "deterministic": False,
                          "allow_tf32": True, "benchmark_limit": None}


def is_available() -> bool:
    return False


def version() -> None:
    return None


def is_acceptable(tensor: Any) -> bool:
    return False


def _apply(values: dict) -> None:
    for key, value in values.items():
        setattr(_module, key, value)


def flags(enabled: bool = False, benchmark: bool = False, benchmark_limit: int = 10,
          deterministic: bool = False, allow_tf32: bool = True, fp32_precision: str = "none",
          depthwise_kernel: str = "auto") -> Any:
    """``with torch.backends.cudnn.flags(...)``: the flags for a block, restored after."""
    manager = flag_context(_state, tuple(_state), _apply)
    return manager({"enabled": enabled, "benchmark": benchmark,
                    "benchmark_limit": benchmark_limit, "deterministic": deterministic,
                    "allow_tf32": allow_tf32})


class CudnnModule(types.ModuleType):
    enabled = bool_flag(_state, "enabled", "set_enabled_cudnn")
    benchmark = bool_flag(_state, "benchmark", "set_benchmark_cudnn")
    deterministic = bool_flag(_state, "deterministic", "set_deterministic_cudnn")
    allow_tf32 = bool_flag(_state, "allow_tf32", "set_allow_tf32_cublas")  # (torch's name)

    @property
    def benchmark_limit(self) -> Any:
        return _state["benchmark_limit"]

    @benchmark_limit.setter
    def benchmark_limit(self, value: Any) -> None:
        _state["benchmark_limit"] = value


become(__name__, CudnnModule)
_module: Any = __import__("sys").modules[__name__]
