"""tapegrad.compile's capture and replay: bit-identical to eager over several steps
(parameters, gradients, optimizer state, RNG state), guards, graph breaks, the listing."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from replay_checks import assert_same, step_arrays

import tapegrad as torch
from tapegrad import nn
from tapegrad.compiler import GraphBreak, explain


def _entries(c):
    return c.entries if hasattr(c, "entries") else c.__dict__["_compiled"].entries


def _twins(make, steps=5, **kw):
    """Run make()'s step eagerly and compiled side by side; compare everything each step."""
    torch.manual_seed(0)
    m1, o1, s1, extra1 = make()
    torch.manual_seed(0)
    m2, o2, s2, extra2 = make()
    c = torch.compile(s2, **kw)
    g1 = torch.Generator().manual_seed(5)
    g2 = torch.Generator().manual_seed(5)
    for _ in range(steps):
        state = torch.get_rng_state()
        a = s1(g1)
        rng_eager = torch.get_rng_state()
        torch.set_rng_state(state)
        b = c(g2)
        assert torch.equal(torch.get_rng_state(), rng_eager)
        assert_same([a._data], [b._data])
        assert_same(step_arrays(m1, o1, extra1), step_arrays(m2, o2, extra2))
    return c


def _mlp(opt_cls=torch.optim.SGD, dropout=0.0, **opt_kw):
    def make():
        m = nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Dropout(dropout), nn.Linear(16, 4))
        opt = opt_cls(m.parameters(), **opt_kw)
        x, y = torch.randn(6, 12), torch.randint(0, 4, (6,))
        loss_fn = nn.CrossEntropyLoss()

        def step(gen):
            opt.zero_grad()
            loss = loss_fn(m(x), y)
            loss.backward()
            opt.step()
            return loss

        return m, opt, step, ()

    return make


def test_mlp_sgd_replays_bit_identical():
    c = _twins(_mlp(lr=0.1))
    (e,) = c.entries
    assert e.program is not None and e.eager is None
    text = c.listing()
    assert "addmm(" in text and "accumulate_grad" in text
    assert "sgd_step(sgd, SGD_step)" in text  # the replayed step (optim_replay.py)


def test_mlp_adam_with_dropout_keeps_the_rng_stream():
    c = _twins(_mlp(torch.optim.Adam, dropout=0.3, lr=1e-2, weight_decay=0.1))
    assert c.entries[0].program is not None
    assert "dropout_noise" in c.listing()
    assert "adam_step(adam, Adam_step)" in c.listing()  # written out (optim_replay.py)


def test_adamw_momentum_sgd_and_grad_accumulation():
    _twins(_mlp(torch.optim.AdamW, lr=1e-2))
    _twins(_mlp(torch.optim.SGD, lr=0.1, momentum=0.9, nesterov=True))

    def make():  # two backward passes into the same .grad, no zero_grad: accumulation
        m = nn.Linear(5, 3)
        x = torch.randn(4, 5)

        def step(gen):
            (m(x) ** 2).sum().backward()
            loss = m(x * 2).tanh().mean()
            loss.backward()
            return loss

        return m, None, step, ()

    _twins(make)


def _gpt_make():
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from benchmarks import gpt

    cfg = gpt.config(True)
    model = gpt.build(torch, cfg)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    idx = torch.randint(0, cfg["vocab"], (cfg["batch"], cfg["context"]))
    tgt = torch.randint(0, cfg["vocab"], (cfg["batch"], cfg["context"]))
    n = cfg["batch"] * cfg["context"]

    def step(gen):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(idx).view(n, cfg["vocab"]), tgt.view(n))
        loss.backward()
        opt.step()
        return loss

    return model, opt, step, ()


def test_gpt_training_step_replays_bit_identical():
    c = _twins(_gpt_make, steps=4)
    assert c.entries[0].program is not None


