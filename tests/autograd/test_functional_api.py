"""``autograd.functional`` (vjp, jvp, jacobian, hessian, vhp, hvp), each scenario run on torch
and on the library under test: results, structure (tuples in, tuples out), strict mode,
create_graph, vectorize, strategy / outer_jacobian_strategy and every error torch raises.

Written from what torch's test/autograd/test_functional.py checks (TestAutogradFunctional,
imported into test_autograd.py; api.tsv names the torch test each one ports). The
``logging_tensor`` variants of those tests wrap inputs in a torch-internal tensor subclass and
are not ported.
"""

from __future__ import annotations

import warnings

import pytest
import torch
from torchcompare import raised

with warnings.catch_warnings():  # torch's first dual op imports modules that warn
    warnings.simplefilter("ignore")
    with torch.autograd.forward_ad.dual_level():
        torch.autograd.forward_ad.make_dual(torch.ones(1), torch.ones(1)) * 2


def _t(L, *shape, start=0.5, dtype=None):
    n = 1
    for s in shape:
        n *= s
    t = L.linspace(start, start + 0.7, n).reshape(shape)
    return t if dtype is None else t.to(dtype)


def _struct(x):
    """Shapes of a (nested) result, and whether each tensor has a grad_fn."""
    if isinstance(x, tuple):
        return tuple(_struct(e) for e in x)
    if hasattr(x, "shape"):
        return (tuple(x.shape), x.grad_fn is not None)
    return x


@pytest.mark.parametrize("api", ["vjp", "jvp"])
def test_vjp_jvp_err_check(compare, api):
    """test_vjp_err_check / test_jvp_err_check: inputs, outputs, v's presence, count and
    size."""

    def scenario(L):
        F = L.autograd.functional
        fn = getattr(F, api)

        def foo(a):
            return 3 * a.narrow(0, 0, 3)

        def bar(a):
            return 3 * a.narrow(0, 0, 3), "bar"

        inp = _t(L, 4)
        v = L.ones(3) if api == "vjp" else _t(L, 4)
        return (raised(lambda: fn(foo, (inp, 2), v)), raised(lambda: fn(bar, inp, v)),
                raised(lambda: fn(foo, inp)),
                raised(lambda: fn(foo, inp, (L.ones_like(v), L.ones_like(v)))),
                raised(lambda: fn(foo, inp, v[:2])), fn(foo, inp, v))

    compare(scenario)


@pytest.mark.parametrize("api", ["vjp", "jvp"])
def test_vjp_jvp_err_check_strict(compare, api):
    """test_vjp_err_check_strict / test_jvp_err_check_strict: strict mode's errors, zeros
    otherwise."""

    def scenario(L):
        fn = getattr(L.autograd.functional, api)

        def foo(a):
            return a.detach()

        def bar(a):
            return a.long().float().requires_grad_().clone()

        def lin(a):
            return a.clone()

        inp = _t(L, 4)
        v = _t(L, 4, start=2.0)
        out = [raised(lambda: fn(foo, inp, v, strict=True)), fn(foo, inp, v, strict=False),
               raised(lambda: fn(bar, inp, v, strict=True)), fn(bar, inp, v, strict=False)]
        inp.requires_grad_()
        out += [raised(lambda: fn(lin, inp, v, create_graph=True, strict=True)),
                fn(lin, inp, v, create_graph=True, strict=False)]
        return out

    compare(scenario)


