"""The older ``torch.*`` linear-algebra names kept beside ``torch.linalg``: torch.qr (``some=``),
torch.cholesky (its own CholeskyBackward0 node), torch.matrix_power, torch.ormqr, and the
randomized low-rank factorizations svd_lowrank and pca_lowrank (Halko, Martinsson and Tropp,
2009, algorithm 5.1: a random range finder with ``niter`` power iterations, then the SVD of the
small projected matrix), torch.chain_matmul and torch.vander. The names torch removed in 1.9
(torch.eig, symeig, lstsq, solve, matrix_rank and their methods) raise torch's error, which
names their replacement.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .. import _out
from .._dtype import int64, promote_types
from .._tensor import Tensor
from ..autograd import grad as autograd_grad
from ..autograd.grad_mode import enable_grad, is_grad_enabled
from ._lapack import check_square, public_linalg, return_type, warn_deprecated
from ._registry import defop
from .factories import empty
from .factorizations import _cholesky, _householder_np, _LinAlgError
from .factorizations import qr as linalg_qr_fn
from .linalg import matmul, multi_dot
from .shape import cat

qr_result = return_type("qr", "Q R")


def qr(input: Tensor, some: bool = True) -> Any:
    """``torch.qr`` (deprecated in torch): linalg.qr with mode 'reduced' (``some``) or
    'complete'."""
    warn_deprecated("qr")
    q, r = linalg_qr_fn(input, "reduced" if some else "complete")
    return qr_result(q, r)


@defop("cholesky", node="CholeskyBackward0", save_output=True)
def _torch_cholesky(a: np.ndarray, *, upper: bool = False) -> np.ndarray:
    try:
        return _cholesky.forward(a, upper=upper)
    except RuntimeError as e:
        raise _LinAlgError(str(e).replace("linalg.cholesky:", "cholesky:")) from None


_torch_cholesky.backward(_cholesky.rule)  # the rule of linalg.cholesky


def cholesky(input: Tensor, upper: bool = False) -> Tensor:
    """``torch.cholesky`` (deprecated in torch): L with A = L L^H (U^H U with ``upper``)."""
    warn_deprecated("cholesky")
    check_square("cholesky", input)
    return _torch_cholesky(input, upper=upper)


def matrix_power(input: Tensor, n: int) -> Tensor:
    """``torch.matrix_power``: linalg.matrix_power."""
    return public_linalg().matrix_power(input, n)  # (made of the public inv)


# ---------------------------------------------------------------------------------------------
# ormqr: op(Q) C with Q = H_1 ... H_k from geqrf's reflectors
# ---------------------------------------------------------------------------------------------

def _full_q(a: Tensor, tau: Tensor, size: int) -> Tensor:
    """The size x size orthogonal Q of the reflectors in ``a``'s columns (padded with zero
    columns so that householder_product returns all of Q)."""
    k = a.shape[-1]
    if k < size:
        pad = Tensor._make(np.zeros(tuple(a.shape[:-1]) + (size - k,), dtype=a._data.dtype))
        a = cat([a, pad], -1)
    elif k > size:
        a = a[..., :size]
    return public_linalg().householder_product(a, tau)


@defop("ormqr", node="OrmqrBackward0", save=(0, 1, 2))
def _ormqr(a: np.ndarray, tau: np.ndarray, c: np.ndarray, *, left: bool = True,
           transpose: bool = False) -> np.ndarray:
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
def ormqr_backward(ctx: Any, grad: Tensor) -> tuple:
    # out = op(Q) C: dC = op(Q)^H G and dQ from G C^H (left) or C^H G (right), then the
    # Householder product's rule for (A, tau)
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


def ormqr(input: Tensor, input2: Tensor, input3: Tensor, left: bool = True,
          transpose: bool = False) -> Tensor:
    """``torch.ormqr``: op(Q) C (C op(Q) with ``left=False``), Q the product of geqrf's
    reflectors (``input2`` their scalars tau), C ``input3``, without forming Q."""
    tau, other = input2, input3
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
    return _ormqr(input, tau, other, left=left, transpose=transpose)


# ---------------------------------------------------------------------------------------------
# Randomized low-rank SVD and PCA
# ---------------------------------------------------------------------------------------------

def _approximate_basis(A: Tensor, q: int, niter: int, M: Tensor | None) -> Tensor:
    """An orthonormal Q (m x q) whose range approximates A's (A - M's): a Gaussian sketch,
    then ``niter`` rounds of power iteration, re-orthonormalized by QR each time."""
    from .._random import randn  # upward: the random surface's generator draws the sketch

    def times(x: Tensor, y: Tensor, mx: Tensor | None) -> Tensor:
        out = matmul(x, y)
        return out - matmul(mx, y) if mx is not None else out

    r = randn(A.shape[-1], q, dtype=A.dtype)
    lqr = public_linalg().qr
    q_ = lqr(times(A, r, M)).Q
    for _ in range(niter):
        q_ = lqr(times(A.mH, q_, M.mH if M is not None else None)).Q
        q_ = lqr(times(A, q_, M)).Q
    return q_


def _svd_lowrank(A: Tensor, q: int | None, niter: int, M: Tensor | None) -> tuple:
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
    U, S, Vh = public_linalg().svd(B, full_matrices=False)
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



# ---------------------------------------------------------------------------------------------
# chain_matmul, vander
# ---------------------------------------------------------------------------------------------

def chain_matmul(*matrices: Tensor, out: Tensor | None = None) -> Tensor:
    """Deprecated: the product of the 2-d ``matrices`` (``linalg.multi_dot``, in the cheapest
    order). (``out`` follows ``*matrices``, as in torch: written through ``_out.write``.)"""
    warnings.warn("torch.chain_matmul is deprecated and will be removed in a future PyTorch "
                  "release. Use torch.linalg.multi_dot instead, which accepts a list of two or "
                  "more tensors rather than multiple parameters.", UserWarning, stacklevel=2)
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    if len(matrices) == 1:
        if matrices[0].ndim != 2:
            raise RuntimeError(f"Tensor dimension is {matrices[0].ndim}, expected 2 instead.")
        result = matrices[0].clone()
    else:
        for m in matrices:
            if m.ndim != 2:
                raise RuntimeError(f"Tensor dimension is {m.ndim}, expected 2 instead.")
        result = multi_dot(list(matrices))
    if out is None:
        return result
    _out.check("chain_matmul", out, matrices)
    return _out.write("chain_matmul", out, result, matrices)


def vander(x: Tensor, N: int | None = None, increasing: bool = False) -> Tensor:  # noqa: N803
    """The Vandermonde matrix of a 1-d ``x``: columns x^(N-1), ..., x^1, x^0 (the reverse with
    ``increasing``); integer and bool inputs give int64.

    >>> import tapegrad as torch
    >>> torch.vander(torch.tensor([1, 2, 3]), N=3)
    tensor([[1, 1, 1],
            [4, 2, 1],
            [9, 3, 1]])
    """
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    m = x.shape[0]
    n = m if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    # as torch: ones, x copied into columns 1.., a running product along them in place (so, as
    # in torch, there is no gradient: the product's saved input is overwritten), flipped
    result = empty((m, n), dtype=promote_types(x.dtype, int64))
    if n > 0:
        result.fill_(1)
    if n > 1:
        powers = result[:, 1:]
        powers.copy_(x.unsqueeze(1).expand(m, n - 1))
        powers.copy_(powers.cumprod(1))
    return result if increasing else result.flip(1)


# ---------------------------------------------------------------------------------------------
# The functions removed in torch 1.9: their stubs raise torch's error
# ---------------------------------------------------------------------------------------------

_REMOVED = "This function was deprecated since version 1.9 and is now removed."

_EIG_REMOVED = (
    f"{_REMOVED} `torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` rather "
    "than real tensors mimicking complex tensors.\n\nL, _ = torch.eig(A) should be replaced with:"
    "\nL_complex = torch.linalg.eigvals(A)\n\nand\n\nL, V = torch.eig(A, eigenvectors=True) "
    "should be replaced with:\nL_complex, V_complex = torch.linalg.eig(A)")
_SYMEIG_REMOVED = (
    f"{_REMOVED} The default behavior has changed from using the upper triangular portion of the "
    "matrix by default to using the lower triangular portion.\n\nL, _ = torch.symeig(A, "
    "upper=upper) should be replaced with:\nL = torch.linalg.eigvalsh(A, UPLO='U' if upper else "
    "'L')\n\nand\n\nL, V = torch.symeig(A, eigenvectors=True) should be replaced with:\nL, V = "
    "torch.linalg.eigh(A, UPLO='U' if upper else 'L')")
_LSTSQ_REMOVED = (
    f"{_REMOVED} `torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.\n"
    "`torch.linalg.lstsq` has reversed arguments and does not return the QR decomposition in the "
    "returned tuple (although it returns other information about the problem).\n\nTo get the QR "
    "decomposition consider using `torch.linalg.qr`.\n\nThe returned solution in `torch.lstsq` "
    "stored the residuals of the solution in the last m - n columns of the returned value "
    "whenever m > n. In torch.linalg.lstsq, the residuals are in the field 'residuals' of the "
    "returned named tuple.\n\nThe unpacking of the solution, as in\nX, _ = torch.lstsq(B, A)."
    "solution[:A.size(1)]\nshould be replaced with:\nX = torch.linalg.lstsq(A, B).solution")
_SOLVE_REMOVED = (
    f"{_REMOVED} `torch.solve` is deprecated in favor of `torch.linalg.solve`. "
    "`torch.linalg.solve` has its arguments reversed and does not return the LU factorization."
    "\n\nTo get the LU factorization see `torch.lu`, which can be used with `torch.lu_solve` or "
    "`torch.lu_unpack`.\nX = torch.solve(B, A).solution should be replaced with:\nX = "
    "torch.linalg.solve(A, B)")
_MATRIX_RANK_REMOVED = (
    f"{_REMOVED}\nPlease use the `torch.linalg.matrix_rank` function instead. The parameter "
    "'symmetric' was renamed in `torch.linalg.matrix_rank()` to 'hermitian'.")


def eig(self: Tensor, eigenvectors: bool = False, *, e: Any = None, v: Any = None) -> tuple:
    """Removed in torch 1.9: use ``torch.linalg.eig`` / ``torch.linalg.eigvals``."""
    raise RuntimeError(_EIG_REMOVED)


def symeig(input: Tensor, eigenvectors: bool = False, upper: bool = True, *,
           out: Any = None) -> tuple:
    """Removed in torch 1.9: use ``torch.linalg.eigh`` / ``torch.linalg.eigvalsh``."""
    raise RuntimeError(_SYMEIG_REMOVED)


def lstsq(input: Tensor, A: Tensor, *, out: Any = None) -> tuple:  # noqa: N803
    """Removed in torch 1.9: use ``torch.linalg.lstsq`` (arguments reversed)."""
    raise RuntimeError(_LSTSQ_REMOVED)


def solve(input: Tensor, A: Tensor, *, out: Any = None) -> tuple:  # noqa: N803
    """Removed in torch 1.9: use ``torch.linalg.solve`` (arguments reversed)."""
    raise RuntimeError(_SOLVE_REMOVED)


def matrix_rank(input: Tensor, tol: Any = None, symmetric: bool = False, *,
                out: Any = None) -> Tensor:
    """Removed in torch 1.9: use ``torch.linalg.matrix_rank``."""
    raise RuntimeError(_MATRIX_RANK_REMOVED)


def _eig_method(self: Tensor, eigenvectors: bool = False) -> tuple:
    raise RuntimeError(_EIG_REMOVED)


def _symeig_method(self: Tensor, eigenvectors: bool = False) -> tuple:
    raise RuntimeError(_SYMEIG_REMOVED)


def _lstsq_method(self: Tensor, other: Tensor) -> tuple:
    raise RuntimeError(_LSTSQ_REMOVED)


def _solve_method(self: Tensor, other: Tensor) -> tuple:
    raise RuntimeError(_SOLVE_REMOVED)


REMOVED_METHODS = {"eig": _eig_method, "symeig": _symeig_method, "lstsq": _lstsq_method,
                   "solve": _solve_method}
