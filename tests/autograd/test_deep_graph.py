"""A chain of a million ops backpropagates (the engine never recurses), and the memory of a
dropped graph is given back."""

from __future__ import annotations

import gc
import tracemalloc

import numpy as np

import tapegrad as torch


def test_million_op_chain_backpropagates() -> None:
    x = torch.tensor(1.0, dtype=torch.float64, requires_grad=True)
    y = x
    for _ in range(1_000_000):
        y = y * 1.0000001
    y.backward()
    # d/dx x * c^n = c^n
    assert np.isclose(x.grad.item(), 1.0000001**1_000_000, rtol=1e-9)


def test_memory_returns_after_graph_is_dropped() -> None:
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        x = torch.ones(16, requires_grad=True)
        y = x
        for _ in range(20_000):
            y = (y * 1.0001).tanh()
        during = tracemalloc.get_traced_memory()[0]
        y.sum().backward()
        del y
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert during - before > 5_000_000  # the graph really held memory
    # What is left is x, its .grad and its AccumulateGrad node: a few kilobytes.
    assert after - before < 50_000, (before, during, after)
