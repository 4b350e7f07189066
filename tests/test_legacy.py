"""The old spellings against torch 2.13: ``torch.Tensor(...)`` and ``torch.FloatTensor``...
constructors (sizes, data, nothing; their errors), ``isinstance`` against the typed classes,
``x.type()`` and ``x.type(T)``, ``torch.cuda.FloatTensor``, and ``autograd.Variable``."""

from __future__ import annotations

import numpy as np
import pytest
from torchcompare import raised, run_fresh

TYPED = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor",
         "IntTensor", "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor"]


def _constructions(L, T):
    """What a legacy class (or torch.Tensor) makes of each kind of argument."""
    x = L.tensor([1.0, 2.0])
    calls = [
        lambda: T(2, 3).shape, lambda: T([1, 2]), lambda: T((2, 3)), lambda: T([[1, 2], [3, 4]]),
        lambda: T(), lambda: T(2).shape, lambda: T(L.Size([2, 3])).shape, lambda: T([]),
        lambda: T(2.5), lambda: T([2.5, True]), lambda: T(np.array([1, 2])),
        lambda: T(np.array([1.0, 2.0])), lambda: T(x), lambda: T(L.tensor([1, 2])),
        lambda: T(-1), lambda: T(2, -1), lambda: T("a"), lambda: T(2, "a"),
        lambda: T(size=(2,)).shape, lambda: T(2, dtype=L.float64),
        lambda: T(2, device="cpu").shape, lambda: T(2, device="cuda"),
        lambda: T([1.0], device="cuda"), lambda: T(x, device="cpu"), lambda: T(device="cuda"),
        lambda: T([1.0], requires_grad=True), lambda: T([1.7, -2.7]), lambda: T([True, False]),
        lambda: T(np.float64(2)), lambda: T(2, 3.0), lambda: T([[1, 2], [3]]), lambda: T(True),
        lambda: T(L.tensor(2.0)), lambda: T(L.tensor(3)), lambda: T(np.int64(2)).shape,
        lambda: T(2, 3, device=L.device("cpu")).shape, lambda: T([1], device="meta"),
        lambda: T([1], device="gpu"), lambda: T(3).zero_(),
    ]
    return [_plain(raised(c)) for c in calls]


def _plain(value):
    """bfloat16 tensors as float32 ones (torch's .numpy() has no bfloat16), dtype kept aside."""
    if hasattr(value, "dtype") and str(value.dtype).endswith("bfloat16"):
        return ("bfloat16", value.float())
    return value


@pytest.mark.parametrize("name", TYPED)
def test_typed_constructors(compare, name):
    compare(lambda L: _constructions(L, getattr(L, name)))


def test_tensor_constructor(compare):
    compare(lambda L: _constructions(L, L.Tensor))


