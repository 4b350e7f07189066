"""The value corners and error texts of issue 33, each against the live torch.

Every scenario runs on torch and on the library under test (the ``compare`` fixture: values,
dtypes, grad_fn names, exception types and messages, warnings). ``test_boundaries.py`` sweeps
the same kind of corner over every elementwise OpInfo entry; these are the cases a user met,
kept by name, and their neighbours in ``test_torch.py`` / ``test_type_promotion.py`` (integer
division, remainder and conversions).
"""

from __future__ import annotations

import pytest

INT_DTYPES = ("int8", "int16", "int32", "int64", "uint8")


def _grads(L, fn, *values, dtype="float64", cotangent=None):
    xs = [L.tensor(v, dtype=getattr(L, dtype), requires_grad=True) for v in values]
    out = fn(L, *xs)
    g = L.ones_like(out) if cotangent is None else L.tensor(cotangent, dtype=getattr(L, dtype))
    return out, L.autograd.grad(out, xs, g, allow_unused=True)


# --------------------------------------------------------------------------------------------
# Gradients at kinks and zeros
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_hardswish_gradient_at_the_kinks(compare, dtype):
    # the flat side's slope at exactly -3 and 3 (0 and 1), x/3 + 1/2 between
    compare(lambda L: _grads(L, lambda L, x: L.nn.functional.hardswish(x),
                             [-3.5, -3.0, -2.999, 0.0, 2.999, 3.0, 3.5], dtype=dtype))


def test_atan2_gradient_at_the_origin(compare):
    for ys, xs, g in (([0.0, -0.0, 0.0, -0.0], [0.0, 0.0, -0.0, -0.0], [1.0, 1.0, -1.0, -1.0]),
                      ([1.0], [2.0], [1.0])):
        compare(lambda L, ys=ys, xs=xs, g=g: _grads(L, lambda L, y, x: L.atan2(y, x), ys, xs,
                                                    cotangent=g))


def test_atan2_second_derivative_at_the_origin_is_nan(compare):
    def scenario(L):
        y = L.tensor([0.0, 1.0], dtype=L.float64, requires_grad=True)
        x = L.tensor([0.0, 2.0], dtype=L.float64, requires_grad=True)
        gy, gx = L.autograd.grad(L.atan2(y, x).sum(), (y, x), create_graph=True)
        return gy, gx, L.autograd.grad((gy + gx).sum(), (y, x))

    compare(scenario)


def test_pow_gradients_at_a_zero_base(compare):
    # 0 ** y: flat (gradient 0) for y >= 0, -inf for y < 0; a tensor base and a number base
    compare(lambda L: _grads(L, lambda L, e: L.pow(0.0, e), [0.0, 1.0, -1.0, 2.0],
                             cotangent=[1.0, -1.0, 1.0, -1.0]))
    compare(lambda L: _grads(L, lambda L, b, e: L.pow(b, e), [0.0, 0.0, 0.0, 2.0],
                             [0.0, 1.0, -1.0, 0.0]))
    compare(lambda L: _grads(L, lambda L, b: L.pow(b, 0.0), [0.0, 1.0]))
    compare(lambda L: _grads(L, lambda L, e: L.pow(-2.0, e), [0.0, 1.0], dtype="float32"))


@pytest.mark.parametrize("name", ["elu", "celu", "selu"])
def test_elu_family_second_derivative_at_zero(compare, name):
    def scenario(L):
        x = L.tensor([0.0, -0.0, -1.0, 1.0], dtype=L.float64, requires_grad=True)
        (g,) = L.autograd.grad(getattr(L.nn.functional, name)(x).sum(), x, create_graph=True)
        return g.detach(), L.autograd.grad(g.sum(), x)

    compare(scenario)


@pytest.mark.parametrize("case", ["copysign", "sinc", "fmod", "remainder", "logit", "logit_eps",
                                  "nextafter"])
def test_gradients_where_the_formula_divides_by_zero(compare, case):
    fns = {
        "copysign": (lambda L, a, b: L.copysign(a, b), 2),
        "sinc": (lambda L, a: L.sinc(a), 1),
        "fmod": (lambda L, a, b: L.fmod(a, b), 2),
        "remainder": (lambda L, a, b: L.remainder(a, b), 2),
        "logit": (lambda L, a: L.logit(a), 1),
        "logit_eps": (lambda L, a: L.logit(a, eps=0.25), 1),
        "nextafter": (lambda L, a, b: L.nextafter(a, b), 2),
    }
    fn, n = fns[case]
    points = [0.0, -0.0, 1.0, -1.0, 2.0, 0.25]

    def scenario(L):
        import itertools

        combos = list(itertools.product(points, repeat=n))
        xs = [L.tensor([c[i] for c in combos], dtype=L.float64, requires_grad=True)
              for i in range(n)]
        out = fn(L, *xs)  # (cotangents of ones, not a sum: the values hold inf and -inf)
        grads = L.autograd.grad(out, xs, L.ones_like(out), create_graph=True)
        second = [g for g in grads if g.requires_grad]
        return [g.detach() for g in grads], (
            L.autograd.grad(second, xs, [L.ones_like(g) for g in second], allow_unused=True)
            if second else None)

    compare(scenario)


