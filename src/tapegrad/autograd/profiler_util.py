"""What the profiler measured, and its reports: ``torch.autograd.profiler_util``.

A ``FunctionEvent`` is one timed range: an op (``aten::mm``), a backward node
(``MmBackward0``, inside ``autograd::engine::evaluate_function: MmBackward0``), or a range a
user named with ``record_function``. Ranges nest (an op inside a ``record_function``, a rule's
ops inside its node): each event knows its ``cpu_parent`` and ``cpu_children``, and its *self*
time is its time less its children's.

An ``EventList`` holds the events in the order they started and reports on them, in torch's
formats:

* ``key_averages()``: one ``FunctionEventAvg`` per name (and per input shapes or top stack
  frames when asked), summing the calls' times;
* ``table()``: the fixed-width table torch prints (Name, Self CPU %, Self CPU, CPU total %,
  CPU total, CPU time avg, # of Calls, and Input Shapes / Source Location when recorded);
* ``export_chrome_trace(path)``: a Chrome trace (``chrome://tracing``, Perfetto) as JSON;
* ``export_stacks(path, metric)``: one line per stack for flame graphs.

Times are in microseconds from the start of profiling.
"""

from __future__ import annotations

import enum
import gzip
import json
import os
import threading
from collections.abc import Iterable
from typing import Any

from .._naming import CEnumType, public

__all__ = ["EventList", "FunctionEvent", "FunctionEventAvg", "Interval", "DeviceType"]


@public("._C._autograd")
class DeviceType(enum.Enum, metaclass=CEnumType):
    """Where an event ran (torch's ``DeviceType``); every event here runs on the CPU."""

    CPU = 0
    CUDA = 1
    MKLDNN = 2
    OPENGL = 3
    OPENCL = 4
    IDEEP = 5
    HIP = 6
    FPGA = 7
    MAIA = 8
    XLA = 9
    Vulkan = 10
    Metal = 11
    XPU = 12
    MPS = 13
    MTIA = 19
    Meta = 14
    HPU = 15
    VE = 16
    Lazy = 17
    IPU = 18
    PrivateUse1 = 20

    def __int__(self) -> int:
        return self.value


# -- formatting (torch's) ----------------------------------------------------------------------

def _format_time(time_us: float) -> str:
    """``12.345us``, ``1.234ms`` or ``1.234s``."""
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def _format_time_share(time_us: float, total_us: float) -> str:
    if total_us == 0:
        return "NaN"
    return f"{time_us * 100.0 / total_us:.2f}%"


def _format_memory(nbytes: int) -> str:
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if abs(nbytes) >= size:
            return f"{nbytes / size:.2f} {unit}"
    return f"{nbytes} B"


@public(".autograd.profiler_util")
class Interval:
    """A time range in microseconds."""

    def __init__(self, start: float, end: float) -> None:
        self.start = start
        self.end = end

    def elapsed_us(self) -> float:
        return self.end - self.start


class _TimeStrings:
    """The ``*_str`` forms of an event's times, as the table prints them."""

    cpu_time_total: float
    self_cpu_time_total: float
    count: int

    @property
    def cpu_time(self) -> float:
        """The average time of one call."""
        return 0.0 if self.count == 0 else self.cpu_time_total / self.count

    @property
    def cpu_time_str(self) -> str:
        return _format_time(self.cpu_time)

    @property
    def cpu_time_total_str(self) -> str:
        return _format_time(self.cpu_time_total)

    @property
    def self_cpu_time_total_str(self) -> str:
        return _format_time(self.self_cpu_time_total)

    # no accelerator runs anything here: the device times are zero
    device_time_total = 0.0
    self_device_time_total = 0.0
    device_memory_usage = 0
    self_device_memory_usage = 0
    cuda_time_total = 0.0
    self_cuda_time_total = 0.0

    @property
    def device_time(self) -> float:
        return 0.0

    cuda_time = device_time

    @property
    def device_time_str(self) -> str:
        return _format_time(0.0)

    @property
    def device_time_total_str(self) -> str:
        return _format_time(0.0)

    @property
    def self_device_time_total_str(self) -> str:
        return _format_time(0.0)


