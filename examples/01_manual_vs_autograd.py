"""Manual derivative against autograd: the same gradient, computed twice.

What it teaches: for a one-weight linear model ``pred = w * x`` with mean squared error, the
derivative worked out by hand, ``dL/dw = mean(2 * (w*x - y) * x)``, is exactly what
``loss.backward()`` leaves in ``w.grad``; autograd just does the bookkeeping for any model.
A few steps of gradient descent with both show the same path to w = 2.

    python examples/01_manual_vs_autograd.py
"""

import tapegrad as torch

x = torch.tensor([1.0, 2.0, 3.0, 4.0])
y = torch.tensor([2.0, 4.0, 6.0, 8.0])  # y = 2x: the weight to find is 2

print("-- by hand --")
w = 0.5
for step in range(3):
    pred = w * x
    loss = ((pred - y) ** 2).mean()
    grad = (2 * (pred - y) * x).mean().item()  # dL/dw, derived on paper
    print(f"step {step}: w = {w:.4f}  loss = {loss.item():.4f}  dL/dw = {grad:.4f}")
    w = w - 0.01 * grad

print("-- with autograd --")
w_t = torch.tensor([0.5], requires_grad=True)
for step in range(3):
    loss = ((w_t * x - y) ** 2).mean()
    loss.backward()                      # fills w_t.grad with dL/dw
    print(f"step {step}: w = {w_t.item():.4f}  loss = {loss.item():.4f}  "
          f"dL/dw = {w_t.grad.item():.4f}")
    with torch.no_grad():                # the update itself is not part of the model
        w_t -= 0.01 * w_t.grad
    w_t.grad = None                      # start the next step from no gradient

print(f"the same: {abs(w - w_t.item()) < 1e-6}")
