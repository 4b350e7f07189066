"""One rank per launcher (``--nnodes 2``), or ranks started one by one with an init_method:
they meet through the store and MPI's connect/accept, then all-reduce and all-gather."""

import os
import sys
from datetime import timedelta

import torch
import torch.distributed as dist

method = sys.argv[2] if len(sys.argv) > 2 else "env://"
kwargs = {}
if method != "env://":
    kwargs = dict(rank=int(os.environ["RANK"]), world_size=int(os.environ["WORLD_SIZE"]))
dist.init_process_group("gloo", init_method=method, timeout=timedelta(seconds=60), **kwargs)
rank, world = dist.get_rank(), dist.get_world_size()
t = torch.tensor([float(rank + 1)])
dist.all_reduce(t)
names = [None] * world
dist.all_gather_object(names, f"r{rank}")
print(f"rank {rank}/{world} sum {t.item()} {names}", flush=True)
dist.destroy_process_group()
