"""torch.compile against torch 2.13: the module and function forms and the decorator forms
give the same results (tapegrad runs eagerly); argument errors as torch raises them."""

from __future__ import annotations

import warnings

import pytest
from torchcompare import raised


def test_compiled_module(compare):
    def scenario(L):
        L.manual_seed(0)
        m = L.nn.Sequential(L.nn.Linear(3, 4), L.nn.ReLU(), L.nn.Linear(4, 1))
        c = L.compile(m, backend="eager")  # (torch's eager backend: no inductor build time)
        x = L.randn(5, 3)
        y = c(x)
        y.sum().backward()
        c.eval()
        return [type(c).__name__, c._orig_mod is m, repr(c), list(c.state_dict()),
                list(c.parameters())[0] is m[0].weight, c[0] is m[0], y, m[0].weight.grad,
                c.training, m.training, y.grad_fn is not None]

    compare(scenario, rtol=1e-5, atol=1e-6)


def test_compiled_function_and_decorators(compare):
    def scenario(L):
        def f(x):
            return (x * 2).sin()

        g = L.compile(f, backend="eager")

        @L.compile(backend="eager")
        def h(x):
            return x + 1

        @L.compile(mode="max-autotune", fullgraph=True, backend="eager")
        def k(x):
            return x * 3

        x = L.tensor([1.0, 2.0])
        return [g(x), g is f, g.__name__, g.__wrapped__ is f, h(x), k(x),
                L.compile(mode="reduce-overhead", fullgraph=True, backend="eager")(f)(x),
                L.compile(f, dynamic=True, backend="eager")(x),
                L.compile(f, disable=True) is f]

    compare(scenario)


def test_compile_argument_errors(compare):
    def f(x):
        return x

    def scenario(L):
        m = L.nn.Linear(2, 2)
        with warnings.catch_warnings():  # torch's first inductor import warns (once)
            warnings.simplefilter("ignore", DeprecationWarning)
            default = [type(L.compile(m)).__name__, L.compile(f).__name__]
        return [*default,
                raised(lambda: L.compile(m, mode="bogus")),
                raised(lambda: L.compile(m, mode="default", options={"a": 1})),
                raised(lambda: L.compile(m, backend="nonexistent")),
                raised(lambda: L.compile(3)),
                L.compile(m, disable=True) is m,
                type(L.compile(m, fullgraph=True, dynamic=False, backend="inductor", mode=None,
                               options=None, disable=False)).__name__]

    compare(scenario)


@pytest.mark.parametrize("backend", ["aot_eager", "eager"])
def test_a_compiled_training_step_returns_its_loss_as_torch_does(compare, backend):
    """The loss of a step whose backward ran inside it prints with a CompiledFunctionBackward
    at every call (captures and replays alike; the eager backend keeps the eager node's
    name), and a second backward raises torch's error."""

    def scenario(L):
        L.manual_seed(0)
        m = L.nn.Linear(3, 2)
        opt = L.optim.SGD(m.parameters(), lr=0.1)

        def step(inp, t):
            opt.zero_grad()
            loss = L.nn.functional.cross_entropy(m(inp), t)
            loss.backward()
            opt.step()
            return loss

        # (aot_eager: the default backend's autograd, without inductor's build time)
        c = L.compile(step, backend=backend)
        prints = [repr(c(L.randn(2, 3), L.tensor([0, 1]))) for _ in range(4)]
        return prints + [raised(lambda: c(L.randn(2, 3), L.tensor([1, 0])).backward()),
                         m.weight]

    compare(scenario, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("backend", ["aot_eager", "eager"])
def test_a_compiled_models_outputs_print_as_torchs_at_every_call(compare, backend):
    """``model = torch.compile(model)`` in an eager loop: its outputs carry a
    CompiledFunctionBackward from the first call on (the eager backend: their eager nodes),
    and backward reaches the weights."""

    def scenario(L):
        L.manual_seed(0)
        m = L.nn.Sequential(L.nn.Linear(3, 2), L.nn.Sigmoid())
        c = L.compile(m, backend=backend)
        prints = []
        for _ in range(3):
            out = c(L.randn(1, 3))
            prints.append(repr(out))
            out.sum().backward()
        return prints + [m[0].weight.grad]

    compare(scenario, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("style", ["global list", "list argument", "dict argument"])
@pytest.mark.parametrize("opt_name", ["SGD", "AdamW", "RMSprop"])
def test_a_functional_step_with_parameters_in_a_container(compare, style, opt_name):
    """A step without nn.Module (``x @ w + b``, the weights in a list or dict), compiled, over
    several steps: the losses and weights torch's compiled step gives (aot_eager: torch's
    autograd without inductor's build time); tapegrad replays it (tests/compiler checks the
    replay against tapegrad's own eager step bit for bit)."""

    def scenario(L):
        L.manual_seed(0)
        params = [(L.randn(4, 8) * 0.5).requires_grad_(), L.zeros(8, requires_grad=True),
                  (L.randn(8, 3) * 0.5).requires_grad_(), L.zeros(3, requires_grad=True)]
        kw = {"lr": 0.05} if opt_name != "SGD" else {"lr": 0.1, "momentum": 0.9}
        opt = getattr(L.optim, opt_name)(params, **kw)
        box = {"w1": params[0], "b1": params[1], "w2": params[2], "b2": params[3]}

        def loss_of(ps, x, y):
            h = L.relu(x @ ps[0] + ps[1])
            return L.nn.functional.cross_entropy(h @ ps[2] + ps[3], y)

        def finish(loss):
            opt.zero_grad()
            loss.backward()
            opt.step()
            return loss.detach()

        if style == "global list":
            def step(x, y):
                return finish(loss_of(params, x, y))
        elif style == "list argument":
            def step(x, y, ps):
                return finish(loss_of(ps, x, y))
        else:
            def step(x, y, ps):
                return finish(loss_of([ps["w1"], ps["b1"], ps["w2"], ps["b2"]], x, y))

        c = L.compile(step, backend="aot_eager")
        losses = []
        with warnings.catch_warnings():  # torch's first dynamo run in a process warns (once)
            warnings.simplefilter("ignore", DeprecationWarning)
            for _ in range(5):
                x, y = L.randn(6, 4), L.randint(0, 3, (6,))
                extra = () if style == "global list" else (
                    params if style != "dict argument" else box,)
                losses.append(c(x, y, *extra))
        return [*losses, *params]

    compare(scenario, rtol=1e-5, atol=1e-6)
