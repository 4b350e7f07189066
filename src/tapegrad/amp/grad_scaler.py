"""``torch.amp.grad_scaler``: where ``GradScaler`` (defined in the package) says it lives, so
that pickles naming it there find it."""

from __future__ import annotations

from . import GradScaler

__all__ = ["GradScaler"]
