"""nn.init compared with torch: after the same ``manual_seed`` (or ``generator=``) every
initialiser gives torch's values bit for bit (``np.array_equal``), except ``orthogonal_``, whose
QR is NumPy's LAPACK (checked to a few float32 ulps). Also calculate_gain, fans, errors,
warnings and the deprecated aliases.
"""

from __future__ import annotations

import numpy as np
import pytest
from cpu_kernels import assert_draws
from torchcompare import raised, to_numpy

SHAPES = [(3, 5), (16, 4), (7, 3, 2), (33, 17), (6, 4, 3, 3), (2, 1)]
DTYPES = ["float32", "float64"]

INITS = [
    ("uniform_", lambda L, t, g: L.nn.init.uniform_(t, -0.3, 0.7, generator=g)),
    ("uniform_-default", lambda L, t, g: L.nn.init.uniform_(t, generator=g)),
    ("normal_", lambda L, t, g: L.nn.init.normal_(t, 0.5, 2.0, generator=g)),
    ("xavier_uniform_", lambda L, t, g: L.nn.init.xavier_uniform_(t, generator=g)),
    ("xavier_uniform_-gain", lambda L, t, g: L.nn.init.xavier_uniform_(
        t, gain=L.nn.init.calculate_gain("relu"), generator=g)),
    ("xavier_normal_", lambda L, t, g: L.nn.init.xavier_normal_(t, gain=0.5, generator=g)),
    ("kaiming_uniform_", lambda L, t, g: L.nn.init.kaiming_uniform_(t, generator=g)),
    ("kaiming_uniform_-a", lambda L, t, g: L.nn.init.kaiming_uniform_(
        t, a=5 ** 0.5, generator=g)),
    ("kaiming_uniform_-relu-out", lambda L, t, g: L.nn.init.kaiming_uniform_(
        t, mode="fan_out", nonlinearity="relu", generator=g)),
    ("kaiming_normal_", lambda L, t, g: L.nn.init.kaiming_normal_(t, generator=g)),
    ("kaiming_normal_-tanh", lambda L, t, g: L.nn.init.kaiming_normal_(
        t, mode="fan_out", nonlinearity="tanh", generator=g)),
    ("trunc_normal_", lambda L, t, g: L.nn.init.trunc_normal_(t, generator=g)),
    ("trunc_normal_-narrow", lambda L, t, g: L.nn.init.trunc_normal_(
        t, std=0.02, a=-0.04, b=0.04, generator=g)),
    ("trunc_normal_-tail", lambda L, t, g: L.nn.init.trunc_normal_(
        t, mean=0.0, std=1.0, a=1.0, b=3.0, generator=g)),
    ("trunc_normal_-offset", lambda L, t, g: L.nn.init.trunc_normal_(
        t, mean=0.5, std=0.5, a=-0.2, b=0.1, generator=g)),
    ("constant_", lambda L, t, g: L.nn.init.constant_(t, 0.3)),
    ("ones_", lambda L, t, g: L.nn.init.ones_(t)),
    ("zeros_", lambda L, t, g: L.nn.init.zeros_(t)),
]


def _ulps(name):
    """The bound on the draws' last bits under torch's scalar kernels (tests/cpu_kernels.py):
    trunc_normal_ takes erfinv of a uniform draw, whose slope (up to ~10 near the truncation
    bounds) multiplies a last-bit difference of the draw."""
    return 64 if name.startswith("trunc_normal_") else 4


def _ids(items):
    return [name for name, _ in items]


def run_init(L, fn, shape, dtype, use_generator, transposed=False):
    L.manual_seed(11)
    g = L.Generator().manual_seed(5) if use_generator else None
    t = L.empty(shape, dtype=getattr(L, dtype))
    if transposed:
        t = t.t()
    p = L.nn.Parameter(t) if not transposed else t
    out = fn(L, p, g)
    return to_numpy(out), to_numpy(L.rand(2)), out is p, p.requires_grad


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name,fn", INITS, ids=_ids(INITS))
def test_init_bit_equal(lib, oracle, name, fn, shape, dtype):
    want = run_init(oracle, fn, shape, dtype, False)
    got = run_init(lib, fn, shape, dtype, False)
    assert got[0].dtype == want[0].dtype and got[0].shape == want[0].shape
    assert_draws(got[0], want[0], ulps=_ulps(name))
    assert np.array_equal(got[1], want[1]), "the generator is left in a different state"
    assert got[2:] == want[2:]


@pytest.mark.parametrize("name,fn", INITS, ids=_ids(INITS))
def test_init_with_generator(lib, oracle, name, fn):
    want = run_init(oracle, fn, (9, 4), "float32", True)
    got = run_init(lib, fn, (9, 4), "float32", True)
    assert_draws(got[0], want[0], ulps=_ulps(name))
    assert np.array_equal(got[1], want[1])


@pytest.mark.parametrize("name,fn", [i for i in INITS if "normal" in i[0] or "uniform" in i[0]],
                         ids=_ids([i for i in INITS if "normal" in i[0] or "uniform" in i[0]]))
