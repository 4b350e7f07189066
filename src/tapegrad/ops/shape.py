"""Shape ops: views (view, permute, transpose, expand, squeeze, unsqueeze, select, slice, split,
unbind, as_strided), copies (clone, reshape of a non-contiguous tensor, to(dtype), repeat, flip,
tril/triu) and joining (cat, stack).

A view op's output shares memory and the version counter with its input (``view=True`` in the
registry), exactly as torch's views do; its backward reshapes, permutes or embeds the gradient.
"""

from __future__ import annotations

import builtins
import warnings
from typing import Any

import numpy as np

from .. import _dtype, _memory_format
from .._out import rule as out_rule
from .._tensor import _WARNED_ONCE, Tensor, _wrap_dim, install_above
from ..autograd.engine import register_stack, sum_to
from ..kernels import low_precision
from ._registry import apply, defop, scalar_type_name
from ._tangents import linear_tangent
from ._views import provide as provide_view_ops


def _shape_arg(size: tuple) -> tuple:
    """Accept f(2, 3) and f((2, 3)) (and torch.Size)."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    return tuple(int(s) for s in size)


def infer_shape(shape: tuple, numel: int) -> tuple:
    """Resolve one -1 in ``shape``, with torch's errors."""
    infer = [i for i, s in enumerate(shape) if s == -1]
    if len(infer) > 1:
        raise RuntimeError("only one dimension can be inferred")
    for i, s in enumerate(shape):
        if s < -1:
            raise RuntimeError(f"invalid shape dimension {s} at index {i} of shape {list(shape)}")
    known = 1
    for s in shape:
        if s != -1:
            known *= s
    if infer:
        if known == 0 and numel == 0:
            raise RuntimeError(
                f"cannot reshape tensor of 0 elements into shape {list(shape)} because the "
                "unspecified dimension size -1 can be any value and is ambiguous"
            )
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


# ---------------------------------------------------------------------------------------------
# view, reshape, flatten
# ---------------------------------------------------------------------------------------------

def _try_view(x: np.ndarray, shape: tuple) -> np.ndarray | None:
    try:
        return np.reshape(x, shape, copy=False)
    except ValueError:
        return None


@defop("view", node="ViewBackward0", view=True)
def _view(x: np.ndarray, *, shape: tuple) -> np.ndarray:
    out = _try_view(x, shape)
    if out is None:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
        )
    return out


@_view.backward
def view_backward(ctx: Any, grad: Tensor) -> tuple:  # a view only renames positions: reshape back
    return (grad.reshape(ctx.input_shapes[0]),)


@defop("unsafe_view", node="UnsafeViewBackward0")
def _unsafe_view(x: np.ndarray, *, shape: tuple) -> np.ndarray:
    return np.reshape(x, shape)


_unsafe_view.backward(_view.rule)


def view(input: Tensor, *shape: Any) -> Tensor:
    if len(shape) == 1 and isinstance(shape[0], (_dtype.dtype, type)) and not isinstance(
        shape[0], (tuple, list)
    ):
        return view_dtype(input, _dtype.to_dtype(shape[0]))
    target = infer_shape(_shape_arg(shape), input._data.size)
    return _view(input, shape=target)


def view_dtype(input: Tensor, dtype: Any) -> Tensor:
    """``x.view(dtype)``: the same bytes read as ``dtype`` (the last dim grows or shrinks by the
    ratio of the element sizes), with torch's checks. Not differentiable, and no view for
    autograd (``_is_view()`` is False, as in torch), though it shares memory and version."""
    x = input._data
    here, there = input.dtype, dtype
    if here is not there:
        if input._is_conj:
            raise RuntimeError("torch.Tensor.view is not supported for conjugate view tensors "
                               "when converting to a different dtype.")
        if input._is_neg:
            raise RuntimeError("torch.Tensor.view is not supported for tensors with negative bit "
                               "set when converting to a different dtype.")
    if x.itemsize != there.itemsize:
        what = (f"to view {scalar_type_name(here)} as {scalar_type_name(there)} (different "
                "element sizes)")
        if x.ndim == 0:
            raise RuntimeError(f"self.dim() cannot be 0 {what}")
        strides = input.stride()
        bad_stride = RuntimeError(f"self.stride(-1) must be 1 {what}, but got {strides[-1]}")
        if there.itemsize < x.itemsize and strides[-1] != 1:
            raise bad_stride
        if there.itemsize > x.itemsize:
            ratio = there.itemsize // x.itemsize
            if x.shape[-1] % ratio:
                raise RuntimeError(
                    f"self.size(-1) must be divisible by {ratio} {what}, but got {x.shape[-1]}")
            offset = input.storage_offset()
            if offset % ratio:
                raise RuntimeError(
                    f"self.storage_offset() must be divisible by {ratio} {what}, but got {offset}")
            if strides[-1] != 1:
                raise bad_stride
            for i, st in enumerate(strides[:-1]):
                if st % ratio:
                    raise RuntimeError(
                        f"self.stride({i}) must be divisible by {ratio} {what}, but got {st}")
    data = x.view(there.np)
    t = Tensor._make(data)
    if input._inference:
        t._inference = True
    else:
        t._version_counter = input._version_counter
    return t


@defop("reshape_alias", node="ReshapeAliasBackward0", view=True)
def _reshape_alias(x: np.ndarray, *, shape: tuple) -> np.ndarray:
    return np.reshape(x, shape, copy=False)


_reshape_alias.backward(_view.rule)


def reshape(input: Tensor, *shape: Any) -> Tensor:
    """A view when the memory layout allows it (ViewBackward0 for a contiguous input,
    ReshapeAliasBackward0 otherwise), else a copy (UnsafeViewBackward0 over CloneBackward0), as
    torch does."""
    target = infer_shape(_shape_arg(shape), input._data.size)
    if input._data.flags.c_contiguous:
        return _view(input, shape=target)
    if _try_view(input._data, target) is not None:
        return _reshape_alias(input, shape=target)
    return _unsafe_view(clone(input), shape=target)


