"""``tapegrad.utils.tensorboard``: ``SummaryWriter`` writes TensorBoard event files (torch's API).

    from tapegrad.utils.tensorboard import SummaryWriter
    with SummaryWriter("runs/exp1") as writer:
        for step in range(100):
            writer.add_scalar("loss", loss.item(), step)
        writer.add_graph(model, x)          # drawn from tapegrad's autograd graph

The files are written through the ``tensorboard`` package (an optional dependency:
``pip install tapegrad[tensorboard]``), so TensorBoard and its event-file readers read them.
Importing this module without it raises ImportError saying so. The writer itself (and the
protocol buffers it needs) is imported on first use of ``SummaryWriter``, so importing this
module stays cheap.
"""

from __future__ import annotations

import importlib.util
from typing import Any

if importlib.util.find_spec("tensorboard") is None:
    raise ImportError(
        "TensorBoard logging requires the tensorboard package, which is not installed: "
        "pip install tapegrad[tensorboard]  (or: pip install tensorboard)"
    )

__all__ = ["FileWriter", "RecordWriter", "SummaryWriter"]


def __getattr__(name: str) -> Any:
    if name in ("FileWriter", "SummaryWriter"):
        from . import _writer  # _writer: loaded on first use (protobuf and the event writer)

        return getattr(_writer, name)
    if name == "RecordWriter":
        # tensorboard: loaded on first use
        from tensorboard.summary.writer.record_writer import RecordWriter

        return RecordWriter
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
