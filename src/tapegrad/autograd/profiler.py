"""The profiler: how long each op, each backward node and each named range took
(``torch.autograd.profiler``).

    with torch.autograd.profiler.profile(record_shapes=True) as prof:
        with torch.autograd.profiler.record_function("step"):
            loss = model(x).sum()
        loss.backward()
    print(prof.key_averages().table(sort_by="self_cpu_time_total"))

How it hears the work, switched on only while a profiler records (the library pays nothing
otherwise):

* ops: the registry's detour (``ops/_registry``: ``detour("profiler", True)`` sends every
  ``apply``/``apply_`` through ``autograd/forward_ad.special_apply``, which announces it to
  the listeners, ``_NodeTimer`` among them while a profiler records): each op becomes an
  event named as torch names its kernel, ``aten::<name>`` (``aten::mm``, ``aten::add_`` for
  the in-place form), with the shapes of its inputs when ``record_shapes`` is on;
* backward nodes: a listener of the engine's (``_NodeTimer``, autograd/listeners.py) around
  each node it runs: an event ``autograd::engine::evaluate_function: <Node>`` around an
  event ``<Node>`` (``MmBackward0``, ``torch::autograd::AccumulateGrad``), and the ops its
  rule runs nest inside;
* ``record_function(name)``: a range the user names (the kineto profiler's steps are
  ``ProfilerStep#<n>``).

A ``_Recorder`` notes each range as ``[name, start ns, end ns, ...]`` while it runs; when the
profiler stops, the notes become ``FunctionEvent``s (``profiler_util``) with their nesting, and
the reports are made from those.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable
from typing import Any

from .._naming import public
from .._tensor import Tensor
from ..ops import _registry
from . import listeners
from .profiler_util import (
    DeviceType,
    EventList,
    FunctionEvent,
    FunctionEventAvg,
    current_thread,
    write_chrome_trace,
)

__all__ = ["profile", "record_function", "EventList", "FunctionEvent", "FunctionEventAvg",
           "DeviceType", "kineto_available"]

# registry entries whose name is not the aten kernel's (the rest drop a suffix: see _aten)
_ATEN = {
    "ce_log_softmax": "log_softmax", "ce_nll": "nll_loss", "sdpa":
    "scaled_dot_product_attention", "to_copy": "_to_copy", "fill_out_of_place": "fill",
    "fill_tensor_out_of_place": "fill", "sort_stable_values": "sort", "scatter_value":
    "scatter", "cum_extreme_indices": "cummax", "squeeze_matmul": "matmul", "fft_c2c":
    "_fft_c2c", "fft_r2c": "_fft_r2c", "fft_c2r": "_fft_c2r", "reshape_alias":
    "_reshape_alias", "safe_softmax": "_safe_softmax", "unsafe_view": "_unsafe_view",
    "as_strided_inplace": "as_strided_", "bce_with_logits": "binary_cross_entropy_with_logits",
    "euclidean_dist": "_euclidean_dist", "pow_scalar_base": "pow",
}
_SUFFIXES = ("_scalar_inplace", "_inplace", "_scalar", "_tensor", "_dims", "_dim", "_values",
             "_indices", "_mode", "_decimals")
_NAMES: dict[tuple[str, bool], str] = {}


def _aten(name: str, in_place: bool) -> str:
    """``aten::<kernel>`` for a registry entry (``sum_dim`` is ``aten::sum``, ``add`` applied
    in place ``aten::add_``)."""
    key = (name, in_place)
    found = _NAMES.get(key)
    if found is None:
        base = _ATEN.get(name)
        if base is None:
            base = name
            stripped = True
            while stripped:
                stripped = False
                for suffix in _SUFFIXES:
                    if base.endswith(suffix) and len(base) > len(suffix):
                        base = base[:-len(suffix)]
                        stripped = True
        if in_place and not base.endswith("_"):
            base += "_"
        found = _NAMES[key] = "aten::" + base
    return found


def _shapes(values: Any) -> list:
    """Input shapes as torch lists them: a tensor's sizes, ``[]`` for anything else."""
    return [list(v._data.shape) if isinstance(v, Tensor) else [] for v in values]


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _stack() -> list[str]:
    """The caller's Python frames outside the library, innermost first, as
    ``file(line): function``."""
    frames = []
    f: Any = sys._getframe(2)
    cwd = os.getcwd() + os.sep
    while f is not None:
        path = f.f_code.co_filename
        if not path.startswith(_PACKAGE) and not path.startswith("<frozen"):
            shown = path[len(cwd):] if path.startswith(cwd) else path
            frames.append(f"{shown}({f.f_lineno}): {f.f_code.co_name}")
        f = f.f_back
    return frames


# -------------------------------------------------------------------------------------------
# Recording
# -------------------------------------------------------------------------------------------

