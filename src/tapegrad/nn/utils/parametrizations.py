"""``torch.nn.utils.parametrizations``: ready-made parametrizations built on ``parametrize``.

* ``weight_norm``: w = g v / ||v|| (``original0`` = g, ``original1`` = v).
* ``spectral_norm``: w = W / sigma(W), sigma estimated by power iteration on the buffers
  ``_u`` and ``_v`` (one step per training-mode forward; eval mode reuses them).
* ``orthogonal``: w orthogonal (unitary), the image of an unconstrained matrix under the
  matrix exponential, the Cayley map or a product of Householder reflectors.
"""

from __future__ import annotations

from enum import Enum, auto
from typing import Any

import numpy as np

from ... import _tensor
from ..._random import randn
from ...autograd.grad_mode import no_grad
from ...ops.factorizations import geqrf, householder_product, matrix_exp, solve
from ...ops.linalg import vdot
from ...ops.shape import cat
from ...ops.weight_norm import _weight_norm, norm_except_dim
from .. import functional as F
from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from ..modules.module import Module
from . import parametrize

Tensor = _tensor.Tensor

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


def _diagonal(x: Tensor) -> Tensor:
    """The main diagonals of a batch of matrices, shape (..., min(n, k))."""
    idx = list(range(min(x.shape[-2], x.shape[-1])))
    return x[..., idx, idx]


# ---------------------------------------------------------------------------------------------
# orthogonal
# ---------------------------------------------------------------------------------------------

class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


class _Orthogonal(Module):
    """X (unconstrained) -> Q (orthonormal columns, or rows for a wide X).

    The tall case (n >= k) is computed and a wide X is transposed in and out. With
    ``use_trivialization`` the result is ``base @ Q(X)``, where the buffer ``base`` is the
    orthogonal matrix last assigned: assigning sets ``base`` and the original back to the
    point that maps to the identity (so optimizers move around the assigned matrix).
    """

    base: Tensor

    def __init__(self, weight: Tensor, orthogonal_map: _OrthMaps, *,
                 use_trivialization: bool = True) -> None:
        super().__init__()
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex "
                             "tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X: Tensor) -> Tensor:
        n, k = X.shape[-2], X.shape[-1]
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            X = X.tril()  # n k - k(k-1)/2 free entries
            if n != k:  # embed into a square matrix
                pad = X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)
                X = _cat([X, pad], -1)
            A = X - X.mH  # skew-symmetric (skew-Hermitian)
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = matrix_exp(A)
            else:  # Cayley: (I - A/2)^{-1} (I + A/2)
                eye = _eye(n, A)
                Q = solve(eye - 0.5 * A, eye + 0.5 * A)
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(-1)  # the reflectors; the diagonal of X holds only signs (+-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = householder_product(A, tau)
            Q = Q * _diagonal(X).int().unsqueeze(-2)
        if hasattr(self, "base"):
            Q = self.base @ Q
        if transposed:
            Q = Q.mT
        return Q

    def right_inverse(self, Q: Tensor) -> Tensor:
        with no_grad():
            return self._right_inverse(Q)

    def _right_inverse(self, Q: Tensor) -> Tensor:
        if Q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {Q.shape}.")
        q_init = Q
        n, k = Q.shape[-2], Q.shape[-1]
        transpose = n < k
        if transpose:
            Q = Q.mT
            n, k = k, n
        if not hasattr(self, "base"):
            if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                raise NotImplementedError("It is not possible to assign to the matrix "
                                          "exponential or the Cayley parametrizations when "
                                          "use_trivialization=False.")
            # householder: the compact QR of Q, with the diagonal replaced by the signs that
            # make diag(R) positive (a reflector LAPACK skipped, tau == 0, flips the sign)
            A, tau = geqrf(Q)
            a = A._data.copy()
            idx = np.arange(min(n, k))
            diag = np.sign(a[..., idx, idx])
            diag[tau._data == 0] *= -1
            a[..., idx, idx] = diag
            A = Tensor._make(a)
            return A.mT if transpose else A
        if n == k:
            Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
        else:  # complete Q to an n x n orthogonal matrix with random columns
            N = randn(*(tuple(Q.shape[:-2]) + (n, n - k)), dtype=Q.dtype)
            Q = _make_orthogonal(_cat([Q, N], -1))
        self.base = Q
        # the point that the maps send to the identity: -I (householder reads its diagonal)
        neg_id = np.zeros(q_init.shape, dtype=q_init._data.dtype)
        idx = np.arange(min(q_init.shape[-2], q_init.shape[-1]))
        neg_id[..., idx, idx] = -1.0
        return Tensor._make(neg_id)