def test_tensor_constructor_aliases_a_tensor(compare):
    def scenario(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        a = L.Tensor(x)
        b = L.Tensor(x * 2)
        y = L.tensor([1.0, 2.0])
        c = L.FloatTensor(y)
        c[0] = 5.0  # an alias: writes through
        return [a, b, a.is_leaf, y, c]

    compare(scenario)


def test_constructors_follow_the_default_dtype(compare):
    def scenario(L):
        old = L.get_default_dtype()
        try:
            L.set_default_dtype(L.float64)
            return [L.Tensor([1]), L.Tensor(2).dtype, L.FloatTensor([1]).dtype,
                    L.tensor([1.0]).type(), isinstance(L.ones(1), L.DoubleTensor),
                    L.ones(1, dtype=L.float32).type(L.Tensor), L.autograd.Variable()]
        finally:
            L.set_default_dtype(old)

    compare(scenario)


def test_byte_tensor_overflow(compare):
    compare(lambda L: [raised(lambda: L.ByteTensor([1, 255, 256])), L.ByteTensor([-1]),
                       L.BoolTensor([0, 1, 2])])


def test_isinstance_and_class_attributes(compare):
    def scenario(L):
        x = L.tensor([1.0, 2.0])
        out = []
        for name in TYPED:
            T = getattr(L, name)
            out.append((name, isinstance(x, T), isinstance(x.double(), T),
                        isinstance(L.nn.Parameter(x), T), isinstance(3, T),
                        issubclass(T, L.Tensor), T.__name__, repr(T), str(T.dtype), T.is_cuda,
                        T.is_sparse, type(T(1)).__name__))
        out.append(issubclass(L.Tensor, L.FloatTensor))
        out.append(L.FloatTensor == L.Tensor)
        out.append(raised(lambda: L.ComplexFloatTensor))
        return out

    compare(scenario)


def test_type_names_and_conversions(compare):
    def scenario(L):
        x = L.tensor([1.0, 2.0])
        return [
            x.type(), x.double().type(), L.tensor([1]).type(), L.tensor([True]).type(),
            L.tensor([1 + 2j]).type(), L.tensor([1.0], dtype=L.float16).type(),
            L.tensor([1], dtype=L.uint8).type(), L.tensor([1.0], dtype=L.bfloat16).type(),
            L.tensor([1], dtype=L.int8).type(), L.tensor([1], dtype=L.int16).type(),
            L.tensor([1], dtype=L.int32).type(), L.Tensor.type(x),
            x.type(L.DoubleTensor), x.type("torch.DoubleTensor"), x.type("torch.LongTensor"),
            raised(lambda: x.type("DoubleTensor")), raised(lambda: x.type("torch.double")),
            x.type(L.float64), x.type(L.FloatTensor) is x, x.type("torch.FloatTensor") is x,
            x.type(L.Tensor), x.type("torch.Tensor"),
            L.ones(1, dtype=L.float64).type(L.Tensor),
            raised(lambda: x.type(float)), raised(lambda: x.type(np.float64)),
            raised(lambda: x.type("foo")), raised(lambda: x.type(3)),
            x.type(L.DoubleTensor, non_blocking=True), x.type(dtype=L.DoubleTensor),
            raised(lambda: x.type("torch.cuda.FloatTensor")),
            raised(lambda: x.type(L.cuda.FloatTensor)),
            L.nn.Linear(2, 2).type(L.DoubleTensor).weight.dtype,
            L.nn.Linear(2, 2).type("torch.DoubleTensor").weight.dtype,
            L.nn.Linear(2, 2).type(L.float64).weight.dtype,
        ]

    compare(scenario)


def test_cuda_typed_classes(compare):
    def scenario(L):
        x = L.ones(1)
        out = []
        for name in TYPED:
            T = getattr(L.cuda, name)
            out.append((raised(lambda T=T: T(2)), raised(lambda T=T: T([1])), isinstance(x, T),
                        repr(T), str(T.dtype), T.is_cuda))
        return out

    compare(scenario)


def test_variable(compare):
    def scenario(L):
        V = L.autograd.Variable
        x = L.tensor([1.0, 2.0])
        out = [V(x), V(x) is x, V(x, requires_grad=True), V(x, requires_grad=True) is x,
               x.requires_grad, raised(lambda: V(L.tensor([1, 2]), requires_grad=True)),
               V(L.tensor([1, 2])), V(L.tensor([1.0], dtype=L.float64), requires_grad=True),
               raised(lambda: V([1.0, 2.0])), V(), V(x, True), V(x, False, False),
               V(x, requires_grad=True).grad_fn, V(x.exp(), requires_grad=True),
               V(L.tensor([1.0], requires_grad=True) * 2),
               raised(lambda: V(np.ones(2))), V(x, requires_grad=1),
               raised(lambda: V(x, foo=1)), raised(lambda: V(x, requires_grad=None)),
               isinstance(x, V), isinstance(3, V), issubclass(L.Tensor, V),
               V(L.nn.Parameter(L.ones(1))), type(V(L.nn.Parameter(L.ones(1)))).__name__]
        y = L.tensor([1.0, 2.0])
        v = V(y, requires_grad=True)
        (v * v).sum().backward()
        v.data[0] = 7.0  # shares y's memory
        out += [v.grad, y.grad, y, v.is_leaf]
        return out

    compare(scenario)


def test_variable_volatile_warns(compare):
    compare(lambda L: L.autograd.Variable(L.ones(2), volatile=True))


def test_set_default_tensor_type(lib_name):
    body = """
    for t in ("L.DoubleTensor", "'torch.FloatTensor'", "L.LongTensor", "'torch.cuda.FloatTensor'",
              "L.cuda.DoubleTensor", "L.float64", "'foo'", "L.HalfTensor", "'torch.DoubleTensor'"):
        try:
            L.set_default_tensor_type(eval(t))
            note(t, L.get_default_dtype(), L.tensor([1.0]).dtype, L.Tensor([1]).type())
        except Exception as exc:
            note(t, type(exc).__name__, exc)
    """
    assert run_fresh(lib_name, body) == run_fresh("torch", body)