class _Recorder:
    """The ranges noted while one profiler records: ``[name, start_ns, end_ns, thread,
    input shapes, stack, bytes, user-named]`` each, in the order they started."""

    def __init__(self, record_shapes: bool, with_stack: bool, profile_memory: bool) -> None:
        self.record_shapes = record_shapes
        self.with_stack = with_stack
        self.profile_memory = profile_memory
        self.notes: list[list] = []
        self.start_ns = time.perf_counter_ns()
        self.wall_ns = time.time_ns()
        self.end_ns = self.start_ns

    def begin(self, name: str, inputs: Any, user: bool) -> list:
        note = [name, 0, 0, current_thread(),
                _shapes(inputs) if self.record_shapes and inputs is not None else [],
                _stack() if self.with_stack else [], 0, user]
        self.notes.append(note)
        note[1] = time.perf_counter_ns()
        return note

    def events(self, use_device: str | None) -> EventList:
        """The notes as ``FunctionEvent``s (microseconds from the start), nested."""
        events = EventList(use_device=use_device, profile_memory=self.profile_memory)
        for i, (name, start, end, thread, shapes, stack, nbytes, user) in enumerate(
                sorted(self.notes, key=lambda n: (n[1], -n[2]))):
            if end == 0:  # still open when the profiler stopped
                end = self.end_ns
            # the steps of a schedule add up under one name, as in torch's reports (the
            # trace keeps each step's own)
            shown = "ProfilerStep*" if name.startswith("ProfilerStep#") else name
            events.append(FunctionEvent(
                i, shown, thread, (start - self.start_ns) / 1000, (end - self.start_ns) / 1000,
                input_shapes=shapes, stack=stack, cpu_memory_usage=nbytes,
                is_user_annotation=user, overload_name="", trace_name=name))
        events._build_tree()
        return events


_recorders: list[_Recorder] = []  # the profilers recording now (nested ones all hear)


def _timed_op(op: Any, in_place: bool, run: Callable, *args: Any) -> Any:
    """Time ``run(*args)`` (an op, ``in_place`` or not) in every recording profiler."""
    inputs = (args[1], *args[2]) if in_place else args[1]
    name = _aten(op.name, in_place)
    notes = [r.begin(name, inputs, False) for r in _recorders]
    try:
        result = run(*args)
    finally:
        now = time.perf_counter_ns()
        for note in notes:
            note[2] = now
    if not op.view and not in_place:
        for r, note in zip(_recorders, notes, strict=False):
            if r.profile_memory:
                outs = result if isinstance(result, tuple) else (result,)
                note[6] = sum(o._data.nbytes for o in outs if isinstance(o, Tensor))
    return result


class _NodeTimer(listeners.Listener):
    """The listener while a profiler records: each op, each node's rule and each
    AccumulateGrad, timed in every recording profiler."""

    def run_op(self, op: Any, inputs: tuple, params: dict, run: Callable) -> Any:
        return _timed_op(op, False, run, op, inputs, params)

    def run_op_(self, op: Any, target: Any, others: tuple, params: dict, run: Callable) -> Any:
        return _timed_op(op, True, run, op, target, others, params)

    def run_node(self, node: Any, run: Callable, grads: list) -> Any:
        return _timed(node, run, grads)

    def run_accumulate(self, node: Any, run: Callable, *args: Any) -> Any:
        return _timed(node, run, *args)


_NODE_TIMER = _NodeTimer()


def _timed(node: Any, run: Callable, *args: Any) -> Any:
    """Time ``run(*args)`` (a backward node) in every recording profiler, as torch's engine
    names it."""
    name = node.name()
    outer = [r.begin("autograd::engine::evaluate_function: " + name, None, False)
             for r in _recorders]
    inner = [r.begin(name, None, False) for r in _recorders]
    try:
        return run(*args)
    finally:
        now = time.perf_counter_ns()
        for note in inner:
            note[2] = now
        now = time.perf_counter_ns()
        for note in outer:
            note[2] = now


def _start(recorder: _Recorder) -> None:
    if not _recorders:
        listeners.push(_NODE_TIMER)
    _recorders.append(recorder)
    _registry.detour("profiler", True)


def _stop(recorder: _Recorder) -> None:
    recorder.end_ns = time.perf_counter_ns()
    if recorder in _recorders:
        _recorders.remove(recorder)
    if not _recorders:
        _registry.detour("profiler", False)
        listeners.pop(_NODE_TIMER)


def kineto_available() -> bool:
    """Whether torch's Kineto tracer is built in (its profiler API works here: True)."""
    return True


@public(".autograd.profiler")
class record_function(contextlib.ContextDecorator):  # noqa: N801 - torch's name
    """A range named ``name`` in the profile: a context manager or a function decorator.

    Example:
        >>> import tapegrad as torch
        >>> with torch.autograd.profiler.profile() as prof:
        ...     with torch.autograd.profiler.record_function("step"):
        ...         y = torch.ones(2) + 1
        >>> [e.name for e in prof.function_events][:2]
        ['step', 'aten::add']
    """

    def __init__(self, name: str, args: str | None = None) -> None:
        self.name = name
        self.args = args
        self.run_callbacks_on_exit = True
        self.record: list | None = None

    def __enter__(self) -> record_function:
        self.record = [r.begin(self.name, None, True) for r in _recorders]
        return self

    def __exit__(self, *exc: object) -> None:
        if self.run_callbacks_on_exit and self.record:
            now = time.perf_counter_ns()
            for note in self.record:
                note[2] = now
        self.record = None


