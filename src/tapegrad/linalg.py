"""``torch.linalg``: the linear-algebra namespace.

The differentiable primitives live in ``ops/``, one file per kind: ``ops/factorizations.py``
(cholesky, qr, householder_product, solve, solve_triangular, matrix_exp), ``ops/decompositions.py``
(svd, eigh, lu, ldl), ``ops/solvers.py`` (det, slogdet, inv, lstsq, pinv) and ``ops/linalg.py``
(products, cross, multi_dot). This module adds the functions torch composes from them (norms,
cond, matrix_power, vecdot, tensorinv/tensorsolve, vander), with torch's checks.
"""

from __future__ import annotations

import math
import sys as _sys
from typing import Any

import numpy as np

from ._tensor import Tensor
from .ops import _registry
from .ops._lapack import check_square, register_public_linalg
from .ops.decompositions import (
    eigh,
    eigvalsh,
    ldl_factor,
    ldl_factor_ex,
    ldl_solve,
    lu,
    lu_factor,
    lu_factor_ex,
    lu_solve,
    svd,
    svdvals,
)
from .ops.factorizations import (
    _LinAlgError,
    cholesky,
    householder_product,
    matrix_exp,
    qr,
    solve,
    solve_triangular,
)
from .ops.linalg import cross, matmul, multi_dot
from .ops.linalg import vdot as _vdot
from .ops.reduction import norm as _vector_norm
from .ops.shape import cat as _cat
from .ops.shape_composite import diagonal as _diagonal
from .ops.solvers import (
    cholesky_ex,
    det,
    inv,
    inv_ex,
    lstsq,
    matrix_rank,
    pinv,
    slogdet,
    solve_ex,
)

LinAlgError = _LinAlgError

__all__ = ["LinAlgError", "cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eigh",
           "eigvalsh", "householder_product", "inv", "inv_ex", "ldl_factor", "ldl_factor_ex",
           "ldl_solve", "lstsq", "lu", "lu_factor", "lu_factor_ex", "lu_solve", "matmul",
           "matrix_exp", "matrix_norm", "matrix_power", "matrix_rank", "multi_dot", "norm",
           "pinv", "qr", "slogdet", "solve", "solve_ex", "solve_triangular", "svd", "svdvals",
           "tensorinv", "tensorsolve", "vander", "vecdot", "vector_norm"]


def vector_norm(input: Tensor, ord: float = 2, dim: Any = None, keepdim: bool = False, *,
                dtype: Any = None) -> Tensor:
    """``torch.linalg.vector_norm``: (sum |x_i|^ord)^(1/ord) over ``dim`` (every element when
    None); ``inf``/``-inf`` give max/min |x_i|, 0 the count of non-zeros."""
    if isinstance(dim, int):
        dim = (dim,)
    return _vector_norm(input, float(ord), dim=dim, keepdim=keepdim, dtype=dtype)


def matrix_norm(input: Tensor, ord: Any = "fro", dim: Any = (-2, -1), keepdim: bool = False,
                *, dtype: Any = None) -> Tensor:
    """``torch.linalg.matrix_norm``: 'fro', 'nuc' (sum of singular values), 2/-2 (largest/
    smallest singular value), 1/-1 and inf/-inf (max/min absolute column or row sum)."""
    if input.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 "
                           "dimensions.")
    dim = tuple(dim) if isinstance(dim, (tuple, list)) else (dim,)
    if len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got "
                           f"{' '.join(str(d) for d in dim)}")
    if isinstance(ord, str):
        if ord not in ("fro", "nuc"):
            raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    elif ord not in (1, -1, 2, -2, math.inf, -math.inf):
        raise RuntimeError(f"linalg.matrix_norm: Order {_fmt(ord)} not supported.")
    if dtype is not None:
        input = input.to(dtype)
    r, c = (d % input.ndim for d in dim)
    if r == c:
        raise RuntimeError("linalg.matrix_norm: dims must be different. Got "
                           f"({dim[0]}, {dim[1]})")
    if ord == "fro":
        res = vector_norm(input, 2, dim=dim, keepdim=keepdim)
    elif ord in ("nuc", 2, -2):
        if input.dtype.name in ("float16", "bfloat16"):  # no low-precision SVD in torch
            raise RuntimeError("linalg.matrix_norm: Low precision dtypes not supported. Got "
                               f"{_registry.scalar_type_name(input.dtype)}")
        perm = [d for d in range(input.ndim) if d not in (r, c)] + [r, c]
        s = svdvals(input.permute(perm))
        res = (s.sum(-1, keepdim=keepdim) if ord == "nuc" else
               s.amax(-1, keepdim=keepdim) if ord == 2 else s.amin(-1, keepdim=keepdim))
        if keepdim:  # as torch: back through the inverse permutation
            res = res.unsqueeze(-1).permute([perm.index(d) for d in range(input.ndim)])
    else:
        inner, outer = (r, c) if ord in (1, -1) else (c, r)
        sums = input.abs().sum(dim=inner, keepdim=keepdim)
        if not keepdim and inner < outer:
            outer -= 1
        res = sums.amax(dim=outer, keepdim=keepdim) if ord > 0 else sums.amin(
            dim=outer, keepdim=keepdim)
    return res