def test_prelu_second_derivatives_at_zero(compare):
    def scenario(L):
        x = L.tensor([0.0, -0.0, 1.0, -1.0], dtype=L.float64, requires_grad=True)
        w = L.tensor(0.25, dtype=L.float64, requires_grad=True)
        gx, gw = L.autograd.grad(L.nn.functional.prelu(x, w), (x, w),
                                 L.tensor([1.0, 2.0, 3.0, 4.0], dtype=L.float64),
                                 create_graph=True)
        return gx, gw, L.autograd.grad(gx.sum() + gw * 3, (x, w))

    compare(scenario)


# --------------------------------------------------------------------------------------------
# Integer division, remainder and powers (test_torch.py / test_type_promotion.py's cases)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("op", ["%", "//", "remainder", "fmod", "floor", "trunc", "rremainder",
                                "remainder_", "fmod_"])
def test_integer_division_by_zero_raises(compare, op, dtype):
    calls = {
        "%": lambda L, a, b: a % b,
        "//": lambda L, a, b: a // b,
        "remainder": lambda L, a, b: L.remainder(a, b),
        "fmod": lambda L, a, b: L.fmod(a, b),
        "floor": lambda L, a, b: L.div(a, b, rounding_mode="floor"),
        "trunc": lambda L, a, b: L.div(a, b, rounding_mode="trunc"),
        "rremainder": lambda L, a, b: L.remainder(5, b) if isinstance(b, L.Tensor) else 5 % b,
        "remainder_": lambda L, a, b: a.clone().remainder_(b),
        "fmod_": lambda L, a, b: a.clone().fmod_(b),
    }
    fn = calls[op]

    def scenario(L):
        d = getattr(L, dtype)
        a = L.tensor([5, 7, 0], dtype=d)
        return [L_raised(L, fn, a, b) for b in (0, L.tensor([1, 0, 2], dtype=d),
                                                L.tensor(0, dtype=d), L.tensor(3, dtype=d))]

    compare(scenario)


def L_raised(L, fn, *args):
    try:
        return fn(L, *args)
    except Exception as e:  # noqa: BLE001 - the record compares type and message
        return e


def test_integer_division_by_zero_of_nothing_is_nothing(compare):
    compare(lambda L: [L.tensor([], dtype=L.int64) % 0, L.tensor([], dtype=L.int64) // 0,
                       L.fmod(L.tensor([], dtype=L.int64), 0),
                       L.div(L.tensor([], dtype=L.int64), 0, rounding_mode="trunc"),
                       L.tensor(3) % L.tensor([], dtype=L.int64)])


