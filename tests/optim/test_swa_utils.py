"""swa_utils compared with torch: AveragedModel with every kind of averaging function (default,
``avg_fn``, ``multi_avg_fn``; SWA and EMA; with and without ``use_buffers``) while a model
trains under SWALR, then ``update_bn``; SWALR's schedules, state_dict and errors."""

from __future__ import annotations

import numpy as np
import pytest
from cpu_kernels import VECTORIZED, assert_kernel_bits
from torchcompare import raised

RNG = np.random.default_rng(5)
X0 = RNG.standard_normal((16, 3))


def make_model(L, dtype):
    """The model, its parameters from NumPy (the same values for both libraries, whatever
    random kernels torch runs: tests/cpu_kernels.py)."""
    model = L.nn.Sequential(
        L.nn.Linear(3, 4), L.nn.BatchNorm1d(4), L.nn.ReLU(), L.nn.Linear(4, 2)
    ).to(getattr(L, dtype))
    rng = np.random.default_rng(0)
    with L.no_grad():
        for p in model.parameters():
            p.copy_(L.tensor(rng.uniform(-0.5, 0.5, tuple(p.shape))))
    return model


def averaging_kw(L, kind):
    su = L.optim.swa_utils
    return {
        "default": {},
        "swa_avg_fn": {"avg_fn": su.get_swa_avg_fn()},
        "ema_avg_fn": {"avg_fn": su.get_ema_avg_fn(0.8)},
        "swa_multi_avg_fn": {"multi_avg_fn": su.get_swa_multi_avg_fn()},
        "ema_multi_avg_fn": {"multi_avg_fn": su.get_ema_multi_avg_fn(0.9)},
    }[kind]


def swa_training(L, kind, use_buffers, dtype, strategy="cos"):
    """Train with SGD under SWALR; fold the model into the average after every step; then
    update_bn. Returns everything the average holds after each update, and the outputs."""
    model = make_model(L, dtype)
    su = L.optim.swa_utils
    avg = su.AveragedModel(model, use_buffers=use_buffers, **averaging_kw(L, kind))
    opt = L.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    sched = su.SWALR(opt, swa_lr=0.05, anneal_epochs=3, anneal_strategy=strategy)
    X = L.tensor(X0, dtype=getattr(L, dtype))
    history = []
    for _ in range(4):
        opt.zero_grad()
        model(X).pow(2).sum().backward()
        opt.step()
        sched.step()
        avg.update_parameters(model)
        history.append(
            (
                sched.get_last_lr(),
                [t.detach().clone() for t in avg.parameters()],
                [t.detach().clone() for t in avg.buffers()],
            )
        )
    su.update_bn([(X[:8], 0), (X[8:], 1)], avg)
    avg.eval()
    return history, list(avg.buffers()), avg(X)


