"""torch.linalg beyond the OpInfo samples: torch's errors for singular, non-square and
mismatched input, the ``_ex`` variants' info tensors, batching over leading dimensions, the
printed return types, and a gradcheck (first and second order) of the decompositions' rules."""

from __future__ import annotations

import numpy as np
import pytest

import tapegrad
from tapegrad.autograd import gradcheck, gradgradcheck


def _spd(L, n, batch=()):
    g = L.Generator().manual_seed(0)
    a = L.randn(*batch, n, n, dtype=L.float64, generator=g)
    return a @ a.mT + n * L.eye(n, dtype=L.float64)


def _singular_batch(L):
    a = L.arange(18.0).reshape(2, 3, 3)  # both rank 2
    return a


@pytest.mark.parametrize("call", [
    lambda L: L.linalg.inv(L.tensor([[1.0, 2.0], [2.0, 4.0]])),
    lambda L: L.linalg.inv(L.zeros(2, 3, 3)),
    lambda L: L.inverse(L.zeros(3, 3)),
    lambda L: L.linalg.inv(L.zeros(2, 3)),
    lambda L: L.linalg.det(L.zeros(2, 3)),
    lambda L: L.linalg.slogdet(L.zeros(3)),
    lambda L: L.linalg.solve(L.zeros(3, 3), L.ones(3)),
    lambda L: L.linalg.inv_ex(L.zeros(3, 3), check_errors=True),
    lambda L: L.linalg.cholesky(L.tensor([[1.0, 2.0], [2.0, 1.0]])),
    lambda L: L.linalg.eigh(L.zeros(2, 3)),
    lambda L: L.linalg.eigh(L.eye(2), UPLO="X"),
    lambda L: L.linalg.svd(L.zeros(3)),
    lambda L: L.linalg.lu_solve(*L.linalg.lu_factor(L.eye(3)), L.ones(2, 1)),
    lambda L: L.linalg.lstsq(L.ones(3, 2), L.ones(2, 1)),
    lambda L: L.linalg.lstsq(L.ones(3, 2), L.ones(3, 1), driver="foo"),
    lambda L: L.linalg.multi_dot([L.ones(2, 3)]),
    lambda L: L.linalg.multi_dot([L.ones(2, 3), L.ones(2, 3)]),
    lambda L: L.linalg.multi_dot([L.ones(2, 3), L.ones(3, 3, dtype=L.float64)]),
    lambda L: L.linalg.matrix_power(L.ones(2, 3), 2),
    lambda L: L.linalg.matrix_norm(L.ones(3), 2),
    lambda L: L.linalg.norm(L.ones(2, 2, 2), "fro"),
    lambda L: L.linalg.cond(L.ones(2, 3), 1),
    lambda L: L.linalg.tensorinv(L.ones(2, 3), 1),
    lambda L: L.linalg.cross(L.ones(2, 2), L.ones(2, 2)),
    lambda L: L.linalg.vecdot(L.ones(3), L.ones(3, dtype=L.float64)),
    lambda L: L.linalg.vander(L.ones(3), N=1),
    lambda L: L.ormqr(L.ones(3, 3), L.ones(4), L.ones(3, 3)),
])
def test_errors(compare, call):
    compare(call)


