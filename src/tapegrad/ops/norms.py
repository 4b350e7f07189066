"""Ops built on the vector p-norm: ``dist`` (the norm of a difference), ``renorm`` (rescale the
slices whose norm is too large), and the older spellings ``frobenius_norm``, ``nuclear_norm``
and ``native_norm`` that torch keeps for TorchScript.

``dist`` and ``renorm`` have entries of their own (``DistBackward0``, ``RenormBackward0``);
both rules reuse the vector norm's rule (ops/reduction.py), as torch's ``norm_backward``::

    dist(a, b, p) = |a - b|_p                  d/da = n'(a - b),  d/db = -n'(a - b)
    renorm(x)_i   = x_i * s_i,   s_i = maxnorm / (|x_i|_p + 1e-7) where |x_i|_p > maxnorm, else 1
"""

from __future__ import annotations

import types
import warnings
from typing import Any

import numpy as np

from .._dtype import promote_types
from .._tensor import Tensor, _wrap_dim
from ._lapack import public_linalg
from ._registry import apply_, defop, scalar_type_name
from .elementwise import _broadcast_error, where
from .nn_common import _norm_dim  # at::norm(x, 2, dim, keepdim): NormBackward1
from .reduction import _dims, _norm


def _norm_grad(grad: Tensor, x: Tensor, norm: Tensor, p: float, dims: tuple,
               keepdim: bool) -> Tensor:
    """The vector norm's gradient for ``x`` given its ``norm`` (the norm entry's own rule)."""
    ctx = types.SimpleNamespace(saved=(x, norm), params={"ord": p, "dim": dims,
                                                          "keepdim": keepdim})
    with np.errstate(invalid="ignore", divide="ignore"):  # |x|^(p-1) at 0, masked after
        return _norm.rule(ctx, grad)[0]


# ---------------------------------------------------------------------------------------------
# dist
# ---------------------------------------------------------------------------------------------

@defop("dist", node="DistBackward0", save=(0, 1), save_output=True)
def _dist(a: np.ndarray, b: np.ndarray, *, p: float) -> np.ndarray:
    diff = np.subtract(a, b)
    return _norm.forward(diff, ord=p, dim=tuple(range(diff.ndim)), keepdim=False)


@_dist.backward
def dist_backward(ctx: Any, grad: Tensor) -> tuple:
    # d|a - b|_p: the norm's gradient, and its negative
    a, b, y = ctx.saved
    diff = a - b
    g = _norm_grad(grad, diff, y, ctx.params["p"], tuple(range(diff.ndim)), False)
    need_a, need_b = ctx.needs_input_grad
    return (g if need_a else None), (-g if need_b else None)


def dist(input: Tensor, other: Tensor, p: float = 2) -> Tensor:
    """The p-norm of ``input - other`` (broadcast).

    >>> import tapegrad as torch
    >>> torch.dist(torch.tensor([0., 3.]), torch.tensor([4., 0.]))
    tensor(5.)
    """
    if isinstance(p, (str, bool)) or not isinstance(p, (int, float)):
        raise TypeError(f"dist(): argument 'p' (position 3) must be Number, not "
                        f"{type(p).__name__}")
    dtype = promote_types(input.dtype, other.dtype)  # the norm of input - other
    if not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError("norm(): input dtype should be either floating point or complex. "
                           f"Got {scalar_type_name(dtype)} instead.")

    try:
        np.broadcast_shapes(input._data.shape, other._data.shape)
    except ValueError:
        raise _broadcast_error(input._data, other._data) from None
    if input.dtype != dtype:  # the difference in the promoted dtype, as torch's sub makes it
        input = input.to(dtype)
    if other.dtype != dtype:
        other = other.to(dtype)
    return _dist(input, other, p=float(p))


# ---------------------------------------------------------------------------------------------
# renorm
# ---------------------------------------------------------------------------------------------

def _renorm_dims(ndim: int, dim: int) -> tuple:
    return tuple(d for d in range(ndim) if d != dim)


@defop("renorm", node="RenormBackward0", save=(0,))
def _renorm(x: np.ndarray, *, p: float, dim: int, maxnorm: float) -> np.ndarray:
    norm = _norm.forward(x, ord=p, dim=_renorm_dims(x.ndim, dim), keepdim=True)
    with np.errstate(divide="ignore"):
        factor = np.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0).astype(norm.dtype)
    return x * factor


