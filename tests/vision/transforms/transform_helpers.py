"""Helpers of the transform tests (conftest.py puts this folder on the path): the same inputs
built for torchvision (on real torch) and for the package under test, and comparisons of what
comes out.

``Side.make(kind)`` builds an input for one side (``ours`` or ``theirs``): uint8 and float
images (single and batched), PIL images, videos, masks, boxes in every format, keypoints.
``same(ours, theirs, ...)`` compares outputs of any nesting: the types (by class name), the
TVTensor metadata, the values exactly, or within the float32 tolerances (1.3e-6 relative,
1e-5 absolute, as ``assert_close``) for float results of kernels whose last bits depend on the
implementation (convolution, transcendental functions).

Under torch's scalar CPU kernels, ``torch_values.TorchValues`` hands the package under test the
values of torch's whose last bits those kernels compute their own way (see its docstring).
"""

from __future__ import annotations

import importlib
import random
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
from PIL import Image

RNG = np.random.default_rng(0)
IMG_U8 = RNG.integers(0, 256, (3, 17, 23), dtype=np.uint8)
IMG_F = RNG.random((3, 17, 23), dtype=np.float32)
IMG_B = RNG.integers(0, 256, (2, 3, 17, 23), dtype=np.uint8)
GRAY_U8 = RNG.integers(0, 256, (1, 17, 23), dtype=np.uint8)
PIL_RGB = RNG.integers(0, 256, (17, 23, 3), dtype=np.uint8)
PIL_L = RNG.integers(0, 256, (17, 23), dtype=np.uint8)
MASK = (IMG_U8[0] > 128).astype(np.uint8)
BOXES = {
    "XYXY": [[1., 2., 10., 12.], [5., 0., 22., 16.], [3., 3., 4., 4.]],
    "XYWH": [[1., 2., 9., 10.], [5., 0., 17., 16.], [3., 3., 1., 1.]],
    "CXCYWH": [[5.5, 7., 9., 10.], [13.5, 8., 17., 16.], [3.5, 3.5, 1., 1.]],
    "XYWHR": [[3., 4., 8., 5., 30.], [10., 10., 5., 4., -20.]],
    "CXCYWHR": [[8., 8., 8., 5., 30.], [12., 10., 5., 4., 110.]],
    "XYXYXYXY": [[2., 2., 10., 3., 9., 9., 1., 8.], [12., 4., 20., 6., 18., 14., 10., 12.]],
}
KEYPOINTS = [[1.5, 2.0], [20.0, 15.0], [7.0, 3.0]]
CANVAS = (17, 23)

KINDS = ["u8", "batch", "float", "gray", "pil", "pil_l"]
TV_KINDS = ["image", "video", "mask", "keypoints", "boxes_int"] + [f"boxes_{f}" for f in BOXES]


def build(L: Any, T: Any, kind: str) -> Any:
    """The input ``kind`` for the library ``L`` (tensors) with tv_tensors ``T``; ``kind`` + "@64":
    boxes and keypoints of float64 coordinates (the reference of ``same_or_as_accurate``)."""
    if kind.endswith("@64"):
        x = build(L, T, kind[:-3])
        return T.wrap(x.as_subclass(L.Tensor).double(), like=x)
    if kind == "u8":
        return L.tensor(IMG_U8)
    if kind == "batch":
        return L.tensor(IMG_B)
    if kind == "float":
        return L.tensor(IMG_F)
    if kind == "gray":
        return L.tensor(GRAY_U8)
    if kind == "pil":
        return Image.fromarray(PIL_RGB)
    if kind == "pil_l":
        return Image.fromarray(PIL_L)
    if kind == "image":
        return T.Image(L.tensor(IMG_U8))
    if kind == "image_f":
        return T.Image(L.tensor(IMG_F))
    if kind == "video":
        return T.Video(L.tensor(np.stack([IMG_U8, IMG_U8[:, ::-1].copy()])))
    if kind == "mask":
        return T.Mask(L.tensor(MASK))
    if kind == "keypoints":
        return T.KeyPoints(L.tensor(KEYPOINTS), canvas_size=CANVAS)
    if kind == "boxes_int":
        return T.BoundingBoxes(L.tensor([[1, 2, 10, 12], [5, 0, 22, 16]]), format="XYXY",
                               canvas_size=CANVAS)
    if kind.startswith("boxes_"):
        fmt = kind[6:]
        return T.BoundingBoxes(L.tensor(BOXES[fmt]), format=fmt, canvas_size=CANVAS)
    raise ValueError(kind)


