"""``tapegrad.func`` against ``torch.func``: every transform on the same functions, compositions
(grad of grad, jacrev of jacfwd, vmap of grad, ...), argnums / has_aux, functional_call, and the
issue's targets: the Hessian of a 100-parameter function and a Hessian-vector product through a
2-layer MLP, equal to torch's to 1e-10 in float64."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torchcompare import to_numpy

TOL = {"rtol": 1e-10, "atol": 1e-10}


def _same(a, b) -> None:
    if isinstance(a, (tuple, list)):
        assert isinstance(b, (tuple, list)) and len(a) == len(b), (type(a), type(b))
        for x, y in zip(a, b, strict=True):
            _same(x, y)
        return
    if isinstance(a, dict):
        assert sorted(a) == sorted(b)
        for k in a:
            _same(a[k], b[k])
        return
    assert tuple(a.shape) == tuple(b.shape)
    assert a.requires_grad == b.requires_grad, "requires_grad"
    np.testing.assert_allclose(to_numpy(b.detach()), to_numpy(a.detach()), **TOL)


def _x(L, *shape, seed=0):
    rng = np.random.default_rng(seed)
    return L.tensor(rng.standard_normal(shape))


def f_scalar(L, x):
    return (x.sin() * x ** 2).sum() + (x.exp() * 0.1).prod()


def f_vector(L, x):
    return (x.tanh() * x.sum()).cumsum(0)


def f_two(L, x, y):
    return (x * y.sin()).sum() + (x ** 2).sum() * y.sum()


SCENARIOS = {
    "grad": lambda L: L.func.grad(lambda x: f_scalar(L, x))(_x(L, 5)),
    "grad_argnums_tuple": lambda L: L.func.grad(lambda x, y: f_two(L, x, y), argnums=(0, 1))(
        _x(L, 4), _x(L, 4, seed=1)),
    "grad_argnums_1": lambda L: L.func.grad(lambda x, y: f_two(L, x, y), argnums=1)(
        _x(L, 4), _x(L, 4, seed=1)),
    "grad_has_aux": lambda L: L.func.grad(lambda x: (f_scalar(L, x), x.cos()), has_aux=True)(
        _x(L, 3)),
    "grad_dict_input": lambda L: L.func.grad(lambda p: (p["a"] * p["b"]).sum())(
        {"a": _x(L, 3), "b": _x(L, 3, seed=2)}),
    "grad_and_value": lambda L: L.func.grad_and_value(lambda x: f_scalar(L, x))(_x(L, 5)),
    "grad_of_grad": lambda L: L.func.grad(lambda x: L.func.grad(
        lambda y: (y ** 4).sum())(x).sum())(_x(L, 4)),
    "vjp": lambda L: (lambda r: (r[0], r[1](_x(L, 6, seed=3))))(
        L.func.vjp(lambda x: f_vector(L, x), _x(L, 6))),
    "vjp_has_aux": lambda L: (lambda r: (r[0], r[1](_x(L, 6, seed=3)), r[2]))(
        L.func.vjp(lambda x: (f_vector(L, x), x.sum()), _x(L, 6), has_aux=True)),
    "vjp_two_inputs": lambda L: (lambda r: r[1](L.tensor(1.0, dtype=L.float64)))(
        L.func.vjp(lambda x, y: f_two(L, x, y), _x(L, 3), _x(L, 3, seed=1))),
    "jvp": lambda L: L.func.jvp(lambda x: f_vector(L, x), (_x(L, 6),), (_x(L, 6, seed=4),)),
    "jvp_has_aux": lambda L: L.func.jvp(lambda x: (x.sin(), x.sum()), (_x(L, 3),),
                                        (_x(L, 3, seed=4),), has_aux=True),
    "jvp_two_inputs": lambda L: L.func.jvp(lambda x, y: f_two(L, x, y),
                                           (_x(L, 3), _x(L, 3, seed=1)),
                                           (_x(L, 3, seed=5), _x(L, 3, seed=6))),
    "jacrev": lambda L: L.func.jacrev(lambda x: f_vector(L, x))(_x(L, 5)),
    "jacrev_argnums": lambda L: L.func.jacrev(lambda x, y: x.sin() * y, argnums=(0, 1))(
        _x(L, 3), _x(L, 3, seed=1)),
    "jacrev_has_aux": lambda L: L.func.jacrev(lambda x: (x.exp(), x.sum()), has_aux=True)(
        _x(L, 3)),
    "jacrev_matrix": lambda L: L.func.jacrev(lambda w: w @ w.t())(_x(L, 2, 3)),
    "jacfwd": lambda L: L.func.jacfwd(lambda x: f_vector(L, x))(_x(L, 5)),
    "jacfwd_argnums": lambda L: L.func.jacfwd(lambda x, y: x.sin() * y, argnums=(0, 1))(
        _x(L, 3), _x(L, 3, seed=1)),
    "jacfwd_has_aux": lambda L: L.func.jacfwd(lambda x: (x.exp(), x.sum()), has_aux=True)(
        _x(L, 3)),
    "hessian": lambda L: L.func.hessian(lambda x: f_scalar(L, x))(_x(L, 5)),
    "hessian_argnums": lambda L: L.func.hessian(lambda x, y: f_two(L, x, y), argnums=1)(
        _x(L, 3), _x(L, 3, seed=1)),
    "jacrev_of_jacfwd": lambda L: L.func.jacrev(L.func.jacfwd(lambda x: f_scalar(L, x)))(
        _x(L, 4)),
    "jacfwd_of_jacfwd": lambda L: L.func.jacfwd(L.func.jacfwd(lambda x: f_scalar(L, x)))(
        _x(L, 4)),
    "jacrev_of_jacrev": lambda L: L.func.jacrev(L.func.jacrev(lambda x: f_scalar(L, x)))(
        _x(L, 4)),
    "vmap": lambda L: L.func.vmap(lambda r: r.sin() * r.sum())(_x(L, 4, 3)),
    "vmap_in_dims": lambda L: L.func.vmap(lambda a, b: a * b, in_dims=(1, None))(
        _x(L, 3, 4), _x(L, 3, seed=1)),
    "vmap_out_dims": lambda L: L.func.vmap(lambda a: a.exp(), out_dims=1)(_x(L, 4, 3)),
    "vmap_tuple_out": lambda L: L.func.vmap(lambda a: (a.sum(), a * 2))(_x(L, 4, 3)),
    "vmap_nested": lambda L: L.func.vmap(L.func.vmap(lambda a: a ** 2 + 1))(_x(L, 2, 3)),
    "vmap_of_grad": lambda L: L.func.vmap(L.func.grad(lambda x: f_scalar(L, x)))(_x(L, 3, 4)),
    "grad_of_vmap": lambda L: L.func.grad(lambda x: L.func.vmap(lambda r: r.sin().sum())(x)
                                          .sum())(_x(L, 3, 4)),
    "torch_vmap_alias": lambda L: L.vmap(lambda r: r.dot(r))(_x(L, 4, 3)),
    "autograd_functional_hessian": lambda L: L.autograd.functional.hessian(
        lambda x: f_scalar(L, x), _x(L, 4)),
    "autograd_functional_jvp": lambda L: L.autograd.functional.jvp(
        lambda x: f_vector(L, x), _x(L, 4), _x(L, 4, seed=2)),
    "autograd_functional_hvp": lambda L: L.autograd.functional.hvp(
        lambda x: f_scalar(L, x), _x(L, 4), _x(L, 4, seed=2)),
    "autograd_functional_vhp": lambda L: L.autograd.functional.vhp(
        lambda x: f_scalar(L, x), _x(L, 4), _x(L, 4, seed=2)),
    "autograd_functional_jacobian": lambda L: L.autograd.functional.jacobian(
        lambda x: f_vector(L, x), _x(L, 4)),
    "autograd_functional_vjp": lambda L: L.autograd.functional.vjp(
        lambda x: f_vector(L, x), _x(L, 4), _x(L, 4, seed=2)),
}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_transform_matches_torch_func(name, lib):
    """Each transform (and composition) gives torch.func's values, shapes and structure."""
    _same(SCENARIOS[name](torch), SCENARIOS[name](lib))


