"""One rank of a distributed benchmark (run by ``benchmarks/distributed.py``, never imported).

``python _distributed_rank.py KIND SIZE ITERATIONS REPEATS``, written against torch's API: on
torch it runs as is (gloo), on tapegrad under the launcher (``import torch`` is tapegrad).
Rank 0 prints one JSON line: the seconds of each repeat of ITERATIONS steps, the first
step's result (the loss, or the first reduced value) and, on tapegrad, the peak of one step's
allocations under tracemalloc.

* ``allreduce SIZE_BYTES``: ``dist.all_reduce`` of a float32 tensor of that many bytes;
* ``ddp BATCH``: one DistributedDataParallel training step of a 784-256-256-10 MLP (ReLU,
  cross-entropy, SGD) on BATCH rows per rank.
"""

import json
import sys
import time
import tracemalloc

import torch
import torch.distributed as dist

kind, size, iterations, repeats = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), \
    int(sys.argv[4])
dist.init_process_group("gloo")
rank = dist.get_rank()
first = None
if kind == "allreduce":
    t = torch.ones(size // 4)

    def step():
        dist.all_reduce(t)
        return t[0]

    first = float(step().item())
    t.fill_(1.0)
else:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(),
                                torch.nn.Linear(256, 256), torch.nn.ReLU(),
                                torch.nn.Linear(256, 10))
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    torch.manual_seed(1 + rank)
    x, y = torch.randn(size, 784), torch.randint(0, 10, (size,))

    def step():
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(ddp(x), y)
        loss.backward()
        opt.step()
        return loss

    first = float(step().item())
step()  # warm-up
peak = None
if torch.__name__ == "tapegrad":
    tracemalloc.start()
    step()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
seconds = []
for _ in range(repeats):
    dist.barrier()
    start = time.perf_counter()
    for _ in range(iterations):
        step()
    dist.barrier()
    seconds.append(time.perf_counter() - start)
if rank == 0:
    print("RESULT " + json.dumps({"seconds": seconds, "first_loss": first, "peak": peak}),
          flush=True)
dist.destroy_process_group()
