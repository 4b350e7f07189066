"""Second derivatives: ``autograd.grad(create_graph=True)``, and why ``backward`` twice prints 24.

What it teaches: with ``create_graph=True`` the backward pass is itself recorded, so the first
derivative is a tensor with a ``grad_fn`` that can be differentiated again. For y = x**3 at x = 2:
dy/dx = 3x**2 = 12 and d2y/dx2 = 6x = 12.

``torch.autograd.grad`` returns the derivative without touching ``.grad``: asking it for the
derivative of dy/dx gives 12, as expected.

With ``y.backward(create_graph=True)`` the first derivative lands in ``x.grad`` (12). Calling
``x.grad.backward()`` (or a clone of it) then *adds* the second derivative, 12, into ``x.grad``,
which already holds the first: the printed value is 12 + 12 = 24. Gradients accumulate (example
03); clear ``x.grad`` between the two calls, and the second derivative alone (12) is left.

    python examples/06_second_derivatives.py
"""

import tapegrad as torch

x = torch.tensor(2.0, requires_grad=True)
y = x ** 3

(dy,) = torch.autograd.grad(y, x, create_graph=True)
print("autograd.grad:  dy/dx =", dy.item(), "  grad_fn:", type(dy.grad_fn).__name__)
(d2y,) = torch.autograd.grad(dy, x, retain_graph=True)  # dy's graph is used again below
print("autograd.grad:  d2y/dx2 =", d2y.item(), "  x.grad is still", x.grad)

y = x ** 3
y.backward(create_graph=True)
first = x.grad.clone()
print("backward:       x.grad after y.backward(create_graph=True) =", first.item())
first.backward()
print("backward again: x.grad =", x.grad.item(), " (12 already there + 12 from the second)")

x.grad = None
y = x ** 3
y.backward(create_graph=True)
first = x.grad
x.grad = None                # keep the first derivative, clear the accumulator
first.backward()
print("cleared first:  x.grad =", x.grad.item(), " (the second derivative alone)")

# the third derivative, for good measure: d3y/dx3 = 6
(d3y,) = torch.autograd.grad(torch.autograd.grad(dy, x, create_graph=True)[0], x)
print("d3y/dx3 =", d3y.item())
