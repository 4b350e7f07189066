"""``model = torch.compile(model)`` in an eager training loop: the compiled call's outputs need
their graph, so the forward and its backward are captured as two programs joined by one
``CompiledFunctionBackward`` node (compiler/aot.py). Everything is compared bit for bit with
the same loop on an uncompiled twin: parameters, gradients, optimizer state, RNG state."""

from __future__ import annotations

import pytest
from replay_checks import assert_same, step_arrays

import tapegrad as torch
from tapegrad import nn
from tapegrad.nn import functional as F


def _entries(c):
    return c.__dict__["_compiled"].entries if "_compiled" in c.__dict__ else (
        c._compiled_call_impl.entries)


def _model(dropout=0.0):
    return nn.Sequential(nn.Linear(12, 16), nn.GELU(), nn.Dropout(dropout), nn.LayerNorm(16),
                         nn.Linear(16, 4))


def _pair(make, opt_cls, **kw):
    torch.manual_seed(0)
    m1 = make()
    torch.manual_seed(0)
    m2 = make()
    return m1, opt_cls(m1.parameters(), **kw), m2, opt_cls(m2.parameters(), **kw)


def _run_both(step, m1, o1, m2, o2, n=5):
    """step(model, opt, i) -> tensor, eagerly on m1 and through torch.compile(m2)."""
    c = torch.compile(m2)
    for i in range(n):
        rng = torch.get_rng_state()
        a = step(m1, o1, i)
        rng_eager = torch.get_rng_state()
        torch.set_rng_state(rng)
        b = step(c, o2, i)
        assert torch.equal(torch.get_rng_state(), rng_eager)
        assert_same([a._data], [b._data])
        assert_same(step_arrays(m1, o1), step_arrays(m2, o2))
    return c


def test_training_loop_adam_dropout_replays_bit_identical():
    m1, o1, m2, o2 = _pair(lambda: _model(0.25), torch.optim.Adam, lr=1e-2)
    x, y = torch.randn(6, 12), torch.randint(0, 4, (6,))

    def step(model, opt, i):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    c = _run_both(step, m1, o1, m2, o2, n=6)
    (e,) = _entries(c)
    assert e.program is not None and e.backward is not None and e.eager is None
    text = c.listing()
    assert "its backward (CompiledFunctionBackward)" in text and "GeluBackward" not in text
    assert "gelu_fast_backward(" in text and "dropout_noise(" in text
    out = c(x)
    assert out.grad_fn.name() == "CompiledFunctionBackward"
    assert repr(out.grad_fn).startswith("<torch.autograd.function.CompiledFunctionBackward ")
    nexts = out.grad_fn.next_functions
    assert len(nexts) == 7 and nexts[-1] == (None, 0)  # 6 parameters, then x
    assert all(n.name() == "torch::autograd::AccumulateGrad" for n, _ in nexts[:6])


def test_grad_accumulation_output_used_twice_eval_and_a_new_batch_size():
    m1, o1, m2, o2 = _pair(_model, torch.optim.SGD, lr=0.1, momentum=0.9)
    xs = [torch.randn(6, 12), torch.randn(6, 12), torch.randn(3, 12)]

    def step(model, opt, i):
        x = xs[2] if i >= 4 else xs[0]  # a new batch size re-captures
        opt.zero_grad()
        a = model(x)
        b = model(xs[1])  # two forward calls, one backward
        loss = (a * a).mean() + a.sum() * 0.5 + b.tanh().mean()  # a used twice
        loss.backward()
        with torch.no_grad():  # an eval call between steps
            model.eval()
            model(x)
            model.train()
        opt.step()
        return loss

    c = _run_both(step, m1, o1, m2, o2, n=7)
    progs = [e for e in _entries(c) if e.program is not None]
    assert sum(e.backward is not None for e in progs) == 2  # batch 6, then batch 3
    assert any(e.backward is None for e in progs)  # no_grad eval


