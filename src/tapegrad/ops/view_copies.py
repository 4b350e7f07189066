"""The copying forms of the view ops and a few more shape ops: ``permute_copy``,
``view_copy``, ``unbind_copy``... (torch's ``*_copy`` functions: the view's values in fresh
memory), ``Tensor.unfold`` (sliding windows), ``split_with_sizes``, ``unsafe_split`` /
``unsafe_chunk``, ``sum_to_size``, ``fill`` / ``fill_`` / ``zero_`` as functions.

A ``*_copy`` op records the view's node with ``_copy`` appended (``PermuteBackward0_copy``), as
torch does, and its backward is the view's: the rule runs the view on a zero tensor under grad
mode and takes its vector-Jacobian product, which is linear in the gradient, so second
derivatives follow. One registry entry is made per node name, on first use.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _signatures
from .._tensor import Tensor, _wrap_dim
from ..autograd import grad as autograd_grad
from ..autograd.grad_mode import _state, enable_grad, no_grad
from . import complex as complex_ops
from . import shape as S
from ._registry import REGISTRY, defop
from ._tangents import linear_tangent
from .indexing import gradient_into_zeros
from .scatter import index_add

# the registry entries made so far (their tests: the *_copy OpInfo entries, test_opinfo.py)
NAMES: set[str] = set()


def _copy_entry(fname: str, node: str, view_fn: Any, outputs: int) -> Any:
    key = f"{fname}:{node}"
    op = REGISTRY.get(key)
    if op is not None:
        return op
    NAMES.add(key)

    def forward(x: np.ndarray, *, args: tuple, kwargs: dict) -> Any:
        res = view_fn(Tensor._make(x), *args, **kwargs)
        # (contiguous copies, as torch's *_copy kernels return)
        if isinstance(res, (tuple, list)):
            return tuple(np.array(r._data, copy=True, order="C") for r in res)
        return np.array(res._data, copy=True, order="C")

    op = defop(key, node=node, outputs=outputs)(forward)

    @op.backward
    def view_copy_backward(ctx: Any, grad: Any) -> tuple:  # the view's vector-Jacobian product
        shape, num = ctx.input_meta[0]
        x0 = Tensor._make(np.zeros(shape, dtype=_dtype_of(num))).requires_grad_()
        with enable_grad():
            y = view_fn(x0, *ctx.params["args"], **ctx.params["kwargs"])
        ys = list(y) if isinstance(y, (tuple, list)) else [y]
        gs = list(grad) if isinstance(grad, (tuple, list)) else [grad]
        pairs = [(a, g) for a, g in zip(ys, gs, strict=False) if g is not None]
        (gx,) = autograd_grad([a for a, _ in pairs], [x0], [g for _, g in pairs],
                              create_graph=True, allow_unused=True)
        return (gx,)

    return op


def _dtype_of(num: int) -> np.dtype:
    for t in (np.float64, np.float32, np.float16, np.complex64, np.complex128):
        if np.dtype(t).num == num:
            return np.dtype(t)
    return np.dtype(np.float64)


def _grad_enabled() -> bool:
    return bool(_state.enabled)


def _fresh(t: Tensor) -> Tensor:
    """A contiguous copy (what torch's *_copy kernels return, whatever the view's layout)."""
    return Tensor._make(np.array(t._data, copy=True, order="C"))


def _copying(fname: str, view_fn: Any) -> Any:
    """torch.<fname>: ``view_fn``'s result in fresh memory, with the view's node + _copy."""

    def fn(input: Tensor, *args: Any, **kwargs: Any) -> Any:
        if fname == "view_as_complex_copy" and input._requires_grad and _grad_enabled():
            raise RuntimeError("view_as_complex_copy does not support automatic "
                               "differentiation for outputs with complex dtype.")
        probe = (input.detach().requires_grad_() if input.dtype.is_floating_point
                 or input.dtype.is_complex else None)
        if probe is None:  # no gradient: no node to name
            with no_grad():
                res = view_fn(input, *args, **kwargs)
            if isinstance(res, (tuple, list)):
                return tuple(_fresh(r) for r in res)
            return _fresh(res)
        with enable_grad():
            y = view_fn(probe, *args, **kwargs)
        first = y[0] if isinstance(y, (tuple, list)) else y
        node = type(first.grad_fn).__name__ + "_copy" if first.grad_fn is not None else None
        if node is None:  # a view without a node (alias of an alias): a plain copy
            res = view_fn(input, *args, **kwargs)
            return tuple(r.clone() for r in res) if isinstance(res, (tuple, list)) else \
                res.clone()
        outputs = len(y) if isinstance(y, (tuple, list)) else 1
        op = _copy_entry(fname, node, view_fn, outputs if outputs != 1 or not isinstance(
            y, (tuple, list)) else 1)
        res = op(input, args=args, kwargs=kwargs)
        if outputs == 1 and isinstance(y, (tuple, list)):
            res = (res,)
        return res

    fn.__name__ = fname
    fn.__doc__ = f"torch.{fname}: the result of torch.{fname[:-5]} in fresh memory."
    return fn


def _unfold_view(input: Tensor, dimension: int, size: int, step: int) -> Tensor:
    return unfold(input, dimension, size, step)


@defop("unfold", node="UnfoldBackward0", view=True)
def _unfold(x: np.ndarray, *, dim: int, size: int, step: int) -> np.ndarray:
    if x.ndim == 0:
        return x.reshape(1)
    # a view, as torch's: the windows overlap in memory when step < size
    win = np.lib.stride_tricks.sliding_window_view(x, size, axis=dim, writeable=True)
    return win[(slice(None),) * dim + (slice(None, None, step),)]


@_unfold.backward
def unfold_backward(ctx: Any, grad: Tensor) -> tuple:
    # each window's gradient added back where it lay
    p = ctx.params

    def add(zeros: Tensor) -> Tensor:
        d, size, step = p["dim"], p["size"], p["step"]
        nw = grad.shape[d]
        idx = (np.arange(nw)[:, None] * step + np.arange(size)[None, :]).reshape(-1)
        g = grad.movedim(-1, d + 1)
        g = g.reshape(tuple(g.shape[:d]) + (nw * size,) + tuple(g.shape[d + 2:]))
        return index_add(zeros, d, Tensor._make(idx.astype(np.int64)), g)

    return gradient_into_zeros(ctx, grad, add)


def unfold(input: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """Tensor.unfold: the windows of ``size`` every ``step`` along ``dimension``, as a new last
    dimension."""
    d = _wrap_dim(dimension, input.ndim)  # (0 or -1 for a 0-d tensor)
    n = input.shape[d] if input.ndim else 1
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is "
                           f"{size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    return _unfold(input, dim=d, size=int(size), step=int(step))


_unsafe_split = defop("unsafe_split", node="UnsafeSplitBackward0", outputs=-1)(
    S._split_forward)
_unsafe_split.backward(S.split_backward)


def split_with_sizes(input: Tensor, split_sizes: Any, dim: int = 0) -> tuple:
    return S.split(input, list(split_sizes), dim)


def unsafe_split(input: Tensor, split_size: Any, dim: int = 0) -> tuple:
    """split, whose pieces torch lets be modified in place (a copy here, as far as memory
    goes)."""
    views = S.split(input, split_size, dim)
    d = _wrap_dim(dim, input.ndim)
    sizes = tuple(v.shape[d] for v in views)
    return _unsafe_split(input, dim=d, sizes=sizes)


_unsafe_split_sizes = defop("unsafe_split_with_sizes", node="UnsafeSplitWithSizesBackward0",
                            outputs=-1)(S._split_forward)
_unsafe_split_sizes.backward(S.split_backward)


def unsafe_split_with_sizes(input: Tensor, split_sizes: Any, dim: int = 0) -> tuple:
    """split_with_sizes, whose pieces torch lets be modified in place (copies here)."""
    views = split_with_sizes(input, split_sizes, dim)  # torch's checks
    d = _wrap_dim(dim, input.ndim)
    return _unsafe_split_sizes(input, dim=d, sizes=tuple(v.shape[d] for v in views))


def unsafe_chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple:
    views = S.chunk(input, chunks, dim)
    d = _wrap_dim(dim, input.ndim)
    sizes = tuple(v.shape[d] for v in views)
    return _unsafe_split(input, dim=d, sizes=sizes)


def sum_to_size(input: Tensor, *size: Any) -> Tensor:
    """Sum dims so that the result has ``size`` (which must expand to the input's shape)."""
    if len(size) == 1 and isinstance(size[0], (list, tuple)):
        size = tuple(size[0])
    size = tuple(int(s) for s in size)
    if not size:  # torch: everything summed
        return input.sum()
    shape = tuple(input.shape)
    lead = len(shape) - len(size)
    ok = lead >= 0 and all(s in (1, n) for s, n in zip(size, shape[lead:], strict=True))
    if not ok:
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(shape)}}}.")
    dims = [i for i in range(len(shape)) if i < lead or (size[i - lead] == 1 and
                                                          shape[i] != 1)]
    if not dims:
        return input
    r = input.sum(dims, keepdim=True)
    return r.view(size) if lead else r