@pytest.mark.parametrize("call", [
    lambda L: L.linalg.inv_ex(_singular_batch(L)).info,
    lambda L: L.linalg.cholesky_ex(L.tensor([[[4.0, 0.0], [0.0, 1.0]], [[1.0, 2.0],
                                                                        [2.0, 1.0]]])).info,
    lambda L: L.linalg.solve_ex(L.eye(3).expand(2, 3, 3), L.ones(2, 3, 1)),
    lambda L: L.linalg.lu_factor_ex(_singular_batch(L)).info,
    lambda L: L.linalg.det(_singular_batch(L).double()),
    lambda L: L.linalg.slogdet(_spd(L, 3, (2,))),
    lambda L: L.logdet(-L.eye(3, dtype=L.float64)),
    lambda L: L.linalg.matrix_rank(_singular_batch(L)),
    lambda L: L.linalg.matrix_rank(_spd(L, 3, (2,)), hermitian=True),
    lambda L: L.linalg.eigvalsh(_spd(L, 4, (2, 3))),
    lambda L: L.linalg.svdvals(_spd(L, 3, (2, 2))[..., :2]),
    lambda L: L.linalg.solve(_spd(L, 3, (2, 1)), L.ones(4, 3, 2, dtype=L.float64)),
    lambda L: L.linalg.lu_solve(*L.linalg.lu_factor(_spd(L, 3, (2,))),
                                L.ones(3, 2, dtype=L.float64), adjoint=True),
    lambda L: L.cholesky_solve(L.ones(2, 3, 1, dtype=L.float64),
                               L.linalg.cholesky(_spd(L, 3))),
    lambda L: L.cholesky_inverse(L.linalg.cholesky(_spd(L, 3)), upper=False),
])
def test_values_and_batching(compare, call):
    compare(call, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("driver", ["gels", "gelsy", "gelsd", "gelss"])
def test_lstsq_drivers(compare, driver):
    def run(L):
        g = L.Generator().manual_seed(1)
        a = L.randn(2, 5, 3, dtype=L.float64, generator=g)
        b = L.randn(2, 5, 2, dtype=L.float64, generator=g)
        return L.linalg.lstsq(a, b, driver=driver)

    compare(run, rtol=1e-7, atol=1e-9)


def test_return_types_print(compare):
    compare(lambda L: repr(L.linalg.slogdet(L.eye(2, dtype=L.float64))))
    compare(lambda L: repr(L.linalg.lu_factor(L.eye(2, dtype=L.float64))))


def test_batched_svd_reconstructs():
    a = tapegrad.randn(2, 3, 5, 4, dtype=tapegrad.float64)
    u, s, vh = tapegrad.linalg.svd(a, full_matrices=False)
    np.testing.assert_allclose(((u * s.unsqueeze(-2)) @ vh).numpy(), a.numpy(), atol=1e-12)
    w, v = tapegrad.linalg.eigh(_spd(tapegrad, 4, (3,)))
    np.testing.assert_allclose((v @ v.mT).numpy(), np.broadcast_to(np.eye(4), (3, 4, 4)),
                               atol=1e-12)


def _gauge_free_svd(a):
    u, s, vh = tapegrad.linalg.svd(a, full_matrices=False)
    return s, u @ vh, (u * s.unsqueeze(-2)) @ vh


def _gauge_free_eigh(a):
    w, v = tapegrad.linalg.eigh(a)
    return w, v @ (w.unsqueeze(-1) * v.mT)


GRADCHECKS = {
    "svd (tall, wide, batched)": (_gauge_free_svd, [(3, 2), (2, 3), (2, 2, 2)]),
    "eigh": (lambda a: _gauge_free_eigh(a + a.mT), [(3, 3)]),
    "lu": (lambda a: tuple(tapegrad.linalg.lu(a))[1:], [(3, 3), (3, 2), (2, 3)]),
    "lu_factor": (lambda a: tapegrad.linalg.lu_factor(a).LU, [(3, 3)]),
    "det": (tapegrad.linalg.det, [(2, 3, 3)]),
    "slogdet": (lambda a: tapegrad.linalg.slogdet(a).logabsdet, [(3, 3)]),
    "inv": (tapegrad.linalg.inv, [(3, 3)]),
    "pinv": (tapegrad.linalg.pinv, [(4, 3), (3, 4)]),
    "lstsq": (lambda a: tapegrad.linalg.lstsq(a, a[..., :2] + 1.0).solution, [(5, 3)]),
}


@pytest.mark.parametrize("name", sorted(GRADCHECKS))
def test_gradcheck_decompositions(name):
    fn, shapes = GRADCHECKS[name]
    g = tapegrad.Generator().manual_seed(3)
    for i, shape in enumerate(shapes):
        a = tapegrad.randn(*shape, dtype=tapegrad.float64, generator=g)
        a.requires_grad_()
        assert gradcheck(fn, (a,))
        if i == 0:  # the second order on the first shape (the rules are the same code)
            assert gradgradcheck(fn, (a,))


def test_det_of_singular_matrix_gradient():
    # d det(A) / dA is the cofactor matrix, not zero, at a rank n-1 matrix (the SVD formula);
    # torch 2.13 returns zeros for this input (its nonsingular formula times det = 0)
    a = tapegrad.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]],
                        dtype=tapegrad.float64, requires_grad=True)
    (g,) = tapegrad.autograd.grad(tapegrad.linalg.det(a), a)
    m = a.detach().numpy()
    cof = np.array([[(-1) ** (i + j) * np.linalg.det(np.delete(np.delete(m, i, 0), j, 1))
                     for j in range(3)] for i in range(3)])
    np.testing.assert_allclose(g.numpy(), cof, atol=1e-12)


def test_torch_cholesky_error_and_node():
    with pytest.raises(tapegrad.linalg.LinAlgError, match="^cholesky: The factorization could "
                       "not be completed because the input is not positive-definite"):
        tapegrad.cholesky(tapegrad.tensor([[1.0, 2.0], [2.0, 1.0]]))
    a = _spd(tapegrad, 3).requires_grad_()
    assert type(tapegrad.cholesky(a).grad_fn).__name__ == "CholeskyBackward0"


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("ord", ["fro", "nuc", 1, 2, -2, float("inf")])
def test_matrix_norm_of_low_precision(compare, dtype, ord):
    # the singular-value norms refuse 2-byte floats; the others compute in them
    compare(lambda L: L.linalg.matrix_norm(L.ones(2, 3, dtype=getattr(L, dtype)) * 0.5, ord))
    compare(lambda L: L.linalg.norm(L.ones(2, 3, dtype=getattr(L, dtype)) * 0.5, ord))
