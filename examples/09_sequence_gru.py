"""A recurrent network remembers: a GRU (or LSTM) learns the adding problem.

What it teaches: ``nn.GRU`` / ``nn.LSTM`` with ``batch_first=True``, using the last time step's
output for a prediction, gradients through time and ``clip_grad_norm_``. The task (Hochreiter and
Schmidhuber's adding problem): each sequence is 20 steps of a random number and a marker; two
steps are marked, and the target is the sum of the two marked numbers. Guessing the average sum
gives a mean squared error of 1/6 = 0.167; to do better the network must hold the marked
numbers in its state until the end. The GRU gets far below the guess; the same code with
``--lstm`` trains an LSTM.

    python examples/09_sequence_gru.py [--lstm]      (TAPEGRAD_EXAMPLES_QUICK=1: fewer steps)
"""

import os
import sys

import tapegrad as torch

nn = torch.nn
QUICK = os.environ.get("TAPEGRAD_EXAMPLES_QUICK") == "1"
STEPS, LENGTH, BATCH = (240 if QUICK else 600), 20, 64


def batch(n):
    values = torch.rand(n, LENGTH)
    marks = torch.zeros(n, LENGTH)
    first = torch.randint(0, LENGTH // 2, (n,))
    second = torch.randint(LENGTH // 2, LENGTH, (n,))
    rows = torch.arange(n)
    marks[rows, first] = 1.0
    marks[rows, second] = 1.0
    target = (values * marks).sum(dim=1, keepdim=True)
    return torch.stack([values, marks], dim=2), target   # (n, LENGTH, 2), (n, 1)


class Adder(nn.Module):
    def __init__(self, cell):
        super().__init__()
        self.rnn = cell(input_size=2, hidden_size=32, batch_first=True)
        self.out = nn.Linear(32, 1)

    def forward(self, x):
        outputs, _ = self.rnn(x)           # (batch, LENGTH, 32): the state after each step
        return self.out(outputs[:, -1])    # predict from the state after the last step


torch.manual_seed(0)
cell = nn.LSTM if "--lstm" in sys.argv else nn.GRU
model = Adder(cell)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
test_x, test_y = batch(512)
print(f"{cell.__name__}; guessing the mean gives MSE {((test_y - 1.0) ** 2).mean().item():.3f}")
for step in range(1, STEPS + 1):
    x, y = batch(BATCH)
    loss = nn.functional.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    if step % (STEPS // 6) == 0:
        with torch.no_grad():
            test = nn.functional.mse_loss(model(test_x), test_y).item()
        print(f"step {step:4d}  train MSE {loss.item():.4f}  test MSE {test:.4f}")
with torch.no_grad():
    x, y = batch(3)
    for pred, true in zip(model(x).flatten().tolist(), y.flatten().tolist(), strict=True):
        print(f"  sum of the marked numbers {true:.3f}, predicted {pred:.3f}")