@public(".autograd.profiler_util")
class FunctionEvent(_TimeStrings):
    """One timed range: its name, thread, start and end (microseconds), the shapes of its
    inputs (with ``record_shapes``), the Python stack it was called from (with
    ``with_stack``), the bytes its results took (with ``profile_memory``), and its place in
    the nesting."""

    def __init__(self, id: int, name: str, thread: int, start_us: float, end_us: float,
                 overload_name: str | None = None, fwd_thread: int | None = None,
                 input_shapes: list | None = None, stack: list | None = None, scope: int = 0,
                 use_device: str | None = None, cpu_memory_usage: int = 0,
                 device_memory_usage: int = 0, is_async: bool = False,
                 is_remote: bool = False, sequence_nr: int = -1, node_id: int = -1,
                 device_type: DeviceType = DeviceType.CPU, device_index: int = 0,
                 device_resource_id: int | None = None, is_legacy: bool = False,
                 flops: int | None = None, trace_name: str | None = None,
                 concrete_inputs: list | None = None, kwinputs: dict | None = None,
                 is_user_annotation: bool = False) -> None:
        self.id = id
        self.node_id = node_id
        self.name = name
        self.overload_name = overload_name
        self.trace_name = trace_name
        self.time_range = Interval(start_us, end_us)
        self.thread = thread
        self.fwd_thread = fwd_thread
        self.kernels: list = []
        self.count = 1
        self.cpu_children: list[FunctionEvent] = []
        self.cpu_parent: FunctionEvent | None = None
        self.input_shapes = input_shapes
        self.concrete_inputs = concrete_inputs
        self.kwinputs = kwinputs or {}
        self.stack = stack if stack is not None else []
        self.scope = scope
        self.use_device = use_device
        self.cpu_memory_usage = cpu_memory_usage
        self.device_memory_usage = device_memory_usage
        self.is_async = is_async
        self.is_remote = is_remote
        self.sequence_nr = sequence_nr
        self.device_type = device_type
        self.device_index = device_index
        self.device_resource_id = device_resource_id if device_resource_id is not None else (
            thread)
        self.is_legacy = is_legacy
        self.flops = flops
        self.is_user_annotation = is_user_annotation
        self.self_cpu_percent = -1
        self.total_cpu_percent = -1
        self.total_device_percent = -1

    def append_cpu_child(self, child: FunctionEvent) -> None:
        self.cpu_children.append(child)

    def set_cpu_parent(self, parent: FunctionEvent) -> None:
        self.cpu_parent = parent

    @property
    def key(self) -> str:
        return self.name

    @property
    def cpu_time_total(self) -> float:  # type: ignore[override]
        return self.time_range.elapsed_us()

    @property
    def self_cpu_time_total(self) -> float:  # type: ignore[override]
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def self_cpu_memory_usage(self) -> int:
        return self.cpu_memory_usage - sum(c.cpu_memory_usage for c in self.cpu_children)

    def __repr__(self) -> str:
        return (f"<FunctionEvent id={self.id} name={self.name} "
                f"overload_name={self.overload_name or ''} device_type={self.device_type} "
                f"node_id={self.node_id} cpu_time={self.cpu_time_str} "
                f"start_us={self.time_range.start} end_us={self.time_range.end} "
                f"cpu_children={[c.id for c in self.cpu_children]} "
                f"{self.use_device}_time={self.device_time_str} name={self.name} "
                f"thread={self.thread} input_shapes={self.input_shapes} "
                f"cpu_memory_usage={self.cpu_memory_usage} "
                f"{self.use_device}_memory_usage={self.device_memory_usage} "
                f"is_async={self.is_async} is_remote={self.is_remote} "
                f"seq_nr={self.sequence_nr} is_legacy={self.is_legacy}>")


