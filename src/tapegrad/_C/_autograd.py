"""``torch._C._autograd``: where ``DeviceType`` (defined in autograd/profiler_util.py) says it
lives, so that pickles naming it there find it."""

from __future__ import annotations

from ..autograd.profiler_util import DeviceType

__all__ = ["DeviceType"]