@pytest.mark.parametrize("api", ["vjp", "jvp", "vhp", "hvp"])
def test_no_grad(compare, api):
    """test_vjp_no_grad / test_jvp_no_grad / test_vhp_no_grad / test_hvp_no_grad: under
    no_grad the results have no graph unless create_graph."""

    def scenario(L):
        fn = getattr(L.autograd.functional, api)
        if api in ("vjp", "jvp"):
            def reducer(x):
                return x.sum(dim=1)
        else:
            def reducer(x):
                return x.exp().sum()
        inputs = _t(L, 4, 4)
        v = L.ones(4) if api == "vjp" else L.ones(4, 4)
        with L.no_grad():
            res = fn(reducer, inputs, v)
        out = [res, _struct(res)]
        inputs.requires_grad_()
        v.requires_grad_()
        with L.no_grad():
            res = fn(reducer, inputs, v, create_graph=True)
        out += [_struct(res), res[0].detach(), res[1].detach()]
        return out

    compare(scenario)


@pytest.mark.parametrize("api", ["vjp", "jvp"])
def test_vjp_jvp_output_and_scalar(compare, api):
    """test_vjp_output / test_vjp_scalar / test_jvp_output / test_jvp_scalar: results for one
    and several inputs and outputs, scalars, and v=None for single-element functions."""

    def scenario(L):
        fn = getattr(L.autograd.functional, api)

        def reducer(x):
            return x.sum(dim=1)

        def adder(x, y):
            return 2 * x + 3 * y

        def adder2(x, y):
            return 2 * x + 3 * y, x + y

        def total(x):
            return x.sum()

        def expander(x):
            return x.unsqueeze(0).repeat(4)

        out = []
        v = L.ones(4) if api == "vjp" else L.ones(4, 4)
        out.append(fn(reducer, _t(L, 4, 4), v))
        v2 = L.ones(2) if api == "vjp" else (L.ones(2), L.ones(2))
        out.append(fn(adder, (_t(L, 2), _t(L, 2, start=2.0)), v2))
        out.append(fn(adder2, (_t(L, 2), _t(L, 2, start=2.0)),
                      (L.tensor([1.0, 0.0]), L.tensor([1.0, 0.0]))))
        if api == "vjp":
            out += [fn(total, _t(L, 4, 4), L.ones([])), fn(total, _t(L, 4, 4)),
                    fn(expander, L.tensor(0.5), L.ones(4)), raised(lambda: fn(expander, _t(L, 2)))]
        else:
            out += [fn(total, _t(L, 4, 4), L.ones(4, 4)), fn(expander, L.tensor(0.5), L.ones([])),
                    fn(expander, L.tensor(0.5)), raised(lambda: fn(total, _t(L, 4, 4)))]
        return out

    compare(scenario)


@pytest.mark.parametrize("api", ["vjp", "jvp", "vhp", "hvp"])
def test_create_graph(compare, api):
    """test_vjp_create_graph / test_jvp_create_graph / test_vhp_create_graph /
    test_hvp_create_graph: results keep their graph, and gradcheck/gradgradcheck pass
    through them."""

    def scenario(L):
        F = L.autograd.functional
        fn = getattr(F, api)
        gc, ggc = L.autograd.gradcheck, L.autograd.gradgradcheck
        if api in ("vjp", "jvp"):
            def f1(x):
                return x.sum(dim=1)

            def f2(x, y):
                return 2 * x + 3 * y, x * y
            inputs = _t(L, 2, 2, dtype=L.double).requires_grad_()
            v = L.ones(2 if api == "vjp" else (2, 2), dtype=L.double).requires_grad_()
            args2 = (_t(L, 2, dtype=L.double).requires_grad_(),
                     _t(L, 2, start=1.5, dtype=L.double).requires_grad_())
            v2 = (L.tensor([1.0, 0.0], dtype=L.double, requires_grad=True),
                  L.tensor([1.0, 0.0], dtype=L.double, requires_grad=True))
        else:
            def f1(a):
                return 3 * a.narrow(0, 0, 3).exp().sum()

            def f2(a, b):
                return (a + 3 * b.narrow(0, 0, 3)).exp().sum()
            inputs = _t(L, 4, 4, dtype=L.double).requires_grad_()
            v = L.ones(4, 4, dtype=L.double, requires_grad=True)
            args2 = (_t(L, 3, dtype=L.double).requires_grad_(),
                     _t(L, 4, start=1.5, dtype=L.double).requires_grad_())
            v2 = (L.ones(3, dtype=L.double, requires_grad=True),
                  L.ones(4, dtype=L.double, requires_grad=True))
        res = fn(f1, inputs, v, create_graph=True)
        out = [_struct(res)]
        out.append(gc(lambda inp, v: fn(f1, inp, v, create_graph=True), (inputs, v)))
        out.append(ggc(lambda inp, v: fn(f1, inp, v, create_graph=True), (inputs, v)))
        out.append(_struct(fn(f2, args2, v2, create_graph=True)))
        out.append(gc(lambda *a: fn(f2, a[:2], a[2:], create_graph=True)[1], args2 + v2))
        out.append(ggc(lambda *a: fn(f2, a[:2], a[2:], create_graph=True)[1], args2 + v2))

        def foo(*args):
            x, y = args[:2]
            vv = args[2:]
            x = x.cos()
            val, grad = fn(f2, (x, y), vv, create_graph=True)
            if isinstance(val, tuple):
                val = val[0].exp() + val[1].exp()
            return (val.exp().sum() + grad[0].exp().sum() + grad[1].exp().sum()
                    + x.exp().sum() + y.exp().sum())

        out.append(gc(foo, args2 + v2))
        return out

    compare(scenario)


