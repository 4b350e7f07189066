"""``torch._C``'s classes that tapegrad has: where ``torch.Generator`` and
``torch.linalg.LinAlgError`` say they live (``torch._C.Generator``, ``torch._C._LinAlgError``),
so that pickles naming them there find them (``_naming``)."""

from __future__ import annotations

from .._random import Generator
from ..ops.factorizations import _LinAlgError

__all__ = ["Generator", "_LinAlgError"]
