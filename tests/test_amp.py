"""torch.amp / torch.autocast against torch 2.13 (a CPU-only build): CUDA
autocast and GradScaler warn and are disabled, and an AMP training loop runs unchanged; on the CPU,
GradScaler's scale sequence, skipped steps and state equal torch's. CPU autocast itself:
tests/test_autocast.py."""

from __future__ import annotations

import numpy as np
import pytest
from torchcompare import raised


def test_autocast_cuda_is_disabled_with_a_warning(compare):
    def scenario(L):
        out = []
        for make in (lambda: L.amp.autocast("cuda"), lambda: L.autocast("cuda"),
                     lambda: L.autocast(device_type="cuda", dtype=L.float16),
                     lambda: L.amp.autocast("cpu", enabled=False)):
            a = make()
            out.append((str(a.fast_dtype), a.device, a._enabled))
        with L.autocast("cuda"):
            out.append((L.ones(2, 2) @ L.ones(2, 2)).dtype)
        out.append(L.is_autocast_enabled())

        @L.autocast("cuda")
        def f(x):
            return x * 2

        out.append(f(L.ones(1)))
        out.append(raised(lambda: L.autocast("gpu")))
        return out

    compare(scenario)


def test_grad_scaler_cuda_training_loop(compare):
    def scenario(L):
        L.manual_seed(0)
        model = L.nn.Linear(3, 1)
        opt = L.optim.SGD(model.parameters(), lr=0.1)
        scaler = L.amp.GradScaler("cuda")
        x, y = L.randn(8, 3), L.randn(8, 1)
        losses = []
        for _ in range(3):
            opt.zero_grad()
            with L.autocast(device_type="cuda", dtype=L.float16):
                loss = L.nn.functional.mse_loss(model(x), y)
            scaler.scale(loss).backward()
            scaler.unscale_(opt)
            scaler.step(opt)
            scaler.update()
            losses.append(loss)
        return losses, model.weight, scaler.is_enabled(), scaler.get_scale(), scaler.state_dict()

    compare(scenario)


def _scaled_run(L, *, init_scale, growth_interval, steps, spike_at=(), spike=1e36,
                unscale=False):
    """A float32 regression trained with GradScaler("cpu"); the loss is multiplied by ``spike``
    at the steps in ``spike_at`` so that the scaled gradients overflow and the step is skipped."""
    # The overflow is the point here. NumPy reports it as RuntimeWarnings that torch does not
    # give (tapegrad does not yet silence them per op: np.errstate costs ~2 us an op), so the
    # NumPy side runs with them off; what is compared is every value and scale.
    with np.errstate(over="ignore", invalid="ignore"):
        return _scaled_loop(L, init_scale, growth_interval, steps, spike_at, spike, unscale)


def _scaled_loop(L, init_scale, growth_interval, steps, spike_at, spike, unscale):
    L.manual_seed(0)
    model = L.nn.Sequential(L.nn.Linear(4, 8), L.nn.Tanh(), L.nn.Linear(8, 1))
    opt = L.optim.Adam(model.parameters(), lr=1e-2)
    scaler = L.amp.GradScaler("cpu", init_scale=init_scale, growth_interval=growth_interval)
    x, y = L.randn(16, 4), L.randn(16, 1)
    record = []
    for step in range(steps):
        opt.zero_grad()
        loss = L.nn.functional.mse_loss(model(x), y)
        if step in spike_at:
            loss = loss * spike
        scaler.scale(loss).backward()
        if unscale:
            scaler.unscale_(opt)
            L.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        stepped = scaler.step(opt)
        scaler.update()
        record.append((scaler.get_scale(), scaler._get_growth_tracker(), stepped))
    return record, [p.detach().clone() for p in model.parameters()], scaler.state_dict()


@pytest.mark.parametrize("unscale", [False, True])
def test_grad_scaler_cpu_scale_sequence_equals_torch(compare, unscale):
    # growth every 3 good steps, backoff on the spikes (one of them right after a growth)
    compare(lambda L: _scaled_run(L, init_scale=2.0**10, growth_interval=3, steps=12,
                                  spike_at=(4, 6, 9), unscale=unscale))