def test_construct_standard_basis_for(compare):
    """test_construct_standard_basis_for: the identity split into per-tensor blocks."""

    def scenario(L):
        F = L.autograd.functional
        out = []
        for inputs in ((L.ones(2, 3),), (L.ones(1),), (L.ones([]),),
                       (L.ones(1), L.ones([]), L.ones([])), (L.ones(2), L.ones(3), L.ones([])),
                       (L.ones(2, 3), L.ones(3), L.ones(3, 4, 2)),
                       (L.ones(2, dtype=L.float64), L.ones(3, dtype=L.float32))):
            out.append(F._construct_standard_basis_for(inputs, tuple(t.numel() for t in inputs)))
        return out

    compare(scenario)


@pytest.mark.parametrize("api", ["jacobian", "hessian"])
def test_vectorize_raises_no_warnings(compare, api):
    """test_jacobian_vectorize_raises_no_warnings / test_hessian_vectorize_raises_no_warnings."""

    def scenario(L):
        return getattr(L.autograd.functional, api)(lambda a: (a ** 2).sum(), _t(L, 3),
                                                   vectorize=True)

    compare(scenario)


@pytest.mark.parametrize("vectorize", [True, False])
def test_jacobian_err_check(compare, vectorize):
    """test_jacobian_err_check: type errors and the nested structure of the result."""

    def scenario(L):
        F = L.autograd.functional

        def foo(a):
            return 3 * a.narrow(0, 0, 3)

        def bar(a):
            return 3 * a.narrow(0, 0, 3), "bar"

        def foo2(a, b):
            return b, 3 * a.narrow(0, 0, 3)

        inp = _t(L, 4)
        return (raised(lambda: F.jacobian(foo, (inp, 2), vectorize=vectorize)),
                raised(lambda: F.jacobian(bar, inp, vectorize=vectorize)),
                F.jacobian(foo, inp, vectorize=vectorize),
                F.jacobian(foo2, (_t(L, 4), _t(L, 5, start=2.0)), vectorize=vectorize))

    compare(scenario)


def test_jacobian_err_check_strict(compare):
    """test_jacobian_err_check_strict / test_jacobian_err_check_strict_vectorize."""

    def scenario(L):
        F = L.autograd.functional

        def foo(a):
            return a.detach()

        def bar(a):
            return a.long().float().requires_grad_().clone()

        def lin(a):
            return a.clone()

        inp = _t(L, 4)
        out = [raised(lambda: F.jacobian(foo, inp, strict=True)), F.jacobian(foo, inp),
               raised(lambda: F.jacobian(bar, inp, strict=True)), F.jacobian(bar, inp),
               raised(lambda: F.jacobian(lambda x: x, inp, strict=True, vectorize=True))]
        inp.requires_grad_()
        out += [raised(lambda: F.jacobian(lin, inp, create_graph=True, strict=True)),
                F.jacobian(lin, inp, create_graph=True, strict=False)]
        return out

    compare(scenario)


