"""Gradients accumulate: why every training step starts with ``zero_grad``.

What it teaches: ``backward`` adds into ``.grad``, it does not overwrite it. Two backward passes
without clearing give twice the gradient (-7.50 becomes -15.00). That is a bug in an ordinary
loop, and a tool on purpose: summing the gradients of several small batches before one
``optimizer.step()`` trains as one large batch would (gradient accumulation), shown at the end.

    python examples/03_accumulation_and_zero_grad.py
"""

import tapegrad as torch

x = torch.tensor([1.0, 2.0])
y = torch.tensor([2.0, 4.0])
w = torch.tensor([0.5], requires_grad=True)


def loss_fn():
    return ((w * x - y) ** 2).mean()


loss_fn().backward()
print(f"after one backward:               w.grad = {w.grad.item():.4f}")
loss_fn().backward()
print(f"after a second, without clearing: w.grad = {w.grad.item():.4f}  (added up)")
w.grad.zero_()                         # what optimizer.zero_grad() does (it sets None by default)
loss_fn().backward()
print(f"cleared, then one backward:       w.grad = {w.grad.item():.4f}")

# Accumulation on purpose: 4 micro-batches of 2 samples = one batch of 8.
torch.manual_seed(0)
model = torch.nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
data, target = torch.randn(8, 3), torch.randn(8, 1)

opt.zero_grad()
torch.nn.functional.mse_loss(model(data), target).backward()
full = model.weight.grad.clone()

opt.zero_grad()
for xb, yb in zip(data.split(2), target.split(2), strict=True):
    # each micro-batch's mean loss is a quarter of the big batch's: scale it so
    (torch.nn.functional.mse_loss(model(xb), yb) / 4).backward()
print("one batch of 8:         ", [round(v, 5) for v in full.flatten().tolist()])
print("4 accumulated batches: ", [round(v, 5) for v in model.weight.grad.flatten().tolist()])
print("equal:", torch.allclose(full, model.weight.grad, atol=1e-6))
