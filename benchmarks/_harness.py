"""Measurement machinery shared by every workload: weights, loss check, timing, memory, profile,
op breakdown.

One workload run (``run_workload``)::

    cfg = workload.config(quick)          sizes
    bank = WeightBank(workload.name)      NumPy arrays from a fixed seed, made once, shared
    for lib in (tapegrad, torch):         the same ``workload.setup(lib, cfg, bank)`` code
        step = setup(...); loss0 = step() first step = loss check (and the first warm-up)
    |loss0_tapegrad - loss0_torch| <= 1e-5 * |loss0_torch|, else "mismatch" (nothing timed)
    timed pass     warm-up steps, then ``repeats`` rounds; each round times ``number`` steps of
                   every library in turn (rotating order); the median per step
    memory pass    one more step under tracemalloc (tapegrad) or torch's profiler (torch)
    on request     cProfile of some tapegrad steps (--profile); the time inside each registered
                   op's forward kernel and backward rule over some steps (--ops)

Garbage collection stays on during timing (users run with it on); ``gc.collect()`` runs before
each repeat so one repeat does not pay for the garbage of the previous one.
"""

from __future__ import annotations

import collections
import contextlib
import cProfile
import gc
import importlib
import io
import math
import os
import platform
import pstats
import statistics
import sys
import time
import traceback
import tracemalloc
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import numpy as np

SEED = 1234
LOSS_RTOL = 1e-5
SETTLE_S = 0.5  # full mode: idle pause before timing, so the other library's threads go to sleep
SWITCH_S = 0.2  # full mode: the same before each turn of an interleaved repeat

Step = Callable[[], Any]
COMPILED = "tapegrad compiled"  # the label of tapegrad.compile(step) in the timed rounds


@dataclass(frozen=True)
class Timing:
    """How a workload is timed: warm-up steps, repeats, and the least wall time of one repeat."""

    warmup: int = 2
    repeats: int = 5
    min_repeat_s: float = 0.25


QUICK_TIMING = Timing(warmup=0, repeats=1, min_repeat_s=0.0)


@dataclass(frozen=True)
class Baseline:
    """A reference that is not a library run, e.g. NumPy's bare ``a @ b`` for matmul."""

    label: str
    setup: Callable[[dict, WeightBank], Step]
    per_step: Callable[[float, dict], float]


@dataclass(frozen=True)
class Workload:
    """One benchmark, written once against the torch API and run on each library.

    Attributes:
        name: the name ``--only`` takes.
        unit: the unit of the reported number (``us/op``, ``ms/step``, ``GFLOP/s``, ``s``).
        requires: dotted names the library must have (``nn.Linear``); a missing one is reported
            as ``tapegrad: missing <name>`` instead of running.
        config: ``config(quick) -> dict`` of sizes.
        setup: ``setup(lib, cfg, bank) -> step``; ``step()`` runs one full iteration and returns
            the loss tensor (computed before any optimizer update).
        per_step: seconds per step -> the reported number.
        describe: ``describe(cfg) -> str``, one line for the table.
        higher_is_better: True for rates (GFLOP/s).
        timing: how the full (not ``--quick``) run is timed.
        baseline: an extra reference measured next to the libraries; when set, the ratio column is
            tapegrad / baseline instead of tapegrad / torch.
        references: more references timed in the same interleaved rounds and only reported in
            the notes, each with tapegrad's ratio to it (e.g. NumPy doing the same work by hand).
        loss_rtol: how far the two first-step losses may be apart (relative).
        run: a workload that runs in processes of its own (the distributed ones) measures
            itself: ``run(workload, quick, libs, log) -> Result``, and ``setup`` is not used.
        matmul_ops: the registered ops whose forward kernels and backward rules are the
            matrix products (``mm``, ``addmm``, ``bmm``, ``convolution``): the share of a
            tapegrad (eager) step spent inside them is measured and reported (``op_share``),
            what the BLAS does against everything around it.
    """

    name: str
    unit: str
    requires: tuple[str, ...]
    config: Callable[[bool], dict]
    setup: Callable[[ModuleType, dict, WeightBank], Step]
    per_step: Callable[[float, dict], float]
    describe: Callable[[dict], str]
    higher_is_better: bool = False
    timing: Timing = Timing()
    baseline: Baseline | None = None
    references: tuple[Baseline, ...] = ()
    loss_rtol: float = LOSS_RTOL
    run: Callable[..., Result] | None = None
    matmul_ops: tuple[str, ...] = ()


