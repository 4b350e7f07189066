"""Matrix decompositions: the singular value decomposition, the symmetric eigendecomposition,
LU with partial pivoting (and its unpacking and solves) and the LDL^T factorization.

Every op works on batches (leading dimensions). The forwards are LAPACK through NumPy, or SciPy
(imported on first use) where NumPy lacks the routine (getrf, sytrf). The backward rules are
torch's, written with tapegrad ops so that ``create_graph=True`` differentiates them again;
multi-output rules recompute the factors with ops (as ``linalg.qr``'s does), so the second
derivative sees how the factors depend on A:

* SVD A = U S V^H: with E_ij = s_j^2 - s_i^2, skew(X) = X - X^H,
  dA = U [(skew(U^H gU) S + S skew(V^H gV)) / E + diag(gS)] V^H, plus the terms for the
  columns of a tall/wide A outside the square part. Singular vectors are defined up to sign
  (phase): the gradient is meaningful for gauge-invariant functions only, as in torch.
* eigh A = V diag(L) V^H: dA = V [skew(V^H gV)/2 / E + diag(gL)] V^H, E_ij = L_j - L_i.
* eig A = V diag(L) V^{-1} (general A, complex L and V, unit-norm columns of V):
  dA = V^{-H} [diag(gL) + (V^H gV - V^H V diag(re(V^H gV))) / conj(E)] V^H, the real part for a
  real A. Eigenvectors are defined up to a phase: a loss that depends on it is refused.
* LU A = P L U: dA = P L^{-H} [tril_-1(L^H gL) + triu(gU U^H)] U^{-H} (square; the tall and
  wide cases add the rows/columns outside the square part).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._tensor import Tensor
from ._lapack import (
    batch_error,
    check_float,
    check_matrix,
    check_square,
    getrf,
    per_matrix,
    return_type,
    scipy_linalg,
    warn_deprecated,
)
from ._lapack import count as _count
from ._registry import defop, scalar_type_name
from .factorizations import _solve_tri_np, solve, solve_triangular
from .scatter import _zeros
from .shape import cat

linalg_svd = return_type("linalg_svd", "U S Vh")
svd_result = return_type("svd", "U S V")
linalg_eigh = return_type("linalg_eigh", "eigenvalues eigenvectors")
linalg_eig = return_type("linalg_eig", "eigenvalues eigenvectors")
linalg_lu = return_type("linalg_lu", "P L U")
linalg_lu_factor = return_type("linalg_lu_factor", "LU pivots")
linalg_lu_factor_ex = return_type("linalg_lu_factor_ex", "LU pivots info")
lu_unpack_result = return_type("lu_unpack", "P L U")
linalg_ldl_factor = return_type("linalg_ldl_factor", "LD pivots")
linalg_ldl_factor_ex = return_type("linalg_ldl_factor_ex", "LD pivots info")


# ---------------------------------------------------------------------------------------------
# SVD
# ---------------------------------------------------------------------------------------------

def _svd_np(a: np.ndarray, full: bool, uv: bool) -> tuple:
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    if k == 0 or a.size == 0:
        s = np.zeros(batch + (k,), dtype=_real(a.dtype))
        if not uv:
            return np.zeros((0,), a.dtype), s, np.zeros((0,), a.dtype)
        u = np.broadcast_to(np.eye(m, m if full else k, dtype=a.dtype), batch + (
            m, m if full else k)).copy()
        vh = np.broadcast_to(np.eye(n if full else k, n, dtype=a.dtype), batch + (
            n if full else k, n)).copy()
        return u, s, vh
    if not uv:
        s = np.linalg.svd(a, compute_uv=False)
        return np.zeros((0,), a.dtype), s.astype(_real(a.dtype)), np.zeros((0,), a.dtype)
    u, s, vh = np.linalg.svd(a, full_matrices=full)
    return u.astype(a.dtype), s.astype(_real(a.dtype)), vh.astype(a.dtype)


def _real(dt: np.dtype) -> np.dtype:
    return np.empty(0, dtype=dt).real.dtype


@defop("linalg_svd", node="LinalgSvdBackward0", save=(0,), outputs=3)
def _svd(a: np.ndarray, *, full_matrices: bool = True, compute_uv: bool = True) -> tuple:
    return _svd_np(a, full_matrices, compute_uv)


@_svd.backward
def svd_backward(ctx: Any, grads: list) -> tuple:
    (a,) = ctx.saved
    gu, gs, gvh = (list(grads) + [None, None, None])[:3]
    gu, gvh = _given(gu), _given(gvh)
    full = ctx.params.get("full_matrices", True)
    u, s, vh = _svd(a, full_matrices=False)  # recomputed with ops (see the module docstring)
    k = s.shape[-1]
    if full:
        gu = gu[..., :k] if gu is not None else None
        gvh = gvh[..., :k, :] if gvh is not None else None
    return (svd_derivative(gu, gs, gvh, u, s, vh),)


def _given(g: Tensor | None) -> Tensor | None:
    """A cotangent, or None for none (an empty one stands for the U, V not computed)."""
    return None if g is None or (g.numel() == 0 and g.ndim == 1) else g


def svd_derivative(gu: Tensor | None, gs: Tensor | None, gvh: Tensor | None, u: Tensor,
                 s: Tensor, vh: Tensor) -> Tensor:
    """torch's SVD rule (reduced factors; see the module docstring)."""
    m, n = u.shape[-2], vh.shape[-1]
    if gu is None and gvh is None:  # svdvals: dA = U diag(gS) V^H
        assert gs is not None
        return u @ (gs.unsqueeze(-1) * vh) if m >= n else (u * gs.unsqueeze(-2)) @ vh
    s2 = s * s
    k = s.shape[-1]
    offdiag = Tensor._make(~np.eye(k, dtype=bool))
    e = (s2.unsqueeze(-2) - s2.unsqueeze(-1)).where(offdiag, 1.0)
    uhgu = vhgv = None
    if gu is not None:
        x = u.mH @ gu
        uhgu = x - x.mH
    if gvh is not None:
        x = vh @ gvh.mH
        vhgv = x - x.mH
    if uhgu is not None and vhgv is not None:
        ga = (uhgu * s.unsqueeze(-2) + s.unsqueeze(-1) * vhgv) / e
    elif vhgv is None:
        assert uhgu is not None
        ga = uhgu / e * s.unsqueeze(-2)
    else:
        ga = s.unsqueeze(-1) * vhgv / e
    if gs is not None:
        ga = ga + gs.diag_embed()
    if m > n and gu is not None:
        ga = u @ ga
        gusinv = gu / s.unsqueeze(-2)
        ga = ga + gusinv - u @ (u.mH @ gusinv)
        return ga @ vh
    if m < n and gvh is not None:
        ga = ga @ vh
        sinvgvh = gvh / s.unsqueeze(-1)
        ga = ga + sinvgvh - (sinvgvh @ vh.mH) @ vh
        return u @ ga
    return u @ (ga @ vh) if m >= n else (u @ ga) @ vh