def test_input_that_requires_grad_and_leaf_hooks():
    torch.manual_seed(0)
    m1 = nn.Linear(5, 3)
    m2 = nn.Linear(5, 3)
    m2.load_state_dict(m1.state_dict())
    # (per leaf: the order across leaves follows the graph, one node instead of eager's three)
    seen1, seen2, post1, post2 = [], [], [], []
    m1.weight.register_hook(lambda g: seen1.append(g.clone()))
    m2.weight.register_hook(lambda g: seen2.append(g.clone()))
    m2.bias.register_post_accumulate_grad_hook(lambda p: post2.append(p.grad.clone()))
    m1.bias.register_post_accumulate_grad_hook(lambda p: post1.append(p.grad.clone()))
    c = torch.compile(m2)
    for _ in range(4):
        x1 = torch.randn(4, 5, requires_grad=True)
        x2 = x1.detach().clone().requires_grad_()
        m1(x1).pow(2).sum().backward()
        c(x2).pow(2).sum().backward()
        assert_same([x1.grad._data], [x2.grad._data])
        assert_same(step_arrays(m1), step_arrays(m2))
    assert len(seen1) == len(seen2) == len(post1) == len(post2) == 4
    assert_same([s._data for s in seen1 + post1], [s._data for s in seen2 + post2])
    assert _entries(c)[0].backward is not None


def test_retain_graph_second_backward_and_double_backward():
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(3, 4), nn.Tanh())
    c = torch.compile(m)
    x = torch.randn(2, 3)
    for _ in range(3):
        c(x)
    y = c(x).sum()
    assert type(y.grad_fn).__name__ != "CompiledFunctionBackward"  # the sum's node
    y.backward(retain_graph=True)
    g1 = m[0].weight.grad.clone()
    y.backward()
    assert torch.equal(m[0].weight.grad, g1 * 2)
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()
    (g,) = torch.autograd.grad(c(x).sum(), m[0].weight)
    assert torch.equal(g, g1)
    with pytest.raises(RuntimeError,
                       match="torch.compile with aot_autograd does not currently support double"):
        torch.autograd.grad(c(x).sum(), m[0].weight, create_graph=True)


def test_parameter_changed_in_place_before_backward():
    torch.manual_seed(0)
    m = nn.Linear(3, 2)
    c = torch.compile(m)
    x = torch.randn(4, 3, requires_grad=True)  # (so that the weight is saved)
    for _ in range(3):
        c(x).sum().backward()
    y = c(x).sum()
    with torch.no_grad():
        m.weight.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_module_compile_in_place_and_graph_break_in_forward():
    class Breaks(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)

        def forward(self, x):
            h = self.lin(x)
            if h.sum() > 0:  # data-dependent control flow: a graph break
                return h.relu()
            return -h

    m1, o1, m2, o2 = _pair(Breaks, torch.optim.SGD, lr=0.5)
    m2.compile()
    x = torch.randn(3, 4)
    for _ in range(5):
        for m, o in ((m1, o1), (m2, o2)):
            o.zero_grad()
            m(x).pow(2).sum().backward()
            o.step()
        assert_same(step_arrays(m1, o1), step_arrays(m2, o2))
    assert "graph break" in _entries(m2)[0].eager


def test_tuple_output_with_one_output_unused():
    class Two(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 3)

        def forward(self, x):
            h = self.lin(x)
            return h.sin(), h.cos(), x.shape[0]

    m1, o1, m2, o2 = _pair(Two, torch.optim.SGD, lr=0.1)
    c = torch.compile(m2)
    x = torch.randn(2, 3)
    for i in range(5):
        for m, o in ((m1, o1), (c, o2)):
            o.zero_grad()
            a, b, n = m(x)
            assert n == 2
            (a.sum() if i % 2 else (a * b).sum()).backward()
            o.step()
        assert_same(step_arrays(m1, o1), step_arrays(m2, o2))
    out = c(x)
    assert out[0].grad_fn is out[1].grad_fn and out[1]._output_nr == 1


