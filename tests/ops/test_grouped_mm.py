"""nn.functional.grouped_mm (ops/grouped_mm.py) against torch: the four operand layouts, their
first and second derivatives (GroupedMmBackward0 all the way down), and torch's checks."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import tapegrad

RNG = np.random.default_rng(0)
I32 = np.int32


def _pair(a: np.ndarray, requires_grad: bool = False, dtype: str = "float32"):
    t = torch.tensor(a, dtype=getattr(torch, dtype), requires_grad=requires_grad)
    g = tapegrad.tensor(a, dtype=getattr(tapegrad, dtype), requires_grad=requires_grad)
    return t, g


def _offs(*ends: int):
    return torch.tensor(ends, dtype=torch.int32), tapegrad.tensor(ends, dtype=tapegrad.int32)


# (shape of a, shape of b, offs): rows, columns, inner dim, batch; the last group may stop early
CASES = {
    "2d3d": ((8, 8), (2, 8, 4), (2, 6)),
    "3d2d": ((2, 4, 8), (8, 16), (8, 12)),
    "2d2d": ((4, 8), (8, 4), (4, 6)),
    "3d3d": ((2, 4, 8), (2, 8, 4), None),
    "2d3d empty group": ((8, 4), (3, 4, 4), (2, 2, 8)),
}


@pytest.mark.parametrize("case", list(CASES))
def test_values_and_derivatives(case):
    sa, sb, ends = CASES[case]
    a_t, a_g = _pair(RNG.standard_normal(sa), requires_grad=True)
    b_t, b_g = _pair(RNG.standard_normal(sb), requires_grad=True)
    offs_t, offs_g = _offs(*ends) if ends else (None, None)
    out_t = torch.nn.functional.grouped_mm(a_t, b_t, offs=offs_t)
    out_g = tapegrad.nn.functional.grouped_mm(a_g, b_g, offs=offs_g)
    assert out_g.dtype == tapegrad.float32 and tuple(out_g.shape) == tuple(out_t.shape)
    assert type(out_g.grad_fn).__name__ == "GroupedMmBackward0"
    # torch leaves rows/columns past offs[-1] uninitialised; tapegrad writes zeros there
    covered = np.ones(out_t.shape, dtype=bool)
    if case == "2d3d":
        covered[ends[-1]:] = False
    if case == "3d2d":
        covered[:, ends[-1]:] = False
    np.testing.assert_allclose(out_g.detach().numpy()[covered], out_t.detach().numpy()[covered],
                               rtol=1.3e-6, atol=1e-5)
    assert not out_g.detach().numpy()[~covered].any()
    cot = RNG.standard_normal(out_t.shape)
    g_t = torch.autograd.grad(out_t, (a_t, b_t), torch.tensor(cot, dtype=torch.float32),
                              create_graph=True)
    g_g = tapegrad.autograd.grad(out_g, (a_g, b_g), tapegrad.tensor(cot, dtype=tapegrad.float32),
                                 create_graph=True)
    used_a = np.ones(sa, dtype=bool)  # the part of a that some group reads
    if case in ("2d3d", "2d3d empty group"):
        used_a[ends[-1]:] = False
    if case == "2d2d":
        used_a[:, ends[-1]:] = False
    used_b = np.ones(sb, dtype=bool)
    if case == "3d2d":
        used_b[:, ends[-1]:] = False
    if case == "2d2d":
        used_b[ends[-1]:] = False
    for x_g, x_t, used in zip(g_g, g_t, (used_a, used_b), strict=True):
        assert type(x_g.grad_fn).__name__ == "GroupedMmBackward0"
        np.testing.assert_allclose(x_g.detach().numpy()[used], x_t.detach().numpy()[used],
                                   rtol=1.3e-6, atol=1e-5)
        assert not x_g.detach().numpy()[~used].any()
    # second order: d/da, d/db of <ga, u> + <gb, w>
    u, w = RNG.standard_normal(sa), RNG.standard_normal(sb)
    tot_t = (g_t[0] * torch.tensor(u, dtype=torch.float32) * torch.tensor(used_a)).sum() + (
        g_t[1] * torch.tensor(w, dtype=torch.float32) * torch.tensor(used_b)).sum()
    tot_g = (g_g[0] * tapegrad.tensor(u, dtype=tapegrad.float32)
             * tapegrad.tensor(used_a)).sum() + (
        g_g[1] * tapegrad.tensor(w, dtype=tapegrad.float32) * tapegrad.tensor(used_b)).sum()
    gg_t = torch.autograd.grad(tot_t, (a_t, b_t))
    gg_g = tapegrad.autograd.grad(tot_g, (a_g, b_g))
    for x_g, x_t, used in zip(gg_g, gg_t, (used_a, used_b), strict=True):
        np.testing.assert_allclose(x_g.numpy()[used], x_t.numpy()[used], rtol=1e-5, atol=1e-4)


def test_low_precision_dtypes():
    a, b = RNG.standard_normal((6, 8)), RNG.standard_normal((2, 8, 8))
    for dtype in ("float16", "bfloat16"):
        if not hasattr(tapegrad, dtype):
            continue
        a_t, a_g = _pair(a, dtype=dtype)
        b_t, b_g = _pair(b, dtype=dtype)
        offs_t, offs_g = _offs(2, 6)
        out_t = torch.nn.functional.grouped_mm(a_t, b_t, offs=offs_t)
        out_g = tapegrad.nn.functional.grouped_mm(a_g, b_g, offs=offs_g)
        assert out_g.dtype == getattr(tapegrad, dtype)
        # torch's default closeness for the dtype (the products are summed in float32 here)
        torch.testing.assert_close(torch.tensor(out_g.float().numpy()).to(out_t.dtype), out_t)


def _err(lib, a, b, **kw):
    with pytest.raises(Exception) as info:
        lib.nn.functional.grouped_mm(a, b, **kw)
    return type(info.value), str(info.value)


@pytest.mark.parametrize("bad", [
    "float64", "int64", "b float64", "1d", "4d", "contraction", "batch", "stride",
    "column-major stride", "no offs", "offs with 3d", "offs 2d", "offs int64", "bias",
    "out_dtype", "groups", "mixed dtypes", "invalid strides",
])
def test_errors_match_torch(bad):
    def build(lib):
        def t(*shape, dtype="float32"):
            return lib.zeros(*shape, dtype=getattr(lib, dtype))

        def offs(*v, dtype="int32"):
            return lib.tensor(v, dtype=getattr(lib, dtype))

        return {
            "float64": (t(6, 8, dtype="float64"), t(2, 8, 8, dtype="float64"),
                        {"offs": offs(2, 6)}),
            "int64": (t(6, 8, dtype="int64"), t(2, 8, 8, dtype="int64"), {"offs": offs(2, 6)}),
            "b float64": (t(6, 8), t(2, 8, 8, dtype="float64"), {"offs": offs(2, 6)}),
            "1d": (t(8), t(2, 8, 8), {"offs": offs(2, 6)}),
            "4d": (t(1, 2, 4, 8), t(2, 8, 8), {}),
            "contraction": (t(6, 8), t(2, 4, 8), {"offs": offs(2, 6)}),
            "batch": (t(3, 4, 8), t(2, 8, 8), {}),
            "stride": (t(6, 6), t(2, 6, 8), {"offs": offs(2, 6)}),
            "column-major stride": (t(6, 8), t(2, 8, 6).transpose(1, 2).transpose(1, 2),
                                    {"offs": offs(2, 6)}),
            "no offs": (t(6, 8), t(2, 8, 8), {}),
            "offs with 3d": (t(2, 4, 8), t(2, 8, 8), {"offs": offs(2, 4)}),
            "offs 2d": (t(6, 8), t(2, 8, 8), {"offs": offs(2, 6).reshape(1, 2)}),
            "offs int64": (t(6, 8), t(2, 8, 8), {"offs": offs(2, 6, dtype="int64")}),
            "bias": (t(6, 8), t(2, 8, 8), {"offs": offs(2, 6), "bias": t(8)}),
            "out_dtype": (t(6, 8), t(2, 8, 8), {"offs": offs(2, 6),
                                                "out_dtype": lib.float16}),
            "groups": (t(6, 8), t(2, 8, 8), {"offs": offs(2, 4, 6)}),
            "mixed dtypes": (t(6, 8, dtype="float16"), t(2, 8, 8), {"offs": offs(2, 6)}),
            "invalid strides": (t(6, 8), t(2, 8, 8)[:, ::2, ::2], {"offs": offs(2, 6)}),
        }[bad]

    a, b, kw = build(torch)
    expected = _err(torch, a, b, **kw)
    a, b, kw = build(tapegrad)
    assert _err(tapegrad, a, b, **kw) == expected
