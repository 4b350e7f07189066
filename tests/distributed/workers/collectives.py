"""Every collective, on every dtype and ReduceOp, with async_op on and off; errors included.

With 2 ranks the inputs are random floats: a sum of two values has one result, so torch's
gloo and tapegrad must agree bit for bit. With 3 ranks the order in which gloo and MPI add
three values differs (docs/guide/distributed.md), so the inputs are small integers, whose sums
are exact in any order.
"""

import os
import sys
from datetime import timedelta

import numpy as np
import torch
import torch.distributed as dist

sys.path.insert(0, os.path.dirname(__file__))
from common import out_dir, record, save  # noqa: E402

dist.init_process_group("gloo", timeout=timedelta(seconds=60))
rank, world = dist.get_rank(), dist.get_world_size()
O = dist.ReduceOp
DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int32,
          torch.int8, torch.uint8, torch.bool, torch.complex64]


def data(seed: int, shape=(5,), dtype=torch.float32, who: int = None):
    """The same values on both libraries: NumPy draws, per (seed, rank)."""
    rs = np.random.RandomState(seed * 100 + (rank if who is None else who))
    if dtype == torch.bool:
        return torch.from_numpy(rs.rand(*shape) > 0.5)
    if dtype.is_floating_point or dtype.is_complex:
        if world == 2:
            a = np.asarray(rs.randn(*shape), dtype=np.float64)
        else:
            a = np.asarray(rs.randint(-4, 5, size=shape), dtype=np.float64)
        t = torch.from_numpy(a)
        if dtype.is_complex:
            t = torch.complex(t, torch.from_numpy(rs.randn(*shape) if world == 2 else
                                                  rs.randint(-4, 5, size=shape) * 1.0))
        return t.to(dtype)
    return torch.from_numpy(rs.randint(1, 6, size=shape)).to(dtype)


def with_wait(fn):
    """Run a collective, then the same with async_op=True and wait()."""
    def both(**kw):
        return fn(async_op=False, **kw), fn(async_op=True, **kw)
    return both


for i, dt in enumerate(DTYPES):
    for op in [O.SUM, O.AVG, O.PRODUCT, O.MIN, O.MAX, O.BAND, O.BOR, O.BXOR]:
        def f(dt=dt, op=op, i=i):
            t = data(i, dtype=dt)
            dist.all_reduce(t, op=op)
            u = data(i, dtype=dt)
            w = dist.all_reduce(u, op=op, async_op=True)
            done = w.wait()
            return t, u, done, w.is_completed()
        record(f"all_reduce {dt} {op}", f)

record("all_reduce noncontiguous", lambda: (lambda t: (dist.all_reduce(t), t)[1])(
    data(20, (4, 3)).t()))
record("all_reduce 2d", lambda: (lambda t: (dist.all_reduce(t, O.MAX), t)[1])(data(21, (3, 4))))
record("all_reduce 0d", lambda: (lambda t: (dist.all_reduce(t), t)[1])(data(22, ())))
record("all_reduce not tensor", lambda: dist.all_reduce([1, 2]))

for src in range(world):
    def bc(src=src):
        t = data(30)
        dist.broadcast(t, src=src)
        u = data(31, dtype=torch.int64)
        dist.broadcast(u, src=src, async_op=True).wait()
        return t, u
    record(f"broadcast src={src}", bc)
record("broadcast group_src", lambda: (lambda t: (dist.broadcast(t, group_src=world - 1), t)[1])(
    data(32)))
record("broadcast bad src", lambda: dist.broadcast(data(33), src=world + 3))

for dst in range(world):
    for op in [O.SUM, O.MAX, O.PRODUCT]:
        def rd(dst=dst, op=op):
            t = data(40, dtype=torch.float32)
            dist.reduce(t, dst=dst, op=op)
            return t if rank == dst else None
        record(f"reduce dst={dst} {op}", rd)