def _cat(tensors: list, dim: int) -> Tensor:
    return cat(tensors, dim)


def _eye(n: int, like: Tensor) -> Tensor:
    return Tensor._make(np.eye(n, dtype=like._data.dtype))


def _is_orthogonal(Q: Tensor) -> bool:
    n, k = Q.shape[-2], Q.shape[-1]
    eps = 10.0 * n * float(np.finfo(Q._data.dtype).eps)
    gram = (Q.mH @ Q)._data
    return bool(np.allclose(gram, np.eye(k, dtype=gram.dtype), rtol=1e-5, atol=eps))


def _make_orthogonal(A: Tensor) -> Tensor:
    """Q of A = QR (A tall) with diag(R) >= 0."""
    X, tau = geqrf(A)
    Q = householder_product(X, tau)
    d = _diagonal(X)
    sgn = d / d.abs() if d.is_complex() else d.sign()  # the phase of diag(R)
    return Q * sgn.unsqueeze(-2)


def orthogonal(module: Module, name: str = "weight", orthogonal_map: str | None = None, *,
               use_trivialization: bool = True) -> Module:
    """Make ``module.<name>`` an orthogonal (unitary) matrix, or batch of them.

    ``orthogonal_map``: "matrix_exp" (default for square or complex matrices), "cayley", or
    "householder" (default otherwise).
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError("Expected a matrix or batch of matrices. "
                         f"Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        square = weight.shape[-2] == weight.shape[-1]
        orthogonal_map = "matrix_exp" if square or weight.is_complex() else "householder"
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", '
                         f'"householder". Got: {orthogonal_map}')
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


# ---------------------------------------------------------------------------------------------
# weight_norm
# ---------------------------------------------------------------------------------------------

class _WeightNorm(Module):
    """(g, v) -> g v / ||v||, the norm over every dimension but ``dim`` (all when -1)."""

    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int = 0) -> Module:
    """Split ``module.<name>`` into a magnitude g (``parametrizations.<name>.original0``) and
    a direction v (``original1``): w = g v / ||v||. ``dim=None`` norms the whole tensor.

    State dicts saved with the older ``nn.utils.weight_norm`` (``<name>_g``, ``<name>_v``) load
    into the new keys.
    """
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def _weight_norm_compat_hook(state_dict: dict, prefix: str, local_metadata: Any,
                                 strict: bool, missing_keys: list, unexpected_keys: list,
                                 error_msgs: list) -> None:
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module._register_load_state_dict_pre_hook(_weight_norm_compat_hook)
    return module


# ---------------------------------------------------------------------------------------------
# spectral_norm
# ---------------------------------------------------------------------------------------------

class _SpectralNorm(Module):
    """W -> W / sigma, sigma = u^H W v with u, v the power-iteration estimates of the top
    singular vectors of W seen as a matrix (``dim`` first, the rest flattened)."""

    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError("Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but "
                             f"got n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.shape
            u = weight_mat.new_empty(h).normal_(0, 1)  # u first, then v: torch's draw order
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)  # start from a good estimate

    def _reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.ndim) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat: Tensor, n_power_iterations: int) -> None:
        # u <- W v / |W v|, v <- W^H u / |W^H u|, written into the buffers in place
        with no_grad():
            for _ in range(n_power_iterations):
                F.normalize(weight_mat.mv(self._v), dim=0, eps=self.eps, out=self._u)
                F.normalize(weight_mat.mH.mv(self._u), dim=0, eps=self.eps, out=self._v)

    def forward(self, weight: Tensor) -> Tensor:
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u = self._u.clone()  # clones: later in-place power steps must not touch the graph
        v = self._v.clone()
        sigma = vdot(u, weight_mat.mv(v))
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Module:
    """Divide ``module.<name>`` by its spectral norm (largest singular value), estimated by
    ``n_power_iterations`` steps of power iteration per training-mode access.

    ``dim`` (default 0, 1 for transposed convolutions) is the output dimension.
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        transposed = isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d))
        dim = 1 if transposed else 0
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module