def test_grad_scaler_cpu_overflowing_scale_backs_off_until_finite(compare):
    # a loss of about 1e4 scaled by 2**127 overflows float32: skip and halve until it is finite
    compare(lambda L: _scaled_run(L, init_scale=2.0**127, growth_interval=2000, steps=20,
                                  spike_at=range(20), spike=1e4))


def test_grad_scaler_cpu_scales_structures_and_state(compare):
    def scenario(L):
        scaler = L.amp.GradScaler("cpu", init_scale=8.0)
        a, b = L.ones(2), L.full((3,), 2.0)
        out = [scaler.scale(a), scaler.scale([a, (b, a)]), list(scaler.scale(iter([b])))]
        out.append(raised(lambda: scaler.scale(3.0)))
        out.append((scaler.get_scale(), scaler.state_dict(), scaler.is_enabled()))
        scaler.update(4.0)
        out.append(scaler.get_scale())
        scaler.update(L.tensor(2.0))
        out.append(scaler.get_scale())
        out.append(raised(lambda: scaler.update(L.tensor([1.0, 2.0]))))
        other = L.amp.GradScaler("cpu")
        other.load_state_dict({"scale": 32.0, "growth_factor": 3.0, "backoff_factor": 0.25,
                               "growth_interval": 7, "_growth_tracker": 5})
        out.append((other.get_scale(), other.get_growth_factor(), other.get_backoff_factor(),
                    other.get_growth_interval(), other._get_growth_tracker()))
        out.append(raised(lambda: other.load_state_dict({})))
        out.append(raised(lambda: L.amp.GradScaler("cpu", growth_factor=1.0)))
        out.append(raised(lambda: L.amp.GradScaler("cpu", backoff_factor=1.0)))
        off = L.amp.GradScaler("cpu", enabled=False)
        out.append((off.scale(a) is a, off.get_scale(), off.state_dict(), off.is_enabled()))
        return out

    compare(scenario)


def test_grad_scaler_cpu_misuse_errors(compare):
    def scenario(L):
        model = L.nn.Linear(2, 1)
        opt = L.optim.SGD(model.parameters(), lr=0.1)
        scaler = L.amp.GradScaler("cpu")
        out = [raised(lambda: scaler.unscale_(opt)), raised(lambda: scaler.step(opt)),
               raised(lambda: scaler.update())]
        scaler.scale(model(L.ones(1, 2)).sum()).backward()
        out.append(raised(lambda: scaler.step(opt, closure=lambda: None)))
        scaler.unscale_(opt)
        out.append(raised(lambda: scaler.unscale_(opt)))
        scaler.step(opt)
        out.append(raised(lambda: scaler.step(opt)))
        out.append(raised(lambda: scaler.unscale_(opt)))
        scaler.update()
        half = L.nn.Linear(2, 1).half()
        hopt = L.optim.SGD(half.parameters(), lr=0.1)
        for p in half.parameters():
            p.grad = L.ones_like(p)
        out.append(raised(lambda: scaler.unscale_(hopt)))
        return out

    compare(scenario)


def test_grad_scaler_cpu_pickles_between_iterations(lib):
    import pickle

    scaler = lib.amp.GradScaler("cpu", init_scale=16.0, growth_interval=5)
    model = lib.nn.Linear(2, 1)
    opt = lib.optim.SGD(model.parameters(), lr=0.1)
    scaler.scale(model(lib.ones(1, 2)).sum()).backward()
    scaler.step(opt)
    with pytest.raises(AssertionError, match="may only be pickled"):
        pickle.dumps(scaler)
    scaler.update()
    copy = pickle.loads(pickle.dumps(scaler))
    assert copy.state_dict() == scaler.state_dict() == {
        "scale": 16.0, "growth_factor": 2.0, "backoff_factor": 0.5, "growth_interval": 5,
        "_growth_tracker": 1}
