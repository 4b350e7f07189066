"""nn.utils compared with torch: clip_grad_norm_ (total norm and clipped gradients, every
norm type), clip_grad_value_, parameters_to_vector / vector_to_parameters, and their errors
and warnings.
"""

from __future__ import annotations

import numpy as np
import pytest
from torchcompare import raised, to_numpy


def _params(L, dtype="float32", scale=1.0):
    rng = np.random.default_rng(0)
    shapes = [(3, 4), (4,), (2, 2, 3), (1,)]
    ps = []
    for i, s in enumerate(shapes):
        p = L.nn.Parameter(L.tensor(rng.standard_normal(s).astype(dtype)))
        if i != 3:  # the last parameter has no gradient
            p.grad = L.tensor((scale * rng.standard_normal(s)).astype(dtype))
        ps.append(p)
    return ps


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, float("inf"), 0.5])
@pytest.mark.parametrize("max_norm", [0.5, 1e6])
def test_clip_grad_norm(compare, norm_type, max_norm, dtype):
    def scenario(L):
        ps = _params(L, dtype)
        total = L.nn.utils.clip_grad_norm_(ps, max_norm, norm_type=norm_type)
        return total, [p.grad for p in ps]

    compare(scenario, rtol=1e-6 if dtype == "float32" else 1e-12)


def test_clip_grad_norm_model_and_generator(compare):
    def scenario(L):
        L.manual_seed(0)
        m = L.nn.Sequential(L.nn.Linear(4, 3), L.nn.Tanh(), L.nn.Linear(3, 2))
        m(L.randn(5, 4)).pow(2).sum().backward()
        total = L.nn.utils.clip_grad_norm_(m.parameters(), 0.1)
        after = L.nn.utils.clip_grad_norm_(m.parameters(), 1e9)
        return total, after, [p.grad for p in m.parameters()]

    compare(scenario, rtol=1e-5)


def test_clip_grad_norm_edge_cases(compare):
    def scenario(L):
        p = L.nn.Parameter(L.ones(3))
        p.grad = L.tensor([3.0, 0.0, 4.0])
        single = L.nn.utils.clip_grad_norm_(p, 1.0)  # a lone tensor
        none = L.nn.utils.clip_grad_norm_([L.nn.Parameter(L.ones(2))], 1.0)
        empty_gen = L.nn.utils.clip_grad_norm_((q for q in []), 1.0)
        bad = L.nn.Parameter(L.ones(2))
        bad.grad = L.tensor([float("inf"), 1.0])
        err = raised(L.nn.utils.clip_grad_norm_, [bad], 1.0, error_if_nonfinite=True)
        nan_total = L.nn.utils.clip_grad_norm_([bad], 1.0)
        return single, p.grad, none, empty_gen, err, nan_total, bad.grad

    compare(scenario)


def test_clip_grad_norm_deprecated_alias(compare):
    def scenario(L):
        p = L.nn.Parameter(L.ones(2))
        p.grad = L.tensor([3.0, 4.0])
        return L.nn.utils.clip_grad_norm(p, 2.5), p.grad

    compare(scenario)


def test_clip_grad_norm_result_is_detached_and_grads_in_place(compare):
    def scenario(L):
        p = L.nn.Parameter(L.ones(2))
        p.grad = L.tensor([3.0, 4.0])
        g = p.grad
        total = L.nn.utils.clip_grad_norm_([p], 1.0)
        return total.requires_grad, total.grad_fn, p.grad is g, g

    compare(scenario)


def test_clip_grad_value(compare):
    def scenario(L):
        ps = _params(L, scale=3.0)
        g_before = ps[0].grad
        out = L.nn.utils.clip_grad_value_(ps, 1.5)
        single = L.nn.Parameter(L.ones(2))
        single.grad = L.tensor([-5.0, 0.25])
        L.nn.utils.clip_grad_value_(single, 0.5)
        return out, [p.grad for p in ps], ps[0].grad is g_before, single.grad

    compare(scenario)


def test_parameters_to_vector_and_back(compare):
    def scenario(L):
        L.manual_seed(0)
        m = L.nn.Linear(3, 2)
        v = L.nn.utils.parameters_to_vector(m.parameters())
        w = m.weight
        L.nn.utils.vector_to_parameters(L.arange(8.0), m.parameters())
        return (v, v.grad_fn, m.weight, m.bias, m.weight is w, type(m.weight).__name__,
                raised(L.nn.utils.vector_to_parameters, [1.0], m.parameters()))

    compare(scenario)


def test_parameters_to_vector_is_differentiable(compare):
    def scenario(L):
        m = L.nn.Linear(2, 1)
        v = L.nn.utils.parameters_to_vector(m.parameters())
        (v * L.arange(3.0)).sum().backward()
        return m.weight.grad, m.bias.grad

    compare(scenario)


def test_clip_values_match_torch_exactly_float32(lib, oracle):
    """Total norm and clipped gradients agree to float32 rounding."""

    def run(L):
        ps = _params(L, scale=10.0)
        total = L.nn.utils.clip_grad_norm_(ps, 2.0)
        return to_numpy(total), [to_numpy(p.grad) for p in ps if p.grad is not None]

    (lt, lg), (tt, tg) = run(lib), run(oracle)
    np.testing.assert_allclose(lt, tt, rtol=1e-6)
    for a, b in zip(lg, tg, strict=True):
        np.testing.assert_allclose(a, b, rtol=2e-6, atol=1e-7)