@defop("narrow_copy", node="NarrowCopyBackward0")
def _narrow_copy(x: np.ndarray, *, dim: int, start: int, length: int) -> np.ndarray:
    return np.array(x[(slice(None),) * dim + (slice(start, start + length),)], copy=True)


@_narrow_copy.backward
def narrow_copy_backward(ctx: Any, grad: Tensor) -> tuple:
    # the gradient where the copy was taken, zeros else
    p = ctx.params
    key = (slice(None),) * p["dim"] + (slice(p["start"], p["start"] + p["length"]),)
    return (S._embed(grad, ctx.input_shapes[0], key),)


_narrow_copy.jvp(linear_tangent(_narrow_copy))


@defop("detach_copy", node="NotImplemented")
def _detach_copy(x: np.ndarray) -> np.ndarray:
    return np.array(x, copy=True)


@_detach_copy.backward
def detach_copy_backward(ctx: Any, grad: Tensor) -> tuple:
    # torch 2.13 declares no derivative for it
    raise RuntimeError("derivative for aten::detach_copy is not implemented")


NAMES.add("detach_copy")


def detach_copy(input: Tensor) -> Tensor:
    """``input.detach()`` in fresh memory. As in torch, the result of an input that requires
    grad still requires grad, through a node whose backward raises."""
    res = _detach_copy(input)
    return res


