"""The demo's GPT as one readable script: a character-level transformer, trained and sampled.

What it teaches: every piece of a GPT in about a hundred lines: characters to ids, random
training windows, token and position embeddings, causal self-attention written out (scores,
mask, softmax, weighted values), pre-norm residual blocks with a GELU MLP, AdamW with a warm-up
and cosine learning-rate schedule (``LambdaLR``), gradient clipping, and sampling one character
at a time. ``tapegrad demo`` runs the same model with a progress bar, checkpoints and pictures
(``src/tapegrad/demo/``).

    python examples/10_char_gpt.py [TEXT_FILE]      (TAPEGRAD_EXAMPLES_QUICK=1: 20 steps)

Without TEXT_FILE it trains on the English text the demo ships (The Devil's Dictionary).
"""

import math
import os
import sys
from pathlib import Path

import tapegrad as torch

nn, F = torch.nn, torch.nn.functional
QUICK = os.environ.get("TAPEGRAD_EXAMPLES_QUICK") == "1"
STEPS = 20 if QUICK else 500
BATCH, BLOCK, EMBD, HEADS, LAYERS, LR, WARMUP = 32, 64, 96, 4, 2, 6e-3, 30


def bundled_text() -> Path:
    here = Path(__file__).resolve().parent.parent / "src" / "tapegrad" / "demo" / "data"
    if here.is_dir():  # a checkout of the repository
        return here / "devils_dictionary.txt"
    import tapegrad.demo  # an installed tapegrad

    return Path(tapegrad.demo.__file__).parent / "data" / "devils_dictionary.txt"


text = Path(sys.argv[1] if len(sys.argv) > 1 else bundled_text()).read_text(encoding="utf-8")
chars = sorted(set(text))
stoi = {c: i for i, c in enumerate(chars)}
data = torch.tensor([stoi[c] for c in text], dtype=torch.long)
print(f"{len(text):,} characters, {len(chars)} distinct")


def get_batch(generator):
    starts = torch.randint(len(data) - BLOCK - 1, (BATCH,), generator=generator)
    windows = data[starts.unsqueeze(1) + torch.arange(BLOCK + 1)]
    return windows[:, :-1], windows[:, 1:]          # inputs, and the character after each


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(EMBD, 3 * EMBD)
        self.proj = nn.Linear(EMBD, EMBD)
        self.register_buffer("future", torch.ones(BLOCK, BLOCK, dtype=torch.bool).triu(1))

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = (t.view(B, T, HEADS, C // HEADS).transpose(1, 2)
                   for t in self.qkv(x).split(C, dim=2))                 # each (B, heads, T, d)
        scores = q @ k.transpose(-2, -1) / math.sqrt(C // HEADS)        # (B, heads, T, T)
        scores = scores.masked_fill(self.future[:T, :T], float("-inf"))  # no looking ahead
        y = F.softmax(scores, dim=-1) @ v
        return self.proj(y.transpose(1, 2).reshape(B, T, C))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1, self.attn, self.ln2 = nn.LayerNorm(EMBD), Attention(), nn.LayerNorm(EMBD)
        self.mlp = nn.Sequential(nn.Linear(EMBD, 4 * EMBD), nn.GELU(), nn.Linear(4 * EMBD, EMBD))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, vocab):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, EMBD), nn.Embedding(BLOCK, EMBD)
        self.blocks = nn.Sequential(*[Block() for _ in range(LAYERS)])
        self.ln, self.head = nn.LayerNorm(EMBD), nn.Linear(EMBD, vocab)

    def forward(self, idx):
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1]))
        return self.head(self.ln(self.blocks(x)))


def lr_factor(step):  # linear warm-up, then a cosine down to a tenth
    if step < WARMUP:
        return (step + 1) / WARMUP
    return 0.1 + 0.45 * (1 + math.cos(math.pi * (step - WARMUP) / max(1, STEPS - WARMUP)))


torch.manual_seed(0)
model = GPT(len(chars))
optimizer = torch.optim.AdamW(model.parameters(), lr=LR, betas=(0.9, 0.99), weight_decay=0.01)
scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_factor)
generator = torch.Generator().manual_seed(0)
print(f"{sum(p.numel() for p in model.parameters()):,} parameters, {STEPS} steps")

for step in range(1, STEPS + 1):
    x, y = get_batch(generator)
    logits = model(x)
    loss = F.cross_entropy(logits.view(-1, len(chars)), y.reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    scheduler.step()
    if step == 1 or step % max(1, STEPS // 10) == 0:
        print(f"step {step:4d}  loss {loss.item():.3f}  lr {scheduler.get_last_lr()[0]:.2e}")

model.eval()
idx = torch.tensor([[stoi.get(c, 0) for c in "LOVE, n.  "]])
with torch.no_grad():
    for _ in range(40 if QUICK else 300):
        probs = F.softmax(model(idx[:, -BLOCK:])[:, -1] / 0.8, dim=-1)
        idx = torch.cat([idx, torch.multinomial(probs, 1, generator=generator)], dim=1)
print("".join(chars[i] for i in idx[0].tolist()))
