"""``torch.autograd.variable``: where ``Variable`` (defined in ``_legacy``) says it lives."""

from __future__ import annotations

from .._legacy import Variable

__all__ = ["Variable"]
