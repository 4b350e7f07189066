"""The Tensor API outside autograd, compared with torch scenario by scenario.

Creation functions and dtype inference, dtype objects, type promotion (Python scalars are weak,
0-d tensors are weaker than dimensioned ones of the same category), Size and shape queries,
conversions (item, tolist, numpy, __array__, float/int/bool, to), copies (clone, contiguous,
copy_), comparisons (equal, allclose), reprs, and the error texts of common mistakes.
Each test runs its scenario on torch and on the library under test (``compare`` fixture).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from torchcompare import Raised, raised

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]


def dt(L, name):
    return getattr(L, name)


def info(t):
    """(dtype, shape, values) of a tensor, compact for promotion tables."""
    return str(t.dtype), tuple(t.shape)


# --------------------------------------------------------------------------------------------
# Creation and dtype inference
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "data",
    [
        [1, 2, 3],
        [1.0, 2.0],
        [True, False],
        [1, 2.5],
        [True, 2],
        [True, 2.5],
        [[1, 2], [3, 4]],
        [[1.5], [2.5]],
        3,
        2.5,
        False,
        [],
        [[]],
        [[1, 2.0], [3, 4]],
    ],
    ids=repr,
)
def test_tensor_dtype_inference_from_python_data(compare, data):
    """ints -> int64, floats -> float32 (default dtype), bools -> bool, mixed -> widest."""
    compare(lambda L: L.tensor(data))


def test_tensor_with_dtype_and_requires_grad(compare):
    """dtype= and requires_grad= keyword arguments of tensor()."""

    def scenario(L):
        return (
            L.tensor([1, 2], dtype=L.float64),
            L.tensor([1.7, -1.7], dtype=L.int32),
            L.tensor([0, 3], dtype=L.bool),
            L.tensor([1.0, 2.0], requires_grad=True),
            L.tensor(5, dtype=L.float16),
        )

    compare(scenario)


def test_tensor_copy_constructed_from_tensor_warns(compare):
    """tensor(t) copies and warns to use detach().clone()."""

    def scenario(L):
        t = L.tensor([1.0, 2.0])
        u = L.tensor(t)
        u[0] = 9.0
        return t, u

    rec = compare(scenario)
    assert rec.warnings and "detach().clone()" in rec.warnings[0][1]


def test_numpy_interop_memory_sharing(compare):
    """tensor() copies; as_tensor() and from_numpy() share memory with the array."""

    def scenario(L):
        arr = np.array([1.0, 2.0, 3.0])
        copied = L.tensor(arr)
        shared = L.as_tensor(arr)
        fromnp = L.from_numpy(arr)
        arr[0] = 100.0
        fromnp[1] = -5.0
        i32 = L.from_numpy(np.array([1, 2], dtype=np.int32))
        converted = L.as_tensor(arr, dtype=L.float32)
        arr[2] = 7.0
        return copied, shared, fromnp, i32, converted, arr.tolist()

    compare(scenario)


def test_from_numpy_dtypes(compare):
    """NumPy dtypes map to the corresponding tensor dtypes."""

    def scenario(L):
        names = [
            "bool",
            "uint8",
            "int8",
            "int16",
            "int32",
            "int64",
            "float16",
            "float32",
            "float64",
        ]
        return [L.from_numpy(np.zeros(2, dtype=n)).dtype for n in names]

    compare(scenario)


def test_factory_functions(compare):
    """zeros/ones/full/eye/arange/linspace: shapes given several ways, dtypes, values."""

    def scenario(L):
        return (
            L.zeros(2, 3),
            L.zeros((2, 3)),
            L.zeros([2]),
            L.zeros(()),
            L.ones(2, 3, dtype=L.int64),
            L.ones(3, requires_grad=True),
            L.full((2, 2), 7),
            L.full((2, 2), 7.5),
            L.full((2,), True),
            L.full((2, 3), 1.5, dtype=L.float64),
            L.eye(3),
            L.eye(2, 3),
            L.eye(3, dtype=L.int64),
            L.arange(5),
            L.arange(1, 4),
            L.arange(0, 1, 0.25),
            L.arange(5.0),
            L.arange(10, 0, -3),
            L.arange(0, 5, dtype=L.float64),
            L.linspace(0, 1, 5),
            L.linspace(-1, 1, steps=4),
            L.linspace(0, 10, 1),
        )

    compare(scenario)


def test_empty_has_shape_and_dtype(compare):
    """empty/empty_like: only shape and dtype are defined."""

    def scenario(L):
        e = L.empty(2, 3)
        f = L.empty((4,), dtype=L.int64)
        g = L.empty_like(L.ones(2, dtype=L.float64))
        return [(str(t.dtype), tuple(t.shape)) for t in (e, f, g)]

    compare(scenario)


def test_like_factories(compare):
    """*_like copy shape and dtype (overridable), never requires_grad unless asked."""

    def scenario(L):
        x = L.tensor([[1.0, 2.0]], dtype=L.float64, requires_grad=True)
        i = L.tensor([1, 2, 3])
        return (
            L.zeros_like(x),
            L.ones_like(x),
            L.full_like(x, 3),
            L.full_like(i, 2.7),
            L.zeros_like(i, dtype=L.float32),
            L.ones_like(x, requires_grad=True),
        )

    compare(scenario)


# --------------------------------------------------------------------------------------------
# dtypes
# --------------------------------------------------------------------------------------------


def test_dtype_objects(compare):
    """dtype objects, their aliases, reprs and properties."""

    def scenario(L):
        aliases = [
            L.float is L.float32,
            L.double is L.float64,
            L.half is L.float16,
            L.long is L.int64,
            L.int is L.int32,
            L.short is L.int16,
        ]
        props = [
            (str(d), repr(d), d.is_floating_point, d.itemsize) for d in (dt(L, n) for n in DTYPES)
        ]
        return aliases, props, L.get_default_dtype(), L.float32 == L.float32, L.float32 != L.int64

    compare(scenario)


@pytest.mark.parametrize("op", ["add", "mul", "div"])
def test_promotion_between_dimensioned_tensors(compare, op):
    """Result dtype of every pair of dtypes (both 1-D tensors), like torch's promotion table."""

    def scenario(L):
        table = {}
        for a, b in itertools.product(DTYPES, repeat=2):
            x = L.ones(2, dtype=dt(L, a))
            y = L.ones(2, dtype=dt(L, b))
            table[a, b] = raised(lambda x=x, y=y: str(getattr(L, op)(x, y).dtype))
        return table

    compare(scenario)


