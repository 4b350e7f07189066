"""Real graphs for the show tests: the seed chapter's ``(a*b + 1)**2``, an MLP, a small
transformer encoder; and a walk over ``next_functions`` to check views against."""

from __future__ import annotations

import tapegrad as torch
from tapegrad import nn


def seed000_2():
    a = torch.tensor([2.0], requires_grad=True)
    b = torch.tensor([3.0], requires_grad=True)
    c = a * b
    d = c + 1.0
    e = d ** 2
    return e, {"a": a, "b": b}


def mlp(seed: int = 0):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 8), nn.ReLU(),
                          nn.Linear(8, 3))
    x = torch.randn(5, 6)
    y = torch.randint(0, 3, (5,))
    loss = nn.functional.cross_entropy(model(x), y)
    return loss, model


def transformer(layers: int = 4):
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16, dropout=0.0,
                                       batch_first=True)
    model = nn.TransformerEncoder(layer, num_layers=layers, enable_nested_tensor=False)
    x = torch.randn(2, 3, 8, requires_grad=True)
    loss = model(x).pow(2).mean()
    return loss, model


def walk(root_fn):
    """Every node and every edge ``(node, i, child, nr)`` reachable through next_functions."""
    nodes, edges = [], []
    seen = {root_fn}
    stack = [root_fn]
    while stack:
        n = stack.pop()
        nodes.append(n)
        for i, (c, nr) in enumerate(n.next_functions):
            edges.append((n, i, c, nr))
            if c is not None and c not in seen:
                seen.add(c)
                stack.append(c)
    return nodes, edges