@public(".autograd.profiler")
class profile:  # noqa: N801 - torch's name
    """Record the time of every op, backward node and ``record_function`` range run inside
    the block (see the module docstring); ``function_events``, ``key_averages()``,
    ``table()`` and ``export_chrome_trace()`` report on them afterwards.

    ``record_shapes`` notes each op's input shapes, ``with_stack`` the Python frames it was
    called from, ``profile_memory`` the bytes of its results. ``enabled=False`` records
    nothing. Accelerator options (``use_cuda``, ``use_device``) have nothing to profile here.

    Example:
        >>> import tapegrad as torch
        >>> with torch.autograd.profiler.profile() as prof:
        ...     y = torch.ones(2, 2) @ torch.ones(2, 2)
        >>> [e.key for e in prof.key_averages()]
        ['aten::mm']
    """

    def __init__(self, enabled: bool = True, *, use_cuda: bool = False,
                 use_device: str | None = None, record_shapes: bool = False,
                 with_flops: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, with_modules: bool = False,
                 use_kineto: bool = False, use_cpu: bool = True,
                 experimental_config: Any = None, acc_events: bool = False,
                 custom_trace_id_callback: Callable[[], str] | None = None,
                 post_processing_timeout_s: float | None = None,
                 activity_filters: dict | None = None) -> None:
        self.enabled = enabled
        if not enabled:
            return
        self.use_device = use_device
        self.record_shapes = record_shapes
        self.with_flops = with_flops
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_modules = with_modules
        self.use_cpu = use_cpu
        self.acc_events = acc_events
        self.entered = False
        self._recorder: _Recorder | None = None
        self._function_events: EventList | None = None
        self._old_function_events: EventList | None = None
        self._metadata: dict[str, Any] = {}
        self._wall_ns: int | None = None

    def __enter__(self) -> profile:
        if not self.enabled:
            return self
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self.entered = True
        self._start_trace()
        return self

    def _start_trace(self) -> None:
        self._recorder = _Recorder(self.record_shapes, self.with_stack, self.profile_memory)
        _start(self._recorder)

    def __exit__(self, *exc: object) -> None:
        if not self.enabled:
            return
        recorder = self._recorder
        if recorder is not None:
            _stop(recorder)
            events = recorder.events(self.use_device)
            if self.acc_events and self._function_events is not None:
                events = EventList([*self._function_events, *events],
                                   use_device=self.use_device,
                                   profile_memory=self.profile_memory)
                events._build_tree()
            self._function_events = events
            self._wall_ns = recorder.wall_ns
            self._recorder = None
        self.entered = False

    def __repr__(self) -> str:
        if self._function_events is None:
            return "<unfinished torch.autograd.profile>"
        return repr(self._function_events)

    def __str__(self) -> str:
        if self._function_events is None:
            return "<unfinished torch.autograd.profile>"
        return str(self._function_events.table())

    def _check_finish(self) -> None:
        if self._function_events is None:
            raise RuntimeError("Profiler didn't finish running")

    @property
    def function_events(self) -> EventList:
        """The events, in the order they started."""
        self._check_finish()
        assert self._function_events is not None
        return self._function_events

    def table(self, sort_by: str | None = None, row_limit: int = 100,
              max_src_column_width: int = 75, max_name_column_width: int = 55,
              max_shapes_column_width: int = 80, header: str | None = None,
              top_level_events_only: bool = False) -> str:
        """Every event as a row of torch's table (``key_averages().table()`` sums them)."""
        return self.function_events.table(
            sort_by=sort_by, row_limit=row_limit, max_src_column_width=max_src_column_width,
            max_name_column_width=max_name_column_width,
            max_shapes_column_width=max_shapes_column_width, header=header,
            top_level_events_only=top_level_events_only)

    def export_chrome_trace(self, path: str) -> None:
        """Write the events as a Chrome trace (JSON) to ``path``."""
        write_chrome_trace(path, self.function_events,
                           {"baseTimeNanoseconds": self._wall_ns, **self._metadata})

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total") -> None:
        """Write the stacks (``with_stack``) with their times, for flame graphs."""
        if not self.with_stack:
            raise AssertionError("export_stacks() requires with_stack=True")
        self.function_events.export_stacks(path, metric)

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False) -> EventList:
        """One row per op name (see ``EventList.key_averages``)."""
        return self.function_events.key_averages(group_by_input_shape, group_by_stack_n,
                                                 group_by_overload_name)

    def total_average(self) -> FunctionEventAvg:
        return self.function_events.total_average()

    @property
    def self_cpu_time_total(self) -> float:
        """The time of all events, each counted without its children (microseconds)."""
        return self.function_events.self_cpu_time_total