# --------------------------------------------------------------------------- weights and inputs


class WeightBank:
    """NumPy arrays drawn once from a fixed seed and shared by both libraries.

    Each array has its own generator, seeded by (SEED, workload, key), so an array does not depend
    on the order in which arrays are asked for, nor on which library asks first.
    """

    def __init__(self, workload: str, seed: int = SEED) -> None:
        self._salt = [seed, zlib.crc32(workload.encode())]
        self._arrays: dict[str, np.ndarray] = {}

    def array(self, key: str, make: Callable[[np.random.Generator], np.ndarray]) -> np.ndarray:
        """The array stored under ``key``, made by ``make(rng)`` on first use."""
        if key not in self._arrays:
            rng = np.random.default_rng([*self._salt, zlib.crc32(key.encode())])
            self._arrays[key] = np.ascontiguousarray(make(rng))
        return self._arrays[key]

    def tensor(self, lib: ModuleType, key: str,
               make: Callable[[np.random.Generator], np.ndarray]) -> Any:
        """``lib.tensor`` of a copy of ``array(key, make)`` (dtype kept)."""
        return lib.tensor(self.array(key, make).copy())

    def param(self, name: str, shape: tuple[int, ...]) -> np.ndarray:
        """Float32 initial value of a parameter: torch-like uniform(+-1/sqrt(fan_in)) for
        matrices and kernels, 1 + 0.1 N(0, 1) for 1-D ``weight`` (norm gains), U(+-0.1) for
        biases."""

        def make(rng: np.random.Generator) -> np.ndarray:
            if len(shape) >= 2:
                bound = 1.0 / math.sqrt(math.prod(shape[1:]))
                value = rng.uniform(-bound, bound, shape)
            elif name.endswith("weight"):
                value = 1.0 + 0.1 * rng.standard_normal(shape)
            else:
                value = rng.uniform(-0.1, 0.1, shape)
            return value.astype(np.float32)

        arr = self.array("param:" + name, make)
        if arr.shape != tuple(shape):
            raise AssertionError(f"parameter {name}: shape {tuple(shape)} here, {arr.shape} in "
                                 "the other library (the model code differs between libraries)")
        return arr

    def load(self, lib: ModuleType, model: Any) -> None:
        """Copy the bank's values into every parameter of ``model`` and check they landed."""
        with lib.no_grad():
            for name, p in model.named_parameters():
                arr = self.param(name, tuple(p.shape))
                p.copy_(lib.tensor(arr.copy()))
                if not np.array_equal(p.detach().numpy(), arr):
                    raise AssertionError(f"{lib.__name__}: parameter {name} did not take the "
                                         "bank's values")


def training_step(forward_loss: Callable[[], Any], opt: Any) -> Step:
    """The usual iteration: ``zero_grad``, loss, ``backward``, ``step``; returns the loss."""

    def step() -> Any:
        opt.zero_grad()
        loss = forward_loss()
        loss.backward()
        opt.step()
        return loss

    return step


