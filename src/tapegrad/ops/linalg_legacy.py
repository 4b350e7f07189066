"""The older ``torch.*`` linear-algebra names kept beside ``torch.linalg``: torch.qr (``some=``),
torch.cholesky (its own CholeskyBackward0 node), torch.matrix_power, torch.ormqr, and the
randomized low-rank factorizations svd_lowrank and pca_lowrank (Halko, Martinsson and Tropp,
2009, algorithm 5.1: a random range finder with ``niter`` power iterations, then the SVD of the
small projected matrix).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._tensor import Tensor
from ._lapack import check_square, return_type, warn_deprecated
from ._registry import defop
from .decompositions import _out
from .factorizations import _cholesky, _LinAlgError
from .factorizations import qr as linalg_qr_fn

qr_result = return_type("qr", "Q R")


def qr(input: Tensor, some: bool = True, *, out: Any = None) -> Any:
    """``torch.qr`` (deprecated in torch): linalg.qr with mode 'reduced' (``some``) or
    'complete'."""
    warn_deprecated("qr")
    q, r = linalg_qr_fn(input, "reduced" if some else "complete")
    return _out(qr_result(q, r), out)


@defop("cholesky", node="CholeskyBackward0", save_output=True)
def _torch_cholesky(a: np.ndarray, *, upper: bool = False) -> np.ndarray:
    try:
        return _cholesky.forward(a, upper=upper)
    except RuntimeError as e:
        raise _LinAlgError(str(e).replace("linalg.cholesky:", "cholesky:")) from None


_torch_cholesky.backward(_cholesky.rule)  # the rule of linalg.cholesky


def cholesky(input: Tensor, upper: bool = False, *, out: Tensor | None = None) -> Tensor:
    """``torch.cholesky`` (deprecated in torch): L with A = L L^H (U^H U with ``upper``)."""
    warn_deprecated("cholesky")
    check_square("cholesky", input)
    return _out(_torch_cholesky(input, upper=upper), out)


def matrix_power(input: Tensor, n: int) -> Tensor:
    """``torch.matrix_power``: linalg.matrix_power."""
    from ..linalg import matrix_power as mp

    return mp(input, n)


# ---------------------------------------------------------------------------------------------
# ormqr: op(Q) C with Q = H_1 ... H_k from geqrf's reflectors
# ---------------------------------------------------------------------------------------------

def _full_q(a: Tensor, tau: Tensor, size: int) -> Tensor:
    """The size x size orthogonal Q of the reflectors in ``a``'s columns (padded with zero
    columns so that householder_product returns all of Q)."""
    from ..linalg import householder_product
    from .shape import cat

    k = a.shape[-1]
    if k < size:
        pad = Tensor._make(np.zeros(tuple(a.shape[:-1]) + (size - k,), dtype=a._data.dtype))
        a = cat([a, pad], -1)
    elif k > size:
        a = a[..., :size]
    return householder_product(a, tau)


@defop("ormqr", node="OrmqrBackward0", save=(0, 1, 2))
def _ormqr(a: np.ndarray, tau: np.ndarray, c: np.ndarray, *, left: bool = True,
           transpose: bool = False) -> np.ndarray:
    from .factorizations import _householder_np

    size = c.shape[-2] if left else c.shape[-1]
    k = a.shape[-1]
    if k < size:
        a = np.concatenate([a, np.zeros(a.shape[:-1] + (size - k,), a.dtype)], -1)
    else:
        a = a[..., :size]
    q = _householder_np(a, tau)
    if transpose:
        q = np.swapaxes(q, -1, -2).conj()
    return np.asarray(q @ c if left else c @ q, dtype=c.dtype)


@_ormqr.backward
def _(ctx: Any, grad: Tensor) -> tuple:
    # out = op(Q) C: dC = op(Q)^H G and dQ from G C^H (left) or C^H G (right), then the
    # Householder product's rule for (A, tau)
    from ..autograd import grad as autograd_grad
    from ..autograd.grad_mode import enable_grad, is_grad_enabled

    a, tau, c = ctx.saved
    left, transpose = ctx.params.get("left", True), ctx.params.get("transpose", False)
    size = c.shape[-2] if left else c.shape[-1]
    create = is_grad_enabled()
    with enable_grad():
        a_ = a if create else a.detach().requires_grad_()
        t_ = tau if create else tau.detach().requires_grad_()
        q = _full_q(a_, t_, size)
        opq = q.mH if transpose else q
        gq = grad @ c.mH if left else c.mH @ grad
        gq_ = gq.mH if transpose else gq
        need = [x for x, n in ((a_, ctx.needs_input_grad[0]), (t_, ctx.needs_input_grad[1]))
                if n]
        found = autograd_grad([q], need, [gq_], create_graph=create,
                              allow_unused=True) if need else ()
    it = iter(found)
    ga = next(it) if ctx.needs_input_grad[0] else None
    gt = next(it) if ctx.needs_input_grad[1] else None
    gc = None
    if ctx.needs_input_grad[2]:
        gc = opq.mH @ grad if left else grad @ opq.mH
        if not create:
            gc = gc.detach()
    return (ga, gt, gc)


def ormqr(input: Tensor, tau: Tensor, other: Tensor, left: bool = True,
          transpose: bool = False, *, out: Tensor | None = None) -> Tensor:
    """``torch.ormqr``: op(Q) C (C op(Q) with ``left=False``), Q the product of geqrf's
    reflectors, without forming Q in the forward."""
    if input.ndim < 2:
        raise RuntimeError("torch.ormqr: input must have at least 2 dimensions.")
    if other.ndim < 2:
        raise RuntimeError("torch.ormqr: other must have at least 2 dimensions.")
    side = -2 if left else -1
    if input.shape[-2] != other.shape[side]:
        raise RuntimeError(f"torch.ormqr: input.shape[-2] must be equal to other.shape[{side}]")
    if tau.shape[-1] != min(other.shape[side], input.shape[-1]):
        raise RuntimeError(f"torch.ormqr: tau.shape[-1] must be equal to min(other.shape"
                           f"[{side}], input.shape[-1])")
    return _out(_ormqr(input, tau, other, left=left, transpose=transpose), out)


# ---------------------------------------------------------------------------------------------
# Randomized low-rank SVD and PCA
# ---------------------------------------------------------------------------------------------

def _approximate_basis(A: Tensor, q: int, niter: int, M: Tensor | None) -> Tensor:
    """An orthonormal Q (m x q) whose range approximates A's (A - M's): a Gaussian sketch,
    then ``niter`` rounds of power iteration, re-orthonormalized by QR each time."""
    from .._random import randn
    from ..linalg import qr as lqr
    from .linalg import matmul

    def times(x: Tensor, y: Tensor, mx: Tensor | None) -> Tensor:
        out = matmul(x, y)
        return out - matmul(mx, y) if mx is not None else out

    r = randn(A.shape[-1], q, dtype=A.dtype)
    q_ = lqr(times(A, r, M)).Q
    for _ in range(niter):
        q_ = lqr(times(A.mH, q_, M.mH if M is not None else None)).Q
        q_ = lqr(times(A, q_, M)).Q
    return q_


def _svd_lowrank(A: Tensor, q: int | None, niter: int, M: Tensor | None) -> tuple:
    from ..linalg import svd as lsvd
    from .linalg import matmul

    q = 6 if q is None else q
    m, n = A.shape[-2], A.shape[-1]
    if M is not None:
        M = M.broadcast_to(A.shape)
    if m < n:  # work on the tall A^H
        A = A.mH
        M = M.mH if M is not None else None
    Q = _approximate_basis(A, q, niter, M)
    B = matmul(Q.mH, A)
    if M is not None:
        B = B - matmul(Q.mH, M)
    U, S, Vh = lsvd(B, full_matrices=False)
    V = Vh.mH
    U = Q.matmul(U)
    if m < n:
        U, V = V, U
    return U, S, V


def svd_lowrank(A: Tensor, q: int | None = 6, niter: int = 2, M: Tensor | None = None) -> tuple:
    """``torch.svd_lowrank``: U, S, V with A - M ~= U diag(S) V^H, of rank ``q``, by a
    randomized range finder (see the module docstring)."""
    return _svd_lowrank(A, q, niter, M)


def pca_lowrank(A: Tensor, q: int | None = None, center: bool = True,
                niter: int = 2) -> tuple:
    """``torch.pca_lowrank``: svd_lowrank of A (centered over its rows with ``center``)."""
    m, n = A.shape[-2], A.shape[-1]
    if q is None:
        q = min(6, m, n)
    elif not (q >= 0 and q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than "
                         f"min(m, n)={min(m, n)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return _svd_lowrank(A, q, niter, None)
    c = A.mean(dim=(-2,), keepdim=True)
    return _svd_lowrank(A - c, q, niter, None)
