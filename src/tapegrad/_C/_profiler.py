"""``torch._C._profiler``: where ``ProfilerActivity`` (defined in profiler/profiler.py) says it
lives, so that pickles naming it there find it."""

from __future__ import annotations

from ..profiler.profiler import ProfilerActivity

__all__ = ["ProfilerActivity"]