@_renorm.backward
def renorm_backward(ctx: Any, grad: Tensor) -> tuple:
    # with s = maxnorm / (n + 1e-7) where n = |x_i|_p > maxnorm:
    #   g_x = s (g - n' <conj(x), g> / (n + 1e-7)), else g
    (x,) = ctx.saved
    p, dim, maxnorm = ctx.params["p"], ctx.params["dim"], ctx.params["maxnorm"]
    dims = _renorm_dims(x.ndim, dim)
    norm = x.norm(p, dims, True)
    inner = x.conj() * grad
    if inner.is_complex():
        inner = inner.real
    nb = _norm_grad(inner.sum(dims, keepdim=True), x, norm, p, dims, True)
    inv = (norm + 1e-7).reciprocal()
    return (where(norm > maxnorm, inv * maxnorm * (grad - inv * nb), grad),)


def _renorm_args(input: Tensor, p: Any, dim: int, maxnorm: Any) -> dict:
    if isinstance(p, complex):
        raise RuntimeError("renorm: p must be real-valued")
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if isinstance(maxnorm, complex):
        raise RuntimeError("renorm: maxnorm must be real-valued")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {float(maxnorm):g}")
    if input.ndim <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.ndim} "
                           "dimensions")
    if input._data.dtype.kind not in "fc":
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {scalar_type_name(input.dtype)}")
    return {"p": float(p), "dim": _wrap_dim(dim, input.ndim), "maxnorm": float(maxnorm)}


def renorm(input: Tensor, p: float, dim: int, maxnorm: float) -> Tensor:
    """Each slice ``input.select(dim, i)`` whose p-norm exceeds ``maxnorm``, scaled down to
    norm ``maxnorm``; the others unchanged.

    >>> import tapegrad as torch
    >>> torch.renorm(torch.tensor([[3., 4.], [0.3, 0.4]]), 2, 0, 1.)
    tensor([[0.6000, 0.8000],
            [0.3000, 0.4000]])
    """
    result = _renorm(input, **_renorm_args(input, p, dim, maxnorm))
    return result


def renorm_(input: Tensor, p: float, dim: int, maxnorm: float) -> Tensor:
    """In-place :func:`renorm`."""
    return apply_(_renorm, input, **_renorm_args(input, p, dim, maxnorm))


# ---------------------------------------------------------------------------------------------
# The older spellings TorchScript keeps
# ---------------------------------------------------------------------------------------------

_WARNED: set = set()


def _warn_once(key: str, message: str) -> None:
    """torch's deprecation warnings here are issued once a process (TORCH_WARN_ONCE)."""
    if key not in _WARNED:
        _WARNED.add(key)
        warnings.warn(message, UserWarning, stacklevel=3)


def frobenius_norm(input: Tensor, dim: Any, keepdim: bool = False) -> Tensor:
    """Deprecated: ``linalg.vector_norm(input, 2, dim, keepdim)`` (at most 2 dims)."""
    _warn_once("frobenius_norm", "at::frobenius_norm is deprecated and it is just left for JIT "
               "compatibility. It will be removed in a future PyTorch release. Please use "
               "`linalg.vector_norm(A, 2., dim, keepdim)` instead")
    dims = [dim] if isinstance(dim, int) else list(dim)
    if len(dims) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dims)} dimensions "
                           "instead.")
    result = _norm_dim(input, ord=2.0, dim=_dims(dims, input.ndim), keepdim=keepdim)
    return result


def nuclear_norm(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    """Deprecated: ``linalg.matrix_norm(input, 'nuc', dim, keepdim)``."""
    _warn_once("nuclear_norm", "at::nuclear_norm is deprecated and it is just left for JIT "
               "compatibility. It will be removed in a future PyTorch release. Please use "
               "`linalg.matrix_norm(A, 'nuc', dim, keepdim)` instead")
    if isinstance(dim, bool):  # nuclear_norm(x, keepdim)
        dim, keepdim = None, dim
    if dim is None:
        if input.ndim != 2:
            raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 "
                               "dimensions." if input.ndim < 2 else
                               f"Expected a tensor with 2 dimensions, but got a tensor with "
                               f"{input.ndim} dimensions instead.")
        dim = (0, 1)
    result = public_linalg().matrix_norm(input, "nuc", tuple(dim), keepdim)  # (on svdvals)
    return result


def native_norm(input: Tensor, p: Any = 2, dim: Any = None, keepdim: bool = False,
                dtype: Any = None) -> Tensor:
    """torch's sparse-only norm kernel: a strided tensor has none, as in torch."""
    raise NotImplementedError(
        "Could not run 'aten::native_norm' with arguments from the 'CPU' backend. This could "
        "be because the operator doesn't exist for this backend, or was omitted during the "
        "selective/custom build process (if using custom build). 'aten::native_norm' is only "
        "available for these backends: [SparseCPU].")


_renorm.holomorphic = False  # the rule is written for complex inputs (x.conj() * g)

METHODS = {"dist": dist, "renorm": renorm, "renorm_": renorm_}

__all__ = ["dist", "renorm", "renorm_", "frobenius_norm", "nuclear_norm", "native_norm"]