def test_promotion_with_zero_dim_tensors(compare):
    """A 0-d tensor only decides the dtype when its category is higher than the other's."""

    def scenario(L):
        table = {}
        for a, b in itertools.product(DTYPES, repeat=2):
            x = L.ones(2, dtype=dt(L, a))
            s = L.tensor(1, dtype=dt(L, b))
            table[a, b] = (str((x + s).dtype), str((s + x).dtype), str((s * s).dtype))
        return table

    compare(scenario)


def test_promotion_with_python_scalars(compare):
    """Python bool/int/float are weak: they only lift the category (int * 2.5 -> float32)."""

    def scenario(L):
        table = {}
        for a in DTYPES:
            x = L.ones(2, dtype=dt(L, a))
            for s in (True, 2, 2.5):
                table[a, repr(s)] = (
                    raised(lambda x=x, s=s: str((x + s).dtype)),
                    raised(lambda x=x, s=s: str((s * x).dtype)),
                    raised(lambda x=x, s=s: str((x / s).dtype)),
                )
        return table

    compare(scenario)


def test_promotion_examples(compare):
    """The classic cases, with values."""

    def scenario(L):
        i = L.tensor([1, 2])
        f = L.tensor([1.0, 2.0])
        return (
            i * 2.5,
            f * 2.0,
            L.tensor([1, 2], dtype=L.int32) + i,
            L.tensor([200], dtype=L.uint8) + L.tensor([-1], dtype=L.int8),
            L.tensor([True]) + 1,
            L.tensor([1.0], dtype=L.float16) + f,
            i / 2,
            i // 2,
            L.tensor(2.5, dtype=L.float64) * f,
            i + L.tensor(2.5),
        )

    compare(scenario)


