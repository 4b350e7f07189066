"""grid_sample, affine_grid, channel_shuffle, fractional max pooling, Fold/Unfold and
AdaptiveLogSoftmaxWithLoss against torch: values, first and second derivatives, node names,
seeded random windows, and the errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from cpu_kernels import assert_kernel_bits

import tapegrad as tg

GRID_CASES = [(d, mode, pad, ac) for d in (2, 3) for mode in ("bilinear", "nearest", "bicubic")
              for pad in ("zeros", "border", "reflection") for ac in (False, True)
              if not (mode == "bicubic" and d == 3)]


@pytest.mark.parametrize("d,mode,pad,ac", GRID_CASES)
def test_grid_sample_values_and_two_derivatives(d, mode, pad, ac):
    rng = np.random.default_rng(d * 100 + len(mode) + len(pad) + ac)
    x_np = rng.standard_normal((2, 3) + (4, 5, 6)[:d][::-1])
    g_np = rng.uniform(-1.3, 1.3, (2,) + (3, 2, 4)[:d] + (d,))  # some points outside
    res = []
    for L in (torch, tg):
        x = L.tensor(x_np, requires_grad=True)
        g = L.tensor(g_np, requires_grad=True)
        y = L.nn.functional.grid_sample(x, g, mode=mode, padding_mode=pad, align_corners=ac)
        w = L.tensor(np.linspace(-1, 1, y.numel()).reshape(tuple(y.shape)))
        gx, gg = L.autograd.grad((y * w).sum(), [x, g], create_graph=True)
        vals = [y.detach().numpy(), gx.detach().numpy(), gg.detach().numpy(),
                type(y.grad_fn).__name__]
        if mode != "nearest":
            hx, hg = L.autograd.grad(gx.pow(2).sum() + gg.pow(2).sum(), [x, g])
            vals += [hx.numpy(), hg.numpy()]
        res.append(vals)
    assert res[1][3] == res[0][3]
    for a, b in zip(res[1][:3] + res[1][4:], res[0][:3] + res[0][4:], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-11, atol=1e-11)



F32_CASES = [(d, mode, pad, ac) for d, mode in ((2, "bicubic"), (3, "bilinear"))
             for pad in ("zeros", "border", "reflection") for ac in (False, True)]


@pytest.mark.parametrize("d,mode,pad,ac", F32_CASES)
def test_grid_sample_float32_gradients_are_torchs(d, mode, pad, ac):
    """float32 first derivatives where the order of torch's kernel's sums decides the rounding:
    the grid's gradient of bicubic sampling (torch's x86-64 build, fused multiply-adds
    included) and both gradients of trilinear sampling (border and reflection clamp many
    positions onto one voxel): tapegrad follows the kernels, so the numbers are torch's, bit
    for bit."""
    rng = np.random.default_rng(len(pad) + 10 * ac + d)
    x_np = rng.uniform(-9, 9, (2, 3) + (5, 6, 7)[:d][::-1]).astype(np.float32)
    g_np = rng.uniform(-1.4, 1.4, (2,) + (4, 3, 5)[:d] + (d,)).astype(np.float32)
    w_np = rng.uniform(-9, 9, (2, 3) + (4, 3, 5)[:d]).astype(np.float32)
    res = []
    for L in (torch, tg):
        x = L.tensor(x_np, requires_grad=True)
        g = L.tensor(g_np, requires_grad=True)
        y = L.nn.functional.grid_sample(x, g, mode=mode, padding_mode=pad, align_corners=ac)
        res.append([t.numpy() for t in L.autograd.grad(y, [x, g], L.tensor(w_np))])
    (tx, tg_), (ax, ag) = res
    assert_kernel_bits(ag, tg_)  # (torch's scalar kernels: no fused multiply-adds)
    if mode == "bilinear":
        assert_kernel_bits(ax, tx)
    else:
        np.testing.assert_allclose(ax, tx, rtol=1.3e-6, atol=1e-5)
@pytest.mark.parametrize("size", [(2, 3, 4, 5), (2, 3, 3, 4, 5)])
@pytest.mark.parametrize("ac", [False, True])
def test_affine_grid(size, ac):
    d = len(size) - 2
    theta_np = np.arange(2 * d * (d + 1)).reshape(2, d, d + 1) * 0.1 - 0.3
    res = []
    for L in (torch, tg):
        th = L.tensor(theta_np, requires_grad=True)
        grid = L.nn.functional.affine_grid(th, size, align_corners=ac)
        grid.pow(2).sum().backward()
        res.append([grid.detach().numpy(), th.grad.numpy(), type(grid.grad_fn).__name__])
    assert res[1][2] == res[0][2]
    for a, b in zip(res[1][:2], res[0][:2], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("call", [
    lambda L: L.nn.functional.grid_sample(L.randn(1, 1, 3, 3, 3), L.randn(1, 2, 2, 2, 3),
                                          mode="bicubic", align_corners=False),
    lambda L: L.nn.functional.grid_sample(L.randn(1, 1, 3, 3), L.randn(1, 2, 2, 2),
                                          mode="foo", align_corners=False),
    lambda L: L.nn.functional.grid_sample(L.randn(1, 1, 3, 3), L.randn(1, 2, 2, 2),
                                          padding_mode="foo", align_corners=False),
    lambda L: L.nn.functional.grid_sample(L.randn(1, 1, 3, 3), L.randn(1, 2, 2, 3),
                                          align_corners=False),
    lambda L: L.nn.functional.grid_sample(L.randn(2, 1, 3, 3), L.randn(1, 2, 2, 2),
                                          align_corners=False),
    # torch checks the batch and the grid's last size before the number of dimensions
    lambda L: L.nn.functional.grid_sample(L.randn(1, 2, 8), L.randn(1, 8, 8, 2),
                                          align_corners=False),
    lambda L: L.nn.functional.grid_sample(L.randn(1, 2, 8), L.randn(1, 8, 1),
                                          align_corners=False),
    lambda L: L.nn.functional.grid_sample(L.randn(1, 2, 4, 4), L.randn(1, 4, 4, 4, 2),
                                          align_corners=False),
    lambda L: L.nn.functional.grid_sample(L.randn(1, 2, 4, 4, 4), L.randn(1, 4, 4, 2),
                                          align_corners=False),
    lambda L: L.nn.functional.grid_sample(L.randn(1, 2, 0, 4), L.randn(1, 4, 4, 2),
                                          align_corners=False),
    lambda L: L.nn.functional.channel_shuffle(L.randn(2, 5, 3), 2),
    lambda L: L.nn.functional.channel_shuffle(L.randn(2, 4, 3), 0),
    lambda L: L.nn.functional.channel_shuffle(L.randn(4, 3), 2),
    lambda L: L.nn.functional.fractional_max_pool2d(L.randn(1, 2, 5, 5), 2),
    lambda L: L.nn.FractionalMaxPool2d(2, output_ratio=1.5),
    lambda L: L.nn.FractionalMaxPool2d(2, output_size=2, output_ratio=0.5),
    lambda L: L.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [6, 3]),
    lambda L: L.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3])(L.randn(2, 8), L.tensor([1, 12])),
])
def test_errors_match_torch(call):
    seen = []
    for L in (torch, tg):
        with pytest.raises(Exception) as info, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            call(L)
        seen.append((type(info.value).__name__, str(info.value)))
    assert seen[1] == seen[0]


def test_default_align_corners_warns_like_torch():
    for L in (torch, tg):
        with pytest.warns(UserWarning, match="Default grid_sample and affine_grid behavior"):
            L.nn.functional.grid_sample(L.randn(1, 1, 3, 3), L.zeros(1, 2, 2, 2))
        with pytest.warns(UserWarning, match="Default grid_sample and affine_grid behavior"):
            L.nn.functional.affine_grid(L.randn(1, 2, 3), (1, 1, 2, 2))


def test_channel_shuffle():
    res = []
    for L in (torch, tg):
        x = L.arange(48.0).reshape(2, 6, 4).requires_grad_()
        y = L.nn.ChannelShuffle(3)(x)
        (y * L.arange(48.0).reshape(2, 6, 4)).sum().backward()
        res.append([y.detach().numpy(), x.grad.numpy(), type(y.grad_fn).__name__,
                    repr(L.nn.ChannelShuffle(3))])
    assert res[1][2:] == res[0][2:]
    np.testing.assert_array_equal(res[1][0], res[0][0])
    np.testing.assert_array_equal(res[1][1], res[0][1])


@pytest.mark.parametrize("d", [2, 3])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fractional_max_pool_after_the_same_seed(d, dtype):
    rng = np.random.default_rng(d)
    x_np = rng.standard_normal((2, 3) + (9,) * d).astype(dtype)
    res = []
    for L in (torch, tg):
        L.manual_seed(0)
        x = L.tensor(x_np, requires_grad=True)
        f = getattr(L.nn.functional, f"fractional_max_pool{d}d")
        y, idx = f(x, 2, output_size=4, return_indices=True)
        (y * y).sum().backward()
        mod = getattr(L.nn, f"FractionalMaxPool{d}d")(3, output_ratio=(0.5,) * d)
        y2 = mod(x[0])  # unbatched, drawing again
        res.append([y.detach().numpy(), idx.numpy(), x.grad.numpy(), y2.detach().numpy(),
                    type(y.grad_fn).__name__, L.get_rng_state().numpy()])
    assert res[1][4] == res[0][4]
    for k in (0, 1, 2, 3, 5):
        np.testing.assert_array_equal(res[1][k], res[0][k])


def test_fold_unfold_modules():
    res = []
    for L in (torch, tg):
        x = L.arange(2 * 3 * 5 * 6, dtype=L.float64).reshape(2, 3, 5, 6).requires_grad_()
        unf = L.nn.Unfold(kernel_size=(2, 3), dilation=1, padding=1, stride=2)
        cols = unf(x)
        fold = L.nn.Fold(output_size=(5, 6), kernel_size=(2, 3), padding=1, stride=2)
        back = fold(cols)
        back.pow(2).sum().backward()
        res.append([cols.detach().numpy(), back.detach().numpy(), x.grad.numpy(), repr(unf),
                    repr(fold)])
    assert res[1][3:] == res[0][3:]
    for a, b in zip(res[1][:3], res[0][:3], strict=True):
        np.testing.assert_array_equal(a, b)


def test_adaptive_log_softmax_with_loss():
    res = []
    for L in (torch, tg):
        L.manual_seed(0)
        m = L.nn.AdaptiveLogSoftmaxWithLoss(16, 20, cutoffs=[4, 10], div_value=2.0,
                                            head_bias=True).double()
        x = L.randn(7, 16, dtype=L.float64)
        rng = np.random.default_rng(0)
        with L.no_grad():  # fixed weights: the float32 draws' last bits depend on torch's
            for p in m.parameters():  # kernels (tests/cpu_kernels.py)
                p.copy_(L.tensor(rng.uniform(-0.3, 0.3, tuple(p.shape))))
        t = L.tensor([0, 3, 5, 9, 12, 19, 4])
        out, loss = m(x, t)
        loss.backward()
        o1, l1 = m(x[0], t[0])  # unbatched
        lp = m.log_prob(x)
        res.append([out.detach().numpy(), loss.detach().numpy(), o1.detach().numpy(),
                    lp.detach().numpy(), m.predict(x).numpy()]
                   + [p.grad.numpy() for p in m.parameters()]
                   + [p.detach().numpy() for p in m.parameters()])
        assert [n for n, _ in m.named_parameters()] == (
            ["head.weight", "head.bias", "tail.0.0.weight", "tail.0.1.weight",
             "tail.1.0.weight", "tail.1.1.weight"])
    for a, b in zip(res[1], res[0], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_every_spatial_entry_is_exercised():
    """Each registry entry of ops/spatial.py records its node in the tests above."""
    from tapegrad.ops import spatial
    from tapegrad.ops._registry import REGISTRY

    nodes = {REGISTRY[n].node for n in spatial.NAMES}
    seen = set()
    x2, x3 = tg.randn(1, 2, 5, 5, requires_grad=True), tg.randn(1, 2, 5, 5, 5,
                                                                   requires_grad=True)
    theta2 = tg.randn(1, 2, 3, requires_grad=True)
    theta3 = tg.randn(1, 3, 4, requires_grad=True)
    outs = [tg.nn.functional.channel_shuffle(x2, 2),
            tg.nn.functional.affine_grid(theta2, (1, 2, 3, 3), align_corners=False),
            tg.nn.functional.affine_grid(theta3, (1, 2, 2, 3, 3), align_corners=False),
            tg.nn.functional.grid_sample(x2, tg.zeros(1, 2, 2, 2), align_corners=False),
            tg.nn.functional.grid_sample(x3, tg.zeros(1, 2, 2, 2, 3), align_corners=False),
            tg.nn.functional.fractional_max_pool2d(x2, 2, output_size=3),
            tg.nn.functional.fractional_max_pool3d(x3, 2, output_size=3)]
    for out in outs:
        seen.add(type(out.grad_fn).__name__)
    assert nodes <= seen, nodes - seen