def _fmt(x: Any) -> str:
    return str(x)


def norm(input: Tensor, ord: Any = None, dim: Any = None, keepdim: bool = False, *,
         dtype: Any = None) -> Tensor:
    """``torch.linalg.norm``: a vector norm (``dim`` an int, or a 1-D input) or a matrix norm
    (``dim`` a pair, or a 2-D input); with neither ord nor dim, the 2-norm of every element."""
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None:
        dim = tuple(dim)
        if len(dim) == 1:
            return vector_norm(input, 2 if ord is None else ord, dim, keepdim, dtype=dtype)
        if len(dim) == 2:
            return matrix_norm(input, "fro" if ord is None else ord, dim, keepdim,
                               dtype=dtype)
        raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. "
                           f"Got {list(dim)}")
    if ord is None:
        if keepdim:
            return vector_norm(input, 2, None, keepdim, dtype=dtype)
        flat = input.flatten() if input.ndim > 1 else input
        return vector_norm(flat, 2, None, keepdim and input.ndim <= 1, dtype=dtype)
    if input.ndim not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must "
                           f"be 1D or 2D. Got {input.ndim}D.")
    if input.ndim == 1:
        return vector_norm(input, ord, None, keepdim, dtype=dtype)
    return matrix_norm(input, ord, (-2, -1), keepdim, dtype=dtype)


def cond(input: Tensor, p: Any = None) -> Tensor:
    """``torch.linalg.cond``: s_max/s_min (p None or 2; -2 its inverse), else
    matrix_norm(A, p) * matrix_norm(A^{-1}, p) (inf where A is singular)."""
    if input.ndim < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    if p is None or p in (2, -2):
        s = svdvals(input)
        k = s.shape[-1]
        if k == 0:
            return Tensor._make(np.zeros(input.shape[:-2], dtype=s._data.dtype))
        smax, smin = s.narrow(-1, 0, 1), s.narrow(-1, k - 1, 1)
        return (smin / smax if p == -2 else smax / smin).squeeze(-1)
    if isinstance(p, str):
        if p not in ("fro", "nuc"):
            raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
        check_square(f"linalg.cond(ord={p})", input)
    elif p in (1, -1):
        check_square(f"linalg.cond(ord={int(p)})", input)
    elif p in (math.inf, -math.inf):
        check_square(f"linalg.cond(ord={float(p):f})", input)
    else:
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    if input.numel() == 0:
        return Tensor._make(np.zeros(input.shape[:-2], dtype=input._data.dtype))
    inverse, info = inv_ex(input)
    bad = (info > 0).unsqueeze(-1).unsqueeze(-1)
    inverse = inverse.masked_fill(bad, math.inf)
    res = matrix_norm(input, p) * matrix_norm(inverse, p)
    return res.nan_to_num(math.inf, math.inf, -math.inf)


def matrix_power(input: Tensor, n: int) -> Tensor:
    """``torch.linalg.matrix_power``: A^n by repeated squaring (n < 0: of A^{-1})."""
    check_square("linalg.matrix_power", input)
    if n == 0:
        return input.clone(memory_format=None).copy_(
            Tensor._make(np.eye(input.shape[-1], dtype=input._data.dtype)))
    if n == 1:
        return input.clone()
    if n == -1:
        return inv(input)
    a = inv(input) if n < 0 else input
    n = abs(n)
    if n == 2:
        return matmul(a, a)
    if n == 3:
        return matmul(matmul(a, a), a)
    z: Tensor | None = None
    result: Tensor | None = None
    while n > 0:
        bit = n % 2
        n //= 2
        z = a if z is None else matmul(z, z)
        if bit:
            result = z if result is None else matmul(result, z)
    assert result is not None
    return result



