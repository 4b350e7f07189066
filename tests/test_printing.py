"""Compare tapegrad's tensor printing with real torch's ``repr`` character for character."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tapegrad import _printing
from tapegrad._printing import format_tensor, get_printoptions, printoptions, set_printoptions

NAN, INF = np.nan, np.inf


@pytest.fixture(autouse=True)
def _default_printoptions():
    torch.set_printoptions(profile="default")
    set_printoptions(profile="default")
    yield
    torch.set_printoptions(profile="default")
    set_printoptions(profile="default")


def _dtype_name(t: torch.Tensor) -> str:
    return str(t.dtype).removeprefix("torch.")


def _torch_tensor(arr: np.ndarray, dtype: str | None) -> torch.Tensor:
    t = torch.from_numpy(np.array(arr, order="C", copy=True))
    if dtype is not None:
        t = t.to(getattr(torch, dtype))
    return t


def check(arr, dtype: str | None = None, *, requires_grad: bool = False, grad_fn: bool = False):
    """Assert that format_tensor(arr) equals torch's repr of the same tensor.

    Args:
        arr: Values; converted with ``torch.from_numpy`` (then ``.to(dtype)`` if given).
        dtype: Optional torch dtype name to convert to (e.g. ``'bfloat16'``).
        requires_grad: Make the torch tensor a leaf requiring grad.
        grad_fn: Make the torch tensor the output of ``leaf * 1`` (``MulBackward0``).
    """
    arr = np.asarray(arr)
    t = _torch_tensor(arr, dtype)
    grad_fn_name = None
    if requires_grad or grad_fn:
        t.requires_grad_(True)
    if grad_fn:
        t = t * 1
        grad_fn_name = type(t.grad_fn).__name__
        # Complex ``x * 1`` turns infinities into nan: print the values torch actually holds.
        values = t.detach()
        arr = (values.float() if values.dtype == torch.bfloat16 else values).numpy()
    expected = repr(t)
    got = format_tensor(arr, _dtype_name(t), requires_grad=requires_grad, grad_fn_name=grad_fn_name)
    assert got == expected, f"\nexpected:\n{expected}\ngot:\n{got}"


_rng = np.random.default_rng(1234)


def _normal(shape, scale=1.0, dtype=np.float32):
    return (_rng.standard_normal(shape) * scale).astype(dtype)


ARRAYS = {
    # 0-d
    "scalar": np.float32(6.0),
    "scalar_frac": np.float32(0.1),
    "scalar_nan": np.float32(NAN),
    "scalar_inf": np.float32(-INF),
    "scalar_negzero": np.float32(-0.0),
    "scalar_zero": np.float32(0.0),
    "scalar_big": np.float32(1e10),
    "scalar_small": np.float32(1e-6),
    "scalar_int": np.int64(-7),
    "scalar_int32": np.int32(7),
    "scalar_bool": np.bool_(True),
    "scalar_f64": np.float64(3.14159265),
    # 1-d
    "normal_1": _normal(7),
    "normal_small": _normal(7, 1e-3),
    "normal_tiny": _normal(7, 1e-6),
    "normal_big": _normal(7, 1e4),
    "normal_huge": _normal(7, 1e9),
    "normal_mixed_scales": np.array([1e-5, 1.0, 123.456, -3e3], np.float32),
    "int_valued": np.array([21.0, -3.0, 0.0, 1000.0], np.float32),
    "int_valued_wide": np.array([1.0, 2000.0], np.float32),
    "int_valued_big": np.array([1.0, 2e8], np.float32),
    "ratio_exactly_1000": np.array([0.5, 500.0], np.float32),
    "ratio_above_1000": np.array([0.5, 500.5], np.float32),
    "min_at_1e-4": np.array([1e-4, 0.5], np.float64),
    "min_below_1e-4": np.array([9.9e-5, 0.5], np.float64),
    "max_1e8": np.array([1e8, 2e7], np.float64),
    "specials": np.array([NAN, INF, -INF, -0.0, 0.0, 2.5], np.float32),
    "only_specials": np.array([NAN, INF, -INF, 0.0], np.float32),
    "zeros": np.zeros(4, np.float32),
    "neg_zeros": np.array([0.0, -0.0, 0.0], np.float32),
    "nan_and_ints": np.array([NAN, 1.0, 2.0], np.float32),
    "inf_and_sci": np.array([INF, 1e-7, 1.0], np.float32),
    "rounding_up": np.array([9.99996, -0.99999, 0.00005], np.float64),
    "ints": np.array([1, -20, 300], np.int64),
    "int32": np.array([1, -20, 300], np.int32),
    "int16": np.array([1, -20, 300], np.int16),
    "int8": np.array([1, -20, 127], np.int8),
    "uint8": np.array([0, 20, 255], np.uint8),
    "int64_extremes": np.array([np.iinfo(np.int64).min, 0, np.iinfo(np.int64).max]),
    "bools": np.array([True, False, True]),
    "float64": _normal(5, 1.0, np.float64),
    "float64_sci": _normal(5, 1e-7, np.float64),
    "float16": _normal(5, 1.0, np.float16),
    "float16_big": np.array([65504.0, -1.0, 0.5], np.float16),
    "long_row": _normal(100),
    "long_row_ints": np.arange(-50, 150, dtype=np.int64) * 1234,
    "long_row_bools": _rng.random(70) < 0.5,
    "long_row_sci": _normal(40, 1e-9),
    "long_row_f64": _normal(31, 10.0, np.float64),
    # 2-d and more
    "matrix": _normal((3, 4)),
    "matrix_wide": _normal((3, 30)),
    "matrix_ints": _rng.integers(-1000, 1000, (4, 5)),
    "matrix_bools": _rng.random((3, 3)) < 0.5,
    "matrix_f64_big": _normal((2, 3), 1e12, np.float64),
    "tensor3": _normal((2, 3, 4)),
    "tensor4": _normal((2, 2, 3, 2), 100.0),
    "tensor5": _normal((2, 1, 2, 1, 3)),
    "tensor3_ints": np.arange(24, dtype=np.int32).reshape(2, 3, 4),
    "ones_dims": np.ones((1, 1, 1), np.float32),
    # summarized
    "summ_1d": _normal(2000),
    "summ_1d_ints": np.arange(5000),
    "summ_2d": _normal((100, 100)),
    "summ_2d_thin": _normal((2, 1000)),
    "summ_2d_tall": _normal((1000, 2)),
    "summ_3d": _normal((10, 20, 30)),
    "summ_4d": _normal((8, 8, 8, 8), 1e-5),
    "summ_bools": _rng.random((40, 40)) < 0.5,
    "summ_f64_hidden_big": np.concatenate([np.ones(3), [1e20] * 1000, np.ones(3)]),
    "summ_1001": np.arange(1001, dtype=np.float32),
    "not_summ_1000": np.arange(1000, dtype=np.float32),
    # empty
    "empty": np.zeros(0, np.float32),
    "empty_2d": np.zeros((0, 3), np.float32),
    "empty_3d": np.zeros((2, 0, 3), np.float32),
    "empty_int": np.zeros(0, np.int64),
    "empty_int32_2d": np.zeros((4, 0), np.int32),
    "empty_bool": np.zeros(0, np.bool_),
    "empty_f64": np.zeros((0,), np.float64),
    "empty_f16": np.zeros((0, 2), np.float16),
}


@pytest.mark.parametrize("name", list(ARRAYS))
def test_matches_torch(name):
    check(ARRAYS[name])


FLOAT_NAMES = [
    n for n, a in ARRAYS.items() if np.asarray(a).dtype.kind == "f" and np.asarray(a).ndim > 0
]


@pytest.mark.parametrize("name", FLOAT_NAMES)
def test_requires_grad_suffix(name):
    check(ARRAYS[name], requires_grad=True)


@pytest.mark.parametrize("name", FLOAT_NAMES)
def test_grad_fn_suffix(name):
    check(ARRAYS[name], grad_fn=True)


def test_grad_fn_wins_over_requires_grad():
    t = torch.tensor([1.0, 2.0], requires_grad=True) * 1
    got = format_tensor(
        np.array([1.0, 2.0], np.float32), "float32", requires_grad=True, grad_fn_name="MulBackward0"
    )
    assert got == repr(t) == "tensor([1., 2.], grad_fn=<MulBackward0>)"


def test_scalar_grad_suffixes():
    check(np.float32(2.5), requires_grad=True)
    check(np.float64(2.5), grad_fn=True)


def test_suffix_wraps_to_new_line():
    # A full last line pushes the dtype and grad_fn suffixes onto their own lines.
    check(np.full(8, 1.2345, np.float64), grad_fn=True)
    check(_normal((2, 8), 1.0, np.float64), grad_fn=True)
    check(_normal(9, 1.0, np.float64), requires_grad=True)
    check(np.arange(17, dtype=np.int32))


@pytest.mark.parametrize("name", ["normal_1", "matrix", "specials", "scalar_frac", "summ_2d"])
def test_bfloat16_from_float32_values(name):
    arr = np.asarray(ARRAYS[name], np.float32)
    t = torch.from_numpy(arr.copy()).to(torch.bfloat16)
    assert format_tensor(arr, "bfloat16") == repr(t)


def test_bfloat16_grad_fn():
    arr = _normal((3, 3))
    t = torch.from_numpy(arr.copy()).to(torch.bfloat16).requires_grad_(True) * 1
    assert format_tensor(arr, "bfloat16", grad_fn_name="MulBackward0") == repr(t)


def test_bfloat16_ml_dtypes_input():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    arr = _normal(6).astype(ml_dtypes.bfloat16)
    t = torch.from_numpy(arr.astype(np.float32)).to(torch.bfloat16)
    assert format_tensor(arr, "bfloat16") == repr(t)


@pytest.mark.parametrize(
    "arr",
    [
        np.array([1 + 2j, -0.5 - 3j, 1e-5j], np.complex64),
        np.array([1 - 0.0j, 0j, -2.5 + 1j], np.complex128),
        np.complex64(1 - 0.0j),
        (_normal((3, 4)) + 1j * _normal((3, 4), 100.0)).astype(np.complex64),
        (_normal(1500) + 1j * _normal(1500)).astype(np.complex128),
        np.zeros(0, np.complex64),
    ],
)
def test_complex(arr):
    check(arr)


def test_parameter_repr():
    arr = _normal((3, 30))
    p = torch.nn.Parameter(torch.from_numpy(arr.copy()))
    assert repr(p) == "Parameter containing:\n" + format_tensor(arr, "float32", requires_grad=True)


@pytest.mark.parametrize("prefix", ["nested_tensor(", "x(", "a_much_longer_prefix("])
@pytest.mark.parametrize("name", ["matrix_wide", "long_row", "tensor3", "summ_3d", "long_row_f64"])
def test_prefix_sets_indent(prefix, name):
    tensor_str = getattr(torch._tensor_str, "_tensor_str", None)
    add_suffixes = getattr(torch._tensor_str, "_add_suffixes", None)
    if tensor_str is None or add_suffixes is None:
        pytest.skip("torch's private printing helpers are not available")
    t = torch.from_numpy(np.asarray(ARRAYS[name]).copy())
    indent = len(prefix)
    suffixes = [] if t.dtype == torch.float32 else [f"dtype={t.dtype}"]
    expected = add_suffixes(prefix + tensor_str(t, indent), suffixes, indent, False)
    assert format_tensor(ARRAYS[name], _dtype_name(t), prefix=prefix) == expected


OPTION_CASES = [
    {"precision": 2},
    {"precision": 0},
    {"precision": 8},
    {"sci_mode": True},
    {"sci_mode": False},
    {"profile": "short"},
    {"profile": "full"},
    {"profile": "default"},
    {"linewidth": 40},
    {"linewidth": 120},
    {"linewidth": 5},
    {"threshold": 10},
    {"threshold": 5, "edgeitems": 1},
    {"threshold": 0},
    {"edgeitems": 5},
    {"edgeitems": 0},
    {"edgeitems": 0, "threshold": 10},
    {"profile": "short", "precision": 6, "sci_mode": True},
]
OPTION_ARRAYS = [
    "scalar",
    "scalar_frac",
    "normal_1",
    "normal_tiny",
    "int_valued",
    "int_valued_wide",
    "int_valued_big",
    "specials",
    "zeros",
    "ints",
    "bools",
    "long_row",
    "matrix_wide",
    "tensor3",
    "summ_2d",
    "summ_1d_ints",
    "empty_2d",
    "float64_sci",
]


@pytest.mark.parametrize("options", OPTION_CASES, ids=str)
@pytest.mark.parametrize("name", OPTION_ARRAYS)
def test_printoptions(options, name):
    torch.set_printoptions(**options)
    set_printoptions(**options)
    check(ARRAYS[name])
    check(ARRAYS[name], dtype="float64" if np.asarray(ARRAYS[name]).dtype.kind == "f" else None)


def test_full_profile_prints_everything():
    torch.set_printoptions(profile="full")
    set_printoptions(profile="full")
    check(np.arange(3000, dtype=np.float32).reshape(30, 100))


def test_get_printoptions_matches_torch():
    for options in OPTION_CASES:
        torch.set_printoptions(**options)
        set_printoptions(**options)
        assert get_printoptions() == torch._tensor_str.get_printoptions()


def test_sci_mode_is_reset_by_later_calls():
    set_printoptions(sci_mode=True)
    set_printoptions(precision=3)
    assert get_printoptions()["sci_mode"] is None


def test_unknown_profile_is_ignored():
    set_printoptions(precision=2)
    set_printoptions(profile="bogus")
    assert get_printoptions()["precision"] == 2


def test_printoptions_context_manager():
    arr = _normal(5)
    before = get_printoptions()
    with printoptions(precision=2, sci_mode=True):
        with torch._tensor_str.printoptions(precision=2, sci_mode=True):
            assert format_tensor(arr, "float32") == repr(torch.from_numpy(arr.copy()))
        assert get_printoptions()["precision"] == 2
    assert get_printoptions() == before


def test_dtype_aliases_and_casting():
    assert format_tensor(np.array([1.5, 2.0]), "torch.double") == format_tensor(
        np.array([1.5, 2.0]), "float64"
    )
    assert format_tensor([1, 2], "long") == "tensor([1, 2])"
    assert format_tensor([1.25, 2.0], "half") == "tensor([1.2500, 2.0000], dtype=torch.float16)"
    with pytest.raises(ValueError):
        format_tensor([1], "float8")


def test_default_dtype_float64():
    arr32 = np.array([1.5, 2.0], np.float32)
    arr64 = arr32.astype(np.float64)
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        for arr in (arr32, arr64, np.zeros(0), np.zeros(0, np.float32)):
            t = torch.from_numpy(arr.copy())
            got = format_tensor(arr, _dtype_name(t), default_dtype="float64")
            assert got == repr(t)
        c = torch.tensor([1 + 1j], dtype=torch.complex128)
        assert format_tensor(np.array([1 + 1j]), "complex128", default_dtype="float64") == repr(c)
    finally:
        torch.set_default_dtype(old)


def test_module_never_imports_torch():
    source = open(_printing.__file__, encoding="utf-8").read()
    assert "import torch" not in source


# --------------------------------------------------------------------------------------------
# randomized comparison

DTYPES = [
    "float32",
    "float64",
    "float16",
    "bfloat16",
    "int64",
    "int32",
    "int16",
    "int8",
    "uint8",
    "bool",
    "complex64",
]


def _random_floats(rng: np.random.Generator, size: int, kind: int) -> np.ndarray:
    scale = 10.0 ** rng.integers(-12, 13)
    if kind == 0:
        values = rng.standard_normal(size) * scale
    elif kind == 1:
        values = rng.integers(-2000, 2000, size).astype(np.float64)
    elif kind == 2:  # values on rounding boundaries
        values = np.round(rng.standard_normal(size) * 10, int(rng.integers(0, 6))) + 5e-5
    else:  # wildly mixed magnitudes and specials
        values = rng.standard_normal(size) * 10.0 ** rng.integers(-12, 13, size)
    if size and rng.random() < 0.4:
        specials = np.array([NAN, INF, -INF, 0.0, -0.0])
        where = rng.random(size) < 0.3
        values[where] = rng.choice(specials, int(where.sum()))
    return values


def _random_array(rng: np.random.Generator, dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    size = int(np.prod(shape))
    if dtype == "bool":
        return (rng.random(size) < 0.5).reshape(shape)
    if dtype.startswith(("int", "uint")):
        info = np.iinfo(dtype)
        hi = min(int(info.max), 10 ** int(rng.integers(1, 19)))
        lo = max(int(info.min), -hi)
        return rng.integers(lo, hi, size, dtype=dtype, endpoint=True).reshape(shape)
    kind = int(rng.integers(0, 4))
    values = _random_floats(rng, size, kind)
    if dtype == "complex64":
        out = np.empty(size, np.complex64)
        out.real, out.imag = values, _random_floats(rng, size, kind)
        return out.reshape(shape)
    with np.errstate(over="ignore"):
        return values.astype(np.float32 if dtype == "bfloat16" else dtype).reshape(shape)


_shapes = st.one_of(
    st.lists(st.integers(0, 6), min_size=0, max_size=4),
    st.lists(st.integers(1, 40), min_size=1, max_size=3),
).map(tuple)

_options = st.fixed_dictionaries(
    {},
    optional={
        "precision": st.integers(0, 8),
        "threshold": st.sampled_from([0, 5, 20, 100, 1000]),
        "edgeitems": st.integers(1, 4),
        "linewidth": st.integers(10, 150),
        "sci_mode": st.sampled_from([None, True, False]),
        "profile": st.sampled_from(["default", "short", "full"]),
    },
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    dtype=st.sampled_from(DTYPES),
    shape=_shapes,
    seed=st.integers(0, 2**32 - 1),
    options=_options,
    grad=st.sampled_from([None, "requires_grad", "grad_fn"]),
)
def test_random_matches_torch(dtype, shape, seed, options, grad):
    torch.set_printoptions(**options)
    set_printoptions(**options)
    try:
        arr = _random_array(np.random.default_rng(seed), dtype, shape)
        floating = dtype.startswith(("float", "bfloat", "complex"))
        check(
            arr,
            "bfloat16" if dtype == "bfloat16" else None,
            requires_grad=floating and grad == "requires_grad",
            grad_fn=floating and grad == "grad_fn",
        )
    finally:
        torch.set_printoptions(profile="default")
        set_printoptions(profile="default")