@dataclass
class Side:
    """One library: torchvision on real torch, or the package under test on ``lib``."""

    L: Any
    tv: Any
    torch_values: Any = None  # a torch_values.TorchValues, under torch's scalar kernels

    def sub(self, name: str) -> Any:
        """The submodule ``name`` of this side's torchvision (imported on first use)."""
        return importlib.import_module(f"{self.tv.__name__}.{name}")

    @property
    def T(self) -> Any:
        return self.sub("tv_tensors")

    @property
    def F(self) -> Any:
        return self.sub("transforms.functional")

    @property
    def TR(self) -> Any:
        return self.sub("transforms")

    @property
    def V2(self) -> Any:
        return self.sub("transforms.v2")

    @property
    def F2(self) -> Any:
        return self.sub("transforms.v2.functional")

    def make(self, kind: str) -> Any:
        return build(self.L, self.T, kind)

    def seed(self, seed: int) -> None:
        self.L.manual_seed(seed)
        random.seed(seed)
        if self.torch_values is not None:
            self.torch_values.seeded(self, seed)


def _leaves(x: Any) -> list:
    if isinstance(x, dict):
        return [v for value in x.values() for v in _leaves(value)]
    if isinstance(x, (tuple, list)):
        return [v for value in x for v in _leaves(value)]
    return [x]


def _array(x: Any) -> Any:
    if isinstance(x, Image.Image):
        return np.asarray(x), x.mode, x.size
    if hasattr(x, "detach"):
        return np.asarray(x.detach().numpy())
    return x


def same_or_as_accurate(ours: Any, theirs: Any, truth: Any) -> None:
    """``same(ours, theirs, approx=True)`` for float results torch itself computes beyond the
    float32 tolerances: rotated boxes (an angle back from atan2 after products of cosines and
    sines, ill-conditioned where a resize or perspective makes a box a thin parallelogram).
    ``truth`` is torchvision's result on the float64 inputs; an element passes when it is
    within the float32 tolerances of torch's, or no farther from the truth than twice torch's
    own error (as docs/float32.md judges the ops whose float32 error exceeds the tolerance)."""
    same(ours, theirs, float_values=False)  # types, metadata, shapes and the other values
    for a, b, t in zip(_leaves(ours), _leaves(theirs), _leaves(truth), strict=True):
        x, y, z = _array(a), _array(b), _array(t)
        if not isinstance(x, np.ndarray) or x.dtype.kind != "f":
            if isinstance(x, np.ndarray):
                np.testing.assert_array_equal(x, y)
            continue
        x, y, z = (np.asarray(v, dtype=np.float64) for v in (x, y, z))
        close = np.abs(x - y) <= 1e-5 + 1.3e-6 * np.abs(y)
        as_accurate = np.abs(x - z) <= 2 * np.abs(y - z)
        bad = ~(close | as_accurate)
        assert not bad.any(), (x[bad], y[bad], z[bad])


def same(ours: Any, theirs: Any, *, approx: bool = False, check_types: bool = True,
         rtol: float = 1.3e-6, atol: float = 1e-5, float_values: bool = True) -> None:
    """Assert that two outputs agree: types, TVTensor metadata and values (exactly, but for
    float arrays within ``rtol``/``atol`` (float32's by default) where ``approx``)."""
    a_leaves, b_leaves = _leaves(ours), _leaves(theirs)
    assert len(a_leaves) == len(b_leaves)
    for a, b in zip(a_leaves, b_leaves, strict=True):
        if check_types:
            assert type(a).__name__ == type(b).__name__
        for attr in ("format", "canvas_size", "clamping_mode"):
            if hasattr(b, "detach") and hasattr(b, attr):
                assert str(getattr(a, attr)) == str(getattr(b, attr)), attr
        x, y = _array(a), _array(b)
        if isinstance(x, tuple):  # PIL: mode, size and pixels
            assert x[1:] == y[1:]
            x, y = x[0], y[0]
        if not isinstance(x, np.ndarray):
            assert x == y
            continue
        assert x.dtype == y.dtype and x.shape == y.shape, (x.dtype, y.dtype, x.shape, y.shape)
        if not float_values and x.dtype.kind == "f":
            continue
        if approx and x.dtype.kind == "f":
            np.testing.assert_allclose(x, y, rtol=rtol, atol=atol)
        else:
            np.testing.assert_array_equal(x, y)


def _norm(message: str) -> str:
    """A message with the two packages' class paths written alike."""
    return (message.replace("tapegrad.vision", "torchvision")
            .replace("tapegrad._tensor.Tensor", "torch.Tensor")
            .replace("<class 'tapegrad.Tensor'>", "<class 'torch.Tensor'>"))


def same_error(run_ours: Any, run_theirs: Any) -> None:
    """Both raise the same exception type with the same message (class paths of the two
    packages aside), or both succeed."""
    err = []
    for run in (run_theirs, run_ours):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                run()
            err.append(None)
        except Exception as e:  # noqa: BLE001
            err.append(e)
    theirs, ours = err
    assert type(ours) is type(theirs), (ours, theirs)
    if theirs is not None:
        assert _norm(str(ours)) == _norm(str(theirs))
