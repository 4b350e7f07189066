"""Diagnosing vanishing gradients with per-layer gradient norms, and the ReLU fix.

What it teaches: a deep stack of sigmoids trains badly because the sigmoid's derivative is at
most 1/4, so every layer shrinks the gradient that passes back through it; the first layers
receive almost nothing. Printing each layer's gradient norm after ``backward`` shows it at once,
as a table that falls layer by layer towards the input. ReLU's derivative is 1 where it is
active, and with He initialisation (``kaiming_normal_``) the norms stay of one size; the loss
then falls where the sigmoid network's barely moves.

    python examples/07_vanishing_gradients.py          (TAPEGRAD_EXAMPLES_QUICK=1: fewer steps)
"""

import math
import os

import tapegrad as torch

QUICK = os.environ.get("TAPEGRAD_EXAMPLES_QUICK") == "1"
STEPS = 20 if QUICK else 100
DEPTH, WIDTH = 8, 32


def make(activation):
    torch.manual_seed(0)
    layers = []
    for _ in range(DEPTH):
        linear = torch.nn.Linear(WIDTH, WIDTH)
        if activation is torch.nn.ReLU:
            torch.nn.init.kaiming_normal_(linear.weight, nonlinearity="relu")
        layers += [linear, activation()]
    return torch.nn.Sequential(*layers, torch.nn.Linear(WIDTH, 4))


torch.manual_seed(1)
x = torch.randn(256, WIDTH)
y = (x[:, :4].argmax(dim=1))  # a task the network can learn: which of the first 4 is largest

for activation in (torch.nn.Sigmoid, torch.nn.ReLU):
    model = make(activation)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(STEPS):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        if step == 0:
            first_loss = loss.item()
            norms = [m.weight.grad.norm().item() for m in model if isinstance(m, torch.nn.Linear)]
        opt.step()
    print(f"{activation.__name__}: gradient norm of each Linear layer's weight (input first)")
    for i, n in enumerate(norms):
        print(f"  layer {i}: {n:.2e}  " + "#" * max(1, int(3 * (math.log10(n) + 8))))  # log scale
    print(f"  first / last layer: {norms[0] / norms[-1]:.1e}")
    print(f"  loss after {STEPS} steps: {first_loss:.3f} -> {loss.item():.3f}\n")
