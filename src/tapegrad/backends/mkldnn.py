"""``torch.backends.mkldnn``: oneDNN is not used by tapegrad (not available); flags kept."""

from __future__ import annotations

import types
from typing import Any

from . import become, bool_flag, flag_context

_state: dict[str, Any] = {"enabled": True, "deterministic": False, "allow_tf32": True}


def is_available() -> bool:
    return False


def _apply(values: dict) -> None:
    for key, value in values.items():
        setattr(_module, key, value)


def flags(enabled: bool = False, deterministic: bool = False, allow_tf32: bool = True,
          fp32_precision: str = "none") -> Any:
    """``with torch.backends.mkldnn.flags(...)``: the flags for a block, restored after."""
    return flag_context(_state, tuple(_state), _apply)(
        {"enabled": enabled, "deterministic": deterministic, "allow_tf32": allow_tf32})


class MkldnnModule(types.ModuleType):
    enabled = bool_flag(_state, "enabled", "set_enabled_mkldnn")
    deterministic = bool_flag(_state, "deterministic", "set_deterministic_mkldnn")
    allow_tf32 = bool_flag(_state, "allow_tf32", "set_allow_tf32_mkldnn")


become(__name__, MkldnnModule)
_module: Any = __import__("sys").modules[__name__]
