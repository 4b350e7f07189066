"""The in-place table (ops/inplace.py) against torch: values, version counter, grad_fn names,
gradients, and torch's errors (leaf, dtype)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import tapegrad

ONES = np.ones((3, 3), dtype=np.float64)
CASES = {
    "absolute_": (), "acos_": (), "arccos_": (), "arcsin_": (), "arctan_": (), "asin_": (),
    "atan_": (), "ceil_": (), "cosh_": (), "expm1_": (), "floor_": (), "log10_": (),
    "log1p_": (), "log2_": (), "negative_": (), "reciprocal_": (), "round_": (), "rsqrt_": (),
    "sign_": (), "sinh_": (), "square_": (), "tan_": (), "trunc_": (),
    "clamp_max_": (0.5,), "clamp_min_": (0.5,), "cumprod_": (0,), "cumsum_": (1,),
    "divide_": (2.0,), "true_divide_": (2.0,), "multiply_": (ONES * 3,), "subtract_": (1.0,),
    "floor_divide_": (0.3,), "fmod_": (0.3,), "remainder_": (0.3,), "lerp_": (ONES, 0.25),
    "addcdiv_": (ONES, ONES * 2), "addcmul_": (ONES, ONES * 2), "addmm_": (ONES, ONES),
    "tril_": (), "triu_": (1,), "eq_": (0.5,), "ne_": (ONES,), "lt_": (0.5,), "le_": (0.5,),
    "gt_": (0.5,), "ge_": (0.5,), "greater_": (0.5,), "greater_equal_": (0.5,),
    "less_": (0.5,), "less_equal_": (0.5,), "not_equal_": (0.5,),
    "logical_and_": (ONES,), "logical_or_": (ONES * 0,), "logical_xor_": (ONES,),
    "logical_not_": (), "t_": (), "transpose_": (0, 1), "swapaxes_": (0, 1),
    "swapdims_": (1, 0), "squeeze_": (), "unsqueeze_": (1,), "as_strided_": ((2, 2), (1, 3)),
}
NO_GRAD = {"floor_divide_"}  # torch: "the derivative for 'floor_divide' is not implemented"


def _run(lib, name, values):
    x = lib.tensor(values, requires_grad=True)
    a = x * 1
    version = a._version
    args = [lib.tensor(v) if isinstance(v, np.ndarray) else v for v in CASES[name]]
    out = getattr(a, name)(*args)
    assert out is a
    grad = None
    if name not in NO_GRAD:
        (a * lib.arange(a.numel(), dtype=a.dtype).reshape(a.shape)).sum().backward()
        grad = x.grad
    return a, a._version - version, type(a.grad_fn).__name__, grad


@pytest.mark.parametrize("name", sorted(CASES))
def test_inplace_matches_torch(name):
    values = np.random.default_rng(0).uniform(0.1, 0.9, (3, 3))
    ta, tv, tname, tgrad = _run(tapegrad, name, values)
    ra, rv, rname, rgrad = _run(torch, name, values)
    np.testing.assert_allclose(ta.detach().numpy(), ra.detach().numpy(), rtol=1e-12)
    assert tuple(ta.shape) == tuple(ra.shape)
    assert (tv, tname) == (rv, rname)
    if rgrad is not None:
        np.testing.assert_allclose(tgrad.numpy(), rgrad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("name", ["abs_", "sin_", "exp2_", "nan_to_num_", "relu_",
                                  "sigmoid_", "round_", "frac_", "logit_", "erf_", "i0_"])
def test_torch_function_forms(name):
    values = np.linspace(0.1, 0.9, 5)
    t, r = tapegrad.tensor(values), torch.tensor(values)
    assert getattr(tapegrad, name)(t) is t
    getattr(torch, name)(r)
    np.testing.assert_allclose(t.numpy(), r.numpy(), rtol=1e-12)


@pytest.mark.parametrize("call", [
    lambda m: m.arange(3).sqrt_(), lambda m: m.arange(3).div_(2),
    lambda m: m.arange(3).true_divide_(2), lambda m: m.ones(3).eq_(m.ones(2, 3)),
    lambda m: m.rand(2, 1, requires_grad=True).t_(),
    lambda m: m.rand(2, 1, requires_grad=True).acos_(),
])
def test_errors_match_torch(call):
    with pytest.raises(Exception) as expected:
        call(torch)
    with pytest.raises(type(expected.value)) as got:
        call(tapegrad)
    assert str(got.value) == str(expected.value)


def test_integer_and_bool_targets_keep_their_dtype():
    for m in (tapegrad, torch):
        assert m.arange(3, dtype=m.int32).cumsum_(0).dtype == m.int32
        assert m.arange(3).eq_(1).tolist() == [0, 1, 0]
        assert m.arange(3.0).logical_and_(m.ones(3)).tolist() == [0.0, 1.0, 1.0]


def test_inplace_on_a_view_rewrites_the_base_history():
    values = np.random.default_rng(1).uniform(0.1, 0.9, (3, 3))
    grads = []
    for m in (tapegrad, torch):
        w = m.tensor(values, requires_grad=True)
        b = w.clone()
        b[0].acos_()
        assert type(b.grad_fn).__name__ == "CopySlices"
        b.sum().backward()
        grads.append(w.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)


def test_saved_output_sees_later_inplace_changes():
    for m in (tapegrad, torch):
        w = m.rand(3, requires_grad=True)
        b = w.exp()
        b.sqrt_()
        b.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            b.sum().backward()