for i, dt in enumerate([torch.float32, torch.int64, torch.bfloat16, torch.bool]):
    def ag(dt=dt, i=i):
        out = [torch.zeros(3, dtype=dt) for _ in range(world)]
        dist.all_gather(out, data(50 + i, (3,), dt))
        out2 = [torch.zeros(3, dtype=dt) for _ in range(world)]
        dist.all_gather(out2, data(50 + i, (3,), dt), async_op=True).wait()
        return out, out2
    record(f"all_gather {dt}", ag)
record("all_gather 2d", lambda: (lambda o: (dist.all_gather(o, data(55, (2, 3))), o)[1])(
    [torch.zeros(2, 3) for _ in range(world)]))

record("all_gather_into_tensor cat", lambda: (lambda o: (
    dist.all_gather_into_tensor(o, data(60, (2, 3))), o)[1])(torch.zeros(2 * world, 3)))
record("all_gather_into_tensor stack", lambda: (lambda o: (
    dist.all_gather_into_tensor(o, data(61, (2, 3))), o)[1])(torch.zeros(world, 2, 3)))
record("all_gather_into_tensor async", lambda: (lambda o: (
    dist.all_gather_into_tensor(o, data(62, (4,)), async_op=True).wait(), o)[1])(
    torch.zeros(world * 4)))


def objs():
    out = [None] * world
    dist.all_gather_object(out, {"rank": rank, "x": [rank] * (rank + 1)})
    return out


record("all_gather_object", objs)

for dst in range(world):
    def ga(dst=dst):
        lst = [torch.zeros(3) for _ in range(world)] if rank == dst else None
        dist.gather(data(70, (3,)), gather_list=lst, dst=dst)
        return lst
    record(f"gather dst={dst}", ga)
# (a gather_list on a non-destination rank is an error raised before any message is sent;
# the destination would then wait for that rank, so it is checked with every rank wrong)
record("gather list missing on dst", lambda: dist.gather(data(71, (3,)), dst=rank))


def go():
    out = [None] * world if rank == 0 else None
    dist.gather_object({"r": rank}, out, dst=0)
    return out


record("gather_object", go)

for src in range(world):
    def sc(src=src):
        t = torch.zeros(2, 2)
        lst = [data(80 + k, (2, 2), who=src) for k in range(world)] if rank == src else None
        dist.scatter(t, scatter_list=lst, src=src)
        return t
    record(f"scatter src={src}", sc)


def sol():
    out = [None]
    dist.scatter_object_list(out, [{"to": k} for k in range(world)] if rank == 0 else None, src=0)
    return out


record("scatter_object_list", sol)

for op in [O.SUM, O.MAX, O.AVG]:
    def rs(op=op):
        t = torch.zeros(3)
        dist.reduce_scatter(t, [data(90 + k, (3,)) for k in range(world)], op=op)
        u = torch.zeros(2)
        dist.reduce_scatter_tensor(u, data(95, (2 * world,)), op=op)
        v = torch.zeros(2)
        dist.reduce_scatter_tensor(v, data(96, (2 * world,)), op=op, async_op=True).wait()
        return t, u, v
    record(f"reduce_scatter {op}", rs)


def a2a():
    out = [torch.zeros(2) for k in range(world)]
    dist.all_to_all(out, [data(100 + k, (2,)) for k in range(world)])
    return out


record("all_to_all", a2a)
record("all_to_all sizes", lambda: dist.all_to_all([torch.zeros(k + 1) for k in range(world)],
                                                   [torch.zeros(1) for k in range(world)]))


def a2a_single():
    out = torch.zeros(2 * world, 2)
    dist.all_to_all_single(out, data(110, (2 * world, 2)))
    return out


record("all_to_all_single", a2a_single)


def a2a_split():
    # rank r sends k+1 rows to rank k; receives r+1 rows from each
    inp = data(111, (sum(k + 1 for k in range(world)), 2))
    out = torch.zeros((rank + 1) * world, 2)
    dist.all_to_all_single(out, inp, output_split_sizes=[rank + 1] * world,
                           input_split_sizes=[k + 1 for k in range(world)])
    return out


record("all_to_all_single splits", a2a_split)


def bol():
    lst = [rank, "x" * rank, {"k": rank}] if rank == 1 else [None, None, None]
    dist.broadcast_object_list(lst, src=1)
    return lst


