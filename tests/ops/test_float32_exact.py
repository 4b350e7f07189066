"""Ops whose float32 (and float64) results are torch's bit for bit, pinned on random inputs.

``float32_survey.py`` finds the ops that round differently from torch's kernels; the ones fixed
to compute as torch does are held here to exact equality of the bits, outputs and gradients, so
that a float32 training run stays on torch's trajectory.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from cpu_kernels import GRID_SAMPLE_ULPS, VECTORIZED, assert_fused, note

import tapegrad

DTYPES = [(np.float32, torch.float32), (np.float64, torch.float64)]


def _bits_equal(ours: tapegrad.Tensor, theirs: torch.Tensor) -> None:
    a = np.ascontiguousarray(ours.detach().numpy())
    b = np.ascontiguousarray(theirs.detach().numpy())
    assert a.dtype == b.dtype and a.shape == b.shape
    ints = np.int32 if a.dtype == np.float32 else np.int64
    same = (a.view(ints) == b.view(ints)) | (np.isnan(a) & np.isnan(b))  # -0.0 is not +0.0
    assert same.all(), f"{(~same).sum()} of {a.size} elements differ"


def _inputs(dtype: type, positive: bool, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((37, 29)) * 3).astype(dtype)
    if positive:
        x = np.abs(x) + dtype(0.01)
    return x, rng.standard_normal(x.shape).astype(dtype)


@pytest.mark.parametrize("np_dtype,torch_dtype", DTYPES, ids=["float32", "float64"])
@pytest.mark.parametrize("exponent", [2, 3, 3.0, -1, -2, -0.5, 4, 0, 1, 0.5])
def test_pow_scalar_exponent(exponent, np_dtype, torch_dtype):
    """torch multiplies (x*x, x*x*x, 1/(x*x)) or takes (r)sqrt for these exponents; the gradient
    is grad * (e * x^(e-1)) in that order. x ** 4 (pow itself, SLEEF's in torch) and sqrt's
    forward (MKL's vectorized sqrt beyond 16 elements) round differently: their gradients are
    pinned, not their outputs."""
    x, g = _inputs(np_dtype, positive=exponent in (0.5, -0.5))
    t = torch.from_numpy(x).requires_grad_()
    o = tapegrad.from_numpy(x).requires_grad_()
    yt, yo = t**exponent, o**exponent
    if exponent not in (4, 0.5):
        _bits_equal(yo, yt)
    (gt,) = torch.autograd.grad(yt, t, torch.from_numpy(g))
    (go,) = tapegrad.autograd.grad(yo, o, tapegrad.from_numpy(g))
    if exponent not in (-2, -0.5):  # their gradients need x ** -3 and x ** -1.5: pow itself
        _bits_equal(go, gt)


@pytest.mark.parametrize("np_dtype,torch_dtype", DTYPES, ids=["float32", "float64"])
def test_pow_methods_and_float_power(np_dtype, torch_dtype):
    x, _ = _inputs(np_dtype, positive=False, seed=1)
    t, o = torch.from_numpy(x), tapegrad.from_numpy(x)
    _bits_equal(o.pow(3), t.pow(3))
    _bits_equal(tapegrad.pow(o, -2), torch.pow(t, -2))
    _bits_equal(o.clone().pow_(3), t.clone().pow_(3))
    _bits_equal(tapegrad.float_power(o, 3), torch.float_power(t, 3))
    _bits_equal(tapegrad.square(o), torch.square(t))


def _grads(fn_t, fn_o, arrays, g):
    ts = [torch.from_numpy(a).requires_grad_() for a in arrays]
    os_ = [tapegrad.from_numpy(a).requires_grad_() for a in arrays]
    yt, yo = fn_t(*ts), fn_o(*os_)
    gt = torch.autograd.grad(yt, ts, torch.from_numpy(g))
    go = tapegrad.autograd.grad(yo, os_, tapegrad.from_numpy(g))
    return yt, yo, gt, go


def test_div_atan2_gradients_float32():
    """torch's orders: -grad * ((a / b) / b) for the divisor; grad * b * r and grad * -a * r with
    r = 1 / (a^2 + b^2) for atan2 (whose forward is libm's, not pinned)."""
    a, g = _inputs(np.float32, positive=False, seed=2)
    b, _ = _inputs(np.float32, positive=False, seed=3)
    yt, yo, gt, go = _grads(torch.div, tapegrad.div, [a, b], g)
    _bits_equal(yo, yt)
    for o, t in zip(go, gt, strict=True):
        _bits_equal(o, t)
    _, _, gt, go = _grads(torch.atan2, tapegrad.atan2, [a, b], g)
    for o, t in zip(go, gt, strict=True):
        _bits_equal(o, t)


@pytest.mark.parametrize("shape", [(37, 29), (101, 67)], ids=["small", "blas"])
@pytest.mark.parametrize("alpha", [0.3, -2, 1e-3])
def test_add_sub_alpha_fused_float32(alpha, shape):
    """torch's float32 a + alpha * b is one fused multiply-add (one rounding): through float64
    for small arrays, the BLAS's axpy (and float64 for its tail) for large ones."""
    rng = np.random.default_rng(4)
    a, b = (rng.standard_normal(shape).astype(np.float32) for _ in range(2))
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    oa, ob = tapegrad.from_numpy(a), tapegrad.from_numpy(b)
    prod = np.abs(alpha * b.astype(np.float64))  # (torch's scalar kernels round it first)
    pairs = [(tapegrad.add(oa, ob, alpha=alpha), torch.add(ta, tb, alpha=alpha), prod),
             (tapegrad.sub(oa, ob, alpha=alpha), torch.sub(ta, tb, alpha=alpha), prod),
             (oa.clone().add_(ob, alpha=alpha), ta.clone().add_(tb, alpha=alpha), prod),
             (tapegrad.add(oa, ob[0], alpha=alpha), torch.add(ta, tb[0], alpha=alpha),
              np.broadcast_to(prod[0], shape)),
             (tapegrad.add(oa.t(), ob.t(), alpha=alpha), torch.add(ta.t(), tb.t(), alpha=alpha),
              prod.T)]
    for ours, theirs, products in pairs:
        if VECTORIZED:
            _bits_equal(ours, theirs)
        else:
            assert_fused(ours.numpy(), theirs.numpy(), products)


@pytest.mark.parametrize("shape,b_shape", [
    ((37,), (1,)), ((47,), ()), ((53,), None), ((3, 17, 23), (1, 1, 1)), ((3, 17, 23), (3, 1, 1)),
    ((5, 45), (5, 1)), ((3, 5, 21), (1, 5, 1)), ((5, 45), (1, 45)), ((2010,), (1,))])
def test_add_sub_alpha_number_along_rows_float32(shape, b_shape):
    """b one number along torch's inner loop (a (1,) or 0-dim tensor, a Python number, or
    broadcast over the trailing dimensions): the vectorized loops fuse a + alpha * b, but the
    compiler's remainder loop adds the product it rounded once outside the loop, in a pattern
    of each row's last 32 elements that its length decides: torch's bits in every element."""
    rng = np.random.default_rng(len(shape) + shape[-1])
    for _ in range(8):
        a = rng.random(shape, dtype=np.float32)
        b = float(rng.random()) if b_shape is None else rng.random(b_shape, dtype=np.float32)
        ta, oa = torch.from_numpy(a), tapegrad.from_numpy(a)
        tb, ob = (b, b) if b_shape is None else (torch.from_numpy(b), tapegrad.from_numpy(b))
        for alpha, ours, theirs in [
                (0.37, oa.add(ob, alpha=0.37), ta.add(tb, alpha=0.37)),
                (1.7, oa.clone().sub_(ob, alpha=1.7), ta.clone().sub_(tb, alpha=1.7))]:
            if VECTORIZED:
                _bits_equal(ours, theirs)
            else:  # torch's scalar kernels round alpha * b before adding
                products = np.broadcast_to(np.abs(alpha * np.float64(b)), shape)
                assert_fused(ours.numpy(), theirs.numpy(), products)


def test_sigmoid_backward_formula_float32():
    """Given the same forward output y (torch's sigmoid itself is SLEEF's exp), the gradient
    rounds as torch's: grad * (1 - y) * y."""
    from tapegrad.ops.elementwise import _sigmoid_backward

    x, g = _inputs(np.float32, positive=False, seed=6)
    y = torch.sigmoid(torch.from_numpy(x))
    gt = torch.ops.aten.sigmoid_backward(torch.from_numpy(g), y)
    _bits_equal(_sigmoid_backward(tapegrad.from_numpy(g), tapegrad.from_numpy(y.numpy())), gt)


@pytest.mark.parametrize("np_dtype,torch_dtype", DTYPES, ids=["float32", "float64"])
@pytest.mark.parametrize("kw", [
    dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
    dict(kernel_size=3, stride=2, padding=1, count_include_pad=False),
    dict(kernel_size=3, stride=2, ceil_mode=True), dict(kernel_size=2, divisor_override=3),
    dict(kernel_size=(2, 3), stride=(3, 4)), dict(kernel_size=3, stride=1)],
    ids=["2x2", "pad", "exclude_pad", "ceil", "divisor", "gaps", "overlap"])
def test_avg_pool(kw, np_dtype, torch_dtype):
    """Each window summed from +0 in torch's order (row by row), then divided; the gradient of
    windows that do not overlap is 0 + g / div (overlapping windows add in another order: only
    their outputs are pinned). Some inputs and gradients are -0.0."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((3, 4, 11, 10)).astype(np_dtype)
    x[0, 0] = -0.0
    k, s = np.broadcast_arrays(kw["kernel_size"], kw.get("stride", kw["kernel_size"]))
    overlap = bool((s < k).any())
    for nd, avg_pool in ((2, "avg_pool2d"), (3, "avg_pool3d")):
        xs = x if nd == 2 else x[:, None]
        t = torch.from_numpy(xs).requires_grad_()
        o = tapegrad.from_numpy(xs).requires_grad_()
        # 3-D: the channels become the depth; a tuple gets a window of 1 along it
        kn = {key: (1,) + v if nd == 3 and isinstance(v, tuple) else v
              for key, v in kw.items()}
        yt = getattr(torch.nn.functional, avg_pool)(t, **kn)
        yo = getattr(tapegrad.nn.functional, avg_pool)(o, **kn)
        _bits_equal(yo, yt)
        g = rng.standard_normal(tuple(yt.shape)).astype(np_dtype)
        g.reshape(-1)[:7] = -0.0
        (gt,) = torch.autograd.grad(yt, t, torch.from_numpy(g))
        (go,) = tapegrad.autograd.grad(yo, o, tapegrad.from_numpy(g))
        if not overlap:
            _bits_equal(go, gt)


@pytest.mark.parametrize("name", ["ceil", "floor", "round", "trunc", "sign", "clamp",
                                  "clamp_min", "clamp_max", "copysign"])
def test_zero_gradients_are_positive_zeros(name):
    """Where a derivative is 0, torch's gradient is +0.0 (zeros, or where(mask, grad, 0)), never
    grad * 0, which is -0.0 for a negative grad and prints as -0."""
    x, g = _inputs(np.float32, positive=False, seed=7)
    y, _ = _inputs(np.float32, positive=False, seed=8)
    args = {"clamp": lambda m: (m.clamp(-1.0, 1.0),), "clamp_min": lambda m: (m.clamp_min(0.5),),
            "clamp_max": lambda m: (m.clamp_max(0.5),)}
    if name == "copysign":
        _, _, gt, go = _grads(torch.copysign, tapegrad.copysign, [x, y], g)
    else:
        def run(mod, t):
            return args[name](t)[0] if name in args else getattr(mod, name)(t)

        _, _, gt, go = _grads(lambda t: run(torch, t), lambda t: run(tapegrad, t), [x], g)
    for o, t in zip(go, gt, strict=True):
        _bits_equal(o, t)


@pytest.mark.parametrize("value", [1, 0.7])
@pytest.mark.parametrize("name", ["addcmul", "addcdiv"])
def test_addcmul_addcdiv_float32(name, value):
    """addcmul: a + (value * t1) * t2 with one fused rounding; gradients grad * (t2 * value),
    grad * (value / t2), -grad * (value * t1 / (t2 * t2)) in torch's orders."""
    arrays = [_inputs(np.float32, positive=False, seed=s)[0] for s in (9, 10, 11)]
    g = _inputs(np.float32, positive=False, seed=12)[1]
    yt, yo, gt, go = _grads(lambda a, b, c: getattr(torch, name)(a, b, c, value=value),
                            lambda a, b, c: getattr(tapegrad, name)(a, b, c, value=value),
                            arrays, g)
    if VECTORIZED or name == "addcdiv":
        _bits_equal(yo, yt)
    else:  # torch's scalar kernels round value * t1 * t2 before adding
        a, t1, t2 = (x.astype(np.float64) for x in arrays)
        assert_fused(yo.detach().numpy(), yt.detach().numpy(), np.abs(value * t1 * t2))
    for o, t in zip(go, gt, strict=True):
        _bits_equal(o, t)


@pytest.mark.parametrize("dim", [0, 1])
def test_cumsum_cumprod_accumulate_in_double(dim):
    """torch's CPU cumsum and cumprod keep float32 running totals in double precision."""
    x, g = _inputs(np.float32, positive=False, seed=13)
    yt, yo, gt, go = _grads(lambda t: torch.cumsum(t, dim), lambda t: tapegrad.cumsum(t, dim),
                            [x], g)
    _bits_equal(yo, yt)
    _bits_equal(go[0], gt[0])
    small = (x[:, :12] * np.float32(0.5)).copy()
    _bits_equal(tapegrad.cumprod(tapegrad.from_numpy(small), dim),
                torch.cumprod(torch.from_numpy(small), dim))


def test_reciprocal_and_tensor_pow_gradients_float32():
    """-grad * (y * y) for 1/x; grad * (b * a^(b-1)) for a ** b, where a ** (b - 1) is
    exact (torch's tensor pow is SLEEF's: small integers a and b here)."""
    x, g = _inputs(np.float32, positive=True, seed=14)
    _, _, gt, go = _grads(torch.reciprocal, tapegrad.reciprocal, [x], g)
    _bits_equal(go[0], gt[0])
    rng = np.random.default_rng(15)
    a = rng.integers(1, 50, x.shape).astype(np.float32)
    e = rng.integers(1, 4, x.shape).astype(np.float32)
    t, o = torch.from_numpy(a).requires_grad_(), tapegrad.from_numpy(a).requires_grad_()
    (gt,) = torch.autograd.grad(torch.pow(t, torch.from_numpy(e)), t, torch.from_numpy(g))
    (go,) = tapegrad.autograd.grad(tapegrad.pow(o, tapegrad.from_numpy(e)), o,
                                   tapegrad.from_numpy(g))
    _bits_equal(go, gt)


@pytest.mark.parametrize("ta,tb", [(0, 0), (0, 1), (1, 0), (1, 1)])
def test_tiny_float32_products(ta, tb):
    """torch adds a tiny product's k <= 3 terms one by one, each rounded (no fused
    multiply-adds), in every layout: the forward, and the gradients (products with inner
    dimensions n and m) where those are tiny too."""
    rng = np.random.default_rng(3)
    for m, k, n in [(3, 3, 2), (1, 2, 8), (8, 3, 8), (5, 1, 4), (2, 3, 3), (3, 1, 2)]:
        a = rng.standard_normal((m, k)).astype(np.float32)
        b = rng.standard_normal((k, n)).astype(np.float32)
        g = rng.standard_normal((m, n)).astype(np.float32)
        res = []
        for lib in (tapegrad, torch):
            x = lib.tensor(a.T.copy()).t() if ta else lib.tensor(a)
            y = lib.tensor(b.T.copy()).t() if tb else lib.tensor(b)
            x.requires_grad_()
            y.requires_grad_()
            out = lib.mm(x, y)
            ga, gb = lib.autograd.grad(out, (x, y), lib.tensor(g))
            res.append((out,) + ((ga,) if n <= 3 else ()) + ((gb,) if m <= 3 else ()))
        for ours, theirs in zip(*res, strict=True):
            _bits_equal(ours, theirs)


@pytest.mark.parametrize("n", [5, 9, 31, 100, 511])
def test_zero_dim_operand_gradient_total_float32(n):
    """A 0-d operand's gradient is the total of the broadcast one, added in torch's order."""
    rng = np.random.default_rng(n)
    x = (rng.standard_normal(n) * 100).astype(np.float32)
    s = np.float32(rng.standard_normal())
    g = rng.standard_normal(n).astype(np.float32)
    res = []
    for lib in (tapegrad, torch):
        d = lib.tensor(s, requires_grad=True)
        res.append(lib.autograd.grad(lib.tensor(x) / d, d, lib.tensor(g))[0])
    _bits_equal(*res)


def test_cov_aweights_gradient_float32():
    """cov with observation weights: the weights' gradient (exactly 0) is torch's rounding."""
    rng = np.random.default_rng(24)
    x = (rng.standard_normal((3, 2)) * 5).astype(np.float32)
    w = rng.uniform(0.1, 1, 2).astype(np.float32)
    g = rng.standard_normal((3, 3)).astype(np.float32)
    res = []
    for lib in (tapegrad, torch):
        xt, wt = lib.tensor(x, requires_grad=True), lib.tensor(w, requires_grad=True)
        res.append(lib.autograd.grad(lib.cov(xt, aweights=wt), (xt, wt), lib.tensor(g)))
    for ours, theirs in zip(*res, strict=True):
        _bits_equal(ours, theirs)


@pytest.mark.parametrize("shapes", [((10,), (5, 5, 10, 5)), ((5, 5, 10, 5), (5,)),
                                    ((4, 7, 3), (3,)), ((33,), (2, 33, 6))])
def test_matmul_vector_gradient_float32(shapes):
    """A vector against a batch folds into one mv (of the batch's transpose on the left); the
    vector's gradient is mv of the folded matrix's transpose, a column-major gemv that torch
    sums column after column: y = y + a[:, j] * g[j]."""
    rng = np.random.default_rng(3)
    xa, xb = (rng.standard_normal(s).astype(np.float32) for s in shapes)
    ta, tb = (torch.from_numpy(x).requires_grad_() for x in (xa, xb))
    oa, ob = (tapegrad.from_numpy(x).requires_grad_() for x in (xa, xb))
    yt, yo = ta @ tb, oa @ ob
    g = rng.standard_normal(tuple(yt.shape)).astype(np.float32)
    gt = torch.autograd.grad(yt, (ta, tb), torch.from_numpy(g))
    go = tapegrad.autograd.grad(yo, (oa, ob), tapegrad.from_numpy(g))
    vec = 0 if len(shapes[0]) == 1 else 1
    _bits_equal(go[vec], gt[vec])
    _bits_equal(go[1 - vec], gt[1 - vec])  # the outer product g v^T: one rounding each


def test_mv_column_major_float32():
    rng = np.random.default_rng(4)
    a = rng.standard_normal((200, 30)).astype(np.float32)
    v = rng.standard_normal(200).astype(np.float32)
    _bits_equal(tapegrad.from_numpy(a).t().mv(tapegrad.from_numpy(v)),
                torch.from_numpy(a).t().mv(torch.from_numpy(v)))


@pytest.mark.parametrize("layout", ["nn", "tn", "nt", "tt"])
def test_small_mm_float32(layout):
    """Products of small float32 matrices (every side 2 to 7) add the k terms in order, as
    torch's do; a row-major @ column-major pair with k >= 4 (torch sums those otherwise) is not
    pinned."""
    rng = np.random.default_rng(5)
    for m, k, n in [(2, 4, 3), (4, 3, 5), (7, 7, 7), (3, 2, 6), (5, 3, 2), (6, 5, 4)]:
        if layout == "nt" and k >= 4:
            continue
        a = rng.standard_normal((m, k) if layout[0] == "n" else (k, m)).astype(np.float32)
        b = rng.standard_normal((k, n) if layout[1] == "n" else (n, k)).astype(np.float32)
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        oa, ob = tapegrad.from_numpy(a), tapegrad.from_numpy(b)
        if layout[0] == "t":
            ta, oa = ta.t(), oa.t()
        if layout[1] == "t":
            tb, ob = tb.t(), ob.t()
        _bits_equal(oa.mm(ob), ta.mm(tb))


def test_multi_dot_gradients_float32():
    """A chain of five small matrices: the products in the matrix-chain order, and their
    gradients through the same mm's, bit for bit."""
    rng = np.random.default_rng(6)
    shapes = [(2, 4), (4, 3), (3, 5), (5, 3), (3, 2)]
    xs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    ts = [torch.from_numpy(x).requires_grad_() for x in xs]
    os_ = [tapegrad.from_numpy(x).requires_grad_() for x in xs]
    yt, yo = torch.linalg.multi_dot(ts), tapegrad.linalg.multi_dot(os_)
    _bits_equal(yo, yt)
    g = rng.standard_normal((2, 2)).astype(np.float32)
    gt = torch.autograd.grad(yt, ts, torch.from_numpy(g))
    go = tapegrad.autograd.grad(yo, os_, tapegrad.from_numpy(g))
    for i in range(5):
        _bits_equal(go[i], gt[i])


@pytest.mark.parametrize("np_dtype,torch_dtype", DTYPES, ids=["float32", "float64"])
def test_linspace_fused_steps(np_dtype, torch_dtype):
    """linspace: start + step * i for the first half, end - step * (n - 1 - i) for the second,
    each one fused multiply-add (a fifth of the values differed with two roundings)."""
    rng = np.random.default_rng(0)
    for _ in range(300):
        a, b = (float(v) for v in rng.standard_normal(2) * 10.0 ** rng.integers(-3, 3))
        n = int(rng.integers(1, 120))
        ours = tapegrad.linspace(a, b, n, dtype=getattr(tapegrad, torch_dtype.__str__()[6:]))
        theirs = torch.linspace(a, b, n, dtype=torch_dtype)
        if VECTORIZED or n == 1:
            _bits_equal(ours, theirs)
        else:  # torch's scalar kernel rounds step * i (or step * (n - 1 - i)) before adding
            i, step = np.arange(n), (b - a) / (n - 1)
            products = np.abs(step * np.where(i < n // 2, i, n - 1 - i))
            assert_fused(ours.numpy(), theirs.numpy(), products)


@pytest.mark.parametrize("np_dtype,torch_dtype", DTYPES, ids=["float32", "float64"])
@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding", ["zeros", "border"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_2d_vectorized_kernel(np_dtype, torch_dtype, mode, padding, align_corners):
    """2-D grid_sample as torch's vectorized kernel: the position (g + 1) size/2 - 0.5 fused,
    the bilinear terms fused in after the first; nearest on grids full of half-way ties."""
    rng = np.random.default_rng(0)
    inp = (rng.random((2, 3, 13, 17)) * 255).astype(np_dtype)
    grid = (rng.random((2, 11, 19, 2)) * 2.4 - 1.2).astype(np_dtype)
    if mode == "nearest":
        grid = (np.round(grid * 16) / 16).astype(np_dtype)
    kw = dict(mode=mode, padding_mode=padding, align_corners=align_corners)
    ours = tapegrad.nn.functional.grid_sample(tapegrad.tensor(inp), tapegrad.tensor(grid), **kw)
    theirs = torch.nn.functional.grid_sample(torch.from_numpy(inp), torch.from_numpy(grid), **kw)
    if VECTORIZED or mode == "nearest":
        _bits_equal(ours, theirs)
    else:
        # torch's scalar kernel rounds the position and the bilinear terms twice
        # (cpu_kernels.GRID_SAMPLE_ULPS: units of the largest |input|)
        eps = float(np.finfo(np_dtype).eps)
        bound = GRID_SAMPLE_ULPS * eps * float(np.abs(inp).max())
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=0, atol=bound,
                                   err_msg=f"grid_sample ({note()}: positions rounded twice)")
