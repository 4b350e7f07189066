"""``no_grad`` against ``inference_mode``: what each switches off, and what it costs (timed).

What it teaches: under ``torch.no_grad()`` operations record no graph, so evaluation is cheaper
and holds no intermediate tensors; the outputs are ordinary tensors that may later be used in
training. ``torch.inference_mode()`` goes further: its outputs are *inference tensors*, marked so
that autograd will never need them (no version counter, no view tracking), and using one in a
computation that records a graph is an error. Both give the same numbers; the timing shows the
graph that normal mode builds and the two modes skip.

    python examples/05_no_grad_vs_inference_mode.py          (TAPEGRAD_EXAMPLES_QUICK=1: fewer runs)
"""

import os
import time

import tapegrad as torch

QUICK = os.environ.get("TAPEGRAD_EXAMPLES_QUICK") == "1"
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.GELU(), torch.nn.Linear(256, 10))
x = torch.randn(64, 256)


def timed(label, context):
    runs = 5 if QUICK else 50
    with context():
        model(x)  # warm-up
        start = time.perf_counter()
        for _ in range(runs):
            out = model(x)
        ms = (time.perf_counter() - start) / runs * 1e3
    print(f"{label:<16} {ms:7.3f} ms per forward   requires_grad={out.requires_grad}  "
          f"is_inference={out.is_inference()}")
    return out


class normal:  # no context at all, for comparison
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


a = timed("normal", normal)
b = timed("no_grad", torch.no_grad)
c = timed("inference_mode", torch.inference_mode)
print("same numbers:", torch.equal(a.detach(), b) and torch.equal(b, c))

# a no_grad output can join training later; an inference tensor cannot
w = torch.ones(10, requires_grad=True)
(b * w).sum().backward()
print("no_grad output used in training: w.grad[:3] =", w.grad[:3])
try:
    (c * w).sum().backward()
except RuntimeError as err:
    print("inference tensor used in training:", err)
