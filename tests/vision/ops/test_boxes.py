"""Box operations against torchvision: NMS (ties, empty inputs, the batched forms), the IoU
family with its gradients, areas and format conversions (rotated ones included), clipping,
filtering, the boxes around masks, and the errors of bad inputs."""

from __future__ import annotations

import numpy as np
import pytest


def _boxes(n: int, seed: int, dtype=np.float32, size: float = 20.0) -> np.ndarray:
    rng = np.random.RandomState(seed)
    xy = rng.uniform(0, size, (n, 2))
    wh = rng.uniform(0.5, size / 2, (n, 2))
    return np.concatenate([xy, xy + wh], 1).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nms(vcompare, dtype):
    def scenario(L, V):
        boxes = L.tensor(_boxes(60, 0, dtype))
        scores = L.tensor(np.random.RandomState(1).rand(60).astype(dtype))
        tied = L.tensor(np.round(np.random.RandomState(2).rand(60) * 4).astype(dtype))
        return [V.ops.nms(boxes, scores, t) for t in (0.0, 0.3, 0.5, 0.9, 1.0)] + [
            V.ops.nms(boxes, tied, 0.4),
            V.ops.nms(L.zeros(0, 4, dtype=boxes.dtype), L.zeros(0, dtype=boxes.dtype), 0.5),
            V.ops.nms(boxes[:1], scores[:1], 0.5),
        ]

    vcompare(scenario, rtol=0, atol=0)


def test_nms_errors(vcompare):
    def scenario(L, V):
        out = []
        for args in ((L.rand(3, 4, 1), L.rand(3)), (L.rand(3, 5), L.rand(3)),
                     (L.rand(3, 4), L.rand(3, 1)), (L.rand(3, 4), L.rand(4)),
                     (L.rand(3, 4), L.rand(3).double()),
                     (L.ones(3, 4, dtype=L.long), L.ones(3, dtype=L.long))):
            try:
                V.ops.nms(*args, 0.5)
            except Exception as exc:  # noqa: BLE001
                out.append((type(exc).__name__, str(exc)))
        return out

    vcompare(scenario)


@pytest.mark.parametrize("n", [50, 1200])  # 1200 boxes: over 4000 coordinates, per category
def test_batched_nms(vcompare, n):
    def scenario(L, V):
        boxes = L.tensor(_boxes(n, 3, size=100.0))
        scores = L.tensor(np.random.RandomState(4).rand(n).astype(np.float32))
        idxs = L.tensor(np.random.RandomState(5).randint(0, 4, n))
        return [V.ops.batched_nms(boxes, scores, idxs, 0.5),
                V.ops.batched_nms(boxes[:0], scores[:0], idxs[:0], 0.5)]

    vcompare(scenario, rtol=0, atol=0)


def test_box_iou_family_and_gradients(vcompare):
    def scenario(L, V):
        a = L.tensor(_boxes(5, 6, np.float64), requires_grad=True)
        b = L.tensor(_boxes(7, 7, np.float64), requires_grad=True)
        out = []
        for f in (V.ops.box_iou, V.ops.generalized_box_iou, V.ops.distance_box_iou,
                  V.ops.complete_box_iou):
            r = f(a, b)
            ga, gb = L.autograd.grad(r.sum(), (a, b))
            out.append((r, ga, gb))
        return out

    vcompare(scenario, rtol=1e-10, atol=1e-12)


def test_box_iou_family_float32(vcompare):
    # float32: complete IoU goes through atan (torch's vectorized one, not NumPy's)
    def scenario(L, V):
        a, b = L.tensor(_boxes(5, 6)), L.tensor(_boxes(7, 7))
        batched = L.tensor(np.stack([_boxes(3, 8), _boxes(3, 9)]))
        return [V.ops.box_iou(a, b), V.ops.generalized_box_iou(a, b),
                V.ops.distance_box_iou(a, b), V.ops.complete_box_iou(a, b, eps=1e-3),
                V.ops.box_iou(batched, batched[:, :2])]

    vcompare(scenario, rtol=1.3e-6, atol=1e-5)


@pytest.mark.parametrize("fmt", ["xyxy", "xywh", "cxcywh"])
def test_box_iou_formats_and_area(vcompare, fmt):
    def scenario(L, V):
        a = V.ops.box_convert(L.tensor(_boxes(6, 10)), "xyxy", fmt)
        b = V.ops.box_convert(L.tensor(_boxes(4, 11)), "xyxy", fmt)
        small_ints = L.tensor(_boxes(4, 12)).to(L.int16)
        return [V.ops.box_iou(a, b, fmt=fmt), V.ops.box_area(a, fmt=fmt),
                V.ops.box_area(small_ints), V.ops.box_area(small_ints.to(L.uint8)),
                V.ops.box_area(L.tensor(_boxes(3, 13)).half())]

    vcompare(scenario)