record("broadcast_object_list", bol)


def p2p():
    t = data(120, (3,))
    if rank == 0:
        dist.send(t, dst=1)
        got = torch.zeros(3)
        sender = dist.recv(got, src=1)
        return got, sender
    if rank == 1:
        got = torch.zeros(3)
        sender = dist.recv(got, src=0)
        dist.send(t, dst=0)
        return got, sender
    return None


record("send recv", p2p)


def ip2p():
    nxt, prv = (rank + 1) % world, (rank - 1) % world
    got = torch.zeros(3)
    ops = [dist.P2POp(dist.isend, data(121, (3,)), nxt), dist.P2POp(dist.irecv, got, prv)]
    for w in dist.batch_isend_irecv(ops):
        w.wait()
    got2 = torch.zeros(2, dtype=torch.int64)
    reqs = [dist.isend(data(122, (2,), torch.int64), dst=nxt), dist.irecv(got2, src=prv)]
    for w in reqs:
        w.wait()
    return got, got2


record("isend irecv batch", ip2p)
record("p2p op bad", lambda: dist.P2POp(dist.send, torch.zeros(1), 0))
record("send to self", lambda: dist.send(torch.zeros(1), dst=rank))


def groups():
    g = dist.new_group([0, world - 1])
    out = {"ranks": dist.get_process_group_ranks(g) if rank in (0, world - 1) else None,
           "rank": dist.get_rank(g), "size": dist.get_world_size(g)}
    if rank in (0, world - 1):
        t = data(130, (3,))
        dist.all_reduce(t, group=g)
        out["sum"] = t
        t2 = data(131, (2,))
        dist.broadcast(t2, src=world - 1, group=g)
        out["bcast"] = t2
        out["global"] = dist.get_global_rank(g, 1)
        out["group_rank"] = dist.get_group_rank(g, world - 1)
    return out


record("new_group", groups)


def autograd_collectives():
    """torch.distributed.nn.functional: each collective's forward and its gradient."""
    import torch.distributed.nn.functional as dnn

    out = {}
    x = data(140, (3,)).requires_grad_()
    y = dnn.all_reduce(x * 2)
    (y * data(141, (3,))).sum().backward()
    out["all_reduce"] = (y, x.grad)
    x = data(142, (3,)).requires_grad_()
    y = dnn.broadcast(x * 1, src=world - 1)
    (y * data(143, (3,))).sum().backward()
    out["broadcast"] = (y, x.grad)
    x = data(144, (2,)).requires_grad_()
    ys = dnn.all_gather(x * 1)
    sum((t * (k + 1)).sum() for k, t in enumerate(ys)).backward()
    out["all_gather"] = (list(ys), x.grad)
    xs = [data(145 + k, (2,)).requires_grad_() for k in range(world)]
    y = dnn.reduce_scatter(torch.zeros(2), [t * 1 for t in xs])
    (y * data(150, (2,))).sum().backward()
    out["reduce_scatter"] = (y, [t.grad for t in xs])
    x = data(151, (2 * world,)).requires_grad_()
    y = dnn.all_to_all_single(torch.zeros(2 * world), x * 1)
    (y * data(152, (2 * world,))).sum().backward()
    out["all_to_all_single"] = (y, x.grad)
    return out


record("distributed.nn.functional", autograd_collectives)
record("barrier", lambda: (dist.barrier(), dist.barrier(async_op=True).wait()))
record("monitored_barrier", lambda: dist.monitored_barrier(timeout=timedelta(seconds=30)))
record("names", lambda: (dist.is_initialized(), dist.get_backend(), dist.get_world_size(),
                         str(O.SUM), repr(O.MAX), dist.Backend("GLOO"), dist.is_available(),
                         int(O.BXOR)))
record("init twice", lambda: dist.init_process_group("gloo"))
record("reduce op type", lambda: dist.all_reduce(torch.zeros(1), op="sum"))
save(out_dir, rank)
dist.barrier()
dist.destroy_process_group()
record("after destroy", lambda: (dist.is_initialized(), dist.get_rank()))
save(out_dir, rank)
