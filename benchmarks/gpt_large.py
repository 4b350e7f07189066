"""gpt-large: the gpt workload's model at d_model 256, 6 blocks, 8 heads, context 128.

The same code as ``gpt.py`` (``nn.Embedding``, ``nn.LayerNorm``, ``nn.Linear``,
``F.scaled_dot_product_attention(is_causal=True)``, ``nn.GELU``, cross-entropy, ``optim.Adam``
lr 3e-4), large enough that the matrix products should dominate a step: the notes report the
share of a tapegrad (eager) step spent inside them. A step takes a good part of a second, so
it is timed over fewer repeats than the small workloads (its ``timing``). Reported in ms per
step.
"""

from __future__ import annotations

from ._harness import Timing, Workload
from .gpt import WORKLOAD as GPT
from .gpt import setup


def config(quick: bool) -> dict:
    if quick:
        return {"n_layer": 2, "d_model": 32, "n_head": 4, "context": 8, "vocab": 65,
                "batch": 2, "lr": 3e-4}
    return {"n_layer": 6, "d_model": 256, "n_head": 8, "context": 128, "vocab": 65,
            "batch": 4, "lr": 3e-4}


WORKLOAD = Workload(
    name="gpt-large",
    unit="ms/step",
    requires=GPT.requires,
    config=config,
    setup=setup,
    per_step=lambda sec, cfg: sec * 1e3,
    describe=GPT.describe,
    timing=Timing(warmup=1, repeats=3, min_repeat_s=0.0),
    matmul_ops=("mm", "addmm", "bmm", "baddbmm", "squeeze_matmul"),
)
