"""Shape functions built from others, and the diagonal family.

``atleast_1d/2d/3d``, ``ravel``, ``tile``, ``column_stack``/``dstack``/``row_stack``,
``hsplit``/``vsplit``/``dsplit`` are written with ``shape.py``'s ops, the way torch composes them
(so the nodes are the ones torch prints: ``tile`` is a ``RepeatBackward0``). The diagonal family
has entries of its own: ``diagonal`` (a view: ``DiagonalBackward0``), ``diag_embed``
(``DiagEmbedBackward0``), ``trace`` (``TraceBackward0``) and ``rot90`` (``Rot90Backward0``);
``diag`` and ``diagflat`` are made of them.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import _dtype
from .._dtype import promote_types
from .._tensor import Size, Tensor, _wrap_dim
from ._registry import defop
from .elementwise import invalid_arguments
from .factories import empty
from .indexing import nonzero
from .padding import _constant_pad, _pad_pairs
from .scatter import masked_select
from .shape import (
    _unsafe_view,
    cat,
    meshgrid,
    repeat,
    reshape,
    stack,
    tensor_split,
    unsqueeze,
    view,
    vstack,
)

# ---------------------------------------------------------------------------------------------
# atleast_*, ravel, tile, stacking and splitting
# ---------------------------------------------------------------------------------------------

def _each(fn: Any, tensors: tuple) -> Any:
    if len(tensors) == 1 and not isinstance(tensors[0], Tensor):
        return tuple(fn(t) for t in tensors[0])
    if len(tensors) == 1:
        return fn(tensors[0])
    return tuple(fn(t) for t in tensors)


def _atleast_1d(t: Tensor) -> Tensor:
    return view(t, 1) if t.ndim == 0 else t


def _atleast_2d(t: Tensor) -> Tensor:
    if t.ndim == 0:
        return view(t, 1, 1)
    return unsqueeze(t, 0) if t.ndim == 1 else t


def _atleast_3d(t: Tensor) -> Tensor:
    if t.ndim == 0:
        return view(t, 1, 1, 1)
    if t.ndim == 1:
        return unsqueeze(unsqueeze(t, 0), -1)
    return unsqueeze(t, -1) if t.ndim == 2 else t


def atleast_1d(*tensors: Any) -> Any:
    """Each tensor with at least one dimension (a 0-d one becomes shape (1,))."""
    return _each(_atleast_1d, tensors)


def atleast_2d(*tensors: Any) -> Any:
    """Each tensor with at least two dimensions (leading dims added)."""
    return _each(_atleast_2d, tensors)


def atleast_3d(*tensors: Any) -> Any:
    """Each tensor with at least three dimensions (NumPy's placement: (1, n, 1), (m, n, 1))."""
    return _each(_atleast_3d, tensors)


def ravel(input: Tensor) -> Tensor:
    """The tensor flattened to 1-D: ``contiguous().view(-1)``, as torch."""
    return view(input.contiguous(), -1)


def tile(input: Tensor, dims: Any) -> Tensor:
    """Repeat the tensor ``dims`` times along each dimension (dims padded with leading 1s)."""
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    if len(dims) < input.ndim:
        dims = (1,) * (input.ndim - len(dims)) + dims
    return repeat(input, *dims)


def _nonempty(tensors: Any, name: str) -> list:
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    return tensors


def column_stack(tensors: Any) -> Tensor:
    """Stack as columns: 0-d and 1-d tensors become (n, 1), then concatenate along dim 1."""
    ts = _nonempty(tensors, "column_stack")
    return cat([reshape(t, t.numel(), 1) if t.ndim <= 1 else t for t in ts], 1)


def row_stack(tensors: Any) -> Tensor:
    """``vstack``'s alias."""
    return vstack(tensors)


def dstack(tensors: Any) -> Tensor:
    """Concatenate along the third dimension (after ``atleast_3d``)."""
    ts = _nonempty(tensors, "dstack")
    return cat([_atleast_3d(t) for t in ts], 2)


def _split_dim(input: Tensor, sections: Any, dim: int, name: str, need: int) -> tuple:
    if input.ndim < need:
        raise RuntimeError(
            f"torch.{name} requires a tensor with at least {need} dimension, but got a tensor "
            f"with {input.ndim} dimensions!"
        )
    ok = isinstance(sections, (int, Tensor)) or (
        isinstance(sections, (list, tuple)) and all(isinstance(i, int) for i in sections))
    if not ok or isinstance(sections, bool):
        raise invalid_arguments(name, input, sections)
    if isinstance(sections, int):
        size = input.shape[dim]
        if sections == 0 or size % sections:
            raise RuntimeError(
                f"torch.{name} attempted to split along dimension {dim}, but the size of the "
                f"dimension {size} is not divisible by the split_size {sections}!"
            )
    return tensor_split(input, sections, dim)


def hsplit(input: Tensor, sections: Any = None, *, indices: Any = None) -> tuple:
    """Split along dim 1 (dim 0 for a 1-d tensor) into ``sections`` pieces, or at
    ``indices``."""
    return _split_dim(input, sections if indices is None else indices,
                      1 if input.ndim > 1 else 0, "hsplit", 1)


def vsplit(input: Tensor, sections: Any = None, *, indices: Any = None) -> tuple:
    """Split along dim 0 of an at least 2-d tensor."""
    return _split_dim(input, sections if indices is None else indices, 0, "vsplit", 2)


def dsplit(input: Tensor, sections: Any = None, *, indices: Any = None) -> tuple:
    """Split along dim 2 of an at least 3-d tensor."""
    return _split_dim(input, sections if indices is None else indices, 2, "dsplit", 3)


# ---------------------------------------------------------------------------------------------
# The diagonal family
# ---------------------------------------------------------------------------------------------

def _diag_view(x: np.ndarray, offset: int, d1: int, d2: int) -> np.ndarray:
    """A writable view of the diagonal, moved to the last dim (NumPy's own ``diagonal`` view
    is read-only)."""
    n1, n2 = x.shape[d1], x.shape[d2]
    index: list[Any] = [slice(None)] * x.ndim
    if offset >= 0:
        length = max(min(n1, n2 - offset), 0)
        index[d2] = slice(min(offset, n2), None)
    else:
        length = max(min(n1 + offset, n2), 0)
        index[d1] = slice(min(-offset, n1), None)
    start = x[tuple(index)]  # the diagonal begins at this view's first element
    rest = [i for i in range(x.ndim) if i not in (d1, d2)]
    shape = tuple(x.shape[i] for i in rest) + (length,)
    strides = tuple(x.strides[i] for i in rest) + (x.strides[d1] + x.strides[d2],)
    return np.lib.stride_tricks.as_strided(start, shape=shape, strides=strides)


def _dims_pair(ndim: int, dim1: int, dim2: int) -> tuple:
    d1, d2 = _wrap_dim(dim1, ndim), _wrap_dim(dim2, ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return d1, d2


@defop("diagonal", node="DiagonalBackward0", view=True)
def _diagonal(x: np.ndarray, *, offset: int, dim1: int, dim2: int) -> np.ndarray:
    return _diag_view(x, offset, dim1, dim2)


@_diagonal.backward
def diagonal_backward(ctx: Any, grad: Tensor) -> tuple:
    # the gradient back on the diagonal, zeros elsewhere
    p = ctx.params
    return (_diagonal_backward(grad, shape=ctx.input_shapes[0], offset=p["offset"],
                               dim1=p["dim1"], dim2=p["dim2"]),)


@defop("diagonal_backward", node="DiagonalBackwardBackward0")
def _diagonal_backward(g: np.ndarray, *, shape: tuple, offset: int, dim1: int,
                       dim2: int) -> np.ndarray:
    out = np.zeros(shape, dtype=g.dtype)
    _diag_view(out, offset, dim1, dim2)[...] = g
    return out


@_diagonal_backward.backward
def diagonal_backward_backward(ctx: Any, gg: Tensor) -> tuple:
    # linear: its own gradient is the diagonal again
    p = ctx.params
    return (_diagonal(gg, offset=p["offset"], dim1=p["dim1"], dim2=p["dim2"]),)


def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """The diagonal (``offset`` above the main one) of the planes ``dim1``, ``dim2``, as the
    last dimension of a view."""
    d1, d2 = _dims_pair(input.ndim, dim1, dim2)
    return _diagonal(input, offset=int(offset), dim1=d1, dim2=d2)


@defop("diag_embed", node="DiagEmbedBackward0")
def _diag_embed(x: np.ndarray, *, offset: int, dim1: int, dim2: int) -> np.ndarray:
    n = x.shape[-1] + abs(offset) if x.ndim else 1
    rest = x.shape[:-1]
    out_ndim = x.ndim + 1
    shape = [0] * out_ndim
    others = iter(rest)
    for i in range(out_ndim):
        shape[i] = n if i in (dim1, dim2) else next(others)
    out = np.zeros(shape, dtype=x.dtype)
    _diag_view(out, offset, dim1, dim2)[...] = x
    return out


@_diag_embed.backward
def diag_embed_backward(ctx: Any, grad: Tensor) -> tuple:  # the diagonal of the gradient
    p = ctx.params
    return (_diagonal(grad, offset=p["offset"], dim1=p["dim1"], dim2=p["dim2"]),)


def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """Tensors whose diagonals (planes ``dim1``, ``dim2`` of the result) hold ``input``'s last
    dimension."""
    d1, d2 = _dims_pair(input.ndim + 1, dim1, dim2)
    return _diag_embed(input, offset=int(offset), dim1=d1, dim2=d2)


def diag(input: Tensor, diagonal: int = 0) -> Tensor:
    """1-D input: a square matrix with it on the ``diagonal``; 2-D: that diagonal, copied."""
    if input.ndim == 1:
        return _diag_embed(input, offset=int(diagonal), dim1=0, dim2=1)
    if input.ndim != 2:
        raise RuntimeError("diag(): Supports 1D or 2D tensors. Got " f"{input.ndim}D")
    return _diag_copy(input, offset=int(diagonal))


@defop("diag_copy", node="DiagonalBackward0_copy")
def _diag_copy(x: np.ndarray, *, offset: int) -> np.ndarray:
    return _diag_view(x, offset, 0, 1).copy()


@_diag_copy.backward
def diag_copy_backward(ctx: Any, grad: Tensor) -> tuple:  # back on the diagonal
    return (_diagonal_backward(grad, shape=ctx.input_shapes[0], offset=ctx.params["offset"],
                               dim1=0, dim2=1),)


def diagflat(input: Tensor, offset: int = 0) -> Tensor:
    """The flattened input on the ``offset`` diagonal of a square matrix."""
    return _diag_embed(reshape(input, -1), offset=int(offset), dim1=0, dim2=1)


@defop("trace", node="TraceBackward0")
def _trace(x: np.ndarray) -> np.ndarray:
    if x.ndim != 2:
        raise RuntimeError("trace: expected a matrix, but got tensor with dim " f"{x.ndim}")
    dt = np.int64 if x.dtype.kind in "iub" else x.dtype
    return np.asarray(np.trace(x, dtype=dt))


@_trace.backward
def trace_backward(ctx: Any, grad: Tensor) -> tuple:  # the identity's pattern, times the gradient
    shape = ctx.input_shapes[0]
    eye = Tensor._make(np.eye(shape[0], shape[1], dtype=grad._data.dtype))
    return (eye * grad,)


def trace(input: Tensor) -> Tensor:
    """The sum of the main diagonal of a matrix."""
    return _trace(input)


@defop("rot90", node="Rot90Backward0")
def _rot90(x: np.ndarray, *, k: int, dims: tuple) -> np.ndarray:
    return np.rot90(x, k, axes=dims).copy()


@_rot90.backward
def rot90_backward(ctx: Any, grad: Tensor) -> tuple:  # rotate back
    p = ctx.params
    return (_rot90(grad, k=-p["k"], dims=p["dims"]),)


def rot90(input: Tensor, k: int = 1, dims: Any = (0, 1)) -> Tensor:
    """Rotate by 90 degrees ``k`` times in the plane ``dims`` (from the first toward the second
    axis)."""
    dims = tuple(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.ndim}")
    d0, d1 = _wrap_dim(dims[0], input.ndim), _wrap_dim(dims[1], input.ndim)
    if d0 == d1:
        raise RuntimeError(
            f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}")
    return _rot90(input, k=int(k) % 4, dims=(d0, d1))


# ---------------------------------------------------------------------------------------------
# Broadcasting helpers, products of sets, index helpers
# ---------------------------------------------------------------------------------------------

def broadcast_shapes(*shapes: Any) -> Any:
    """The shape every given shape broadcasts to (torch's errors when one does not). Each
    shape is a sequence of ints or one int; None is skipped."""
    norm = [(s,) if isinstance(s, int) else s for s in shapes if s is not None]
    if not norm:
        return Size(())
    for shape in norm:
        if not isinstance(shape, Sequence):
            raise RuntimeError("Input shapes should be of type ints, a tuple of ints, or a list "
                               f"of ints, got {shape}")
    common = [1] * builtins.max(len(shape) for shape in norm)
    for arg, shape in enumerate(norm):
        for i in range(-1, -1 - len(shape), -1):
            n = shape[i]
            if n == common[i]:
                continue
            if common[i] == 1:
                if n < 0:
                    raise ValueError("Attempting to broadcast a dimension with negative length!")
                common[i] = n
            if n != 1 and common[i] != n:
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {n} at {i}! Mismatching "
                    f"argument at index {arg} had {shape}; but expected shape should be "
                    f"broadcastable to {common}")
    return Size(tuple(common))


def broadcast_tensors(*tensors: Any) -> tuple:
    """The tensors expanded to their common broadcast shape (ExpandBackward0 each)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    shape = tuple(broadcast_shapes(*(t.shape for t in tensors)))
    return tuple(t if tuple(t.shape) == shape else t.expand(shape) for t in tensors)


def cartesian_prod(*tensors: Tensor) -> Tensor:
    """Every combination of one element of each 1-D tensor, one per row."""
    for t in tensors:
        if t.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return stack([g.reshape(-1) for g in grids], 1)


def _tri_indices(row: int, col: int, offset: int, lower: bool, dtype: Any) -> Tensor:
    r, c = np.indices((row, col))
    keep = (c - r <= offset) if lower else (c - r >= offset)
    out = np.stack([r[keep], c[keep]]) if row and col else np.zeros((2, 0), dtype=np.int64)
    return Tensor._make(out.astype(_dtype.to_dtype(dtype).np if dtype is not None else np.int64))


def tril_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None, device: Any = None,
                 layout: Any = None, pin_memory: bool = False,
                 requires_grad: bool = False) -> Tensor:
    """The (row, column) indices of the lower triangle of a ``row x col`` matrix, row-major."""
    return _tri_indices(row, col, offset, True, dtype)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None, device: Any = None,
                 layout: Any = None, pin_memory: bool = False,
                 requires_grad: bool = False) -> Tensor:
    """The (row, column) indices of the upper triangle of a ``row x col`` matrix, row-major."""
    return _tri_indices(row, col, offset, False, dtype)


def argwhere(input: Tensor) -> Tensor:
    """The indices of the nonzero elements, one row each (``nonzero``)."""
    return nonzero(input)  # (a 0-d input: one row of no coordinates, or none)


__all__ = [
    "argwhere", "atleast_1d", "atleast_2d", "atleast_3d", "broadcast_shapes", "broadcast_tensors",
    "cartesian_prod", "column_stack", "diag", "diag_embed", "diagflat", "diagonal", "dsplit",
    "dstack", "hsplit", "ravel", "rot90", "row_stack", "tile", "trace", "tril_indices",
    "triu_indices", "vsplit",
]


# ---------------------------------------------------------------------------------------------
# kron, block_diag, combinations
# ---------------------------------------------------------------------------------------------

def kron(input: Tensor, other: Tensor) -> Tensor:
    """The Kronecker product: every element of ``input`` times the whole of ``other``.

    As torch: both views get interleaved unit dims, (a0, 1, a1, 1, ...) and (1, b0, 1, b1,
    ...), their broadcast product is viewed back as (a0 b0, a1 b1, ...).

    >>> import tapegrad as torch
    >>> torch.kron(torch.tensor([1, 2]), torch.tensor([1, 10]))
    tensor([ 1, 10,  2, 20])
    """
    nd = max(input.ndim, other.ndim)
    a = (1,) * (nd - input.ndim) + tuple(input.shape)
    b = (1,) * (nd - other.ndim) + tuple(other.shape)
    a_view = tuple(v for n in a for v in (n, 1))
    b_view = tuple(v for n in b for v in (1, n))
    result = _unsafe_view(_unsafe_view(input, shape=a_view) * _unsafe_view(other, shape=b_view),
                          shape=tuple(m * n for m, n in zip(a, b, strict=True)))
    return result


def _as_block(shape: tuple) -> tuple:
    """The (rows, cols) a tensor of ``shape`` takes on block_diag's diagonal."""
    if len(shape) == 0:
        return (1, 1)
    if len(shape) == 1:
        return (1, shape[0])
    return shape


@defop("block_diag", node="BlockDiagBackward0")
def _block_diag(*blocks: np.ndarray, dtype: Any, shapes: tuple) -> np.ndarray:
    sizes = [_as_block(b.shape) for b in blocks]
    out = np.zeros((sum(s[0] for s in sizes), sum(s[1] for s in sizes)), dtype=dtype)
    r = c = 0
    for b, (h, w) in zip(blocks, sizes, strict=True):
        out[r:r + h, c:c + w] = b.reshape(h, w)
        r, c = r + h, c + w
    return out


@_block_diag.backward
def block_diag_backward(ctx: Any, grad: Tensor) -> tuple:
    # each block's gradient: its place in grad
    out: list = []
    r = c = 0
    for shape in ctx.params["shapes"]:
        h, w = _as_block(shape)
        needed = ctx.input_meta[len(out)] is not None
        out.append(grad[r:r + h, c:c + w].reshape(shape) if needed else None)
        r, c = r + h, c + w
    return tuple(out)


def block_diag(*tensors: Tensor) -> Tensor:
    """The tensors (0-d, 1-d as a row, or 2-d) along the diagonal of a block matrix.

    >>> import tapegrad as torch
    >>> torch.block_diag(torch.tensor([[1, 2]]), torch.tensor([3]))
    tensor([[1, 2, 0],
            [0, 0, 3]])
    """
    for i, t in enumerate(tensors):
        if t.ndim > 2:
            raise RuntimeError("torch.block_diag: Input tensors must have 2 or fewer dimensions. "
                               f"Input {i} has {t.ndim} dimensions")
    if not tensors:
        return empty((1, 0))
    dtype = tensors[0].dtype
    for t in tensors[1:]:
        dtype = promote_types(dtype, t.dtype)
    return _block_diag(*tensors, dtype=dtype.np, shapes=tuple(tuple(t.shape) for t in tensors))


def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    """The length-``r`` combinations of the elements of a 1-d tensor, one per row, in
    itertools' order (``with_replacement``: as combinations_with_replacement).

    >>> import tapegrad as torch
    >>> torch.combinations(torch.tensor([1, 2, 3]))
    tensor([[1, 2],
            [1, 3],
            [2, 3]])
    """
    if input.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return empty((0,), dtype=input.dtype)
    n = input.shape[0]
    # as torch: the r-fold grid of the elements, masked to its increasing index tuples
    idx = np.indices((n,) * r)
    mask = np.ones((n,) * r, dtype=bool)
    for k in range(r - 1):
        mask &= idx[k] <= idx[k + 1] if with_replacement else idx[k] < idx[k + 1]
    keep = Tensor._make(mask)
    grids = meshgrid(*([input] * r), indexing="ij")
    return stack([masked_select(g, keep) for g in grids], 1)


def constant_pad_nd(input: Tensor, pad: Any, value: Any = 0) -> Tensor:
    """Pad (or, with negative pads, crop) the last ``len(pad) // 2`` dims with ``value``;
    ``pad`` lists the last dim first: (left, right, top, bottom, ...).

    >>> import tapegrad as torch
    >>> torch.constant_pad_nd(torch.tensor([1, 2]), [1, 2])
    tensor([0, 1, 2, 0, 0])
    """
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2:
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pad)}")
    if len(pad) > 2 * input.ndim:
        raise RuntimeError("Length of pad should be no more than twice the number of dimensions "
                           f"of the input. Pad length is {len(pad)}while the input has "
                           f"{input.ndim}dimensions.")
    for (lo, hi), n in zip(_pad_pairs(pad, input.ndim), input.shape, strict=True):
        if n + min(lo, 0) + min(hi, 0) < 0 or n + lo + hi < 0:
            raise RuntimeError("narrow(): length must be non-negative.")
    return _constant_pad(input, pad=pad, value=value)


__all__ += ["block_diag", "combinations", "constant_pad_nd", "kron"]