def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    n = input.ndim
    if n == 0:  # (a 0-d tensor takes dims 0 and -1, as a 1-d one)
        _wrap_dim(start_dim, 0), _wrap_dim(end_dim, 0)
        return reshape(input, 1)
    s, e = _wrap_dim(start_dim, n), _wrap_dim(end_dim, n)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input
    shape = input._data.shape
    return reshape(input, shape[:s] + (-1,) + shape[e + 1:])


def unflatten(input: Tensor, dim: int, sizes: Any) -> Tensor:
    if input.ndim == 0:  # (torch's message goes on with the wrapping error and a C++ trace)
        raise RuntimeError("unflatten got an unexpected error:\nDimension specified as "
                           f"{dim} but tensor has no dimensions")
    d = _wrap_dim(dim, input.ndim)
    shape = input._data.shape
    inner = infer_shape(tuple(sizes), shape[d])
    return view(input, shape[:d] + inner + shape[d + 1:])


# ---------------------------------------------------------------------------------------------
# squeeze, unsqueeze
# ---------------------------------------------------------------------------------------------

def _squeeze_forward(x: np.ndarray, *, dims: tuple) -> np.ndarray:
    if x.ndim == 0:  # a 0-d tensor takes dim 0 / -1 and stays as it is
        return x.view()
    return np.squeeze(x, axis=tuple(d for d in dims if x.shape[d] == 1))


def squeeze_backward(ctx: Any, grad: Tensor) -> tuple:  # put the squeezed size-1 dims back
    return (grad.reshape(ctx.input_shapes[0]),)


_squeeze_all = defop("squeeze", node="SqueezeBackward0", view=True)(_squeeze_forward)
_squeeze_dim = defop("squeeze_dim", node="SqueezeBackward1", view=True)(_squeeze_forward)
_squeeze_dims = defop("squeeze_dims", node="SqueezeBackward2", view=True)(_squeeze_forward)
# matmul's 1-D @ 2-D squeezes its result in place in torch, which prints SqueezeBackward4.
_squeeze_matmul = defop("squeeze_matmul", node="SqueezeBackward4", view=True)(_squeeze_forward)
for _op in (_squeeze_all, _squeeze_dim, _squeeze_dims, _squeeze_matmul):
    _op.backward(squeeze_backward)


def squeeze(input: Tensor, dim: Any = None) -> Tensor:
    n = input.ndim
    if dim is None:
        return _squeeze_all(input, dims=tuple(range(n)))
    if isinstance(dim, (tuple, list)):
        dims = tuple(_wrap_dim(d, n) for d in dim)
        for i, d in enumerate(dims):
            if d in dims[:i]:
                raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        return _squeeze_dims(input, dims=dims)
    return _squeeze_dim(input, dims=(_wrap_dim(dim, n),))


@defop("unsqueeze", node="UnsqueezeBackward0", view=True)
def _unsqueeze(x: np.ndarray, *, dim: int) -> np.ndarray:
    return np.expand_dims(x, dim)


@_unsqueeze.backward
def unsqueeze_backward(ctx: Any, grad: Tensor) -> tuple:  # drop the added size-1 dim
    return (grad.squeeze(ctx.params["dim"]),)


def unsqueeze(input: Tensor, dim: int) -> Tensor:
    return _unsqueeze(input, dim=_wrap_dim(dim, input.ndim + 1))


# ---------------------------------------------------------------------------------------------
# permute, transpose, t, T
# ---------------------------------------------------------------------------------------------

@defop("permute", node="PermuteBackward0", view=True)
def _permute(x: np.ndarray, *, dims: tuple) -> np.ndarray:
    return np.transpose(x, dims)


@_permute.backward
def permute_backward(ctx: Any, grad: Tensor) -> tuple:  # apply the inverse permutation
    return (grad.permute(tuple(np.argsort(ctx.params["dims"]).tolist())),)


def permute(input: Tensor, *dims: Any) -> Tensor:
    dims = _shape_arg(dims)
    n = input.ndim
    if len(dims) != n:
        raise RuntimeError(
            "permute(sparse_coo): number of dimensions in the tensor input does not match the "
            "length of the desired ordering of dimensions i.e. input.dim() = "
            f"{n} is not equal to len(dims) = {len(dims)}"
        )
    d = tuple(_wrap_dim(i, n) for i in dims)
    if len(set(d)) != n:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return _permute(input, dims=d)


def movedim(input: Tensor, source: Any, destination: Any) -> Tensor:
    n = input.ndim
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    if len(src) != len(dst):
        raise RuntimeError(
            f"movedim: Invalid source or destination dims: source ({src} dims) should contain "
            f"the same number of dims as destination ({dst} dims)"
        )
    for name, given in (("source", src), ("destination", dst)):
        wrapped = [_wrap_dim(v, n) for v in given]
        if len(set(wrapped)) != len(wrapped):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({given})")
    src = [_wrap_dim(s, n) for s in src]
    dst = [_wrap_dim(s, n) for s in dst]
    order = [i for i in range(n) if i not in src]
    for d, s in sorted(zip(dst, src, strict=True)):
        order.insert(d, s)
    return _permute(input, dims=tuple(order))


moveaxis = movedim


@defop("transpose", node="TransposeBackward0", view=True)
def _transpose(x: np.ndarray, *, dim0: int, dim1: int) -> np.ndarray:
    return np.swapaxes(x, dim0, dim1) if x.ndim else x.view()  # a 0-d tensor takes 0 / -1


@_transpose.backward
def transpose_backward(ctx: Any, grad: Tensor) -> tuple:  # swap back
    p = ctx.params
    return (grad.transpose(p["dim0"], p["dim1"]),)


def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    n = input.ndim
    return _transpose(input, dim0=_wrap_dim(dim0, n), dim1=_wrap_dim(dim1, n))


swapdims = transpose


@defop("t", node="TBackward0", view=True)
def _t(x: np.ndarray) -> np.ndarray:
    return x.T


@_t.backward
def t_backward(ctx: Any, grad: Tensor) -> tuple:  # transpose back
    return (grad.t(),)