@pytest.mark.parametrize("api", ["jacobian", "hessian"])
def test_jacobian_hessian_no_grad(compare, api):
    """test_jacobian_no_grad / test_hessian_no_grad."""

    def scenario(L):
        fn = getattr(L.autograd.functional, api)
        f = (lambda x: x.exp().sum(dim=1)) if api == "jacobian" else (lambda x: x.pow(3).sum())
        inputs = _t(L, 4, 4) if api == "jacobian" else _t(L, 2, 2)
        with L.no_grad():
            a = fn(f, inputs)
            b = fn(f, inputs, create_graph=True)
        return a, _struct(a), _struct(b), b.detach()

    compare(scenario)


@pytest.mark.parametrize("vectorize", [True, False])
def test_jacobian_output_and_scalar(compare, vectorize):
    """test_jacobian_output / test_jacobian_scalar."""

    def scenario(L):
        F = L.autograd.functional
        out = [F.jacobian(lambda x: x.exp().sum(dim=1), _t(L, 4, 4), vectorize=vectorize),
               F.jacobian(lambda x: x.clone(), _t(L, 4), vectorize=vectorize),
               F.jacobian(lambda x, y: (x + y.exp()).sum(dim=1), (_t(L, 4, 4), _t(L, 4, 4)),
                          vectorize=vectorize),
               F.jacobian(lambda x: x.sum(), _t(L, 4, 4), vectorize=vectorize),
               F.jacobian(lambda x: x.unsqueeze(0).repeat(4), L.tensor(0.5),
                          vectorize=vectorize)]
        return out, _struct(tuple(out))

    compare(scenario)


@pytest.mark.parametrize("vectorize", [True, False])
def test_jacobian_create_graph(compare, vectorize):
    """test_jacobian_create_graph: results keep their graph; gradcheck/gradgradcheck through
    them."""

    def scenario(L):
        F = L.autograd.functional
        gc, ggc = L.autograd.gradcheck, L.autograd.gradgradcheck

        def exp_reducer(x):
            return x.exp().sum(dim=1)

        def add_exp_reducer(x, y):
            return (x + y).exp().sum(dim=1)

        inputs = _t(L, 4, 4, dtype=L.double).requires_grad_()
        res = F.jacobian(exp_reducer, inputs, create_graph=True, vectorize=vectorize)
        out = [_struct(res),
               gc(lambda i: F.jacobian(exp_reducer, i, create_graph=True, vectorize=vectorize),
                  inputs),
               ggc(lambda i: F.jacobian(exp_reducer, i, create_graph=True, vectorize=vectorize),
                   inputs)]
        inputs2 = (_t(L, 4, 4, dtype=L.double).requires_grad_(),
                   _t(L, 4, 4, start=1.0, dtype=L.double).requires_grad_())
        res = F.jacobian(add_exp_reducer, inputs2, create_graph=True, vectorize=vectorize)
        out += [_struct(res),
                gc(lambda *i: F.jacobian(add_exp_reducer, i, create_graph=True,
                                         vectorize=vectorize), inputs2)]

        def foo(x, y):
            x = x.cos()
            val, jac = F.jacobian(add_exp_reducer, (x, y), create_graph=True,
                                  vectorize=vectorize)
            return (val.exp().sum() + jac.exp().sum() + x.exp().sum() + y.exp().sum())

        out.append(gc(foo, inputs2))
        return out

    compare(scenario)


