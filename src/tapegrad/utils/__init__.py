"""``tapegrad.utils``: data loading (``utils.data``), .safetensors files
(``utils.safetensors``), activation checkpointing (``utils.checkpoint``) and zero-copy exchange
with other array libraries (``utils.dlpack``). Each is imported on first use, so that
``import tapegrad`` does not pay for the ones a program never touches."""

from __future__ import annotations

import importlib
from typing import Any as _Any

__all__ = ["checkpoint", "data", "dlpack", "safetensors"]


def __getattr__(name: str) -> _Any:
    if name in __all__:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module '{__name__}' has no attribute '{name}'")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