def t(input: Tensor) -> Tensor:
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    return _t(input)


_MATRIX_T_0D = {
    "mT": "Tensor.mT is deprecated on 0-D tensors. This function is the identity in these cases.",
    "mH": "Tensor.mH is deprecated on 0-D tensors. Consider using x.conj().",
    "adjoint": "adjoint() is deprecated on 0-D tensors. Consider using x.conj().",
}


def matrix_transpose(input: Tensor, name: str = "mT") -> Tensor:
    """The transpose of the last two dims (``x.mT``, and ``mH``/``adjoint`` before their
    conjugate), with torch's error for a 1-D tensor; a 0-D tensor comes back as it is, with
    torch's warning (once per process, as torch's)."""
    n = input.ndim
    if n == 1:
        what = "tensor.adjoint()" if name == "adjoint" else f"tensor.{name}"
        raise RuntimeError(f"{what} is only supported on matrices or batches of matrices. Got "
                           "1-D tensor.")
    if n == 0:
        if not _WARNED_ONCE.get(name):
            _WARNED_ONCE[name] = True
            warnings.warn(_MATRIX_T_0D[name], UserWarning, stacklevel=3)
        return input
    return transpose(input, -2, -1)


def numpy_T(input: Tensor) -> Tensor:
    """``x.T``: reverse all dims (PermuteBackward0); torch warns for ndim other than 2."""
    n = input.ndim
    if n == 0:
        if not _WARNED_ONCE.get("T"):  # (torch warns once per process)
            _WARNED_ONCE["T"] = True
            warnings.warn("Tensor.T is deprecated on 0-D tensors. This function is the identity "
                          "in these cases.", UserWarning, stacklevel=3)
    elif n != 2:
        warnings.warn(
            "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is "
            "deprecated and it will throw an error in a future release. Consider `x.mT` to "
            "transpose batches of matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` to "
            "reverse the dimensions of a tensor. (Triggered internally at "
            "/__w/pytorch/pytorch/aten/src/ATen/native/TensorShape.cpp:4314.)",
            UserWarning,
            stacklevel=3,
        )
    return _permute(input, dims=tuple(range(n - 1, -1, -1)))


# ---------------------------------------------------------------------------------------------
# expand, repeat, flip, tril, triu
# ---------------------------------------------------------------------------------------------

@defop("expand", node="ExpandBackward0", view=True)
def _expand(x: np.ndarray, *, shape: tuple) -> np.ndarray:
    # a writable view (torch's is: a write through it lands in the one element it repeats;
    # in-place ops that write overlapping elements raise in _registry.write_into)
    lead = len(shape) - x.ndim
    strides = [0] * len(shape)
    for i in range(len(shape) - 1, -1, -1):  # (torch's strides, new size-1 dims included)
        if i >= lead:
            strides[i] = 0 if x.shape[i - lead] != shape[i] else x.strides[i - lead]
        elif shape[i] == 1 and i + 1 < len(shape):
            strides[i] = strides[i + 1] * shape[i + 1]
    return np.lib.stride_tricks.as_strided(x, shape, tuple(strides),
                                           writeable=x.flags.writeable)


@_expand.backward
def expand_backward(ctx: Any, grad: Tensor) -> tuple:
    # every copy of an element sends its gradient back
    return (sum_to(grad, ctx.input_shapes[0]),)


def expand(input: Tensor, *sizes: Any) -> Tensor:
    sizes = _shape_arg(sizes)
    shape = input._data.shape
    if len(sizes) < len(shape):
        old, new = ", ".join(map(str, shape)), ", ".join(map(str, sizes))
        raise RuntimeError(
            f"expand(torch.FloatTensor{{[{old}]}}, size=[{new}]): the number of sizes provided "
            f"({len(sizes)}) must be greater or equal to the number of dimensions in the tensor "
            f"({len(shape)})"
        )
    lead = len(sizes) - len(shape)
    target = [0] * len(sizes)
    for i in range(len(sizes) - 1, -1, -1):  # (from the last dim, as torch checks)
        s = sizes[i]
        have = shape[i - lead] if i >= lead else 1
        if s == -1:
            if i < lead:
                raise RuntimeError(
                    f"The expanded size of the tensor (-1) isn't allowed in a leading, "
                    f"non-existing dimension {i}"
                )
            s = have
        elif s < 0:  # torch's sizes check multiplies them as unsigned numbers
            raise RuntimeError("numel: integer multiplication overflow")
        elif have != 1 and have != s:
            raise RuntimeError(
                f"The expanded size of the tensor ({s}) must match the existing size ({have}) at "
                f"non-singleton dimension {i}.  Target sizes: [{', '.join(map(str, sizes))}].  "
                f"Tensor sizes: [{', '.join(map(str, shape))}]"
            )
        target[i] = s
    return _expand(input, shape=tuple(target))


def expand_as(input: Tensor, other: Tensor) -> Tensor:
    return expand(input, other._data.shape)


def broadcast_to(input: Tensor, size: Any) -> Tensor:
    return expand(input, tuple(size))


@defop("repeat", node="RepeatBackward0")
def _repeat(x: np.ndarray, *, repeats: tuple) -> np.ndarray:
    x = x.reshape((1,) * (len(repeats) - x.ndim) + x.shape)
    return np.tile(x, repeats)


@_repeat.backward
def repeat_backward(ctx: Any, grad: Tensor) -> tuple:  # sum the gradient over the copies
    reps = ctx.params["repeats"]
    shape = ctx.input_shapes[0]
    full = (1,) * (len(reps) - len(shape)) + tuple(shape)
    split = []
    for r, s in zip(reps, full, strict=True):
        split += [r, s]
    g = grad.reshape(split).sum(dim=tuple(range(0, 2 * len(reps), 2)))
    return (g.reshape(shape),)


