"""Learning-rate schedulers: the lr (and momentum/beta1) sequences must equal torch's exactly.

Each scenario builds an optimizer, a scheduler, and records ``get_last_lr()`` and the groups'
values over many steps (the optimizer steps first, as torch asks). Floats are compared with
``==`` (rtol = atol = 0): the schedules are Python float arithmetic and must be torch's to the
last bit. Also: state_dict round trips, closed forms via ``step(epoch)``, warnings and errors.
"""

from __future__ import annotations

import math

import pytest
from torchcompare import raised

EXACT = {"rtol": 0.0, "atol": 0.0}


def make_opt(L, name="SGD", groups=1, **kw):
    params = [{"params": [L.zeros(2, requires_grad=True)], "lr": 0.1 * (i + 1)}
              for i in range(groups)]
    if name == "SGD":
        kw.setdefault("momentum", 0.9)
    return getattr(L.optim, name)(params, lr=0.1, **kw)


def trace(opt, sched, steps, metrics=None, keys=("lr",)):
    out = [sched.get_last_lr()]
    for i in range(steps):
        opt.step()
        if metrics is None:
            sched.step()
        else:
            sched.step(metrics[i])
        out.append((sched.get_last_lr(), [[g[k] for k in keys] for g in opt.param_groups]))
    return out


SCHEDULES = [
    ("StepLR", dict(step_size=3, gamma=0.5), 20),
    ("MultiStepLR", dict(milestones=[2, 5, 5, 9], gamma=0.3), 15),
    ("ExponentialLR", dict(gamma=0.9), 25),
    ("CosineAnnealingLR", dict(T_max=7, eta_min=0.001), 40),
    ("CosineAnnealingLR", dict(T_max=10), 30),
    ("LinearLR", dict(start_factor=0.25, total_iters=4), 10),
    ("LinearLR", dict(start_factor=1.0, end_factor=0.1, total_iters=7), 10),
    ("ConstantLR", dict(factor=0.5, total_iters=3), 8),
    ("PolynomialLR", dict(total_iters=6, power=2.0), 9),
    ("CosineAnnealingWarmRestarts", dict(T_0=3, T_mult=2, eta_min=0.01), 25),
    ("CosineAnnealingWarmRestarts", dict(T_0=4), 12),
]


@pytest.mark.parametrize("name,kw,steps", SCHEDULES, ids=lambda x: str(x))
@pytest.mark.parametrize("groups", [1, 2])
def test_schedule_matches_torch_exactly(compare, name, kw, steps, groups):
    def scenario(L):
        opt = make_opt(L, groups=groups)
        sched = getattr(L.optim.lr_scheduler, name)(opt, **kw)
        return trace(opt, sched, steps), sched.state_dict()

    compare(scenario, **EXACT)


def test_lambda_and_multiplicative(compare):
    def scenario(L):
        opt = make_opt(L, groups=2)
        s1 = L.optim.lr_scheduler.LambdaLR(opt, [lambda e: 0.95**e, lambda e: 1 / (e + 1)])
        t1 = trace(opt, s1, 10)
        opt2 = make_opt(L)
        s2 = L.optim.lr_scheduler.MultiplicativeLR(opt2, lambda e: 0.9)
        return t1, trace(opt2, s2, 10), s1.state_dict(), s2.state_dict()

    compare(scenario, **EXACT)


@pytest.mark.parametrize(
    "kw",
    [
        dict(max_lr=0.5, total_steps=20),
        dict(max_lr=[0.5, 1.0], epochs=3, steps_per_epoch=7, anneal_strategy="linear"),
        dict(max_lr=0.5, total_steps=25, three_phase=True, pct_start=0.25),
        dict(max_lr=0.5, total_steps=15, cycle_momentum=False, div_factor=10.0,
             final_div_factor=100.0),
    ],
    ids=repr,
)
@pytest.mark.parametrize("optname", ["SGD", "Adam"])
def test_one_cycle(compare, kw, optname):
    def scenario(L):
        groups = 2 if isinstance(kw["max_lr"], list) else 1
        opt = make_opt(L, optname, groups=groups)
        sched = L.optim.lr_scheduler.OneCycleLR(opt, **kw)
        total = sched.total_steps
        keys = ("lr", "momentum") if optname == "SGD" else ("lr", "betas")
        out = trace(opt, sched, total - 1, keys=keys)
        opt.step()
        sched.step()
        return out, raised(lambda: (opt.step(), sched.step())), sched.state_dict()

    compare(scenario, **EXACT)


@pytest.mark.parametrize(
    "kw",
    [
        dict(base_lr=0.01, max_lr=0.1, step_size_up=4),
        dict(base_lr=0.01, max_lr=0.1, step_size_up=3, step_size_down=5, mode="triangular2"),
        dict(base_lr=[0.01, 0.02], max_lr=0.1, step_size_up=3, mode="exp_range", gamma=0.9),
    ],
    ids=repr,
)
def test_cyclic(compare, kw):
    def scenario(L):
        groups = 2 if isinstance(kw["base_lr"], list) else 1
        opt = make_opt(L, groups=groups)
        sched = L.optim.lr_scheduler.CyclicLR(opt, **kw)
        return trace(opt, sched, 20, keys=("lr", "momentum"))

    compare(scenario, **EXACT)


def test_sequential_and_chained(compare):
    def scenario(L):
        sch = L.optim.lr_scheduler
        opt = make_opt(L)
        seq = sch.SequentialLR(
            opt, [sch.LinearLR(opt, start_factor=0.1, total_iters=3),
                  sch.CosineAnnealingLR(opt, T_max=6)], milestones=[3])
        t1 = trace(opt, seq, 12)
        opt2 = make_opt(L)
        ch = sch.ChainedScheduler([sch.ExponentialLR(opt2, gamma=0.9),
                                   sch.StepLR(opt2, step_size=2, gamma=0.5)])
        return t1, trace(opt2, ch, 8), seq.state_dict()["_milestones"]

    compare(scenario, **EXACT)