@public(".autograd.profiler_util")
class FunctionEventAvg(_TimeStrings):
    """The events of one key added up (``EventList.key_averages``)."""

    def __init__(self) -> None:
        self.key: Any = None
        self.count = 0
        self.node_id = 0
        self.is_async = False
        self.is_remote = False
        self.use_device: str | None = None
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.input_shapes: Any = None
        self.overload_name: Any = None
        self.stack: list = []
        self.scope: int | None = None
        self.cpu_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.cpu_parent: FunctionEvent | None = None
        self.cpu_children: list = []
        self.device_type = DeviceType.CPU
        self.is_legacy = False
        self.is_user_annotation = False
        self.flops: int | None = None

    def add(self, other: FunctionEvent | FunctionEventAvg) -> FunctionEventAvg:
        """Add ``other``'s times, memory and calls (the first one added gives the key)."""
        if self.key is None:
            self.key = other.key
            self.node_id = other.node_id
            self.is_async = other.is_async
            self.is_remote = other.is_remote
            self.cpu_parent = other.cpu_parent
            self.cpu_children = other.cpu_children
            self.overload_name = other.overload_name
            self.input_shapes = other.input_shapes
            self.stack = other.stack
            self.scope = other.scope
            self.device_type = other.device_type
            self.is_legacy = other.is_legacy
            self.use_device = other.use_device
            self.is_user_annotation = other.is_user_annotation
        if not isinstance(other, (FunctionEvent, FunctionEventAvg)):
            raise AssertionError("Expected other to be a FunctionEvent or FunctionEventAvg")
        if other.key != self.key:
            raise AssertionError(f"Expected keys to match, but got {other.key} vs {self.key}")
        self.cpu_time_total += other.cpu_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.cpu_memory_usage += other.cpu_memory_usage
        self.self_cpu_memory_usage += other.self_cpu_memory_usage
        self.count += other.count
        if self.flops is None:
            self.flops = other.flops
        elif other.flops is not None:
            self.flops += other.flops
        return self

    def __iadd__(self, other: FunctionEvent | FunctionEventAvg) -> FunctionEventAvg:
        return self.add(other)

    def __repr__(self) -> str:
        device = self.use_device or "cuda"
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total_str} "
                f"cpu_time={self.cpu_time_str}  self_{device}_time="
                f"{self.self_device_time_total_str} {device}_time={self.device_time_str} "
                f"input_shapes={self.input_shapes} cpu_memory_usage={self.cpu_memory_usage} "
                f"{device}_memory_usage={self.device_memory_usage}>")


@public(".autograd.profiler_util")
class EventList(list):
    """A list of ``FunctionEvent``s (or of their averages) and its reports (see the module
    docstring)."""

    def __init__(self, *args: Any, use_device: str | None = None, profile_memory: bool = False,
                 with_flops: bool = False) -> None:
        super().__init__(*args)
        self._use_device = use_device
        self._profile_memory = profile_memory
        self._with_flops = with_flops
        self._tree_built = False

    def _build_tree(self) -> None:
        """Link each event to the innermost event of its thread that encloses it."""
        for thread in {e.thread for e in self}:
            open_: list[FunctionEvent] = []
            for e in sorted((e for e in self if e.thread == thread),
                            key=lambda e: (e.time_range.start, -e.time_range.end)):
                while open_ and open_[-1].time_range.end <= e.time_range.start:
                    open_.pop()
                if open_ and e.time_range.end <= open_[-1].time_range.end:
                    e.set_cpu_parent(open_[-1])
                    open_[-1].append_cpu_child(e)
                open_.append(e)
        self._tree_built = True

    @property
    def self_cpu_time_total(self) -> float:
        return sum(e.self_cpu_time_total for e in self)

    def table(self, sort_by: str | None = None, row_limit: int = 100,
              max_src_column_width: int = 75, max_name_column_width: int = 55,
              max_shapes_column_width: int = 80, header: str | None = None,
              top_level_events_only: bool = False, time_unit: str | None = None) -> str:
        """The events as torch's table (see ``_build_table``); ``sort_by`` names an attribute
        (``cpu_time_total``, ``self_cpu_time_total``, ``count``...), largest first."""
        return _build_table(self, sort_by, header, row_limit, max_src_column_width,
                            max_name_column_width, max_shapes_column_width,
                            self._profile_memory, top_level_events_only, time_unit)

    def key_averages(self, group_by_input_shapes: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False) -> EventList:
        """One ``FunctionEventAvg`` per name (and input shapes, overload name, or first
        ``group_by_stack_n`` stack frames when asked), in the order the keys first
        occurred."""
        stats: dict[tuple, FunctionEventAvg] = {}
        for e in self:
            key = [str(e.key), str(e.node_id), str(e.device_type), str(e.is_legacy),
                   str(e.is_user_annotation)]
            if group_by_overload_name:
                key.append(str(e.overload_name))
            if group_by_input_shapes:
                key.append(str(e.input_shapes))
            if group_by_stack_n > 0:
                key += e.stack[:group_by_stack_n]
            stats.setdefault(tuple(key), FunctionEventAvg()).add(e)
        averages = EventList(stats.values(), use_device=self._use_device,
                             profile_memory=self._profile_memory, with_flops=self._with_flops)
        for avg in averages:
            avg.stack = avg.stack[:group_by_stack_n]
            if not group_by_input_shapes:
                avg.input_shapes = ""
            if not group_by_overload_name:
                avg.overload_name = ""
        return averages

    def total_average(self) -> FunctionEventAvg:
        """All events added into one, keyed ``Total``."""
        total = FunctionEventAvg()
        for e in self:
            total += e
            total.key = None
        total.key = "Total"
        return total

    @staticmethod
    def supported_export_stacks_metrics() -> list[str]:
        return ["self_cpu_time_total", "self_cuda_time_total", "self_xpu_time_total",
                "self_privateuse1_time_total"]

    def export_stacks(self, path: str, metric: str) -> None:
        """For flame graphs: a line ``outermost;...;innermost <metric in us>`` for each event
        with a stack and a positive metric."""
        if metric not in self.supported_export_stacks_metrics():
            raise ValueError("metric should be one of: "
                             + str(self.supported_export_stacks_metrics()))
        spaces = str.maketrans(" ;\t\n", "____")
        attribute = metric.replace("cuda", "device").replace("xpu", "device").replace(
            "privateuse1", "device")
        with open(path, "w") as f:
            for e in self:
                value = getattr(e, attribute)
                if e.stack and int(value) > 0:
                    frames = ";".join(entry.translate(spaces) for entry in reversed(e.stack))
                    f.write(f"{frames} {int(value)}\n")

    def export_chrome_trace(self, path: str) -> None:
        """Write the events as a Chrome trace: ``{"traceEvents": [...]}``, one complete
        (``"ph": "X"``) event per range, times in microseconds."""
        write_chrome_trace(path, self, {})


