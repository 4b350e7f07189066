"""A replay is as safe as eager: value checks made outside kernels (target ranges, index ranges,
which path the values take) run again at each replay and raise eager's exact error; values
that eager code handles on another path run eagerly, bit-identical to eager execution."""

from __future__ import annotations

import numpy as np
import pytest
import torch as real_torch

import tapegrad as torch
import tapegrad.nn.functional as F
from tapegrad import nn


def _replaying(fn, *args):
    """Compile ``fn`` and call it until it replays (two captures, then one replay)."""
    c = torch.compile(fn)
    for _ in range(3):
        c(*args)
    compiled = c.__dict__.get("_compiled", c)  # a compiled module holds its function
    assert compiled.programs(), compiled.listing()
    return c


def _error(fn, *args):
    with pytest.raises(Exception) as info:
        fn(*args)
    return type(info.value), str(info.value)


def _same_error(fn, c, *args):
    """The replay raises exactly what eager execution raises."""
    eager = _error(fn, *args)
    assert _error(c, *args) == eager
    return eager


def _bits(*ts):
    return [t._data.tobytes() if t is not None else None for t in ts]


def _torch_error(fn, *args):
    with pytest.raises(Exception) as info:
        fn(*args)
    return type(info.value).__name__, str(info.value)


# ---------------------------------------------------------------------------------------------
# cross-entropy: the lean path's target test, and the general path behind it
# ---------------------------------------------------------------------------------------------

def test_cross_entropy_bad_targets_raise_eagers_error_at_replay():
    x = torch.randn(5, 3)
    c = _replaying(F.cross_entropy, x, torch.tensor([0, 1, 2, 0, 1]))
    assert "expect(_ce_targets_fit, True" in c.listing()
    for bad in ([0, -1, 2, 0, 1], [0, 1, 3, 0, 1], [0, 1, 2, 0, 7]):
        kind, msg = _same_error(F.cross_entropy, c, x, torch.tensor(bad))
        assert kind is IndexError and msg == f"Target {[b for b in bad if b < 0 or b > 2][0]} "\
            "is out of bounds."
    # torch's message for the same input
    assert _torch_error(real_torch.nn.functional.cross_entropy, real_torch.tensor(x._data),
                        real_torch.tensor([0, -1, 2, 0, 1])) == (
        "IndexError", "Target -1 is out of bounds.")
    # and good targets replay again afterwards
    y = torch.tensor([2, 2, 1, 0, 0])
    assert c(x, y)._data.tobytes() == F.cross_entropy(x, y)._data.tobytes()
    assert len(c.programs()) == 1


def _ce_step(dropout):
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(4, 8), nn.Dropout(dropout), nn.Linear(8, 3))
    opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(m(x), y)
        loss.backward()
        opt.step()
        return loss

    return m, opt, step


@pytest.mark.parametrize("dropout", [0.0, 0.5])
def test_ignored_targets_take_eagers_path_before_any_state_changes(dropout):
    m1, o1, s1 = _ce_step(dropout)
    m2, o2, s2 = _ce_step(dropout)
    c = torch.compile(s2)
    x = torch.randn(5, 4)
    targets = [[0, 1, 2, 0, 1]] * 3 + [[0, -100, 2, -100, 1], [2, 1, 0, 0, 1],
                                       [0, 1, 2, 5, 1], [1, 1, 1, 1, 1]]
    for t in targets:
        y = torch.tensor(t)
        torch.manual_seed(7)
        try:
            a = s1(x, y)
        except IndexError as err:
            torch.manual_seed(7)
            with pytest.raises(IndexError, match=str(err)):
                c(x, y)
            continue
        rng = torch.get_rng_state()
        torch.manual_seed(7)
        b = c(x, y)
        assert torch.equal(torch.get_rng_state(), rng)
        assert _bits(a) == _bits(b)
        for p, q in zip(m1.parameters(), m2.parameters(), strict=True):
            assert _bits(p, p.grad) == _bits(q, q.grad)
    assert len(c.entries) == 1 and c.entries[0].program is not None
    # the check comes right after the arguments are read, before dropout draws or any step
    lines = c.listing().splitlines()
    check = next(i for i, ln in enumerate(lines) if "_ce_targets_fit" in ln)
    assert "expect(" in lines[check] and "expect_late" not in lines[check]
    assert all("dropout_noise" not in ln and "SGD_step" not in ln for ln in lines[:check])


