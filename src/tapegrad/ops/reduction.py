"""Reductions: sum mean prod max min amax amin argmax argmin var std norm logsumexp cumsum,
and softmax / log_softmax (a reduction and an elementwise op, fused for stability).

Backward rules of reductions put the reduced dims back (``_restore``) and broadcast the
gradient over them; the engine never sees a reduced shape mismatch.
"""

from __future__ import annotations

import builtins
import math
from typing import Any

import numpy as np

from .. import _dtype, return_types
from .. import _numpy_warnings as _nw
from .._out import rule as out_rule
from .._signatures import UNSET
from .._tensor import Tensor, _wrap_dim
from ..kernels.norms import vector_norm_array
from ..kernels.sums import ones_vector
from . import _registry
from ._empty_checks import _empty_check
from ._lapack import public_linalg
from ._registry import defop, fast_backward, nondiff, scalar_type_name
from ._tangents import linear_tangent
from ._warnings import _warn_at_caller
from .elementwise import abs as abs_
from .elementwise import (
    invalid_arguments,
    isnan,
    logical_not,
    maximum,
    minimum,
    reject_complex,
    where,
)
from .elementwise import sign as real_sign


def _dims(dim: Any, ndim: int) -> tuple[int, ...]:
    """Normalise ``dim`` (None, int, list or tuple) to a sorted tuple of non-negative dims."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, (list, tuple)):
        if len(dim) == 0:
            return tuple(range(ndim))
        out = tuple(sorted(_wrap_dim(d, ndim) for d in dim))
        if len(set(out)) != len(out):
            raise RuntimeError(f"dim {out[0]} appears multiple times in the list of dims")
        return out if ndim else ()  # a 0-d tensor takes dim 0 / -1, and has nothing to reduce
    d = _wrap_dim(dim, ndim)
    return (d,) if ndim else ()


def _restore(grad: Tensor, shape: tuple, dims: tuple, keepdim: bool) -> Tensor:
    """Reinsert the reduced dims as size 1 and expand back to ``shape``."""
    if not keepdim and len(shape):
        for d in dims:
            grad = grad.unsqueeze(d)
    return grad.expand(shape)


# the ufuncs' reduce (np.sum and np.prod are Python wrappers: NumPy's warnings from them name
# NumPy's module, which tapegrad's warning filter does not silence; _numpy_warnings.py)
_ADD_REDUCE: Any = np.add.reduce
_MUL_REDUCE: Any = np.multiply.reduce


def _sum_dtype(x: np.ndarray, dtype: Any) -> Any:
    if dtype is not None:
        return _dtype.to_dtype(dtype).np
    return np.int64 if x.dtype.kind in "iub" else x.dtype


# ---------------------------------------------------------------------------------------------
# sum, mean
# ---------------------------------------------------------------------------------------------

# A large float32/float64 total runs as one matrix-vector product, rows of _ROW elements times
# ones, and a pairwise sum of the row sums: the BLAS reads the array at memory speed on every
# core, where NumPy's pairwise reduction takes about five times as long (1024x1024 float32:
# 150 -> 34 us). Rows of 128 keep the rounding error of the order of NumPy's and torch's.
_ROW = 128
_BLAS_SUM_MIN = 1 << 16


def _total(x: np.ndarray) -> np.ndarray:
    flat = x.reshape(-1)
    main = flat.size - flat.size % _ROW
    parts = flat[:main].reshape(-1, _ROW) @ ones_vector(_ROW, x.dtype)
    total = np.add.reduce(parts)
    if main < flat.size:
        total = total + np.add.reduce(flat[main:])
    return np.asarray(total, dtype=x.dtype)


@defop("sum", node="SumBackward0")
def _sum(x: np.ndarray, *, dtype: Any = None) -> np.ndarray:
    dt = _sum_dtype(x, dtype)
    if x.size >= _BLAS_SUM_MIN and x.dtype == dt and x.dtype.kind == "f" and (
        x.itemsize >= 4 and x.flags.c_contiguous
    ):
        return _total(x)
    return np.asarray(np.add.reduce(x, axis=None, dtype=dt))


@_sum.backward
def sum_backward(ctx: Any, grad: Tensor) -> tuple:  # d(sum x)/dx_i = 1
    return (grad.expand(ctx.input_shapes[0]),)


@fast_backward("sum")
def sum_fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    # the rule's expand made on the array (as expand's kernel makes it, ops/shape.py), without
    # the trip through the method, expand's checks and an op (ops/fast_paths.py): sum's
    # gradient is 0-d, so every stride of the view is 0, and it is writable when the gradient
    # is. (A gradient of another shape, which only a grad_fn called by hand gets, broadcasts.)
    shape = ctx.input_shapes[0]
    if g.ndim:
        return (np.broadcast_to(g, shape),)
    return (np.lib.stride_tricks.as_strided(g, shape, (0,) * len(shape),
                                            writeable=g.flags.writeable),)


@defop("sum_dim", node="SumBackward1")
def _sum_dim(x: np.ndarray, *, dim: tuple, keepdim: bool, dtype: Any = None) -> np.ndarray:
    return np.asarray(_ADD_REDUCE(x, axis=dim, keepdims=keepdim, dtype=_sum_dtype(x, dtype)))


@_sum_dim.backward
def sum_dim_backward(ctx: Any, grad: Tensor) -> tuple:  # d(sum x)/dx_i = 1 along the reduced dims
    p = ctx.params
    return (_restore(grad, ctx.input_shapes[0], p["dim"], p["keepdim"]),)


def _mean_check(x: np.ndarray, dtype: Any) -> None:
    if dtype is not None:
        d = _dtype.to_dtype(dtype)
        if not (d.is_floating_point or d.is_complex):
            raise RuntimeError(
                "mean(): could not infer output dtype. Optional dtype must be either a floating "
                f"point or complex dtype. Got: {_scalar_name(d)}"
            )
    if dtype is None and x.dtype.kind not in "fc" and x.dtype.name != "bfloat16":
        name = {"i": "Long", "b": "Bool", "u": "Byte"}.get(x.dtype.kind, "Long")
        if x.dtype.kind == "i":
            name = {1: "Char", 2: "Short", 4: "Int", 8: "Long"}[x.dtype.itemsize]
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point or "
            f"complex dtype. Got: {name}"
        )


def _scalar_name(d: Any) -> str:
    return scalar_type_name(d)


@defop("mean", node="MeanBackward0")
def _mean(x: np.ndarray, *, dtype: Any = None) -> np.ndarray:
    _mean_check(x, dtype)
    out_dtype = _dtype.to_dtype(dtype).np if dtype is not None else x.dtype
    return np.asarray(_nw.mean(x, dtype=out_dtype), dtype=out_dtype)


@_mean.backward
def mean_backward(ctx: Any, grad: Tensor) -> tuple:  # d(mean x)/dx_i = 1/n
    shape = ctx.input_shapes[0]
    return (grad.expand(shape) / builtins.max(int(np.prod(shape)), 1),)


@defop("mean_dim", node="MeanBackward1")
def _mean_dim(x: np.ndarray, *, dim: tuple, keepdim: bool, dtype: Any = None) -> np.ndarray:
    _mean_check(x, dtype)
    out_dtype = _dtype.to_dtype(dtype).np if dtype is not None else x.dtype
    return np.asarray(_nw.mean(x, axis=dim, keepdims=keepdim, dtype=out_dtype), dtype=out_dtype)


@_mean_dim.backward
def mean_dim_backward(ctx: Any, grad: Tensor) -> tuple:
    # d(mean x)/dx_i = 1/n along the reduced dims
    p = ctx.params
    shape = ctx.input_shapes[0]
    n = int(np.prod([shape[d] for d in p["dim"]])) if shape else 1
    return (_restore(grad, shape, p["dim"], p["keepdim"]) / builtins.max(n, 1),)


def sum(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """Sum of all elements, or over ``dim`` (an int or a tuple of ints)."""
    if dim is None:
        if dtype is None:
            return _sum(input)
        return _sum(input, dtype=dtype)
    return _sum_dim(input, dim=_dims(dim, input.ndim), keepdim=keepdim, dtype=dtype)


# ``x.sum()``: torch's argument parser also takes NumPy's names, ``x.sum(axis=0, keepdims=True)``.
# For the other methods _numpy_names.py makes a face that takes them and calls the function;
# sum, on nearly every training step's path, takes them itself, so that the call lands here.
def tensor_sum(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None,
               axis: Any = UNSET, keepdims: Any = UNSET) -> Tensor:
    if axis is not UNSET:  # (both names of one parameter: the TypeError torch's parser raises)
        if dim is not None:
            raise TypeError("sum() got an unexpected keyword argument 'axis'")
        dim = axis
    if keepdims is not UNSET:
        if keepdim is not False:
            raise TypeError("sum() got an unexpected keyword argument 'keepdims'")
        keepdim = keepdims
    if dim is None:
        if dtype is None:
            return _sum(input)
        return _sum(input, dtype=dtype)
    return _sum_dim(input, dim=_dims(dim, input.ndim), keepdim=keepdim, dtype=dtype)


# named ``sum`` (torch's messages say ``sum()``), documented as sum, and reporting sum's (torch's)
# parameters to ``inspect.signature``, as a face does
tensor_sum.__name__ = tensor_sum.__qualname__ = "sum"
tensor_sum.__doc__ = sum.__doc__
tensor_sum.__wrapped__ = sum  # type: ignore[attr-defined]


def mean(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    if dim is None:
        return _mean(input, dtype=dtype)
    return _mean_dim(input, dim=_dims(dim, input.ndim), keepdim=keepdim, dtype=dtype)


@defop("nansum", node="NansumBackward0", save=(0,))
def _nansum(x: np.ndarray, *, dim: tuple, keepdim: bool, dtype: Any = None) -> np.ndarray:
    if x.dtype.kind == "c":
        raise RuntimeError("nansum does not support complex inputs")
    return np.asarray(np.nansum(x, axis=dim, keepdims=keepdim, dtype=_sum_dtype(x, dtype)))


@_nansum.backward
def nansum_backward(ctx: Any, grad: Tensor) -> tuple:
    # d(sum of the non-NaN x)/dx_i = [x_i is not NaN]
    (x,) = ctx.saved
    p = ctx.params
    return (where(isnan(x), 0.0, _restore(grad, x.shape, p["dim"], p["keepdim"])),)


def nansum(input: Tensor, dim: Any = None, keepdim: bool = False, *,
           dtype: Any = None) -> Tensor:
    """Sum over ``dim`` with NaNs counted as zero."""
    return _nansum(input, dim=_dims(dim, input.ndim), keepdim=keepdim, dtype=dtype)


def nanmean(input: Tensor, dim: Any = None, keepdim: bool = False, *,
            dtype: Any = None) -> Tensor:
    """The mean over ``dim`` of the elements that are not NaN: nansum / their count."""
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype "
                           f"but got {_scalar_name(input.dtype)}")
    count = sum(logical_not(isnan(input)), dim, keepdim)
    return nansum(input, dim, keepdim, dtype=dtype) / count


# ---------------------------------------------------------------------------------------------
# prod
# ---------------------------------------------------------------------------------------------

def _prod_dtype(x: np.ndarray) -> Any:
    return np.int64 if x.dtype.kind in "iub" else x.dtype


@defop("prod", node="ProdBackward0", save=(0,), save_output=True)
def _prod(x: np.ndarray, *, keep_dtype: bool = False) -> np.ndarray:
    return np.asarray(np.multiply.reduce(x, axis=None,
                                         dtype=x.dtype if keep_dtype else _prod_dtype(x)))


@defop("prod_dim", node="ProdBackward1", save=(0,), save_output=True)
def _prod_dim(x: np.ndarray, *, dim: int, keepdim: bool, keep_dtype: bool = False
              ) -> np.ndarray:
    dt = x.dtype if keep_dtype else _prod_dtype(x)
    if x.ndim == 0:  # the product over the one dim of a 0-d tensor: the value itself
        return np.array(x, dtype=dt)
    return np.asarray(_MUL_REDUCE(x, axis=dim, keepdims=keepdim, dtype=dt))


def _prod_others(x: Tensor, dim: int) -> Tensor:
    """prod_{j != i} x_j along ``dim`` for every i, without dividing (exact with zeros)."""
    n = x.shape[dim]
    xm = x.movedim(dim, -1).unsqueeze(-2)  # (..., 1, n)
    eye = Tensor._make(np.eye(n, dtype=bool))
    rows = xm.expand(*xm.shape[:-2], n, n).masked_fill(eye, 1.0)
    return rows.prod(-1).movedim(-1, dim)


@_prod.backward
def prod_backward(ctx: Any, grad: Tensor) -> tuple:  # d(prod x)/dx_i = prod_{j != i} x_j
    x, y = ctx.saved
    if x.ndim == 0:  # prod of one value is that value
        return (grad,)
    if bool((x._data != 0).all()):  # (an empty x too: its gradient still depends on x)
        return (grad * y / x,)
    return (grad * _prod_others(x.reshape(-1), 0).reshape(x.shape),)


@_prod_dim.backward
def prod_dim_backward(ctx: Any, grad: Tensor) -> tuple:
    # d(prod x)/dx_i = prod_{j != i} x_j along dim
    x, y = ctx.saved
    dim, keepdim = ctx.params["dim"], ctx.params["keepdim"]
    if x.ndim == 0:
        return (grad,)
    g = _restore(grad, x.shape, (dim,), keepdim)
    if bool((x._data != 0).all()):
        return (g * _restore(y, x.shape, (dim,), keepdim) / x,)
    return (g * _prod_others(x, dim),)


def prod(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    keep = dtype is not None
    if keep:
        input = input.to(dtype)
    if dim is None:
        return _prod(input, keep_dtype=keep) if keep else _prod(input)
    dim = _wrap_dim(dim, input.ndim)
    if keep:
        return _prod_dim(input, dim=dim, keepdim=keepdim, keep_dtype=True)
    return _prod_dim(input, dim=dim, keepdim=keepdim)


# ---------------------------------------------------------------------------------------------
# max, min, amax, amin, argmax, argmin
# ---------------------------------------------------------------------------------------------


_Max = return_types.max.of
_Min = return_types.min.of


def _evenly(ctx: Any, grad: Tensor, keep_dims: tuple | None) -> tuple:
    """Spread the gradient evenly over the elements equal to the result (torch's rule)."""
    x, y = ctx.saved
    if keep_dims is None:
        mask = (x == y) | ((x != x) & (y != y))  # a NaN result: the NaNs share it
        return (grad * mask / mask.sum(),)
    dims, keepdim = keep_dims
    y_full = _restore(y, x.shape, dims, keepdim)
    mask = x == y_full
    count = _restore(mask.sum(dim=dims, keepdim=True), x.shape, dims, True)
    return (_restore(grad, x.shape, dims, keepdim) * mask / count,)


@defop("max", node="MaxBackward1", save=(0,), save_output=True)
def _max(x: np.ndarray) -> np.ndarray:
    _empty_check(x, "max")
    return np.asarray(np.max(x))


@_max.backward
def max_backward(ctx: Any, grad: Tensor) -> tuple:  # the gradient goes to the maxima, split evenly
    return _evenly(ctx, grad, None)


@defop("min", node="MinBackward1", save=(0,), save_output=True)
def _min(x: np.ndarray) -> np.ndarray:
    _empty_check(x, "min")
    return np.asarray(np.min(x))


@_min.backward
def min_backward(ctx: Any, grad: Tensor) -> tuple:  # the gradient goes to the minima, split evenly
    return _evenly(ctx, grad, None)


@defop("amax", node="AmaxBackward0", save=(0,), save_output=True)
def _amax(x: np.ndarray, *, dim: tuple, keepdim: bool) -> np.ndarray:
    _empty_check(x, "amax", dim[0] if dim else None)
    return np.asarray(np.max(x, axis=dim, keepdims=keepdim))


@_amax.backward
def amax_backward(ctx: Any, grad: Tensor) -> tuple:  # to the maxima along dim, split evenly
    return _evenly(ctx, grad, (ctx.params["dim"], ctx.params["keepdim"]))


@defop("amin", node="AminBackward0", save=(0,), save_output=True)
def _amin(x: np.ndarray, *, dim: tuple, keepdim: bool) -> np.ndarray:
    _empty_check(x, "amin", dim[0] if dim else None)
    return np.asarray(np.min(x, axis=dim, keepdims=keepdim))


@_amin.backward
def amin_backward(ctx: Any, grad: Tensor) -> tuple:  # to the minima along dim, split evenly
    return _evenly(ctx, grad, (ctx.params["dim"], ctx.params["keepdim"]))


def _select_reduce(x: np.ndarray, dim: int, keepdim: bool, arg: Any) -> tuple:
    _empty_check(x, "max" if arg is np.argmax else "min", dim)
    if x.ndim == 0:
        return x.copy(), np.zeros((), dtype=np.int64)
    idx = arg(x, axis=dim, keepdims=True)
    values = np.take_along_axis(x, idx, axis=dim)
    if not keepdim:
        values = np.squeeze(values, axis=dim)
        idx = np.squeeze(idx, axis=dim)
    return values, idx.astype(np.int64)


def _index_backward(ctx: Any, grads: list) -> tuple:
    """d(values)/dx: the gradient goes to the chosen index only (scatter into zeros)."""
    grad = grads[0]
    shape = ctx.input_shapes[0]
    dim, keepdim = ctx.params["dim"], ctx.params["keepdim"]
    if grad is None:
        return (None,)
    if len(shape) == 0:
        return (grad,)
    idx = ctx.params["_indices"]
    if not keepdim:
        grad = grad.unsqueeze(dim)
        idx = np.expand_dims(idx, dim)
    zeros = Tensor._make(np.zeros(shape, dtype=grad._data.dtype))
    return (zeros.scatter_add(dim, Tensor._make(idx), grad),)


@defop("max_dim", node="MaxBackward0", outputs=2)
def _max_dim(x: np.ndarray, *, dim: int, keepdim: bool, _indices: Any = None) -> tuple:
    return _select_reduce(x, dim, keepdim, np.argmax)


_max_dim.backward(_index_backward)


def extremum_dim_jvp(tangents: list, inputs: tuple, out: tuple, *, dim: int, keepdim: bool,
                   _indices: Any = None) -> tuple:
    """The tangent at the chosen index (the indices have none)."""
    t = tangents[0]
    if t.ndim == 0:
        return (t, None)
    idx = out[1] if keepdim else out[1].unsqueeze(dim)
    chosen = t.gather(dim, idx)
    return (chosen if keepdim else chosen.squeeze(dim), None)


_max_dim.jvp(extremum_dim_jvp)


@defop("min_dim", node="MinBackward0", outputs=2)
def _min_dim(x: np.ndarray, *, dim: int, keepdim: bool, _indices: Any = None) -> tuple:
    return _select_reduce(x, dim, keepdim, np.argmin)


_min_dim.backward(_index_backward)
_min_dim.jvp(extremum_dim_jvp)


def _reduce_with_indices(op: Any, cls: Any, input: Tensor, dim: int, keepdim: bool) -> Any:
    params: dict = {"dim": _wrap_dim(dim, input.ndim), "keepdim": keepdim}
    values, indices = op(input, **params)
    if values.grad_fn is not None:
        values.grad_fn.params["_indices"] = indices._data
    return cls(values, indices)


def _extreme(name: str, input: Tensor, dim: Any, keepdim: bool, other: Any) -> Any:
    """``max`` / ``min`` (``name``): of all elements, (values, indices) along ``dim``, or the
    elementwise ``maximum`` / ``minimum`` with a tensor given as ``dim`` or ``other``."""
    if other is not None:
        dim = other
    if not isinstance(input, Tensor):
        raise invalid_arguments(name, input, *(() if dim is None else (dim,)))
    if isinstance(dim, Tensor):
        return (maximum if name == "max" else minimum)(input, dim)
    if dim is None:
        reject_complex(input, f'"{name}_all" not implemented for \'{{}}\'')
        return (_max if name == "max" else _min)(input)
    reject_complex(input, f"{name}(): does not support complex input", RuntimeError)
    if name == "max":
        return _reduce_with_indices(_max_dim, _Max, input, dim, keepdim)
    return _reduce_with_indices(_min_dim, _Min, input, dim, keepdim)


def max(input: Tensor, dim: Any = None, keepdim: bool = False, *, other: Any = None) -> Any:
    """``max(x)``: the largest value; ``max(x, dim)``: (values, indices); ``max(a, b)``
    (``other=b``): elementwise maximum."""
    return _extreme("max", input, dim, keepdim, other)


def min(input: Tensor, dim: Any = None, keepdim: bool = False, *, other: Any = None) -> Any:
    return _extreme("min", input, dim, keepdim, other)


def _extreme_dims(input: Tensor, dim: Any, name: str) -> tuple:
    dims = _dims(dim, input.ndim)
    x = input._data
    if x.size == 0:
        if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
            _empty_check(x, name)
        for d in dims:
            _empty_check(x, name, d)
    return dims


def amax(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    reject_complex(input, '"max_values_cpu" not implemented for \'{}\'')
    return _amax(input, dim=_extreme_dims(input, dim, "amax"), keepdim=keepdim)


def amin(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    reject_complex(input, '"min_values_cpu" not implemented for \'{}\'')
    return _amin(input, dim=_extreme_dims(input, dim, "amin"), keepdim=keepdim)


def _same_dtype_out(args: tuple, out: Any) -> None:
    """amax's and amin's out rule: out has the input's dtype."""
    input = args[0]
    if isinstance(out, Tensor) and isinstance(input, Tensor) and out.dtype != input.dtype:
        raise RuntimeError(
            f"Expected the dtype for input and out to match, but got "
            f"{scalar_type_name(input.dtype)} for input's dtype and {scalar_type_name(out.dtype)}"
            " for out's dtype.")


out_rule("amax", "amin", check=_same_dtype_out)


def _arg_kernel(fn: Any, x: np.ndarray, dim: int | None, keepdim: bool) -> np.ndarray:
    """argmax/argmin as int64: over the flattened input (``dim=None``) or along ``dim``."""
    if dim is None:
        out = np.asarray(fn(x.reshape(-1)), dtype=np.int64)
        return out.reshape((1,) * x.ndim) if keepdim else out
    if x.ndim == 0:
        return np.zeros((), dtype=np.int64)
    return np.asarray(fn(x, axis=dim, keepdims=keepdim), dtype=np.int64)


@nondiff("argmax")
def _argmax(x: np.ndarray, *, dim: int | None, keepdim: bool) -> np.ndarray:
    return _arg_kernel(np.argmax, x, dim, keepdim)


@nondiff("argmin")
def _argmin(x: np.ndarray, *, dim: int | None, keepdim: bool) -> np.ndarray:
    return _arg_kernel(np.argmin, x, dim, keepdim)


def _arg(op: Any, name: str, input: Tensor, dim: Any, keepdim: bool) -> Tensor:
    x = input._data
    if dim is None:
        _empty_check(x, name)
        d = None
    else:
        d = _wrap_dim(dim, x.ndim)
        if x.ndim:
            _empty_check(x, name, d)
    if _registry._SPECIAL:  # a capture listens: through the registry (``nondiff``)
        return op(input, dim=d, keepdim=keepdim)
    return Tensor._make(op.forward(x, dim=d, keepdim=keepdim))  # the same, without the detour


def argmax(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    reject_complex(input, "argmax(): does not support complex input", RuntimeError)
    return _arg(_argmax, "argmax", input, dim, keepdim)


def argmin(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    reject_complex(input, "argmin(): does not support complex input", RuntimeError)
    return _arg(_argmin, "argmin", input, dim, keepdim)


# ---------------------------------------------------------------------------------------------
# var, std
# ---------------------------------------------------------------------------------------------

def _correction(unbiased: Any, correction: Any) -> float:
    if correction is not None:
        return correction
    if unbiased is None:
        return 1
    return 1 if unbiased else 0


@defop("var", node="VarBackward0", save=(0,))
def _var(x: np.ndarray, *, dim: tuple, correction: float, keepdim: bool,
         dim_none: bool = False) -> np.ndarray:
    _float_check(x, "var")
    n = int(np.prod([x.shape[d] for d in dim])) if x.ndim else 1
    with np.errstate(divide="ignore", invalid="ignore"):
        mean_ = _nw.mean(x, axis=dim, keepdims=True)
        d = x - mean_
        if x.dtype.kind == "c":  # |x - mean|^2: a complex tensor's variance is real
            d = np.abs(d)
        ss = np.sum(d ** 2, axis=dim, keepdims=keepdim)
        return np.asarray(ss / builtins.max(n - correction, 0), dtype=d.dtype)


@_var.backward
def var_backward(ctx: Any, grad: Tensor) -> tuple:
    return (_var_grad(grad, ctx.saved[0], ctx.params),)


def _var_grad(grad: Tensor, x: Tensor, p: dict) -> Tensor:
    """d var/dx_i = 2 (x_i - mean) / (n - correction), times the gradient (torch's rule).
    With no degrees of freedom left (n <= correction), a reduction over all elements
    (``dim=None``) gives NaN where x equals its mean and inf elsewhere; one over given dims
    takes 2 / 0 as inf (inf times 0: NaN)."""
    n = int(np.prod([x.shape[d] for d in p["dim"]])) if x.ndim else 1
    dof = n - p["correction"]
    g = _restore(grad, x.shape, p["dim"], p["keepdim"])
    if dof <= 0 and (x.ndim == 0 or p.get("dim_none", False)):
        return g * where(x == x.mean(), math.nan, math.inf)
    centered = x - x.mean(dim=p["dim"], keepdim=True) if x.ndim else x * 0
    return g * centered * (2.0 / dof if dof else math.inf)


def _std_grad(grad: Tensor, y: Tensor, x: Tensor, p: dict) -> Tensor:
    """d std/dx = d var/dx / (2 std), with 0 where the std is 0 (torch's rule)."""
    return _var_grad((grad / (y * 2)).masked_fill(y == 0, 0), x, p)


@defop("std", node="StdBackward0", save=(0,), save_output=True)
def _std(x: np.ndarray, *, dim: tuple, correction: float, keepdim: bool,
         dim_none: bool = False) -> np.ndarray:
    return np.sqrt(_var.forward(x, dim=dim, correction=correction, keepdim=keepdim))


@_std.backward
def std_backward(ctx: Any, grad: Tensor) -> tuple:
    x, y = ctx.saved
    return (_std_grad(grad, y, x, ctx.params),)


def _float_check(x: np.ndarray, name: str) -> None:
    if x.dtype.kind not in "fc":
        raise RuntimeError(
            f"{name}(): input dtype should be either floating point or complex dtypes. "
            f"Got {_dtype.from_numpy_dtype(x.dtype).name.capitalize()} instead."
        )


def _var_args(input: Tensor, dim: Any, unbiased: Any, keepdim: bool, correction: Any,
              name: str = "var") -> dict:
    if isinstance(dim, bool):  # var(x, unbiased)
        unbiased, dim = dim, None
    if input._data.dtype.kind not in "fcV":
        raise RuntimeError(f"{'std and var' if name in ('var', 'std') else name} only support "
                           "floating point and complex dtypes")
    dims = _dims(dim, input.ndim)
    corr = _correction(unbiased, correction)
    _check_degrees_of_freedom(input, dims, corr, name)
    args = {"dim": dims, "correction": corr, "keepdim": keepdim}
    if dim is None:  # (the backward rule tells a reduction over all elements apart)
        args["dim_none"] = True
    return args


def _check_degrees_of_freedom(input: Tensor, dims: tuple, correction: float, name: str) -> None:
    """torch's warning when n - correction <= 0, n being the input's elements per output
    element (0 for an empty result); the result is then inf or NaN. A complex input warns
    twice, as torch's kernel reduces the real and the imaginary part separately."""
    shape = input._data.shape
    kind = input._data.dtype.kind
    per_output = 1
    for d in dims:
        per_output *= shape[d]
    n = per_output if input._data.size else 0
    if n - correction > 0:
        return
    for _ in range(2 if kind == "c" else 1):
        _warn_at_caller(
            f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than "
            "the reduction factor (input numel divided by output numel). (Triggered "
            "internally at /__w/pytorch/pytorch/aten/src/ATen/native/ReduceOps.cpp:1861.)",
            UserWarning)


def var(input: Tensor, dim: Any = None, unbiased: Any = True, keepdim: bool = False, *,
        correction: Any = None) -> Tensor:
    """Variance over ``dim``, divided by ``n - correction`` (default correction 1)."""
    return _var(input, **_var_args(input, dim, unbiased, keepdim, correction))


def std(input: Tensor, dim: Any = None, unbiased: Any = True, keepdim: bool = False, *,
        correction: Any = None) -> Tensor:
    return _std(input, **_var_args(input, dim, unbiased, keepdim, correction, "std"))


def _mean_of(x: np.ndarray, dim: tuple, keepdim: bool) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(_nw.mean(x, axis=dim, keepdims=keepdim), dtype=x.dtype)


@defop("var_mean", node="VarMeanBackward0", save=(0,), outputs=2)
def _var_mean(x: np.ndarray, *, dim: tuple, correction: float, keepdim: bool,
              dim_none: bool = False) -> tuple:
    return (_var.forward(x, dim=dim, correction=correction, keepdim=keepdim),
            _mean_of(x, dim, keepdim))


@_var_mean.backward
def var_mean_backward(ctx: Any, grads: list) -> tuple:
    # the var rule for the first output, 1/n for the mean
    (x,) = ctx.saved
    p = ctx.params
    n = int(np.prod([x.shape[d] for d in p["dim"]])) if x.ndim else 1
    gv, gm = (list(grads) + [None])[:2]  # the engine omits trailing outputs' None
    out = None
    if gv is not None:
        out = _var_grad(gv, x, p)
    if gm is not None:
        gmean = _restore(gm, x.shape, p["dim"], p["keepdim"]) / builtins.max(n, 1)
        out = gmean if out is None else out + gmean
    return (out,)


@defop("std_mean", node="StdMeanBackward0", save=(0,), save_output=True, outputs=2)
def _std_mean(x: np.ndarray, *, dim: tuple, correction: float, keepdim: bool,
              dim_none: bool = False) -> tuple:
    return (_std.forward(x, dim=dim, correction=correction, keepdim=keepdim),
            _mean_of(x, dim, keepdim))


@_std_mean.backward
def std_mean_backward(ctx: Any, grads: list) -> tuple:
    # the std rule for the first output, 1/n for the mean
    x, y = ctx.saved
    p = ctx.params
    n = int(np.prod([x.shape[d] for d in p["dim"]])) if x.ndim else 1
    gs, gm = (list(grads) + [None])[:2]  # the engine omits trailing outputs' None
    out = None
    if gs is not None:
        out = _std_grad(gs, y, x, p)
    if gm is not None:
        gmean = _restore(gm, x.shape, p["dim"], p["keepdim"]) / builtins.max(n, 1)
        out = gmean if out is None else out + gmean
    return (out,)


# their rules take complex inputs as they are (a real variance, a linear mean): no conj wrap
_var_mean.holomorphic = _std_mean.holomorphic = False


def var_mean(input: Tensor, dim: Any = None, unbiased: Any = True, keepdim: bool = False, *,
             correction: Any = None) -> tuple:
    """``(var, mean)`` over ``dim`` in one op (torch's ``VarMeanBackward0``)."""
    return _var_mean(input, **_var_args(input, dim, unbiased, keepdim, correction,
                                          "var_mean"))


def std_mean(input: Tensor, dim: Any = None, unbiased: Any = True, keepdim: bool = False, *,
             correction: Any = None) -> tuple:
    """``(std, mean)`` over ``dim`` in one op (torch's ``StdMeanBackward0``)."""
    return _std_mean(input, **_var_args(input, dim, unbiased, keepdim, correction,
                                          "std_mean"))


# ---------------------------------------------------------------------------------------------
# norm
# ---------------------------------------------------------------------------------------------

@defop("norm", node="LinalgVectorNormBackward0", save=(0,), save_output=True)
def _norm(x: np.ndarray, *, ord: float, dim: tuple, keepdim: bool) -> np.ndarray:
    _float_check(x, "linalg.vector_norm")
    return vector_norm_array(x, ord, dim, keepdim)


@_norm.backward
def norm_backward(ctx: Any, grad: Tensor) -> tuple:  # d|x|_p/dx = x |x|^(p-2) / |x|_p^(p-1)
    sign = real_sign
    x, y = ctx.saved
    p = ctx.params
    ord_, dims, keepdim = p["ord"], p["dim"], p["keepdim"]
    g = _restore(grad, x.shape, dims, keepdim)
    yf = _restore(y, x.shape, dims, keepdim)
    if ord_ == 0:
        return (g * 0,)
    if x._data.dtype.kind == "c":
        sign = _sgn  # type: ignore[assignment]  # the complex sign z / |z|
    if ord_ == 1:
        return (g * sign(x),)
    if ord_ == 2:
        return (where(yf == 0, 0.0, g * x / yf),)
    if ord_ in (float("inf"), float("-inf")):
        mask = abs_(x) == yf
        count = _restore(mask.sum(dim=dims, keepdim=True), x.shape, dims, True)
        return (g * sign(x) * mask / count,)
    # torch's branches; a zero norm gets a zero gradient (its subgradient), and the
    # denominator is kept away from 0 so that no nan enters the second derivative
    ax = abs_(x)
    zero = yf == 0
    safe = where(zero, 1.0, yf)
    if ord_ < 1:  # (as torch: |x|^(p-1) at x = 0 leaves a nan in the second derivative)
        scaled = where(x == 0, 0.0, sign(x) * ax ** (ord_ - 1))
        return (scaled * g * yf ** (1 - ord_),)
    scale = where(zero, 0.0, g / safe ** (ord_ - 1))
    if ord_ < 2:
        return (sign(x) * ax ** (ord_ - 1) * scale,)
    return (x * ax ** (ord_ - 2) * scale,)


def _sgn(x: Tensor) -> Tensor:
    return x.sgn()


def norm(input: Tensor, p: Any = "fro", dim: Any = None, keepdim: bool = False,
         dtype: Any = None) -> Tensor:
    """Vector p-norm over ``dim`` (all elements by default); 'fro' is the 2-norm."""
    if p == "fro" or p is None:
        p = 2
    if p == "nuc":  # the sum of the singular values (linalg.matrix_norm)
        if dtype is not None:
            input = input.to(dtype)
        # (tapegrad.linalg's, on its public svdvals, which autocast casts: ops/_lapack.py)
        return public_linalg().matrix_norm(input, "nuc", (-2, -1) if dim is None else dim, keepdim)
    if dtype is not None:
        input = input.to(dtype)
    return _norm(input, ord=float(p), dim=_dims(dim, input.ndim), keepdim=keepdim)


def vector_norm(x: Tensor, ord: Any = 2, dim: Any = None, keepdim: bool = False, *,
                dtype: Any = None) -> Tensor:
    if dtype is not None:
        x = x.to(dtype)
    return _norm(x, ord=float(ord), dim=_dims(dim, x.ndim), keepdim=keepdim)


# ---------------------------------------------------------------------------------------------
# logsumexp, cumsum, softmax, log_softmax
# ---------------------------------------------------------------------------------------------

def _lse(x: np.ndarray, dims: tuple, keepdim: bool) -> np.ndarray:
    m = np.max(x, axis=dims, keepdims=True) if x.size else np.zeros((1,) * x.ndim, x.dtype)
    m = np.where(np.isfinite(m), m, 0)
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(np.exp(x - m), axis=dims, keepdims=True)) + m
    if not keepdim:
        out = np.squeeze(out, axis=dims)
    return np.asarray(out, dtype=x.dtype)


@defop("logsumexp", node="LogsumexpBackward0", save=(0,), save_output=True)
def _logsumexp(x: np.ndarray, *, dim: tuple, keepdim: bool) -> np.ndarray:
    if x.dtype.kind in "iub":
        x = x.astype(_dtype.get_default_dtype().np)
    return _lse(x, dim, keepdim)


@_logsumexp.backward
def logsumexp_backward(ctx: Any, grad: Tensor) -> tuple:  # d lse/dx_i = e^(x_i - lse) (the softmax)
    x, y = ctx.saved
    p = ctx.params
    g = _restore(grad, x.shape, p["dim"], p["keepdim"])
    return (g * (x - _restore(y, x.shape, p["dim"], p["keepdim"])).exp(),)


def logsumexp(input: Tensor, dim: Any, keepdim: bool = False) -> Tensor:
    return _logsumexp(input, dim=_dims(dim, input.ndim), keepdim=keepdim)


def _float_out(args: tuple, out: Any) -> None:
    """logsumexp's out rule: a floating point out."""
    if isinstance(out, Tensor) and not (out.dtype.is_floating_point or out.dtype.is_complex):
        raise RuntimeError("logsumexp(): Expected floating point type for result tensor, but "
                           f"got: {scalar_type_name(out.dtype)}")


out_rule("logsumexp", check=_float_out)


@defop("cumsum", node="CumsumBackward0")
def _cumsum(x: np.ndarray, *, dim: int, dtype: Any = None) -> np.ndarray:
    out = _sum_dtype(x, dtype)
    if x.ndim == 0:
        return x.astype(out)
    wide = _CUMULATE_IN.get(np.dtype(out))
    if wide is not None:
        return np.cumsum(x, axis=dim, dtype=wide).astype(out)
    return np.cumsum(x, axis=dim, dtype=out)


# torch's CPU cumsum and cumprod accumulate float32 (complex64) in double precision and round
# each running total: float32 accumulation differs in the last bits for half the elements.
_CUMULATE_IN = {np.dtype(np.float32): np.float64, np.dtype(np.complex64): np.complex128}


@_cumsum.backward
def cumsum_backward(ctx: Any, grad: Tensor) -> tuple:
    # d(cumsum x)_j/dx_i = [i <= j]: a reversed cumsum
    dim = ctx.params["dim"]
    if grad.ndim == 0:
        return (grad,)
    return (grad.flip(dim).cumsum(dim).flip(dim),)


def cumsum(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    return _cumsum(input, dim=_wrap_dim(dim, input.ndim), dtype=dtype)


@defop("cumprod", node="CumprodBackward0", save=(0,), save_output=True)
def _cumprod(x: np.ndarray, *, dim: int, dtype: Any = None) -> np.ndarray:
    out_dtype = _sum_dtype(x, dtype)  # integers and bools multiply in int64, as torch's
    if not x.ndim:
        return x.astype(out_dtype)
    wide = _CUMULATE_IN.get(np.dtype(out_dtype))
    if wide is not None:
        return np.cumprod(x, axis=dim, dtype=wide).astype(out_dtype)
    return np.cumprod(x, axis=dim, dtype=out_dtype)


@_cumprod.backward
def cumprod_backward(ctx: Any, grad: Tensor) -> tuple:
    # sum_{j >= i} g_j y_j / x_i (inputs without zeros)
    x, y = ctx.saved
    dim = ctx.params["dim"]
    if x.ndim == 0:
        return (grad,)
    if not (x._data == 0).any():
        return ((grad * y).flip(dim).cumsum(dim).flip(dim) / x,)
    # With zeros, no division: dL/dx_i = sum_{j >= i} g_j prod_{k <= j, k != i} x_k, from the
    # cumulative products of x with x_i set to 1, one row per i (O(n^2), only on this path).
    n = x.shape[dim]
    xl = x.movedim(dim, -1)
    gl = grad.movedim(dim, -1)
    eye = Tensor._make(np.eye(n, dtype=bool))
    rows = where(eye, 1.0, xl.unsqueeze(-2))  # (..., i, k): x_k, 1 at k = i
    later = Tensor._make(np.triu(np.ones((n, n), dtype=bool)))  # j >= i
    terms = where(later, gl.unsqueeze(-2) * rows.cumprod(-1), 0.0)
    return (terms.sum(-1).movedim(-1, dim),)


def cumprod(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    if dtype is not None:
        return _cumprod(input.to(dtype), dim=_wrap_dim(dim, input.ndim), dtype=dtype)
    return _cumprod(input, dim=_wrap_dim(dim, input.ndim))


def _softmax_np(x: np.ndarray, dim: int) -> np.ndarray:
    if x.ndim == 0:
        return np.ones_like(x)
    m = np.max(x, axis=dim, keepdims=True) if x.size else 0
    e = np.exp(x - m)
    return e / np.sum(e, axis=dim, keepdims=True)


@defop("softmax", node="SoftmaxBackward0", save_output=True)
def _softmax(x: np.ndarray, *, dim: int) -> np.ndarray:
    return _softmax_np(x, dim)


@_softmax.backward
def softmax_backward(ctx: Any, grad: Tensor) -> tuple:  # J = diag(y) - y y^T: y * (g - sum(g y))
    (y,) = ctx.saved
    dim = ctx.params["dim"]
    if y.ndim == 0:  # the sum over a 0-d dim is the element itself
        return (y * (grad - grad * y),)
    return (y * (grad - (grad * y).sum(dim, keepdim=True)),)


@defop("log_softmax", node="LogSoftmaxBackward0", save_output=True)
def _log_softmax(x: np.ndarray, *, dim: int) -> np.ndarray:
    if x.ndim == 0:
        return np.zeros_like(x)
    # (x - max) - log(sum(e^(x - max))): never x - lse, which loses digits for large logits
    m = np.max(x, axis=dim, keepdims=True) if x.size else np.zeros((1,) * x.ndim, x.dtype)
    shifted = x - np.where(np.isfinite(m), m, 0)
    with np.errstate(divide="ignore"):
        return shifted - np.log(np.sum(np.exp(shifted), axis=dim, keepdims=True))


@_log_softmax.backward
def log_softmax_backward(ctx: Any, grad: Tensor) -> tuple:  # d(x - lse)/dx: g - softmax * sum(g)
    (y,) = ctx.saved
    dim = ctx.params["dim"]
    if y.ndim == 0:  # the sum over a 0-d dim is the element itself
        return (grad - y.exp() * grad,)
    return (grad - y.exp() * grad.sum(dim, keepdim=True),)


def _softmax_input(input: Tensor, dim: Any, dtype: Any, name: str) -> tuple:
    if dim is None:
        _warn_at_caller(f"Implicit dimension choice for {name} has been deprecated. Change the "
                        "call to include dim=X as an argument.", UserWarning)
        dim = 0 if input.ndim in (0, 1, 3) else 1
    if dtype is not None:
        input = input.to(dtype)
    elif input._data.dtype.kind in "iub":
        raise RuntimeError(f'"{name}_lastdim_kernel_impl" not implemented for \'Long\'')
    return input, _wrap_dim(dim, input.ndim)


def softmax(input: Tensor, dim: Any = None, dtype: Any = None, **_: Any) -> Tensor:
    input, d = _softmax_input(input, dim, dtype, "softmax")
    return _softmax(input, dim=d)


def log_softmax(input: Tensor, dim: Any = None, dtype: Any = None, **_: Any) -> Tensor:
    input, d = _softmax_input(input, dim, dtype, "log_softmax")
    return _log_softmax(input, dim=d)


# ---------------------------------------------------------------------------------------------
# Non-differentiable helpers that return values and indices
# ---------------------------------------------------------------------------------------------

def _truth(fn: Any, x: np.ndarray, axis: tuple | None, keepdim: bool) -> np.ndarray:
    """all/any as torch gives them: bool, or uint8 for a uint8 input."""
    out = np.asarray(fn(x, axis=axis, keepdims=keepdim))
    return out.astype(np.uint8) if x.dtype == np.uint8 else out


@nondiff("all")
def _all(x: np.ndarray, *, axis: tuple | None, keepdim: bool) -> np.ndarray:
    return _truth(np.all, x, axis, keepdim)


@nondiff("any")
def _any(x: np.ndarray, *, axis: tuple | None, keepdim: bool) -> np.ndarray:
    return _truth(np.any, x, axis, keepdim)


@nondiff("count_nonzero")
def _count_nonzero(x: np.ndarray, *, axis: tuple | None) -> np.ndarray:
    return np.asarray(np.count_nonzero(x, axis=axis), dtype=np.int64)


def all(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    axis = None if dim is None else _dims(dim, input.ndim)
    if _registry._SPECIAL:  # a capture listens: through the registry (``nondiff``)
        return _all(input, axis=axis, keepdim=keepdim)
    return Tensor._make(_all.forward(input._data, axis=axis, keepdim=keepdim))


def any(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    axis = None if dim is None else _dims(dim, input.ndim)
    if _registry._SPECIAL:
        return _any(input, axis=axis, keepdim=keepdim)
    return Tensor._make(_any.forward(input._data, axis=axis, keepdim=keepdim))


def _bool_out(name: str) -> Any:
    def check(args: tuple, out: Any) -> None:
        if isinstance(out, Tensor) and out.dtype is not _dtype.bool_:
            raise RuntimeError(f"{name} only supports bool tensor for result, got: "
                               f"{scalar_type_name(out.dtype)}")

    return check


out_rule("all", check=_bool_out("all"))  # (all's and any's out is a bool tensor)
out_rule("any", check=_bool_out("any"))


def count_nonzero(input: Tensor, dim: Any = None) -> Tensor:
    axis = None if dim is None else _dims(dim, input.ndim)
    if _registry._SPECIAL:
        return _count_nonzero(input, axis=axis)
    return Tensor._make(_count_nonzero.forward(input._data, axis=axis))


def _tangent_rules() -> None:  # forward mode: sums and means are linear
    for op in (_sum, _sum_dim, _mean, _mean_dim):
        op.jvp(linear_tangent(op))


_tangent_rules()


# sort, argsort and topk (SortBackward0, TopkBackward0) live with the other ordering ops; imported
# last so that the registry lists reduction's ops first
from .sorting import argsort, sort, topk  # noqa: E402, F401
