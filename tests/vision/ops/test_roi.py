"""RoI Align, RoI Pool and their position-sensitive forms against torchvision: outputs and
gradients bit for bit in float32 and float64 (adaptive and fixed sampling, aligned or not,
boxes partly or wholly outside the map, degenerate boxes, boxes as a list per image), the
modules and their reprs, MultiScaleRoIAlign, and the errors of bad inputs."""

from __future__ import annotations

import numpy as np
import pytest


def _rois(n: int, seed: int, batch: int, dtype, extent: float = 12.0) -> np.ndarray:
    rng = np.random.RandomState(seed)
    corners = rng.uniform(-2, extent + 2, (n, 4))
    corners[:, 2:] = np.maximum(corners[:, 2:], corners[:, :2])
    rois = np.concatenate([rng.randint(0, batch, (n, 1)), corners], 1)
    rois[0, 1:] = [1.5, 1.5, 1.5, 1.5]  # a point
    rois[1, 1:] = [0, 0, extent - 1, extent - 3]  # the whole map
    rois[2, 1:] = [-30, -30, -20, -20]  # outside
    return rois.astype(dtype)


def _run(L, f, channels: int, dtype, *args, **kwargs):
    x = L.tensor(np.random.RandomState(0).standard_normal((2, channels, 9, 11)).astype(dtype),
                 requires_grad=True)
    rois = L.tensor(_rois(10, 1, 2, dtype))
    y = f(x, rois, *args, **kwargs)
    g = L.tensor(np.random.RandomState(2).standard_normal(tuple(y.shape)).astype(dtype))
    (gx,) = L.autograd.grad(y, x, g)
    return y, gx


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("aligned", [False, True])
@pytest.mark.parametrize("sampling_ratio", [-1, 0, 2])
def test_roi_align(vcompare, dtype, aligned, sampling_ratio):
    def scenario(L, V):
        return [_run(L, V.ops.roi_align, 3, dtype, (3, 4), 0.7, sampling_ratio, aligned),
                _run(L, V.ops.roi_align, 3, dtype, 2, 1.0, sampling_ratio, aligned)]

    vcompare(scenario, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("scale", [1.0, 0.6])
def test_roi_pool(vcompare, dtype, scale):
    vcompare(lambda L, V: _run(L, V.ops.roi_pool, 3, dtype, (3, 4), scale), rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("sampling_ratio", [-1, 2])
def test_ps_roi_align(vcompare, dtype, sampling_ratio):
    vcompare(lambda L, V: _run(L, V.ops.ps_roi_align, 24, dtype, (3, 4), 0.7, sampling_ratio),
             rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("scale", [1.0, 0.6])
def test_ps_roi_pool(vcompare, dtype, scale):
    # (the boxes reaching the map's last row and column hit torchvision's backward quirk)
    vcompare(lambda L, V: _run(L, V.ops.ps_roi_pool, 24, dtype, (3, 4), scale),
             rtol=0, atol=0)


def test_boxes_as_a_list_and_modules(vcompare):
    def scenario(L, V):
        x = L.tensor(np.random.RandomState(3).standard_normal((2, 8, 10, 10)).astype("float32"))
        boxes = [L.tensor(_rois(3, 4, 1, np.float32)[:, 1:]),
                 L.tensor(_rois(2, 5, 1, np.float32)[:, 1:])]
        modules = [V.ops.RoIAlign((2, 2), 0.5, 2), V.ops.RoIAlign(3, 1.0, -1, aligned=True),
                   V.ops.RoIPool(2, 0.5), V.ops.PSRoIAlign(2, 1.0, 2), V.ops.PSRoIPool(2, 0.5)]
        return [(repr(m), m(x, boxes)) for m in modules]

    vcompare(scenario, rtol=0, atol=0)


def test_half_and_empty(vcompare):
    def scenario(L, V):
        x = L.tensor(np.random.RandomState(6).rand(1, 4, 6, 6).astype("float32"))
        rois = L.tensor([[0, 1.0, 1.0, 4.0, 5.0]])
        return [V.ops.roi_align(x.half(), rois.half(), 2),
                V.ops.roi_pool(x.half(), rois.half(), 2),
                V.ops.roi_align(x, rois[:0], 2), V.ops.roi_pool(x, rois[:0], 2),
                V.ops.ps_roi_align(x, rois[:0], 2), V.ops.ps_roi_pool(x, rois[:0], 2)]

    vcompare(scenario, rtol=0, atol=0)


def test_roi_errors(vcompare):
    def scenario(L, V):
        x = L.rand(1, 6, 5, 5)
        out = []
        for call in (lambda: V.ops.roi_align(x, L.rand(2, 4), 2),
                     lambda: V.ops.roi_align(x, [L.rand(2, 5)], 2),
                     lambda: V.ops.roi_align(x, 3, 2),
                     lambda: V.ops.roi_align(x, L.rand(2, 5).double(), 2),
                     lambda: V.ops.roi_align(x.long(), L.rand(2, 5).long(), 2),
                     lambda: V.ops.roi_pool(x, L.rand(2, 5).double(), 2),
                     lambda: V.ops.roi_pool(x.long(), L.rand(2, 5).long(), 2),
                     lambda: V.ops.ps_roi_align(x, L.rand(2, 5), 2),
                     lambda: V.ops.ps_roi_align(x, L.rand(2, 5).double(), 2),
                     lambda: V.ops.ps_roi_pool(x.long(), L.rand(2, 5).long(), 2),
                     lambda: V.ops.ps_roi_pool(L.rand(1, 8, 5, 5).long(),
                                               L.rand(2, 5).long(), 2)):
            try:
                call()
            except Exception as exc:  # noqa: BLE001
                out.append((type(exc).__name__, str(exc)))
        return out

    vcompare(scenario)


def test_multiscale_roi_align(vcompare):
    def scenario(L, V):
        rng = np.random.RandomState(7)
        features = {name: L.tensor(rng.standard_normal((2, 3, s, s)).astype("float32"))
                    for name, s in (("feat1", 32), ("feat2", 16), ("pool", 8), ("feat3", 4))}
        boxes = [L.tensor(_rois(6, 8, 1, np.float32, 120.0)[:, 1:] + 3),
                 L.tensor(_rois(4, 9, 1, np.float32, 120.0)[:, 1:] + 3)]
        pooler = V.ops.MultiScaleRoIAlign(["feat1", "feat3", "feat2"], 3, 2)
        single = V.ops.MultiScaleRoIAlign(["feat2"], (2, 3), 0, canonical_scale=112)
        out = [repr(pooler), pooler(features, boxes, [(128, 128), (100, 120)]),
               pooler.scales, repr(single), single(features, boxes, [(128, 128)])]
        try:
            V.ops.MultiScaleRoIAlign(["feat1"], 2, 2)(features, boxes, [])
        except ValueError as exc:
            out.append(str(exc))
        return out

    vcompare(scenario, rtol=0, atol=0)