def repeat(input: Tensor, *repeats: Any) -> Tensor:
    reps = _shape_arg(repeats)
    if len(reps) < input.ndim:
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions of "
            "tensor"
        )
    if any(r < 0 for r in reps):
        padded = (1,) * (len(reps) - input.ndim) + input._data.shape
        target = [n * r for n, r in zip(padded, reps, strict=True)]
        bad = [t for t in target if t < 0]
        if bad:
            raise RuntimeError(f"Trying to create tensor with negative dimension {bad[0]}: "
                               f"{target}")
        reps = tuple(max(r, 0) for r in reps)  # (a negative count of an empty dimension)
    return _repeat(input, repeats=reps)


def repeat_interleave(input: Tensor | None = None, repeats: Any = None, dim: Any = None, *,
                      output_size: Any = None) -> Tensor:
    """Each element (slice along ``dim``) repeated ``repeats`` times; with one tensor of
    counts (``repeat_interleave(counts)``, or ``repeats=counts``), each index that many times."""
    from .indexing import index_select  # circular: ops/indexing.py builds on this module

    if input is None:
        input, repeats = repeats, None
    if repeats is None:  # repeat_interleave(counts): each index, counts[i] times
        counts = input._data
        return Tensor._make(np.repeat(np.arange(counts.size, dtype=np.int64), counts))
    if dim is None:
        input, dim = input.reshape(-1), 0
    d = _wrap_dim(dim, input.ndim)
    if not isinstance(repeats, Tensor) and input.ndim:  # torch: expand a new dim, then view
        r = int(repeats)
        shape = list(input.shape)
        big = shape[:d + 1] + [r] + shape[d + 1:]
        shape[d] *= r
        return input.unsqueeze(d + 1).expand(*big).contiguous().view(*shape)
    reps = repeats._data if isinstance(repeats, Tensor) else repeats
    idx = np.repeat(np.arange(input.shape[d]), reps)
    return index_select(input, d, Tensor._make(idx.astype(np.int64)))


@defop("flip", node="FlipBackward0")
def _flip(x: np.ndarray, *, dims: tuple) -> np.ndarray:
    if x.ndim == 0:
        return x.copy()
    return np.flip(x, axis=dims).copy()


@_flip.backward
def flip_backward(ctx: Any, grad: Tensor) -> tuple:  # flip back
    return (grad.flip(ctx.params["dims"]),)


def flip(input: Tensor, *dims: Any) -> Tensor:
    """Reverse the order along ``dims`` (``flip(x, (0, 1))``, and the method's
    ``x.flip(0, 1)``)."""
    d = _shape_arg(dims)
    wrapped = tuple(_wrap_dim(i, input.ndim) for i in d)
    for i, w in enumerate(wrapped):
        if w in wrapped[:i]:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
    return _flip(input, dims=wrapped)


def fliplr(input: Tensor) -> Tensor:
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, 1)


def flipud(input: Tensor) -> Tensor:
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, 0)


@defop("roll", node="RollBackward0")
def _roll(x: np.ndarray, *, shifts: tuple, dims: tuple | None) -> np.ndarray:
    if dims is None:  # the flattened tensor rolls, the shape stays
        return np.roll(x.reshape(-1), shifts[0]).reshape(x.shape) if x.size else x.copy()
    return np.roll(x, shifts, axis=dims) if x.size else x.copy()


@_roll.backward
def roll_backward(ctx: Any, grad: Tensor) -> tuple:  # roll back
    p = ctx.params
    return (_roll(grad, shifts=tuple(-s for s in p["shifts"]), dims=p["dims"]),)


def roll(input: Tensor, shifts: Any, dims: Any = None) -> Tensor:
    shifts = (int(shifts),) if not isinstance(shifts, (list, tuple)) else tuple(shifts)
    if not shifts:
        raise RuntimeError("`shifts` required")
    if dims is None:
        if len(shifts) != 1:
            raise RuntimeError("shifts and dimensions must align. shifts: "
                               f"{len(shifts)}, dims:0")
        return _roll(input, shifts=shifts, dims=None)
    dims = (dims,) if not isinstance(dims, (list, tuple)) else tuple(dims)
    if input.ndim == 0 and dims:
        raise IndexError(f"Dimension specified as {dims[0]} but tensor has no dimensions")
    if len(shifts) != len(dims):
        raise RuntimeError("shifts and dimensions must align. shifts: "
                           f"{len(shifts)}, dims:{len(dims)}")
    return _roll(input, shifts=shifts, dims=tuple(_wrap_dim(d, input.ndim) for d in dims))


def _triangle(name: str, node: str) -> Any:
    """The registry entry ``tril`` or ``triu`` (``name``): NumPy's function of that name keeps
    one triangle of the last two dimensions and zeroes the rest."""
    keep = getattr(np, name)

    @defop(name, node=node)
    def forward(x: np.ndarray, *, diagonal: int) -> np.ndarray:
        return keep(x, diagonal)  # type: ignore[no-any-return]

    @forward.backward
    def triangle_backward(ctx: Any, grad: Tensor) -> tuple:
        # only the kept triangle passes gradient
        return (getattr(grad, name)(ctx.params["diagonal"]),)

    return forward


_tril = _triangle("tril", "TrilBackward0")
_triu = _triangle("triu", "TriuBackward0")


def tril(input: Tensor, diagonal: int = 0) -> Tensor:
    if input.ndim < 2:
        raise RuntimeError("tril: input tensor must have at least 2 dimensions")
    return _tril(input, diagonal=diagonal)


def triu(input: Tensor, diagonal: int = 0) -> Tensor:
    if input.ndim < 2:
        raise RuntimeError("triu: input tensor must have at least 2 dimensions")
    return _triu(input, diagonal=diagonal)


# ---------------------------------------------------------------------------------------------
# clone, to(dtype), contiguous
# ---------------------------------------------------------------------------------------------

@defop("clone", node="CloneBackward0")
def _clone(x: np.ndarray, *, memory_format: Any = None) -> np.ndarray:
    if memory_format is not None:  # channels_last, ... (_memory_format.py)
        return _memory_format.layout_like(x, x.dtype, memory_format)
    return np.array(x, order="C", copy=True)


@_clone.backward
def clone_backward(ctx: Any, grad: Tensor) -> tuple:  # identity
    return (grad,)