@pytest.mark.parametrize("low", ["bfloat16", "float16"])
def test_autocast_training_step_replays_bit_identical(low):
    # the low-precision ops replay as torch's kernels compute them (widened, rounded once),
    # the backward's casts of each gradient to its input's dtype are program steps
    def make():
        model, opt, step, extra = _gpt_make()

        def autocast_step(gen):
            with torch.autocast("cpu", dtype=getattr(torch, low)):
                return step(gen)

        return model, opt, autocast_step, extra

    c = _twins(make, steps=4)
    (e,) = c.entries
    assert e.program is not None and e.eager is None
    text = c.listing()
    assert "addmm_widened(" in text and "cast(" in text and "T(widen(" in text


def test_float16_parameters_replay_bit_identical():
    def make():
        m = nn.Sequential(nn.Linear(6, 8), nn.GELU(), nn.LayerNorm(8), nn.Linear(8, 3)).half()
        opt = torch.optim.SGD(m.parameters(), lr=0.1)
        x = torch.randn(5, 6).half()

        def step(gen):
            opt.zero_grad()
            loss = m(x).float().pow(2).mean()
            loss.backward()
            opt.step()
            return loss

        return m, opt, step, ()

    c = _twins(make)
    assert c.entries[0].program is not None and c.entries[0].eager is None


def test_cnn_training_step():
    def make():
        m = nn.Sequential(nn.Conv2d(1, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Linear(12, 2))
        opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.5)
        x, y = torch.randn(3, 1, 6, 6), torch.tensor([0, 1, 1])

        def step(gen):
            opt.zero_grad()
            loss = nn.functional.cross_entropy(m(x), y)
            loss.backward()
            opt.step()
            return loss

        return m, opt, step, list(m[1].buffers())

    c = _twins(make)
    assert c.entries[0].program is not None  # (the running statistics are read live)


def test_arguments_are_bound_at_each_call_and_guards_recapture():
    torch.manual_seed(0)
    lin = nn.Linear(3, 2)

    @torch.compile
    def f(x, k):
        return (lin(x) * k).sum(1)

    def eager(x, k):
        return (lin(x) * k).sum(1)

    with torch.no_grad():
        for _ in range(4):  # new values each call: the program reads the argument
            x = torch.randn(5, 3)
            assert torch.equal(f(x, 2.0), eager(x, 2.0))
        assert f.entries[0].program is not None
        x = torch.randn(5, 3)
        assert torch.equal(f(x, 3.0), eager(x, 3.0))  # a Python constant: a new capture
        x7 = torch.randn(7, 3)  # a new shape: a new capture
        assert torch.equal(f(x7, 3.0), eager(x7, 3.0))
        assert len(f.entries) == 3 and f.recompiles == 2
    lin.eval()  # the module's training flag is guarded too
    with torch.no_grad():
        f(x, 2.0)
    assert len(f.entries) == 4


def test_cross_entropy_target_argument_is_not_a_constant():
    torch.manual_seed(0)
    lin = nn.Linear(4, 3)

    def step(x, y):
        loss = nn.functional.cross_entropy(lin(x), y)
        return loss.detach()

    c = torch.compile(step)
    x = torch.randn(5, 4)
    with torch.no_grad():
        for _ in range(5):
            y = torch.randint(0, 3, (5,))
            assert torch.equal(c(x, y), step(x, y))


def test_replaced_parameter_recaptures():
    torch.manual_seed(0)
    m = nn.Linear(3, 3)
    c = torch.compile(m)
    x = torch.randn(2, 3)
    with torch.no_grad():
        for _ in range(3):
            c(x)
        m.weight = nn.Parameter(torch.ones(3, 3))
        assert torch.equal(c(x), m(x))
    assert len(_entries(c)) == 2


