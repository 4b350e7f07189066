"""nn.RNN, nn.LSTM, nn.GRU and the cells against torch: same weights (copied), same inputs;
outputs, final states and every gradient, for each option; parameter names, shapes and the
seeded initialisation bit for bit; torch's error messages; second derivatives."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import tapegrad

torch = pytest.importorskip("torch")

TOL = {"float64": dict(rtol=1e-10, atol=1e-12), "float32": dict(rtol=2e-5, atol=2e-6)}


def build(cls: str, *args, dtype="float64", seed=0, **kwargs):
    """The same layer on both libraries, torch's initial weights copied into tapegrad's."""
    torch.manual_seed(seed)
    theirs = getattr(torch.nn, cls)(*args, **kwargs).to(getattr(torch, dtype))
    ours = getattr(tapegrad.nn, cls)(*args, **kwargs).to(getattr(tapegrad, dtype))
    with tapegrad.no_grad():
        for (n1, p1), (n2, p2) in zip(theirs.named_parameters(), ours.named_parameters(),
                                      strict=True):
            assert n1 == n2
            p2.copy_(tapegrad.tensor(p1.detach().numpy()))
    return theirs, ours


def pair(array, requires_grad=True):
    """A torch tensor and a tapegrad tensor with the same values."""
    a = torch.tensor(array, requires_grad=requires_grad)
    b = tapegrad.tensor(array, requires_grad=requires_grad)
    return a, b


def flat(out):
    """The tensors of a layer's result, in order ((out, h) or (out, (h, c)); PackedSequence)."""
    if isinstance(out, (tuple, list)) and not hasattr(out, "batch_sizes"):
        return [t for o in out for t in flat(o)]
    if hasattr(out, "batch_sizes"):
        return [out.data]
    return [out]


def check(theirs_out, ours_out, dtype):
    t, o = flat(theirs_out), flat(ours_out)
    assert len(t) == len(o)
    for a, b in zip(t, o, strict=True):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), **TOL[dtype])
    return t, o


def backward_both(t, o, rng):
    """Backpropagate the same random weighting of every output on both libraries."""
    loss_t = 0
    loss_o = 0
    for a, b in zip(t, o, strict=True):
        w = rng.standard_normal(tuple(a.shape)).astype(a.detach().numpy().dtype)
        loss_t = loss_t + (a * torch.tensor(w)).sum()
        loss_o = loss_o + (b * tapegrad.tensor(w)).sum()
    loss_t.backward()
    loss_o.backward()


def check_grads(theirs, ours, leaves, dtype):
    for (n1, p1), (n2, p2) in zip(theirs.named_parameters(), ours.named_parameters(),
                                  strict=True):
        np.testing.assert_allclose(p2.grad.numpy(), p1.grad.numpy(), err_msg=n1, **TOL[dtype])
    for a, b in leaves:
        np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), **TOL[dtype])