def test_transform_of_a_tensor_with_history(lib):
    """A transform's result is differentiable by ordinary autograd w.r.t. its inputs."""
    x = _x(lib, 4).requires_grad_()
    g = lib.func.grad(lambda y: (y ** 3).sum())(x)
    assert g.requires_grad
    (gg,) = lib.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(to_numpy(gg), 6 * to_numpy(x.detach()), **TOL)


def test_hessian_of_a_100_parameter_function(lib):
    """The issue's target: the Hessian of a 100-parameter function, torch's to 1e-10."""

    def f(L):
        def fn(x):
            return (x.sin() * x.roll(1, 0)).sum() + (x ** 2).sum() ** 1.5 / 50 + x.exp().mean()

        return L.func.hessian(fn)(_x(L, 100, seed=9))

    want, got = f(torch), f(lib)
    assert tuple(got.shape) == (100, 100)
    np.testing.assert_allclose(to_numpy(got), to_numpy(want), **TOL)


def test_hessian_vector_product_through_a_2_layer_mlp(lib):
    """The issue's target: H v of an MLP loss w.r.t. its parameters, forward over reverse
    (jvp of grad) and reverse over reverse (vjp of grad), torch's to 1e-10 in float64."""

    def run(L):
        L.manual_seed(0)
        net = L.nn.Sequential(L.nn.Linear(6, 8), L.nn.Tanh(), L.nn.Linear(8, 3)).double()
        # parameters from NumPy: the same whatever random kernels torch runs (cpu_kernels.py)
        params = {k: _x(L, *tuple(v.shape), seed=10 + i) * 0.4
                  for i, (k, v) in enumerate(net.named_parameters())}
        x, target = _x(L, 5, 6, seed=3), _x(L, 5, 3, seed=4)
        rng = np.random.default_rng(7)
        v = {k: L.tensor(rng.standard_normal(tuple(p.shape))) for k, p in params.items()}

        def loss(p):
            out = L.func.functional_call(net, p, (x,))
            return ((out - target) ** 2).mean()

        _, hvp_fwd = L.func.jvp(L.func.grad(loss), (params,), (v,))
        _, vjp_fn = L.func.vjp(L.func.grad(loss), params)
        (hvp_rev,) = vjp_fn(v)
        return hvp_fwd, hvp_rev

    (wf, wr), (gf, gr) = run(torch), run(lib)
    _same(wf, gf)
    _same(wr, gr)