def _check_input(name: str, A: Tensor) -> None:
    check_matrix(name, A._data)
    check_float(name, A._data)


def svd(A: Tensor, full_matrices: bool = True, *, driver: str | None = None) -> Any:
    """``torch.linalg.svd``: A = U diag(S) Vh, S descending."""
    _check_input("linalg.svd", A)
    u, s, vh = _svd(A, full_matrices=full_matrices)
    return linalg_svd(u, s, vh)


def svdvals(A: Tensor, *, driver: str | None = None) -> Tensor:
    """``torch.linalg.svdvals``: the singular values, descending."""
    _check_input("linalg.svd", A)  # (torch names the op it runs)
    # with a gradient to come, S from the same LAPACK call as the U, V the rule uses
    _, s, _ = _svd(A, full_matrices=False, compute_uv=A.requires_grad)
    return s


def torch_svd(input: Tensor, some: bool = True, compute_uv: bool = True) -> Any:
    """``torch.svd`` (deprecated in torch): U, S and V (not V^H); with ``compute_uv=False``,
    zero-filled U (m x m) and V (n x n)."""
    _check_input("svd", input)
    if compute_uv:
        u, s, vh = _svd(input, full_matrices=not some)
        return svd_result(u, s, vh.mH)
    _, s, _ = _svd(input, full_matrices=False, compute_uv=False)
    m, n = input.shape[-2], input.shape[-1]
    u = _zeros(tuple(input.shape[:-2]) + (m, m), input)
    v = _zeros(tuple(input.shape[:-2]) + (n, n), input)
    return svd_result(u, s, v)


# ---------------------------------------------------------------------------------------------
# Symmetric (Hermitian) eigendecomposition
# ---------------------------------------------------------------------------------------------

@defop("linalg_eigh", node="LinalgEighBackward0", save=(0,), outputs=2)
def _eigh(a: np.ndarray, *, UPLO: str = "L", compute_v: bool = True) -> tuple:  # noqa: N803
    if a.size == 0:
        w = np.zeros(a.shape[:-1], dtype=_real(a.dtype))
        return w, a.copy()
    uplo: Any = UPLO
    if not compute_v:
        return np.linalg.eigvalsh(a, UPLO=uplo).astype(_real(a.dtype)), np.zeros((0,), a.dtype)
    w, v = np.linalg.eigh(a, UPLO=uplo)
    return w.astype(_real(a.dtype)), v.astype(a.dtype)