def clone(input: Tensor, *, memory_format: Any = None) -> Tensor:
    return _clone(input)


install_above(clone=clone)  # Tensor.clone


@defop("to_copy", node="ToCopyBackward0")
def _to_copy(x: np.ndarray, *, dtype: Any, memory_format: Any = None) -> np.ndarray:
    if x.dtype.char == "E" and dtype == np.float32 and memory_format is None:
        return low_precision.widen(x)  # bfloat16 -> float32: a shift of the bits
    if x.dtype == np.float32 and np.dtype(dtype).char == "E" and memory_format is None:
        return low_precision.narrow(x, np.dtype(dtype))  # float32 -> bfloat16 on the bits
    if x.dtype == _dtype.CHALF_NP or dtype == _dtype.CHALF_NP:  # complex32 (_dtype.py)
        if dtype == _dtype.CHALF_NP:
            return _memory_format.restride(_dtype.to_chalf(x), memory_format)
        x = _dtype.from_chalf(x)
    if x.dtype.kind == "f" and np.dtype(dtype).kind in "iu":
        with np.errstate(invalid="ignore"):
            return _memory_format.restride(np.trunc(x).astype(dtype), memory_format)
    if x.dtype.kind == "c" and np.dtype(dtype).kind != "c":
        warnings.warn("Casting complex values to real discards the imaginary part", UserWarning,
                      stacklevel=2)
        x = x.real
    if memory_format is None:
        return x.astype(dtype)
    return _memory_format.layout_like(x, dtype, memory_format)  # (_memory_format.py)


@_to_copy.backward
def to_copy_backward(ctx: Any, grad: Tensor) -> tuple:
    # identity; the engine casts back to the input dtype
    return (grad,)


def to_dtype(input: Tensor, dtype: Any, copy: bool = False) -> Tensor:
    d = _dtype.to_dtype(dtype)
    if d is input.dtype and not copy:
        return input
    if input._requires_grad and not (d.is_floating_point or d.is_complex):
        return Tensor._make(_to_copy.forward(input._data, dtype=d.np))
    return _to_copy(input, dtype=d.np)


# ---------------------------------------------------------------------------------------------
# select, slice, narrow, as_strided (views used by indexing)
# ---------------------------------------------------------------------------------------------

@defop("select", node="SelectBackward0", view=True)
def _select(x: np.ndarray, *, dim: int, index: int) -> np.ndarray:
    # Ellipsis: a 0-d view, not a scalar
    key: tuple[Any, ...] = (slice(None),) * dim + (index, Ellipsis)
    return x[key]


@_select.backward
def select_backward(ctx: Any, grad: Tensor) -> tuple:
    # place the gradient at the selected index, zeros else
    p = ctx.params
    key = (slice(None),) * p["dim"] + (p["index"],)
    return (_embed(grad, ctx.input_shapes[0], key),)


@defop("slice", node="SliceBackward0", view=True)
def _slice(x: np.ndarray, *, dim: int, start: int, stop: int, step: int) -> np.ndarray:
    key = (slice(None),) * dim + (slice(start, stop, step),)
    return x[key]


@_slice.backward
def slice_backward(ctx: Any, grad: Tensor) -> tuple:  # place the gradient in the slice, zeros else
    p = ctx.params
    key = (slice(None),) * p["dim"] + (slice(p["start"], p["stop"], p["step"]),)
    return (_embed(grad, ctx.input_shapes[0], key),)


def _embed(grad: Tensor, shape: tuple, key: tuple) -> Tensor:
    from .indexing import index_put  # circular: ops/indexing.py builds on this module

    zeros = Tensor._make(np.zeros(shape, dtype=grad._data.dtype))
    return index_put(zeros, key, grad)


def select(input: Tensor, dim: int, index: int) -> Tensor:
    if input.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, input.ndim)
    n = input._data.shape[d]
    i = int(index)
    if not -n <= i < n:
        raise IndexError(f"index {i} is out of bounds for dimension {d} with size {n}")
    return _select(input, dim=d, index=i % n)


def slice_dim(input: Tensor, dim: int, start: Any, stop: Any, step: Any) -> Tensor:
    d = _wrap_dim(dim, input.ndim)
    if step is not None and step <= 0:
        raise ValueError("step must be greater than zero")
    s = slice(start, stop, step).indices(input._data.shape[d])
    return _slice(input, dim=d, start=s[0], stop=s[1], step=s[2])


def narrow(input: Tensor, dim: int, start: Any, length: int) -> Tensor:
    if input.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    d = _wrap_dim(dim, input.ndim)
    if isinstance(start, Tensor):
        if start.ndim != 0 or start._data.dtype.kind not in "iu":  # (bool is not integral)
            raise RuntimeError("start must be an 0-dim integral Tensor.")
    start = int(start)
    size = input._data.shape[d]
    if not -size <= start <= size:
        raise IndexError(
            f"start out of range (expected to be in range of [{-size}, {size}], but got {start})"
        )
    if start < 0:
        start += input._data.shape[d]
    if start + length > input._data.shape[d]:
        raise RuntimeError(
            f"start ({start}) + length ({length}) exceeds dimension size "
            f"({input._data.shape[d]})."
        )
    return _slice(input, dim=d, start=start, stop=start + length, step=1)


@defop("alias", node="AliasBackward0", view=True)
def _alias(x: np.ndarray) -> np.ndarray:
    return x.view()


@_alias.backward
def alias_backward(ctx: Any, grad: Tensor) -> tuple:  # identity
    return (grad,)


def alias(input: Tensor) -> Tensor:
    return _alias(input)


