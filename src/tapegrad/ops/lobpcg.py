"""``torch.lobpcg``: a few extreme eigenpairs of a symmetric (generalized) eigenproblem.

    lobpcg(A (*, m, m), k, B (*, m, m) | None, X (*, m, n) | None, ...) -> (E (*, k), X (*, m, k))

solves A x = lambda B x (B = I when None) for the k largest (``largest=True``, the default) or
smallest eigenvalues with Knyazev's Locally Optimal Block Preconditioned Conjugate Gradient
method. Each step builds the basis S = [X, W, P] (current Ritz vectors, preconditioned residuals
W = iK (A X - B X E), previous search directions P), B-orthonormalizes it, and solves the small
projected eigenproblem (Rayleigh-Ritz) to get the next X and P:

    S' B S = I,   (S' A S) Z = Z diag(E),   X <- S Z[:, :n],   P <- S[:, n:] Z[n:, :n]

``method="ortho"`` (the default) first B-orthogonalizes W against [X, P] (the robust variant of
Duersch et al., 2018); ``"basic"`` orthonormalizes the whole basis at once. An eigenpair counts
as converged when its backward error ||r|| / (||x|| (||A X|| / ||X|| + |lambda| ||B X|| / ||X||))
is below ``tol`` (default sqrt(eps) of the dtype); iteration stops when the first k converged
or after ``niter`` (default 1000) steps. Without X the start is ``randn(m, n)`` from the default
generator (one draw per batch matrix, in order), so a seeded run starts where torch's does.
Leading dims of A are a batch, solved one matrix at a time.

Gradient (symmetric case, B=None, as in torch): A is symmetrized, (A + A^T) / 2, and the
eigenpairs get the standard eigh derivative
    dA = V (diag(dE) + F o (V^T dV)) V^T,   F_ij = 1 / (lambda_j - lambda_i) (i != j)
here through ``linalg.eigh`` of the symmetrized A (whose top/bottom k pairs are the ones LOBPCG
found, signs aligned), so create_graph works; the returned values are LOBPCG's own.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _dtype as D

__all__ = ["lobpcg"]


def _sym_eig(m: np.ndarray, largest: bool) -> tuple[np.ndarray, np.ndarray]:
    # eigenpairs of a small symmetric matrix, ordered as requested
    e, z = np.linalg.eigh((m + m.T) / 2)
    if largest:
        e, z = e[::-1], z[:, ::-1]
    return e, z


def _b_orthonormal(s: np.ndarray, bmat: np.ndarray | None, tol: float) -> np.ndarray:
    # SVQB: S D^-1/2 (scaled) times the eigenvectors of the Gram matrix; drop near-null columns
    bs = s if bmat is None else bmat @ s
    g = s.T @ bs
    d = np.sqrt(np.abs(np.diag(g)))
    d[d == 0] = 1.0
    g = g / d[:, None] / d[None, :]
    w, v = np.linalg.eigh((g + g.T) / 2)
    keep = w > tol * w.max()
    return (s / d[None, :]) @ (v[:, keep] / np.sqrt(w[keep])[None, :])


def _b_orth_against(u: np.ndarray, v: np.ndarray, bmat: np.ndarray | None) -> np.ndarray:
    # two passes of classical Gram-Schmidt of U against the B-orthonormal V
    for _ in range(2):
        bv = v if bmat is None else bmat @ v
        u = u - v @ (bv.T @ u)
    return u


def _solve_one(a: np.ndarray, bmat: np.ndarray | None, x: np.ndarray, ik: np.ndarray | None,
               k: int, niter: int, tol: float, largest: bool,
               ortho: bool) -> tuple[np.ndarray, np.ndarray]:
    n = x.shape[1]
    eps = float(np.finfo(a.dtype).eps)
    bx = x if bmat is None else bmat @ x
    x_norm = float(np.linalg.norm(x))
    a_norm = float(np.linalg.norm(a @ x)) / x_norm
    b_norm = float(np.linalg.norm(bx)) / x_norm
    # Rayleigh-Ritz on span(X)
    xs = _b_orthonormal(x, bmat, eps)
    e, z = _sym_eig(xs.T @ a @ xs, largest)
    x = xs @ z[:, :n]
    e = e[:n]
    p: np.ndarray | None = None
    # torch counts the Rayleigh-Ritz of the start as the first of niter updates and only stops
    # when the count reaches exactly 0, so niter <= 0 means: until converged
    steps = niter - 1 if niter > 0 else -1
    while steps != 0:
        steps -= 1
        bx = x if bmat is None else bmat @ x
        r = a @ x - bx * e[None, :]
        rerr = np.linalg.norm(r, axis=0) / (
            np.linalg.norm(x, axis=0) * (a_norm + np.abs(e) * b_norm))
        conv = 0
        for ok in rerr < tol:
            if not ok:
                break
            conv += 1
        if conv >= k:
            break
        w = r if ik is None else ik @ r
        parts = [x] if p is None else [x, p]
        if ortho:
            base = _b_orthonormal(np.concatenate(parts, axis=1), bmat, eps)
            w = _b_orthonormal(_b_orth_against(w, base, bmat), bmat, eps)
            w = _b_orth_against(w, base, bmat)
            s = np.concatenate([base, _b_orthonormal(w, bmat, eps)], axis=1)
        else:
            s = _b_orthonormal(np.concatenate(parts + [w], axis=1), bmat, eps)
        ev, z = _sym_eig(s.T @ a @ s, largest)
        x_new = s @ z[:, :n]
        # new search directions: the part of the update outside span(X)
        p = _b_orth_against(x_new, _b_orthonormal(x, bmat, eps), bmat)
        p = _b_orthonormal(p, bmat, eps)
        if p.shape[1] == 0:
            p = None
        x, e = x_new, ev[:n]
    return e[:k], x[:, :k]


def _refuse_b_class() -> Any:
    # upward: a custom autograd Function (the surfaces layer), made on lobpcg's first use
    from ..autograd.function import Function

    class LOBPCGAutogradFunction(Function):
        # with B given, the eigenpairs are returned but carry no derivative (as in torch)
        @staticmethod
        def forward(ctx: Any, e: Any, v: Any, a: Any, b: Any) -> tuple[Any, Any]:
            return e.clone(), v.clone()

        @staticmethod
        def backward(ctx: Any, *grads: Any) -> Any:
            raise ValueError("lobpcg.backward does not support backward with B != I yet.")

    return LOBPCGAutogradFunction


class _LazyRefuse:
    _cls: Any = None

    def apply(self, *args: Any) -> Any:
        if self._cls is None:
            type(self)._cls = _refuse_b_class()
        return self._cls.apply(*args)


_RefuseB = _LazyRefuse()


def _floating(dtype: Any) -> Any:
    return dtype if dtype in (D.float32, D.float64) else D.float32


def lobpcg(A: Any, k: int | None = None, B: Any = None, X: Any = None, n: int | None = None,
           iK: Any = None, niter: int | None = None, tol: float | None = None,  # noqa: N803
           largest: bool | None = None, method: str | None = None, tracker: Any = None,
           ortho_iparams: dict[str, int] | None = None,
           ortho_fparams: dict[str, float] | None = None,
           ortho_bparams: dict[str, bool] | None = None) -> tuple[Any, Any]:
    """Find the k largest (or smallest) eigenpairs of A x = lambda B x by LOBPCG (torch.lobpcg)."""
    import tapegrad as tg  # upward: written against the whole namespace (loaded on first use)

    if A.shape[-2] != A.shape[-1]:
        raise AssertionError(f"A must be square, got shape {A.shape}")
    if B is not None and A.shape != B.shape:
        raise AssertionError(f"A and B must have same shape, got {A.shape} vs {B.shape}")
    dtype = _floating(A.dtype)
    if tol is None:
        tol = (1.2e-07 if dtype == D.float32 else 2.23e-16) ** 0.5
    m = A.shape[-1]
    k = (1 if X is None else X.shape[-1]) if k is None else k
    n = (k if n is None else n) if X is None else X.shape[-1]
    if m < 3 * n:
        raise ValueError(
            f"LOBPCG algorithm is not applicable when the number of A rows (={m})"
            f" is smaller than 3 x the number of requested eigenpairs (={n})")
    method = "ortho" if method is None else method
    niter_ = 1000 if niter is None else niter
    big = True if largest is None else largest
    if method == "ortho" and ortho_bparams is not None and "largest" in ortho_bparams:
        big = bool(ortho_bparams["largest"])

    grad = A.requires_grad or (B is not None and B.requires_grad)
    if grad:
        A = (A + A.mT) / 2
        B = (B + B.mT) / 2 if B is not None else None

    np_dt = np.float32 if dtype == D.float32 else np.float64
    a_np = A.detach().numpy().astype(np_dt)
    b_np = None if B is None else B.detach().numpy().astype(np_dt)
    ik_np = None if iK is None else iK.detach().numpy().astype(np_dt)
    batch = tuple(A.shape[:-2])
    cnt = int(np.prod(batch)) if batch else 1
    a3 = a_np.reshape((cnt, m, m))
    b3 = None if b_np is None else b_np.reshape((cnt, m, m))
    x3 = None
    if X is not None:
        x3 = X.detach().numpy().astype(np_dt).reshape((cnt,) + tuple(X.shape[-2:]))
    es, xs = [], []
    for i in range(cnt):
        if x3 is None:
            x0 = tg.randn((m, n), dtype=dtype).numpy().astype(np_dt)
        else:
            x0 = x3[i].copy()
        if x0.shape != (m, n):
            name = "X_" if batch else "X"
            raise AssertionError(
                f"{name} shape mismatch: got {tg.Size(x0.shape)}, expected {(m, n)}")
        e, v = _solve_one(a3[i], None if b3 is None else b3[i], x0, ik_np, k, niter_,
                          float(tol), big, method == "ortho")
        es.append(e)
        xs.append(v)
    E = tg.tensor(np.stack(es).reshape(batch + (k,)), dtype=dtype)
    V = tg.tensor(np.stack(xs).reshape(batch + (m, k)), dtype=dtype)
    if not grad or not tg.is_grad_enabled():
        return E, V
    if B is not None:
        return _RefuseB.apply(E, V, A, B)
    # differentiable eigenpairs of the symmetrized A, matched to LOBPCG's (values kept as found)
    ev, vv = tg.linalg.eigh(A)
    if big:
        ev, vv = ev.flip(-1)[..., :k], vv.flip(-1)[..., :k]
    else:
        ev, vv = ev[..., :k], vv[..., :k]
    sign = (vv.detach() * V).sum(-2, keepdim=True).sign()
    sign = tg.where(sign == 0, tg.ones_like(sign), sign)
    vv = vv * sign
    return E + (ev - ev.detach()), V + (vv - vv.detach())
