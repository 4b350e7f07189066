"""Every sample in ``op_samples.SAMPLES`` is run on the library under test and on real torch.

For each sample we check, against torch:

* forward values, dtype and shape, in float64 (with grad) and float32 (without grad);
* first-order gradients through ``autograd.grad`` with the same random cotangents;
* second-order gradients (grad of a random weighting of the create_graph first-order grads),
  with an undefined (None) gradient counted as zeros, as gradgradcheck does;
* which first-order grads carry history under ``create_graph=True`` (``requires_grad``);
* the output's ``grad_fn`` class name and ``name()``;
* the library's own ``gradcheck`` and ``gradgradcheck`` on the sample.

Plus a hypothesis test of broadcasting for the binary elementwise ops, and a coverage test that
every op node in tapegrad's registry is exercised by some sample.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes
from op_samples import SAMPLES, OpSample
from torchcompare import assert_values, dtype_name, is_tensor, to_numpy

F64_TOL = {"rtol": 1e-7, "atol": 1e-12}
F32_TOL = {"rtol": 1e-5, "atol": 1e-6}


def _ids(samples: list[OpSample]) -> list[str]:
    return [s.id for s in samples]


def _has_float_arg(s: OpSample) -> bool:
    return any(a.floating for a in s.args)


FORWARD = SAMPLES
FLOAT32 = [s for s in SAMPLES if s.float32 and _has_float_arg(s)]
GRAD = [s for s in SAMPLES if s.differentiable]
GRADGRAD = [s for s in GRAD if s.gradgrad]


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


def flatten(out) -> list:
    """The tensors of an op result (a tensor, a tuple, a namedtuple/return_types, nested)."""
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in flatten(o)]
    return [out]


def result_kind(out) -> tuple:
    """What an op returned: a tensor, a tuple/list (with length) or a named result type."""
    if isinstance(out, tuple) and type(out) is not tuple:
        return ("named", type(out).__name__, len(out))
    if isinstance(out, (tuple, list)):
        return (type(out).__name__, len(out))
    return ("tensor",) if is_tensor(out) else (type(out).__name__,)


def is_floating(t) -> bool:
    return dtype_name(t.dtype).startswith(("float", "bfloat", "half", "double"))


def run(sample: OpSample, L, dtype="float64", requires_grad=True):
    """Build the inputs in ``L`` and call the sample: ``(inputs, raw result, flat outputs)``."""
    inputs = sample.make_inputs(L, dtype, requires_grad)
    result = sample.fn(L, *inputs)
    return inputs, result, flatten(result)


def random_like(seed: int, shapes: list[tuple[int, ...]]) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape) for shape in shapes]


def first_order(sample: OpSample, L, create_graph=False):
    """``autograd.grad`` of the sample's differentiable outputs with fixed random cotangents."""
    inputs, _, outs = run(sample, L)
    diff_outs = [o for o in outs if o.requires_grad]
    diff_ins = [inputs[i] for i in sample.diff_positions()]
    cots = random_like(sample.seed + 1, [tuple(o.shape) for o in diff_outs])
    grads = L.autograd.grad(
        diff_outs,
        diff_ins,
        grad_outputs=[L.tensor(c) for c in cots],
        create_graph=create_graph,
        allow_unused=True,
    )
    return inputs, outs, diff_ins, grads


def second_order(sample: OpSample, L):
    """Grad w.r.t. the inputs of sum(first-order grad * random weights); None where unused."""
    _, _, diff_ins, grads = first_order(sample, L, create_graph=True)
    weights = random_like(sample.seed + 2, [tuple(x.shape) for x in diff_ins])
    terms = [
        (g * L.tensor(w)).sum()
        for g, w in zip(grads, weights, strict=True)
        if g is not None and g.requires_grad
    ]
    if not terms:  # the first-order grads do not depend on the inputs at all
        return [None] * len(diff_ins)
    total = terms[0]
    for t in terms[1:]:
        total = total + t
    return list(L.autograd.grad(total, diff_ins, allow_unused=True))


def node_names(outs) -> list:
    return [
        None if o.grad_fn is None else (type(o.grad_fn).__name__, o.grad_fn.name()) for o in outs
    ]


def assert_grads_equal(expected, actual, shapes, none_is_zero=False, what="grad") -> None:
    assert len(actual) == len(expected), f"{what}: {len(actual)} grads, torch gives {len(expected)}"
    for k, (e, a, shape) in enumerate(zip(expected, actual, shapes, strict=True)):
        label = f"{what} of input {k}"
        if none_is_zero:
            e_arr = np.zeros(shape) if e is None else to_numpy(e)
            a_arr = np.zeros(shape) if a is None else to_numpy(a)
        else:
            assert (e is None) == (a is None), f"{label}: torch gives {e}, lib gives {a}"
            if e is None:
                continue
            e_arr, a_arr = to_numpy(e), to_numpy(a)
            assert dtype_name(a.dtype) == dtype_name(e.dtype), label
        assert_values(e_arr, a_arr, what=label, **F64_TOL)


