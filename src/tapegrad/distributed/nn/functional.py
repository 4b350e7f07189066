"""Collectives with gradients (``torch.distributed.nn.functional``).

Each is an ``autograd.Function`` whose forward runs the collective on a copy of its input and
whose backward runs the collective that carries gradients back, as torch's:

    all_reduce(x)       forward  sum over ranks       backward  all_reduce(grad)
    broadcast(x, src)   forward  src's x everywhere   backward  reduce(grad) to src; 0 elsewhere
    all_gather(x)       forward  every rank's x       backward  reduce_scatter(grads)
    reduce_scatter      forward  rank i: sum of i-th  backward  all_gather(grad)
    all_to_all_single   forward  exchange of blocks   backward  the exchange reversed
    reduce(x, dst)      forward  sum into dst         backward  broadcast(grad) from dst
"""

from __future__ import annotations

from typing import Any

from ... import _creation
from ...autograd import Function
from .. import distributed_c10d as c10d
from ..distributed_c10d import ReduceOp

__all__ = ["all_gather", "all_reduce", "all_to_all_single", "broadcast", "reduce",
           "reduce_scatter"]


def _group(group: Any) -> Any:
    return group if group is not None else c10d.group.WORLD


class _AllReduce(Function):
    @staticmethod
    def forward(ctx: Any, op: Any, group: Any, tensor: Any) -> Any:
        ctx.group, ctx.op = group, op
        out = tensor.clone()
        c10d.all_reduce(out, op=op, group=group)
        return out

    @staticmethod
    def backward(ctx: Any, grad: Any) -> Any:
        return None, None, _AllReduce.apply(ctx.op, ctx.group, grad)


def all_reduce(tensor: Any, op: Any = ReduceOp.SUM, group: Any = None) -> Any:
    """The reduction of ``tensor`` over ranks (a new tensor); its gradient is all-reduced."""
    return _AllReduce.apply(op, _group(group), tensor)


class _Broadcast(Function):
    @staticmethod
    def forward(ctx: Any, src: int, group: Any, tensor: Any) -> Any:
        ctx.src, ctx.group = src, group
        ctx.rank = c10d.get_rank()
        out = tensor.clone()
        c10d.broadcast(out, src, group=group)
        return out

    @staticmethod
    def backward(ctx: Any, grad: Any) -> Any:
        gx = _Reduce.apply(ctx.src, ReduceOp.SUM, ctx.group, grad)
        if ctx.src != ctx.rank:
            gx = _creation.zeros_like(gx)
        return None, None, gx


def broadcast(tensor: Any, src: int, group: Any = None) -> Any:
    """Rank ``src``'s ``tensor`` on every rank; gradients are summed back into ``src``."""
    return _Broadcast.apply(src, _group(group), tensor)


class _Reduce(Function):
    @staticmethod
    def forward(ctx: Any, dst: int, op: Any, group: Any, tensor: Any) -> Any:
        ctx.dst, ctx.group = dst, group
        out = tensor.clone()
        c10d.reduce(out, dst, op=op, group=group)
        return out

    @staticmethod
    def backward(ctx: Any, grad: Any) -> Any:
        return None, None, None, _Broadcast.apply(ctx.dst, ctx.group, grad)


def reduce(tensor: Any, dst: int, op: Any = ReduceOp.SUM, group: Any = None) -> Any:
    """The reduction of ``tensor`` into rank ``dst``; the gradient is broadcast from ``dst``."""
    return _Reduce.apply(dst, op, _group(group), tensor)


class _AllGather(Function):
    @staticmethod
    def forward(ctx: Any, group: Any, tensor: Any) -> Any:
        ctx.group = group
        out = [_creation.empty_like(tensor) for _ in range(c10d.get_world_size(group))]
        c10d.all_gather(out, tensor.contiguous(), group=group)
        return tuple(out)

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        out = _creation.empty_like(grads[0])
        return None, _ReduceScatter.apply(ReduceOp.SUM, ctx.group, out, *grads)


def all_gather(tensor: Any, group: Any = None) -> tuple:
    """Every rank's ``tensor``, in rank order; gradients are reduce-scattered back."""
    return _AllGather.apply(_group(group), tensor)


class _ReduceScatter(Function):
    @staticmethod
    def forward(ctx: Any, op: Any, group: Any, output: Any, *inputs: Any) -> Any:
        ctx.group = group
        out = output.new_empty(output.shape)
        c10d.reduce_scatter(out, [t.contiguous() for t in inputs], op=op, group=group)
        return out

    @staticmethod
    def backward(ctx: Any, grad: Any) -> Any:
        return (None, None, None) + _AllGather.apply(ctx.group, grad)


def reduce_scatter(output: Any, input_list: list, op: Any = ReduceOp.SUM,
                   group: Any = None) -> Any:
    """Rank i gets the reduction of every rank's ``input_list[i]``; gradients are gathered."""
    return _ReduceScatter.apply(op, _group(group), output, *input_list)


class _AllToAllSingle(Function):
    @staticmethod
    def forward(ctx: Any, group: Any, output: Any, output_split_sizes: Any,
                input_split_sizes: Any, input: Any) -> Any:
        ctx.group = group
        ctx.input_size = input.shape
        ctx.output_split_sizes, ctx.input_split_sizes = input_split_sizes, output_split_sizes
        out = output.new_empty(output.shape)
        c10d.all_to_all_single(out, input.contiguous(), output_split_sizes=output_split_sizes,
                               input_split_sizes=input_split_sizes, group=group)
        return out

    @staticmethod
    def backward(ctx: Any, grad: Any) -> Any:
        out = grad.new_empty(ctx.input_size)
        return (None, None, None, None,
                _AllToAllSingle.apply(ctx.group, out, ctx.output_split_sizes,
                                      ctx.input_split_sizes, grad.contiguous()))


def all_to_all_single(output: Any, input: Any, output_split_sizes: Any = None,
                      input_split_sizes: Any = None, group: Any = None) -> Any:
    """``all_to_all_single`` into a new tensor shaped like ``output``; gradients go back by
    the reverse exchange."""
    return _AllToAllSingle.apply(_group(group), output, output_split_sizes, input_split_sizes,
                                 input)