def test_gpt_model_compiled_in_an_eager_loop():
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from benchmarks import gpt

    cfg = gpt.config(True)
    m1, o1, m2, o2 = _pair(lambda: gpt.build(torch, cfg), torch.optim.Adam, lr=1e-3)
    idx = torch.randint(0, cfg["vocab"], (cfg["batch"], cfg["context"]))
    tgt = torch.randint(0, cfg["vocab"], (cfg["batch"], cfg["context"]))
    n = cfg["batch"] * cfg["context"]

    def step(model, opt, i):
        opt.zero_grad()
        loss = F.cross_entropy(model(idx).view(n, cfg["vocab"]), tgt.view(n))
        loss.backward()
        opt.step()
        return loss

    c = _run_both(step, m1, o1, m2, o2, n=4)
    assert _entries(c)[0].backward is not None


def test_cnn_with_batchnorm_compiled_in_an_eager_loop():
    def make():
        return nn.Sequential(nn.Conv2d(1, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.MaxPool2d(2),
                             nn.Flatten(), nn.Linear(12, 2))

    m1, o1, m2, o2 = _pair(make, torch.optim.SGD, lr=0.1, momentum=0.5)
    x, y = torch.randn(3, 1, 6, 6), torch.tensor([0, 1, 1])

    def step(model, opt, i):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    c = _run_both(step, m1, o1, m2, o2)
    assert_same([b._data for b in m1[1].buffers()], [b._data for b in m2[1].buffers()])
    assert _entries(c)[0].backward is not None


W_GLOBAL = torch.randn(3, 4, requires_grad=True)


def test_compiled_function_with_arguments_globals_and_closures_that_require_grad():
    global W_GLOBAL
    torch.manual_seed(0)
    b = torch.randn(4, requires_grad=True)

    def f(x, w):
        return ((x @ w).tanh() * 2 + (x @ W_GLOBAL).sin() + b).square()

    c = torch.compile(f)
    for i in range(5):
        if i == 3:  # the global rebound to another tensor: read through its name
            W_GLOBAL = torch.randn(3, 4, requires_grad=True)
        x = torch.randn(5, 3)
        w = torch.randn(3, 4, requires_grad=True)
        leaves = (w, W_GLOBAL, b)
        ge = torch.autograd.grad(f(x, w).sum(), leaves)
        y = c(x, w)
        gc = torch.autograd.grad(y.sum(), leaves)
        assert_same([g._data for g in ge], [g._data for g in gc])
    assert y.grad_fn.name() == "CompiledFunctionBackward"
    assert len(y.grad_fn.next_functions) == 4  # b, W_GLOBAL (read from outside), x, w


@pytest.mark.parametrize("opt_kw", [
    {"cls": torch.optim.AdamW, "lr": 0.01},  # decoupled weight decay
    {"cls": torch.optim.Adam, "lr": 0.01, "weight_decay": 0.1, "betas": (0.4, 0.9)},
    {"cls": torch.optim.Adam, "lr": 0.01, "amsgrad": True},  # the real step
    {"cls": torch.optim.Adam, "lr": torch.tensor(0.01), "maximize": True},  # the real step
])
def test_adam_step_written_out_with_a_scheduler(opt_kw):
    opt_kw = dict(opt_kw)
    cls = opt_kw.pop("cls")
    torch.manual_seed(0)
    m1 = nn.Linear(6, 3)
    m2 = nn.Linear(6, 3)
    m2.load_state_dict(m1.state_dict())
    o1, o2 = cls(m1.parameters(), **opt_kw), cls(m2.parameters(), **opt_kw)
    s1 = torch.optim.lr_scheduler.StepLR(o1, 2, gamma=0.5)
    s2 = torch.optim.lr_scheduler.StepLR(o2, 2, gamma=0.5)
    x, y = torch.randn(4, 6), torch.randn(4, 3)

    def train(m, o):
        o.zero_grad()
        loss = F.mse_loss(m(x), y)
        loss.backward()
        o.step()
        return loss

    c = torch.compile(train)
    for _ in range(7):
        assert_same([train(m1, o1)._data], [c(m2, o2)._data])
        s1.step()
        s2.step()
        assert_same(step_arrays(m1, o1), step_arrays(m2, o2))
    assert "adam_step(" in c.listing()
