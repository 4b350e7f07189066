"""``torch.profiler.profile``: the profiler of training loops (torch's Kineto-based one).

Without a schedule it records the whole block, like ``torch.autograd.profiler.profile``.
With one, each ``prof.step()`` moves to the next step, and the schedule says what each step
does (``ProfilerAction``): nothing, warm up, record, or record and then hand the recording to
``on_trace_ready``. The moves from one action to the next are torch's: a cycle's recording
starts at its first recording step and ends after its last one (``RECORD_AND_SAVE``), when
``on_trace_ready(prof)`` is called; ``prof.events()``, ``key_averages()`` and
``export_chrome_trace()`` then report on that cycle. Each step is a range named
``ProfilerStep#<n>``.
"""

from __future__ import annotations

import enum
import os
import socket
import time
import warnings
from collections.abc import Callable, Iterable
from typing import Any

from .._naming import CEnumType, public
from ..autograd import profiler as autograd_profiler
from ..autograd.profiler_util import EventList


@public("._C._profiler")
class ProfilerActivity(enum.Enum, metaclass=CEnumType):
    """What a profiler records: ``CPU`` (ops on the host) is what there is here; the
    accelerators' activities have no events."""

    CPU = 0
    XPU = 1
    MTIA = 4
    CUDA = 2
    HPU = 3
    PrivateUse1 = 5

    def __int__(self) -> int:
        return self.value


def supported_activities() -> set[ProfilerActivity]:
    """The activities this build can record: ``{ProfilerActivity.CPU}``."""
    return {ProfilerActivity.CPU}


