"""``torch.amp.autocast_mode``: where ``autocast`` (defined in ``amp``) says it lives."""

from __future__ import annotations

from . import autocast

__all__ = ["autocast"]
