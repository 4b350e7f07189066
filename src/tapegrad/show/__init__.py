"""``tapegrad.show``: autograd made visible.

- ``show.graph(t)``: the backward graph of ``t`` as a text tree and a picture (graph.py);
- ``with show.trace() as tr: loss.backward()``: one backward pass as the engine ran it, node
  by node, with the gradients that crossed every edge (trace.py);
- ``show.report.write_report(path, graph=..., trace=...)``: one self-contained HTML page to
  step through a backward pass on the picture (report.py).
"""

from . import report
from .graph import INSTALL_HINT, GraphView, GraphvizMissing, graph
from .trace import Trace, trace

__all__ = ["graph", "GraphView", "GraphvizMissing", "INSTALL_HINT", "trace", "Trace", "report"]
