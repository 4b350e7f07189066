"""Process-wide switches torch exposes at the top level, with torch's checks and errors:
``set_float32_matmul_precision``, ``use_deterministic_algorithms`` (and the deterministic
debug mode), ``set_num_interop_threads``.

tapegrad's ops are deterministic and compute float32 products in float32 whatever these say
(NumPy has no TF32 or bfloat16 passes); the settings are kept so that programs which set and
read them see what torch would show. ``backends.cuda.matmul.allow_tf32`` reads and writes the
same precision setting, as in torch ("high" and "medium" allow TF32).
"""

from __future__ import annotations

import os
import warnings
from typing import Any

_state: dict[str, Any] = {
    "matmul_precision": "highest",
    "fp32_precision": "none",  # as backends.cuda.matmul reports it: 'none' until set
    "deterministic": False,
    "deterministic_warn_only": False,
    "interop_threads": None,  # None until set: the default count
}


def get_float32_matmul_precision() -> str:
    """'highest' (the default), 'high' or 'medium'."""
    return _state["matmul_precision"]


def set_float32_matmul_precision(precision: str) -> None:
    """Record the internal precision of float32 matrix products ('highest', 'high', 'medium').

    tapegrad computes them in float32 whatever the setting.
    """
    if not isinstance(precision, str):
        raise RuntimeError(
            f"set_float32_matmul_precision expects a str, but got {type(precision).__name__}"
        )
    if precision not in ("highest", "high", "medium"):
        warnings.warn(
            f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
            "setFloat32MatmulPrecision call has no effect.", UserWarning, stacklevel=2,
        )
        return
    _state["matmul_precision"] = precision
    _state["fp32_precision"] = "ieee" if precision == "highest" else "tf32"


def _check_bool(value: Any, arg: str, position: str) -> None:
    if not isinstance(value, bool):
        raise TypeError(f"_set_deterministic_algorithms(): argument '{arg}'{position} must be "
                        f"bool, not {type(value).__name__}")


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Ask for deterministic algorithms (tapegrad's ops are deterministic anyway)."""
    _check_bool(mode, "mode", " (position 1)")
    _check_bool(warn_only, "warn_only", "")
    _state["deterministic"] = mode
    _state["deterministic_warn_only"] = warn_only


def are_deterministic_algorithms_enabled() -> bool:
    return _state["deterministic"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return _state["deterministic_warn_only"]


def get_deterministic_debug_mode() -> int:
    """0 (off), 1 (warn) or 2 (error), from ``use_deterministic_algorithms``."""
    if not _state["deterministic"]:
        return 0
    return 1 if _state["deterministic_warn_only"] else 2


def set_deterministic_debug_mode(debug_mode: str | int) -> None:
    """'default'/0, 'warn'/1 or 'error'/2."""
    if isinstance(debug_mode, str):
        names = {"default": 0, "warn": 1, "error": 2}
        if debug_mode not in names:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, "
                               f"`error`, but got {debug_mode}")
        debug_mode = names[debug_mode]
    elif not isinstance(debug_mode, int):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got "
                           f"{debug_mode}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_num_interop_threads() -> int:
    """The number of inter-op threads torch would use (tapegrad runs ops one at a time)."""
    n = _state["interop_threads"]
    return n if n is not None else (os.cpu_count() or 1)


def set_num_interop_threads(num: int) -> None:
    """Set once, before any parallel work, as in torch (tapegrad records the number)."""
    if not isinstance(num, int) or isinstance(num, bool):
        raise RuntimeError(f"set_num_interop_threads expects an int, but got "
                           f"{type(num).__name__}")
    if num <= 0:
        raise RuntimeError("set_num_interop_threads expects a positive integer")
    if _state["interop_threads"] is not None:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work "
                           "has started or set_num_interop_threads called")
    _state["interop_threads"] = num
