"""``tapegrad.show``: autograd made visible.

- ``show.graph(t)``: the backward graph of ``t`` as a text tree and a picture (graph.py);
- ``with show.trace() as tr: loss.backward()``: one backward pass as the engine ran it, node
  by node, with the gradients that crossed every edge (trace.py);
- ``show.health(model)``: the gradient health check, a per-layer table and a diagnosis in
  words (health.py); ``show.Monitor(model, optimizer)`` records it at every step (monitor.py);
  ``show.plot_grad_norms(history, names)`` draws gradient norm per layer over the steps (the
  monitor's and ``tapegrad doctor``'s plot, and the demo's);
- ``show.report.write_report(path, graph=..., trace=..., figures=...)``: one self-contained
  HTML page to step through a backward pass on the picture (report.py);
- the texts in English and Chinese (i18n.py), and the ``tapegrad graph`` / ``tapegrad doctor``
  commands (_commands.py, doctor.py);
- ``show.precision_lab(steps)``: one small model trained in float32, float16, float16 with a
  GradScaler and bfloat16 autocast, side by side (precision.py, ``tapegrad precision``).
"""

from . import report
from .graph import INSTALL_HINT, GraphView, GraphvizMissing, graph
from .health import HealthReport, health, plot_grad_norms
from .monitor import Monitor
from .precision import PrecisionReport, precision_lab
from .trace import Trace, trace

__all__ = ["graph", "GraphView", "GraphvizMissing", "INSTALL_HINT", "trace", "Trace", "report",
           "HealthReport", "Monitor", "health", "plot_grad_norms", "precision_lab",
           "PrecisionReport"]