@pytest.mark.parametrize("body, reason", [
    (lambda y: y.sum().item(), "item"),
    (lambda y: bool(y.sum() > 0), "bool"),
    (lambda y: y.tolist(), "tolist"),
    (lambda y: y.detach().numpy(), "numpy"),
    (lambda y: repr(y), "printing"),
    (lambda y: y.register_hook(lambda g: g), "register_hook"),
])
def test_graph_breaks_run_eagerly_and_are_explained(body, reason):
    x = torch.randn(3, requires_grad=True)

    def f(x):
        y = x * 2
        body(y)
        return (y + 1).detach()

    c = torch.compile(f)
    for _ in range(3):
        assert torch.equal(c(x), f(x))
    (e,) = c.entries
    assert e.program is None and e.eager is not None and e.eager.startswith("graph break")
    out = explain(f)(x)
    assert out.graph_break_count == 1 and reason.lower() in out.break_reasons[0].lower()
    with pytest.raises(GraphBreak):
        torch.compile(f, fullgraph=True)(x)


def test_graph_break_log(monkeypatch, capsys):
    monkeypatch.setenv("TAPEGRAD_LOGS", "graph_breaks")
    torch.compile(lambda x: (x * 2).sum().item())(torch.ones(2))
    assert "graph break: Tensor.item()" in capsys.readouterr().err


def test_output_needing_a_graph_replays_with_its_backward():
    torch.manual_seed(0)
    m = nn.Linear(3, 1)
    c = torch.compile(m)
    x = torch.randn(4, 3)
    for _ in range(3):
        y = c(x)
        assert y.grad_fn is not None
        y.sum().backward()
    (e,) = _entries(c)
    assert e.eager is None and e.backward is not None  # (tests/compiler/test_aot.py)
    assert y.grad_fn.name() == "CompiledFunctionBackward"


def test_no_grad_and_inference_mode():
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(3, 4), nn.GELU(), nn.LayerNorm(4))
    c = torch.compile(m)
    x = torch.randn(2, 3)
    for ctx in (torch.no_grad, torch.inference_mode):
        with ctx():
            for _ in range(4):
                out = c(x)
                assert torch.equal(out, m(x)) and out.grad_fn is None
    progs = [e for e in _entries(c) if e.program is not None]
    assert len(progs) == 2  # one per mode: grad mode is guarded


def test_module_compile_in_place():
    torch.manual_seed(0)
    m = nn.Linear(3, 2)
    m.compile()
    x = torch.randn(4, 3)
    with torch.no_grad():
        outs = [m(x) for _ in range(4)]
    assert all(torch.equal(o, m._call_impl(x)) for o in outs)
    assert m._compiled_call_impl.entries[0].program is not None


def test_replay_makes_no_nodes_and_reads_no_grad_mode():
    x = torch.randn(4, requires_grad=True)

    def f():
        x.grad = None
        y = (x * 1.5).tanh().sum()
        y.backward()
        return y

    c = torch.compile(f)
    for _ in range(3):
        c()
    src = c.listing()
    # (the rules are called by name, sum_backward(...); no Tensor.backward, no engine)
    assert "_state" not in src and "Tensor" not in src and ".backward(" not in src
    assert "engine" not in src
    out = c()
    # no graph was built: the loss carries a used-up CompiledFunctionBackward, as torch.compile
    # returns it (and the captures' losses too), and a second backward raises torch's error
    assert "grad_fn=<CompiledFunctionBackward>" in repr(out)
    assert out.requires_grad and not out.is_leaf
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        out.backward()
    assert torch.equal(x.grad, (1 - (x * 1.5).tanh() ** 2) * 1.5)


_UNARY = ["tanh", "sigmoid", "exp", "relu", "neg", "abs", "sin"]
_BINARY = ["add", "mul", "sub", "maximum"]


@settings(max_examples=15, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_UNARY + _BINARY), st.integers(0, 10)),
                min_size=1, max_size=8),
       st.sampled_from(["sum", "mean"]))
def test_random_programs_replay_bit_identical(ops, reduce):
    torch.manual_seed(1)
    a = torch.randn(3, 4, requires_grad=True)
    b = torch.randn(4, requires_grad=True)

    def f():
        a.grad = None
        b.grad = None
        vals = [a, b]
        for name, k in ops:
            x = vals[k % len(vals)]
            if name in _UNARY:
                vals.append(getattr(torch, name)(x))
            else:
                vals.append(getattr(torch, name)(x, vals[(k + 1) % len(vals)]))
        loss = getattr(vals[-1], reduce)() + vals[-1].sum() * 0
        loss.backward()
        return loss

    c = torch.compile(f)
    for _ in range(4):
        loss = f()
        ga = None if a.grad is None else a.grad.clone()
        gb = None if b.grad is None else b.grad.clone()
        out = c()
        assert torch.equal(out, loss)
        for g, t in ((ga, a), (gb, b)):
            assert (g is None and t.grad is None) or torch.equal(g, t.grad)
    assert c.entries[0].program is not None