# --------------------------------------------------------------------------------------------
# a. forward values
# --------------------------------------------------------------------------------------------


def check_forward(sample: OpSample, lib, dtype: str, requires_grad: bool, tol: dict) -> None:
    _, expected_raw, expected = run(sample, torch, dtype, requires_grad)
    _, actual_raw, actual = run(sample, lib, dtype, requires_grad)
    assert result_kind(actual_raw) == result_kind(expected_raw), "kind of result"
    if result_kind(expected_raw)[0] == "named":  # torch.return_types.max & co.
        for field in ("values", "indices"):
            assert hasattr(actual_raw, field) == hasattr(expected_raw, field), field
    assert len(actual) == len(expected), "number of outputs"
    for k, (e, a) in enumerate(zip(expected, actual, strict=True)):
        label = f"output {k}"
        assert dtype_name(a.dtype) == dtype_name(e.dtype), f"{label} dtype"
        assert tuple(a.shape) == tuple(e.shape), f"{label} shape"
        assert a.requires_grad == e.requires_grad, f"{label} requires_grad"
        assert_values(to_numpy(e), to_numpy(a), what=label, **tol)


@pytest.mark.parametrize("sample", FORWARD, ids=_ids(FORWARD))
def test_forward_float64(lib, sample):
    """Forward dtype, shape and values match torch (float64 inputs that require grad)."""
    check_forward(sample, lib, "float64", True, F64_TOL)


@pytest.mark.parametrize("sample", FLOAT32, ids=_ids(FLOAT32))
def test_forward_float32(lib, sample):
    """Forward in float32 without grad: results stay float32 and match torch's values."""
    check_forward(sample, lib, "float32", False, F32_TOL)


# --------------------------------------------------------------------------------------------
# b. first-order gradients, c. second-order gradients
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("sample", GRAD, ids=_ids(GRAD))
def test_first_order_grads(lib, sample):
    """autograd.grad with the same cotangents gives torch's gradients (None where torch's is)."""
    _, _, diff_ins, expected = first_order(sample, torch)
    _, _, _, actual = first_order(sample, lib)
    assert_grads_equal(expected, actual, [tuple(x.shape) for x in diff_ins])


@pytest.mark.parametrize("sample", GRADGRAD, ids=_ids(GRADGRAD))
def test_second_order_grads(lib, sample):
    """Differentiating the create_graph gradients again gives torch's values (None == zeros)."""
    expected = second_order(sample, torch)
    actual = second_order(sample, lib)
    shapes = [tuple(sample.args[i].shape) for i in sample.diff_positions()]
    assert_grads_equal(expected, actual, shapes, none_is_zero=True, what="second-order grad")


@pytest.mark.parametrize("sample", GRADGRAD, ids=_ids(GRADGRAD))
def test_create_graph_grads_have_history_like_torch(lib, sample):
    """With create_graph=True a first-order grad requires grad exactly when torch's does."""
    _, _, _, expected = first_order(sample, torch, create_graph=True)
    _, _, _, actual = first_order(sample, lib, create_graph=True)
    flags = [[None if g is None else g.requires_grad for g in gs] for gs in (expected, actual)]
    assert flags[1] == flags[0], f"requires_grad of grads: torch {flags[0]}, lib {flags[1]}"


# --------------------------------------------------------------------------------------------
# d. grad_fn names
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("sample", FORWARD, ids=_ids(FORWARD))
def test_grad_fn_names(lib, sample):
    """Each output's grad_fn class name and name() (or None) equal torch's."""
    _, _, expected = run(sample, torch)
    _, _, actual = run(sample, lib)
    assert node_names(actual) == node_names(expected)
    assert [o.is_leaf for o in actual] == [o.is_leaf for o in expected]


# --------------------------------------------------------------------------------------------
# e. the library's own gradcheck / gradgradcheck
# --------------------------------------------------------------------------------------------


def _checker_inputs(sample: OpSample, lib):
    inputs = sample.make_inputs(lib)
    positions = sample.diff_positions()

    def fn(*diff):
        args = list(inputs)
        for p, t in zip(positions, diff, strict=True):
            args[p] = t
        return tuple(o for o in flatten(sample.fn(lib, *args)) if is_floating(o))

    return fn, tuple(inputs[p] for p in positions)


