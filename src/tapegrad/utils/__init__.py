"""``tapegrad.utils``: data loading (``utils.data``), .safetensors files
(``utils.safetensors``) and zero-copy exchange with other array libraries (``utils.dlpack``)."""

from __future__ import annotations

from . import checkpoint, data, dlpack, safetensors

__all__ = ["checkpoint", "data", "dlpack", "safetensors"]
