"""The profiler (torch.profiler, torch.autograd.profiler) against torch.

What can be compared exactly is: the reports made from given events (tables, averages),
the schedules and which steps they record, the names and shapes of the events a program's ops
produce (each of ours is one torch's profiler shows for the same program), and the enums.
Times are measured, so they are checked for consistency (nesting, self time), not equality.
The profiler must also leave nothing switched on when it stops: the library's hot paths check
one flag.
"""

from __future__ import annotations

import json
import warnings

import pytest

torch = pytest.importorskip("torch")


def _program(L):
    """A small training step: forward ops, a named range, a backward pass."""
    L.manual_seed(0)
    x = L.randn(8, 8, requires_grad=True)
    w = L.randn(8, 8)
    with L.autograd.profiler.record_function("forward"):
        y = (x @ w).relu()
        z = L.cat([y, y]).sum()
    z.backward()
    with L.no_grad():
        w.add_(1.0)
        w.mul_(x.detach())
    return x


def _profile(L, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with L.profiler.profile(**kwargs) as prof:
            _program(L)
    return prof


def test_op_names_are_torchs(lib):
    ours = {e.name for e in _profile(lib).events()}
    theirs = {e.name for e in _profile(torch).events()}
    assert {"aten::mm", "aten::relu", "aten::cat", "aten::sum", "aten::add_", "aten::mul_",
            "forward", "MmBackward0", "autograd::engine::evaluate_function: MmBackward0",
            "torch::autograd::AccumulateGrad"} <= ours
    assert ours <= theirs, f"names torch's profiler does not show: {sorted(ours - theirs)}"


def test_input_shapes_are_torchs(lib):
    # (the inputs an op is given: its tensors and numbers, not the kernel's other parameters,
    # such as add_'s alpha, which torch lists too)
    def shapes(L):
        prof = _profile(L, record_shapes=True)
        return {e.name: e.input_shapes for e in prof.events()
                if e.name in ("aten::mm", "aten::relu", "aten::mul_")}

    assert shapes(lib) == shapes(torch)


def test_events_nest(lib):
    prof = _profile(lib)
    events = prof.events()
    starts = [e.time_range.start for e in events]
    assert starts == sorted(starts)
    forward = next(e for e in events if e.name == "forward")

    def inside(e):
        return {c.name for c in e.cpu_children}.union(*(inside(c) for c in e.cpu_children))

    assert {"aten::mm", "aten::relu", "aten::cat", "aten::sum"} <= inside(forward)
    for e in events:
        assert e.time_range.end >= e.time_range.start
        assert e.self_cpu_time_total == pytest.approx(
            e.cpu_time_total - sum(c.cpu_time_total for c in e.cpu_children))
        for c in e.cpu_children:
            assert c.cpu_parent is e
            assert e.time_range.start <= c.time_range.start <= c.time_range.end <= (
                e.time_range.end)
    node = next(e for e in events if e.name == "autograd::engine::evaluate_function: "
                "MmBackward0")
    assert [c.name for c in node.cpu_children] == ["MmBackward0"]


def test_key_averages_count_calls(lib):
    prof = _profile(lib)
    rows = {r.key: r for r in prof.key_averages()}
    assert rows["aten::relu"].count == 1 and rows["aten::cat"].count == 1
    assert rows["forward"].count == 1
    assert rows["aten::mm"].count >= 1  # (torch's MmBackward0 runs aten::mm too)
    # the averages share out the same events' self times (of one run: another run's times
    # are another measurement)
    total = sum(r.self_cpu_time_total for r in rows.values())
    assert total == pytest.approx(prof.events().self_cpu_time_total, rel=1e-9) and total > 0


def _fabricated(L):
    """The same events on both sides: a range with two ops in it, one called twice."""
    util = L.autograd.profiler_util
    spec = [(0, "step", 0.0, 100.0, []), (1, "aten::mm", 10.0, 40.0, [[8, 8], [8, 8]]),
            (2, "aten::add", 50.0, 55.5, [[8, 8], []]), (3, "aten::mm", 60.0, 1260.0,
                                                         [[64, 8], [8, 8]]),
            (4, "a_rather_long_name_of_a_user_range_that_is_cut_in_the_table", 2000.0,
             2000.25, [])]
    events = util.EventList([util.FunctionEvent(i, name, 1, start, end, input_shapes=shapes,
                                                overload_name="", stack=[])
                             for i, name, start, end, shapes in spec])
    events._build_tree()
    return events


@pytest.mark.parametrize("options", [{}, {"sort_by": "cpu_time_total"},
                                     {"sort_by": "self_cpu_time_total", "row_limit": 2},
                                     {"header": "Profile", "time_unit": "ms"},
                                     {"max_name_column_width": 20},
                                     {"top_level_events_only": True}])
@pytest.mark.parametrize("kind", ["events", "averages", "averages by shape"])
def test_table_is_torchs(lib, kind, options):
    def table(L):
        events = _fabricated(L)
        if kind == "averages":
            events = events.key_averages()
        elif kind == "averages by shape":
            events = events.key_averages(group_by_input_shapes=True)
        return events.table(**options)

    assert table(lib) == table(torch)


def test_averages_are_torchs(lib):
    def rows(L, **kwargs):
        return [(r.key, r.count, r.cpu_time_total, r.self_cpu_time_total, r.cpu_time,
                 str(r.input_shapes), r.cpu_time_str, repr(r))
                for r in _fabricated(L).key_averages(**kwargs)]

    assert rows(lib) == rows(torch)
    assert rows(lib, group_by_input_shapes=True) == rows(torch, group_by_input_shapes=True)
    total = [(t.key, t.count, t.cpu_time_total, t.self_cpu_time_total)
             for t in (_fabricated(L).total_average() for L in (lib, torch))]
    assert total[0] == total[1]
    assert _fabricated(lib).self_cpu_time_total == _fabricated(torch).self_cpu_time_total


def test_chrome_trace(lib, tmp_path):
    prof = _profile(lib, record_shapes=True)
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())
    complete = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert {e.trace_name for e in prof.events()} <= {e["name"] for e in complete}
    for e in complete:
        assert e["dur"] >= 0 and isinstance(e["ts"], (int, float))
        assert {"pid", "tid", "cat", "args"} <= set(e)
    mm = next(e for e in complete if e["name"] == "aten::mm")
    assert mm["args"]["Input Dims"] == [[8, 8], [8, 8]]
    assert next(e for e in complete if e["name"] == "forward")["cat"] == "user_annotation"
    gz = tmp_path / "trace.json.gz"
    _profile(lib).export_chrome_trace(str(gz))  # (torch writes a recording once)
    import gzip

    assert json.loads(gzip.open(gz, "rt").read())["traceEvents"]