def vecdot(x: Tensor, y: Tensor, *, dim: int = -1) -> Tensor:
    """``torch.linalg.vecdot``: sum(conj(x) * y) along ``dim`` (vdot for two vectors)."""
    if x.dtype != y.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found "
                           f"x of type {_registry.scalar_type_name(x.dtype)} and y of type "
                           f"{_registry.scalar_type_name(y.dtype)} instead")
    if x.ndim == 1 and y.ndim == 1:
        return _vdot(x, y)
    xc = x.conj() if x.is_complex() else x
    return (xc * y).sum(dim)


def tensorinv(input: Tensor, ind: int = 2) -> Tensor:
    """``torch.linalg.tensorinv``: the inverse of A seen as a matrix (the first ``ind``
    dimensions against the rest)."""
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    shape = tuple(input.shape)
    rows = math.prod(shape[:ind])
    cols = math.prod(shape[ind:])
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) "
                           f"== prod(self.shape[:ind]), but got {cols} != {rows}")
    res = inv(input.reshape(rows, cols))
    return res.reshape(shape[ind:] + shape[:ind])


def tensorsolve(input: Tensor, other: Tensor, dims: Any = None) -> Tensor:
    """``torch.linalg.tensorsolve``: X with tensordot(A, X, X.ndim) = B."""
    if dims is not None:
        nd = input.ndim
        dims = [d % nd for d in dims]
        rest = [d for d in range(nd) if d not in dims]
        input = input.permute(rest + dims)
    nb = other.ndim
    result_shape = tuple(input.shape[nb:])
    rows = other.numel()
    cols = math.prod(result_shape)
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim:"
                           f"]) == prod(self.shape[:other.ndim]), but got {cols} != {rows}")
    res = solve(input.reshape(rows, cols), other.reshape(rows))
    return res.view(result_shape)


def vander(x: Tensor, *, N: int | None = None) -> Tensor:  # noqa: N803
    """``torch.linalg.vander``: columns x^0, x^1, ..., x^(N-1) (a cumulative product)."""
    kind = x._data.dtype.kind
    if kind == "b" or x._data.dtype.itemsize < 4 and kind == "f":
        raise RuntimeError(f"linalg.vander supports floating point, complex, and integer "
                           f"tensors, but got {_registry.scalar_type_name(x.dtype)}")
    x_ = x.unsqueeze(-1) if x.ndim == 0 else x
    shape = list(x_.shape)
    n = shape[-1] if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    result = x_.unsqueeze(-1).expand(shape + [n - 1]).cumprod(-1)
    ones = Tensor._make(np.ones(shape + [1], dtype=result._data.dtype))
    return _cat([ones, result], -1)


def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """``torch.linalg.diagonal``: torch.diagonal with the last two dimensions by default."""
    return _diagonal(A, offset=offset, dim1=dim1, dim2=dim2)



from .ops.decompositions import eig, eigvals  # noqa: E402  (general eigendecomposition)

__all__ += ["eig", "eigvals"]

# -- out=: torch.linalg.inv(A, out=t) & co. (one seam for every function: _out.py) ------------

from . import _out  # noqa: E402

_NAMES = """
    cholesky cholesky_ex cond cross det eig eigh eigvals eigvalsh householder_product inv inv_ex
    ldl_factor ldl_factor_ex ldl_solve lstsq lu lu_factor lu_factor_ex lu_solve matmul
    matrix_norm matrix_power matrix_rank multi_dot norm pinv qr slogdet solve solve_ex
    solve_triangular svd svdvals tensorinv tensorsolve vecdot vector_norm"""
_out.rule(*("linalg_" + name for name in _NAMES.split()), dtype="exact")
_out.install(globals(), _NAMES, prefix="linalg_")
register_public_linalg(_sys.modules[__name__])  # the ops made of these functions (ops/_lapack.py)
