"""Adam's step at replay (compiler/optim_replay.py): small parameters updated in buckets, their
moments moved into flat buffers, and every value bit for bit what eager ``Adam.step`` gives."""

from __future__ import annotations

import io

import numpy as np
import pytest
from replay_checks import assert_same, step_arrays

import tapegrad as torch
from tapegrad import nn
from tapegrad.compiler import optim_replay


def _model():
    # small layers (bucketed) and one over optim_replay._SMALL elements (updated alone)
    return nn.Sequential(nn.Linear(12, 16), nn.LayerNorm(16), nn.Tanh(),
                         nn.Linear(16, optim_replay._SMALL // 16 + 1), nn.ReLU(),
                         nn.Linear(optim_replay._SMALL // 16 + 1, 3))


def _pair(opt_cls, **kw):
    """An eager and a compiled copy of the same training step."""
    out = []
    for _ in range(2):
        torch.manual_seed(0)
        m = _model()
        opt = opt_cls(m.parameters(), **kw)
        x, y = torch.randn(5, 12), torch.randint(0, 3, (5,))

        def step(m=m, opt=opt, x=x, y=y):
            opt.zero_grad()
            loss = nn.functional.cross_entropy(m(x), y)
            loss.backward()
            opt.step()
            return loss

        out.append((m, opt, step))
    (m1, o1, s1), (m2, o2, s2) = out
    return m1, o1, s1, m2, o2, torch.compile(s2)


def _buckets(opt):
    return [b for _, _, made in optim_replay._BUCKETS[opt].values() for b in made]


@pytest.mark.parametrize("opt_cls, kw", [
    (torch.optim.Adam, {"lr": 1e-2}),
    (torch.optim.Adam, {"lr": 1e-2, "weight_decay": 0.1}),
    (torch.optim.AdamW, {"lr": 1e-2, "weight_decay": 0.1}),
    (torch.optim.Adam, {"lr": 1e-2, "betas": (0.3, 0.9)}),  # lerp's other branch (w >= 0.5)
])
def test_bucketed_update_is_bit_identical_to_eager(opt_cls, kw):
    m1, o1, s1, m2, o2, c = _pair(opt_cls, **kw)
    for _ in range(6):
        assert_same([s1()._data], [c()._data])
        assert_same(step_arrays(m1, o1), step_arrays(m2, o2))
    (bucket,) = _buckets(o2)
    big = m2[3].weight
    assert len(bucket.index) == 7 and big.numel() > optim_replay._SMALL
    for p in m2.parameters():  # the moments are views of the bucket's buffers, the big one not
        s = o2.state[p]
        assert (s["exp_avg"]._data.base is bucket.flats[0]) is (p is not big)
        assert (s["exp_avg_sq"]._data.base is bucket.flats[1]) is (p is not big)


def test_state_dict_round_trip_and_load_between_replays():
    m1, o1, s1, m2, o2, c = _pair(torch.optim.Adam, lr=1e-2)
    for _ in range(4):
        s1()
        c()
    buf = io.BytesIO()
    torch.save(o2.state_dict(), buf)
    data = buf.getvalue()
    saved = torch.load(io.BytesIO(data))
    for k, s in o1.state_dict()["state"].items():
        for name in ("exp_avg", "exp_avg_sq", "step"):
            assert torch.equal(saved["state"][k][name], s[name])
    # loading a state dict gives the optimizer new state tensors: the buckets are made again
    o1.load_state_dict(saved)
    o2.load_state_dict(torch.load(io.BytesIO(data)))  # (its own tensors, not o1's)
    before = _buckets(o2)
    for _ in range(3):
        assert_same([s1()._data], [c()._data])
        assert_same(step_arrays(m1, o1), step_arrays(m2, o2))
    assert _buckets(o2) is not before and _buckets(o2)[0].flats[0] is not before[0].flats[0]


def test_a_moment_replaced_in_place_or_rebound_is_followed():
    m1, o1, s1, m2, o2, c = _pair(torch.optim.Adam, lr=1e-2)
    for _ in range(3):
        s1()
        c()
    p1, p2 = m1[0].weight, m2[0].weight
    for o, p in ((o1, p1), (o2, p2)):
        o.state[p]["exp_avg"].mul_(0.5)  # written through the view: the bucket sees it
        o.state[p]["exp_avg_sq"].data = torch.ones_like(p)  # a new array: made again
    for _ in range(3):
        assert_same([s1()._data], [c()._data])
        assert_same(step_arrays(m1, o1), step_arrays(m2, o2))


def test_parameters_at_different_step_counts_are_updated_one_by_one():
    m1, o1, s1, m2, o2, c = _pair(torch.optim.Adam, lr=1e-2)
    s1()
    c()
    for o, m in ((o1, m1), (o2, m2)):
        o.state[m[1].weight]["step"] = torch.tensor(7.0)  # bias corrections differ
    for _ in range(2):
        s1()
        c()
    for o, m in ((o1, m1), (o2, m2)):
        o.state[m[1].weight]["exp_avg"].zero_()
        o.state[m[1].weight]["exp_avg_sq"].zero_()
    for _ in range(3):
        assert_same([s1()._data], [c()._data])
        assert_same(step_arrays(m1, o1), step_arrays(m2, o2))
    assert np.all(np.isfinite(m2[1].weight._data))


REPLAYED = [
    (torch.optim.SGD, {"lr": 0.1}, "sgd_step", ()),
    (torch.optim.SGD, {"lr": 0.1, "weight_decay": 0.01}, "sgd_step", ()),
    (torch.optim.SGD, {"lr": 0.05, "momentum": 0.9}, "sgd_step", ("momentum_buffer",)),
    (torch.optim.SGD, {"lr": 0.05, "momentum": 0.9, "nesterov": True, "weight_decay": 1e-3},
     "sgd_step", ("momentum_buffer",)),
    (torch.optim.SGD, {"lr": 0.05, "momentum": 0.9, "dampening": 0.1}, "sgd_step", None),
    (torch.optim.RMSprop, {"lr": 1e-3}, "rmsprop_step", ("square_avg",)),
    (torch.optim.RMSprop, {"lr": 1e-3, "momentum": 0.9, "weight_decay": 0.01},
     "rmsprop_step", ("square_avg", "momentum_buffer")),
    (torch.optim.RMSprop, {"lr": 1e-3, "centered": True}, "rmsprop_step",
     ("square_avg", "grad_avg")),
    (torch.optim.RMSprop, {"lr": 1e-3, "centered": True, "momentum": 0.5, "alpha": 0.9},
     "rmsprop_step", ("square_avg", "momentum_buffer", "grad_avg")),
    (torch.optim.AdamW, {"lr": 1e-2}, "adam_step", ("exp_avg", "exp_avg_sq")),
    (torch.optim.Adam, {"lr": 1e-2, "eps": 1e-3}, "adam_step", ("exp_avg", "exp_avg_sq")),
]


@pytest.mark.parametrize("opt_cls, kw, name, keys", REPLAYED)
def test_each_optimizer_replays_bit_identically(opt_cls, kw, name, keys):
    """SGD, RMSprop, Adam and AdamW steps at replay (their bucketed state updates included):
    every parameter, gradient and state tensor the same bits as eager ``step`` at each of
    several steps; the program calls the replayed step, and the small parameters' state is
    moved into the flat buffers of one bucket (none for SGD without momentum, or with
    dampening, whose ``add_`` rounds differently on a large array)."""
    m1, o1, s1, m2, o2, c = _pair(opt_cls, **kw)
    for _ in range(7):
        assert_same([s1()._data], [c()._data])
        assert_same(step_arrays(m1, o1), step_arrays(m2, o2))
    assert f"{name}(" in c.listing()
    made = _buckets(o2) if o2 in optim_replay._BUCKETS else []
    if not keys:
        assert made == []
        return
    (bucket,) = made
    big = m2[3].weight
    assert len(bucket.index) == 7
    for p in m2.parameters():
        for k, key in enumerate(keys):
            assert (o2.state[p][key]._data.base is bucket.flats[k]) is (p is not big)


def test_a_scheduler_and_a_second_group_are_followed():
    """The learning rate read from the live group at each replayed step (a scheduler changes
    it), and a group of its own hyper-parameters."""
    out = []
    for _ in range(2):
        torch.manual_seed(0)
        m = _model()
        opt = torch.optim.SGD([{"params": m[0].parameters(), "momentum": 0.5},
                               {"params": list(m[1:].parameters())}], lr=0.1, momentum=0.9)
        sched = torch.optim.lr_scheduler.StepLR(opt, 2, gamma=0.5)
        x, y = torch.randn(5, 12), torch.randint(0, 3, (5,))

        def step(m=m, opt=opt, x=x, y=y, sched=sched):
            opt.zero_grad()
            loss = nn.functional.cross_entropy(m(x), y)
            loss.backward()
            opt.step()
            sched.step()
            return loss

        out.append((m, opt, step))
    (m1, o1, s1), (m2, o2, s2) = out
    c = torch.compile(s2)
    for _ in range(7):
        assert_same([s1()._data], [c()._data])
        assert_same(step_arrays(m1, o1), step_arrays(m2, o2))
    assert "sgd_step(" in c.listing()


def test_the_first_step_and_other_cases_run_the_real_step():
    """Without state yet (SGD's first momentum buffer is a copy of the gradient), with a
    hook, or with maximize, the program calls the real ``step``; results stay eager's."""
    for kw in ({"lr": 0.1, "momentum": 0.9, "maximize": True}, {"lr": 0.1, "momentum": 0.9}):
        m1, o1, s1, m2, o2, c = _pair(torch.optim.SGD, **kw)
        handles = [o.register_step_post_hook(lambda *a: None) for o in (o1, o2)]
        for i in range(6):
            if i == 4:
                for h in handles:
                    h.remove()
            assert_same([s1()._data], [c()._data])
            assert_same(step_arrays(m1, o1), step_arrays(m2, o2))