SCHEDULES = [dict(wait=1, warmup=1, active=2), dict(wait=0, warmup=1, active=1, repeat=2),
             dict(wait=2, warmup=1, active=3, repeat=1, skip_first=2),
             dict(wait=3, warmup=1, active=1, skip_first=1, skip_first_wait=1)]


@pytest.mark.parametrize("params", SCHEDULES)
def test_schedule_is_torchs(lib, params):
    ours = lib.profiler.schedule(**params)
    theirs = torch.profiler.schedule(**params)
    assert [ours(i).name for i in range(20)] == [theirs(i).name for i in range(20)]


def test_schedule_checks(compare):
    compare(lambda L: L.profiler.schedule(wait=1, warmup=0, active=1)(0).name)
    compare(lambda L: L.profiler.schedule(wait=1, warmup=1, active=0))
    compare(lambda L: L.profiler.schedule(wait=1, warmup=1, active=1)(-1))


@pytest.mark.parametrize("params", SCHEDULES[:3])
def test_scheduled_steps_are_torchs(lib, params):
    """Which steps each recorded cycle holds, and when on_trace_ready is called."""

    def run(L):
        ready = []

        def on_ready(prof):
            steps = sorted({e.name for e in prof.events() if e.name.startswith("ProfilerStep")})
            ready.append((prof.step_num, steps, sum(e.name == "aten::mm"
                                                    for e in prof.events())))

        a = L.ones(2, 2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with L.profiler.profile(schedule=L.profiler.schedule(**params),
                                    on_trace_ready=on_ready) as prof:
                for _ in range(9):
                    a @ a
                    prof.step()
        return ready

    assert run(lib) == run(torch)


def test_tensorboard_trace_handler(lib, tmp_path):
    handler = lib.profiler.tensorboard_trace_handler(str(tmp_path / "logs"), "worker0")
    with lib.profiler.profile(schedule=lib.profiler.schedule(wait=0, warmup=1, active=1),
                              on_trace_ready=handler) as prof:
        for _ in range(2):
            lib.ones(2) + 1
            prof.step()
    files = list((tmp_path / "logs").iterdir())
    assert len(files) == 1 and files[0].name.startswith("worker0.")
    assert files[0].name.endswith(".pt.trace.json")
    assert json.loads(files[0].read_text())["traceEvents"]


def test_enums_are_torchs(lib):
    for name in ("ProfilerActivity", "DeviceType", "ProfilerAction"):
        ours, theirs = getattr(lib.profiler, name), getattr(torch.profiler, name)
        assert [(k, int(v.value) if hasattr(v, "value") else int(v))
                for k, v in ours.__members__.items()] == [
            (k, int(v.value) if hasattr(v, "value") else int(v))
            for k, v in theirs.__members__.items()]
        assert [repr(v) for v in ours.__members__.values()] == [
            repr(v) for v in theirs.__members__.values()]
        assert [str(v) for v in ours.__members__.values()] == [
            str(v) for v in theirs.__members__.values()]
    assert lib.profiler.supported_activities() == {lib.profiler.ProfilerActivity.CPU}
    assert lib.profiler.kineto_available() is True


def test_legacy_profile(lib):
    a, b = lib.ones(2, 3), lib.ones(3, 2)
    with lib.autograd.profiler.profile(record_shapes=True) as prof:
        a @ b
    mm = next(e for e in prof.function_events if e.name == "aten::mm")
    assert mm.input_shapes == [[2, 3], [3, 2]]
    assert "aten::mm" in prof.table() and "aten::mm" in str(prof)
    assert {r.key: r.count for r in prof.key_averages()}["aten::mm"] == 1
    assert prof.self_cpu_time_total == pytest.approx(prof.function_events.self_cpu_time_total)
    with lib.autograd.profiler.profile(enabled=False) as off:
        lib.ones(1) + 1
    assert not hasattr(off, "function_events") or off.__dict__.get("_function_events") is None


def test_unfinished(compare):
    def scenario(L):
        return str(L.autograd.profiler.profile())

    compare(scenario)


def test_with_stack(lib):
    with lib.profiler.profile(with_stack=True) as prof:
        _program(lib)
    # (an op's stack, or in torch 2.13 an event per Python call)
    assert any("test_profiler.py" in text and "_program" in text
               for e in prof.events() for text in (e.name, *e.stack))
    if any(e.stack for e in prof.events()):  # the frames are a column of the table
        assert "Source Location" in prof.key_averages(group_by_stack_n=2).table()


def test_record_function_decorates(lib):
    @lib.autograd.profiler.record_function("helper")
    def helper(a):
        return a * 2

    with lib.profiler.profile() as prof:
        helper(lib.ones(2))
    helper_event = next(e for e in prof.events() if e.name == "helper")
    assert [c.name for c in helper_event.cpu_children] == ["aten::mul"]


def test_profile_memory(lib):
    with lib.profiler.profile(profile_memory=True) as prof:
        lib.ones(4, 4) @ lib.ones(4, 4)
    mm = next(e for e in prof.events() if e.name == "aten::mm")
    assert mm.cpu_memory_usage == 4 * 4 * 4
    assert "CPU Mem" in prof.key_averages().table()


def test_off_after_stop(lib, lib_name):
    if lib_name != "tapegrad":
        pytest.skip("the switches are tapegrad's")
    from tapegrad.autograd import listeners
    from tapegrad.ops import _registry

    with lib.profiler.profile():
        assert _registry._SPECIAL
        with lib.autograd.profiler.profile():  # nested: both record
            lib.ones(1) + 1
        assert _registry._SPECIAL
    assert not _registry._SPECIAL
    assert listeners.active is None and listeners.stack() == ()  # the node timer popped


@pytest.fixture
def torch_forward_ad_loaded():
    """torch's first make_dual registers its decompositions (with warnings of its own)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.autograd.forward_ad.dual_level():
            torch.autograd.forward_ad.make_dual(torch.ones(1), torch.ones(1))


def test_with_forward_ad(compare, torch_forward_ad_loaded):
    """Forward-mode AD shares the detour: both work together, and each leaves it as it was."""

    def scenario(L):
        fwad = L.autograd.forward_ad
        with L.profiler.profile() as prof:
            with fwad.dual_level():
                x = fwad.make_dual(L.tensor([1.0, 2.0]), L.tensor([1.0, 0.0]))
                tangent = fwad.unpack_dual(x * x).tangent
            y = L.ones(2) * 3
        names = sorted({e.name for e in prof.events()} & {"aten::mul"})
        return tangent, y, names

    compare(scenario)


def test_compiled_function_is_profiled(lib):
    def f(a):
        return (a @ a).relu()

    compiled = lib.compile(f)
    a = lib.ones(3, 3)
    compiled(a)
    with lib.profiler.profile() as prof:
        out = compiled(a)
    assert (out == f(a)).all()
    assert "aten::mm" in {e.name for e in prof.events()}