@public(".profiler.profiler")
class ProfilerAction(enum.Enum):
    """What the profiler does at a step (what a ``schedule`` returns)."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3
    DEVICE_STOPPED = 4


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0,
             skip_first_wait: int = 0) -> Callable[[int], ProfilerAction]:
    """The action of each step: skip ``skip_first`` steps, then cycles of ``wait`` steps
    doing nothing, ``warmup`` steps warming up and ``active`` steps recording (the last one
    ``RECORD_AND_SAVE``), ``repeat`` cycles (0: until the end). ``skip_first_wait`` skips the
    first cycle's wait.

    Example:
        >>> import tapegrad as torch
        >>> s = torch.profiler.schedule(wait=1, warmup=1, active=2)
        >>> [s(i).name for i in range(4)]
        ['NONE', 'WARMUP', 'RECORD', 'RECORD_AND_SAVE']
    """

    def schedule_fn(step: int) -> ProfilerAction:
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait != 0:
            step += wait
        cycle = wait + warmup + active
        if repeat > 0 and step / cycle >= repeat:
            return ProfilerAction.NONE
        at = step % cycle
        if at < wait:
            return ProfilerAction.NONE
        if at < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if at < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), "
            f"warmup={warmup} (need >= 0), active={active} (need > 0), repeat={repeat} "
            f"(need >= 0), skip_first={skip_first} (need >= 0).")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results",
                      UserWarning, stacklevel=2)
    return schedule_fn


def _default_schedule(_: int) -> ProfilerAction:
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name: str, worker_name: str | None = None,
                              use_gzip: bool = False, use_python_export: bool = False
                              ) -> Callable[[Any], None]:
    """An ``on_trace_ready`` that writes each recording to ``dir_name`` as
    ``<worker_name>.<time in ns>.pt.trace.json`` (``.gz`` with ``use_gzip``); the worker is
    ``<hostname>_<pid>`` unless named."""

    def handler_fn(prof: Any) -> None:
        nonlocal worker_name
        if not os.path.isdir(dir_name):
            try:
                os.makedirs(dir_name, exist_ok=True)
            except Exception as e:
                raise RuntimeError("Can't create directory: " + dir_name) from e
        if not worker_name:
            worker_name = f"{socket.gethostname()}_{os.getpid()}"
        name = f"{worker_name}.{time.time_ns()}.pt.trace.json" + (".gz" if use_gzip else "")
        prof.export_chrome_trace(os.path.join(dir_name, name))

    return handler_fn


def _activity_set(activities: Iterable[Any] | None) -> set:
    if activities is None:
        return supported_activities()
    found: set = set()
    for item in activities:
        if isinstance(item, ProfilerActivity):
            found.add(item)
        elif isinstance(item, dict):
            found.update(item.keys())
    return found


@public(".profiler.profiler")
class profile:  # noqa: N801 - torch's name
    """Record the ops, backward nodes and named ranges of a block or of the steps a
    ``schedule`` picks (see the module docstring).

    ``activities``: ``ProfilerActivity.CPU`` (the default; the others record nothing here).
    ``record_shapes``, ``profile_memory``, ``with_stack``: as ``torch.autograd.profiler.
    profile``. ``on_trace_ready(prof)`` is called at the end of each recorded cycle.

    Example:
        >>> import tapegrad as torch
        >>> with torch.profiler.profile() as prof:
        ...     y = torch.ones(3) * 2
        >>> [e.key for e in prof.key_averages()]
        ['aten::mul']
    """

    def __init__(self, *, activities: Iterable[Any] | None = None,
                 schedule: Callable[[int], ProfilerAction] | None = None,
                 on_trace_ready: Callable[..., Any] | None = None,
                 record_shapes: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, with_flops: bool = False,
                 with_modules: bool = False, experimental_config: Any = None,
                 execution_trace_observer: Any = None, acc_events: bool = False,
                 use_cuda: bool | None = None,
                 custom_trace_id_callback: Callable[[], str] | None = None,
                 post_processing_timeout_s: float | None = None) -> None:
        chosen = _activity_set(activities)
        if use_cuda is not None:
            warnings.warn("`use_cuda` is deprecated, use `activities` argument instead",
                          FutureWarning, stacklevel=2)
            if use_cuda:
                chosen.add(ProfilerActivity.CUDA)
            else:
                chosen.discard(ProfilerActivity.CUDA)
        if not chosen:
            raise AssertionError("No valid profiler activities found")
        self.activities = chosen
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.with_modules = with_modules
        self.experimental_config = experimental_config
        self.execution_trace_observer = execution_trace_observer
        self.acc_events = acc_events
        self.custom_trace_id_callback = custom_trace_id_callback
        self.profiler: autograd_profiler.profile | None = None
        self.mem_tl = None
        self.use_device = None
        self.preset_metadata: dict[str, str] = {}
        self.schedule = schedule or _default_schedule
        self.record_steps = schedule is not None
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.step_rec_fn: autograd_profiler.record_function | None = None
        self.current_action = self.schedule(self.step_num)
        if self.current_action == ProfilerAction.DEVICE_STOPPED:
            raise ValueError("ProfilerAction.DEVICE_STOPPED is set internally by the profiler "
                             "and must not be returned by a user-provided schedule")
        self._metadata: dict[str, str] = {}

    # -- the actions of the moves between steps (torch's table) ----------------------------

    def prepare_trace(self) -> None:
        """Make a recorder (a warm-up step's); ``start_trace`` starts it."""
        if self.profiler is None or not self.acc_events:
            self.profiler = autograd_profiler.profile(
                record_shapes=self.record_shapes, profile_memory=self.profile_memory,
                with_stack=self.with_stack, with_flops=self.with_flops,
                with_modules=self.with_modules, acc_events=self.acc_events)

    def start_trace(self) -> None:
        assert self.profiler is not None
        self.profiler.__enter__()

    def stop_trace(self) -> None:
        if self.profiler is not None and self.profiler.entered:
            self.profiler.__exit__(None, None, None)

    def _trace_ready(self) -> None:
        if self.on_trace_ready:
            self.on_trace_ready(self)

    def _transit_action(self, prev: ProfilerAction, current: ProfilerAction | None) -> None:
        A = ProfilerAction
        prepare, start, stop, ready = (self.prepare_trace, self.start_trace, self.stop_trace,
                                       self._trace_ready)

        def warn(text: str) -> Callable[[], None]:
            return lambda: warnings.warn(text, UserWarning, stacklevel=4)

        moves: dict[tuple[Any, Any], list[Callable[[], None]]] = {
            (A.NONE, A.WARMUP): [prepare],
            (A.NONE, A.RECORD): [prepare, start],
            (A.NONE, A.RECORD_AND_SAVE): [prepare, start],
            (A.WARMUP, A.NONE): [warn("Incorrect schedule: WARMUP followed by NONE"), start,
                                 stop],
            (A.WARMUP, A.RECORD): [start],
            (A.WARMUP, A.RECORD_AND_SAVE): [start],
            (A.RECORD, A.NONE): [warn("Incorrect schedule: RECORD followed by NONE"), stop],
            (A.RECORD, A.WARMUP): [warn("Incorrect schedule: RECORD followed by WARMUP"), stop],
            (A.RECORD_AND_SAVE, A.NONE): [stop, ready],
            (A.RECORD_AND_SAVE, A.WARMUP): [stop, ready, prepare],
            (A.RECORD_AND_SAVE, A.RECORD): [stop, ready, prepare, start],
            (A.RECORD_AND_SAVE, A.RECORD_AND_SAVE): [stop, ready, prepare, start],
            (A.WARMUP, None): [start, stop],
            (A.RECORD, None): [stop, ready],
            (A.RECORD_AND_SAVE, None): [stop, ready],
        }
        for action in moves.get((prev, current), []):
            action()

    # -- the user's side -------------------------------------------------------------------

    def __enter__(self) -> profile:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        self._transit_action(ProfilerAction.NONE, self.current_action)
        if self.record_steps:
            self.step_rec_fn = autograd_profiler.record_function(
                "ProfilerStep#" + str(self.step_num))
            self.step_rec_fn.__enter__()

    def stop(self) -> None:
        if self.record_steps and self.step_rec_fn:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None
        self._transit_action(self.current_action, None)

    def step(self) -> None:
        """The next step starts: do what the schedule says for it."""
        if self.record_steps and self.step_rec_fn:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None
        prev = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        if self.current_action == ProfilerAction.DEVICE_STOPPED:
            raise ValueError("ProfilerAction.DEVICE_STOPPED is set internally by the profiler "
                             "and must not be returned by a user-provided schedule")
        self._transit_action(prev, self.current_action)
        if self.record_steps:
            self.step_rec_fn = autograd_profiler.record_function(
                "ProfilerStep#" + str(self.step_num))
            self.step_rec_fn.__enter__()

    def events(self) -> EventList:
        """The recorded events (of the last cycle), in the order they started."""
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before accessing events")
        return self.profiler.function_events

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False) -> EventList:
        """One row per op name (and input shapes or stack frames when asked)."""
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before getting key averages")
        return self.profiler.key_averages(group_by_input_shape, group_by_stack_n,
                                          group_by_overload_name)

    def export_chrome_trace(self, path: str, use_python_export: bool = False) -> None:
        """Write the recording as a Chrome trace (JSON; gzip when ``path`` ends in
        ``.gz``)."""
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before exporting chrome trace")
        self.profiler._metadata = {**self.preset_metadata, **self._metadata}
        self.profiler.export_chrome_trace(path)

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total") -> None:
        """For flame graphs (needs ``with_stack=True``)."""
        if self.profiler is None:
            raise AssertionError("Profiler must be initialized before exporting stacks")
        self.profiler.export_stacks(path, metric)

    def add_metadata(self, key: str, value: str) -> None:
        """A (key, string value) pair written into the trace."""
        self._metadata[key] = '"' + value.replace('"', '\\"') + '"'

    def add_metadata_json(self, key: str, value: str) -> None:
        """A (key, JSON value) pair written into the trace."""
        self._metadata[key] = value

    def preset_metadata_json(self, key: str, value: str) -> None:
        """A (key, JSON value) pair for every trace this profiler writes."""
        self.preset_metadata[key] = value

    def set_custom_trace_id_callback(self, callback: Callable[[], str]) -> None:
        self.custom_trace_id_callback = callback

    def get_trace_id(self) -> str | None:
        return None if self.profiler is None else getattr(self.profiler, "trace_id", None)
