"""What the compiler tests compare: every array a training step changes, bit for bit."""

from __future__ import annotations

import numpy as np

import tapegrad as torch


def step_arrays(model, opt=None, extra=()):
    """Every array a training step changes: parameters, gradients, optimizer state."""
    out = []
    for p in list(model.parameters()) + list(extra):
        out.append(p._data.copy())
        out.append(None if p._grad is None else p._grad._data.copy())
    if opt is not None:
        for s in opt.state.values():
            for k in sorted(s):
                v = s[k]
                out.append(v._data.copy() if isinstance(v, torch.Tensor) else v)
    return out


def assert_same(a, b):
    """Equal bit for bit: the same arrays (dtype, shape, bytes) and the same Python values."""
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        if x is None or y is None:
            assert x is y
        elif isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()
        else:
            assert x == y
