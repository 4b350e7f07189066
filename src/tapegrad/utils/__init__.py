"""``tapegrad.utils``: data loading (``utils.data``), .safetensors files
(``utils.safetensors``), activation checkpointing (``utils.checkpoint``), zero-copy exchange
with other array libraries (``utils.dlpack``) and ``utils.model_zoo`` (the old name of
``torch.hub.load_state_dict_from_url``). Each is imported on first use, so that
``import tapegrad`` does not pay for the ones a program never touches."""

from __future__ import annotations

import importlib
from typing import Any as _Any

__all__ = ["checkpoint", "data", "dlpack", "model_zoo", "safetensors"]


def __getattr__(name: str) -> _Any:
    if name in __all__:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module '{__name__}' has no attribute '{name}'")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
