"""Tensor.to's three forms, when they copy, and the shorthands (tapegrad/_conversions.py);
memory formats (tapegrad/_memory_format.py); grad_dtype; complex32 and the uint types."""

from __future__ import annotations

import pytest


def _x(L, *shape, **kw):
    return L.arange(float(L.tensor(shape).prod()) if shape else 1.0,
                    dtype=kw.get("dtype", L.float64)).reshape(shape)


@pytest.mark.parametrize("call", [
    lambda L, x: x.to(L.float32),
    lambda L, x: x.to(L.float64),
    lambda L, x: x.to(L.float64, copy=True),
    lambda L, x: x.to("cpu"),
    lambda L, x: x.to("cpu", L.float32, False, True),
    lambda L, x: x.to(L.device("cpu"), dtype=L.float16),
    lambda L, x: x.to(device="cpu", dtype=L.int32),
    lambda L, x: x.to(L.zeros(1, dtype=L.float32)),
    lambda L, x: x.to(L.zeros(1, dtype=L.float64), True, True),
    lambda L, x: x.to(float),
    lambda L, x: x.to(),
    lambda L, x: x.to(dtype=None),
    lambda L, x: x.to(memory_format=L.contiguous_format),
    lambda L, x: x.to(memory_format=L.channels_last),
    lambda L, x: x.to(L.float64, memory_format=L.preserve_format),
    lambda L, x: x.to(L.float32, memory_format=L.channels_last),
], ids=lambda f: "")
def test_to_forms_copy_only_when_needed(compare, call):
    def scenario(L):
        x = _x(L, 2, 3, 4, 5).requires_grad_()
        y = call(L, x)
        return y, y is x, y.stride(), y.is_contiguous(), y.requires_grad

    compare(scenario)


@pytest.mark.parametrize("args,kwargs", [
    (("cpu", None), {}),
    ((None,), {}),
    ((), {"memory_format": None}),
])
def test_to_forms_with_none(compare, args, kwargs):
    compare(lambda L: (lambda x: (x.to(*args, **kwargs) is x))(L.ones(2)))


@pytest.mark.parametrize("args,kwargs", [
    (("float64",), {}),
    ((1.5j,), {}),
    (("cpu", "cpu"), {}),
    (("float32",), {"dtype": "float64"}),
    ((2,), {"non_blocking": 1}),
    ((), {"other": 1, "alpha": 2.0}),
], ids=lambda v: repr(v)[:20])
def test_to_invalid_arguments(compare, args, kwargs):
    def scenario(L):
        fix = {"float64": L.float64, "float32": L.float32}

        def conv(v):
            return fix.get(v, v) if isinstance(v, str) and v.startswith("float") else v

        x = L.ones(2)
        a = tuple(conv(v) for v in args)
        k = {n: conv(v) for n, v in kwargs.items()}
        if args == (2,):  # the tensor form with a bad flag
            a = (L.zeros(1),)
        return x.to(*a, **k)

    compare(scenario)


def test_to_integer_drops_requires_grad(compare):
    compare(lambda L: (lambda y: (y, y.requires_grad, y.grad_fn))(
        _x(L, 3).requires_grad_().to(L.int64)))


def test_to_backward_casts_back(compare):
    def scenario(L):
        x = _x(L, 2, 3).requires_grad_()
        y = x.to(L.float32, memory_format=L.contiguous_format) * 2
        y.sum().backward()
        return x.grad

    compare(scenario)


@pytest.mark.parametrize("name", ["float", "double", "half", "bfloat16", "long", "int", "short",
                                  "char", "byte", "bool", "cfloat", "cdouble"])
def test_shorthands_take_memory_format(compare, name):
    def scenario(L):
        x = _x(L, 2, 3, 2, 2).requires_grad_()
        y = getattr(x, name)(memory_format=L.channels_last)
        z = getattr(x, name)(memory_format=L.contiguous_format)
        return y.stride(), z.stride(), str(y.dtype), (z is x), type(y.grad_fn).__name__

    compare(scenario)


def test_shorthand_rejects_other_memory_format_types(compare):
    compare(lambda L: L.ones(2).float(memory_format=3))


