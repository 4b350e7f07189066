"""A rank that fails in one of several ways while the others wait in a collective.

``failing.py OUT MODE``: MODE is ``raise`` (rank 1 raises), ``die`` (rank 1 is killed by
SIGKILL), ``hang`` (rank 1 never joins; the group's timeout is 3 s), ``exit-early`` (rank 1
exits with status 3 before init_process_group), ``sleep`` (every rank sleeps a minute, to be
stopped by a signal), ``ok`` (every rank finishes).
"""

import os
import signal
import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist

mode = sys.argv[2]
rank = int(os.environ["RANK"])
if mode == "exit-early" and rank == 1:
    sys.exit(3)
dist.init_process_group("gloo", timeout=timedelta(seconds=3 if mode == "hang" else 60))
print(f"rank {rank} ready", flush=True)
if mode == "sleep":
    time.sleep(60)
if rank == 1:
    if mode == "raise":
        time.sleep(0.5)
        print(1 / 0)
    if mode == "die":
        time.sleep(0.5)
        os.kill(os.getpid(), signal.SIGKILL)
    if mode == "hang":
        time.sleep(60)
t = torch.ones(2)
dist.all_reduce(t)
print(f"rank {rank} sum {t.tolist()}", flush=True)
print(f"rank {rank} to stderr", file=sys.stderr, flush=True)
dist.destroy_process_group()