def test_a_changed_path_after_state_changed_is_an_error_not_a_wrong_number():
    m = nn.Linear(4, 3)
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    x = torch.randn(5, 4)

    def step(y):
        opt.zero_grad()
        m(x).sum().backward()
        opt.step()
        loss = F.cross_entropy(m(x), y + 0)  # the target is made after opt.step()
        loss.backward()
        return loss

    c = _replaying(step, torch.tensor([0, 1, 2, 0, 1]))
    assert "expect_late(_ce_targets_fit" in c.listing()
    with pytest.raises(IndexError, match=r"^Target -1 is out of bounds\.$"):
        c(torch.tensor([0, -1, 2, 0, 1]))
    with pytest.raises(RuntimeError, match="takes another path than at capture"):
        c(torch.tensor([0, -100, 2, 0, 1]))


# ---------------------------------------------------------------------------------------------
# nll_loss, embedding, the margin losses
# ---------------------------------------------------------------------------------------------

def test_nll_loss_targets_follow_the_argument_and_are_checked():
    x = F.log_softmax(torch.randn(4, 3), 1)
    for dtype in (torch.int64, torch.uint8):
        c = _replaying(F.nll_loss, x, torch.tensor([0, 1, 2, 1], dtype=dtype))
        y = torch.tensor([2, 2, 0, 1], dtype=dtype)
        assert _bits(c(x, y)) == _bits(F.nll_loss(x, y))
        kind, msg = _same_error(F.nll_loss, c, x, torch.tensor([0, 3, 2, 1], dtype=dtype))
        assert (kind, msg) == (IndexError, "Target 3 is out of bounds.")
    x4 = F.log_softmax(torch.randn(2, 3, 2, 2), 1)
    c = _replaying(F.nll_loss, x4, torch.zeros(2, 2, 2, dtype=torch.int64))
    y = torch.tensor([[[0, 1], [2, 1]], [[1, 1], [0, 2]]])
    assert _bits(c(x4, y)) == _bits(F.nll_loss(x4, y))
    _same_error(F.nll_loss, c, x4, torch.full((2, 2, 2), -1))


def test_embedding_indices_are_checked_at_replay():
    emb = nn.Embedding(5, 3)

    def f(i):  # a training step's shape: the indices in, the gradient into the table
        out = emb(i)
        loss = (out * out).sum()
        loss.backward()
        return loss

    c = _replaying(f, torch.tensor([[0, 1], [4, 2]]))
    y = torch.tensor([[3, 3], [0, 1]])
    emb.weight.grad = None
    a = c(y)
    g = emb.weight.grad._data.copy()
    emb.weight.grad = None
    assert _bits(a) == _bits(f(y)) and g.tobytes() == emb.weight.grad._data.tobytes()
    for bad in ([[0, 5], [1, 2]], [[0, -1], [1, 2]]):
        kind, msg = _same_error(f, c, torch.tensor(bad))
        assert (kind, msg) == (IndexError, "index out of range in self")
    with torch.no_grad():  # the module itself, compiled, under no_grad
        cm = _replaying(emb, y)
        _same_error(emb, cm, torch.tensor([7]))
    assert _torch_error(real_torch.nn.functional.embedding, real_torch.tensor([0, -1]),
                        real_torch.zeros(5, 3)) == ("IndexError", "index out of range in self")


def test_multi_margin_targets_follow_the_argument_and_are_checked():
    x = torch.randn(4, 3, requires_grad=True)

    def f(x, y):
        loss = F.multi_margin_loss(x, y)
        loss.backward()
        return loss

    c = _replaying(f, x, torch.tensor([0, 1, 2, 1]))
    y = torch.tensor([2, 0, 0, 1])
    x.grad = None
    a = c(x, y)
    g = x.grad._data.copy()
    x.grad = None
    assert _bits(a) == _bits(f(x, y)) and g.tobytes() == x.grad._data.tobytes()
    kind, msg = _same_error(f, c, x, torch.tensor([0, 1, 3, 1]))
    assert (kind, msg) == (RuntimeError, "target out of range")


def test_multilabel_margin_targets_follow_the_argument_and_are_checked():
    x = torch.randn(2, 4)
    c = _replaying(F.multilabel_margin_loss, x, torch.tensor([[0, 1, -1, 2], [3, -1, 0, 0]]))
    y = torch.tensor([[2, -1, 0, 0], [1, 2, 3, -1]])
    assert _bits(c(x, y)) == _bits(F.multilabel_margin_loss(x, y))
    kind, msg = _same_error(F.multilabel_margin_loss, c, x,
                            torch.tensor([[0, 4, -1, 2], [3, -1, 0, 0]]))
    assert (kind, msg) == (RuntimeError, "argument #2 'target' is out of range")