@pytest.mark.parametrize("case", ["simple", "multi_input", "multi_input_multi_output",
                                  "unrelated_outputs", "zero_dim", "different_dtype"])
def test_jacobian_vectorize_correctness(compare, case):
    """test_jacobian_vectorize_correctness_*: vectorize=True (and strategy="forward-mode")
    give the same Jacobians as the row-by-row computation."""

    def scenario(L):
        F = L.autograd.functional
        if case == "simple":
            cases = [(lambda x: 3 * x ** 2, _t(L, 2, 3, 5))]
        elif case == "multi_input":
            cases = [(lambda x, y: (x.cos() * x) @ y.sin(), (_t(L, 2, 3), _t(L, 3, 5)))]
        elif case == "multi_input_multi_output":
            cases = [(lambda x, y: ((x * x) @ y, x @ (x.sum(1) * y), y.sum()),
                      (_t(L, 5, 3), _t(L, 3, 5)))]
        elif case == "unrelated_outputs":
            cases = [(lambda x, y: (x, y, x, y), (_t(L, 2), _t(L, 3)))]
        elif case == "zero_dim":
            cases = [(lambda x, y: (x.sum(), y.sum(), x * y), (_t(L, 3), _t(L, 3, start=1.0))),
                     (lambda x: L.stack([x, x, x]), L.tensor(0.5)),
                     (lambda x, y: (y.sum(), x * y), (L.tensor(0.5), _t(L, 1)))]
        else:
            cases = [(lambda x, y: ((x * y).float(), (x * y).double()),
                      (_t(L, 3), _t(L, 3, start=1.0)))]
        out = []
        for f, inputs in cases:
            out.append(F.jacobian(f, inputs, vectorize=False))
            out.append(F.jacobian(f, inputs, vectorize=True))
            if case != "different_dtype":
                out.append(F.jacobian(f, inputs, strategy="forward-mode", vectorize=True))
        return out

    compare(scenario, rtol=1e-5, atol=1e-6)


def test_jacobian_strategy_errors(compare):
    """jacobian's strategy argument: unknown values, forward mode with create_graph, strict,
    or without vectorize."""

    def scenario(L):
        F = L.autograd.functional
        x = _t(L, 3)

        def f(a):
            return a * 2

        return (raised(lambda: F.jacobian(f, x, strategy="sideways")),
                raised(lambda: F.jacobian(f, x, strategy="forward-mode", create_graph=True)),
                raised(lambda: F.jacobian(f, x, strategy="forward-mode", strict=True)),
                raised(lambda: F.jacobian(f, x, strategy="forward-mode")),
                raised(lambda: F.hessian(lambda a: a.sum(), x, outer_jacobian_strategy="x")))

    compare(scenario)


