"""``tapegrad.utils.safetensors``: Hugging Face's ``.safetensors`` format with the API of
``safetensors.torch``: ``save``/``load`` (bytes), ``save_file``/``load_file`` (paths) and
``safe_open``.

The format is read and written in ``serialization/_safetensors.py``, beside tapegrad's and
torch's own checkpoint formats (``tapegrad.load`` recognises a ``.safetensors`` file too).
"""

from __future__ import annotations

from ..serialization._safetensors import (
    SafetensorError,
    load,
    load_file,
    safe_open,
    save,
    save_file,
)

__all__ = ["SafetensorError", "save", "save_file", "load", "load_file", "safe_open"]
