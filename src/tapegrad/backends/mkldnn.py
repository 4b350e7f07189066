"""``torch.backends.mkldnn``: oneDNN is not used by tapegrad (not available); flags kept."""

from __future__ import annotations

import contextlib
import types
import warnings
from typing import Any

from ._flag_helpers import become, bool_flag

_state: dict[str, Any] = {"enabled": True, "deterministic": False, "allow_tf32": True}


def is_available() -> bool:
    return False


TF32_WARNING = ("TF32 acceleration on top of oneDNN is available for Intel GPUs. The current "
                "Torch version does not have Intel GPU Support.")


def _set_tf32(value: bool) -> None:
    if value:
        warnings.warn(TF32_WARNING, UserWarning, stacklevel=3)
    _state["allow_tf32"] = value


def _apply(values: dict) -> None:
    for key, value in values.items():
        setattr(_module, key, value)


def flags(enabled: bool = False, deterministic: bool = False, allow_tf32: bool = True,
          fp32_precision: str = "none") -> Any:
    """``with torch.backends.mkldnn.flags(...)``: the flags for a block, restored after."""
    return _flags({"enabled": enabled, "deterministic": deterministic, "allow_tf32": allow_tf32})


@contextlib.contextmanager
def _flags(values: dict) -> Any:
    saved = dict(_state)
    _apply(values)
    try:
        yield
    finally:
        tf32 = saved.pop("allow_tf32")
        _state.update(saved)
        if tf32 != _state["allow_tf32"]:
            _set_tf32(tf32)


class MkldnnModule(types.ModuleType):
    enabled = bool_flag(_state, "enabled", "set_enabled_mkldnn")
    deterministic = bool_flag(_state, "deterministic", "set_deterministic_mkldnn")

    @property
    def allow_tf32(self) -> None:
        return None  # what torch's getter returns on a CPU build

    @allow_tf32.setter
    def allow_tf32(self, value: Any) -> None:
        if not isinstance(value, bool):
            raise RuntimeError(
                f"_set_onednn_allow_tf32 expects a bool, but got {type(value).__name__}"
            )
        _set_tf32(value)


become(__name__, MkldnnModule)
_module: Any = __import__("sys").modules[__name__]