@_eigh.backward
def eigh_backward(ctx: Any, grads: list) -> tuple:
    # dA = V [skew(V^H gV)/2 / E + diag(gL)] V^H with E_ij = L_j - L_i
    (a,) = ctx.saved
    gl, gv = (list(grads) + [None, None])[:2]
    gv = _given(gv)
    w, v = _eigh(a, UPLO=ctx.params.get("UPLO", "L"))
    if gv is None:
        assert gl is not None
        return ((v * gl.unsqueeze(-2)) @ v.mH,)
    x = v.mH @ gv
    x = 0.5 * (x - x.mH)
    n = w.shape[-1]
    offdiag = Tensor._make(~np.eye(n, dtype=bool))
    e = (w.unsqueeze(-2) - w.unsqueeze(-1)).where(offdiag, 1.0)
    ret = (x / e).where(offdiag, 0.0)
    if gl is not None:
        ret = ret + gl.diag_embed()
    return (v @ (ret @ v.mH),)


def _check_uplo(name: str, UPLO: str) -> None:  # noqa: N803
    if UPLO not in ("L", "U", "l", "u"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")


def eigh(input: Tensor, UPLO: str = "L") -> Any:  # noqa: N803
    """``torch.linalg.eigh``: eigenvalues (ascending) and orthonormal eigenvectors of a
    symmetric (Hermitian) matrix, read from its ``UPLO`` triangle."""
    check_square("linalg.eigh", input._data)
    check_float("linalg.eigh", input._data)
    _check_uplo("linalg.eigh", UPLO)
    w, v = _eigh(input, UPLO=UPLO.upper())
    return linalg_eigh(w, v)


def eigvalsh(input: Tensor, UPLO: str = "L") -> Tensor:  # noqa: N803
    """``torch.linalg.eigvalsh``: the eigenvalues of a symmetric matrix, ascending."""
    check_square("linalg.eigh", input._data)
    check_float("linalg.eigh", input._data)
    _check_uplo("linalg.eigvalsh", UPLO)
    w, _ = _eigh(input, UPLO=UPLO.upper(), compute_v=not input.requires_grad)
    return w


# ---------------------------------------------------------------------------------------------
# General (non-symmetric) eigendecomposition: complex eigenvalues and eigenvectors
# ---------------------------------------------------------------------------------------------

def _complex_of(dt: np.dtype) -> np.dtype:
    return np.result_type(dt, np.complex64)


@defop("linalg_eig", node="LinalgEigBackward0", save=(0,), outputs=2)
def _eig(a: np.ndarray, *, check_phase: bool = True) -> tuple:
    ct = _complex_of(a.dtype)
    if a.size == 0:
        return np.zeros(a.shape[:-1], dtype=ct), np.zeros(a.shape, dtype=ct)
    w, v = np.linalg.eig(a)  # LAPACK geev: unit-norm eigenvectors, largest component real
    return w.astype(ct), v.astype(ct)


_eig.holomorphic = False  # the rule takes complex gradients as they are (torch's convention)

_PHASE_MESSAGE = ("linalg_eig_backward: The eigenvectors in the complex case are specified up to "
                  "multiplication by e^{i phi}. The specified loss function depends on this "
                  "quantity, so it is ill-defined.")


@_eig.backward
def eig_backward(ctx: Any, grads: list) -> tuple:
    # gA = V^{-H} [diag(gL) + (V^H gV - V^H V diag(re(V^H gV))) / conj(E)] V^H, E_ij = L_j - L_i
    (a,) = ctx.saved
    gl, gv = (list(grads) + [None, None])[:2]
    gv = _given(gv)
    w, v = _eig_outputs(ctx, a)
    n = w.shape[-1]
    if gv is None:
        assert gl is not None
        ret = gl.diag_embed()
    else:
        vhgv = v.mH @ gv
        diag = vhgv.diagonal(0, -2, -1)
        if ctx.params.get("check_phase", True) and not np.allclose(
                diag._data.imag, 0.0, rtol=1e-2, atol=1e-2):
            raise RuntimeError(_PHASE_MESSAGE)
        offdiag = Tensor._make(~np.eye(n, dtype=bool))
        wc = w.conj()
        e = (wc.unsqueeze(-2) - wc.unsqueeze(-1)).where(offdiag, 1.0)
        ret = (vhgv - v.mH @ (v * diag.real.unsqueeze(-2))) / e
        if gl is not None:
            ret = ret.where(offdiag, 0.0) + gl.diag_embed()
    ga = solve(v.mH, ret @ v.mH)
    return (ga.real if a._data.dtype.kind != "c" else ga,)


def _eig_outputs(ctx: Any, a: Tensor) -> tuple:
    """L and V as tensors of this node's graph, so that a second derivative flows back through
    this node again, as in torch (whose rule reads the saved outputs). The node keeps their
    arrays (``_remember_outputs``); without them, L and V are recomputed with the op (a second
    node, which gets a part of the second-order gradient and does not check its phase: only the
    sum of the two parts is phase-invariant)."""
    arrays = ctx.params.get("outputs")
    if arrays is None:
        return _eig(a, check_phase=False)
    out = []
    for i, data in enumerate(arrays):
        t = Tensor._make(data, requires_grad=True)
        t._grad_fn = ctx
        t._output_nr = i
        out.append(t)
    return tuple(out)


def _remember_outputs(w: Tensor, v: Tensor) -> None:
    """Keep L and V's arrays on their node for its rule (arrays, not Tensors: no cycle)."""
    if w.grad_fn is not None:
        w.grad_fn.params["outputs"] = (w._data, v._data)


def _check_eig(name: str, A: Tensor) -> None:
    check_square(name, A._data)
    if A._data.dtype.kind not in "fc":
        raise RuntimeError(f"Unknown Complex ScalarType for {scalar_type_name(A.dtype)}")
    if not np.isfinite(A._data).all():
        raise RuntimeError(f"torch.{name}: input tensor should not contain infs or NaNs.")


def eig(input: Tensor) -> Any:
    """``torch.linalg.eig``: the eigenvalues and eigenvectors of a square matrix, complex
    (complex64 for a float32 A, complex128 for float64), A V = V diag(L); each eigenvector of
    unit norm.

    >>> import tapegrad as torch
    >>> torch.linalg.eig(torch.tensor([[2., 0.], [0., 3.]])).eigenvalues
    tensor([2.+0.j, 3.+0.j])
    """
    _check_eig("linalg.eig", input)
    w, v = _eig(input)
    _remember_outputs(w, v)
    return linalg_eig(w, v)


def eigvals(input: Tensor) -> Tensor:
    """``torch.linalg.eigvals``: the eigenvalues of a square matrix (complex)."""
    # (torch computes them with linalg.eig, and names it, when a gradient may be asked for)
    _check_eig("linalg.eig" if input.requires_grad else "linalg.eigvals", input)
    w, v = _eig(input)
    _remember_outputs(w, v)
    return w


# ---------------------------------------------------------------------------------------------
# LU with partial pivoting
# ---------------------------------------------------------------------------------------------

def _lu_factor_np(a: np.ndarray) -> tuple:
    m, n = a.shape[-2:]
    k = min(m, n)
    return per_matrix(getrf, a, [(m, n), (k,), ()], [a.dtype, np.int32, np.int32])


def _perm_np(piv: np.ndarray, m: int, dtype: Any) -> np.ndarray:
    """The permutation matrices P (..., m, m) of LAPACK pivots (1-based row swaps)."""
    batch = piv.shape[:-1]
    flat = piv.reshape((int(np.prod(batch)), piv.shape[-1]))
    out = np.zeros((flat.shape[0], m, m), dtype=dtype)
    for b, p in enumerate(flat):
        perm = np.arange(m)
        for i, j in enumerate(p):
            j = int(j) - 1
            perm[i], perm[j] = perm[j], perm[i]
        out[b, perm, np.arange(m)] = 1  # A = P L U: row i of LU is row perm[i] of A
    return out.reshape(batch + (m, m))


def _unpack_np(lu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    m, n = lu.shape[-2:]
    k = min(m, n)
    low = np.tril(lu[..., :, :k], -1) + np.eye(m, k, dtype=lu.dtype)
    up = np.triu(lu[..., :k, :])
    return low, up


@defop("linalg_lu_factor_ex", node="LinalgLuFactorExBackward0", save=(0,), outputs=3)
def _lu_factor_ex(a: np.ndarray, *, pivot: bool = True) -> tuple:
    return _lu_factor_np(a)


@_lu_factor_ex.backward
def lu_factor_ex_backward(ctx: Any, grads: list) -> tuple:
    # gL = tril_-1(gLU), gU = triu(gLU), then the LU rule
    (a,) = ctx.saved
    g = grads[0]
    m, n = a.shape[-2], a.shape[-1]
    k = min(m, n)
    p, low, up = lu(a)
    return (lu_derivative(g[..., :, :k].tril(-1), g[..., :k, :].triu(), p, low, up),)


def lu_derivative(gl: Tensor | None, gu: Tensor | None, p: Tensor, low: Tensor,
                up: Tensor) -> Tensor:
    """torch's LU rule (see the module docstring) for A = P L U, L m x k, U k x n."""
    m, n = low.shape[-2], up.shape[-1]
    k = min(m, n)
    if m == n:
        ga = (low.mH @ gl).tril(-1) if gl is not None else None
        if gu is not None:
            t = (gu @ up.mH).triu()
            ga = t if ga is None else ga + t
        assert ga is not None
        ga = solve_triangular(low.mH, ga, upper=True, left=True, unitriangular=True)
        ga = solve_triangular(up.mH, ga, upper=False, left=False)
        return p @ ga
    if m < n:  # wide: A = P L [U1 U2]
        u1 = up[..., :k]
        ga = low.mH @ gl if gl is not None else None
        if gu is not None:
            t = gu.triu() @ up.mH
            ga = -t if ga is None else ga - t
        assert ga is not None
        ga = solve_triangular(u1.mH, ga.tril(-1), upper=False, left=False)
        if gu is not None:
            ga = cat([ga + gu[..., :k].triu(), gu[..., k:]], -1)
        ga = solve_triangular(low.mH, ga, upper=True, left=True, unitriangular=True)
        if gu is None:
            ga = cat([ga, _zeros(tuple(up.shape[:-2]) + (k, n - k), up)], -1)
        return p @ ga
    l1 = low[..., :k, :]  # tall: A = P [L1; L2] U
    ga = gu @ up.mH if gu is not None else None
    if gl is not None:
        t = low.mH @ gl.tril(-1)
        ga = -t if ga is None else ga - t
    assert ga is not None
    ga = solve_triangular(l1.mH, ga.triu(), upper=True, left=True, unitriangular=True)
    if gl is not None:
        ga = cat([ga + gl[..., :k, :].tril(-1), gl[..., k:, :]], -2)
    ga = solve_triangular(up.mH, ga, upper=False, left=False)
    if gl is None:
        ga = cat([ga, _zeros(tuple(low.shape[:-2]) + (m - k, k), low)], -2)
    return p @ ga


@defop("linalg_lu", node="LinalgLuBackward0", save=(0,), outputs=3)
def _lu(a: np.ndarray, *, pivot: bool = True) -> tuple:
    m = a.shape[-2]
    lu_, piv, _ = _lu_factor_np(a)
    low, up = _unpack_np(lu_)
    return _perm_np(piv, m, a.dtype), low, up


@_lu.backward
def lu_backward(ctx: Any, grads: list) -> tuple:
    (a,) = ctx.saved
    _, gl, gu = (list(grads) + [None, None, None])[:3]
    p, low, up = _lu(a, pivot=ctx.params.get("pivot", True))
    return (lu_derivative(gl, gu, p.detach(), low, up),)


def _check_pivot(name: str, pivot: bool) -> None:
    if not pivot:
        raise RuntimeError(f"{name}: LU without pivoting is not implemented on the CPU")


def _check_lu_dims(name: str, A: Tensor) -> None:
    if A.ndim < 2:
        raise RuntimeError(f"{name}: Expected tensor with 2 or more dimensions. Got size: "
                           f"{list(A.shape)} instead")


def lu(A: Tensor, *, pivot: bool = True) -> Any:
    """``torch.linalg.lu``: A = P L U, L unit lower triangular (m x k), U upper (k x n)."""
    _check_lu_dims("linalg.lu", A)
    check_float("linalg.lu", A._data)
    _check_pivot("linalg.lu", pivot)
    return linalg_lu(*_lu(A, pivot=pivot))


def _raise_if_singular(name: str, info: Tensor, zero_entry: Callable[[int], str]) -> None:
    """torch's error for the first factorization in the batch that met a zero pivot;
    ``zero_entry(info)`` names the entry that is zero."""

    batch_error(name, info._data, lambda i: (
        "The factorization could not be completed because the input is not invertible "
        f"({zero_entry(i)} is zero)."))


def lu_factor_ex(A: Tensor, *, pivot: bool = True, check_errors: bool = False) -> Any:
    """``torch.linalg.lu_factor_ex``: LAPACK's compact LU, 1-based pivots and info."""
    _check_lu_dims("torch.lu_factor", A)
    check_float("linalg.lu_factor_ex", A._data)
    _check_pivot("linalg.lu_factor", pivot)
    lu_, piv, info = _lu_factor_ex(A, pivot=pivot)
    if check_errors:
        _raise_if_singular("torch.linalg.lu_factor_ex", info, lambda i: f"U[{i},{i}]")
    return linalg_lu_factor_ex(lu_, piv, info)


def lu_factor(A: Tensor, *, pivot: bool = True) -> Any:
    """``torch.linalg.lu_factor``: LAPACK's compact LU and its 1-based pivots."""
    _check_lu_dims("torch.lu_factor", A)
    check_float("linalg.lu_factor", A._data)
    _check_pivot("linalg.lu_factor", pivot)
    lu_, piv, _ = _lu_factor_ex(A, pivot=pivot)
    return linalg_lu_factor(lu_, piv)


@defop("lu_unpack", node="LuUnpackBackward0", outputs=3)
def _lu_unpack(lu_: np.ndarray, piv: np.ndarray, *, unpack_data: bool = True,
               unpack_pivots: bool = True) -> tuple:
    m = lu_.shape[-2]
    if unpack_data:
        low, up = _unpack_np(lu_)
    else:
        low = up = np.zeros((0,), dtype=lu_.dtype)
    if unpack_pivots:
        p = _perm_np(np.asarray(piv), m, lu_.dtype)
    else:
        p = np.zeros((0,), dtype=lu_.dtype)
    return p, low, up


@_lu_unpack.backward
def lu_unpack_backward(ctx: Any, grads: list) -> tuple:
    # gLU = tril_-1(gL) + triu(gU), each in its place
    _, gl, gu = (list(grads) + [None, None, None])[:3]
    m, n = ctx.input_shapes[0][-2:]
    k = min(m, n)
    shape = ctx.input_shapes[0]
    lo = gl.tril(-1) if gl is not None else None
    hi = gu.triu() if gu is not None else None
    if m == n or (lo is None and hi is None):
        parts = [x for x in (lo, hi) if x is not None]
        return (parts[0] + parts[1] if len(parts) == 2 else parts[0] if parts else None, None)
    if m > n:  # L is m x n: U goes into the top n rows
        if hi is not None:
            hi = cat([hi, Tensor._make(np.zeros(shape[:-2] + (m - k, n), hi._data.dtype))], -2)
    else:  # U is m x n: L goes into the left m columns
        if lo is not None:
            lo = cat([lo, Tensor._make(np.zeros(shape[:-2] + (m, n - k), lo._data.dtype))], -1)
    parts = [x for x in (lo, hi) if x is not None]
    return (parts[0] + parts[1] if len(parts) == 2 else parts[0], None)


def lu_unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True,  # noqa: N803
              unpack_pivots: bool = True) -> Any:
    """``torch.lu_unpack``: P, L, U from LAPACK's compact LU and pivots."""
    if LU_pivots.dtype.is_floating_point or LU_pivots.dtype.is_complex:
        raise RuntimeError("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor "
                           "of torch.int32 dtype.\nNote: this function is used for "
                           "compatibility with MAGMA")
    return lu_unpack_result(*_lu_unpack(LU_data, LU_pivots, unpack_data=unpack_data,
                                             unpack_pivots=unpack_pivots))


def _lu_solve_np(lu_: np.ndarray, piv: np.ndarray, b: np.ndarray, left: bool,
                 adjoint: bool) -> np.ndarray:
    if not left:  # X A = B  <=>  A^H X^H = B^H
        bh = np.swapaxes(b, -1, -2).conj()
        return np.swapaxes(_lu_solve_np(lu_, piv, bh, True, not adjoint), -1, -2).conj()
    shape = np.broadcast_shapes(lu_.shape[:-2], b.shape[:-2])
    n = lu_.shape[-1]
    lu_b = np.broadcast_to(lu_, shape + lu_.shape[-2:]).reshape((_count(shape), n, n))
    piv_b = np.broadcast_to(piv, shape + piv.shape[-1:]).reshape((_count(shape), n))
    b_b = np.broadcast_to(b, shape + b.shape[-2:]).reshape((_count(shape),) + b.shape[-2:])
    dt = np.result_type(lu_.dtype, b.dtype)
    out = np.zeros(b_b.shape, dtype=dt)
    if n and b.shape[-1]:
        trans = 2 if adjoint and dt.kind == "c" else 1 if adjoint else 0
        with np.errstate(all="ignore"):
            for i in range(lu_b.shape[0]):
                out[i] = _lu_solve_one(lu_b[i].astype(dt), piv_b[i], b_b[i].astype(dt), trans)
    return out.reshape(shape + b.shape[-2:])


def _lu_solve_one(lu_: np.ndarray, piv: np.ndarray, b: np.ndarray, trans: int) -> np.ndarray:
    """A X = B (op(A) with ``trans``) for A = P L U: the row swaps and two triangular solves
    (LAPACK's getrs, done with trtrs: getrs through SciPy costs ~30 ms a call here)."""
    n = lu_.shape[-1]
    low = np.tril(lu_, -1) + np.eye(n, dtype=lu_.dtype)
    up = np.triu(lu_)
    if trans == 0:  # X = U^{-1} L^{-1} P^T B
        x = b.copy()
        for i, j in enumerate(piv - 1):
            x[[i, j]] = x[[j, i]]
        x = _solve_tri_np(low, x, False, True, True)
        return _solve_tri_np(up, x, True, True, False)
    conj = trans == 2  # X = P L^{-H} U^{-H} B
    uh = np.swapaxes(up, -1, -2).conj() if conj else up.T
    lh = np.swapaxes(low, -1, -2).conj() if conj else low.T
    x = _solve_tri_np(np.ascontiguousarray(uh), b, False, True, False)
    x = _solve_tri_np(np.ascontiguousarray(lh), x, True, True, True)
    for i, j in reversed(list(enumerate(piv - 1))):
        x[[i, j]] = x[[j, i]]
    return x


@defop("linalg_lu_solve", node="LinalgLuSolveBackward0", save=(0, 1), save_output=True)
def _lu_solve(lu_: np.ndarray, piv: np.ndarray, b: np.ndarray, *, left: bool = True,
              adjoint: bool = False) -> np.ndarray:
    return _lu_solve_np(lu_, np.asarray(piv), b, left, adjoint)


@_lu_solve.backward
def lu_solve_backward(ctx: Any, grad: Tensor) -> tuple:
    # gB = lu_solve(LU, piv, G, adjoint = not adjoint); gLU as torch's linalg_lu_solve_LU
    lu_, piv, x = ctx.saved
    left, adjoint = ctx.params.get("left", True), ctx.params.get("adjoint", False)
    gb = lu_solve(lu_, piv, grad, left=left, adjoint=not adjoint) if ctx.needs_input_grad[
        2] else None
    glu = None
    if ctx.needs_input_grad[0]:
        p, low, up = lu_unpack(lu_, piv)
        if left != adjoint:  # gR = U^{-H} op(-G) op(X)^H; gLU = tril_-1(L^{-H} gR U^H) + triu(gR)
            rhs = -(grad @ x.mH) if left else -(grad.mH @ x)
            gr = solve_triangular(up.mH, rhs, upper=False)
            gl = solve_triangular(low.mH, gr @ up.mH, upper=True, left=True,
                                  unitriangular=True).tril(-1)
            glu = gl + gr.triu()
        else:  # gR = -P^T op(X) op(G)^H P L^{-H}; gLU = tril_-1(gR) + triu(L^H gR U^{-H})
            gr = -(p.mT @ (x if left else x.mH) @ (grad.mH if left else grad) @ p)
            gr = solve_triangular(low.mH, gr, upper=True, left=False, unitriangular=True)
            gu = solve_triangular(up.mH, low.mH @ gr, upper=False, left=False).triu()
            glu = gr.tril(-1) + gu
    return (glu, None, gb)


def lu_solve(LU: Tensor, pivots: Tensor, B: Tensor, *, left: bool = True,  # noqa: N803
             adjoint: bool = False) -> Tensor:
    """``torch.linalg.lu_solve``: X with A X = B (A^H X = B with ``adjoint``, X A = B with
    ``left=False``) from A's ``lu_factor``."""
    check_square("linalg.lu_solve", LU._data, "LU")
    if B.ndim < 2:
        raise RuntimeError("linalg.lu_solve: The input tensor B must have at least 2 "
                           "dimensions.")
    n = LU.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        raise RuntimeError(
            f"linalg.lu_solve: Incompatible shapes of A and B for the equation "
            f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {B.shape[-2]}x{B.shape[-1]})")
    return _lu_solve(LU, pivots, B, left=left, adjoint=adjoint)


def torch_lu_solve(input: Tensor, LU_data: Tensor, LU_pivots: Tensor) -> Tensor:  # noqa: N803
    """``torch.lu_solve`` (deprecated in torch): the arguments of linalg.lu_solve reversed."""
    warn_deprecated("lu_solve")
    return lu_solve(LU_data, LU_pivots, input)


def torch_lu(A: Tensor, pivot: bool = True, get_infos: bool = False) -> Any:
    """``torch.lu`` (deprecated in torch): linalg.lu_factor (and info with ``get_infos``)."""
    warn_deprecated("lu")
    _check_lu_dims("torch.lu_factor", A)
    lu_, piv, info = _lu_factor_ex(A, pivot=pivot)
    if get_infos:
        return (lu_, piv, info)
    _raise_if_singular("torch.linalg.lu_factor_ex", info, lambda i: f"U[{i},{i}]")
    return (lu_, piv)


# ---------------------------------------------------------------------------------------------
# LDL^T (Bunch-Kaufman): not differentiable, as in torch
# ---------------------------------------------------------------------------------------------

def _sytrf(m: np.ndarray, hermitian: bool) -> tuple:
    lapack = scipy_linalg().lapack

    n = m.shape[-1]
    if n == 0:
        return m.copy(), np.zeros(0, np.int32), 0
    name = "hetrf" if hermitian and m.dtype.kind == "c" else "sytrf"
    fn = lapack.get_lapack_funcs(name, (m,))
    ld, ipiv, info = fn(m, lower=1)
    return np.tril(ld), ipiv.astype(np.int32), int(info)


def _no_derivative(op: Any, aten: str) -> None:
    """torch records a ``NotImplemented`` node for these ops: backward raises."""
    op.node_cls._cpp_name = "torch::autograd::NotImplemented"

    @op.backward
    def not_implemented_backward(ctx: Any, grad: Any) -> tuple:
        raise RuntimeError(f"derivative for aten::{aten} is not implemented")


@defop("linalg_ldl_factor_ex", node="NotImplemented", outputs=3)
def _ldl_factor_ex(a: np.ndarray, *, hermitian: bool = False) -> tuple:
    n = a.shape[-1]
    return per_matrix(lambda m: _sytrf(m, hermitian), a, [(n, n), (n,), ()],
                      [a.dtype, np.int32, np.int32])


_no_derivative(_ldl_factor_ex, "linalg_ldl_factor_ex")


def ldl_factor_ex(input: Tensor, *, hermitian: bool = False, check_errors: bool = False) -> Any:
    """``torch.linalg.ldl_factor_ex``: LAPACK's compact LDL^T (sytrf), its pivots and info."""
    check_square("torch.linalg.ldl_factor_ex", input._data)
    check_float("torch.linalg.ldl_factor_ex", input._data)
    ld, piv, info = _ldl_factor_ex(input, hermitian=hermitian)
    if check_errors:
        _raise_if_singular("torch.linalg.ldl_factor_ex", info,
                           lambda i: f"the diagonal element {i}")
    return linalg_ldl_factor_ex(ld, piv, info)


def ldl_factor(input: Tensor, *, hermitian: bool = False) -> Any:
    """``torch.linalg.ldl_factor``: LAPACK's compact LDL^T (sytrf) and its pivots."""
    ld, piv, info = ldl_factor_ex(input, hermitian=hermitian)
    return linalg_ldl_factor(ld, piv)


@defop("linalg_ldl_solve", node="NotImplemented")
def _ldl_solve(ld: np.ndarray, piv: np.ndarray, b: np.ndarray, *,
               hermitian: bool = False) -> np.ndarray:
    lapack = scipy_linalg().lapack

    piv = np.asarray(piv)
    shape = np.broadcast_shapes(ld.shape[:-2], b.shape[:-2])
    n = ld.shape[-1]
    ld_b = np.broadcast_to(ld, shape + (n, n)).reshape((_count(shape), n, n))
    piv_b = np.broadcast_to(piv, shape + (n,)).reshape((_count(shape), n))
    b_b = np.broadcast_to(b, shape + b.shape[-2:]).reshape((_count(shape),) + b.shape[-2:])
    res = np.zeros(b_b.shape, dtype=b.dtype)
    if n and b.shape[-1]:
        name = "hetrs" if hermitian and ld.dtype.kind == "c" else "sytrs"
        fn = lapack.get_lapack_funcs(name, (ld,))
        for i in range(ld_b.shape[0]):
            res[i], _ = fn(ld_b[i], piv_b[i], b_b[i], lower=1)
    return res.reshape(shape + b.shape[-2:])


_no_derivative(_ldl_solve, "linalg_ldl_solve")


def ldl_solve(LD: Tensor, pivots: Tensor, B: Tensor, *,  # noqa: N803
              hermitian: bool = False) -> Tensor:
    """``torch.linalg.ldl_solve``: X with A X = B from A's ``ldl_factor`` (sytrs)."""
    check_square("torch.linalg.ldl_solve", LD._data, "LD")
    if B.ndim < 2:
        raise RuntimeError("torch.linalg.ldl_solve: The input tensor B must have at least 2 "
                           "dimensions.")
    return _ldl_solve(LD, pivots, B, hermitian=hermitian)
