"""DistributedDataParallel's options, each a short training run, recorded for comparison.

The model's loss is ``(h * h).sum() + (x * w2).sum()``, ``h = x * w1``, on two rows per rank: its
gradients are elementwise products and one sum of two rows, which every library rounds the
same way, so the local gradients are the same bits on torch and tapegrad and what is compared
is DDP itself: the broadcast at construction, the bucketed averaging, the options, and SGD.
The learning rate and momentum are powers of two, so SGD's update rounds once on both.
"""

import os
import sys
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

sys.path.insert(0, os.path.dirname(__file__))
from common import out_dir, record, save  # noqa: E402

dist.init_process_group("gloo", timeout=timedelta(seconds=60))
rank, world = dist.get_rank(), dist.get_world_size()
F = 6


class Net(nn.Module):
    def __init__(self, unused: bool = False) -> None:
        super().__init__()
        torch.manual_seed(100 + rank)  # different on each rank: DDP copies rank 0's
        self.w1 = nn.Parameter(torch.randn(F))
        self.w2 = nn.Parameter(torch.randn(F))
        self.w3 = nn.Parameter(torch.randn(3)) if unused else None
        self.w4 = nn.Parameter(torch.randn(F)) if unused else None
        self.register_buffer("seen", torch.zeros(1))

    def forward(self, x):
        self.seen += rank + 1
        h = x * self.w1
        loss = (h * h).sum() + (x * self.w2).sum()
        if self.w4 is not None and rank == 0:  # w4: used on rank 0 only; w3: never
            loss = loss + (x * self.w4).sum()
        return loss


def dataset(n=80):
    g = torch.Generator().manual_seed(7)
    return TensorDataset(torch.randn(n, F, generator=g))


def state(model):
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def train(steps=20, batches=None, **options):
    model = DDP(Net(), **options)
    opt = torch.optim.SGD(model.parameters(), lr=2 ** -6, momentum=0.5)
    sampler = DistributedSampler(dataset(), shuffle=True, seed=3)
    loader = DataLoader(dataset(), batch_size=2, sampler=sampler)
    step = 0
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for (x,) in loader:
            opt.zero_grad()
            model(x).backward()
            opt.step()
            step += 1
            if step == steps:
                return model
    return model


record("train 20 steps", lambda: state(train()))


def whole_batch(steps=20):
    """One process, no DDP, each step on every rank's batch at once (the mean over ranks)."""
    torch.manual_seed(100)  # rank 0's initial values, which DDP gives every rank
    model = Net()
    model.w1.data.copy_(torch.manual_seed(100) and torch.randn(F))
    model.w2.data.copy_(torch.randn(F))
    opt = torch.optim.SGD(model.parameters(), lr=2 ** -6, momentum=0.5)
    samplers = [DistributedSampler(dataset(), world, r, shuffle=True, seed=3)
                for r in range(world)]
    step = 0
    for epoch in range(3):
        batches = []
        for s in samplers:
            s.set_epoch(epoch)
            idx = list(s)
            batches.append([idx[i:i + 2] for i in range(0, len(idx), 2)])
        for parts in zip(*batches, strict=True):
            x = torch.cat([dataset().tensors[0][p] for p in parts])
            opt.zero_grad()
            (model(x) / world).backward()
            opt.step()
            step += 1
            if step == steps:
                return {"w1": model.w1.detach(), "w2": model.w2.detach()}


record("one process whole batch", whole_batch)
record("train small buckets", lambda: state(train(steps=5, bucket_cap_mb=1e-5)))
record("train grad as bucket view", lambda: (
    lambda m: (state(m), [p.grad for p in m.parameters()]))(
        train(steps=5, gradient_as_bucket_view=True)))
record("construction broadcast", lambda: state(DDP(Net())))
record("state_dict keys", lambda: list(DDP(Net()).state_dict().keys()))
record("module attribute", lambda: type(DDP(Net()).module).__name__)


def no_sync():
    model = DDP(Net())
    x = dataset()[rank][0].unsqueeze(0)
    with model.no_sync():
        model(x).backward()
    local = [p.grad.clone() for p in model.parameters()]
    model(x * 2).backward()
    return local, [p.grad for p in model.parameters()]


record("no_sync", no_sync)


def require_sync_flag():
    model = DDP(Net())
    x = dataset()[rank][0].unsqueeze(0)
    model.require_backward_grad_sync = False
    model(x).backward()
    model.require_backward_grad_sync = True
    model(x).backward()
    return [p.grad for p in model.parameters()]


record("require_backward_grad_sync", require_sync_flag)


def unused():
    model = DDP(Net(unused=True), find_unused_parameters=True)
    out = []
    for i in range(2):
        model(dataset()[2 * i + rank][0].unsqueeze(0)).backward()
        out.append([None if p.grad is None else p.grad.clone() for p in model.parameters()])
    return out


record("find_unused_parameters", unused)


def buffers(flag):
    model = DDP(Net(), broadcast_buffers=flag)
    x = dataset()[rank][0].unsqueeze(0)
    for _ in range(2):
        model(x).backward()
    return model.module.seen.clone()


record("broadcast_buffers True", lambda: buffers(True))
record("broadcast_buffers False", lambda: buffers(False))


def join(divide):
    model = DDP(Net())
    opt = torch.optim.SGD(model.parameters(), lr=2 ** -6)
    data = dataset()
    with model.join(divide_by_initial_world_size=divide):
        for i in range(2 + rank):  # rank r has 2 + r batches
            opt.zero_grad()
            model(data[world * i + rank][0].unsqueeze(0)).backward()
            opt.step()
    return state(model)


record("join", lambda: join(True))
record("join divide by active", lambda: join(False))
record("device_ids on cpu", lambda: DDP(Net(), device_ids=[0]))
record("no parameters", lambda: DDP(nn.ReLU()))


def unfinished():
    model = DDP(Net(unused=True))
    x = dataset()[rank][0].unsqueeze(0)
    model(x).backward()
    model(x)


record("unused without find_unused_parameters", unfinished)
save(out_dir, rank)
dist.destroy_process_group()
