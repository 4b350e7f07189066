"""Indices, masks and counts under ``tapegrad.compile``: argmax, sort's and topk's indices,
comparisons, nonzero, unique... are recorded kernels, so a replay computes them from the new
values instead of repeating the values of the captures.

Each test calls a compiled function with values that give the same indices on the first two
calls (the two captures agree, so the third call replays) and other indices afterwards: every
call must give eager's result, bit for bit and dtype for dtype. Ops whose output shape depends
on the values (nonzero, unique, masked_select) are checked at replay: another shape runs the
call eagerly."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import tapegrad as torch
import tapegrad.nn.functional as F
from tapegrad import nn


def _same(want, got):
    """Equal as eager gives it: the same structure, dtypes, shapes and bits."""
    if isinstance(want, (tuple, list)):
        assert type(got) is type(want) and len(got) == len(want)
        for w, g in zip(want, got, strict=True):
            _same(w, g)
        return
    assert isinstance(got, torch.Tensor), type(got)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got._data.tobytes() == want._data.tobytes(), (got, want)


def _check(fn, calls, replays=True):
    """Compile ``fn``; at each call its result is eager's. ``replays``: a program ran."""
    c = torch.compile(fn)
    for args in calls:
        _same(fn(*args), c(*args))
    if replays:
        assert c.programs(), c.explain() if hasattr(c, "explain") else "no program"
    return c


# values: A and B (= 2 * A) order every row the same way, C and D otherwise
A = torch.tensor([[1.0, 5.0, 3.0, 0.5], [4.0, 2.0, 0.0, 3.0], [0.0, 1.0, 2.0, 6.0]])
B = A * 2
C = torch.tensor([[6.0, 5.0, 3.0, 0.5], [0.0, 2.0, 4.0, 3.0], [7.0, 1.0, 2.0, 6.0]])
D = torch.tensor([[1.0, 0.5, 3.0, 5.0], [4.0, 3.0, 0.0, 2.0], [6.0, 2.0, 1.0, 0.0]])
CALLS = [(A,), (B,), (C,), (D,), (A,)]


@pytest.mark.parametrize("name, fn", [
    ("argmax", lambda x: x.argmax(1)),
    ("argmax_all", lambda x: x.argmax()),
    ("argmin", lambda x: torch.argmin(x, 0, keepdim=True)),
    ("argsort", lambda x: x.argsort(1)),
    ("argsort_desc", lambda x: torch.argsort(x, 0, descending=True)),
    ("sort", lambda x: tuple(x.sort(1))),
    ("sort_stable", lambda x: tuple(torch.sort(x, 0, stable=True, descending=True))),
    ("topk", lambda x: tuple(x.topk(2, 1))),
    ("topk_smallest", lambda x: tuple(torch.topk(x, 2, 0, largest=False))),
    ("max_dim", lambda x: tuple(x.max(1))),
    ("min_dim", lambda x: tuple(x.min(0, keepdim=True))),
    ("kthvalue", lambda x: tuple(x.kthvalue(2, 1))),
    ("median_dim", lambda x: tuple(x.median(1))),
    ("cummax", lambda x: tuple(x.cummax(1))),
    ("cummin", lambda x: tuple(torch.cummin(x, 0))),
    ("gt", lambda x: x > 2.5),
    ("eq", lambda x: x.argmax(1) == 1),
    ("compare_tensors", lambda x: (x <= x.mean(1, keepdim=True), x != x.flip(1))),
    ("logical", lambda x: (torch.logical_and(x > 1, x < 4), torch.logical_not(x > 2),
                           torch.logical_or(x > 5, x < 1), torch.logical_xor(x > 1, x > 3))),
    ("bitwise", lambda x: (~(x > 2), (x > 1) & (x < 4), (x > 5) | (x < 1), (x > 1) ^ (x > 3))),
    ("any", lambda x: ((x > 4.5).any(), (x > 4.5).any(1))),
    ("all", lambda x: ((x > 0.2).all(), torch.all(x > 0.2, 0))),
    ("count_nonzero", lambda x: (torch.count_nonzero(x > 2.5), (x > 2.5).count_nonzero(1))),
    ("isclose", lambda x: torch.isclose(x, torch.full_like(x, 4.0))),
    ("isnan", lambda x: (torch.log(x - 1).isnan(), torch.isinf(1 / (x - 2)),
                         torch.isfinite(1 / (x - 2)), torch.signbit(x - 2))),
    ("masked_fill", lambda x: x.masked_fill(x > 2.5, 0.0)),
    ("where", lambda x: torch.where(x > 2.5, x, -x)),
])
def test_index_op_follows_the_values_at_replay(name, fn):
    _check(fn, CALLS)


def test_argmax_and_max_indices_of_a_layer():
    """The example of the bug: the indices of a layer's output, compiled."""
    torch.manual_seed(0)
    lin = nn.Linear(4, 3)
    _check(lambda x: (x.argmax(1), lin(x).max(1).indices), CALLS)


