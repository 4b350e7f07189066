"""``torch.backends.cuda``: not built; ``matmul.allow_tf32`` and the SDPA switches kept.

``matmul.allow_tf32`` is the float32 matmul precision of ``torch.set_float32_matmul_precision``
seen from the CUDA side (True for 'high' and 'medium'), one setting, as in torch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import _settings

__all__ = ["is_built", "matmul"]


def is_built() -> bool:
    return False


class cuBLASModule:
    """``torch.backends.cuda.matmul``: the float32 matmul flags."""

    _reduced: dict[str, Any] = {"allow_fp16_reduced_precision_reduction": True,
                "allow_bf16_reduced_precision_reduction": True}

    def __getattr__(self, name: str) -> Any:
        if name == "allow_tf32":
            return _settings.get_float32_matmul_precision() != "highest"
        if name == "fp32_precision":
            return _settings._state["fp32_precision"]
        if name in self._reduced:
            return self._reduced[name]
        raise AttributeError(f"Unknown attribute {name}")

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "allow_tf32":
            if not isinstance(value, bool):
                raise RuntimeError(
                    f"set_allow_tf32_cublas expects a bool, but got {type(value).__name__}"
                )
            _settings._state["matmul_precision"] = "high" if value else "highest"
            _settings._state["fp32_precision"] = "tf32" if value else "ieee"
            return
        if name in self._reduced:
            if not isinstance(value, (bool, tuple, list)):
                raise TypeError(
                    f"{name} expects a bool or a tuple/list of bools, but got {type(value)}"
                )
            self._reduced[name] = value
            return
        raise AttributeError(f"Unknown attribute {name}")


matmul = cuBLASModule()

_sdp = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}


def _sdp_switch(kind: str) -> tuple[Callable[[], bool], Callable[[bool], None]]:
    """``<kind>_sdp_enabled()`` and ``enable_<kind>_sdp(enabled)``, which read and set the
    switch of one scaled-dot-product-attention backend."""

    def is_enabled() -> bool:
        return _sdp[kind]

    def set_enabled(enabled: bool) -> None:
        _sdp[kind] = enabled

    is_enabled.__name__ = is_enabled.__qualname__ = f"{kind}_sdp_enabled"
    set_enabled.__name__ = set_enabled.__qualname__ = f"enable_{kind}_sdp"
    return is_enabled, set_enabled


flash_sdp_enabled, enable_flash_sdp = _sdp_switch("flash")
mem_efficient_sdp_enabled, enable_mem_efficient_sdp = _sdp_switch("mem_efficient")
math_sdp_enabled, enable_math_sdp = _sdp_switch("math")
cudnn_sdp_enabled, enable_cudnn_sdp = _sdp_switch("cudnn")
