"""``utils.checkpoint``: checkpointed and plain models give torch's gradients (dropout
included: the recomputation draws the same mask), the checkpointed model's peak memory is
measured lower, and torch's warnings and errors."""

from __future__ import annotations

import tracemalloc
import warnings

import numpy as np
import pytest
import torch
from torchcompare import to_numpy


def _mlp(L, depth=6, width=16, p=0.2):
    L.manual_seed(0)
    layers = []
    for _ in range(depth):
        layers += [L.nn.Linear(width, width), L.nn.Tanh(), L.nn.Dropout(p)]
    return L.nn.Sequential(*layers).double()


def _grads(L, mode):
    m = _mlp(L)
    x = L.tensor(np.random.default_rng(1).standard_normal((8, 16)), requires_grad=True)
    L.manual_seed(5)
    if mode == "plain":
        y = m(x)
    elif mode == "sequential_reentrant":
        y = L.utils.checkpoint.checkpoint_sequential(m, 3, x, use_reentrant=True)
    elif mode == "sequential":
        y = L.utils.checkpoint.checkpoint_sequential(m, 3, x, use_reentrant=False)
    else:
        reentrant = mode == "reentrant"
        h = L.utils.checkpoint.checkpoint(m[:9], x, use_reentrant=reentrant)
        y = L.utils.checkpoint.checkpoint(m[9:], h, use_reentrant=reentrant)
    (y ** 2).sum().backward()
    return [to_numpy(y.detach()), to_numpy(x.grad)] + [to_numpy(p.grad) for p in m.parameters()]


@pytest.mark.parametrize("mode", ["reentrant", "non_reentrant", "sequential",
                                  "sequential_reentrant"])
def test_checkpointed_gradients_equal_the_plain_model(lib, mode):
    """Same values and gradients as the plain model, on both libraries (dropout included)."""
    want = _grads(torch, "plain")
    plain = _grads(lib, "plain")
    got = _grads(lib, mode)
    for w, p, g in zip(want, plain, got, strict=True):
        np.testing.assert_allclose(p, w, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(g, p, rtol=1e-12, atol=1e-14)


def _peak(L, mode):
    m = _mlp(L, depth=12, width=64, p=0.1)
    x = L.tensor(np.random.default_rng(1).standard_normal((256, 64)), requires_grad=True)
    tracemalloc.start()
    try:
        if mode == "plain":
            y = m(x)
        else:
            y = L.utils.checkpoint.checkpoint_sequential(m, 4, x, use_reentrant=mode == "re")
        (y ** 2).sum().backward()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_checkpointing_lowers_peak_memory(lib_name):
    """Measured with tracemalloc (NumPy reports its buffers to it): a 12-layer MLP of width 64
    on a batch of 256 in float64, forward and backward, plain against 4 checkpointed segments."""
    if lib_name == "torch":
        pytest.skip("torch's tensors are not allocated through tracemalloc")
    import tapegrad

    plain = _peak(tapegrad, "plain")
    for mode in ("re", "non"):
        peak = _peak(tapegrad, mode)
        assert peak < 0.75 * plain, (mode, peak, plain)


def test_use_reentrant_warning_and_errors(compare):
    def scenario(L):
        x = L.ones(3, requires_grad=True)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            y = L.utils.checkpoint.checkpoint(lambda t: t.sin(), x)
        return [str(i.message) for i in w], y.grad_fn.name() if hasattr(
            y.grad_fn, "name") else None

    compare(scenario)


def test_reentrant_without_inputs_requiring_grad(compare):
    def scenario(L):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            y = L.utils.checkpoint.checkpoint(lambda t: t.sin(), L.ones(3), use_reentrant=True)
        return [str(i.message) for i in w], y.requires_grad

    compare(scenario)


def test_unexpected_kwargs(compare):
    compare(lambda L: L.utils.checkpoint.checkpoint(lambda t: t, L.ones(1), use_reentrant=True,
                                                    foo=1))


def test_non_reentrant_node_is_the_ops_own(lib):
    x = lib.ones(3, requires_grad=True)
    y = lib.utils.checkpoint.checkpoint(lambda t: t.sin(), x, use_reentrant=False)
    assert type(y.grad_fn).__name__ == "SinBackward0"
    y2 = lib.utils.checkpoint.checkpoint(lambda t: t.sin(), x, use_reentrant=True)
    assert type(y2.grad_fn).__name__ == "CheckpointFunctionBackward"