@pytest.mark.parametrize("case", ["simple", "multi_input", "unrelated_outputs"])
def test_hessian_vectorize_correctness(compare, case):
    """test_hessian_vectorize_correctness_*: vectorize=True and the forward-mode outer
    Jacobian give the same Hessians."""

    def scenario(L):
        F = L.autograd.functional
        if case == "simple":
            cases = [(lambda x: (3 * x ** 2).sum(), _t(L, 2, 3, 5))]
        elif case == "multi_input":
            cases = [(lambda x, y, z: ((x.relu() * x) @ y.sin() @ z).sum(),
                      (_t(L, 2, 3), _t(L, 3, 5), _t(L, 5, 5)))]
        else:
            cases = [(lambda x, y: (x ** 2).sum(), (_t(L, 2), _t(L, 3))),
                     (lambda x, y: L.ones([]), (_t(L, 2), _t(L, 3)))]
        out = []
        for f, inputs in cases:
            out += [F.hessian(f, inputs, vectorize=False), F.hessian(f, inputs, vectorize=True),
                    F.hessian(f, inputs, outer_jacobian_strategy="forward-mode",
                              vectorize=True)]
        return out

    compare(scenario, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("vectorize", [True, False])
def test_hessian_err_check(compare, vectorize):
    """test_hessian_err_check: inputs, outputs, single-element and single-tensor checks."""

    def scenario(L):
        F = L.autograd.functional

        def foo(a):
            return 3 * a.narrow(0, 0, 3).exp().sum()

        def bar(a):
            return 3 * a.narrow(0, 0, 3), "bar"

        def bar2(a):
            return 3 * a.narrow(0, 0, 3)

        def bar3(a):
            return 3 * a.narrow(0, 0, 3), 3 * a.narrow(0, 0, 3)

        def foo2(a, b):
            return (3 * b.narrow(0, 0, 3) * a.narrow(0, 0, 3)).sum()

        inp = _t(L, 4)
        return (raised(lambda: F.hessian(foo, (inp, 2), vectorize=vectorize)),
                raised(lambda: F.hessian(bar, inp, vectorize=vectorize)),
                raised(lambda: F.hessian(bar2, inp, vectorize=vectorize)),
                raised(lambda: F.hessian(bar3, inp, vectorize=vectorize)),
                F.hessian(foo, inp, vectorize=vectorize),
                F.hessian(foo2, (_t(L, 4), _t(L, 5, start=1.0)), vectorize=vectorize))

    compare(scenario)


@pytest.mark.parametrize("api", ["hessian", "vhp", "hvp"])
def test_second_order_err_check_strict(compare, api):
    """test_hessian_err_check_strict / test_vhp_err_check_strict / test_hvp_err_check_strict /
    test_hessian_err_check_strict_vectorize."""

    def scenario(L):
        fn = getattr(L.autograd.functional, api)

        def foo(a):
            return a.detach().sum()

        def bar(a):
            return a.long().float().requires_grad_().clone().sum()

        def bar2(a):
            return (3 * a).sum()

        inp = _t(L, 4)
        args = () if api == "hessian" else (_t(L, 4, start=2.0),)
        out = []
        for f in (foo, bar, bar2):
            out += [raised(lambda f=f: fn(f, inp, *args, strict=True)),
                    fn(f, inp, *args, strict=False)]
        if api == "hessian":
            out.append(raised(lambda: fn(lambda x: (x ** 3).sum(), inp, strict=True,
                                         vectorize=True)))
        return out

    compare(scenario)


@pytest.mark.parametrize("vectorize", [True, False])
def test_hessian_output_scalar_create_graph(compare, vectorize):
    """test_hessian_output / test_hessian_scalar / test_hessian_create_graph."""

    def scenario(L):
        F = L.autograd.functional
        gc = L.autograd.gradcheck

        def pow_reducer(x):
            return x.pow(3).sum()

        def add_pow_reducer(x, y):
            return (x + y).pow(3).sum()

        out = [F.hessian(pow_reducer, _t(L, 2, 2), vectorize=vectorize),
               F.hessian(add_pow_reducer, (_t(L, 2, 2), _t(L, 2, 2, start=1.0)),
                         vectorize=vectorize),
               F.hessian(lambda x: x.sum(), _t(L, 4, 4), vectorize=vectorize),
               F.hessian(lambda x: x.sum(), L.tensor(0.5), vectorize=vectorize),
               F.hessian(lambda x: x.sum().view(1, 1, 1), _t(L, 4, 4), vectorize=vectorize)]
        inputs = _t(L, 2, 2, dtype=L.double).requires_grad_()
        res = F.hessian(pow_reducer, inputs, create_graph=True, vectorize=vectorize)
        out += [_struct(res), gc(lambda i: F.hessian(pow_reducer, i, create_graph=True,
                                                    vectorize=vectorize), inputs)]
        inputs2 = (_t(L, 2, 2, dtype=L.double).requires_grad_(),
                   _t(L, 2, 2, start=1.0, dtype=L.double).requires_grad_())
        res = F.hessian(add_pow_reducer, inputs2, create_graph=True, vectorize=vectorize)
        out += [_struct(res),
                gc(lambda *i: tuple(e for r in F.hessian(add_pow_reducer, i, create_graph=True,
                                                         vectorize=vectorize) for e in r),
                   inputs2)]
        return out

    compare(scenario)


@pytest.mark.parametrize("api", ["vhp", "hvp"])
def test_vhp_hvp_err_check_output_scalar(compare, api):
    """test_vhp_err_check / test_hvp_err_check / test_vhp_output / test_hvp_output /
    test_vhp_scalar / test_hvp_scalar."""

    def scenario(L):
        fn = getattr(L.autograd.functional, api)

        def foo(a):
            return 3 * a.narrow(0, 0, 3).exp().sum()

        def bar(a):
            return 3 * a.narrow(0, 0, 3), "bar"

        def bar2(a):
            return 3 * a.narrow(0, 0, 3)

        def foo2(a, b):
            return (3 * b.narrow(0, 0, 3) * a.narrow(0, 0, 3)).sum()

        def bar_b(a, b):
            return (a + 3 * b.narrow(0, 0, 3)).exp().sum()

        inp = _t(L, 4)
        v = _t(L, 4, start=1.0)
        out = [raised(lambda: fn(foo, (inp, 2), v)), raised(lambda: fn(bar, inp, v)),
               raised(lambda: fn(bar2, inp, v)), raised(lambda: fn(foo, inp, _t(L, 5))),
               raised(lambda: fn(foo, inp, (v, 2))), fn(foo, inp, v),
               fn(foo2, (_t(L, 4), _t(L, 5)), (_t(L, 4), _t(L, 5))),
               fn(foo, _t(L, 4, 4), L.ones(4, 4)),
               fn(bar_b, (_t(L, 3), _t(L, 4)), (L.ones(3), L.ones(4))),
               fn(lambda x: x.exp().sum(), _t(L, 4, 4), L.ones(4, 4)),
               fn(lambda x: x.exp().sum(), L.tensor(0.5), L.tensor(0.25)),
               fn(lambda x: x.exp().sum(), L.tensor(0.5)),
               fn(lambda x: x.exp().sum().view(1, 1, 1), _t(L, 4, 4), _t(L, 4, 4))]
        return out, _struct(tuple(out[5:]))

    compare(scenario, rtol=1e-5)


def test_match_products(compare):
    """test_jacobian_match_vjp_jvp / test_hessian_match_vhp_hvp."""

    def scenario(L):
        F = L.autograd.functional

        def foo(x):
            return x ** 3 + x.sum()

        def bar(a):
            return 3 * a.narrow(0, 0, 3).exp().sum()

        inputs = _t(L, 4)
        v = _t(L, 4, start=1.0)
        jac = F.jacobian(foo, inputs)
        hes = F.hessian(bar, inputs)
        return (F.jvp(foo, inputs, v)[1], L.mm(jac, v.unsqueeze(1)).squeeze(1),
                F.vjp(foo, inputs, v)[1], L.mm(v.unsqueeze(0), jac).squeeze(0),
                F.hvp(bar, inputs, v)[1], L.mm(hes, v.unsqueeze(1)).squeeze(1),
                F.vhp(bar, inputs, v)[1], L.mm(v.unsqueeze(0), hes).squeeze(0))

    compare(scenario, rtol=1e-5)


def test_constant_function(compare):
    """vjp of a function whose output does not depend on the input: zeros (strict: torch's
    error); jvp without v on a multi-element input raises."""

    def scenario(L):
        F = L.autograd.functional
        x = L.ones(2)
        return (F.vjp(lambda a: L.ones(3), x, L.ones(3)),
                raised(lambda: F.vjp(lambda a: L.ones(3), x, L.ones(3), strict=True)),
                F.vjp(lambda a: L.ones(()), x), raised(lambda: F.jvp(lambda a: a * 2, x)))

    compare(scenario)
