"""``torch.linalg``: the linear-algebra namespace (factorizations and solves in ``ops/``)."""

from __future__ import annotations

from typing import Any

from ._tensor import Tensor
from .ops.factorizations import (
    _LinAlgError,
    cholesky,
    householder_product,
    matrix_exp,
    qr,
    solve,
    solve_triangular,
)

LinAlgError = _LinAlgError

__all__ = ["LinAlgError", "cholesky", "householder_product", "matrix_exp", "matrix_norm", "qr",
           "solve", "solve_triangular", "vector_norm"]


def vector_norm(x: Tensor, ord: float = 2, dim: Any = None, keepdim: bool = False, *,
                dtype: Any = None, out: Tensor | None = None) -> Tensor:
    """``torch.linalg.vector_norm``: (sum |x_i|^ord)^(1/ord) over ``dim`` (every element when
    None); ``inf``/``-inf`` give max/min |x_i|, 0 the count of non-zeros."""
    from .ops.reduction import norm

    if isinstance(dim, int):
        dim = (dim,)
    res = norm(x, float(ord), dim=dim, keepdim=keepdim, dtype=dtype)
    if out is not None:
        out.copy_(res)
        return out
    return res


def matrix_norm(A: Tensor, ord: Any = "fro", dim: tuple[int, int] = (-2, -1),
                keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """``torch.linalg.matrix_norm`` for ``ord`` 'fro', 1, -1, inf and -inf (max/min absolute
    column or row sum)."""
    if A.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 "
                           "dimensions.")
    if dtype is not None:
        A = A.to(dtype)
    if ord == "fro":
        return vector_norm(A, 2, dim=dim, keepdim=keepdim)
    if ord in (1, -1, float("inf"), float("-inf")):
        r, c = (d % A.ndim for d in dim)
        inner, outer = (r, c) if ord in (1, -1) else (c, r)
        sums = A.abs().sum(dim=inner, keepdim=keepdim)
        if not keepdim and inner < outer:
            outer -= 1
        return sums.amax(dim=outer, keepdim=keepdim) if ord > 0 else sums.amin(
            dim=outer, keepdim=keepdim)
    raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