@pytest.mark.parametrize("op", ["%", "//", "fmod", "floor", "trunc"])
def test_bool_division_is_not_implemented(compare, op):
    calls = {"%": lambda L, a: a % a, "//": lambda L, a: a // a,
             "fmod": lambda L, a: L.fmod(a, a),
             "floor": lambda L, a: L.div(a, a, rounding_mode="floor"),
             "trunc": lambda L, a: L.div(a, a, rounding_mode="trunc")}
    compare(lambda L: calls[op](L, L.tensor([True, False])))


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_integer_division_rounding_and_signs(compare, dtype):
    # every sign combination, C's truncation and Python's floor, and the extremes
    def scenario(L):
        import itertools

        d = getattr(L, dtype)
        info = L.iinfo(d)
        values = sorted({v for v in (0, 1, 2, 3, 7, -1, -2, -3, -7, info.max, info.min + 1)
                         if info.min <= v <= info.max})
        divisors = [v for v in values if v != 0]
        pairs = list(itertools.product(values, divisors))
        a = L.tensor([p for p, _ in pairs], dtype=d)
        b = L.tensor([q for _, q in pairs], dtype=d)
        return (a // b, a % b, L.fmod(a, b), L.div(a, b, rounding_mode="trunc"),
                L.div(a, b, rounding_mode="floor"), L.remainder(a, 3), L.fmod(a, -3),
                a // 2, L.div(a, b))

    compare(scenario)


def test_int64_trunc_division_keeps_every_bit(compare):
    # a float quotient cannot hold 2^62 + 1
    compare(lambda L: L.div(L.tensor([2**62 + 1, -(2**62) - 1, 2**63 - 1]),
                            L.tensor([3, 3, 7]), rounding_mode="trunc"))


def test_integer_extremes_of_floor_division_and_remainder(compare):
    compare(lambda L: [L.tensor([-(2**63)]) // -1, L.tensor([-(2**63)]) % -1,
                       L.fmod(L.tensor([-(2**63)]), -1),
                       L.tensor([-128], dtype=L.int8) // -1])


def test_integer_powers_with_negative_exponents(compare):
    compare(lambda L: [L.pow(L.tensor([0, 1, -1, 2, -1]), L.tensor([-1, -1, -1, -1, -2])),
                       L.pow(L.tensor([0, 1, -1, 2]), L.tensor(-3)),
                       L.pow(2, L.tensor([-1, 3])), 1 ** L.tensor([-5]),
                       L.pow(-1, L.tensor([-1, -2], dtype=L.int8)),
                       L_raised(L, lambda L: L.pow(L.tensor([2, 3]), -1))])


def test_gcd_lcm_heaviside_isclose_at_integer_extremes(compare):
    def scenario(L):
        import itertools

        out = []
        for dtype in ("int8", "int64"):
            d = getattr(L, dtype)
            info = L.iinfo(d)
            values = [0, 1, -1, 2, -2, 12, 18, info.min, info.max, info.min + 1, info.max - 1]
            pairs = list(itertools.product(values, repeat=2))
            a = L.tensor([p for p, _ in pairs], dtype=d)
            b = L.tensor([q for _, q in pairs], dtype=d)
            small = (a.abs() < 20) & (b.abs() < 20)  # (lcm of the extremes faults in torch)
            out += [L.gcd(a, b), L.lcm(a[small], b[small]), L.heaviside(a, b),
                    L.isclose(a, b), L.isclose(a, b, rtol=0.5, atol=2)]
        return out

    compare(scenario)


# --------------------------------------------------------------------------------------------
# Conversions and construction
# --------------------------------------------------------------------------------------------


def test_tensor_of_tensors(compare):
    compare(lambda L: [L_raised(L, lambda L: L.tensor([L.ones(2), L.ones(2)])),
                       L_raised(L, lambda L: L.tensor((L.ones(2), L.ones(2)))),
                       L_raised(L, lambda L: L.tensor([[L.ones(2)]])),
                       L_raised(L, lambda L: L.tensor([L.zeros(0)])),
                       L.tensor([L.ones(1), L.ones(1, 1)]), L.tensor([L.ones(1), 2]),
                       L.tensor([L.tensor(1, dtype=L.int8), L.tensor(2, dtype=L.int8)]),
                       L.tensor([L.tensor(1.5, dtype=L.float64), 2]),
                       L.tensor([L.tensor(1, dtype=L.uint8), L.tensor(1, dtype=L.int8)]),
                       L.tensor([L.tensor(1.0, dtype=L.float16), 1]),
                       L.tensor([L.tensor(1, dtype=L.int8), 2j]),
                       L_raised(L, lambda L: L.as_tensor([L.ones(2), L.ones(2)]))])


def test_tensor_of_numpy_values(compare):
    import numpy as np

    compare(lambda L: [L.tensor([np.float64(1.5), 1]), L.tensor([np.int32(1)]),
                       L.tensor([np.int32(1), 2]), L.tensor([np.float32(1.5)]),
                       L.tensor([np.array([1, 2], dtype=np.int8)]),
                       L.tensor([np.array([1, 2], dtype=np.int8), [3, 4]])])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("fn", ["erf", "gelu", "mvlgamma"])
def test_zero_dimensional_floats(compare, fn, dtype):
    calls = {"erf": lambda L, x: L.erf(x), "gelu": lambda L, x: L.nn.functional.gelu(x),
             "mvlgamma": lambda L, x: L.mvlgamma(x, 2)}

    def scenario(L):
        x = L.tensor(1.5, dtype=getattr(L, dtype), requires_grad=True)
        y = calls[fn](L, x)
        return y, L.autograd.grad(y, x)

    compare(scenario)


def test_mvlgamma_below_its_domain(compare):
    # torch 2.13 no longer checks x > (p-1)/2: lgamma's poles give inf, the rest log|gamma|
    compare(lambda L: [L.mvlgamma(L.tensor([0.0, 1.0, 3.0, -0.25]), 1),
                       L.mvlgamma(L.tensor([1.5, 1.0, 3.0, 7.25], dtype=L.float64), 5),
                       L.mvlgamma(L.tensor([0, 1, 3]), 1)])


def test_airy_beyond_scipys_range_and_zeta_of_huge_orders(compare):
    compare(lambda L: [L.special.airy_ai(L.tensor([-1e5, -1e7, -1e9, 1e9, 1e20],
                                                  dtype=L.float64)),
                       L.special.zeta(L.tensor([9.2e18, 1e13, 2.0], dtype=L.float64),
                                      L.tensor([9.2e18, 1e13, 9.2e18], dtype=L.float64))])


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "int64", "bool", "float16",
                                   "bfloat16", "float32", "complex64"])
def test_fill_converts_as_torch(compare, dtype):
    values = [300, -1, -256, 2.5, 127.9, -1.5, float("nan"), float("inf"), 1e6, 1e39, 2**63,
              2.0**63, True, 1 + 2j, 1 + 0j, 65519.0]

    def scenario(L):
        out = []
        for v in values:
            t = L.zeros(2, dtype=getattr(L, dtype))
            out.append(L_raised(L, lambda L, t=t, v=v: t.fill_(v)))
        t = L.zeros(2, dtype=getattr(L, dtype))
        out.append(t.fill_(L.tensor(300)))
        return out

    compare(scenario)


# --------------------------------------------------------------------------------------------
# Error texts
# --------------------------------------------------------------------------------------------


def test_reshape_with_an_invalid_dimension(compare):
    compare(lambda L: [L_raised(L, lambda L: L.ones(4).reshape(-2, 2)),
                       L_raised(L, lambda L: L.ones(4).view(2, -5)),
                       L_raised(L, lambda L: L.ones(4).reshape(-1, -1)),
                       L_raised(L, lambda L: L.ones(4).expand(-2, 4)),
                       L_raised(L, lambda L: L.ones(1).repeat(2, -1)),
                       L_raised(L, lambda L: L.ones(2).tile(-1)), L.ones(0).repeat(-1)])


def test_copy_into_a_smaller_view(compare):
    def setitem(L, value, index=slice(0, 2)):
        a = L.zeros(4, 3)[:, 0].clone()
        a[index] = value
        return a

    compare(lambda L: [L_raised(L, lambda L: setitem(L, L.ones(3))),
                       L_raised(L, lambda L: setitem(L, L.ones(2, 2))),
                       L_raised(L, lambda L: L.zeros(4)[:2].copy_(L.ones(3))),
                       L_raised(L, lambda L: L.zeros(4)[:2].copy_(L.ones(2, 2))),
                       L_raised(L, lambda L: L.zeros(2, 3).copy_(L.ones(3, 3))),
                       setitem(L, L.ones(1, 1, 2)), setitem(L, L.ones(1))])


def test_backward_of_tensors_that_do_not_require_grad(compare):
    def several(L, grads):
        a = L.ones(2, requires_grad=True)
        L.autograd.backward([a * 2, L.ones(2)], grads)

    compare(lambda L: [
        L_raised(L, lambda L: L.autograd.backward([L.ones(2), L.ones(2)],
                                                  [L.ones(2), L.ones(2)])),
        L_raised(L, lambda L: several(L, [L.ones(2), L.ones(2)])),
        L_raised(L, lambda L: several(L, (L.ones(2), None))),
        L_raised(L, lambda L: L.ones(2).sum().backward())])


# sizes that no machine allocates: past the 47-bit address space, or past 2^63 bytes
HUGE = 2**46


@pytest.mark.parametrize("call", [
    "empty(2**62)", "empty(2**31, 2**31)", "zeros(2**40, 2**30)", "empty(2**63 - 1)",
    "empty(HUGE)", "zeros(HUGE)", "ones(HUGE, dtype=L.int8)", "full((HUGE,), 1.0)",
    "randn(HUGE)", "rand(2**62)", "arange(HUGE)", "ones(3).expand(HUGE, 3).contiguous()",
    "ones(3).expand(HUGE, 3) + 1", "ones(2).new_zeros(HUGE)", "zeros(2**63)",
    "ones(2, 2**63)", "rand(2**63)", "empty_strided((2**62,), (1,))",
    "empty_strided((HUGE,), (1,))",
])
def test_allocations_that_cannot_fit(lib, oracle, call):
    # torch's type and first line (an overflowing size's message goes on with a C++ trace)
    seen = []
    for L in (oracle, lib):
        with pytest.raises(Exception) as info:
            eval("L." + call, {"L": L, "HUGE": HUGE})
        seen.append((type(info.value).__name__,
                     str(info.value).splitlines()[0].replace("tapegrad", "torch")))
    assert seen[1] == seen[0]
    assert seen[0][0] in ("RuntimeError", "TypeError")


def test_size_arguments(compare):
    calls = ["zeros(2.5)", "zeros(2, 2.5)", "zeros((2.5, 2))", "zeros('a')", "ones(True)",
             "zeros(-1)", "zeros((2, -1))", "ones(-1)", "empty(2, -1)", "full((2.5,), 1.0)",
             "full(3, 1.0)", "zeros()", "ones(L.tensor(2))", "ones(L.tensor(2.0))"]
    compare(lambda L: [L_raised(L, lambda L, c=c: eval("L." + c, {"L": L})) for c in calls])