def test_mode():
    x1 = torch.tensor([[1.0, 1.0, 2.0], [3.0, 4.0, 4.0]])
    x2 = torch.tensor([[5.0, 5.0, 7.0], [0.0, 1.0, 1.0]])
    x3 = torch.tensor([[1.0, 2.0, 2.0], [3.0, 3.0, 4.0]])
    _check(lambda x: tuple(x.mode(1)), [(x1,), (x2,), (x3,), (x1,)])


def test_bucketize_and_searchsorted():
    bounds = torch.tensor([0.0, 1.0, 2.0, 3.0])
    rows = torch.tensor([[0.0, 1.0, 2.0], [1.0, 3.0, 5.0]])

    def fn(x):
        return (torch.bucketize(x, bounds), torch.bucketize(x, bounds, right=True,
                                                             out_int32=True),
                torch.searchsorted(bounds, x), torch.searchsorted(rows, x[:2, :2] * 2))

    x1 = torch.tensor([[0.5, 1.5, 2.5], [0.2, 1.2, 2.2], [0.1, 0.2, 0.3]])
    x2 = x1 + 0.1
    x3 = torch.tensor([[2.5, 0.5, 3.5], [1.0, 2.0, 0.0], [3.0, 9.0, -1.0]])
    _check(fn, [(x1,), (x2,), (x3,), (x1,)])


def test_one_hot():
    y1 = torch.tensor([0, 2, 1, 2])
    y2 = torch.tensor([2, 0, 0, 1])
    _check(lambda y: F.one_hot(y, 3), [(y1,), (y1,), (y2,), (y1,)])


def test_one_hot_with_inferred_classes_runs_eagerly_when_their_number_changes():
    y1 = torch.tensor([0, 2, 1, 2])
    y2 = torch.tensor([2, 0, 0, 1])
    y3 = torch.tensor([4, 0, 0, 1])  # five classes: another shape, an eager call
    _check(lambda y: F.one_hot(y).float() * 2, [(y1,), (y1,), (y2,), (y3,), (y1,)])


def test_one_hot_bad_class_raises_eagers_error_at_replay():
    y1 = torch.tensor([0, 2, 1, 2])
    c = _check(lambda y: F.one_hot(y, 3), [(y1,), (y1,), (y1,)])
    with pytest.raises(RuntimeError, match="Class values must be smaller than num_classes."):
        c(torch.tensor([0, 3, 1, 2]))


def test_histograms_isin_and_unravel_index():
    edges = torch.tensor([0.0, 2.0, 4.0, 7.0])

    def fn(x):
        flat = x.reshape(-1)
        return (torch.histc(flat, bins=4, min=0, max=8), torch.histc(flat, bins=3),
                *torch.histogram(flat, bins=3), torch.histogram(flat, bins=edges)[0],
                torch.isin(x.argmax(1), torch.tensor([0, 3])),
                torch.unravel_index(flat.argmax(), (3, 4)))

    _check(fn, CALLS)


def test_histogramdd_replays():
    """Counts over a grid, with bins given as counts, as edges, with a range and weights; the
    edges are computed at each replay from the new points."""
    edges, edges2 = torch.tensor([0.0, 3.0, 8.0]), torch.tensor([0.0, 1.0, 2.5, 7.0])

    def fn(x):
        pts = x[:, :2]
        a = torch.histogramdd(pts, bins=[2, 3])
        b = torch.histogramdd(pts, bins=[edges, edges2], weight=x[:, 3], density=True)
        c = torch.histogramdd(x, bins=2, range=[0.0, 8.0] * 4)
        return a.hist, *a.bin_edges, b.hist, *b.bin_edges, c.hist, *c.bin_edges

    c = _check(fn, CALLS)
    assert "histogramdd" in c.listing()


def test_bincount_replays_with_a_shape_check():
    def fn(x):
        return torch.bincount(x.argmax(1), minlength=4), torch.bincount(
            x.argmax(1), weights=x.max(1).values)

    _check(fn, CALLS, replays=False)  # (D's largest index is another length: an eager call)
    c = _check(fn, [(A,), (B,), (C,)])
    assert "expect(" in c.listing() and "bincount" in c.listing()


def test_equal_and_allclose_are_asked_again_at_replay():
    """A Python bool from values: a replay checks the answer is the captured one; another
    answer runs the call eagerly (its branch may differ)."""
    ref = A.clone()

    def fn(x):
        y = x * 2
        if torch.equal(x, ref) and torch.allclose(x, ref):
            return y + 1
        return y - 1

    c = torch.compile(fn)
    for x in (A, A.clone(), A.clone(), C, A, C):
        _same(fn(x), c(x))
    assert c.programs() and "_equal_arrays" in c.listing() and "_allclose_arrays" in c.listing()


