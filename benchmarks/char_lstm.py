"""char-lstm: a character-level LSTM language model step: embedding, a 1-layer LSTM (hidden
128) over 64 steps, a linear head, cross-entropy, Adam; batch 32.

The recurrent layer is one fused entry per direction (ops/rnn.py): its forward loops over the
64 steps in NumPy and its backward runs backpropagation through time by hand, so the step's
time is mostly the 128 small (32 x 128) @ (128 x 512) products. Reported in ms per step
(``zero_grad``, forward, ``backward``, ``step``).
"""

from __future__ import annotations

from types import ModuleType

import numpy as np

from ._harness import Step, WeightBank, Workload, training_step


def config(quick: bool) -> dict:
    if quick:
        return {"vocab": 16, "embed": 8, "hidden": 16, "steps": 8, "batch": 4, "lr": 1e-3}
    return {"vocab": 65, "embed": 64, "hidden": 128, "steps": 64, "batch": 32, "lr": 1e-3}


def build(lib: ModuleType, cfg: dict):
    """The model, written once against the torch API."""
    nn = lib.nn

    class CharLSTM(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embed = nn.Embedding(cfg["vocab"], cfg["embed"])
            self.lstm = nn.LSTM(cfg["embed"], cfg["hidden"], batch_first=True)
            self.head = nn.Linear(cfg["hidden"], cfg["vocab"])

        def forward(self, x):
            out, _ = self.lstm(self.embed(x))
            return self.head(out)

    return CharLSTM()


def setup(lib: ModuleType, cfg: dict, bank: WeightBank) -> Step:
    model = build(lib, cfg)
    bank.load(lib, model)
    shape = (cfg["batch"], cfg["steps"] + 1)
    text = bank.array("text", lambda r: r.integers(0, cfg["vocab"], shape, dtype=np.int64))
    x, y = lib.tensor(text[:, :-1].copy()), lib.tensor(text[:, 1:].reshape(-1).copy())
    loss_fn = lib.nn.CrossEntropyLoss()
    opt = lib.optim.Adam(model.parameters(), lr=cfg["lr"])
    return training_step(lambda: loss_fn(model(x).reshape(-1, cfg["vocab"]), y), opt)


WORKLOAD = Workload(
    name="char-lstm",
    unit="ms/step",
    requires=("nn.Embedding", "nn.LSTM", "nn.Linear", "nn.CrossEntropyLoss", "optim.Adam"),
    config=config,
    setup=setup,
    per_step=lambda sec, cfg: sec * 1e3,
    describe=lambda cfg: (f"embedding {cfg['embed']}, LSTM hidden {cfg['hidden']} over "
                          f"{cfg['steps']} steps, linear to {cfg['vocab']}, batch "
                          f"{cfg['batch']}, Adam"),
)
