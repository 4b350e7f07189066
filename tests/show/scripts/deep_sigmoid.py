"""A 10-layer sigmoid MLP trained for a few steps: its first layer barely gets a gradient."""

import sys

import torch
import torch.nn as nn

torch.manual_seed(0)
steps = int(sys.argv[1]) if len(sys.argv) > 1 else 5
layers = []
for i in range(10):
    layers.append(nn.Linear(32, 32 if i < 9 else 1))
    if i < 9:
        layers.append(nn.Sigmoid())
model = nn.Sequential(*layers)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(64, 32)
y = torch.randn(64, 1)
for _ in range(steps):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
print("first layer grad norm", round(model[0].weight.grad.norm().item(), 12))
print("last layer grad norm", round(model[18].weight.grad.norm().item(), 6))
