"""Interpolation of float16/bfloat16 tensors (ops/resampling.py through the low-precision path)
against real torch: the input's dtype out and back, values computed in float32 and rounded once."""

from __future__ import annotations

import numpy as np
import pytest


def _run(L, mode, low, align_corners):
    nd = {"linear": 1, "trilinear": 3}.get(mode, 2)
    x = (L.arange(2 * 3 * 4 ** nd, dtype=L.float32).reshape(2, 3, *([4] * nd)) / 10).to(
        getattr(L, low)).requires_grad_()
    y = L.nn.functional.interpolate(x, scale_factor=1.5, mode=mode, align_corners=align_corners)
    (y.float() * L.linspace(-1, 1, y.numel()).reshape(y.shape)).sum().backward()
    return ((y.dtype, x.grad.dtype), y.detach().float().numpy(), x.grad.float().numpy())


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("low", ["bfloat16", "float16"])
@pytest.mark.parametrize("mode", ["linear", "bilinear", "trilinear", "bicubic"])
def test_low_precision_interpolation(lib, oracle, mode, low, align_corners):
    got, want = _run(lib, mode, low, align_corners), _run(oracle, mode, low, align_corners)
    assert [str(d).split(".")[1] for d in got[0]] == [low, low]
    assert [str(d) for d in got[0]] == [str(d) for d in want[0]]
    # the output: within a unit in the last place of the low type at the output's scale (both
    # compute in float32 and round once; the weights are summed in another order)
    eps = 2.0 ** -7 if low == "bfloat16" else 2.0 ** -10
    scale = float(np.abs(want[1]).max())
    if mode != "bicubic":
        np.testing.assert_allclose(got[1], want[1], rtol=0, atol=eps * scale)


@pytest.mark.xfail(strict=True, reason="torch's low-precision bicubic kernel and the upsampling "
                   "backward kernels round in between (the input gradient is accumulated in "
                   "the low type); tapegrad computes in float32 and rounds once: several units "
                   "in the last place apart")
@pytest.mark.parametrize("part", ["bicubic output", "bilinear gradient"])
def test_low_precision_interpolation_rounding_steps(lib, oracle, part):
    mode, k = ("bicubic", 1) if part == "bicubic output" else ("bilinear", 2)
    got, want = _run(lib, mode, "bfloat16", False), _run(oracle, mode, "bfloat16", False)
    np.testing.assert_allclose(got[k], want[k], rtol=0,
                               atol=2.0 ** -7 * float(np.abs(want[k]).max()))
