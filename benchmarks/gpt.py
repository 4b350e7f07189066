"""gpt: a small character-level GPT, one Adam step per iteration.

Token + position ``nn.Embedding``; per block: ``LayerNorm`` -> causal self-attention (q, k, v and
output projections by ``nn.Linear``, ``F.scaled_dot_product_attention(is_causal=True)``) ->
residual, ``LayerNorm`` -> MLP (``Linear`` d->4d, ``GELU``, ``Linear`` 4d->d) -> residual; final
``LayerNorm``, ``Linear`` to the vocabulary, cross-entropy over (B*T, vocab); ``optim.Adam``
lr 3e-4. Reported in ms per step.
"""

from __future__ import annotations

from types import ModuleType

import numpy as np

from ._harness import Step, WeightBank, Workload, training_step


def config(quick: bool) -> dict:
    if quick:
        return {"n_layer": 1, "d_model": 64, "n_head": 4, "context": 8, "vocab": 65,
                "batch": 2, "lr": 3e-4}
    return {"n_layer": 2, "d_model": 64, "n_head": 4, "context": 32, "vocab": 65,
            "batch": 16, "lr": 3e-4}


def build(lib: ModuleType, cfg: dict):
    """The model, written once against the torch API (``lib`` is torch or tapegrad)."""
    nn = lib.nn
    F = lib.nn.functional

    class CausalSelfAttention(nn.Module):
        def __init__(self, d_model: int, n_head: int) -> None:
            super().__init__()
            self.n_head = n_head
            self.query = nn.Linear(d_model, d_model)
            self.key = nn.Linear(d_model, d_model)
            self.value = nn.Linear(d_model, d_model)
            self.proj = nn.Linear(d_model, d_model)

        def forward(self, x):
            b, t, c = x.shape
            h = self.n_head
            q = self.query(x).view(b, t, h, c // h).transpose(1, 2)
            k = self.key(x).view(b, t, h, c // h).transpose(1, 2)
            v = self.value(x).view(b, t, h, c // h).transpose(1, 2)
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            return self.proj(y.transpose(1, 2).reshape(b, t, c))

    class Block(nn.Module):
        def __init__(self, d_model: int, n_head: int) -> None:
            super().__init__()
            self.ln1 = nn.LayerNorm(d_model)
            self.attn = CausalSelfAttention(d_model, n_head)
            self.ln2 = nn.LayerNorm(d_model)
            self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(),
                                     nn.Linear(4 * d_model, d_model))

        def forward(self, x):
            x = x + self.attn(self.ln1(x))
            return x + self.mlp(self.ln2(x))

    class GPT(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            d = cfg["d_model"]
            self.tok = nn.Embedding(cfg["vocab"], d)
            self.pos = nn.Embedding(cfg["context"], d)
            self.blocks = nn.Sequential(*[Block(d, cfg["n_head"]) for _ in range(cfg["n_layer"])])
            self.ln_f = nn.LayerNorm(d)
            self.head = nn.Linear(d, cfg["vocab"])

        def forward(self, idx):
            t = idx.shape[1]
            x = self.tok(idx) + self.pos(lib.arange(t))
            return self.head(self.ln_f(self.blocks(x)))

    return GPT()


def setup(lib: ModuleType, cfg: dict, bank: WeightBank) -> Step:
    model = build(lib, cfg)
    bank.load(lib, model)
    shape, vocab = (cfg["batch"], cfg["context"]), cfg["vocab"]
    idx = bank.tensor(lib, "idx", lambda r: r.integers(0, vocab, shape, dtype=np.int64))
    targets = bank.tensor(lib, "targets", lambda r: r.integers(0, vocab, shape, dtype=np.int64))
    F = lib.nn.functional
    opt = lib.optim.Adam(model.parameters(), lr=cfg["lr"])
    n = shape[0] * shape[1]
    return training_step(
        lambda: F.cross_entropy(model(idx).view(n, vocab), targets.view(n)), opt)


WORKLOAD = Workload(
    name="gpt",
    unit="ms/step",
    requires=("arange", "nn.Module", "nn.Sequential", "nn.Embedding", "nn.LayerNorm",
              "nn.Linear", "nn.GELU", "nn.functional.scaled_dot_product_attention",
              "nn.functional.cross_entropy", "optim.Adam"),
    config=config,
    setup=setup,
    per_step=lambda sec, cfg: sec * 1e3,
    describe=lambda cfg: (f"{cfg['n_layer']} block(s), d {cfg['d_model']}, "
                          f"{cfg['n_head']} heads, ctx {cfg['context']}, vocab {cfg['vocab']}, "
                          f"batch {cfg['batch']}, Adam"),
)