def test_seed_program_manual_sgd_loop():
    """jcjohnson's two-layer net (tests/programs corpus): raw tensors, backward, an in-place
    update under no_grad through ``w.grad``, and ``w.grad.zero_()``."""

    def make():
        x, y = torch.randn(8, 20), torch.randn(8, 3)
        w1 = torch.randn(20, 6, requires_grad=True)
        w2 = torch.randn(6, 3, requires_grad=True)
        lr = 1e-3

        def step(gen):
            nonlocal w1, w2
            loss = (x.mm(w1).clamp(min=0).mm(w2) - y).pow(2).sum()
            loss.backward()
            with torch.no_grad():
                w1 -= lr * w1.grad
                w2 -= lr * w2.grad
                w1.grad.zero_()
                w2.grad.zero_()
            return loss.detach()

        return nn.Module(), None, step, [w1, w2]

    c = _twins(make, steps=6)
    assert c.entries[0].program is not None
    assert "._grad._data" in c.listing()


batch = torch.randn(3, 2)  # rebound by the test below, as a training loop rebinds its batch


def test_a_rebound_global_is_guarded():
    global batch
    torch.manual_seed(0)
    lin = nn.Linear(2, 2)

    def f():
        return lin(batch).sum(0)

    c = torch.compile(f)
    with torch.no_grad():
        for _ in range(3):
            assert torch.equal(c(), f())
        assert c.entries[0].program is not None
        for _ in range(3):  # read through the name: the same program
            batch = torch.randn(3, 2)
            assert torch.equal(c(), f())
        assert len(c.entries) == 1 and "globals['batch']" in c.listing()
        batch = torch.randn(4, 2)  # another shape: a new capture
        assert torch.equal(c(), f())
        assert len(c.entries) == 2


targets = torch.tensor([0, 2, 1])  # rebound by the test below, with the batch


def test_rebound_global_targets_are_read_and_checked_at_each_replay():
    """Cross-entropy copies its target: the copy is followed back to the global name, so a
    new batch of targets is used (and range-checked) at each replay, not the first one's."""
    global batch, targets
    torch.manual_seed(0)
    lin = nn.Linear(2, 3)
    opt = torch.optim.SGD(lin.parameters(), lr=0.1)
    twin = nn.Linear(2, 3)
    twin.load_state_dict(lin.state_dict())
    opt2 = torch.optim.SGD(twin.parameters(), lr=0.1)

    def step(model, o):
        o.zero_grad()
        loss = nn.functional.cross_entropy(model(batch), targets)
        loss.backward()
        o.step()
        return loss

    c = torch.compile(lambda: step(lin, opt))
    for i in range(6):
        batch = torch.randn(3, 2)
        targets = torch.randint(0, 3, (3,))
        assert torch.equal(c(), step(twin, opt2)), i
        assert torch.equal(lin.weight, twin.weight)
    assert c.entries[0].program is not None and "globals['targets']" in c.listing()
    targets = torch.tensor([0, 3, 1])
    with pytest.raises(IndexError, match="Target 3 is out of bounds."):
        c()


def test_module_hooks_and_errors_during_capture():
    torch.manual_seed(0)
    m = nn.Linear(2, 2)
    seen = []
    m.register_forward_hook(lambda mod, inp, out: seen.append(1))
    c = torch.compile(m)
    with torch.no_grad():
        for _ in range(3):
            c(torch.ones(1, 2))
    assert len(seen) == 3 and "hooks on the module Linear" in _entries(c)[0].eager

    def bad(x):
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        torch.compile(bad)(torch.ones(1))
    assert torch.ones(1).item() == 1.0  # the capture's hooks are gone again
    assert not hasattr(torch.Tensor.item, "__wrapped__")


