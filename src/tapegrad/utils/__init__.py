"""``tapegrad.utils``: data loading (``utils.data``) and .safetensors files
(``utils.safetensors``)."""

from __future__ import annotations

from . import checkpoint, data, safetensors

__all__ = ["checkpoint", "data", "safetensors"]
