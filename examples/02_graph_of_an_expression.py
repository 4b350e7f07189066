"""The graph autograd records for ``e = (a*b + 1)**2``, and how backward walks it.

What it teaches: every operation on a tensor that requires grad leaves a node, its ``grad_fn``
(``MulBackward0``, ``AddBackward0``, ``PowBackward0``), linked to the nodes of its inputs through
``next_functions``; the leaves ``a`` and ``b`` end in ``AccumulateGrad`` nodes, which is where
``.grad`` is written. Backward multiplies local derivatives along the chain:
de/da = 2(ab+1) * b = 42, de/db = 2(ab+1) * a = 28. When tapegrad.show is installed the graph
is also drawn to ``graph_ab.svg``.

    python examples/02_graph_of_an_expression.py [OUT_DIR]
"""

import os
import sys

import tapegrad as torch

a = torch.tensor([2.0], requires_grad=True)
b = torch.tensor([3.0], requires_grad=True)
c = a * b
d = c + 1.0
e = d ** 2

print("c =", c, " d =", d, " e =", e)


def walk(fn, depth=0):
    """Print the graph below ``fn``, one node per line."""
    name = type(fn).__name__
    if name == "AccumulateGrad":
        leaf = "a" if fn.variable is a else "b" if fn.variable is b else "?"
        name += f"  (writes {leaf}.grad)"
    print("  " * depth + name)
    for child, _ in fn.next_functions:
        if child is not None:
            walk(child, depth + 1)


print("the graph of e, from the output back to the leaves:")
walk(e.grad_fn)

e.backward()
print(f"de/da = {a.grad.item():.1f}   (2*(a*b+1)*b = 2*7*3)")
print(f"de/db = {b.grad.item():.1f}   (2*(a*b+1)*a = 2*7*2)")

try:
    from tapegrad import show
except ImportError:
    show = None
if show is not None:
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    path = os.path.join(out, "graph_ab.svg")
    show.graph(a * b + 1, params={"a": a, "b": b}).render(path)
    print(f"picture: {path}")
