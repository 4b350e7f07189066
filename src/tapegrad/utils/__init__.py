"""``tapegrad.utils``: data loading (``utils.data``) and .safetensors files
(``utils.safetensors``)."""

from __future__ import annotations

from . import data, safetensors

__all__ = ["data", "safetensors"]