def test_inplace_ops_cannot_change_dtype(compare):
    """In-place results keep self's dtype; a wider category is an error."""

    def scenario(L):
        i = L.tensor([1, 2])
        f = L.tensor([1.0, 2.0])
        f.add_(L.tensor([1, 1]))
        f.mul_(L.tensor(2.0, dtype=L.float64))

        def iadd():
            j = L.tensor([1, 2])
            j += 2.5

        return raised(lambda: i.add_(2.5)), raised(iadd), f

    rec = compare(scenario)
    assert isinstance(rec.result[0], Raised)


# --------------------------------------------------------------------------------------------
# Shape queries, Size
# --------------------------------------------------------------------------------------------


def test_size_and_shape(compare):
    """Size repr, indexing, slicing, equality with tuples; size(dim); ndim, dim(), numel()."""

    def scenario(L):
        t = L.zeros(2, 3, 4)
        s = t.shape
        return (
            repr(s),
            str(s),
            s,
            s[1],
            s[-1],
            repr(s[1:]),
            s == (2, 3, 4),
            isinstance(s, tuple),
            t.size(),
            t.size(1),
            t.size(-1),
            t.ndim,
            t.dim(),
            t.numel(),
            s.numel(),
            len(t),
            repr(L.tensor(1.0).shape),
            repr(L.Size([2, 3])),
            L.zeros(L.Size([2, 1])).shape,
            repr(s + (5,)),
            repr((1,) + s[1:]),
        )

    compare(scenario)


