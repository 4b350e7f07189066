"""torch.amp / torch.autocast without CUDA, against torch 2.13 (a CPU-only build): CUDA
autocast and GradScaler warn and are disabled, and an AMP training loop runs unchanged."""

from __future__ import annotations

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


def test_cpu_autocast_is_not_silently_ignored(lib):
    if lib.__name__ == "torch":
        pytest.skip("torch runs CPU autocast in bfloat16; tapegrad refuses it (not implemented)")
    with pytest.raises(NotImplementedError, match="autocast"):
        lib.autocast("cpu")
    with pytest.raises(NotImplementedError, match="GradScaler"):
        lib.amp.GradScaler("cpu")