@pytest.mark.parametrize("sample", GRAD, ids=_ids(GRAD))
def test_gradcheck(lib, sample):
    """lib.autograd.gradcheck (finite differences, float64) passes."""
    fn, inputs = _checker_inputs(sample, lib)
    assert lib.autograd.gradcheck(fn, inputs)


@pytest.mark.parametrize("sample", GRADGRAD, ids=_ids(GRADGRAD))
def test_gradgradcheck(lib, sample):
    """lib.autograd.gradgradcheck (second-order finite differences, float64) passes."""
    fn, inputs = _checker_inputs(sample, lib)
    assert lib.autograd.gradgradcheck(fn, inputs)


# --------------------------------------------------------------------------------------------
# Broadcasting, drawn by hypothesis
# --------------------------------------------------------------------------------------------

BINARY = {
    "add": lambda L, a, b: a + b,
    "sub": lambda L, a, b: a - b,
    "mul": lambda L, a, b: a * b,
    "div": lambda L, a, b: a / b,
    "pow": lambda L, a, b: a**b,
    "maximum": lambda L, a, b: L.maximum(a, b),
    "minimum": lambda L, a, b: L.minimum(a, b),
    "where": lambda L, a, b, c: L.where(c, a, b),
}


def _broadcast_values(op: str, shapes, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shapes[0])
    b = rng.standard_normal(shapes[1])
    if op == "pow":
        a = rng.uniform(0.5, 2.0, shapes[0])  # positive base
    if op == "div":
        b = rng.uniform(0.5, 2.0, shapes[1]) * rng.choice([-1.0, 1.0], shapes[1])
    arrays = [a, b]
    if op == "where":
        arrays.append(rng.random(shapes[2]) < 0.5)
    return arrays


def _forward_and_grad(L, op: str, arrays: list[np.ndarray], seed: int):
    tensors = [
        L.tensor(x, requires_grad=True) if x.dtype == np.float64 else L.tensor(x) for x in arrays
    ]
    out = BINARY[op](L, *tensors)
    cot = np.random.default_rng(seed + 1).standard_normal(tuple(out.shape))
    grads = L.autograd.grad(out, tensors[:2], grad_outputs=L.tensor(cot))
    return out, grads


@pytest.mark.parametrize("op", sorted(BINARY))
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_broadcasting_binary_ops(lib, op, data):
    """Binary ops on mutually broadcastable shapes: output shape, values and reduced grads."""
    num_shapes = 3 if op == "where" else 2
    shapes = data.draw(
        mutually_broadcastable_shapes(num_shapes=num_shapes, max_dims=4, max_side=4), "shapes"
    ).input_shapes
    seed = data.draw(st.integers(0, 2**31 - 1), "seed")
    arrays = _broadcast_values(op, shapes, seed)
    e_out, e_grads = _forward_and_grad(torch, op, arrays, seed)
    a_out, a_grads = _forward_and_grad(lib, op, arrays, seed)
    assert tuple(a_out.shape) == tuple(e_out.shape)
    assert dtype_name(a_out.dtype) == dtype_name(e_out.dtype)
    assert_values(to_numpy(e_out), to_numpy(a_out), what="forward", **F64_TOL)
    assert_grads_equal(e_grads, a_grads, [tuple(np.shape(x)) for x in arrays[:2]])


# --------------------------------------------------------------------------------------------
# Coverage: every op node in tapegrad's registry is exercised by some sample
# --------------------------------------------------------------------------------------------


def _reachable_node_names(tensors) -> set[str]:
    seen: set[int] = set()
    names: set[str] = set()
    stack = [t.grad_fn for t in tensors if t is not None and t.grad_fn is not None]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        names.add(type(node).__name__)
        stack.extend(nxt for nxt, _ in node.next_functions)
    return names


