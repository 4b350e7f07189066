"""torch.jit.script/trace against torch 2.13: modules and functions that run the same code,
sharing the original's parameters, printed as torch prints them, with its warnings."""

from __future__ import annotations

import warnings


def _model(L):
    L.manual_seed(0)
    return L.nn.Sequential(L.nn.Linear(2, 3), L.nn.ReLU())


def _quiet(fn, *args):
    """Call without recording warnings: torch's scripting of a module warns once per method it
    compiles (a count tapegrad, with no compiler, does not reproduce)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args)


def test_script_module(compare):
    def scenario(L):
        m = _model(L)
        s = _quiet(L.jit.script, m)
        x = L.ones(4, 2)
        y = s(x)
        y.sum().backward()
        # (y's node: torch's executor fuses the graph on later runs; values are compared)
        return [repr(s), list(s.state_dict()), s[0].weight is m[0].weight, y.detach(),
                m[0].weight.grad,
                isinstance(s, L.jit.ScriptModule), s.training, s.original_name,
                repr(_quiet(L.jit.script, L.nn.Linear(2, 2)))]

    compare(scenario, rtol=1e-5, atol=1e-6)


def test_trace_module_and_function(compare):
    def scenario(L):
        m = _model(L)
        t = _quiet(L.jit.trace, m, L.ones(1, 2))
        lin = L.nn.Linear(2, 2)

        def g(a, b):
            return a * b + 1

        tg = L.jit.trace(g, (L.ones(2), L.ones(2)))
        return [repr(t), type(t).__name__, t(L.ones(3, 2)), list(t.state_dict()),
                isinstance(t, L.jit.ScriptModule),
                _quiet(L.jit.trace, lin, L.ones(2)).weight is lin.weight,
                repr(_quiet(lambda: L.jit.trace(lin, example_inputs=L.ones(2)))),
                tg(L.tensor([2.0]), L.tensor([3.0])), type(tg).__name__]

    compare(scenario, rtol=1e-5, atol=1e-6)


def test_script_function_and_helpers(compare):
    def scenario(L):
        sf = L.jit.script(L.nn.functional.relu)

        def helper(x):
            return x

        return [type(sf).__name__, sf(L.tensor([-1.0, 2.0])), L.jit.is_scripting(),
                L.jit.is_tracing(), L.jit.annotate(int, 3), L.jit.Final is not None,
                L.jit.ignore(helper) is helper, L.jit.unused(helper) is helper,
                L.jit.export(helper) is helper]

    compare(scenario)
