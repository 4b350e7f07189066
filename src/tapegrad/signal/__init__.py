"""tapegrad.signal: torch.signal, the signal-processing helpers (so far the window functions of
``tapegrad.signal.windows``)."""

from __future__ import annotations

from . import windows

__all__ = ["windows"]