def test_tensor_attributes(compare):
    """dtype, device, is_leaf, requires_grad, grad_fn on leaves and results."""

    def scenario(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        return (
            x.dtype,
            repr(x.device),
            str(x.device),
            x.is_leaf,
            y.is_leaf,
            L.tensor([1]).is_leaf,
            x.grad_fn,
            y.requires_grad,
            x.is_floating_point(),
            L.tensor([1]).is_floating_point(),
        )

    compare(scenario)


# --------------------------------------------------------------------------------------------
# Conversions
# --------------------------------------------------------------------------------------------


def test_item_and_tolist(compare):
    """item() gives Python scalars of the matching type; tolist() nests lists."""

    def scenario(L):
        return (
            L.tensor(2.5).item(),
            L.tensor([3]).item(),
            L.tensor(True).item(),
            L.tensor([[1, 2], [3, 4]]).tolist(),
            L.tensor([1.5, 2.5], requires_grad=True).tolist(),
            L.tensor(7).tolist(),
            L.tensor([True, False]).tolist(),
            (L.tensor([0.5], requires_grad=True) * 2).item(),
        )

    compare(scenario)


def test_numpy_and_array_protocol(compare):
    """numpy() shares memory; np.asarray uses __array__; requires-grad tensors refuse."""

    def scenario(L):
        t = L.tensor([1.0, 2.0])
        n = t.numpy()
        n[0] = 10.0
        x = L.tensor([1.0], requires_grad=True)
        return (
            t,
            n.dtype.name,
            np.asarray(L.tensor([1, 2])).dtype.name,
            np.asarray(L.tensor([[1.0, 2.0]], dtype=L.float64)),
            raised(x.numpy),
            raised(np.asarray, x),
            x.detach().numpy(),
        )

    rec = compare(scenario)
    assert rec.result[4] == Raised(
        "RuntimeError",
        "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.",
    )


def test_python_number_conversions(compare):
    """float(), int(), bool() on one-element tensors; bool() of many elements is ambiguous."""

    def scenario(L):
        return (
            float(L.tensor([2.5])),
            int(L.tensor(3.9)),
            int(L.tensor([-3.9])),
            bool(L.tensor([0.0])),
            bool(L.tensor(2)),
            raised(bool, L.tensor([1, 2])),
            raised(float, L.tensor([1.0, 2.0])),
            raised(len, L.tensor(1.0)),
        )

    compare(scenario)


def test_dtype_conversions(compare):
    """to(dtype), to(tensor), double(), float(), long(), int(), bool(), half(): values and grad."""

    def scenario(L):
        x = L.tensor([1.7, -2.2, 0.0], requires_grad=True)
        y = x.to(L.float64)
        y.sum().backward()
        return (
            y,
            x.to(L.float32) is x,
            x.to(L.tensor([1])),
            x.double(),
            x.detach().long(),
            x.detach().int(),
            x.detach().bool(),
            x.detach().half(),
            L.tensor([1, 2]).float(),
            x.to(dtype=L.float16),
            x.grad,
        )

    compare(scenario)


# --------------------------------------------------------------------------------------------
# Copies and comparisons
# --------------------------------------------------------------------------------------------


def test_clone_contiguous_copy(compare):
    """clone() owns its memory; contiguous() returns self when already contiguous; copy_()."""

    def scenario(L):
        a = L.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        c = a.clone()
        c[0, 0] = -1.0
        t = a.t()
        tc = t.contiguous()
        dst = L.zeros(2, 3, dtype=L.float64)
        dst.copy_(L.tensor([1, 2, 3]))  # broadcasts and converts
        x = L.tensor([1.0, 2.0], requires_grad=True)
        cl = x.clone()
        return (
            a,
            c,
            a.contiguous() is a,
            t.is_contiguous(),
            tc.is_contiguous(),
            tc,
            dst,
            cl,
            cl.is_leaf,
        )

    compare(scenario)


def test_copy_into_leaf_tensor_records_grad(compare):
    """copy_ of a requires-grad source into a plain tensor records CopyBackwards."""

    def scenario(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        dst = L.zeros(2)
        dst.copy_(x * 3)
        dst.sum().backward()
        return dst, x.grad

    compare(scenario)


def test_equal_and_allclose(compare):
    """equal() needs same shape and values; allclose() uses rtol/atol and equal_nan."""

    def scenario(L):
        a = L.tensor([1.0, 2.0])
        nan = L.tensor([float("nan"), 1.0])
        return (
            L.equal(a, L.tensor([1.0, 2.0])),
            a.equal(L.tensor([1.0, 2.5])),
            L.equal(a, L.tensor([1.0, 2.0, 3.0])),
            L.allclose(a, a + 1e-9),
            a.allclose(a + 1e-3),
            L.allclose(a, a + 1e-3, atol=1e-2),
            L.allclose(nan, nan),
            L.allclose(nan, nan, equal_nan=True),
        )

    compare(scenario)


# --------------------------------------------------------------------------------------------
# Reprs
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "build",
    [
        lambda L: L.tensor([1, 2, 3]),
        lambda L: L.tensor([1.0, 2.5, -3.0]),
        lambda L: L.tensor([1.0, 2.0], dtype=L.float64),
        lambda L: L.tensor([1, 2], dtype=L.int32),
        lambda L: L.tensor([True, False]),
        lambda L: L.tensor(3.5),
        lambda L: L.tensor([]),
        lambda L: L.zeros(0, 3),
        lambda L: L.tensor([1e10, 1e-3]),
        lambda L: L.tensor([[1.0, 2.0], [3.0, 4.0]]),
        lambda L: L.tensor([0.1, 100.25, 1234.5]),
        lambda L: L.tensor([1.0, 2.0], dtype=L.float16),
        lambda L: L.tensor([float("nan"), float("inf"), -1.0]),
        lambda L: L.arange(2000),
        lambda L: L.ones(2, 3, 4),
        lambda L: L.tensor([1.0, 2.0], requires_grad=True),
        lambda L: L.tensor([1.0, 2.0], requires_grad=True) * 2,
        lambda L: L.tensor([1.0, 2.0], dtype=L.float64, requires_grad=True).sum(),
    ],
)
def test_tensor_repr(compare, build):
    """repr/str of tensors of several dtypes, shapes and grad states equal torch's."""

    def scenario(L):
        t = build(L)
        return repr(t), str(t)

    compare(scenario)


# --------------------------------------------------------------------------------------------
# Error texts
# --------------------------------------------------------------------------------------------

ERROR_CASES = {
    "broadcast": lambda L: L.ones(2, 3) + L.ones(2, 5),
    "mm": lambda L: L.ones(4, 5) @ L.ones(3, 2),
    "mm-function": lambda L: L.mm(L.ones(4, 5), L.ones(3, 2)),
    "matmul-1d-1d": lambda L: L.ones(3) @ L.ones(4),
    "matmul-2d-1d": lambda L: L.ones(4, 5) @ L.ones(3),
    "matmul-1d-2d": lambda L: L.ones(3) @ L.ones(4, 5),
    "matmul-batched": lambda L: L.ones(2, 3, 4) @ L.ones(2, 5, 6),
    "matmul-batch-broadcast": lambda L: L.ones(2, 3, 4) @ L.ones(3, 4, 5),
    "bmm": lambda L: L.bmm(L.ones(2, 3, 4), L.ones(2, 5, 6)),
    "matmul-0d": lambda L: L.tensor(1.0) @ L.ones(2),
    "item-many": lambda L: L.tensor([1.0, 2.0, 3.0]).item(),
    "index-out-of-range": lambda L: L.ones(3)[5],
    "index-out-of-range-dim1": lambda L: L.ones(2, 3)[0, -4],
    "index-list-out-of-range": lambda L: L.ones(3)[[0, 5]],
    "too-many-indices": lambda L: L.ones(3)[0, 0],
    "view-bad-shape": lambda L: L.ones(2, 3).view(5),
    "view-non-contiguous": lambda L: L.ones(2, 3).t().view(6),
    "reshape-two-minus-one": lambda L: L.ones(6).reshape(-1, -1),
    "cat-mismatch": lambda L: L.cat([L.ones(2, 3), L.ones(2, 4)]),
    "stack-mismatch": lambda L: L.stack([L.ones(2), L.ones(3)]),
    "ragged-list": lambda L: L.tensor([[1, 2], [3]]),
    "dim-out-of-range": lambda L: L.ones(2, 3).sum(3),
    "expand-invalid": lambda L: L.ones(3).expand(2, 4),
    "squeeze-dim-out-of-range": lambda L: L.ones(2, 1).squeeze(2),
    "mask-shape": lambda L: L.ones(2, 3)[L.tensor([True, False, True])],
    "gather-index-dtype": lambda L: L.ones(2, 3).gather(1, L.tensor([[0.0]])),
    "where-shapes": lambda L: L.where(L.tensor([True, False]), L.ones(3), L.zeros(3)),
    "int-requires-grad-factory": lambda L: L.ones(2, dtype=L.int64, requires_grad=True),
}


@pytest.mark.parametrize("case", sorted(ERROR_CASES))
def test_error_messages(compare, case):
    """Common mistakes raise torch's exception type and exact message."""
    rec = compare(ERROR_CASES[case])
    assert isinstance(rec.result, Raised), f"torch did not raise for {case}"


def test_well_known_error_texts(compare):
    """A few messages users search for, pinned verbatim."""

    def scenario(L):
        return (
            raised(lambda: L.ones(4, 5) @ L.ones(3, 2)),
            raised(lambda: L.ones(2, 3) + L.ones(2, 5)),
            raised(lambda: L.tensor([1.0, 2.0, 3.0]).item()),
        )

    rec = compare(scenario)
    assert rec.result == (
        Raised("RuntimeError", "mat1 and mat2 shapes cannot be multiplied (4x5 and 3x2)"),
        Raised(
            "RuntimeError",
            "The size of tensor a (3) must match the size of tensor b (5) at non-singleton "
            "dimension 1",
        ),
        Raised("RuntimeError", "a Tensor with 3 elements cannot be converted to Scalar"),
    )