def test_values_made_outside_ops_are_not_baked_in():
    """torch.randn inside the call: not a recorded kernel, its values change from call to call;
    the two captures disagree and the function runs eagerly (the RNG stream as eager's)."""
    x = torch.ones(3)

    def f():
        return x + torch.randn(3)

    c = torch.compile(f)
    for _ in range(6):
        state = torch.get_rng_state()
        expect = f()
        torch.set_rng_state(state)
        assert torch.equal(c(), expect)
    (e,) = c.entries
    assert e.program is None and "change from call to call" in e.eager


def test_guard_failure_recaptures_and_switches_back_bit_identical():
    """train -> eval -> train with dropout: a second program for eval, the first one reused
    when training resumes; every step bit-identical to eager, RNG stream included."""
    make = _mlp(torch.optim.Adam, dropout=0.5, lr=1e-2)
    torch.manual_seed(0)
    m1, o1, s1, _ = make()
    torch.manual_seed(0)
    m2, o2, s2, _ = make()
    c = torch.compile(s2)
    for mode in ("train", "eval", "train"):
        getattr(m1, mode)()
        getattr(m2, mode)()
        for _ in range(4):
            state = torch.get_rng_state()
            a = s1(None)
            after = torch.get_rng_state()
            torch.set_rng_state(state)
            b = c(None)
            assert torch.equal(torch.get_rng_state(), after)
            assert_same([a._data], [b._data])
            assert_same(step_arrays(m1, o1), step_arrays(m2, o2))
    assert len(c.entries) == 2 and all(e.program is not None for e in c.entries)
    assert c.recompiles == 1


h_state = torch.zeros(2)  # a global the step below keeps its state in


def test_state_kept_in_an_attribute_or_global_runs_eagerly():
    """A step that rebinds ``self.h`` or a ``global`` changes state as a side effect a replay
    of NumPy calls would not repeat: the call runs eagerly, with the reason, and every call
    gives eager's values."""
    global h_state

    class Smoother:
        def __init__(self):
            self.h = torch.zeros(2)

        def step(self, x):
            self.h = self.h * 0.5 + x
            return self.h

    def g(x):
        global h_state
        h_state = h_state * 0.5 + x
        return h_state

    s = Smoother()
    c = torch.compile(s.step)
    c2 = torch.compile(g)
    x = torch.tensor([3.0, 1.0])
    want = [3.0, 4.5, 5.25, 5.625, 5.8125]
    for w in want:
        assert c(x)[0].item() == w
        assert c2(x)[0].item() == w
    assert "the call rebinds the attribute 'h'" in c.entries[0].eager
    assert "the call rebinds the global 'h_state'" in c2.entries[0].eager
    with pytest.raises(torch._dynamo.exc.Unsupported, match="rebinds the attribute 'h'"):
        torch.compile(Smoother().step, fullgraph=True)(x)


def test_a_counter_attribute_set_by_the_step_runs_eagerly():
    torch.manual_seed(0)

    class Trainer:
        def __init__(self):
            self.model = nn.Linear(2, 1)
            self.n = 0

        def step(self, x):
            self.n += 1
            return self.model(x).sum()

    t = Trainer()
    c = torch.compile(t.step)
    with torch.no_grad():
        for _ in range(4):
            c(torch.ones(1, 2))
    assert t.n == 4 and "rebinds the attribute 'n'" in c.entries[0].eager


def test_gradients_of_leaves_passed_in_at_each_call_replay():
    """A new leaf as argument at each call (an input gradient, an adversarial step): the
    program accumulates into whatever tensor is passed, never into the first call's."""
    w = torch.randn(3, 3)

    def f(x):
        loss = (x @ w).tanh().sum()
        loss.backward()
        return loss.detach()

    c = torch.compile(f)
    for i in range(4):
        x, twin = torch.randn(2, 3, requires_grad=True), None
        twin = x.detach().clone().requires_grad_()
        assert torch.equal(c(x), f(twin)), i
        assert torch.equal(x.grad, twin.grad), i
    assert c.entries[0].program is not None and "accumulate_grad(args[0]" in c.listing()