def test_init_non_contiguous_destination(lib, oracle, name, fn):
    """A transposed view is filled in memory order, as torch fills it."""
    for shape in [(3, 5), (20, 6)]:
        want = run_init(oracle, fn, shape, "float32", False, transposed=True)
        got = run_init(lib, fn, shape, "float32", False, transposed=True)
        assert_draws(got[0], want[0])
        assert np.array_equal(got[1], want[1])


def test_trunc_normal_values_stay_in_range(lib):
    lib.manual_seed(0)
    t = lib.nn.init.trunc_normal_(lib.empty(2000), mean=0.0, std=1.0, a=-0.5, b=0.5)
    v = to_numpy(t)
    assert v.min() >= -0.5 and v.max() <= 0.5
    assert abs(v.mean()) < 0.05


def test_trunc_normal_warning(compare):
    def scenario(L):
        L.manual_seed(0)
        return L.nn.init.trunc_normal_(L.empty(5), mean=10.0, std=1.0, a=-2.0, b=2.0)

    compare(scenario)


def test_eye_and_dirac(compare):
    def scenario(L):
        w = L.nn.Parameter(L.empty(3, 5))
        L.nn.init.eye_(w)
        c = L.empty(4, 2, 3, 3)
        L.nn.init.dirac_(c, groups=2)
        c1 = L.nn.init.dirac_(L.empty(2, 2, 3))
        c3 = L.nn.init.dirac_(L.empty(2, 3, 1, 3, 3))
        return (w, c, c1, c3, raised(L.nn.init.eye_, L.empty(2)),
                raised(L.nn.init.dirac_, L.empty(2, 2)),
                raised(L.nn.init.dirac_, L.empty(3, 1, 2), groups=2))

    compare(scenario)


@pytest.mark.parametrize("shape", [(4, 4), (3, 7), (8, 3), (6, 2, 3, 3), (40, 20)], ids=str)
@pytest.mark.parametrize("dtype", DTYPES)
def test_orthogonal_close_to_torch(lib, oracle, shape, dtype):
    """Same normal draws; QR differs from torch's LAPACK only by rounding."""

    def run(L):
        L.manual_seed(3)
        w = L.nn.Parameter(L.empty(shape, dtype=getattr(L, dtype)))
        L.nn.init.orthogonal_(w, gain=2.0)
        return to_numpy(w), to_numpy(L.rand(2))

    (gw, gn), (tw, tn) = run(lib), run(oracle)
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(gw, tw, rtol=tol, atol=tol)
    assert np.array_equal(gn, tn)
    flat = gw.reshape(shape[0], -1).astype(np.float64) / 2.0
    gram = flat @ flat.T if shape[0] <= flat.shape[1] else flat.T @ flat
    np.testing.assert_allclose(gram, np.eye(gram.shape[0]), atol=1e-5)


def test_sparse_bit_equal(lib, oracle):
    def run(L):
        L.manual_seed(2)
        w = L.empty(10, 4)
        L.nn.init.sparse_(w, sparsity=0.3, std=0.1)
        return to_numpy(w)

    assert_draws(run(lib), run(oracle))


def test_calculate_gain(compare):
    def scenario(L):
        g = L.nn.init.calculate_gain
        names = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose2d", "sigmoid", "tanh",
                 "relu", "leaky_relu", "selu"]
        return ([g(n) for n in names], g("leaky_relu", 0.2), g("leaky_relu", 3),
                raised(g, "leaky_relu", True), raised(g, "leaky_relu", "x"), raised(g, "foo"))

    compare(scenario)


def test_fans_and_errors(compare):
    def scenario(L):
        f = L.nn.init._calculate_fan_in_and_fan_out
        return (f(L.empty(3, 5)), f(L.empty(6, 4, 3, 2)), raised(f, L.empty(3)),
                raised(L.nn.init.kaiming_uniform_, L.empty(3, 2), mode="fan_avg"),
                raised(L.nn.init.kaiming_normal_, L.empty(3, 2), nonlinearity="swish"),
                raised(L.nn.init.xavier_uniform_, L.empty(4)),
                raised(L.nn.init.orthogonal_, L.empty(4)))

    compare(scenario)


def test_zero_element_warning_and_no_grad(compare):
    def scenario(L):
        w = L.nn.Parameter(L.empty(0, 3))
        a = L.nn.init.kaiming_uniform_(w)
        b = L.nn.init.kaiming_normal_(L.empty(3, 0))
        p = L.nn.Parameter(L.ones(2, 2))
        L.nn.init.constant_(p, 2.0)
        return a is w, tuple(b.shape), p, p.grad_fn, p.is_leaf

    compare(scenario)


def test_deprecated_aliases(compare):
    def scenario(L):
        L.manual_seed(0)
        a = L.nn.init.uniform(L.empty(2, 3))
        b = L.nn.init.xavier_normal(L.empty(2, 3))
        c = L.nn.init.constant(L.empty(2), 1.5)
        return a, b, c, L.nn.init.kaiming_uniform.__name__

    compare(scenario)


def test_init_returns_input_and_keeps_version_semantics(compare):
    def scenario(L):
        p = L.nn.Parameter(L.empty(3, 3))
        out = L.nn.init.normal_(p)
        v = p._version
        L.nn.init.zeros_(p)
        return out is p, v > 0, p._version > v, p.requires_grad

    compare(scenario)