# --------------------------------------------------------------------------- environment


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _blas_info() -> str:
    try:
        from threadpoolctl import threadpool_info  # optional

        libs = [i for i in threadpool_info() if i.get("user_api") == "blas"]
        if libs:
            return "; ".join(f"{i.get('internal_api')} {i.get('version')} "
                             f"({i.get('num_threads')} threads)" for i in libs)
    except Exception:
        pass
    try:
        cfg = np.show_config(mode="dicts")
        blas = cfg["Build Dependencies"]["blas"]
        text = f"{blas.get('name')} {blas.get('version')}"
    except Exception:
        text = "unknown"
    threads = [f"{k}={os.environ[k]}" for k in
               ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS") if k in os.environ]
    return text + (f" ({', '.join(threads)})" if threads else " (threads: library default)")


def _load_average() -> str | None:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except (AttributeError, OSError):
        return None


def environment(libs: dict[str, ModuleType]) -> dict:
    """What the numbers were measured on."""
    try:
        affinity = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        affinity = None
    env = {
        "platform": platform.platform(),
        "cpu": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "cpu_affinity": affinity,
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "numpy": np.__version__,
        "blas": _blas_info(),
        "tapegrad": getattr(libs.get("tapegrad"), "__version__", None),
        "torch": None,
        "torch_num_threads": None,
        "load_average": _load_average(),
        "time": time.strftime("%Y-%m-%d %H:%M:%S %z"),
    }
    torch = libs.get("torch")
    if torch is not None:
        env["torch"] = torch.__version__
        env["torch_num_threads"] = torch.get_num_threads()
    return env


def load_torch() -> ModuleType | None:
    """Real torch when it is installed, else None (the torch side is then skipped)."""
    try:
        import torch
    except ImportError:
        return None
    return torch


def first_missing(lib: ModuleType, names: tuple[str, ...]) -> str | None:
    """The first dotted name of ``names`` that ``lib`` lacks (submodules imported on the way)."""
    for dotted in names:
        obj: Any = lib
        path = []
        for part in dotted.split("."):
            path.append(part)
            if hasattr(obj, part):
                obj = getattr(obj, part)
                continue
            if isinstance(obj, ModuleType):
                module = f"{obj.__name__}.{part}"
                try:
                    obj = importlib.import_module(module)
                    continue
                except ModuleNotFoundError as exc:
                    if exc.name != module:  # it exists but imports something missing
                        return f"{'.'.join(path)} ({_fmt_error(exc, 100)})"
                except Exception as exc:  # half-written and not importable yet
                    return f"{'.'.join(path)} ({_fmt_error(exc, 100)})"
            return ".".join(path)
    return None


# --------------------------------------------------------------------------- measuring


@dataclass
class Side:
    """What one library did on one workload."""

    status: str  # ok | missing | error | mismatch
    detail: str = ""
    first_loss: float | None = None
    seconds_per_step: float | None = None
    repeat_seconds: list[float] = field(default_factory=list)
    steps_per_repeat: int = 0
    value: float | None = None
    peak_bytes: int | None = None
    peak_method: str = ""
    profile: str = ""
    ops: str = ""


@dataclass
class Result:
    """One row of the table."""

    workload: str
    unit: str
    description: str
    config: dict
    higher_is_better: bool
    sides: dict[str, Side]
    loss_rel_diff: float | None = None
    baseline_label: str | None = None
    baseline_value: float | None = None
    ratio: float | None = None
    ratio_best: float | None = None  # the same ratio from each side's fastest repeat
    ratio_of: str = ""
    references: dict[str, float] = field(default_factory=dict)  # label -> value (per_step)
    compiled: float | None = None  # tapegrad.compile(step), timed in the same rounds
    compiled_ratio: float | None = None  # compiled / torch (or / the baseline)
    compiled_ratio_best: float | None = None  # the same from each side's fastest repeat
    compiled_detail: str = ""  # why there is no compiled number, or the signatures run eagerly
    matmul_share: float | None = None  # of a tapegrad eager step, inside ``matmul_ops``


def time_steps(steps: dict[str, Step], timing: Timing) -> dict[str, tuple[float, list, int]]:
    """Time every library's step; per name: median seconds per step, the repeats, steps per
    repeat.

    The repeats interleave: repeat r times each library once, the order rotating with r, so a
    change in the machine's load during the run falls on every side alike instead of on
    whichever library happened to be timed then. In full mode each turn starts with an idle
    pause (the other library's worker threads go to sleep) and, if the workload has warm-up
    steps, one untimed step (its own caches and threads warm again)."""
    full = timing.min_repeat_s > 0 or timing.warmup > 0
    numbers: dict[str, int] = {}
    for name, step in steps.items():
        if full:
            time.sleep(SETTLE_S)
        for _ in range(timing.warmup):
            step()
        number = 1
        if timing.min_repeat_s > 0:
            t0 = time.perf_counter()
            step()  # calibration, and one more warm-up step
            single = time.perf_counter() - t0
            number = max(1, math.ceil(timing.min_repeat_s / max(single, 1e-9)))
        numbers[name] = number
    names = list(steps)
    reps: dict[str, list[float]] = {name: [] for name in names}
    for r in range(timing.repeats):
        k = r % len(names)
        for name in names[k:] + names[:k]:
            step = steps[name]
            if full and len(names) > 1:
                time.sleep(SWITCH_S)
                if timing.warmup:
                    step()
            gc.collect()
            t0 = time.perf_counter()
            for _ in range(numbers[name]):
                step()
            reps[name].append((time.perf_counter() - t0) / numbers[name])
    return {name: (statistics.median(reps[name]), reps[name], numbers[name]) for name in names}


def tracemalloc_peak(step: Step) -> int:
    """Peak bytes traced (Python objects and NumPy buffers) while one step runs, on top of
    what was allocated before it."""
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        step()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@contextlib.contextmanager
def _quiet_fds() -> Iterator[None]:
    """Silence C-level writes to stdout/stderr (torch's profiler chats on them)."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, devnull):
            os.close(fd)


def torch_profiler_peak(torch: ModuleType, step: Step) -> int | None:
    """Peak bytes of tensor storage allocated while one step runs, from torch's own profiler
    (allocations only: torch's autograd nodes and Python objects are not counted); None when
    this torch build does not expose it."""
    try:
        from torch._C._profiler import _EventType
        from torch.profiler import ProfilerActivity, profile
    except ImportError:
        return None
    gc.collect()
    with _quiet_fds():
        with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
            step()
    try:
        roots = prof.profiler.kineto_results.experimental_event_tree()
    except AttributeError:
        return None
    allocs = []
    stack = list(roots)
    while stack:
        ev = stack.pop()
        stack.extend(ev.children)
        if ev.tag == _EventType.Allocation:
            allocs.append((ev.start_time_ns, ev.extra_fields.alloc_size,
                           ev.extra_fields.total_allocated))
    if not allocs:
        return 0
    allocs.sort()
    base = allocs[0][2] - allocs[0][1]
    return max(total for _, _, total in allocs) - base


def profile_top(step: Step, steps: int, lines: int) -> str:
    """cProfile of ``steps`` steps: the top ``lines`` functions by tottime, as text."""
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(steps):
        step()
    prof.disable()
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out)
    stats.strip_dirs().sort_stats("tottime").print_stats(lines)
    return "\n".join(ln for ln in out.getvalue().splitlines() if ln.strip())


def op_breakdown(step: Step, steps: int, lines: int) -> str:
    """Where a tapegrad step's time goes, op by op: every registered op's forward kernel and
    backward rule timed where they run, over ``steps`` steps (an op that runs inside another
    op's kernel or rule counts towards the outer one), and what is left outside them: Python
    around the ops, the autograd engine, the optimizer. The entries are restored afterwards."""
    fwd, bwd, calls, total = _time_ops(step, steps)

    def ms(sec: float) -> str:
        return f"{sec / steps * 1e3:.3f}"

    names = sorted(set(fwd) | set(bwd), key=lambda k: -(fwd[k] + bwd[k]))
    rows = [f"{'op':<22} {'calls':>6} {'forward ms':>11} {'backward ms':>12}"]
    rows += [f"{k:<22} {calls[k] / steps:>6.1f} {ms(fwd[k]):>11} {ms(bwd[k]):>12}"
             for k in names[:lines]]
    if len(names) > lines:
        rest = names[lines:]
        rows.append(f"{f'({len(rest)} more)':<22} {'':>6} {ms(sum(fwd[k] for k in rest)):>11} "
                    f"{ms(sum(bwd[k] for k in rest)):>12}")
    inside_ops = sum(fwd.values()) + sum(bwd.values())
    rows.append(f"step {ms(total)} ms ({steps} steps, timers included); inside the ops "
                f"{ms(inside_ops)}, outside them {ms(total - inside_ops)} (Python around the "
                f"ops, the engine, the optimizer)")
    return "\n".join(rows)


def op_share(step: Step, steps: int, names: tuple[str, ...]) -> float:
    """The share of a tapegrad step's time spent inside the forward kernels and backward rules
    of the ops ``names`` (the matrix products), timed as ``op_breakdown`` times them."""
    fwd, bwd, _, total = _time_ops(step, steps)
    inside = sum(fwd[k] + bwd[k] for k in names)
    return inside / total if total > 0 else 0.0


def _time_ops(step: Step, steps: int) -> tuple[dict, dict, collections.Counter, float]:
    """Run ``step`` ``steps`` times with every op's forward kernel and backward rule timed:
    per op name the seconds in its forward kernels, in its backward rules, its forward calls,
    and the total seconds of the steps."""
    from tapegrad.ops import _registry as reg

    clock = time.perf_counter
    fwd: dict[str, float] = collections.defaultdict(float)
    bwd: dict[str, float] = collections.defaultdict(float)
    calls: collections.Counter = collections.Counter()
    inside = [False]  # an op is being timed: nested ones are part of it

    def timed(fn: Callable, bucket: dict, name: str | None = None) -> Callable:
        """``fn`` timed into ``bucket`` under ``name`` (a backward rule: its node's op)."""
        def run(*args: Any, **kwargs: Any) -> Any:
            if inside[0]:
                return fn(*args, **kwargs)
            inside[0] = True
            t0 = clock()
            try:
                return fn(*args, **kwargs)
            finally:
                key = name if name is not None else args[0].op.name
                bucket[key] += clock() - t0
                if bucket is fwd:
                    calls[key] += 1
                inside[0] = False
        return run

    node_apply = reg.OpNode.apply
    forwards = {op: op.forward for op in reg.REGISTRY.values()}
    try:
        for op, fn in forwards.items():
            op.forward = timed(fn, fwd, op.name)
        reg.OpNode.apply = timed(node_apply, bwd)  # type: ignore[method-assign]
        t0 = clock()
        for _ in range(steps):
            step()
        total = clock() - t0
    finally:
        for op, fn in forwards.items():
            op.forward = fn
        reg.OpNode.apply = node_apply  # type: ignore[method-assign]
    return fwd, bwd, calls, total


def _fmt_error(exc: BaseException, width: int = 200) -> str:
    msg = str(exc).splitlines()[0] if str(exc) else ""
    text = f"{type(exc).__name__}: {msg}"
    return text if len(text) <= width else text[: width - 3] + "..."


def run_workload(w: Workload, quick: bool, libs: dict[str, ModuleType], *,
                 repeats: int | None = None, profile_lines: int = 0, op_lines: int = 0,
                 log: Callable[[str], None] = lambda s: None) -> Result:
    """Set up, check, time and measure one workload on every library in ``libs``."""
    if w.run is not None:
        return w.run(w, quick, libs, log)
    cfg = w.config(quick)
    timing = QUICK_TIMING if quick else w.timing
    if repeats is not None:
        timing = Timing(timing.warmup, repeats, timing.min_repeat_s)
    bank = WeightBank(w.name)
    res = Result(w.name, w.unit, w.describe(cfg), cfg, w.higher_is_better, {})
    steps: dict[str, Step] = {}

    for name, lib in libs.items():
        missing = first_missing(lib, w.requires)
        if missing is not None:
            res.sides[name] = Side("missing", missing)
            log(f"  {name}: missing {missing}")
            continue
        try:
            step = w.setup(lib, cfg, bank)
            loss = float(step().item())
        except NotImplementedError as exc:
            if name == "torch":
                raise
            res.sides[name] = Side("missing", _fmt_error(exc))
            continue
        except Exception as exc:
            if name == "torch":  # the benchmark code itself is wrong
                raise
            traceback.print_exc()
            res.sides[name] = Side("error", _fmt_error(exc))
            continue
        res.sides[name] = Side("ok", first_loss=loss)
        steps[name] = step

    # the loss check: same weights, same inputs, same code -> same first loss
    tg, th = res.sides.get("tapegrad"), res.sides.get("torch")
    if tg and th and tg.status == th.status == "ok":
        rel = abs(tg.first_loss - th.first_loss) / max(abs(th.first_loss), 1e-30)
        res.loss_rel_diff = rel
        if not rel <= w.loss_rtol:  # also catches NaN
            detail = (f"first-step loss tapegrad {tg.first_loss!r} vs torch {th.first_loss!r} "
                      f"(relative difference {rel:.3g} > {w.loss_rtol:g})")
            tg.status, tg.detail = "mismatch", detail
            log("  LOSS MISMATCH: " + detail)
            steps.clear()  # nothing to compare: time neither side

    timed = dict(steps)
    if "tapegrad" in steps:  # the compiled column: the same step through tapegrad.compile
        lib = libs["tapegrad"]
        try:
            compiled = lib.compile(w.setup(lib, cfg, WeightBank(w.name)))
            first = float(compiled().item())
            if first != res.sides["tapegrad"].first_loss:
                raise AssertionError(f"compiled first loss {first!r} differs from eager")
            timed[COMPILED] = compiled
        except Exception as exc:
            res.compiled_detail = _fmt_error(exc)
    if w.baseline is not None:
        timed[w.baseline.label] = w.baseline.setup(cfg, bank)
    for extra in w.references:
        timed[extra.label] = extra.setup(cfg, bank)
    log(f"  timing {', '.join(timed)} (interleaved)")
    measured = time_steps(timed, timing) if timed else {}
    for name in steps:
        side = res.sides[name]
        sec, reps, number = measured[name]
        side.seconds_per_step, side.repeat_seconds, side.steps_per_repeat = sec, reps, number
        side.value = w.per_step(sec, cfg)

    compiled_best = None
    if COMPILED in measured:
        res.compiled = w.per_step(measured[COMPILED][0], cfg)
        compiled_best = w.per_step(min(measured[COMPILED][1]), cfg)
        eager = [e.eager for e in timed[COMPILED].entries if e.eager]  # type: ignore[attr-defined]
        if eager:
            res.compiled_detail = "runs eagerly: " + eager[0]
    baseline_best = None
    if w.baseline is not None:
        sec, reps, _ = measured[w.baseline.label]
        res.baseline_label = w.baseline.label
        res.baseline_value = w.baseline.per_step(sec, cfg)
        baseline_best = w.baseline.per_step(min(reps), cfg)
    for extra in w.references:
        if extra.label in measured:
            res.references[extra.label] = extra.per_step(measured[extra.label][0], cfg)

    for name, step in steps.items():
        log(f"  memory {name}")
        side = res.sides[name]
        if name == "torch":
            side.peak_bytes = torch_profiler_peak(libs["torch"], step)
            side.peak_method = "torch.profiler" if side.peak_bytes is not None else "n/a"
        else:
            side.peak_bytes = tracemalloc_peak(step)
            side.peak_method = "tracemalloc"

    if profile_lines and "tapegrad" in steps:
        log("  profiling tapegrad")
        n = max(1, min(20, res.sides["tapegrad"].steps_per_repeat * timing.repeats))
        res.sides["tapegrad"].profile = profile_top(steps["tapegrad"], n, profile_lines)
    if w.matmul_ops and "tapegrad" in steps:
        log("  timing tapegrad's matrix products")
        res.matmul_share = op_share(steps["tapegrad"], 1 if quick else 2, w.matmul_ops)
    if op_lines and "tapegrad" in steps:
        log("  timing tapegrad's ops")
        n = max(1, min(50, res.sides["tapegrad"].steps_per_repeat * timing.repeats))
        res.sides["tapegrad"].ops = op_breakdown(steps["tapegrad"], n, op_lines)

    def best(side: Side | None) -> float | None:
        return w.per_step(min(side.repeat_seconds), cfg) if side and side.repeat_seconds else None

    tg = res.sides.get("tapegrad")
    if w.baseline is not None:
        res.ratio_of = f"tapegrad/{w.baseline.label}"
        ref, ref_best = res.baseline_value, baseline_best
    else:
        res.ratio_of = "tapegrad/torch"
        th = res.sides.get("torch")
        ref, ref_best = (th.value if th else None), best(th)
    if res.compiled is not None and ref:
        res.compiled_ratio = res.compiled / ref
        if compiled_best is not None and ref_best:
            res.compiled_ratio_best = compiled_best / ref_best
    if tg is not None and tg.value is not None and ref:
        res.ratio = tg.value / ref
        res.ratio_best = best(tg) / ref_best
    return res