@pytest.mark.parametrize(
    "kw,metrics",
    [
        (dict(patience=2), [1.0, 0.9, 0.95, 0.95, 0.95, 0.8, 0.9, 0.9, 0.9, 0.9, 0.9]),
        (dict(mode="max", factor=0.5, patience=1, cooldown=2),
         [1, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3]),
        (dict(threshold=0.1, threshold_mode="abs", patience=0, min_lr=0.02),
         [1.0, 0.95, 0.85, 0.8, 0.79, 0.7, 0.69, 0.5, 0.5]),
        (dict(mode="max", threshold_mode="rel", threshold=0.05, patience=0, eps=0.05),
         [1.0, 1.02, 1.1, 1.12, 1.2, 1.21, 1.22]),
    ],
)
def test_reduce_on_plateau(compare, kw, metrics):
    def scenario(L):
        opt = make_opt(L, groups=2)
        sched = L.optim.lr_scheduler.ReduceLROnPlateau(opt, **kw)
        out = trace(opt, sched, len(metrics), metrics=metrics)
        return out, sched.state_dict()

    compare(scenario, **EXACT)


def test_reduce_on_plateau_errors(compare):
    def scenario(L):
        opt = make_opt(L, groups=2)
        R = L.optim.lr_scheduler.ReduceLROnPlateau
        return [
            raised(lambda: R(opt, factor=1.0)),
            raised(lambda: R(opt, mode="median")),
            raised(lambda: R(opt, threshold_mode="x")),
            raised(lambda: R(opt, min_lr=[0.1])),
            raised(lambda: R("opt")),
        ]

    compare(scenario)


def test_closed_form_with_epoch_argument_warns(compare):
    def scenario(L):
        out = []
        for name, kw in [("StepLR", dict(step_size=2)), ("CosineAnnealingLR", dict(T_max=5)),
                         ("ExponentialLR", dict(gamma=0.5)), ("MultiStepLR",
                                                              dict(milestones=[1, 3]))]:
            opt = make_opt(L)
            sched = getattr(L.optim.lr_scheduler, name)(opt, **kw)
            opt.step()
            sched.step(4)
            out.append(sched.get_last_lr())
        return out

    record = compare(scenario, **EXACT)
    assert len(record.warnings) == 4 and "epoch parameter" in record.warnings[0][1]


def test_state_dict_round_trip_continues_exactly(compare):
    def scenario(L):
        opt = make_opt(L)
        sched = L.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=9)
        trace(opt, sched, 4)
        sd = sched.state_dict()
        opt_sd = opt.state_dict()
        opt2 = make_opt(L)
        opt2.load_state_dict(opt_sd)
        sched2 = L.optim.lr_scheduler.CosineAnnealingLR(opt2, T_max=9, last_epoch=3)
        sched2.load_state_dict(sd)
        return trace(opt, sched, 6), trace(opt2, sched2, 6)

    compare(scenario, **EXACT)


def test_warnings(compare):
    def scenario(L):
        opt = make_opt(L)
        sched = L.optim.lr_scheduler.StepLR(opt, step_size=1)
        sched.step()  # before optimizer.step(): torch warns
        lr = sched.get_lr()  # outside step(): torch warns
        return lr

    record = compare(scenario)
    assert [w[0] for w in record.warnings] == ["UserWarning", "UserWarning"]


def test_resume_without_initial_lr_and_bad_optimizer(compare):
    def scenario(L):
        sch = L.optim.lr_scheduler
        opt = make_opt(L)
        return [
            raised(lambda: sch.StepLR(opt, step_size=2, last_epoch=3)),
            raised(lambda: sch.StepLR(object(), step_size=2)),
            raised(lambda: sch.LambdaLR(make_opt(L, groups=2), [lambda e: 1.0])),
            raised(lambda: sch.LinearLR(opt, start_factor=0)),
            raised(lambda: sch.ConstantLR(opt, factor=2)),
            raised(lambda: sch.OneCycleLR(opt, max_lr=1.0)),
            raised(lambda: sch.OneCycleLR(opt, max_lr=1.0, total_steps=10, pct_start=2)),
            raised(lambda: sch.OneCycleLR(opt, max_lr=1.0, total_steps=10,
                                          anneal_strategy="exp")),
            raised(lambda: sch.CosineAnnealingWarmRestarts(opt, T_0=0)),
            raised(lambda: sch.SequentialLR(opt, [sch.StepLR(opt, 2)], milestones=[1])),
        ]

    compare(scenario)


def test_initial_lr_is_recorded_and_cosine_floats_are_torch_floats(lib, oracle):
    """The recursive cosine formula, not the closed form: bit-equal to torch over 100 steps."""
    seqs = []
    for L in (lib, oracle):
        opt = make_opt(L)
        sched = L.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=13, eta_min=1e-4)
        assert opt.param_groups[0]["initial_lr"] == 0.1
        seq = []
        for _ in range(100):
            opt.step()
            sched.step()
            seq.append(opt.param_groups[0]["lr"])
        seqs.append(seq)
    assert seqs[0] == seqs[1]
    closed = [1e-4 + (0.1 - 1e-4) * (1 + math.cos(math.pi * (i + 1) / 13)) / 2
              for i in range(100)]
    assert seqs[1] != closed  # the check above is meaningful: recursion != closed form