# ---------------------------------------------------------------------------------------------
# checks that live inside the kernels: repeated because the kernel is
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["gather", "index_select", "scatter_add"])
def test_index_kernels_check_at_replay(name):
    x = torch.randn(3, 4)
    src = torch.ones(3, 4)
    fns = {
        "gather": lambda i: torch.gather(x, 1, i.view(3, 1).expand(3, 2).contiguous()),
        "index_select": lambda i: torch.index_select(x, 0, i),
        "scatter_add": lambda i: torch.scatter_add(x, 1, i.view(3, 1).expand(3, 2).contiguous(),
                                                   src[:, :2].contiguous()),
    }
    fn = fns[name]
    c = _replaying(fn, torch.tensor([0, 1, 2]))
    assert _bits(c(torch.tensor([2, 0, 1]))) == _bits(fn(torch.tensor([2, 0, 1])))
    big = torch.tensor([0, 9, 1])
    _same_error(fn, c, big)


def test_value_checks_stay_in_place_and_are_heard():
    """Marked functions are the same functions before, during and after a capture (a capture
    hears them announce; nothing is replaced); eagerly each pays one ``is None`` test."""
    import sys

    from tapegrad.ops import _registry

    assert ("tapegrad.nn.functional._losses", "_ce_targets_fit") in _registry.VALUE_CHECKS
    marked = {(mod, name): getattr(sys.modules[mod], name) for mod, name in _registry.VALUE_CHECKS}
    c = _replaying(F.cross_entropy, torch.randn(2, 3), torch.tensor([0, 1]))
    assert c.programs() and "_ce_targets_fit" in c.listing()
    for (mod, name), fn in marked.items():
        assert getattr(sys.modules[mod], name) is fn
    assert np.all(np.isfinite(c(torch.randn(2, 3), torch.tensor([2, 2]))._data))


# ---------------------------------------------------------------------------------------------
# indexing: tensor keys follow the argument, and their range is checked
# ---------------------------------------------------------------------------------------------

def _index_fns():
    x = torch.randn(4, 3)
    ones = torch.ones(3, 3)

    def setitem(i):
        y = x.clone()
        y[i] = 0.0
        return y

    return {
        "getitem": lambda i: x[i] * 1,
        "getitem_computed": lambda i: x[:, i[:2] % 3] * 1,
        "setitem": setitem,
        "index_add": lambda i: torch.index_add(x, 0, i, ones),
        "index_copy": lambda i: torch.index_copy(x, 0, i, ones),
        "index_fill": lambda i: x.index_fill(0, i, 2.0),
    }


@pytest.mark.parametrize("name", list(_index_fns()))
def test_index_keys_follow_the_argument_and_are_checked(name):
    fn = _index_fns()[name]
    c = _replaying(fn, torch.tensor([0, 1, 2]))
    for i in ([3, 3, -1], [2, 0, 1]):
        assert _bits(c(torch.tensor(i))) == _bits(fn(torch.tensor(i)))
    if name != "getitem_computed":  # (% 3 keeps every index in range)
        kind, msg = _same_error(fn, c, torch.tensor([0, 9, 1]))
        assert kind is IndexError and "index 9 is out of bounds for dimension 0 with size 4" in msg
        _same_error(fn, c, torch.tensor([0, -5, 1]))


def test_the_program_as_a_dot_graph():
    m = nn.Linear(4, 3)
    opt = torch.optim.SGD(m.parameters(), lr=0.1)

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(m(x), y)
        loss.backward()
        opt.step()
        return loss

    c = _replaying(step, torch.randn(5, 4), torch.tensor([0, 1, 2, 0, 1]))
    (p,) = c.programs()
    dot = p.dot()
    assert dot.startswith("digraph program {") and dot.rstrip().endswith("}")
    # one node per line of the listing, the check a diamond, data flowing by slot names
    assert dot.count(" [label=") - dot.count("->") == len(p.flow) + 1  # + the return node
    assert 'expect(_ce_targets_fit, True, a' in dot and "shape=diamond" in dot
    assert '[label="a' in dot and "-> ret" in dot
    both = c.dot()
    assert "subgraph cluster_0" in both and "p0s0 [label=" in both
    graphviz = pytest.importorskip("graphviz", reason="graphviz (Python) renders the DOT text")
    try:
        svg = graphviz.Source(dot).pipe(format="svg")
    except graphviz.ExecutableNotFound:
        pytest.skip("the Graphviz dot program is not installed")
    assert b"<svg" in svg
