"""Training runs step for step like torch: an MLP and a small GPT, 200 Adam steps each, float32,
same initial weights and data; every step's loss within 1e-4 of torch's."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tapegrad

torch = pytest.importorskip("torch")

STEPS = 200


def copy_weights(src, dst) -> None:
    """Copy torch's initial parameters into the tapegrad model (same names, same order)."""
    theirs = dict(src.named_parameters())
    ours = dict(dst.named_parameters())
    assert list(theirs) == list(ours)
    with tapegrad.no_grad():
        for name, p in ours.items():
            p.copy_(tapegrad.tensor(theirs[name].detach().numpy()))


def train(lib, model, batches, loss_fn) -> list[float]:
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)
    losses = []
    for x, y in batches:
        opt.zero_grad()
        loss = loss_fn(model(lib.tensor(x)), lib.tensor(y))
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def mlp(lib):
    nn = lib.nn
    return nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                         nn.Linear(256, 10))


def test_mlp_adam_200_steps_matches_torch() -> None:
    rng = np.random.default_rng(0)
    batches = [(rng.standard_normal((32, 784)).astype(np.float32), rng.integers(0, 10, 32))
               for _ in range(STEPS)]
    torch.manual_seed(0)
    ref_model = mlp(torch)
    model = mlp(tapegrad)
    copy_weights(ref_model, model)
    want = train(torch, ref_model, batches, torch.nn.CrossEntropyLoss())
    got = train(tapegrad, model, batches, tapegrad.nn.CrossEntropyLoss())
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-4)


def gpt(lib, vocab=65, d=64, heads=4, context=32, blocks=2):
    nn, F = lib.nn, lib.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1 = nn.LayerNorm(d)
            self.qkv = nn.Linear(d, 3 * d)
            self.proj = nn.Linear(d, d)
            self.ln2 = nn.LayerNorm(d)
            self.fc = nn.Linear(d, 4 * d)
            self.out = nn.Linear(4 * d, d)

        def forward(self, x):
            b, t, _ = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
            q, k, v = (z.view(b, t, heads, d // heads).transpose(1, 2) for z in (q, k, v))
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d // heads))
            mask = lib.tril(lib.ones(t, t, dtype=lib.bool))
            att = att.masked_fill(~mask, float("-inf")).softmax(dim=-1)
            y = (att @ v).transpose(1, 2).contiguous().view(b, t, d)
            x = x + self.proj(y)
            return x + self.out(F.gelu(self.fc(self.ln2(x))))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(vocab, d)
            self.pos = nn.Embedding(context, d)
            self.blocks = nn.ModuleList([Block() for _ in range(blocks)])
            self.ln = nn.LayerNorm(d)
            self.head = nn.Linear(d, vocab)

        def forward(self, idx):
            t = idx.shape[1]
            x = self.tok(idx) + self.pos(lib.arange(t))
            for block in self.blocks:
                x = block(x)
            return self.head(self.ln(x))

    return GPT()


def test_gpt_adam_200_steps_matches_torch() -> None:
    rng = np.random.default_rng(1)
    vocab, context, batch = 65, 32, 16
    data = rng.integers(0, vocab, (STEPS, batch, context + 1))
    batches = [(d[:, :-1], d[:, 1:]) for d in data]
    torch.manual_seed(0)
    ref_model = gpt(torch)
    model = gpt(tapegrad)
    copy_weights(ref_model, model)

    def loss_for(lib):
        def loss(logits, y):
            return lib.nn.functional.cross_entropy(logits.reshape(-1, vocab), y.reshape(-1))

        return loss

    want = train(torch, ref_model, batches, loss_for(torch))
    got = train(tapegrad, model, batches, loss_for(tapegrad))
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-4)