def test_memory_formats(compare):
    def scenario(L):
        x = _x(L, 2, 3, 4, 5)
        cl = x.contiguous(memory_format=L.channels_last)
        back = cl.contiguous()
        return (repr(L.channels_last), cl.stride(), cl.is_contiguous(),
                cl.is_contiguous(memory_format=L.channels_last), back.stride(),
                x.is_contiguous(memory_format=L.channels_last_3d), cl.to(L.float32).stride(),
                cl.contiguous(memory_format=L.channels_last) is cl)

    compare(scenario)


def test_channels_last_needs_rank_4(compare):
    compare(lambda L: L.ones(3).to(memory_format=L.channels_last))
    compare(lambda L: L.ones(3).contiguous(memory_format=L.channels_last))


def test_grad_dtype(compare):
    def scenario(L):
        x = L.ones(2, requires_grad=True)
        before = x.grad_dtype
        x.grad_dtype = L.float64
        (x * 2).sum().backward()
        g1 = x.grad
        x.grad_dtype = None
        return before, g1, x.grad_dtype

    compare(scenario)


@pytest.mark.parametrize("what", ["get", "set", "type", "assign"])
def test_grad_dtype_errors(compare, what):
    def scenario(L):
        x = L.ones(2, requires_grad=True)
        if what == "get":
            return (x * 2).grad_dtype
        if what == "set":
            (x * 2).grad_dtype = L.float64
        if what == "type":
            x.grad_dtype = "float64"
        x.grad_dtype = L.float64
        x.grad = L.zeros(2)
        return None

    compare(scenario)


@pytest.mark.parametrize("op", [
    lambda L, a, b: L.add(a, b, alpha=-3),
    lambda L, a, b: L.sub(a, b, alpha=-3),
    lambda L, a, b: L.rsub(a, b, alpha=-3),
    lambda L, a, b: L.add(a, 2, alpha=-3),
    lambda L, a, b: L.add(a, b, alpha=300),
    lambda L, a, b: L.add(a, b, alpha=2.5),
    lambda L, a, b: a - 3,
    lambda L, a, b: a * -1,
    lambda L, a, b: L.full_like(a, -9),
    lambda L, a, b: L.full_like(a, 300),
    lambda L, a, b: L.full((2,), -9, dtype=L.uint8),
    lambda L, a, b: L.add(a.to(L.int8), b.to(L.int8), alpha=-300),
    lambda L, a, b: L.sign(a > 2),
    lambda L, a, b: a & -32,
    lambda L, a, b: -32 & a,
    lambda L, a, b: a | 300,
    lambda L, a, b: a ^ -1,
    lambda L, a, b: L.bitwise_and(a, -32),
    lambda L, a, b: L.bitwise_xor(a.to(L.int8), 200),
])
def test_integer_scalars_convert_as_in_torch(compare, op):
    compare(lambda L: op(L, L.tensor([1, 2, 200], dtype=L.uint8),
                         L.tensor([3, 4, 5], dtype=L.uint8)))


def test_limited_unsigned_types(lib, oracle):
    import numpy as np

    for L in (lib, oracle):
        t = L.from_numpy(np.array([1, 2**63 + 5], dtype=np.uint64))
        assert str(t.dtype) == "torch.uint64"
        with pytest.raises(RuntimeError, match="Promotion for uint16, uint32, uint64 types is "
                                               "not supported, attempted to promote UInt64 and "
                                               "Long"):
            t + L.tensor([1])
    assert repr(lib.from_numpy(np.array([1, 2**63 + 5], dtype=np.uint64))) == repr(
        oracle.from_numpy(np.array([1, 2**63 + 5], dtype=np.uint64)))


def test_complex32(lib, oracle):
    """complex32 keeps float16 parts exactly; conversions both ways and printing as torch."""
    import warnings

    def run(L):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch: "ComplexHalf support is experimental"
            x = L.tensor([[1.5 + 2j, -0.3 + 0.1j]], dtype=L.complex64)
            h = x.chalf()
            r = L.tensor([0.1, 70000.0], dtype=L.float64, requires_grad=True)
            y = r.to(L.complex32)
            (g,) = L.autograd.grad(y, r, L.ones(2, dtype=L.complex64).chalf())
            return (repr(h), repr(h[0, 1:]), h.element_size(), h.is_complex(), str(h.dtype),
                    repr(h.cfloat()), repr(y.cdouble().detach()), type(y.grad_fn).__name__,
                    repr(g), L.chalf is L.complex32, h.tolist(), h[0, 0].item())

    assert run(lib) == run(oracle)