def narrow_copy(input: Tensor, dim: int, start: Any, length: int) -> Tensor:
    """``input.narrow(dim, start, length)`` in fresh memory (its own node, as in torch)."""
    if input.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if dim >= input.ndim:
        raise RuntimeError("Expected dim < static_cast<int64_t>(self_sizes.size()) to be true, "
                           "but got false.  (Could this error message be improved?  If so, "
                           "please report an enhancement request to PyTorch.)")
    d = _wrap_dim(dim, input.ndim)
    size = input._data.shape[d]
    start = int(start)
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], "
                         f"but got {start})")
    if start < 0:
        start += size
    length = int(length)
    if length < 0 or start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size "
                           f"({size}).")
    res = _narrow_copy(input, dim=d, start=start, length=length)
    return res


METHODS = {"unfold": unfold, "split_with_sizes": split_with_sizes,
           "unsafe_split": unsafe_split, "unsafe_chunk": unsafe_chunk,
           "sum_to_size": sum_to_size, "narrow_copy": narrow_copy,
           "unsafe_split_with_sizes": unsafe_split_with_sizes}

_VIEWS: dict[str, Any] = {
    "alias_copy": lambda x: S.alias(x),
    "as_strided_copy": lambda x, size, stride, storage_offset=None: S.as_strided(
        x, size, stride, storage_offset),
    "diagonal_copy": lambda x, offset=0, dim1=0, dim2=1: x.diagonal(offset, dim1, dim2),
    "expand_copy": lambda x, size, *, implicit=False: x.expand(*size),
    "permute_copy": lambda x, dims: x.permute(*dims),
    "squeeze_copy": lambda x, dim=None: x.squeeze(dim),
    "t_copy": lambda x: x.t(),
    "transpose_copy": lambda x, dim0, dim1: x.transpose(dim0, dim1),
    "unbind_copy": lambda x, dim=0: x.unbind(dim),
    "unfold_copy": lambda x, dimension, size, step: unfold(x, dimension, size, step),
    "unsqueeze_copy": lambda x, dim: x.unsqueeze(dim),
    "view_copy": lambda x, size=None, *, dtype=None: x.view(size if dtype is None else dtype),
    "split_with_sizes_copy": lambda x, split_sizes, dim=0: split_with_sizes(x, split_sizes,
                                                                            dim),
    "select_copy": lambda x, dim, index: x.select(dim, index),
    "slice_copy": lambda x, dim=0, start=None, end=None, step=1: x[
        (slice(None),) * _wrap_dim(dim, x.ndim) + (slice(start, end, step),)],
    "split_copy": lambda x, split_size, dim=0: x.split(_int_split(split_size), dim),
    "view_as_real_copy": lambda x: _complex_views().view_as_real(x),
    "view_as_complex_copy": lambda x: _complex_views().view_as_complex(x),
}


def _int_split(split_size: Any) -> int:
    if not isinstance(split_size, int) or isinstance(split_size, bool):
        raise TypeError("split_copy(): argument 'split_size' (position 2) must be int, not "
                        f"{type(split_size).__name__}")
    return split_size


def _complex_views() -> Any:
    return complex_ops


def _with_params(name: str, view_fn: Any) -> Any:
    """torch.<name>(input, <the view's parameters>): ``_copying`` under the parameters of the
    view it copies (``permute_copy(input, dims)``), torch's."""
    return _signatures.calling(name, _signatures.params_of(view_fn, drop_first=True),
                               _copying(name, view_fn), first="input",
                               doc=f"torch.{name}: the result of torch.{name[:-5]} in fresh "
                                   "memory.")


COPIES = {name: _with_params(name, fn) for name, fn in _VIEWS.items()}

__all__ = ["unfold", "narrow_copy", "detach_copy", "split_with_sizes", "unsafe_split",
           "unsafe_chunk", "unsafe_split_with_sizes", "sum_to_size", *COPIES]