@defop("as_strided", node="AsStridedBackward0", view=True)
def _as_strided(x: np.ndarray, *, positions: np.ndarray, in_positions: Any = None,
                storage_size: int = 0, span_start: int = 0, strides: Any = None) -> np.ndarray:
    if in_positions is not None:  # positions in the storage x lies in (see as_strided)
        flat = _storage(x)[0]  # type: ignore[index]
    else:
        flat = np.reshape(x, -1, copy=False) if x.flags.c_contiguous else None
        if flat is None:
            return np.reshape(x, -1)[positions]
    start = int(positions.reshape(-1)[0]) if positions.size else 0
    steps = []
    for axis, n in enumerate(positions.shape):
        if n > 1 and positions.size:  # (an empty view's strides do not matter)
            idx = [0] * positions.ndim
            idx[axis] = 1
            steps.append(int(positions[tuple(idx)]) - start)
        else:  # a size-1 dim: the stride asked for (torch reports it), if given
            steps.append(strides[axis] if strides is not None else 0)
    isz = x.itemsize
    return np.lib.stride_tricks.as_strided(
        flat[start:], shape=positions.shape, strides=tuple(s * isz for s in steps)
    )


@_as_strided.backward
def as_strided_backward(ctx: Any, grad: Tensor) -> tuple:
    # each element's gradient goes to the position it views
    from .indexing import index_put  # circular: ops/indexing.py builds on this module

    shape = ctx.input_shapes[0]
    in_positions = ctx.params.get("in_positions")
    # the gradient laid out over the storage, then read back where the input lies in it
    n = int(np.prod(shape)) if in_positions is None else ctx.params["storage_size"]
    zeros = Tensor._make(np.zeros(n, dtype=grad._data.dtype))
    pos = (ctx.params["positions"] - ctx.params.get("span_start", 0),)
    spread = index_put(zeros, pos, grad, accumulate=True)
    if in_positions is None:
        return (spread.reshape(shape),)
    counts = np.bincount(in_positions.reshape(-1), minlength=n)
    if counts.size and counts.max() > 1:  # input elements sharing memory (an expanded input):
        # each gets its location's gradient divided among them, as torch's as_strided_backward
        spread = spread / Tensor._make(np.maximum(counts, 1).astype(spread._data.dtype))
    return (spread[Tensor._make(in_positions)],)


def _storage(a: np.ndarray) -> tuple[np.ndarray, int] | None:
    """The memory ``a`` lies in, as torch's storage: the flat array at the root of its chain of
    NumPy views, and ``a``'s offset in it (elements); None when that root is no flat array
    of a's dtype (a reinterpreted or broadcast view) or a has negative strides."""
    root = a
    while True:
        b = root.base
        if not isinstance(b, np.ndarray):
            b = getattr(b, "base", None)  # as_strided's views hold their array one further
        if not isinstance(b, np.ndarray):
            break
        root = b
    if root.dtype != a.dtype and root.dtype.kind == "c" and root.real.dtype == a.dtype and (
            root.flags.c_contiguous):
        root = root.view(a.dtype)  # a real view (x.real, view_as_real) of complex memory
    if root.dtype != a.dtype or not root.flags.c_contiguous or any(st < 0 for st in a.strides):
        return None
    off = a.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    if off % a.itemsize or any(st % a.itemsize for st in a.strides):
        return None
    return np.reshape(root, -1), off // a.itemsize


def as_strided(input: Tensor, size: Any, stride: Any, storage_offset: Any = None) -> Tensor:
    """A view with the given sizes and strides (in elements) over the input's storage: the
    memory the input lies in, which may reach beyond the input (a view of a larger tensor);
    ``storage_offset`` defaults to the input's own."""
    x = input._data
    found = _storage(x)
    if found is None:  # no storage to speak of: the input's own elements, in order
        input = input if x.flags.c_contiguous else input.contiguous()
        flat, here = np.reshape(input._data, -1), 0
    else:
        flat, here = found
    off = here if storage_offset is None else int(storage_offset)
    size, stride = tuple(int(n) for n in size), tuple(int(st) for st in stride)
    positions = np.full(size, off, dtype=np.int64)
    for axis, (n, st) in enumerate(zip(size, stride, strict=True)):
        shape = [1] * len(size)
        shape[axis] = n
        positions = positions + (np.arange(n, dtype=np.int64) * st).reshape(shape)
    if positions.size and positions.max() >= flat.size:
        isz = x.itemsize
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {off}, "
            f"and itemsize {isz} requiring a storage size of {(int(positions.max()) + 1) * isz}"
            f" are out of bounds for storage of size {flat.size * isz}"
        )
    if found is None or (here == 0 and flat.size == x.size and x.flags.c_contiguous):
        return _as_strided(input, positions=positions, strides=stride)
    elems = np.lib.stride_tricks.as_strided(
        np.arange(flat.size, dtype=np.int64)[here:], x.shape,
        tuple(st // x.itemsize * 8 for st in x.strides))
    # the backward lays the gradient over the span of storage the input and the view cover
    lo = min(int(positions.min()) if positions.size else here, int(elems.min()) if elems.size
             else here)
    hi = max(int(positions.max()) if positions.size else here, int(elems.max()) if elems.size
             else here) + 1
    return _as_strided(input, positions=positions, in_positions=elems - lo,
                       storage_size=hi - lo, span_start=lo, strides=stride)


def as_strided_elements(input: Tensor, size: Any, stride: Any, storage_offset: int = 0
                        ) -> Tensor:
    """as_strided over the input's own elements in order (a fresh contiguous tensor's storage,
    as torch's ``*_scatter`` ops see it), whatever memory the input lies in."""
    x = input if input._data.flags.c_contiguous else input.contiguous()
    positions = np.full(tuple(size), int(storage_offset), dtype=np.int64)
    for axis, (n, st) in enumerate(zip(size, stride, strict=True)):
        shape = [1] * len(size)
        shape[axis] = n
        positions = positions + (np.arange(n, dtype=np.int64) * st).reshape(shape)
    return _as_strided(x, positions=positions)


def as_strided_positions(base: Tensor, positions: np.ndarray) -> Tensor:
    """The view of ``base`` at the given flat positions (used after in-place ops on views)."""
    return _as_strided(base, positions=positions)


# the view machinery (ops/_views.py) makes views again with these
provide_view_ops(as_strided=as_strided, as_strided_entry=_as_strided,
                 as_strided_positions=as_strided_positions)


# ---------------------------------------------------------------------------------------------
# cat, stack, split, chunk, unbind
# ---------------------------------------------------------------------------------------------

def _join_dtype(arrays: list) -> Any:
    d = _dtype.from_numpy_dtype(arrays[0].dtype)
    for a in arrays[1:]:
        d = _dtype.promote_types(d, _dtype.from_numpy_dtype(a.dtype))
    return d.np


@defop("cat", node="CatBackward0")
def _cat(*arrays: np.ndarray, dim: int, shapes: tuple) -> np.ndarray:
    dt = _join_dtype(list(arrays))
    kept = [a for a in arrays if not (a.ndim == 1 and a.shape[0] == 0)]
    if not kept:
        return np.zeros((0,), dtype=dt)
    ref = kept[0]
    for i, a in enumerate(arrays):
        if a.ndim == 1 and a.shape[0] == 0:
            continue
        if a.ndim != ref.ndim:
            raise RuntimeError(
                "Tensors must have same number of dimensions: got "
                f"{ref.ndim} and {a.ndim}"
            )
        for k in range(ref.ndim):
            if k != dim and a.shape[k] != ref.shape[k]:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {dim}. Expected size "
                    f"{ref.shape[k]} but got size {a.shape[k]} for tensor number {i} in the list."
                )
    return np.concatenate([a.astype(dt, copy=False) for a in kept], axis=dim)


@_cat.backward
def cat_backward(ctx: Any, grad: Tensor) -> tuple:  # each input gets its own slice of the gradient
    dim = ctx.params["dim"]
    out = []
    start = 0
    for meta, shape in zip(ctx.input_meta, ctx.params["shapes"], strict=True):
        n = 0 if (len(shape) == 1 and shape[0] == 0) else shape[dim]
        out.append(grad.narrow(dim, start, n) if meta is not None else None)
        start += n
    return tuple(out)


def _tensor_list(name: str, tensors: Any) -> list:
    """The sequence ``tensors`` of cat/stack (``name``) as a list; a lone Tensor in its place
    is torch's TypeError, as it would otherwise be split along its first dimension."""
    if isinstance(tensors, Tensor):
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, "
                        "not Tensor")
    return list(tensors)