def test_every_registered_op_has_samples(lib, lib_name):
    """All node names in tapegrad.ops._registry.REGISTRY are reached by running the samples."""
    if lib_name == "torch":
        pytest.skip("coverage of tapegrad's op registry: only meaningful when lib is tapegrad")
    from tapegrad.ops._registry import REGISTRY

    exercised: set[str] = set()
    for sample in SAMPLES:
        try:
            _, _, outs = run(sample, lib)
            exercised |= _reachable_node_names(outs)
            if sample.differentiable and sample.gradgrad:
                _, _, _, grads = first_order(sample, lib, create_graph=True)
                exercised |= _reachable_node_names(grads)
        except Exception:  # noqa: BLE001 - failures are reported by the other tests
            continue
    from tapegrad.ops import complex as complex_ops  # tests/ops/test_complex.py
    from tapegrad.ops import fft as fft_ops  # torch's OpInfo: tests/ops/test_opinfo.py
    from tapegrad.ops import grouped_mm as grouped_mm_ops  # tests/ops/test_grouped_mm.py
    from tapegrad.ops import (
        nn_ops,
        resample_aa,  # antialiased and lanczos interpolation: tests/ops/test_resample_aa.py
        spatial,  # grid_sample, fractional pooling: tests/nn/test_spatial.py
        view_copies,
        view_scatter,
    )

    # entries without a node (non-differentiable ops, ``nondiff``) record nothing in the graph;
    # the fused neural-network entries (the families ops/nn_ops.py lists) have their own table
    # and coverage test in tests/nn/test_functional.py (test_every_nn_entry_is_exercised)
    from tapegrad.ops import rnn as rnn_ops  # recurrent layers: tests/nn/test_rnn.py

    registered = {
        name: op.node
        for name, op in REGISTRY.items()
        if getattr(op, "node", None) and op.differentiable
        and name not in nn_ops.NAMES and name not in rnn_ops.NAMES
        and name not in spatial.NAMES and name not in complex_ops.NAMES
        and name not in resample_aa.NAMES
        and name not in fft_ops.NAMES
        and name not in view_scatter.NAMES  # tests/ops/test_view_scatter.py
        and name not in view_copies.NAMES  # made on first use: the *_copy OpInfo entries
        and name not in grouped_mm_ops.NAMES
        # the identity nodes that name torch's chunked linear_cross_entropy (reached through
        # LinearCrossEntropyOptions, which tapegrad lacks: the op_db entries ...chunked*), and the
        # zero-derivative links of second-order nodes (reached by the op_db second-order checks)
        and not name.startswith(("linear_cross_entropy_chunked", "link:"))
        # torchvision's ops register when tapegrad.vision.ops is first imported, whichever test
        # does it: tests/vision/ops runs their samples and gradients
        and not name.startswith("torchvision.")
    }
    missing = sorted(
        f"{name} ({node})" for name, node in registered.items() if node not in exercised
    )
    assert not missing, f"registry ops without a sample reaching their node: {missing}"


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("k", [4096, 5000, 18432])
def test_long_inner_dimension_products(lib, dtype, k):
    """A product with a small result and a long inner dimension (tapegrad splits it into
    pieces, ops/linalg.py): mm, addmm and F.linear, values and gradients against torch; the
    inner sizes cover an exact split, a remainder and the CNN benchmark's linear layer."""
    rng = np.random.default_rng(k)
    x0, w0, b0 = rng.standard_normal((7, k)), rng.standard_normal((3, k)), rng.standard_normal(3)
    g0 = rng.standard_normal((7, 3))
    tol = F64_TOL if dtype == "float64" else F32_TOL

    def run(L):
        x, w, b = (L.tensor(a, dtype=getattr(L, dtype), requires_grad=True) for a in (x0, w0, b0))
        outs = [x.mm(w.t()), L.addmm(b, x, w.t()), L.nn.functional.linear(x, w, b)]
        grads = L.autograd.grad(outs, (x, w, b), [L.tensor(g0, dtype=getattr(L, dtype))] * 3)
        return [to_numpy(t) for t in outs + list(grads)]

    for want, got in zip(run(torch), run(lib), strict=True):
        assert got.dtype == want.dtype
        assert_values(want, got, **tol)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("shape", [(1024, 1024), (70001,), (3, 129, 257), (300, 500)],
                         ids=["rows", "remainder", "odd", "strided"])
def test_large_totals(lib, dtype, shape):
    """A large float ``sum()`` (tapegrad runs it as a BLAS matrix-vector product in rows of
    128, ops/reduction.py): values, dtype and NaN/inf propagation against torch, a
    non-contiguous input (the plain reduction) included, and the gradient."""
    rng = np.random.default_rng(len(shape))
    a0 = rng.standard_normal(shape)
    special = a0.copy()
    special.flat[[7, -1]] = [np.inf, np.nan]
    tol = F64_TOL if dtype == "float64" else F32_TOL

    def run(L):
        outs = []
        for arr in (a0, special, -np.abs(a0)):
            x = L.tensor(arr, dtype=getattr(L, dtype), requires_grad=True)
            if shape == (300, 500):
                x = x.t()
            total = x.sum()
            (g,) = L.autograd.grad(total * 2, (x,))
            outs += [to_numpy(total), to_numpy(g)]
        return outs

    for want, got in zip(run(torch), run(lib), strict=True):
        assert got.dtype == want.dtype
        assert_values(want, got, **tol)
