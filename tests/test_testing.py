"""torch.testing against torch: ``assert_close``'s verdicts and messages, ``make_tensor``'s
values after the same seed, and the deprecated ``assert_allclose``.

Every scenario runs on torch and on the library under test through ``compare``, which checks
the result, the exception type and message, and the warnings alike.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from cpu_kernels import assert_draws, assert_fused

torch = pytest.importorskip("torch")


def _close_cases(L):
    t = L.tensor
    return {
        "equal": (t([1.0, 2.0]), t([1.0, 2.0]), {}),
        "within float32 tolerance": (t([1.0, 2.0]), t([1.0, 2.0 + 1e-6]), {}),
        "values differ": (t([1.0, 2.0, 3.0]), t([1.0, 2.5, 3.0]), {}),
        "values differ 2d": (t([[1.0, 2.0], [3.0, 4.0]]), t([[1.0, 2.0], [3.5, 4.5]]), {}),
        "0-d": (t(1.0), t(1.5), {}),
        "ints differ": (t([1, 2, 3]), t([1, 2, 4]), {}),
        "bools differ": (t([True, False]), t([True, True]), {}),
        "uint8 wrap": (t([0, 255], dtype=L.uint8), t([255, 0], dtype=L.uint8), {}),
        "shape": (t([1.0, 2.0]), t([1.0, 2.0, 3.0]), {}),
        "dtype": (t([1.0, 2.0]), t([1.0, 2.0], dtype=L.float64), {}),
        "dtype unchecked": (t([1.0, 2.0]), t([1.0, 2.0], dtype=L.float64),
                            {"check_dtype": False}),
        "dtype unchecked differ": (t([1.0, 2.0]), t([1.0, 2.1], dtype=L.float64),
                                   {"check_dtype": False}),
        "stride": (t([[1.0, 2.0], [3.0, 4.0]]).t(), t([[1.0, 3.0], [2.0, 4.0]]),
                   {"check_stride": True}),
        "nan": (t([float("nan"), 1.0]), t([float("nan"), 1.0]), {}),
        "nan equal": (t([float("nan"), 1.0]), t([float("nan"), 1.0]), {"equal_nan": True}),
        "inf": (t([float("inf")]), t([float("inf")]), {}),
        "inf sign": (t([float("inf")]), t([-float("inf")]), {}),
        "explicit tolerances": (t([1.0, 2.0]), t([1.1, 2.0]), {"rtol": 0.2, "atol": 0.0}),
        "explicit tolerances fail": (t([1.0, 2.0]), t([1.1, 2.0]), {"rtol": 0.01, "atol": 0.01}),
        "exact": (t([1.0, 2.0]), t([1.0, 2.5]), {"rtol": 0, "atol": 0}),
        "only rtol": (t([1.0]), t([1.0]), {"rtol": 0.1}),
        "only atol": (t([1.0]), t([1.0]), {"atol": 0.1}),
        "complex": (t([1 + 2j]), t([1 + 2.5j]), {}),
        "float16": (t([1.0, 2.0], dtype=L.float16), t([1.0, 2.01], dtype=L.float16), {}),
        "bfloat16": (t([1.0, 2.0], dtype=L.bfloat16), t([1.0, 2.5], dtype=L.bfloat16), {}),
        "msg string": (t([1.0]), t([2.0]), {"msg": "custom"}),
        "msg callable": (t([1.0]), t([2.0]), {"msg": lambda m: "Header\n" + m + "\nFooter"}),
        "requires_grad": (t([1.0], requires_grad=True), t([1.0]), {}),
        "python floats": (1.0, 1.0 + 1e-9, {}),
        "python floats differ": (1.0, 1.5, {}),
        "python ints": (1, 2, {}),
        "python complex": (1 + 1j, 1 + 2j, {}),
        "python and tensor": (1.0, t(1.0), {}),
        "bools": (True, False, {}),
        "none": (None, None, {}),
        "none and number": (None, 1, {}),
        "string": ("a", "a", {}),
        "lists": ([t([1.0]), t([2.0])], [t([1.0]), t([2.5])], {}),
        "tuples nested": ((t([1.0]), (1, 2.0)), (t([1.0]), (1, 2.5)), {}),
        "lengths": ([1, 2], [1, 2, 3], {}),
        "dicts": ({"a": t([1.0]), "b": 2}, {"a": t([1.0]), "b": 3}, {}),
        "dict keys": ({"a": 1, "b": 2}, {"a": 1, "c": 2}, {}),
        "list vs tensor": ([1.0, 2.0], t([1.0, 2.0]), {}),
        "numpy arrays": (np.array([1.0, 2.0]), np.array([1.0, 2.5]), {}),
        "numpy scalar": (np.float32(1.0), np.float32(1.0), {}),
        "numpy vs tensor": (np.array([1.0]), t([1.0], dtype=L.float64), {}),
        "empty": (t([]), t([]), {}),
        "large": (L.arange(100.0), L.arange(100.0) + (L.arange(100) % 7 == 0), {}),
        "parameter": (L.nn.Parameter(t([1.0])), t([1.0]), {}),
        "parameter strict": (L.nn.Parameter(t([1.0])), t([1.0]), {"allow_subclasses": False}),
    }


CASES = list(_close_cases(torch))


@pytest.mark.parametrize("case", CASES)
def test_assert_close(compare, case):
    def scenario(L):
        actual, expected, options = _close_cases(L)[case]
        return L.testing.assert_close(actual, expected, **options)

    compare(scenario)


@pytest.mark.parametrize("case", ["values differ", "ints differ", "dtype", "python floats",
                                  "nan", "only rtol", "float16"])
def test_assert_allclose(compare, case):
    def scenario(L):
        actual, expected, options = _close_cases(L)[case]
        options = {k: v for k, v in options.items() if k in ("rtol", "atol", "equal_nan", "msg")}
        return L.testing.assert_allclose(actual, expected, **options)

    compare(scenario)


def test_assert_allclose_defaults(compare):
    # looser than assert_close's, NaNs equal, expected made in actual's dtype
    compare(lambda L: L.testing.assert_allclose(L.tensor([1.0, float("nan")]),
                                                [1.00005, float("nan")]))
    compare(lambda L: L.testing.assert_allclose(L.tensor([1.0], dtype=L.float64),
                                                L.tensor([1.0 + 1e-6])))


MAKE_DTYPES = ["float32", "float64", "float16", "bfloat16", "complex64", "complex128", "int64",
               "int32", "int16", "int8", "uint8", "bool"]
MAKE_OPTIONS = {
    "default": {},
    "noncontiguous": {"noncontiguous": True},
    "bounds": {"low": 2.5, "high": 7.2},
    "wide bounds": {"low": -1e40, "high": 1e40},
    "exclude zero": {"low": -2, "high": 2, "exclude_zero": True},
    "requires_grad": {"requires_grad": True},
}


@pytest.mark.parametrize("options", list(MAKE_OPTIONS))
@pytest.mark.parametrize("dtype", MAKE_DTYPES)
def test_make_tensor_values(lib, dtype, options):
    kwargs = MAKE_OPTIONS[options]
    if dtype == "bool" and ("low" in kwargs or "requires_grad" in kwargs):
        pytest.skip("bool takes no bounds and no requires_grad (tested as errors below)")
    if dtype not in ("bool",) and "requires_grad" in kwargs and not dtype.startswith(("float",
                                                                                        "bfloat",
                                                                                        "complex")):
        pytest.skip("integers take no requires_grad (tested as errors below)")
    results = []
    for L in (torch, lib):
        L.manual_seed(7)
        with np.errstate(all="ignore"):
            results.append(L.testing.make_tensor((3, 5), dtype=getattr(L, dtype), device="cpu",
                                                 **kwargs))
    expected, actual = results
    assert actual.shape == tuple(expected.shape)
    assert actual.stride() == expected.stride()
    assert actual.is_contiguous() == expected.is_contiguous()
    assert actual.requires_grad == expected.requires_grad
    assert str(actual.dtype) == str(expected.dtype)
    e = expected.detach()
    a = actual.detach()
    if dtype == "bfloat16":
        e, a = e.float(), a.float()
    # uniform_(low, high) (make_tensor's default bounds are -9 and 9): bit for bit where torch
    # runs its vectorized kernels, else within the bound on the last bits of draws
    # (tests/cpu_kernels.py); integers and bools exactly
    assert_draws(a.numpy(), e.numpy(), f"{dtype} {options}")


def test_make_tensor_shapes(lib):
    for shape in [(), (0,), (2, 0, 3), [4], (1, 1), ((2, 3),)]:
        for L in (torch, lib):
            L.manual_seed(0)
        args = shape if isinstance(shape, tuple) else (shape,)
        torch.manual_seed(0)
        e = torch.testing.make_tensor(*args, dtype=torch.float32, device="cpu",
                                      noncontiguous=True)
        lib.manual_seed(0)
        a = lib.testing.make_tensor(*args, dtype=lib.float32, device="cpu", noncontiguous=True)
        assert tuple(a.shape) == tuple(e.shape)
        if e.numel():  # (an empty tensor's strides come from NumPy, which reports zeros)
            assert a.stride() == e.stride()
        # uniform_(-9, 9), -9 + 18*u: bit for bit where torch runs its vectorized kernels, else
        # with one rounding more of the product (tests/cpu_kernels.py; down to a single value,
        # whose bound is not that of the largest of many)
        assert_fused(a.numpy(), e.numpy(), np.abs(e.numpy().astype(np.float64) + 9.0),
                     str(shape))


@pytest.mark.parametrize("kwargs", [
    {"dtype": "float32", "low": 3, "high": 1},
    {"dtype": "float32", "low": math.nan},
    {"dtype": "int64", "requires_grad": True},
    {"dtype": "bool", "requires_grad": True},
    {"dtype": "uint8", "low": 300, "high": 400},
    {"dtype": "int8", "low": -1000, "high": -500},
    {"dtype": "float32", "low": 2.0, "high": 2.0},
    {"dtype": "int64", "low": 2, "high": 2},
    {"dtype": "float32", "noncontiguous": True, "memory_format": "contiguous_format"},
])
def test_make_tensor_errors(compare, kwargs):
    def scenario(L):
        options = dict(kwargs)
        options["dtype"] = getattr(L, options["dtype"])
        if "memory_format" in options:
            options["memory_format"] = getattr(L, options["memory_format"])
        L.manual_seed(0)
        return L.testing.make_tensor(2, 3, device="cpu", **options)

    compare(scenario)


def test_module_names(lib):
    public = {n for n in dir(torch.testing) if not n.startswith("_")} - {"FileCheck"}
    assert public <= {n for n in dir(lib.testing) if not n.startswith("_")}
