"""Complex tensors (ops/complex.py and the complex paths of the other ops), against real torch:
creation, printing, type promotion, elementwise values, the real/complex views, the conjugate
bits, gradients of real losses through complex ops, and torch's errors."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from cpu_kernels import assert_draws

Z1 = [1 + 2j, -3.5 - 0.25j, 0.5j, 2.0, -1 + 1e-3j]
Z2 = [0.5 - 1j, 2 + 2j, -1.5 + 0.25j, 1j, 3 - 0.5j]
R1 = [0.5, -1.25, 2.0, 3.5, -0.75]


def _z(L, data=Z1, dtype=None, **kw):
    return L.tensor(data, dtype=dtype or L.complex64, **kw)


# --------------------------------------------------------------------------------------------
# Creation
# --------------------------------------------------------------------------------------------

CREATION = [
    lambda L: L.tensor([1 + 2j]),
    lambda L: L.tensor(1j),
    lambda L: L.tensor([[1, 2.5], [1j, 0]]),
    lambda L: L.tensor([True, 1j]),
    lambda L: L.tensor([1j, 2], dtype=L.complex128),
    lambda L: L.tensor(3, dtype=L.cdouble),
    lambda L: L.tensor(np.array([1j], dtype=np.complex64)),
    lambda L: L.zeros(2, 3, dtype=L.cfloat),
    lambda L: L.ones(2, dtype=L.cdouble),
    lambda L: L.full((2,), 1 + 1j),
    lambda L: L.full((1,), 2, dtype=L.cfloat),
    lambda L: L.empty(2, dtype=L.complex64).dtype,
    lambda L: L.zeros_like(L.ones(2), dtype=L.cfloat),
    lambda L: L.eye(2, dtype=L.cfloat),
    lambda L: L.tensor([1.0, 2.0]).cfloat(),
    lambda L: L.tensor([1.0, 2.0]).cdouble(),
    lambda L: L.tensor([1, 2]).to(L.complex128),
    lambda L: _z(L).is_complex(),
    lambda L: L.tensor([1.0]).is_complex(),
    lambda L: L.tensor([1j], dtype=L.float64),
    lambda L: L.tensor([1j], dtype=L.int64),
    lambda L: L.tensor([1j], dtype=L.bool),
]


@pytest.mark.parametrize("case", range(len(CREATION)))
def test_creation(compare, case):
    compare(CREATION[case])


@pytest.mark.parametrize("fn,dtype", itertools.product(
    ["rand", "randn"], ["complex64", "complex128"]))
def test_random_complex_is_bit_exact(lib, oracle, fn, dtype):
    # torch draws the real and imaginary parts in turn; randn's parts have std 1/sqrt(2)
    for n in (1, 7, 16, 33):
        oracle.manual_seed(0)
        want = getattr(oracle, fn)(n, dtype=getattr(oracle, dtype)).numpy()
        lib.manual_seed(0)
        got = getattr(lib, fn)(n, dtype=getattr(lib, dtype)).numpy()
        assert_draws(got, want)  # (randn's float32 parts: tests/cpu_kernels.py)


# --------------------------------------------------------------------------------------------
# Printing
# --------------------------------------------------------------------------------------------

PRINTED = [
    "L.tensor([1+2j, 3-4j])",
    "L.tensor([1.5+2j, -3-4.25j])",
    "L.tensor(1+2j)",
    "L.tensor(-0.5-0.25j, dtype=L.complex128)",
    "L.tensor([1e-5+1e5j, 2+3j])",
    "L.tensor([1e10+1j, 1e-10j])",
    "L.tensor([[1+1j, 2-2j], [3.5+0j, -4.25-1e-3j]])",
    "L.tensor([1+2j], dtype=L.complex128)",
    "L.tensor([1+2j], requires_grad=True)",
    "L.tensor([1+2j], requires_grad=True) * 2",
    "L.tensor([1+2j], dtype=L.complex128, requires_grad=True) * 2",
    "L.zeros(0, dtype=L.cfloat)",
    "L.zeros(2, 0, dtype=L.cdouble)",
    "L.tensor([complex(float('nan'), 1), complex(float('inf'), -float('inf'))])",
    "L.tensor([123456.789+0.001j])",
    "L.tensor([0.1+0.2j, 100+1000j])",
    "L.arange(12, dtype=L.float64).reshape(3, 4).to(L.cdouble) * (1-0.5j)",
    "L.tensor([1+2j]).conj()",
    "L.tensor([-1-1j, 1+1j])",
    "L.tensor([1.+0j, 2.+0j])",
    "L.tensor([[1e-4+1e4j] * 3] * 2, dtype=L.complex128)",
    "L.complex(L.arange(1200.), L.ones(1200))",
    "L.tensor(complex(0, -0.0))",
    "L.tensor([1+2j, -3.5-0.25j]).square()",
]


@pytest.mark.parametrize("expr", PRINTED)
def test_printing(lib, oracle, expr):
    assert repr(eval(expr, {"L": lib})) == repr(eval(expr, {"L": oracle}))


# --------------------------------------------------------------------------------------------
# Type promotion
# --------------------------------------------------------------------------------------------

NAMES = ["bool", "uint8", "int64", "float32", "float64", "complex64", "complex128"]


def test_promote_types_table(lib, oracle):
    for a, b in itertools.product(NAMES, NAMES):
        want = oracle.promote_types(getattr(oracle, a), getattr(oracle, b))
        assert str(lib.promote_types(getattr(lib, a), getattr(lib, b))) == str(want), (a, b)


def test_result_type_table(lib, oracle):
    for a, s, shape in itertools.product(NAMES, [True, 2, 2.5, 1j], [(), (2,)]):
        want = oracle.result_type(oracle.zeros(shape, dtype=getattr(oracle, a)), s)
        got = lib.result_type(lib.zeros(shape, dtype=getattr(lib, a)), s)
        assert str(got) == str(want), (a, s, shape)
    for a, b in itertools.product(NAMES, NAMES):  # dimensioned tensor with a 0-d one
        want = oracle.result_type(oracle.zeros(2, dtype=getattr(oracle, a)),
                                  oracle.zeros((), dtype=getattr(oracle, b)))
        got = lib.result_type(lib.zeros(2, dtype=getattr(lib, a)),
                              lib.zeros((), dtype=getattr(lib, b)))
        assert str(got) == str(want), (a, b)


PROMOTING = [
    lambda L: L.tensor([1.0, 2.0]) + L.tensor([1j, 2j]),
    lambda L: L.tensor([1.0], dtype=L.float64) + _z(L, [1j]),
    lambda L: L.tensor([1, 2]) + 1j,
    lambda L: L.tensor([1, 2]) * _z(L, [1 + 1j, 2]),
    lambda L: L.tensor([1.0], dtype=L.float64) * (2 + 1j),
    lambda L: L.tensor([True]) + 1j,
    lambda L: L.tensor([1.0]) + L.tensor(1j, dtype=L.complex128),
]


@pytest.mark.parametrize("case", range(len(PROMOTING)))
def test_promotion(compare, case):
    compare(PROMOTING[case])


# --------------------------------------------------------------------------------------------
# Elementwise math, reductions, linear algebra
# --------------------------------------------------------------------------------------------

UNARY = ["neg", "exp", "log", "sqrt", "sin", "cos", "tan", "sinh", "cosh", "tanh",
         "reciprocal", "rsqrt", "sigmoid", "abs", "angle", "sgn", "conj", "conj_physical",
         "square", "log2", "log10", "log1p", "expm1", "asin", "acos", "atan", "isfinite",
         "isnan", "isinf", "isreal"]


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_unary(compare, name, dtype):
    compare(lambda L: getattr(L, name)(_z(L, dtype=getattr(L, dtype))), rtol=1e-5, atol=1e-6)


BINARY = [
    lambda L: _z(L) + _z(L, Z2),
    lambda L: _z(L).sub(_z(L, Z2), alpha=2),
    lambda L: _z(L) * _z(L, Z2),
    lambda L: _z(L) / _z(L, Z2),
    lambda L: _z(L) ** 2,
    lambda L: _z(L) ** (0.5 + 1j),
    lambda L: _z(L).pow(_z(L, Z2)),
    lambda L: 2 ** _z(L),
    lambda L: _z(L) == _z(L, Z1[:2] + Z2[2:]),
    lambda L: _z(L) != 2.0,
    lambda L: L.isclose(_z(L), _z(L) + 1e-9),
    lambda L: L.allclose(_z(L), _z(L) * (1 + 1e-9)),
    lambda L: L.nan_to_num(L.tensor([complex(float("nan"), float("inf")), 1 - 1j])),
    lambda L: L.nan_to_num(L.tensor([complex(float("-inf"), float("nan"))]), nan=2.0),
]


@pytest.mark.parametrize("case", range(len(BINARY)))
def test_binary(compare, case):
    compare(BINARY[case], rtol=1e-5, atol=1e-6)


REDUCTIONS = [
    lambda L: _z(L).sum(),
    lambda L: _z(L).reshape(1, 5).mean(1),
    lambda L: _z(L).prod(),
    lambda L: _z(L).cumsum(0),
    lambda L: _z(L).var(),
    lambda L: _z(L).std(),
    lambda L: L.linalg.vector_norm(_z(L)),
    lambda L: L.linalg.vector_norm(_z(L), ord=1),
    lambda L: L.linalg.vector_norm(_z(L), ord=float("inf")),
    lambda L: _z(L).norm(),
]


@pytest.mark.parametrize("case", range(len(REDUCTIONS)))
def test_reductions(compare, case):
    compare(REDUCTIONS[case], rtol=1e-5, atol=1e-6)


LINALG = [
    lambda L: L.dot(_z(L), _z(L, Z2)),
    lambda L: L.vdot(_z(L), _z(L, Z2)),
    lambda L: L.inner(_z(L), _z(L, Z2)),
    lambda L: _z(L)[:4].reshape(2, 2) @ _z(L, Z2)[:4].reshape(2, 2),
    lambda L: L.mm(_z(L)[:4].reshape(2, 2), _z(L, Z2)[:4].reshape(2, 2)),
    lambda L: L.bmm(_z(L)[:4].reshape(1, 2, 2), _z(L, Z2)[:4].reshape(1, 2, 2)),
    lambda L: _z(L)[:4].reshape(2, 2) @ L.tensor([1.0, 2.0]).cfloat(),
]


@pytest.mark.parametrize("case", range(len(LINALG)))
def test_linalg(compare, case):
    compare(LINALG[case], rtol=1e-5, atol=1e-6)


# --------------------------------------------------------------------------------------------
# complex(), polar(), real/imag/view_as_real/view_as_complex, the conjugate bits
# --------------------------------------------------------------------------------------------

PARTS = [
    lambda L: L.complex(L.tensor(R1), L.tensor(R1[::-1])),
    lambda L: L.complex(L.tensor(R1, dtype=L.float64), L.tensor(2.0, dtype=L.float64)),
    lambda L: L.complex(L.tensor([float("inf")]), L.tensor([0.0])),
    lambda L: L.polar(L.tensor(R1).abs(), L.tensor(R1)),
    lambda L: _z(L).real,
    lambda L: _z(L).imag,
    lambda L: L.real(_z(L)),
    lambda L: L.imag(_z(L, dtype=L.complex128)),
    lambda L: L.view_as_real(_z(L)),
    lambda L: L.view_as_real(_z(L)[::2]),
    lambda L: L.view_as_real(L.tensor(1 + 2j)),
    lambda L: L.view_as_complex(L.arange(6.0).reshape(3, 2)),
    lambda L: L.view_as_complex(L.arange(12.0, dtype=L.float64).reshape(3, 2, 2)[:, 1]),
    lambda L: L.angle(L.tensor([-1.0, 2.0, -0.0, float("nan")])),
    lambda L: L.angle(L.tensor([-1, 2])),
    lambda L: (_z(L).conj().is_conj(), _z(L).is_conj(), L.tensor([1.0]).conj().is_conj()),
    lambda L: (_z(L).conj().resolve_conj().is_conj(), _z(L).conj_physical().is_conj()),
    lambda L: (_z(L).conj().imag.is_neg(), _z(L).conj().imag.resolve_neg().is_neg(),
               _z(L).neg().is_neg()),
    lambda L: _z(L).conj().imag,
    lambda L: _z(L).conj() * 2,
    lambda L: _z(L).conj().resolve_conj(),
    lambda L: _z(L).cfloat().dtype,
]


@pytest.mark.parametrize("case", range(len(PARTS)))
def test_parts(compare, case):
    compare(PARTS[case], rtol=1e-6, atol=1e-7)


def test_real_and_imag_are_writable_views(compare):
    def scenario(L):
        x = _z(L)
        x.real.mul_(2)
        x.imag.add_(1)
        r = L.view_as_real(x)
        r[0, 1] = 7.0
        y = L.view_as_complex(r)
        y[1] = 5j
        x.real = L.tensor(R1)
        return x, r, y

    compare(scenario)


def test_conj_of_real_is_the_tensor_itself(lib):
    x = lib.tensor([1.0, 2.0])
    assert x.conj() is x and x.real is x and x.resolve_conj() is x and x.conj_physical() is x


# --------------------------------------------------------------------------------------------
# Gradients: torch's convention (conjugate Wirtinger derivative)
# --------------------------------------------------------------------------------------------

LOSSES = [
    lambda L, z, w, r: (z * z.conj()).real.sum(),
    lambda L, z, w, r: (z * w).abs().sum(),
    lambda L, z, w, r: (L.exp(z) / w).real.sum() + (z.sin() * w.cos()).imag.sum(),
    lambda L, z, w, r: (r * z + r).abs().pow(2).sum(),
    lambda L, z, w, r: L.complex(r, r * 2).mul(w).angle().sum(),
    lambda L, z, w, r: L.polar(r.abs() + 1, r).mul(z).real.sum(),
    lambda L, z, w, r: L.view_as_real(z * w).pow(2).sum()
    + L.view_as_complex(L.stack([r, r], -1)).mul(z).imag.sum(),
    lambda L, z, w, r: (z.sgn() * w).real.sum(),
    lambda L, z, w, r: (z.reshape(2, 2) @ w.reshape(2, 2)).abs().sum()
    + L.vdot(z, w).real + L.dot(z, w).imag,
    lambda L, z, w, r: (z.sqrt() + z.log() + z.reciprocal() + z.tanh() + z.sigmoid()
                        + z.rsqrt() + z.tan() + z.cosh()).real.sum(),
    lambda L, z, w, r: (z.prod() + z.mean() + (z ** 2).sum() + (z - w).sum()).imag,
    lambda L, z, w, r: z.var() + z.std() + L.linalg.vector_norm(z) + z.norm(p=1),
    lambda L, z, w, r: (z.conj() * w).real.sum() + z.conj_physical().imag.sum(),
    lambda L, z, w, r: (z.cfloat() * r.to(L.complex128)).real.sum(),
    lambda L, z, w, r: (z * 1j + r).angle().sum(),
]


def _grads(L, loss, create_graph=False):
    z = L.tensor(Z1[:4], dtype=L.complex128, requires_grad=True)
    w = L.tensor(Z2[:4], dtype=L.complex128, requires_grad=True)
    r = L.tensor(R1[:4], dtype=L.float64, requires_grad=True)
    out = loss(L, z, w, r)
    grads = L.autograd.grad(out, [z, w, r], allow_unused=True, create_graph=create_graph)
    return out, grads


@pytest.mark.parametrize("case", range(len(LOSSES)))
def test_gradients(compare, case):
    compare(lambda L: _grads(L, LOSSES[case]), rtol=1e-7, atol=1e-9)


def test_gradient_of_squared_modulus_is_2z(lib):
    z = lib.tensor(Z1, dtype=lib.complex128, requires_grad=True)
    (z * z.conj()).real.sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), 2 * np.array(Z1))


def test_second_order(compare):
    def scenario(L):
        z = L.tensor(Z1[:3], dtype=L.complex128, requires_grad=True)
        out = (z * z * z).abs().sum()
        (g,) = L.autograd.grad(out, [z], create_graph=True)
        (gg,) = L.autograd.grad(L.view_as_real(g).pow(2).sum(), [z])
        return g.detach(), gg

    compare(scenario, rtol=1e-7, atol=1e-9)


def test_grad_fn_names(compare):
    def scenario(L):
        z = L.tensor(Z1, requires_grad=True)
        r = L.tensor(R1, requires_grad=True)
        outs = [z.real, z.imag, z.conj(), z.conj_physical(), z.angle(), z.abs(), z.sgn(),
                L.view_as_real(z), L.view_as_complex(L.view_as_real(z)), L.complex(r, r),
                L.polar(r, r), z.conj().resolve_conj(), r.cfloat()]
        return [type(o.grad_fn).__name__ for o in outs]

    compare(scenario)


def test_real_leaf_gets_a_real_gradient(compare):
    def scenario(L):
        r = L.tensor(R1, requires_grad=True)
        (r * (1 + 2j)).abs().sum().backward()
        return r.grad

    compare(scenario)


# --------------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------------

ERRORS = [
    lambda L: L.tensor([1.0]).imag,
    lambda L: L.view_as_real(L.tensor([1.0])),
    lambda L: L.view_as_complex(L.tensor([1.0, 2, 3])),
    lambda L: L.view_as_complex(L.zeros(2, 2).t()),
    lambda L: L.view_as_complex(L.tensor([1, 2])),
    lambda L: L.view_as_complex(L.zeros(3, 2)[1:].reshape(-1)[1:3]),
    lambda L: L.complex(L.tensor([1.0]), L.tensor([1.0], dtype=L.float64)),
    lambda L: L.complex(L.tensor([1]), L.tensor([1])),
    lambda L: L.complex(1, L.tensor([1.0])),
    lambda L: L.polar(L.tensor([1.0]), 2),
    lambda L: L.complex(L.tensor([1.0]), L.tensor([1.0]), out=L.zeros(1, dtype=L.cdouble)),
    lambda L: L.tensor(1 + 2j, requires_grad=True).backward(),
    lambda L: _z(L) < _z(L),
    lambda L: _z(L) <= 1,
    lambda L: _z(L, dtype=L.complex128) > 0,
    lambda L: L.tensor([1.0]) >= L.tensor([1j]),
    lambda L: _z(L).max(),
    lambda L: _z(L).min(0),
    lambda L: _z(L).amax(),
    lambda L: _z(L).argmax(),
    lambda L: L.maximum(_z(L), _z(L)),
    lambda L: _z(L).sort(),
    lambda L: _z(L).topk(1),
    lambda L: _z(L).sign(),
    lambda L: _z(L).floor(),
    lambda L: _z(L).round(),
    lambda L: _z(L) % 2,
    lambda L: L.fmod(_z(L), 2),
    lambda L: L.floor_divide(_z(L), 2),
    lambda L: L.tensor([1.0]).masked_fill(L.tensor([True]), 1j),
    lambda L: L.tensor([1]).masked_fill_(L.tensor([True]), L.tensor(1j)),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors(compare, case):
    compare(ERRORS[case])


def test_chalf_holds_half_precision_parts(lib, oracle):
    # NumPy has no half-precision complex type: tapegrad holds complex32 as float16 pairs,
    # rounded as torch rounds them (tests/test_conversions.py has the conversions' gradients)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch: "ComplexHalf support is experimental"
        for L in (lib, oracle):
            h = L.tensor([1.0001 + 0.1j, 65504.0 - 3.3j]).chalf()
            assert h.dtype is L.complex32 and h.element_size() == 4
        assert repr(lib.tensor([1.0001 + 0.1j, 65504.0 - 3.3j]).chalf().cdouble()) == repr(
            oracle.tensor([1.0001 + 0.1j, 65504.0 - 3.3j]).chalf().cdouble())


def test_in_place_on_real_and_imag_views_records_the_history(compare):
    def scenario(L):
        w = L.tensor([1 + 2j, 3 - 1j], dtype=L.complex128, requires_grad=True)
        z = w * 1
        z.real.mul_(2)
        z.imag.add_(L.tensor([1.0, 2.0], dtype=L.float64))
        z.abs().sum().backward()
        return z.detach(), w.grad, type(z.grad_fn).__name__

    compare(scenario)
