"""The order in which an all_reduce adds three ranks' float32 values (docs/guide/distributed.md).

Each rank all-gathers the inputs and records, for each third of the tensor, which of the
three orders of addition gives the reduced values bit for bit."""

import os
import sys

import numpy as np
import torch
import torch.distributed as dist

sys.path.insert(0, os.path.dirname(__file__))
from common import out_dir, record, save  # noqa: E402

dist.init_process_group("gloo")
rank = dist.get_rank()
n = 3 * 4096


def orders():
    t = torch.randn(n, generator=torch.Generator().manual_seed(rank))
    parts = [torch.zeros(n) for _ in range(3)]
    dist.all_gather(parts, t)
    dist.all_reduce(t)
    x0, x1, x2 = (p.numpy() for p in parts)
    s = t.numpy()
    candidates = {"(x0+x1)+x2": (x0 + x1) + x2, "(x1+x2)+x0": (x1 + x2) + x0,
                  "(x2+x0)+x1": (x2 + x0) + x1}
    thirds = []
    for i in range(3):
        part = slice(i * n // 3, (i + 1) * n // 3)
        thirds.append([k for k, v in candidates.items() if np.array_equal(v[part], s[part])])
    return thirds


record("orders", orders)
save(out_dir, rank)
dist.destroy_process_group()