def _rotated(n: int, seed: int, dtype=np.float32) -> np.ndarray:
    rng = np.random.RandomState(seed)
    return np.stack([rng.uniform(5, 15, n), rng.uniform(5, 15, n), rng.uniform(1, 8, n),
                     rng.uniform(1, 8, n), rng.uniform(-90, 90, n)], 1).astype(dtype)


def test_rotated_box_iou(vcompare):
    # torchvision's kernel finds intersections in the boxes' dtype; here they are clipped in
    # double, so float32 results agree to float32 rounding
    def scenario(L, V):
        a = L.tensor(_rotated(6, 14))
        b = L.tensor(np.concatenate([_rotated(5, 15), _rotated(1, 14)[:1]]))
        same = L.tensor([[10.0, 10, 4, 2, 30], [10.0, 10, 4, 2, 30], [10.0, 10, 0, 2, 30]])
        return [V.ops.box_iou(a, b, fmt="cxcywhr"),
                V.ops.box_iou(a.double(), b.double(), fmt="cxcywhr"),
                V.ops.box_iou(same, same, fmt="cxcywhr"),
                V.ops.box_iou(V.ops.box_convert(a, "cxcywhr", "xywhr"),
                              V.ops.box_convert(b, "cxcywhr", "xywhr"), fmt="xywhr"),
                V.ops.box_iou(V.ops.box_convert(a, "cxcywhr", "xyxyxyxy"),
                              V.ops.box_convert(b, "cxcywhr", "xyxyxyxy"), fmt="xyxyxyxy")]

    vcompare(scenario, rtol=1e-5, atol=1e-6)


def test_box_convert(vcompare):
    def scenario(L, V):
        plain = L.tensor(_boxes(5, 16))
        rotated = L.tensor(_rotated(5, 17))
        out = []
        fmts = ("xyxy", "xywh", "cxcywh")
        for a in fmts:
            for b in fmts:
                out.append(V.ops.box_convert(plain, a, b))
        rfmts = ("cxcywhr", "xywhr", "xyxyxyxy")
        start = {"cxcywhr": rotated, "xywhr": V.ops.box_convert(rotated, "cxcywhr", "xywhr"),
                 "xyxyxyxy": V.ops.box_convert(rotated, "cxcywhr", "xyxyxyxy")}
        for a in rfmts:
            for b in rfmts:
                out.append(V.ops.box_convert(start[a], a, b))
        ints = L.tensor(np.round(_rotated(4, 18)).astype(np.int64))
        out.append(V.ops.box_convert(ints, "cxcywhr", "xyxyxyxy"))
        out.append(V.ops.box_convert(L.tensor(_boxes(3, 19)).long(), "xyxy", "cxcywh"))
        for bad in (("xyxy", "nope"), ("xyxy", "xywhr"), ("xyxyxyxy", "cxcywh")):
            try:
                V.ops.box_convert(plain, *bad)
            except Exception as exc:  # noqa: BLE001
                out.append((type(exc).__name__, str(exc)))
        return out

    vcompare(scenario, rtol=1e-6, atol=1e-5)


def test_box_errors(vcompare):
    def scenario(L, V):
        out = []
        for call in (lambda: V.ops.box_iou(L.rand(2, 4), L.rand(3, 4), fmt="bad"),
                     lambda: V.ops.box_area(L.rand(2, 4), fmt="xywhr"),
                     lambda: V.ops.box_iou(L.rand(2, 5).long(), L.rand(3, 5).long(),
                                           fmt="cxcywhr")):
            try:
                call()
            except Exception as exc:  # noqa: BLE001
                out.append((type(exc).__name__, str(exc)))
        return out

    vcompare(scenario)


def test_clip_remove_small_and_masks(vcompare):
    def scenario(L, V):
        boxes = L.tensor(_boxes(8, 20, size=30.0) - 5)
        masks = L.zeros(4, 9, 11, dtype=L.uint8)
        masks[0, 2:5, 3:8] = 1
        masks[1, 8, 10] = 3
        masks[3, :, 4] = 1
        return [V.ops.clip_boxes_to_image(boxes, (17, 21)),
                V.ops.clip_boxes_to_image(boxes.reshape(2, 4, 4).double(), (10, 12)),
                V.ops.remove_small_boxes(boxes, 6.0),
                V.ops.masks_to_boxes(masks), V.ops.masks_to_boxes(masks.bool()),
                V.ops.masks_to_boxes(L.zeros(0, 3, 3))]

    vcompare(scenario, rtol=0, atol=0)