def chrome_trace(events: Iterable[FunctionEvent], metadata: dict[str, Any],
                 base_us: float = 0.0, name: str = "") -> dict[str, Any]:
    """The Chrome trace of ``events`` (``ts`` offset by ``base_us``) with ``metadata`` as
    top-level entries."""
    pid = os.getpid()
    threads = sorted({e.thread for e in events})
    trace: list[dict[str, Any]] = [
        {"ph": "M", "name": "process_name", "ts": base_us, "pid": pid, "tid": 0,
         "args": {"name": "python"}},
        {"ph": "M", "name": "process_labels", "ts": base_us, "pid": pid, "tid": 0,
         "args": {"labels": "CPU"}},
    ]
    for tid in threads:
        trace.append({"ph": "M", "name": "thread_name", "ts": base_us, "pid": pid, "tid": tid,
                      "args": {"name": f"thread {tid} (python)"}})
    for i, e in enumerate(events):
        args: dict[str, Any] = {"External id": e.id + 1}
        if e.sequence_nr >= 0:
            args["Sequence number"] = e.sequence_nr
        if e.input_shapes:
            args["Input Dims"] = e.input_shapes
        if e.stack:
            args["Call stack"] = ";".join(e.stack)
        args["Ev Idx"] = i
        trace.append({"ph": "X", "cat": "user_annotation" if e.is_user_annotation else "cpu_op",
                      "name": e.trace_name or e.name, "pid": pid, "tid": e.thread,
                      "ts": round(base_us + e.time_range.start, 3),
                      "dur": round(e.cpu_time_total, 3), "args": args})
    return {"schemaVersion": 1, "deviceProperties": [], **metadata,
            "displayTimeUnit": "ms", "traceEvents": trace, "traceName": name}


def write_chrome_trace(path: str, events: Iterable[FunctionEvent], metadata: dict[str, Any],
                       base_us: float = 0.0) -> None:
    """Write ``chrome_trace(...)`` as JSON to ``path`` (gzip-compressed when it ends in
    ``.gz``)."""
    text = json.dumps(chrome_trace(list(events), metadata, base_us, path))
    if path.endswith(".gz"):
        with gzip.open(path, "wt") as f:
            f.write(text)
    else:
        with open(path, "w") as f:
            f.write(text)


def current_thread() -> int:
    """The id events give their thread (the OS's, as torch's)."""
    return threading.get_native_id()


# -- the table ---------------------------------------------------------------------------------

