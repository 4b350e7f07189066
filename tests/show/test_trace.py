"""show.trace: one backward pass as the engine ran it. The ledger balances (what every node
received is the sum of what was sent to it; what reached a leaf is its .grad), the order is
the engine's (and torch's), the seed chapter's chain rule shows its real numbers, and an
untraced backward runs the engine's own loop."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
import _graphs  # noqa: E402

import tapegrad as torch  # noqa: E402
from tapegrad import show  # noqa: E402
from tapegrad.autograd import listeners  # noqa: E402
from tapegrad.autograd.graph import AccumulateGrad  # noqa: E402


def test_seed000_2_chain_rule_with_the_real_numbers():
    a = torch.tensor([2.0], requires_grad=True)
    b = torch.tensor([3.0], requires_grad=True)
    c = a * b
    d = c + 1.0
    e = d ** 2
    with show.trace() as t:
        e.backward()
    assert [s.name for s in t.steps] == ["PowBackward0", "AddBackward0", "MulBackward0",
                                         "AccumulateGrad", "AccumulateGrad"]
    recs = t.records()
    json.dumps(recs)  # JSON-able
    assert recs[0]["received"][0]["values"] == [1.0]
    assert recs[0]["sent"][0]["grad"]["values"] == [14.0]  # 14 leaves PowBackward0
    assert recs[0]["sent"][0]["to"] == "AddBackward0"
    mul = recs[2]
    assert mul["received"][0]["values"] == [14.0]
    assert [(s["to"], s["grad"]["values"]) for s in mul["sent"]] == [
        ("AccumulateGrad(a)", [42.0]), ("AccumulateGrad(b)", [28.0])]
    acc_a, acc_b = recs[3]["accumulated"], recs[4]["accumulated"]
    assert acc_a["leaf"] == "a" and acc_a["grad"]["values"] == [42.0]
    assert acc_b["leaf"] == "b" and acc_b["grad"]["values"] == [28.0]
    table = t.table()
    assert "→ AddBackward0: 14" in table
    assert "[0] → AccumulateGrad(a): 42  (= 14 × 3)" in table
    assert "[1] → AccumulateGrad(b): 28  (= 14 × 2)" in table
    assert "a.grad = 42" in table and "b.grad = 28" in table
    assert str(t) == table
    assert a.grad.item() == 42.0 and b.grad.item() == 28.0
    labelled = t.graph()
    dot = labelled.dot()
    assert 'id="n0-0", label="14"' in dot
    n_mul = labelled.by_node[mul_node(t)].id
    assert f'id="{n_mul}-0", label="42"' in dot and f'id="{n_mul}-1", label="28"' in dot
    assert "grad 42: AccumulateGrad → a.grad" in labelled.text()


def mul_node(t):
    return next(s.node for s in t.steps if s.name == "MulBackward0")


def _balance(t):
    """Sum what was sent into every node, per output, in the order it was sent."""
    into: dict = {}
    for s in t.steps:
        for _i, child, nr, info in s.sent:
            if child is not None and info is not None:
                key = (child, nr)
                into[key] = info.array if key not in into else into[key] + info.array
    return into


@pytest.mark.parametrize("name", ["mlp", "transformer"])
def test_ledger_balances_and_leaves_get_what_was_sent(name):
    out, model = getattr(_graphs, name)()
    with show.trace(model, keep_grads=True) as t:
        out.backward()
    into = _balance(t)
    for s in t.steps:
        if s is t.steps[0]:
            continue
        for nr, r in enumerate(s.received):
            if r is None:
                assert (s.node, nr) not in into
                continue
            np.testing.assert_allclose(r.array, into[(s.node, nr)], rtol=1e-6, atol=1e-7)
        if isinstance(s.node, AccumulateGrad):
            leaf = s.node.variable
            np.testing.assert_allclose(leaf.grad.numpy(), into[(s.node, 0)], rtol=1e-6,
                                       atol=1e-7)
            np.testing.assert_array_equal(s.accumulated["grad"].array, leaf.grad.numpy())
    leaves = {s.accumulated["leaf"] for s in t.steps if s.accumulated}
    assert leaves == {n for n, _ in model.named_parameters()} | (
        {"leaf [2, 3, 8]"} if name == "transformer" else set())
    # every node of the graph ran exactly once
    nodes, _ = _graphs.walk(out.grad_fn)
    assert sorted(map(id, nodes)) == sorted(id(s.node) for s in t.steps)


@pytest.mark.parametrize("name", ["mlp", "transformer"])
def test_traced_gradients_equal_untraced(name):
    out, model = getattr(_graphs, name)()
    out.backward()
    expected = {n: p.grad.numpy().copy() for n, p in model.named_parameters()}
    out2, model2 = getattr(_graphs, name)()
    with show.trace(model2):
        out2.backward()
    for n, p in model2.named_parameters():
        np.testing.assert_array_equal(p.grad.numpy(), expected[n])


def test_order_is_the_engines_order():
    loss, model = _graphs.transformer(2)
    nodes, _ = _graphs.walk(loss.grad_fn)
    ran = []
    handles = [n.register_prehook(lambda g, n=n: ran.append(n)) for n in nodes]
    loss.backward(retain_graph=True)
    for h in handles:
        h.remove()
    with show.trace() as t:
        loss.backward()
    assert [s.node for s in t.steps] == ran


def test_order_equals_torchs():
    import torch as real

    def run(lib):
        lib.manual_seed(0)
        w1 = lib.randn(4, 3, requires_grad=True)
        w2 = lib.randn(3, 2, requires_grad=True)
        x = lib.randn(5, 4)
        h = (x @ w1).tanh()
        loss = ((h @ w2).sigmoid() * h.sum()).mean()
        return loss

    loss = run(real)
    names = []
    seen = set()
    stack = [loss.grad_fn]
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        n.register_prehook(lambda g, n=n: names.append(n.name()))
        stack += [c for c, _ in n.next_functions if c is not None]
    loss.backward()
    with show.trace() as t:
        run(torch).backward()
    ours = ["torch::autograd::AccumulateGrad" if s.name == "AccumulateGrad" else s.name
            for s in t.steps]
    assert ours == names


def test_hooks_that_fired_and_a_hook_that_changes_the_gradient():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    y.retain_grad()

    def double(g):
        return g * 2

    y.register_hook(double)
    seen = []
    x.register_hook(lambda g: seen.append(g))
    with show.trace() as t:
        y.sum().backward()
    mul = next(s for s in t.steps if s.name == "MulBackward0")
    assert any("double" in h for h in mul.hooks) and "retain_grad" in mul.hooks
    assert "(a hook replaced the gradient)" in mul.hooks
    assert mul.received[0].values == [2.0, 2.0]
    acc = t.steps[-1]
    assert any(h.startswith("tensor hook") for h in acc.hooks)
    assert x.grad.tolist() == [6.0, 6.0] and len(seen) == 1
    assert "hook: tensor hook" in t.table()


def test_autograd_grad_and_create_graph_under_trace():
    x = torch.tensor([2.0], requires_grad=True)
    y = x ** 3
    with show.trace() as t:
        (g,) = torch.autograd.grad(y, x, create_graph=True)
        (h,) = torch.autograd.grad(g, x)
    assert g.item() == 12.0 and h.item() == 12.0
    assert x.grad is None
    assert len(t.passes) == 2
    assert {s.pass_index for s in t.steps} == {0, 1}
    assert any("returned by autograd.grad" in line for line in t.table().splitlines())


def test_tracer_is_off_outside_the_block_and_nests():
    assert listeners.active is None
    x = torch.tensor([1.0], requires_grad=True)
    with show.trace() as outer:
        with show.trace() as inner:
            assert listeners.stack()[-1] is inner
            (x * 2).sum().backward()
        assert listeners.stack() == (outer,)
    assert listeners.active is None
    assert len(inner.passes) == 1 and outer.passes == []  # the innermost trace records
    with pytest.raises(ZeroDivisionError):
        with show.trace():
            raise ZeroDivisionError
    assert listeners.active is None


def test_errors_inside_a_traced_pass_are_the_engines():
    x = torch.tensor([1.0], requires_grad=True)
    y = x.exp()
    y.backward(retain_graph=False)
    with show.trace(), pytest.raises(RuntimeError, match="backward through the graph a second"):
        y.backward()


def test_table_in_chinese(monkeypatch):
    a = torch.tensor([2.0], requires_grad=True)
    b = torch.tensor([3.0], requires_grad=True)
    d = a * b + 1.0
    d.register_hook(lambda g: g)
    e = d ** 2
    with show.trace(lang="zh") as t:
        e.backward()
    zh = str(t)
    head = zh.splitlines()[0].split()
    assert head[:4] == ["步骤", "节点", "收到的梯度", "耗时"]
    assert "沿各条边发出 / 累加" in zh.splitlines()[0]
    assert "[0] → AccumulateGrad(a): 42  (= 14 × 3)" in zh and "a.grad = 42" in zh
    assert "[1] （无梯度：常量或 requires_grad=False）" in zh
    assert "钩子：张量钩子 " in zh
    # the dashes under each header are as wide as the header shows (CJK: two columns each)
    assert zh.splitlines()[1].split()[2] == "-" * 10
    en = t.table(lang="en")
    assert en.splitlines()[0].split()[:4] == ["step", "node", "received", "time"]
    assert "hook: tensor hook " in en and "(no gradient: constant or requires_grad=False)" in en
    monkeypatch.setenv("TAPEGRAD_LANG", "zh")
    with show.trace() as t2:
        (a * b).sum().backward()
    assert t2.table().startswith("步骤")
    assert t2.table(lang="en").startswith("step")  # the argument beats TAPEGRAD_LANG
    with pytest.raises(ValueError, match="unknown language 'fr'"):
        show.trace(lang="fr")


def test_render_draws_the_graph_as_graph_render_does(tmp_path):
    """``t.render(path)``, as a reader would guess it, is ``t.graph().render(path)``."""
    e, _ = _graphs.seed000_2()
    with show.trace() as t:
        e.backward()
    assert t.render(tmp_path / "t.dot") == tmp_path / "t.dot"
    assert (tmp_path / "t.dot").read_text() == t.graph().dot()