@pytest.mark.parametrize(
    "kind,use_buffers",
    [
        ("default", False),
        ("default", True),
        ("swa_avg_fn", False),
        ("ema_avg_fn", True),
        ("swa_multi_avg_fn", False),
        ("ema_multi_avg_fn", False),
        ("ema_multi_avg_fn", True),
    ],
)
def test_averaged_model_matches_torch_float64(compare, kind, use_buffers):
    """(swa_multi_avg_fn with use_buffers: test_swa_multi_avg_fn_on_integer_buffers_raises)"""
    compare(lambda L: swa_training(L, kind, use_buffers, "float64"), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("kind", ["default", "swa_multi_avg_fn"])
def test_averaged_model_matches_torch_float32(compare, kind):
    compare(
        lambda L: swa_training(L, kind, False, "float32", strategy="linear"), rtol=1e-5, atol=1e-6
    )


def test_averaging_arithmetic_bit_for_bit(lib, oracle):
    """From identical tensors the float32 averages are torch's bit for bit (the SWA lerp weight
    is 1/(n+1) rounded to the default dtype when the count is a tensor; the lerp rounds once),
    float64 ones to the last bit."""

    def run(L, dtype):
        su = L.optim.swa_utils
        rng = np.random.default_rng(3)
        out = []
        for fn in (su.get_swa_multi_avg_fn(), su.get_ema_multi_avg_fn(0.7)):
            avg = [L.tensor(rng.standard_normal(7), dtype=dtype)]
            for n in range(1, 6):
                fn(avg, [L.tensor(rng.standard_normal(7), dtype=dtype)], L.tensor(n))
                fn(avg, [L.tensor(rng.standard_normal(7), dtype=dtype)], n)
            out.append(avg[0].numpy().copy())
        for fn in (su.get_swa_avg_fn(), su.get_ema_avg_fn(0.7)):
            a = L.tensor(rng.standard_normal(7), dtype=dtype)
            for n in range(1, 6):
                a = fn(a, L.tensor(rng.standard_normal(7), dtype=dtype), L.tensor(n))
            out.append(a.numpy().copy())
        return out

    for dtype in ("float32", "float64"):
        for g, w in zip(
            run(lib, getattr(lib, dtype)), run(oracle, getattr(oracle, dtype)), strict=True
        ):
            if not VECTORIZED:  # torch's scalar kernels: tests/cpu_kernels.py
                assert_kernel_bits(g, w)
            elif dtype == "float32":
                np.testing.assert_array_equal(g, w)
            else:  # torch's float64 lerp rounds a fused multiply-add once, tapegrad twice
                np.testing.assert_allclose(g, w, rtol=1e-15, atol=1e-17)


def test_swa_multi_avg_fn_on_integer_buffers_raises(compare):
    """BatchNorm's num_batches_tracked is an integer buffer: torch's SWA multi-tensor average
    divides it with addcdiv, which integer tensors refuse."""

    def scenario(L):
        model = make_model(L, "float32")
        su = L.optim.swa_utils
        avg = su.AveragedModel(model, use_buffers=True, multi_avg_fn=su.get_swa_multi_avg_fn())
        avg.update_parameters(model)
        return raised(lambda: avg.update_parameters(model)), avg.n_averaged

    compare(scenario)


def test_averaged_model_basics(compare):
    def scenario(L):
        su = L.optim.swa_utils
        model = L.nn.Linear(2, 1)
        avg = su.AveragedModel(model)
        state = avg.state_dict()
        return (
            repr(avg),
            list(state),
            avg.n_averaged,
            avg.module is not model,
            avg(L.ones(1, 2)).shape,
            raised(
                lambda: su.AveragedModel(
                    model, avg_fn=su.get_swa_avg_fn(), multi_avg_fn=su.get_swa_multi_avg_fn()
                )
            ),
            raised(lambda: su.get_ema_avg_fn(1.5)),
            raised(lambda: su.get_ema_multi_avg_fn(-0.1)),
        )

    compare(scenario)


def test_buffers_are_copied_without_use_buffers(compare):
    def scenario(L):
        model = L.nn.BatchNorm1d(2)
        avg = L.optim.swa_utils.AveragedModel(model)
        for k in range(3):
            model(L.tensor([[1.0 + k, 2.0], [3.0, 5.0 * k]]))
            avg.update_parameters(model)
        return list(avg.buffers()), list(avg.parameters())

    compare(scenario)


def test_update_bn(compare):
    def scenario(L):
        L.manual_seed(1)
        model = L.nn.Sequential(L.nn.Linear(3, 3), L.nn.BatchNorm1d(3, momentum=0.3))
        model.eval()
        X = L.tensor(X0)
        loader = [X[:5].float(), (X[5:9].float(), "label"), [X[9:].float()]]
        L.optim.swa_utils.update_bn(loader, model)
        bn = model[1]
        no_bn = L.nn.Linear(2, 2)
        L.optim.swa_utils.update_bn([L.ones(1, 2)], no_bn)
        return (
            bn.running_mean,
            bn.running_var,
            bn.num_batches_tracked,
            bn.momentum,
            model.training,
            no_bn.training,
        )

    compare(scenario, rtol=1e-6)


@pytest.mark.parametrize("strategy", ["cos", "linear"])
@pytest.mark.parametrize("anneal_epochs", [0, 1, 4])
def test_swalr_schedule(compare, strategy, anneal_epochs):
    def scenario(L):
        p = L.zeros(1, requires_grad=True)
        q = L.zeros(1, requires_grad=True)
        opt = L.optim.SGD([{"params": [p]}, {"params": [q], "lr": 0.5}], lr=1.0)
        sched = L.optim.swa_utils.SWALR(
            opt, swa_lr=[0.1, 0.2], anneal_epochs=anneal_epochs, anneal_strategy=strategy
        )
        lrs = [sched.get_last_lr()]
        for _ in range(7):
            opt.step()
            sched.step()
            lrs.append(sched.get_last_lr())
        return lrs, [g["swa_lr"] for g in opt.param_groups], sched.get_lr()

    compare(scenario, rtol=1e-14)


def test_swalr_after_another_scheduler(compare):
    """SWALR reads the current lr, so it takes over from a schedule that ran before it."""

    def scenario(L):
        opt = L.optim.SGD([L.zeros(1, requires_grad=True)], lr=1.0)
        first = L.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
        lrs = []
        for _ in range(3):
            opt.step()
            first.step()
            lrs.append(first.get_last_lr())
        swa = L.optim.swa_utils.SWALR(opt, swa_lr=0.05, anneal_epochs=3)
        for _ in range(5):
            opt.step()
            swa.step()
            lrs.append(swa.get_last_lr())
        return lrs

    compare(scenario, rtol=1e-14)


def test_swalr_state_dict_and_errors(compare):
    def scenario(L):
        p = L.zeros(1, requires_grad=True)
        opt = L.optim.SGD([p], lr=1.0)
        sched = L.optim.swa_utils.SWALR(opt, swa_lr=0.1, anneal_epochs=5, anneal_strategy="linear")
        opt.step()
        sched.step()
        sd = sched.state_dict()
        opt2 = L.optim.SGD([L.zeros(1, requires_grad=True)], lr=1.0)
        sched2 = L.optim.swa_utils.SWALR(opt2, swa_lr=0.3)
        sched2.load_state_dict(sd)
        opt2.step()
        sched2.step()
        return (
            sorted(sd),
            {k: v for k, v in sd.items() if k != "_last_lr"},
            sched2.get_last_lr(),
            sched2.anneal_func(0.25),
            raised(lambda: L.optim.swa_utils.SWALR(opt, 0.1, anneal_strategy="exp")),
            raised(lambda: L.optim.swa_utils.SWALR(opt, 0.1, anneal_epochs=-1)),
            raised(lambda: L.optim.swa_utils.SWALR(opt, 0.1, anneal_epochs=2.0)),
            raised(lambda: L.optim.swa_utils.SWALR(opt, [0.1, 0.2])),
        )

    compare(scenario)