def _build_table(events: EventList, sort_by: str | None, header: str | None, row_limit: int,
                 max_src_column_width: int | None, max_name_column_width: int | None,
                 max_shapes_column_width: int | None, profile_memory: bool,
                 top_level_events_only: bool, time_unit: str | None) -> str:
    """torch's summary table: a column per measure, right-aligned in 12 characters (the
    name as wide as the longest, up to 55), two spaces between columns, a line of dashes
    above and below the header and at the end, then the total self CPU time."""
    if len(events) == 0:
        return ""
    rows: list = list(events)
    if sort_by is not None:
        attribute = sort_by.replace("cuda", "device").replace("xpu", "device").replace(
            "privateuse1", "device")
        rows.sort(key=lambda e: getattr(e, attribute), reverse=True)
    has_shapes = any(e.input_shapes is not None and len(e.input_shapes) > 0 for e in rows)
    has_overloads = any(e.overload_name is not None and len(e.overload_name) > 0
                        for e in rows)
    name_width = max(len(e.key) for e in rows) + 4
    if max_name_column_width is not None:
        name_width = min(name_width, max_name_column_width)
    shapes_width = max(len(str(e.input_shapes)) for e in rows) + 4
    if max_shapes_column_width is not None:
        shapes_width = min(shapes_width, max_shapes_column_width)
    stacks = [e.stack for e in rows if e.stack]
    src_width = 0
    if stacks:
        src_width = max(len(entry) for stack in stacks for entry in stack) + 4
        if max_src_column_width is not None:
            src_width = min(src_width, max_src_column_width)

    headers = ["Name"] + (["Overload Name"] if has_overloads else []) + [
        "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if profile_memory:
        headers += ["CPU Mem", "Self CPU Mem"]
    headers.append("# of Calls")
    widths = [name_width] + ([name_width] if has_overloads else []) + [12] * (
        len(headers) - 1 - has_overloads)
    aligns = [">"] * len(widths)
    if has_shapes:
        headers.append("Input Shapes")
        widths.append(shapes_width)
        aligns.append(">")
    if stacks:
        headers.append("Source Location")
        widths.append(src_width)
        aligns.append("<")
    row_format = "".join(f"{{:{a}{w}}}  " for a, w in zip(aligns, widths, strict=True))
    separator = "".join("-" * w + "  " for w in widths)
    line_length = sum(w + 2 for w in widths) - 2

    def in_unit(time_us: float) -> str:
        if time_unit == "s":
            return f"{time_us / 1e6:.3f}s"
        if time_unit == "ms":
            return f"{time_us / 1e3:.3f}ms"
        if time_unit == "us":
            return f"{time_us:.3f}us"
        return _format_time(time_us)

    def trimmed(path: str) -> str:
        if len(path) > src_width:
            path = path[len(path) - src_width:]
            if len(path) > 3:
                path = "..." + path[3:]
        return path

    total_self = sum(e.self_cpu_time_total for e in rows)
    lines: list[str] = []
    if header is not None:
        lines += ["=" * line_length, header]
    if top_level_events_only:
        lines += ["=" * line_length, "This report only display top-level ops statistics"]
    lines += [separator, row_format.format(*headers), separator]
    shown = 0
    for e in rows:
        if shown == row_limit:
            break
        if top_level_events_only and e.cpu_parent is not None:
            continue
        shown += 1
        name = e.key
        if max_name_column_width is not None and len(name) >= max_name_column_width - 3:
            name = name[:max_name_column_width - 3] + "..."
        e.self_cpu_percent = _format_time_share(e.self_cpu_time_total, total_self)
        e.total_cpu_percent = (_format_time_share(e.cpu_time_total, total_self)
                               if not e.is_async else 0)
        values: list[Any] = [name]
        if has_overloads:
            overload = e.overload_name
            if max_name_column_width is not None and len(overload) >= max_name_column_width - 3:
                overload = overload[:max_name_column_width - 3] + "..."
            values.append(overload)
        values += [e.self_cpu_percent, in_unit(e.self_cpu_time_total), e.total_cpu_percent,
                   in_unit(e.cpu_time_total), in_unit(e.cpu_time)]
        if profile_memory:
            values += [_format_memory(e.cpu_memory_usage),
                       _format_memory(e.self_cpu_memory_usage)]
        values.append(e.count)
        if has_shapes:
            values.append(str(e.input_shapes)[:shapes_width])
        if stacks:
            values.append(trimmed(e.stack[0]) if e.stack else "")
        lines.append(row_format.format(*values))
        if stacks:
            blank = [""] * (len(headers) - 1)
            for entry in e.stack[1:]:
                lines.append(row_format.format(*blank, trimmed(entry)))
            lines.append(row_format.format(*blank, ""))
    lines.append(separator)
    lines.append(f"Self CPU time total: {in_unit(total_self)}")
    return "".join(line + "\n" for line in lines)
