"""``torch.compiler`` and ``torch._dynamo`` under ``import tapegrad as torch`` (compiler/api.py,
tapegrad/_dynamo): the stances, ``reset``, ``disable``, ``graph_break``, ``is_compiling``, the
recompile limit and the recompile log; against torch 2.13 where torch's behaviour is visible
from outside, and bit for bit against eager tapegrad for what a replay computes."""

from __future__ import annotations

import warnings

import pytest
from torchcompare import raised

import tapegrad as torch
from tapegrad import nn


def _entries(c):
    return c.entries if hasattr(c, "entries") else c.__dict__["_compiled"].entries


@pytest.fixture(autouse=True)
def _default_stance():
    yield
    torch.compiler.set_stance("default")


def _quiet(scenario):
    """torch's first import of its compiler stack warns (once); the scenario's own warnings
    are what the comparison is about."""

    def run(L):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            try:
                return scenario(L)
            finally:
                L.compiler.set_stance("default")

    return run


def test_names_and_backends_as_torch(compare):
    def scenario(L):
        names = ("reset", "disable", "is_compiling", "is_dynamo_compiling", "allow_in_graph",
                 "assume_constant_result", "cudagraph_mark_step_begin", "list_backends",
                 "set_stance", "compile")
        dyn = ("reset", "explain", "disable", "graph_break", "is_compiling", "mark_dynamic",
               "maybe_mark_dynamic", "mark_static", "allow_in_graph", "config", "exc")
        return ([callable(getattr(L.compiler, n)) for n in names],
                [hasattr(L._dynamo, n) for n in dyn],
                L.compiler.list_backends(), L.compiler.is_compiling(),
                L._dynamo.config.recompile_limit, L._dynamo.config.cache_size_limit,
                issubclass(L._dynamo.exc.Unsupported, RuntimeError))

    compare(_quiet(scenario))


def test_default_backend_and_region_hints(compare):
    def scenario(L):
        out = [L.compiler.get_default_backend(), L.compiler.is_exporting()]
        L.compiler.set_default_backend("eager")
        out.append(L.compiler.get_default_backend())
        L.compiler.set_default_backend(None)
        out.append(L.compiler.get_default_backend())

        def region(x):
            return x * 2

        def orig(a, b):
            return a + b

        @L.compiler.substitute_in_graph(orig)
        def stand_in(a, b):
            return a + b

        r = L.compiler.nested_compile_region(region)
        f = L.compile(lambda x: r(x) + stand_in(x, x), backend="eager")
        out += [r is region, stand_in.__name__, f(L.ones(2)), f(L.ones(2))]
        return out

    compare(_quiet(scenario))


def test_every_listed_backend_is_accepted():
    f = torch.compile(lambda x: x + 1, backend=torch.compiler.list_backends(exclude_tags=())[0])
    assert torch.equal(f(torch.ones(2)), torch.full((2,), 2.0))
    for name in torch.compiler.list_backends(exclude_tags=()):
        torch.compile(lambda x: x, backend=name)


def test_stance_as_function_context_manager_and_decorator(compare):
    def scenario(L):
        f = L.compile(lambda x: x * 2, backend="eager")
        out = [f(L.ones(2))]
        with L.compiler.set_stance("force_eager"):
            out.append(f(L.ones(3)))
        out.append(f(L.ones(2)))

        @L.compiler.set_stance("force_eager")
        def bar(x):
            return f(x)

        out.append(bar(L.ones(4)))
        L.compiler.set_stance("fail_on_recompile")
        out.append(f(L.ones(2)))  # the captured signature: no recompile
        err = raised(lambda: f(L.ones(5, 5)))
        out.append((type(err).__name__, err.message.split(" filename:")[0]))
        L.compiler.set_stance("eager_on_recompile")
        out.append(f(L.ones(6)))
        L.compiler.set_stance("bogus")
        out.append(raised(lambda: f(L.ones(2))))
        L.compiler.set_stance("default")
        out.append(raised(lambda: L.compiler.set_stance("force_eager", force_backend="eager")))
        L.compiler.set_stance("default", force_backend="eager")
        return out

    compare(_quiet(scenario))


def test_fail_on_recompile_names_the_function_and_the_failed_guard():
    m = nn.Linear(3, 2)
    c = torch.compile(m)
    for _ in range(3):
        c(torch.ones(4, 3))
    m.eval()
    with torch.compiler.set_stance("fail_on_recompile"):
        with pytest.raises(RuntimeError) as info:
            c(torch.ones(4, 3))
    text = str(info.value)
    assert "function name: 'forward'" in text
    assert text.endswith("- Linear.training is False (captured with True)")
    m.train()
    c(torch.ones(4, 3))  # the captured signature again: no error, no recompile
    assert len(_entries(c)) == 1


def test_eager_stances_run_eagerly_without_capturing():
    m = nn.Sequential(nn.Linear(3, 4), nn.Tanh())
    c = torch.compile(m)
    x = torch.randn(2, 3)
    with torch.compiler.set_stance("force_eager"):
        assert torch.equal(c(x), m(x)) and not _entries(c)
    torch.compiler.set_stance("eager_then_compile")
    assert torch.equal(c(x), m(x)) and not _entries(c)  # the first call: eagerly
    for _ in range(3):
        assert torch.equal(c(x), m(x))
    assert _entries(c)[0].program is not None
    torch.compiler.set_stance("eager_on_recompile")
    y = torch.randn(5, 3)
    assert torch.equal(c(y), m(y)) and len(_entries(c)) == 1