def test_split_into_one_piece_and_a_detached_argument():
    def f(x):
        (a,) = x.split(5, dim=1)  # a one-element tuple from a many-output kernel
        return a * x.detach()  # another tensor on the argument's array: read through it

    c = torch.compile(f)
    with torch.no_grad():
        for i in range(4):
            x = torch.randn(2, 5)
            assert torch.equal(c(x), f(x)), i
    assert c.entries[0].program is not None


def test_manual_seed_inside_the_step_is_replayed():
    torch.manual_seed(0)
    lin = nn.Linear(4, 4)

    def f(x):
        torch.manual_seed(42)
        return nn.functional.dropout(lin(x), 0.5)

    c = torch.compile(f)
    with torch.no_grad():
        x = torch.randn(3, 4)
        want = f(x)
        for i in range(4):
            torch.manual_seed(i)  # what the step seeds, not this, decides its noise
            assert torch.equal(c(x), want), i
    assert c.entries[0].program is not None and "manual_seed" in c.listing()


def test_random_ops_on_inputs_that_require_grad_run_eagerly():
    mean = torch.zeros(3, requires_grad=True)

    def f():
        return torch.normal(mean, 1.0).sum()

    c = torch.compile(f)
    for i in range(4):
        torch.manual_seed(i)
        got = c()
        torch.manual_seed(i)
        assert torch.equal(got, f()), i
    assert "normal_tensor_float draws random values" in c.entries[0].eager


def test_requires_grad_on_a_tensor_made_in_the_call_is_no_break():
    def made(x):  # (as a backward rule that differentiates a small graph of its own does)
        h = x.detach().clone().requires_grad_()
        return (h * h).detach()

    def flips(x):
        x.requires_grad_()
        return x * 2

    c = torch.compile(made)
    for i in range(4):
        x = torch.randn(3)
        assert torch.equal(c(x), made(x)), i
    assert c.entries[0].program is not None
    c2 = torch.compile(flips)
    c2(torch.randn(3))
    assert "Tensor.requires_grad_ changes a flag" in c2.entries[0].eager
    c3 = torch.compile(lambda x: setattr(x, "requires_grad", True))
    c3(torch.randn(3))
    assert "assigning .requires_grad" in c3.entries[0].eager


def test_a_forward_that_sets_module_attributes_runs_eagerly():
    """``self.last = y`` or a call counter in a module's forward: a replay would not set
    them, so the call runs eagerly and the attributes hold what eager code leaves."""

    class Keeps(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 3)
            self.calls = 0
            self.last = None

        def forward(self, x):
            self.calls += 1
            y = self.lin(x)
            self.last = y
            return y * 2

    torch.manual_seed(0)
    m = Keeps()
    c = torch.compile(m)
    with torch.no_grad():
        for i in range(4):
            out = c(torch.randn(2, 3))
            assert m.calls == i + 1 and torch.equal(m.last * 2, out)
    assert "rebinds the attribute 'calls'" in _entries(c)[0].eager


losses: list = []  # appended to by the step below


def test_a_step_that_appends_to_a_list_runs_eagerly():
    torch.manual_seed(0)
    lin = nn.Linear(2, 1)
    history = {}

    def step(x):
        y = lin(x).sum()
        losses.append(y)
        return y

    def step2(x):
        history[len(history)] = x * 2
        return x + 1

    c, c2 = torch.compile(step), torch.compile(step2)
    with torch.no_grad():
        for i in range(4):
            x = torch.randn(3, 2)
            assert c(x) is losses[-1] and len(losses) == i + 1
            c2(x)
            assert torch.equal(history[i], x * 2)
    assert "changes the list 'losses' in place" in c.entries[0].eager
    assert "changes the dict in a closure variable in place" in c2.entries[0].eager