def test_functional_call(lib):
    """functional_call: replaced parameters and buffers, tuple of dicts, kwargs, strict, ties."""

    def run(L):
        L.manual_seed(0)
        m = L.nn.Sequential(L.nn.Linear(3, 2), L.nn.BatchNorm1d(2)).double()
        with L.no_grad():  # (fixed values, as above)
            m[0].weight.copy_(_x(L, 2, 3, seed=5))
            m[0].bias.copy_(_x(L, 2, seed=6))
        m.eval()
        x = _x(L, 4, 3)
        p = {"0.weight": _x(L, 2, 3, seed=1), "0.bias": _x(L, 2, seed=2)}
        b = {"1.running_mean": _x(L, 2, seed=3)}
        out1 = L.func.functional_call(m, p, (x,))
        out2 = L.func.functional_call(m, (p, b), x)
        out3 = L.func.functional_call(m, p, args=(), kwargs={"input": x})
        return out1, out2, out3, m(x)

    _same(run(torch), run(lib))


def test_functional_call_errors(lib):
    m = lib.nn.Linear(2, 2)
    w = lib.zeros(2, 2)
    with pytest.raises(ValueError, match="appeared in multiple dictionaries"):
        lib.func.functional_call(m, ({"weight": w}, {"weight": w}), (lib.zeros(1, 2),))
    with pytest.raises(RuntimeError, match="Missing key"):
        lib.func.functional_call(m, {"weight": w}, (lib.zeros(1, 2),), strict=True)


def test_errors_like_torch(lib):
    with pytest.raises(RuntimeError, match="Expected f\\(\\*args\\) to return a scalar Tensor"):
        lib.func.grad(lambda x: x * 2)(lib.ones(3))
    with pytest.raises(RuntimeError, match="Expected primals to be a tuple"):
        lib.func.jvp(lambda x: x, lib.ones(3), lib.ones(3))
    with pytest.raises(ValueError, match="Expected all tensors to have the same size"):
        lib.func.vmap(lambda a, b: a + b)(lib.ones(3, 2), lib.ones(4, 2))
    with pytest.raises(RuntimeError, match="output of function f should be a tuple"):
        lib.func.grad(lambda x: x.sum(), has_aux=True)(lib.ones(3))