def cat(tensors: Any, dim: int = 0, *, axis: Any = None) -> Tensor:
    """Join tensors along an existing dim (``axis``: NumPy's name for it, which torch takes)."""
    if axis is not None:
        dim = axis
    tensors = _tensor_list("cat", tensors)
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(
                f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}"
            )
    ref = next((t for t in tensors if not (t.ndim == 1 and t.shape[0] == 0)), tensors[0])
    if ref.ndim == 0:
        raise RuntimeError(
            "zero-dimensional tensor (at position 0) cannot be concatenated"
        )
    d = _wrap_dim(dim, ref.ndim)
    shapes = tuple(t._data.shape for t in tensors)
    return apply(_cat, *tensors, dim=d, shapes=shapes)


def _cat_out(args: tuple, out: Any) -> None:
    """cat's out rule: a dtype the inputs' common type casts to (and no overlap with an
    input at all: ``no_overlap`` below)."""
    tensors = list(args[0]) if isinstance(args[0], (list, tuple)) else []
    if isinstance(out, Tensor) and tensors and all(isinstance(t, Tensor) for t in tensors):
        common = tensors[0].dtype
        for t in tensors[1:]:
            common = _dtype.promote_types(common, t.dtype)
        if common._rank > out.dtype._rank:
            raise RuntimeError("torch.cat(): input types can't be cast to the desired output "
                               f"type {scalar_type_name(out.dtype)}")


out_rule("cat", check=_cat_out, no_overlap=True)


concat = concatenate = cat


@defop("stack", node="StackBackward0")
def _stack(*arrays: np.ndarray, dim: int) -> np.ndarray:
    ref = arrays[0].shape
    for i, a in enumerate(arrays):
        if a.shape != ref:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(ref)} at entry 0 and "
                f"{list(a.shape)} at entry {i}"
            )
    dt = _join_dtype(list(arrays))
    return np.stack([a.astype(dt, copy=False) for a in arrays], axis=dim)


@_stack.backward
def stack_backward(ctx: Any, grad: Tensor) -> tuple:  # input i gets slice i of the gradient
    dim = ctx.params["dim"]
    return tuple(
        grad.select(dim, i) if meta is not None else None
        for i, meta in enumerate(ctx.input_meta)
    )


def stack(tensors: Any, dim: int = 0) -> Tensor:
    tensors = _tensor_list("stack", tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    d = _wrap_dim(dim, tensors[0].ndim + 1)
    return apply(_stack, *tensors, dim=d)


register_stack(stack)  # autograd.grad's batched gradients (autograd/engine.py)


def hstack(tensors: Any) -> Tensor:
    if len(tensors) == 0:
        raise RuntimeError("hstack expects a non-empty TensorList")
    tensors = [t if t.ndim else t.reshape(1) for t in tensors]
    return cat(tensors, 0 if tensors[0].ndim == 1 else 1)


def vstack(tensors: Any) -> Tensor:
    if len(tensors) == 0:
        raise RuntimeError("vstack expects a non-empty TensorList")
    return cat([t.reshape(1, -1) if t.ndim < 2 else t for t in tensors], 0)


def split_backward(ctx: Any, grads: list) -> tuple:  # gradients of the pieces, joined (zeros fill)
    dim = ctx.params["dim"]
    sizes = ctx.params["sizes"]
    shape = ctx.input_shapes[0]
    grads = list(grads) + [None] * (len(sizes) - len(grads))
    ref = next(g for g in grads if g is not None)
    parts = []
    for g, n in zip(grads, sizes, strict=True):
        if g is None:
            s = list(shape)
            s[dim] = n
            g = Tensor._make(np.zeros(s, dtype=ref._data.dtype))
        parts.append(g)
    return (cat(parts, dim),)


def _split_forward(x: np.ndarray, *, dim: int, sizes: tuple) -> tuple:
    bounds = np.cumsum(sizes)[:-1]
    return tuple(np.split(x, bounds, axis=dim))


_split = defop("split", node="SplitBackward0", view=True, outputs=-1)(_split_forward)
_split_sizes = defop("split_with_sizes", node="SplitWithSizesBackward0", view=True,
                     outputs=-1)(_split_forward)
_split.backward(split_backward)
_split_sizes.backward(split_backward)
_split.jvp(linear_tangent(_split))
_split_sizes.jvp(linear_tangent(_split_sizes))


def split(tensor: Tensor, split_size_or_sections: Any, dim: int = 0) -> tuple:
    if tensor.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = _wrap_dim(dim, tensor.ndim)
    n = tensor._data.shape[d]
    if isinstance(split_size_or_sections, int):
        size = split_size_or_sections
        if size <= 0 and n:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got "
                               f"dimension size of {n}")
        sizes = tuple(min(size, n - i) for i in range(0, n, size)) if n else (0,)
        return apply(_split, tensor, dim=d, sizes=sizes)
    sizes = tuple(int(s) for s in split_size_or_sections)
    if sum(sizes) != n:
        raise RuntimeError(
            f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size at "
            f"dimension {d}), but got split_sizes={list(sizes)}"
        )
    return apply(_split_sizes, tensor, dim=d, sizes=sizes)


def chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple:
    if input.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
    d = _wrap_dim(dim, input.ndim)
    n = input._data.shape[d]
    size = -(-n // chunks) if n else 0
    if size == 0:
        return split(input, 1, d) if n else (input,)
    return split(input, size, d)


def tensor_split(input: Tensor, indices_or_sections: Any = None, dim: int = 0, *,
                 indices: Any = None, sections: Any = None,
                 tensor_indices_or_sections: Any = None) -> tuple:
    """Split into ``n`` near-equal pieces (an int), or at the given indices; each piece a slice
    of the input (SliceBackward0), as in torch. The split may also be given by torch's keyword
    names of its overloads (``indices=``, ``sections=``, ``tensor_indices_or_sections=``)."""
    for given in (indices, sections, tensor_indices_or_sections):
        if given is not None:
            indices_or_sections = given
    if input.ndim == 0:
        raise RuntimeError(
            "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
    d = _wrap_dim(dim, input.ndim)
    n = input._data.shape[d]
    sections = indices_or_sections
    if isinstance(sections, Tensor):
        if sections._data.dtype != np.int64:
            raise RuntimeError(
                "tensor_split expected tensor_indices_or_sections to have dtype of long, but got "
                f"{scalar_type_name(sections.dtype)}")
        if sections.ndim > 1:
            raise RuntimeError(
                "tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                f"one-dimensional tensor, but got a tensor with {sections.ndim} dims")
        sections = int(sections.item()) if sections.ndim == 0 else sections.tolist()
    if isinstance(sections, int):
        if sections <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
        q, r = divmod(n, sections)
        sizes = [q + 1] * r + [q] * (sections - r)
        bounds = [0]
        for size in sizes:
            bounds.append(bounds[-1] + size)
    else:
        bounds = [0] + [builtins.min(builtins.max(int(i), 0) if int(i) >= 0 else
                                     builtins.max(int(i) + n, 0), n)
                        for i in sections] + [n]
    return tuple(_slice(input, dim=d, start=a, stop=builtins.max(a, b), step=1)
                 for a, b in zip(bounds[:-1], bounds[1:], strict=True))


def _unbind_forward(x: np.ndarray, *, dim: int) -> tuple:
    # Ellipsis keeps each piece a view (a 0-d array, not a NumPy scalar, for a 1-D input)
    return tuple(x[(slice(None),) * dim + (i, Ellipsis)] for i in range(x.shape[dim]))


_unbind = defop("unbind", node="UnbindBackward0", view=True, outputs=-1)(_unbind_forward)
_unbind.jvp(linear_tangent(_unbind))


@_unbind.backward
def unbind_backward(ctx: Any, grads: list) -> tuple:
    # stack the pieces' gradients (zeros where none came)
    dim = ctx.params["dim"]
    shape = list(ctx.input_shapes[0])
    grads = list(grads) + [None] * (shape[dim] - len(grads))
    del shape[dim]
    ref = next(g for g in grads if g is not None)
    parts = [g if g is not None else Tensor._make(np.zeros(shape, dtype=ref._data.dtype))
             for g in grads]
    return (stack(parts, dim),)


def unbind(input: Tensor, dim: int = 0) -> tuple:
    if input.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    return apply(_unbind, input, dim=_wrap_dim(dim, input.ndim))


def meshgrid(*tensors: Any, indexing: str | None = None) -> tuple:
    """Coordinate grids of the 1-d ``tensors`` ('ij': matrix, 'xy': Cartesian indexing);
    without ``indexing``, 'ij' and torch's warning that it will be required."""
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the "
                      "indexing argument.", UserWarning, stacklevel=2)
        indexing = "ij"
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    n = len(tensors)
    shape = [t.numel() for t in tensors]
    if indexing == "xy" and n >= 2:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, t in enumerate(tensors):
        view_shape = [1] * n
        pos = i
        if indexing == "xy" and n >= 2 and i < 2:
            pos = 1 - i
        view_shape[pos] = -1
        out.append(t.reshape(view_shape).expand(shape))
    return tuple(out)


# Forward mode: every op here is linear, so an output's tangent is the op applied to the
# inputs' tangents.
for _linear_op in (_view, _unsafe_view, _reshape_alias, _squeeze_all, _squeeze_dim, _squeeze_dims,
                   _unsqueeze, _permute, _transpose, _t, _expand, _clone, _select, _slice, _alias):
    _linear_op.jvp(linear_tangent(_linear_op))
for _linear_op in (_cat, _stack):
    _linear_op.jvp(linear_tangent(_linear_op, tuple(range(64))))



def swapaxes(input: Tensor, axis0: int, axis1: int) -> Tensor:
    """``torch.swapaxes``: NumPy's name for ``transpose``."""
    return transpose(input, axis0, axis1)
