"""The demo's model: a small character-level GPT, written out so that each part can be read.

A GPT reads a window of characters and, at every position, predicts the next one:

    token ids (B, T) -> token embedding + position embedding -> n_layer x Block -> LayerNorm
    -> Linear to the vocabulary -> logits (B, T, vocab)

    Block:  x = x + attention(LayerNorm(x))      each position looks back at earlier ones
            x = x + mlp(LayerNorm(x))            a two-layer GELU network per position

The attention is written by hand (no ``nn.MultiheadAttention``) so that its graph shows each
step: the query/key/value projection, the scaled scores ``q @ k^T / sqrt(d)``,
the causal mask, the softmax and the weighted sum of values.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import tapegrad as torch
import tapegrad.nn as nn
import tapegrad.nn.functional as F

__all__ = ["GPT", "GPTConfig"]


@dataclass
class GPTConfig:
    vocab_size: int
    block_size: int = 64   # the longest window the model reads
    n_layer: int = 2
    n_head: int = 4
    n_embd: int = 64

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


class CausalSelfAttention(nn.Module):
    """Multi-head self-attention in which position t sees positions 0..t only."""

    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        self.n_head = config.n_head
        self.qkv = nn.Linear(config.n_embd, 3 * config.n_embd)   # q, k and v in one matmul
        self.proj = nn.Linear(config.n_embd, config.n_embd)
        # mask[i, j] is True where position i must not see position j (j > i: the future)
        mask = torch.ones(config.block_size, config.block_size, dtype=torch.bool).triu(1)
        self.register_buffer("mask", mask, persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.shape
        h, d = self.n_head, C // self.n_head
        q, k, v = self.qkv(x).split(C, dim=2)
        q = q.view(B, T, h, d).transpose(1, 2)                 # (B, h, T, d)
        k = k.view(B, T, h, d).transpose(1, 2)
        v = v.view(B, T, h, d).transpose(1, 2)
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(d)      # (B, h, T, T)
        scores = scores.masked_fill(self.mask[:T, :T], float("-inf"))
        weights = F.softmax(scores, dim=-1)
        y = (weights @ v).transpose(1, 2).reshape(B, T, C)     # heads side by side again
        return self.proj(y)


class Block(nn.Module):
    """One transformer block: attention then MLP, each with a residual connection (pre-norm)."""

    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        self.ln1 = nn.LayerNorm(config.n_embd)
        self.attn = CausalSelfAttention(config)
        self.ln2 = nn.LayerNorm(config.n_embd)
        self.mlp = nn.Sequential(nn.Linear(config.n_embd, 4 * config.n_embd), nn.GELU(),
                                 nn.Linear(4 * config.n_embd, config.n_embd))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        self.config = config
        self.tok_emb = nn.Embedding(config.vocab_size, config.n_embd)
        self.pos_emb = nn.Embedding(config.block_size, config.n_embd)
        self.blocks = nn.Sequential(*[Block(config) for _ in range(config.n_layer)])
        self.ln_f = nn.LayerNorm(config.n_embd)
        self.head = nn.Linear(config.n_embd, config.vocab_size)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        T = idx.shape[1]
        pos = torch.arange(T)
        x = self.tok_emb(idx) + self.pos_emb(pos)
        return self.head(self.ln_f(self.blocks(x)))

    @torch.no_grad()
    def generate(self, idx: torch.Tensor, n: int, temperature: float = 0.8,
                 generator: torch.Generator | None = None) -> torch.Tensor:
        """Append ``n`` sampled characters to ``idx`` (1, T), one at a time."""
        for _ in range(n):
            logits = self(idx[:, -self.config.block_size:])[:, -1, :] / temperature
            probs = F.softmax(logits, dim=-1)
            nxt = torch.multinomial(probs, 1, generator=generator)
            idx = torch.cat([idx, nxt], dim=1)
        return idx
