"""``torch.profiler``: where the time of a program goes, op by op.

    from torch.profiler import profile, record_function, ProfilerActivity

    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        with record_function("model_inference"):
            model(inputs)
    print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=10))
    prof.export_chrome_trace("trace.json")

``profile`` (profiler.py) records through ``torch.autograd.profiler`` (autograd/profiler.py,
which explains how ops and backward nodes are heard); a ``schedule`` records only some steps
of a training loop (``prof.step()`` after each) and hands each recorded cycle to
``on_trace_ready`` (``tensorboard_trace_handler`` writes it as a trace file).
"""

from __future__ import annotations

from ..autograd.profiler import kineto_available, record_function
from ..autograd.profiler_util import DeviceType
from .profiler import (
    ProfilerAction,
    ProfilerActivity,
    profile,
    schedule,
    supported_activities,
    tensorboard_trace_handler,
)

__all__ = ["profile", "schedule", "supported_activities", "tensorboard_trace_handler",
           "ProfilerAction", "ProfilerActivity", "kineto_available", "DeviceType",
           "record_function"]