# ---------------------------------------------------------------------------------------------
# outputs whose shape depends on the values: checked at each replay
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, fn", [
    ("nonzero", lambda x: (x > 2.5).nonzero()),
    ("nonzero_tuple", lambda x: (x > 2.5).nonzero(as_tuple=True)),
    ("argwhere", lambda x: torch.argwhere(x > 2.5)),
    ("masked_select", lambda x: x.masked_select(x > 2.5) * 2),
    ("unique", lambda x: torch.unique((x > 2.5).long() + (x > 4.5).long(), return_inverse=True,
                                      return_counts=True)),
    ("unique_dim", lambda x: torch.unique((x > 2.5).long(), dim=1, return_counts=True)),
    ("unique_consecutive", lambda x: torch.unique_consecutive(
        (x > 2.5).long().reshape(-1), return_inverse=True, return_counts=True)),
    ("index_by_mask", lambda x: x[x > 2.5] + 1),
])
def test_value_dependent_shapes(name, fn):
    same_count = torch.tensor([[3.0, 5.0, 0.0, 0.5], [4.0, 2.0, 0.0, 6.0], [0.0, 1.0, 2.0, 1.0]])
    same_count_elsewhere = torch.tensor([[0.0, 3.0, 5.0, 0.5], [4.0, 2.0, 1.0, 1.0],
                                         [0.0, 1.0, 2.0, 6.0]])
    more = torch.tensor([[3.0, 5.0, 4.0, 0.5], [4.0, 2.0, 0.0, 6.0], [0.0, 1.0, 2.0, 6.0]])
    _check(fn, [(A,), (same_count,), (same_count_elsewhere,), (more,), (D,), (A,)],
           replays=False)


def test_nonzero_replays_with_a_shape_check():
    c = _check(lambda x: (x > 2.5).nonzero() * 1, [(A,), (A,), (A,)])
    assert "expect(" in c.listing() and "nonzero" in c.listing()


def test_nonzero_of_another_length_runs_eagerly():
    c = torch.compile(lambda x: (x > 2.5).nonzero() * 1)
    for _ in range(3):
        c(A)
    more = torch.full((3, 4), 9.0)
    _same((more > 2.5).nonzero(), c(more))


# ---------------------------------------------------------------------------------------------
# in training steps
# ---------------------------------------------------------------------------------------------

def _classifier():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))


def test_accuracy_of_a_compiled_training_step():
    model = _classifier()
    twin = copy.deepcopy(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    twin_opt = torch.optim.SGD(twin.parameters(), lr=0.5)

    def step(m, o, x, y):
        o.zero_grad()
        logits = m(x)
        loss = F.cross_entropy(logits, y)
        loss.backward()
        o.step()
        acc = (logits.argmax(1) == y).float().mean()
        return loss.detach(), acc

    compiled = torch.compile(step)
    rng = np.random.default_rng(0)
    accs = set()
    for _ in range(8):
        x = torch.tensor(rng.standard_normal((16, 4)).astype(np.float32))
        y = torch.tensor(rng.integers(0, 3, 16))
        want = step(twin, twin_opt, x, y)
        got = compiled(model, opt, x, y)
        _same(want, got)
        accs.add(float(want[1]))
        for p, q in zip(model.parameters(), twin.parameters(), strict=True):
            assert p._data.tobytes() == q._data.tobytes()
    assert len(accs) > 1  # the accuracy did change from call to call
    assert compiled.programs()


def test_topk_masking_in_the_forward_pass_trains_like_eager():
    """Only each row's two largest activations pass; the gradients flow through the kept
    values (through topk's values, and a mask built from its indices)."""
    model = _classifier()
    twin = copy.deepcopy(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    twin_opt = torch.optim.SGD(twin.parameters(), lr=0.1)

    def step(m, o, x, y):
        o.zero_grad()
        h = m[0](x)
        top = h.topk(2, 1)
        mask = torch.zeros_like(h).scatter(1, top.indices, 1.0)
        kept = m[2](m[1](h * mask)) + top.values.sum(1, keepdim=True)
        s, order = kept.sort(1, descending=True)
        loss = F.cross_entropy(kept, y) + s[:, 0].mean() * 0.1
        loss.backward()
        o.step()
        return loss.detach(), order

    compiled = torch.compile(step)
    rng = np.random.default_rng(1)
    for _ in range(6):
        x = torch.tensor(rng.standard_normal((8, 4)).astype(np.float32))
        y = torch.tensor(rng.integers(0, 3, 8))
        _same(step(twin, twin_opt, x, y), compiled(model, opt, x, y))
        for p, q in zip(model.parameters(), twin.parameters(), strict=True):
            assert p._data.tobytes() == q._data.tobytes()
    assert compiled.programs()


def test_sort_values_gradient_is_recorded():
    """The gradient of sorted values goes back to where each value came from, at replay too."""
    w = torch.zeros(3, 4, requires_grad=True)
    opt = torch.optim.SGD([w], lr=1.0)
    w2 = torch.zeros(3, 4, requires_grad=True)
    opt2 = torch.optim.SGD([w2], lr=1.0)
    weights = torch.tensor([1.0, 2.0, 3.0, 4.0])

    def step(p, o, x):
        o.zero_grad()
        ((p + x).sort(1).values * weights).sum().backward()
        o.step()

    compiled = torch.compile(step)
    for x in (A, B, C, D, A):
        step(w2, opt2, x)
        compiled(w, opt, x)
        assert w._data.tobytes() == w2._data.tobytes()
    assert compiled.programs()