def test_reset_forgets_every_capture_and_captures_again():
    torch.manual_seed(0)
    m = nn.Linear(3, 3)
    c = torch.compile(m)
    f = torch.compile(lambda x: (x * 3).sum())
    x = torch.randn(2, 3)
    for _ in range(3):
        c(x)
        f(x)
    assert _entries(c)[0].program is not None and f.entries[0].program is not None
    torch._dynamo.reset()
    assert not _entries(c) and not f.entries
    for _ in range(3):
        assert torch.equal(c(x), m(x))
    assert _entries(c)[0].program is not None and _entries(c)[0].captures == 2


def test_a_disabled_function_is_a_graph_break_and_runs_at_every_call():
    calls = []

    @torch.compiler.disable
    def log(t):
        calls.append(t.shape)
        return t

    @torch.compiler.disable(recursive=False, reason="logging")
    def log2(t):
        return t

    def step(x):
        return log(x * 2) + log2(x)

    c = torch.compile(step)
    for _ in range(4):
        assert torch.equal(c(torch.ones(2)), torch.full((2,), 3.0))
    assert len(calls) == 4
    reason = _entries(c)[0].eager
    assert reason.startswith("graph break: call to ")
    assert "torch.compiler.disable()" in reason
    out = torch._dynamo.explain(step)(torch.ones(2))
    assert out.graph_break_count == 1 and "log" in out.break_reasons[0]
    assert torch.compiler.disable(log) is log
    lin = nn.Linear(2, 2)
    d = torch.compiler.disable(lin)
    x = torch.randn(3, 2)
    assert torch.equal(d(x), lin(x)) and d._orig_mod is lin


def test_graph_break_and_is_compiling(compare):
    def scenario(L):
        @L.compile(backend="eager")
        def f(x):
            return x + (1 if L.compiler.is_compiling() else 100)

        def g(x):
            x = x + 1
            L._dynamo.graph_break()
            return x * 2

        L._dynamo.graph_break()  # outside a compiled region: nothing
        out = [f(L.zeros(1)) for _ in range(4)]
        out.append(L.compile(g, backend="eager")(L.ones(2)))
        out.append(L._dynamo.explain(g)(L.ones(2)).graph_break_count)
        return out

    compare(_quiet(scenario))


def test_dynamic_markers_are_accepted(compare):
    def scenario(L):
        x = L.ones(2, 3)
        L._dynamo.mark_dynamic(x, 0)
        L._dynamo.maybe_mark_dynamic(x, [1])
        L._dynamo.mark_static(x, 1)
        f = L.compile(L.compiler.allow_in_graph(lambda t: t.sum(0)), backend="eager")
        L.compiler.cudagraph_mark_step_begin()
        def n_items(t):
            return len(t)

        return [f(x), L.compiler.assume_constant_result(n_items)((1, 2)),
                raised(lambda: L.compiler.assume_constant_result(len))]

    compare(_quiet(scenario))


def test_recompile_limit_is_the_dynamo_config():
    config = torch._dynamo.config
    assert config.recompile_limit == config.cache_size_limit == 8
    config.cache_size_limit = 2
    try:
        assert config.recompile_limit == 2
        f = torch.compile(lambda x: x * 2)
        for n in (1, 2, 3, 4):
            for _ in range(3):
                assert torch.equal(f(torch.ones(n)), torch.full((n,), 2.0))
        assert len(f.entries) == 2
    finally:
        config.recompile_limit = 8
    config.suppress_errors = True  # accepted, as torch's
    config.suppress_errors = False


def test_recompile_log_says_why(monkeypatch, capsys):
    monkeypatch.setenv("TORCH_LOGS", "recompiles")
    m = nn.Linear(2, 2)
    c = torch.compile(m)
    c(torch.ones(3, 2))
    c(torch.ones(4, 2))
    m.weight = nn.Parameter(torch.ones(2, 2))
    c(torch.ones(4, 2))
    with torch.no_grad():
        c(torch.ones(4, 2))
    lines = capsys.readouterr().err.splitlines()
    assert lines == [
        "[tapegrad.compile] recompiling <compiled Linear(in_features=2, out_features=2, "
        "bias=True)>: argument 0: tensor shape (4, 2), captured with (3, 2)",
        "[tapegrad.compile] recompiling <compiled Linear(in_features=2, out_features=2, "
        "bias=True)>: parameter or buffer 'weight' was replaced",
        "[tapegrad.compile] recompiling <compiled Linear(in_features=2, out_features=2, "
        "bias=True)>: grad mode disabled (captured with it enabled)",
    ]


def test_explain_reports_a_side_effect_as_a_break():
    seen = []

    def step(x):
        y = (x * 2).sum()
        seen.append(y)
        return y

    out = torch._dynamo.explain(step)(torch.ones(3))
    assert out.graph_break_count == 1 and len(seen) == 1
    assert "changes the list in a closure variable in place" in out.break_reasons[0]
