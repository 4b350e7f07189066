"""Warnings that point at the user's line: ``_warn_at_caller`` walks out of tapegrad's frames
before it warns, so that the location Python prints is the call the user wrote, however deep in
tapegrad the warning was raised (a random draw, a reduction's deprecated implicit dim...)."""

from __future__ import annotations

import os
import sys
import warnings
from typing import Any


def _warn_at_caller(message: Any, category: type[Warning]) -> None:
    """Warn with the location of the first frame outside tapegrad (the user's call)."""
    level = 2
    frame: Any = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)


# the tapegrad package's folder (this file is in its ops/)
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
