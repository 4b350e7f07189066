"""``autograd.grad``, ``autograd.backward`` / ``Tensor.backward`` and gradient edges, each
scenario run on torch and on the library under test: every option (inputs=, grad_outputs,
retain_graph, create_graph, allow_unused, materialize_grads, is_grads_batched), GradientEdges
in place of tensors, and torch's errors for bad arguments.

Written from what torch's test/test_autograd.py checks (api.tsv names the torch test each one
ports).
"""

from __future__ import annotations

import gc
import pickle
import threading
import warnings
import weakref

import pytest
import torch
from torchcompare import raised

# torch's first dual op imports modules that warn (torch.jit.script is deprecated): once here,
# so that the compared scenarios see only their own warnings
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    with torch.autograd.forward_ad.dual_level():
        torch.autograd.forward_ad.make_dual(torch.ones(1), torch.ones(1)) * 2


def _ab(L, *shape, start=1.0):
    n = 1
    for s in shape:
        n *= s
    return L.linspace(start, start + 1, n).reshape(shape)


# --------------------------------------------------------------------------------------------
# backward
# --------------------------------------------------------------------------------------------


def test_backward(compare):
    """test_backward: gradients of a small expression, with an explicit grad_output."""

    def scenario(L):
        v = _ab(L, 5, 5).requires_grad_()
        x = _ab(L, 5, 5, start=2.0).requires_grad_()
        y = (_ab(L, 5, 5, start=0.5) + 0.1).requires_grad_()
        z = _ab(L, 5, 5, start=-1.0).requires_grad_()
        grad_output = _ab(L, 5, 5, start=-0.5)
        v.backward(grad_output)
        a = x + (y * z) + 4 * z ** 2 * x / y
        a.backward(grad_output)
        return v.grad, x.grad, y.grad, z.grad

    compare(scenario, rtol=1e-5, atol=1e-6)


def test_multi_backward(compare):
    """test_multi_backward / test_dependent_backward / test_duplicate_backward_root: several
    roots, with their own gradients, sharing nodes."""

    def scenario(L):
        x, y, q, a, b = (_ab(L, 5, 5, start=s).requires_grad_() for s in range(5))
        q2 = q * 2
        z = x + y + q2
        c = a * b + q2
        grad_z = _ab(L, 5, 5, start=-2.0)
        grad_c = _ab(L, 5, 5, start=3.0)
        L.autograd.backward([z, c], [grad_z, grad_c])
        out = [x.grad, y.grad, a.grad, b.grad, q.grad]
        x = L.linspace(-1, 1, 10).requires_grad_()
        y = x ** 2
        z = y ** 3
        L.autograd.backward([y, z], [L.ones(10), L.full((10,), 2.0)])
        out.append(x.grad)
        a = _ab(L, 5, 5).requires_grad_()
        b = _ab(L, 5, 5, start=2.0).requires_grad_()
        x = a * b
        go = _ab(L, 5, 5, start=-1.0)
        L.autograd.backward([x, x], [go, go])
        out += [a.grad, b.grad]
        return out

    compare(scenario, rtol=1e-5)


def test_backward_bad_arguments(compare):
    """test_backward_badcalls / test_multi_backward_no_grad / test_backward_no_grad and the
    engine's other argument checks."""

    def scenario(L):
        x = L.ones(1)
        z = L.ones(2, requires_grad=True)
        y = z * 2
        return (raised(lambda: x.backward()),
                raised(lambda: L.autograd.backward([y, x * 2], [L.ones(2), L.ones(1)])),
                raised(lambda: L.autograd.backward([y], [None])),
                raised(lambda: L.autograd.backward([y.sum()], grad_tensors=[3])),
                raised(lambda: L.autograd.backward([y.sum(), 3])),
                raised(lambda: L.autograd.backward([y.sum(), y.sum()], [L.ones(())])),
                raised(lambda: L.autograd.backward(y, L.ones(3))),
                raised(lambda: L.autograd.backward(y.sum(), L.ones((), dtype=L.cfloat))),
                raised(lambda: y.backward(inputs=[])),
                raised(lambda: y.sum().backward(inputs=[L.ones(2)])),
                raised(lambda: y.sum().backward(inputs=[3])),
                raised(lambda: L.autograd.backward(y.sum(), inputs={"a": z})),
                z.grad)

    compare(scenario)


def test_backward_with_inputs(compare):
    """test_backward_with_inputs / test_backward_with_scalar_input /
    test_backward_with_nonleaf_inputs: gradients go only to the given inputs; a non-leaf input
    retains its gradient; an input not in the graph keeps None."""

    def scenario(L):
        x = _ab(L, 2, 2).double().requires_grad_()
        y = _ab(L, 2, 2, start=3.0).double().requires_grad_()

        def fn():
            return x ** 2 + y * x + y ** 2

        gradient = L.ones(2, 2)
        out = []

        def reset():
            with L.no_grad():
                x.grad.zero_()
                y.grad.zero_()

        L.autograd.backward(fn(), gradient, inputs=[x, y])
        out += [x.grad.clone(), y.grad.clone()]
        for inputs in ([x], [y], y):
            reset()
            L.autograd.backward(fn(), gradient, inputs=inputs)
            out += [x.grad.clone(), y.grad.clone()]
        reset()
        out.append(raised(lambda: L.autograd.backward(fn(), gradient, inputs=[])))
        s = L.tensor(1.5, dtype=L.double, requires_grad=True)
        (s ** 2).backward(inputs=s)
        out.append(s.grad)

        x = _ab(L, 2, 2).double().requires_grad_()
        x_nonleaf = x * 1
        y = _ab(L, 2, 2, start=3.0).double().requires_grad_()
        z = _ab(L, 2, 2, start=5.0).double().requires_grad_()
        res = x_nonleaf ** 2 + y * x_nonleaf + y ** 2
        res.backward(L.ones(2, 2, dtype=L.double), create_graph=True,
                     inputs=[x, y, x_nonleaf])
        out += [x.grad, y.grad, x_nonleaf.grad, x_nonleaf.retains_grad]
        res.backward(L.ones(2, 2, dtype=L.double), create_graph=True, inputs=[z])
        out.append(z.grad)
        x.grad = y.grad = x_nonleaf.grad = None
        return out

    compare(scenario)


def test_backward_twice(compare):
    """test_backward_twice_retained_graph_with_saved_values / _without_saved_values /
    _retained_graph_without_saved_values: a retained graph runs again; a graph that saved
    nothing runs again without retain_graph."""

    def scenario(L):
        out = []
        b = L.linspace(0, 1, 3, dtype=L.double).requires_grad_()
        c = L.zeros(3, dtype=L.double)
        c[[1, 2]] = b[[1, 1]]
        c.backward(L.tensor([1, 1, 1], dtype=L.double), retain_graph=True)
        c.backward(L.tensor([1, 1, 1], dtype=L.double))
        out.append(b.grad)
        b = L.linspace(0, 1, 3, dtype=L.double).requires_grad_()
        c = b + 1
        c.backward(L.tensor([1, 1, 1], dtype=L.double))
        c.backward(L.tensor([1, 1, 1], dtype=L.double))
        out.append(b.grad)
        return out

    compare(scenario)


def test_backward_create_graph_warns(compare, lib_name):
    """test_backward_create_graph_warns: backward(create_graph=True) warns (once per process,
    as torch's TORCH_WARN_ONCE), grad(create_graph=True) does not."""
    from torchcompare import run_fresh

    body = """
b = L.ones(3, requires_grad=True, dtype=L.double)
c = b * b
c.backward(L.ones_like(c), create_graph=True)
b.grad = None
L.autograd.grad(c, b, L.ones_like(c), create_graph=True)
note("done")
"""
    assert run_fresh(lib_name, body) == run_fresh("torch", body)


def test_accumulate_grad(compare):
    """test_accumulate_grad / test_accumulate_grad_tensor_reference (dense gradients) /
    test_accumulate_grad_with_zero_numel_grad: in place without create_graph (the same .grad
    object), out of place with it."""

    def scenario(L):
        out = []
        for create_graph in (False, True):
            x = _ab(L, 5, 5).requires_grad_()
            y = x + 2
            y.backward(L.ones(5, 5), retain_graph=True)
            x_grad = x.grad
            x_grad_clone = x.grad.clone()
            y.backward(L.ones(5, 5), create_graph=create_graph)
            out += [x_grad, x_grad_clone, x.grad is x_grad]
            params = L.tensor([1.5, 1.5]).requires_grad_()
            params.grad = L.tensor([1.5, 1.5])
            saved = params.grad
            params.backward(L.tensor([1.5, 1.5]), create_graph=create_graph)
            out.append(saved is params.grad)
        a = L.ones(4, 0, requires_grad=True)
        b = L.ones(4, 1, requires_grad=True)
        c = a + b
        c.sum().backward()
        return out + [c.shape, b.grad, a.grad]

    compare(scenario)


def test_backward_copy(compare):
    """test_backward_copy: a gradient buffered in three places is summed correctly."""

    def scenario(L):
        x = L.ones(5, 5, requires_grad=True)
        y = L.ones(5, 5, requires_grad=True)
        a = x + 2
        b = y + 2
        c = x + 2
        add1 = a + b
        add2 = add1 + c
        for _ in range(4):
            a = a * 2
            b = b * 2
            c = c * 2
        branch = a + b + c
        out = add2 + branch
        out.backward(L.ones(5, 5))
        return x.grad, y.grad

    compare(scenario)


def test_input_buffer_accum(compare):
    """test_input_buffer_accum (dense): the given gradients are not changed in place."""

    def scenario(L):
        leaf = _ab(L, 2, 2).requires_grad_()
        out1 = leaf.clone()
        out2 = leaf.clone()
        grad_out1_original = _ab(L, 2, 2, start=5.0)
        grad_out1 = grad_out1_original.clone()
        grad_out2 = _ab(L, 2, 2, start=9.0)
        L.autograd.backward((out1, out2), (grad_out1, grad_out2))
        return L.equal(grad_out1, grad_out1_original), leaf.grad

    compare(scenario)


def test_hessian_vector(compare):
    """test_hessian_vector / test_grad: second derivatives through .grad after
    backward(create_graph=True) and through grad(); the grad_output shape error."""

    def scenario(L):
        x = _ab(L, 2, 2).requires_grad_()
        y = _ab(L, 2, 2, start=3.0).requires_grad_()
        z = x ** 2 + y * x + y ** 2
        z.backward(L.ones(2, 2), create_graph=True)
        out = [x.grad.clone(), y.grad.clone()]
        grad_sum = 2 * x.grad + y.grad
        x_hv = L.autograd.grad(outputs=[grad_sum], grad_outputs=[L.ones(2, 2)], inputs=[x],
                               create_graph=True)
        out.append(x_hv)
        grad_sum.backward(L.ones(2, 2))
        out += [x.grad, y.grad]
        out.append(raised(lambda: L.autograd.grad(
            outputs=[grad_sum], grad_outputs=[L.ones(2)], inputs=[x], create_graph=True)))
        x.grad = None
        y.grad = None
        return out

    compare(scenario)


# --------------------------------------------------------------------------------------------
# grad
# --------------------------------------------------------------------------------------------


def test_grad_bad_arguments(compare):
    """test_grad_badcalls / test_grad_empty_inputs / wrong grad_outputs: torch's errors (and
    its results, where torch accepts the call)."""

    def scenario(L):
        x = L.ones(1)
        y = x ** 2
        z = L.ones(2, requires_grad=True)
        w = z * 2
        return (raised(lambda: L.autograd.grad(x, y)),
                raised(lambda: L.autograd.grad(y, x)),
                L.autograd.grad(z.sum(), z),
                raised(lambda: L.autograd.grad(2 * z, [], grad_outputs=L.ones(2))),
                raised(lambda: L.autograd.grad(w, z)),
                L.autograd.grad(w.sum(), z, [L.ones(()), L.ones(())], retain_graph=True),
                raised(lambda: L.autograd.grad([w.sum(), w.sum()], z, [L.ones(())])),
                raised(lambda: L.autograd.grad(w.sum(), [z, 3], retain_graph=True)),
                raised(lambda: L.autograd.grad(w.sum(), [L.ones(2)], retain_graph=True)),
                raised(lambda: L.autograd.grad(w.sum(), [z, L.ones(2, requires_grad=True)],
                                               retain_graph=True)),
                raised(lambda: L.autograd.grad(w, z, L.ones(2, dtype=L.cfloat))),
                raised(lambda: L.autograd.grad(w, z, "abc")),
                L.autograd.grad(w.sum(), {"a": z}, retain_graph=True),
                raised(lambda: L.autograd.grad(w.sum(), z, allow_unused=False,
                                               materialize_grads=True)),
                L.autograd.grad(w.sum(), z, only_inputs=False))

    compare(scenario)


def test_grad_nonleaf(compare):
    """test_grad_nonleaf / test_grad_nonleaf_many_outputs: grad w.r.t. non-leaves leaves .grad
    alone and runs no hook behind them."""

    def scenario(L):
        x_init = _ab(L, 2, 2).requires_grad_()
        x = x_init
        y = _ab(L, 2, 2, start=2.0).requires_grad_()
        grad_output = L.ones(2, 2)

        def fn(x):
            return x ** 2 + y * x + y ** 2

        out = []
        for _ in range(5):
            (grad_x,) = L.autograd.grad(fn(x), x, grad_outputs=grad_output, create_graph=True)
            out += [y.grad, x.grad if x is x_init else None, grad_x.detach()]
            x = x + 0.05 * grad_x
        out.append(fn(x).sum() > fn(x_init).sum())
        x.backward(grad_output)
        out += [y.grad, x_init.grad]

        x = _ab(L, 4, 2).requires_grad_()
        a, b = x.chunk(2)
        called = []
        x.register_hook(lambda *g: called.append(True))
        go = _ab(L, 2, 2, start=-1.0)
        out.append(L.autograd.grad((a + 2 * b), [a, b], grad_outputs=go, create_graph=True))
        out += [called, x.grad]
        return out

    compare(scenario, rtol=1e-5)


def test_grad_unreachable(compare):
    """test_grad_unreachable / test_grad_unreachable_discovery: None for inputs not in the
    graph (with allow_unused), torch's error without; nodes that lead to no input do not
    run."""

    def scenario(L):
        x = L.ones(1, requires_grad=True)
        y = L.ones(1, requires_grad=True)
        z = x * 2  # (both leaves get an accumulator)
        w = y * 2  # noqa: F841
        out = [L.autograd.grad(x * 2, [x, y], allow_unused=True)]
        z = L.ones(1, requires_grad=True)
        out.append(L.autograd.grad(x * 2, [x, z], allow_unused=True))
        out.append(raised(lambda: L.autograd.grad(x * 2, [x, y], allow_unused=False)))

        class MyFunc(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, x):
                raise AssertionError("This node should not be executed!")

        x = MyFunc.apply(L.ones(1, requires_grad=True) * 2)
        y = L.ones(1, requires_grad=True)
        out.append(L.autograd.grad(x, (y,), allow_unused=True))
        x = MyFunc.apply(L.ones(1, requires_grad=True) * 2)
        z = L.ones(1, requires_grad=True)
        out.append(L.autograd.grad(x + z, (y, z), allow_unused=True))
        x = MyFunc.apply(L.ones(1, requires_grad=True) * 2)
        L.autograd.backward(x, inputs=(y,))
        out.append(y.grad)
        return out

    compare(scenario)


def test_grad_materialize_grads(compare):
    """test_grad_materialize_grads / test_unused_grad_requires_grad_with_materialize: zeros
    for unused inputs, allow_unused implied; the error with allow_unused=False."""

    def scenario(L):
        x = L.tensor(0.5, requires_grad=True)
        a = L.tensor(1.0, requires_grad=True)
        y = x * a
        dydx = L.autograd.grad(y, x, create_graph=True)
        d2_none = L.autograd.grad(dydx, x, create_graph=True, allow_unused=True)
        d2 = L.autograd.grad(dydx, x, create_graph=True, allow_unused=True,
                             materialize_grads=True)
        d3 = L.autograd.grad(d2, x, materialize_grads=True)
        return (d2_none, d2, d2[0].requires_grad, d3,
                raised(lambda: L.autograd.grad(y, x, allow_unused=False,
                                               materialize_grads=True)))

    compare(scenario)


def test_grad_batched_grad(compare):
    """test_grad_batched_grad: is_grads_batched takes a batch of grad_outputs (the first
    dimension) and its shape errors."""

    def scenario(L):
        x = _ab(L, 2, 2).requires_grad_()
        out = x.clone()
        batched = L.arange(3).expand(2, 2, 3).transpose(0, 2)
        res = [L.autograd.grad(out, (x,), (batched.float(),), is_grads_batched=True,
                               retain_graph=True)]
        res.append(raised(lambda: L.autograd.grad(outputs=out, grad_outputs=(L.ones(2, 2),),
                                                  inputs=(x,), is_grads_batched=True)))
        s = x.sum()
        res.append(L.autograd.grad(s, (x,), (L.arange(3).float(),), is_grads_batched=True,
                                   retain_graph=True))
        res.append(raised(lambda: L.autograd.grad(outputs=s, grad_outputs=(
            L.ones(2).unsqueeze(1),), inputs=(x,), is_grads_batched=True)))
        y = L.ones(3, requires_grad=True)
        z = (y * y).sum() * x.sum()
        gs = L.autograd.grad(z, (x, y), (L.arange(4.0),), is_grads_batched=True,
                             create_graph=True)
        res.append([(g.detach(), g.requires_grad) for g in gs])  # (torch's nodes come from
        return res  # vmap's batching: the values and requires_grad are what compare)

    compare(scenario)


def test_sharded_grad(compare):
    """test_sharded_grad: gradients w.r.t. intermediates in chunks, then backward from them."""

    def scenario(L):
        leaves = [L.zeros(5, 5, requires_grad=True) for _ in range(10)]
        intermediates = [lf * i + lf * lf for i, lf in enumerate(leaves)]
        loss = sum(v * i for i, v in enumerate(intermediates)).sum()
        d = [d_i for k in range(0, 10, 2)
             for d_i in L.autograd.grad(loss, intermediates[k:k + 2], retain_graph=True)]
        L.autograd.backward(intermediates, d)
        return [lf.grad for lf in leaves]

    compare(scenario)


# --------------------------------------------------------------------------------------------
# GradientEdge
# --------------------------------------------------------------------------------------------


def test_grad_to_node(compare):
    """test_grad_to_node / _multi / _materialize / test_backward_to_node: a GradientEdge in
    place of an input, from get_gradient_edge or built from (grad_fn, output_nr)."""

    def scenario(L):
        GE = L.autograd.graph.GradientEdge
        out = []

        class Clone(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def backward(ctx, g):
                return g

        x = L.tensor([0.5, 1.5], requires_grad=True)
        for make in (lambda t: t, lambda t: t.clone(), lambda t: Clone.apply(t),
                     lambda t: L.var_mean(t)[1]):
            x = make(x)
            o = x.clone()
            edge = L.autograd.graph.get_gradient_edge(x)
            out += [L.autograd.grad(o.sum(), x, retain_graph=True),
                    L.autograd.grad(o.sum(), edge), type(edge.node).__name__, edge.output_nr,
                    edge.ownership_token]
        x = L.tensor([0.5, 1.5], requires_grad=True).clone()
        y = L.tensor([2.0, 3.0], requires_grad=True).clone()
        s = x + y
        out.append(L.autograd.grad(s.sum(), (GE(x.grad_fn, x.output_nr),
                                             GE(y.grad_fn, y.output_nr))))
        edge_x, edge_y = GE(x.grad_fn, x.output_nr), GE(y.grad_fn, y.output_nr)
        o = x.clone()
        out.append(L.autograd.grad(o.sum(), (edge_x, y), allow_unused=True,
                                   materialize_grads=True, retain_graph=True))
        out.append(L.autograd.grad(o.sum(), (x, y), allow_unused=True, materialize_grads=True,
                                   retain_graph=True))
        out.append(L.autograd.grad(o.sum(), (x, edge_y), allow_unused=True, retain_graph=True))
        out.append(raised(lambda: L.autograd.grad(o.sum(), (x, edge_y), allow_unused=True,
                                                  materialize_grads=True)))
        leaf_x = L.tensor([0.5, 1.5], requires_grad=True)
        leaf_y = L.tensor([2.0, 3.0], requires_grad=True)
        x, y = leaf_x.clone(), leaf_y.clone()
        edge_x, edge_y = GE(x.grad_fn, x.output_nr), GE(y.grad_fn, y.output_nr)
        o = x.clone()
        for inputs in ((edge_x, y), (x, y), (x, edge_y), (edge_x, edge_y)):
            L.autograd.backward(o.sum(), inputs=inputs, retain_graph=True)
        out += [x.grad, y.grad, leaf_x.grad]
        out.append(raised(lambda: L.autograd.graph.get_gradient_edge(L.ones(2))))
        return out

    compare(scenario)


def test_grad_to_node_inplace(compare):
    """test_grad_to_node_inplace: an edge taken before an in-place change is the gradient of
    the old value."""

    def scenario(L):
        x = L.tensor([0.5, 1.5], requires_grad=True).clone()
        x_edge = L.autograd.graph.get_gradient_edge(x)
        x *= 2
        return L.autograd.grad(x.sum(), (x_edge, x))

    compare(scenario)


def test_gradient_edge_output(compare):
    """test_gradient_edge_output: a GradientEdge as the output of grad/backward, with implicit
    and explicit grad_outputs, mixed with tensors, and the shape and dtype errors."""

    def scenario(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)

        def fn(x, reduce=True):
            tmp = x.sin().cos()
            if reduce:
                tmp = tmp.sum()
            o = tmp.exp().clone().sin().sum()
            return o, L.autograd.graph.get_gradient_edge(tmp)

        res = []
        o, edge = fn(x)
        (tmp_grad,) = L.autograd.grad(o, (edge,))
        (x_grad,) = L.autograd.grad(edge, (x,), grad_outputs=(tmp_grad,))
        o, _ = fn(x)
        res += [x_grad, L.autograd.grad(o, (x,))]
        o, edge = fn(x, reduce=False)
        res.append(raised(lambda: L.autograd.grad(edge, (x,))))
        o, edge = fn(x, reduce=True)
        res.append(L.autograd.grad(edge, (x,)))
        o, edge = fn(x)
        res.append(raised(lambda: L.autograd.grad(edge, (x,),
                                                  grad_outputs=L.tensor([1.0, 2.0, 3.0]))))
        o, edge = fn(x)
        (tmp_grad,) = L.autograd.grad(o, (edge,))
        res.append(raised(lambda: L.autograd.grad(edge, (x,), grad_outputs=L.ones_like(
            tmp_grad, dtype=L.complex64))))
        o, edge = fn(x)
        L.autograd.backward(edge, retain_graph=True)
        res += [x.grad.clone(), L.autograd.grad(edge, (x,), retain_graph=True)]
        x.grad = None
        L.autograd.backward((edge,), retain_graph=True)
        res.append(x.grad.clone())
        o1, edge1 = fn(x)
        o2, _ = fn(x)
        res.append(L.autograd.grad((edge1, o2), (x,), retain_graph=True))
        x.grad = None
        L.autograd.backward((edge1, o2), retain_graph=True)
        res.append(x.grad)
        o, edge = fn(x)
        res.append(raised(lambda: L.autograd.backward(edge, inputs=(x,),
                                                      grad_tensors=L.tensor([1.0, 2.0, 3.0]))))
        return res

    compare(scenario)


def test_gradient_edge_graph_ownership(compare):
    """test_gradient_edge_graph_ownership: an edge keeps its part of the graph alive."""

    def scenario(L):
        class Clone(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def backward(ctx, gX):
                return gX.clone()

        leaf = L.tensor([2.0], requires_grad=True)
        inp = leaf.clone()
        for make in (lambda: inp.clone(), lambda: Clone.apply(inp)):
            o = make()
            edge = L.autograd.graph.get_gradient_edge(o)
            L.autograd.backward(edge)
            del o
            gc.collect()
            L.autograd.backward(edge)
        return leaf.grad

    compare(scenario)


# --------------------------------------------------------------------------------------------
# Graph structure, requires_grad, and odds and ends of backward
# --------------------------------------------------------------------------------------------


def test_next_functions(compare):
    """test_next_functions / test_isolated_node / test_shape."""

    def scenario(L):
        x = L.ones(5, 5, requires_grad=True)
        y = L.ones(5, 5, requires_grad=True)
        a = x + y
        nf = a.grad_fn.next_functions
        b = a + 5
        nf2 = b.grad_fn.next_functions
        c = L.max(a, 1, True)[1].repeat(1, 5).double()
        (c + a).sum().backward()
        return ([type(n).__name__ for n, _ in nf], [i for _, i in nf],
                nf2[0][0] is a.grad_fn, nf2[1][0], x.grad, len(x.shape), x.shape[0])

    compare(scenario)


def test_requires_grad(compare):
    """test_requires_grad / test_requires_grad_ / test_attribute_deletion /
    TestAutogradDeviceType.test_set_requires_grad_only_for_floats / test_requires_grad_factory:
    requires_grad propagation, requires_grad_ on leaves and non-leaves, and its errors."""

    def scenario(L):
        x = L.ones(5, 5)
        y = L.ones(5, 5)
        z = L.ones(5, 5, requires_grad=True)
        a = x + y
        b = a + z
        out = [a.requires_grad, b.requires_grad]
        x = L.ones(5, 5)
        y = L.ones(5, 5, requires_grad=True)
        out += [x.requires_grad_() is x, x.requires_grad, y.requires_grad_(True) is y]
        z = x * y
        out += [raised(lambda: z.requires_grad_(False)), z.requires_grad_() is z,
                x.requires_grad_(False) is x, x.requires_grad]
        w = L.ones(5, 5, requires_grad=True)
        del w.grad
        out.append(w.grad)
        for dtype in (L.float, L.double, L.int8, L.int16, L.int32, L.int64):
            t = L.ones(1, dtype=dtype)
            t.requires_grad = False
            out += [raised(lambda dtype=dtype: L.ones(1, dtype=dtype).requires_grad_()),
                    raised(lambda dtype=dtype: L.ones(1, dtype=dtype, requires_grad=True))]
        for fn in (L.ones_like,):
            for rg in (True, False):
                o = fn(L.ones(2, 3), dtype=L.double, requires_grad=rg)
                out += [o.requires_grad, o.dtype]
        return out

    compare(scenario)


def test_grad_assignment(compare):
    """TestAutogradDeviceType.test_grad_assignment: .grad must be a tensor of the right size
    and dtype, and not the tensor itself."""

    def scenario(L):
        x = L.ones(5, 5)
        return (raised(lambda: setattr(x, "grad", 0)),
                raised(lambda: setattr(x, "grad", L.ones(2, 2))),
                raised(lambda: setattr(x, "grad", L.ones(5, 5, dtype=L.long))),
                raised(lambda: setattr(x, "grad", x)))

    compare(scenario)


def test_numpy_requires_grad_and_pickle(compare):
    """test_numpy_requires_grad / test_pickle."""

    def scenario(L):
        x = L.ones(2, 2, requires_grad=True)
        out = [raised(lambda: x.numpy())]
        with L.no_grad():
            out.append(raised(lambda: x.numpy()))
        y = L.ones(10, 10)
        for p in range(3):
            xc, yc = pickle.loads(pickle.dumps([x, y], protocol=p))
            out += [xc.requires_grad, yc.requires_grad, L.equal(xc, x)]
        return out

    compare(scenario)


def test_indexing(compare):
    """test_indexing / test_indexing_duplicates / test_index_backward_does_not_save_tensor:
    gradients of basic and advanced indexing, repeated indices accumulating."""

    def scenario(L):
        res = []
        x = L.arange(1.0, 17).view(4, 4)
        y = x.clone().requires_grad_()
        for idx in (1, (1, 1), slice(1, None), (slice(None, 2), 2), (1, slice(2, None)),
                    L.LongTensor([0, 2]), (Ellipsis, slice(2, None)), ([0], [0]),
                    ([1, 2, 3], [0]), ([[1, 2], [3, 0]], [[0, 1], [2, 3]]),
                    (slice(None), [2, 3]), ([2, 3], slice(None)), [0],
                    L.tensor([[True, False, True, False]] * 4)):
            if y.grad is not None:
                with L.no_grad():
                    y.grad.zero_()
            v = y[idx]
            v.sum().backward()
            res += [v.detach(), y.grad.clone()]
        x = L.arange(1.0, 49).view(4, 3, 4)
        y = x.clone().requires_grad_()
        for idx in ((slice(None), [0], [0]), ([0, 1, 2], [0], slice(None)),
                    (slice(None), [[1, 2], [2, 0]], [[0, 1], [2, 3]]),
                    ([0], Ellipsis), (Ellipsis, [1, 2], [0, 1]),
                    (L.LongTensor([0, 1]), Ellipsis)):
            y.grad = None
            y[idx].sum().backward()
            res.append(y.grad)
        for idx in (L.LongTensor([1, 1, 3, 2, 1, 2]), ([1, 1, 3, 2, 1, 2], [0]),
                    ([[1, 2], [0, 0]], [[0, 1], [1, 1]])):
            y = L.arange(1.0, 17).view(4, 4).requires_grad_()
            y[idx].sum().backward()
            res.append(y.grad)
        y = L.arange(1.0, 65).view(4, 4, 4).requires_grad_()
        y[[1, 1, 1], slice(None), slice(None)].sum().backward()
        res.append(y.grad)
        a = L.tensor([1.0, 0, 0])
        b = L.zeros(3, requires_grad=True)
        tensor = b + 0
        tensor[a != 0] = tensor[a != 0]
        tensor.backward(L.zeros_like(tensor))
        res.append(b.grad)
        return res

    compare(scenario)


def test_setitem(compare):
    """test_setitem / test_setitem_mask / test_leaf_assignment: assignment into a non-leaf
    zeroes the gradient there and sends the value's gradient to the value."""

    def scenario(L):
        res = []
        for size, index in (((5, 5), 1), ((5,), 1), ((1,), 0), ((10,), [0, 4, 2]),
                            ((5, 5), ([0, 4], [2, 2])), ((5, 5, 5), (slice(None), [1, 3])),
                            ((5, 5, 5), ([1, 3], [2, 4], slice(None))),
                            ((5, 5), L.tensor([[True, False] * 2 + [True]] * 5))):
            x = L.ones(*size, requires_grad=True)
            y = x + 2
            v0 = y._version
            y[index] = 2
            res.append(y._version != v0)
            y.backward(L.ones(*size))
            res.append(x.grad)
        for size, index in (((5, 5), 3), ((5, 5), ([0, 1], [1, 0])), ((5,), [0, 1, 2, 3]),
                            ((5, 5, 5), (slice(None), slice(None), [1, 3]))):
            x = L.ones(*size, requires_grad=True)
            y = x + 2
            value = x.new(x[index].size()).fill_(7)
            value.requires_grad = True
            y[index] = value
            y.backward(L.ones(*size))
            res += [x.grad, value.grad]
        x = L.ones(4, requires_grad=True)
        y = L.zeros(2, 3, 4)
        y[1] = x
        y.backward(L.ones(2, 3, 4))
        res.append(x.grad)
        x = L.zeros(5, 5)
        y = L.ones(5, requires_grad=True)
        z = L.ones(5, requires_grad=True)
        x[0] = y
        x[1] = 2 * z
        res += [x.requires_grad, x.grad_fn is not None]
        x.sum().backward()
        res += [y.grad, z.grad]
        return res

    compare(scenario)


def test_expanded_grad_outputs(compare):
    """test_diagonal_expanded_v / test_select_expanded_v / test_slice_expanded_v /
    test_unused_output / test_select_sum: grad_outputs with zero strides, chunks not used."""

    def scenario(L):
        res = []
        v = L.tensor(0.25).expand(10)
        a = L.ones(10, 10, dtype=L.double, requires_grad=True)
        res.append(L.autograd.grad(a.diagonal(), a, v.double()))
        v = L.arange(10.0).expand(10, 10)
        a = L.ones(10, 10, 10, requires_grad=True)
        res.append(L.autograd.grad(a[0], a, v))
        v = L.arange(10.0).reshape(10, 1).expand(2, 10, 10)
        res.append(L.autograd.grad(a[3:5], a, v))
        x = L.ones(10, 10, requires_grad=True)
        o = x.chunk(5)[2] * 4 + 2
        o.sum().backward()
        res.append(x.grad.clone())
        with L.no_grad():
            x.grad.zero_()
        x.chunk(5)[0].backward(L.arange(20.0).reshape(2, 10))
        res.append(x.grad)
        x = L.linspace(0, 1, 10, dtype=L.double).requires_grad_()
        res += [L.autograd.gradcheck(lambda t: t.select(0, 1).sum(), [x]),
                L.autograd.gradgradcheck(lambda t: t.select(0, 1).sum(), [x])]
        return res

    compare(scenario)


def test_type_conversions(compare):
    """test_type_conversions (its CPU part): legacy type objects and type_as; gradients
    through dtype casts come back in the leaf's dtype."""

    def scenario(L):
        L.manual_seed(0)
        x = L.randn(5, 5)
        res = [type(x.float()).__name__, isinstance(x.float(), L.FloatTensor),
               isinstance(x.int(), L.IntTensor)]
        for t in (L.DoubleTensor, L.FloatTensor, L.IntTensor, L.ByteTensor):
            for y_var in (True, False):
                y = L.randint(5, (5, 5), dtype=t.dtype)
                y = L.autograd.Variable(y) if y_var else y
                t_dtype = t().dtype
                res.append((isinstance(x.type(t), t), isinstance(x.type_as(y), t),
                            isinstance(x.type(t_dtype), t), x.type(t_dtype).dtype is t_dtype,
                            y.data_ptr() == y.type(t).data_ptr(), x.type(t).type()))
        for dtype in (L.float, L.double):
            var = L.autograd.Variable(L.randn(5, 5).to(dtype), requires_grad=True)
            other = L.double if dtype is L.float else L.float
            var.to(other).sum().backward()
            res.append((var.grad, type(var.grad).__name__, var.grad.dtype))
        return res

    compare(scenario)


def test_grad_dtype(compare):
    """test_grad_dtype (the float16/float64/bfloat16 cases): a leaf's grad_dtype decides the
    dtype its gradient is stored in, and what may be assigned."""

    def scenario(L):
        res = []
        leaf = L.tensor([1.0, 2.0], requires_grad=True)
        res.append(leaf.grad_dtype)
        leaf.grad_dtype = L.float16
        res.append(leaf.grad_dtype)
        leaf.grad_dtype = None
        res.append(leaf.grad_dtype)
        non_leaf = leaf * 2
        res += [raised(lambda: non_leaf.grad_dtype),
                raised(lambda: setattr(non_leaf, "grad_dtype", L.float16))]
        x = L.tensor([1.0, 2.0], requires_grad=True)
        x.grad_dtype = L.float16
        res.append(raised(lambda: setattr(x, "grad", L.tensor([1.0, 1.0]))))

        class Mismatched(L.autograd.Function):
            @staticmethod
            def forward(ctx, inp):
                return inp * 2

            @staticmethod
            def backward(ctx, grad_output):
                return grad_output.to(L.float64)

        for want in (False, None, L.float16):
            d = L.tensor([1.0, 2.0], requires_grad=True)
            if want is not False:
                d.grad_dtype = want
            Mismatched.apply(d).sum().backward()
            res.append(d.grad)
        return res

    compare(scenario)


def test_integer_outputs(compare):
    """test_integer_outputs / TestAutogradDeviceType.test_non_differentiable_ops: integer and
    boolean results never require grad."""

    def scenario(L):
        inp = L.linspace(0, 1, 4).requires_grad_()
        val = L.tensor(0.3, requires_grad=True)
        vals = L.linspace(0, 1, 25).reshape(5, 5).requires_grad_()
        bins = L.linspace(0, 1.0, steps=100, requires_grad=True)
        outs = [inp.argmax(), inp.argmin(), inp.argsort(), L.searchsorted(inp, val),
                L.bucketize(vals, bins), L.empty(5).requires_grad_().count_nonzero(),
                L.isin(L.tensor([[1, 2], [3, 4.0]], requires_grad=True), L.tensor([2, 3])),
                L.signbit(inp)]
        res = [(o.dtype.is_floating_point, o.requires_grad) for o in outs]
        for kwargs in ({"return_inverse": True}, {"return_counts": True},
                       {"return_inverse": True, "return_counts": True}):
            res.append([t.requires_grad for t in L.unique(inp, **kwargs)[1:]])
        return res

    compare(scenario)


def test_special_gradients(compare):
    """test_power_function / test_pow_zero_tensor_gradient / test_atan2_zero_gradient /
    test_trace_backward_nonsquare_171704 / test_var_mean_differentiable /
    TestAutogradDeviceType.test_min_max_median_backprops_to_all_values / test_where_scalar /
    test_mv_grad_stride_0: gradients at the edge cases torch tests."""

    def scenario(L):
        res = []
        a = L.tensor([0.0, 0.0, 0.0])
        for base in (a, 0):
            b = L.tensor([-1.0, 0.0, 1.0], requires_grad=True)
            with warnings.catch_warnings():  # (tapegrad's forward may let NumPy's "divide by
                warnings.simplefilter("ignore", RuntimeWarning)  # zero" through: _numpy_warnings)
                y = L.sum(base ** b)
            y.backward()
            res.append(b.grad)
        for size, exponent in (((10,), L.zeros(10)), ((10, 10), L.zeros(10, 10)), ((10,), 0)):
            x = L.zeros(*size, requires_grad=True)
            x.pow(exponent).sum().backward()
            res.append(x.grad.abs().sum())
        x = L.tensor([0.0], requires_grad=True)
        y = L.tensor([0.0], requires_grad=True)
        L.atan2(x, y).backward()
        res += [x.grad, y.grad]
        for shape in [(5, 2), (4, 1), (1, 5), (2, 5)]:
            t = L.ones(shape, dtype=L.float64, requires_grad=True)
            L.trace(t).backward()
            res.append(t.grad)
        input1 = L.linspace(-1, 1, 3 * 4 * 5 * 6).reshape(3, 4, 5, 6).requires_grad_()
        input2 = input1.detach().clone().requires_grad_()
        var1, mean1 = L.var_mean(input1, dim=[1, 3])
        var2 = input2.var(dim=[1, 3])
        mean2 = input2.mean(dim=[1, 3])
        (var1 * var1 * mean1 * mean1).sum().backward()
        (var2 * var2 * mean2 * mean2).sum().backward()
        res += [input1.grad, input2.grad]
        for f in (L.min, L.max, L.median, L.nanmedian):
            for x in (L.tensor([1.0, 0.0, 1.0, 0.0, 1.0, 0.0], requires_grad=True),
                      L.tensor([float("nan")] * 3, requires_grad=True)):
                f(x).backward()
                res.append(x.grad)
        x = L.linspace(0, 1, 25, dtype=L.double).reshape(5, 5).requires_grad_()
        cond = L.arange(25).reshape(5, 5) % 3 == 0
        res += [L.autograd.gradcheck(lambda c, t: L.where(c, 4.0, t), (cond, x)),
                L.autograd.gradcheck(lambda c, t: L.where(c, t, 4.0), (cond, x))]
        mat = L.arange(4.0, dtype=L.double).reshape(2, 2)
        vec = L.tensor([0.5], dtype=L.double, requires_grad=True)
        res.append(L.autograd.gradcheck(lambda v: (mat @ v.expand(2)).sum(), (vec,)))
        return res

    compare(scenario)


def test_complex_scalar_backward(compare):
    """TestAutogradDeviceType.test_complex_scalar_backward / test_to_r_to_c / test_copy_r_to_c:
    implicit gradients need a real scalar; real-to-complex conversions send back the real
    part."""

    def scenario(L):
        a = L.zeros(1, requires_grad=True)
        b = a * 0.5j
        res = [raised(lambda: b.backward()), raised(lambda: L.autograd.grad(b, a))]
        inp_r = L.linspace(-1, 1, 6, dtype=L.double).reshape(3, 2).requires_grad_()
        out = inp_r.to(L.complex128).sum()
        out.abs().backward()
        res.append(inp_r.grad)
        out_c = L.empty(3, 2, dtype=L.cdouble)
        inp_r = L.linspace(-1, 1, 6, dtype=L.double).reshape(3, 2).requires_grad_()
        out_c.copy_(inp_r)
        out_c.sum().abs().backward()
        res.append(inp_r.grad)
        return res

    compare(scenario)


def test_strided_leaf_grad_layout(compare):
    """TestAutogradDeviceType.test_strided_leaf_grad_layout: .grad has the leaf's strides when
    the leaf is dense (channels_last too), row-major otherwise."""

    def scenario(L):
        res = []
        for fmt_a in (L.contiguous_format, L.channels_last):
            a = L.ones(2, 3, 4, 5).to(memory_format=fmt_a).requires_grad_()
            b = L.ones(2, 3, 4, 5).requires_grad_()
            a.sum().backward()
            res.append(a.grad.stride() == a.stride())
            a.grad = None
            (a * b).sum().backward()
            res.append(a.grad.stride() == a.stride())
        c = L.empty_strided((2, 2), (4, 2)).copy_(L.ones(2, 2)).requires_grad_()
        c.sum().backward()
        res.append(c.grad.stride())
        c.grad = None
        (c * L.ones(2, 2)).sum().backward()
        res.append(c.grad.stride())
        return res

    compare(scenario)


def test_pyscalar_conversions(compare):
    """TestAutogradDeviceType.test_pyscalar_conversions: int/float/bool of one-element
    tensors, with nan and inf."""

    def scenario(L):
        res = []
        lt = L.zeros(1, 1, 1, dtype=L.long)
        lt[0] = -12345
        res.append(int(lt))
        f = L.autograd.Variable(L.randn(1, 1, dtype=L.double))
        for v in (-12345.1, float("nan"), float("inf"), -float("inf")):
            f[0] = v
            res.append(str(float(f)))
        lt[0] = 1234567890123456789
        res.append(float(lt))
        for v in (float("nan"), float("inf"), -float("inf")):
            f[0] = v
            res.append(raised(lambda: int(f[0])))
        f[0] = 1.7976931348623157e308
        res.append(int(f))
        for t, values in ((lt, (0, -2)), (f, (0.0, 1e-300, 2.2250738585072014e-308,
                                              float("nan"), float("inf"), -float("inf")))):
            for v in values:
                t[0] = v
                res.append(bool(t))
        return res

    compare(scenario)


def test_no_unnecessary_save_and_deep_graphs(compare):
    """test_no_unnecessary_save / test_free_deep_graph / test_free_deep_graph_complicated /
    test_variable_traverse: only what a rule needs is saved; long chains and graphs with skip
    connections are freed without recursion."""

    def scenario(L):
        mu = L.ones(1, requires_grad=True)
        x = L.empty(1)
        loss = 0
        for i in range(3):
            x.detach_()
            x.copy_(mu + i)
            loss += (x * L.tensor([float(i)])).sum()
        loss.backward()
        res = [mu.grad]

        def chain():
            x = L.ones(1, requires_grad=True)
            y = x.clone()
            for _ in range(30000):
                y = y + y * 0.000001
            return weakref.ref(y)  # the whole chain goes with y, no recursion limit hit

        ref = chain()
        gc.collect()
        res.append(ref() is None)

        def skips():
            x = L.ones(1, requires_grad=True)
            y = x.clone()
            prev = [None, None]
            for k in range(10000):
                prev_tensors = [t for t in prev[:-1] if t is not None]
                prev.append(y)
                prev.pop(0)
                y = y + y * 0.000001
                if len(prev_tensors) == 1 and k % 2:
                    y = y + L.cat(prev_tensors).sum() * 0
            return weakref.ref(y)

        ref = skips()
        gc.collect()
        res.append(ref() is None)
        inp = L.ones(10, requires_grad=True)
        out = inp.view(10, 1).view(10)
        gc.collect()
        out.backward(L.ones(10))
        res.append(inp.grad)
        return res

    compare(scenario)


def test_not_implemented_derivatives(compare):
    """test_not_implemented_grad / test_not_implemented_fwad: torch's errors for an op without
    a derivative (nextafter) or without a forward-mode rule (igamma)."""

    def scenario(L):
        a = L.ones(2, requires_grad=True)
        y = L.nextafter(a, a).sum()
        res = [raised(lambda: y.backward())]

        def fw():
            with L.autograd.forward_ad.dual_level():
                d = L.autograd.forward_ad.make_dual(L.ones(3), L.ones(3))
                L.igamma(d, d)

        res.append(raised(fw))
        return res

    compare(scenario)


def test_dir_and_volatile(compare):
    """test_dir / test_volatile_deprecated: every name dir() lists is an attribute; volatile
    is False with a warning."""

    def scenario(L):
        x = L.ones(10, 10)
        keys = dir(x)
        missing = [k for k in keys if k not in ("imag", "volatile") and not hasattr(x, k)]
        return "shape" in keys, missing, raised(lambda: hasattr(x, "imag")), x.volatile

    compare(scenario)


def test_unrelated_inputs(compare):
    """test_unrelated_inputs: gradcheck/gradgradcheck with an input the output ignores."""

    def scenario(L):
        x = L.linspace(0, 1, 10, dtype=L.double).requires_grad_()
        y = L.linspace(1, 2, 10, dtype=L.double).requires_grad_()
        return (L.autograd.gradcheck(lambda x, y: x * x, (x, y)),
                L.autograd.gradgradcheck(lambda x, y: x * x, (x, y)))

    compare(scenario)


def test_copy_requires_grad(compare):
    """TestAutogradDeviceType.test_copy_ / test_copy_forward_ad_broadcasting /
    test_copy_forward_ad_same_layout_copies_grad: copy_ from a tensor that requires grad makes
    the destination require grad (every floating dtype); forward-mode through copy_."""

    def scenario(L):
        x = L.ones(10, requires_grad=True)
        res = []
        for dt in (L.float32, L.float64, L.float16, L.bfloat16):
            y = L.empty(10, dtype=dt)
            y.copy_(x)
            res.append(y.requires_grad)
        res.append(x.to(L.bfloat16).requires_grad)
        fw = L.autograd.forward_ad
        with fw.dual_level():
            dual = fw.make_dual(L.ones(3, 3), L.full((3, 3), 2.0))
            nd = L.zeros(1, 3, 3)
            nd.copy_(dual)
            res.append(fw.unpack_dual(nd).tangent)
            tangent = L.tensor([[5.0], [6.0]])
            xd = fw.make_dual(L.tensor([[3.0], [4.0]]), tangent)
            nd = L.tensor([[1.0], [2.0]])
            nd.copy_(xd)
            res += [fw.unpack_dual(nd).tangent is not tangent, fw.unpack_dual(nd).tangent]
        return res

    compare(scenario)


def test_scatter_index_reduce_gradients(compare):
    """TestAutogradDeviceType.test_scatter_index_reduce_amin_amax_backprops_to_all_values /
    test_scatter_index_reduce_prod_gradgrad_error (its first-order half): gradients spread
    evenly over tied extremes, and prod with two zeros gathered together."""

    def scenario(L):
        res = []
        for fn in (L.scatter_reduce,):  # (index_reduce: the same rules, a beta warning)
            for reduction in ("amin", "amax"):
                input = L.tensor([[1.0, 2.0, 2.0], [3.0, 3.0, 1.0]], dtype=L.float64,
                                 requires_grad=True)
                src = input.clone().detach_().requires_grad_(True)
                idx = L.arange(2)
                if fn is L.scatter_reduce:
                    idx = idx.unsqueeze(-1).expand((2, 3))
                res.append(L.autograd.gradcheck(fn, (input, 0, idx, src, reduction)))
        input = L.tensor([1.0], dtype=L.float64, requires_grad=True)
        src = L.tensor([0.0, 0.0], dtype=L.float64, requires_grad=True)
        idx = L.tensor([0, 0])
        res.append(L.autograd.gradcheck(L.scatter_reduce, (input, 0, idx, src, "prod")))
        return res

    compare(scenario)


# --------------------------------------------------------------------------------------------
# Threads
# --------------------------------------------------------------------------------------------


def _run_threads(fn, args=(), n=10):
    errors = []

    def target():
        try:
            fn(*args)
        except Exception as e:  # noqa: BLE001 - recorded and compared
            errors.append(e)

    threads = [threading.Thread(target=target) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    return errors


def test_multithreaded_backward(compare):
    """TestMultithreadAutograd.test_simple_backward / test_simple_backward_same_input /
    test_python_thread_in_middle / test_multithreaded_exception_propagation: backward in
    several threads at once, on separate and shared graphs."""

    def scenario(L):
        res = []

        def train_fn():
            x = L.ones(5, 5, requires_grad=True)
            y = (x + 3) * (x + 4) * 0.5
            y.sum().backward()
            res.append(L.equal(x.grad, x + 3.5))

        res.append(len(_run_threads(train_fn)))
        x = L.ones(5, 5, requires_grad=True)

        def same_input(x):
            y = (x + 3) * (x + 4) * 0.5
            y.sum().backward()

        res.append(len(_run_threads(same_input, (x,))))
        res.append(x.grad)
        grads = []
        _run_threads(lambda: grads.append(L.autograd.grad(((x + 3) * (x + 4) * 0.5).sum(),
                                                          x)[0]))
        res.append(all(L.equal(g, x + 3.5) for g in grads))
        x_retain = L.ones(5, 5, requires_grad=True)
        y_retain = x_retain + x_retain ** 2

        def retain(y):
            (y + y ** 2).sum().backward(retain_graph=True)

        _run_threads(retain, (y_retain,), n=5)
        res.append(x_retain.grad)
        errors = _run_threads(lambda: (_ for _ in ()).throw(AssertionError("boom")), n=2)
        res.append([type(e).__name__ for e in errors])
        return res

    compare(scenario)


def test_preserve_backtrace(compare):
    """TestMultithreadAutograd.test_preserve_backtrace: the traceback of an error in a custom
    backward shows the line that raised."""

    def scenario(L):
        import sys
        import traceback

        class Foo(L.autograd.Function):
            @staticmethod
            def forward(ctx, input):
                return input

            @staticmethod
            def backward(ctx, *grad):
                raise ValueError("something")

        t = L.ones(10, requires_grad=True)
        try:
            Foo.apply(t).sum().backward()
        except Exception:  # noqa: BLE001
            tb = "\n".join(traceback.format_tb(sys.exc_info()[2]))
            return 'raise ValueError("something")' in tb
        return None

    compare(scenario)


def test_grad_thread_safety(compare):
    """test_grad_thread_safety: reading .grad from several threads gives the same tensor."""

    def scenario(L):
        tensor = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        (tensor ** 2).sum().backward()
        seen = []
        _run_threads(lambda: seen.append(tensor.grad), n=4)
        return all(s is tensor.grad for s in seen), tensor.grad

    compare(scenario)


@pytest.mark.parametrize("retain", [True, False])
def test_reentrant_with_hooks(compare, retain):
    """test_reentrant_with_leaf_variable_hook / test_reentrant_with_non_leaf_variable_hook: a
    hook that removes itself and runs a backward of its own."""

    def scenario(L):
        handle = None
        param = L.arange(10.0, requires_grad=True)

        def leaf_hook(grad):
            handle.remove()
            old = grad
            param.grad = None
            with L.enable_grad():
                g = grad.detach().requires_grad_()
                new_param = param.detach().requires_grad_()
                ((g * 2) + new_param).sum().backward()
            res = g.grad + grad
            param.grad = old
            return res

        def non_leaf_hook(grad):
            handle.remove()
            with L.enable_grad():
                g = grad.detach().requires_grad_()
                ((g * 2) + 5).sum().backward()
            return g.grad + grad

        tmp = param * param
        if retain:
            handle = param.register_hook(leaf_hook)
        else:
            handle = tmp.register_hook(non_leaf_hook)
        tmp.sum().backward()
        return param.grad

    compare(scenario)


def test_out_variant_raises_when_inputs_require_grad(compare):
    """TestAutograd.test_out_variant_raises_when_inputs_require_grad: an out= function refuses
    inputs or an output that require grad, and runs under no_grad."""

    def scenario(L):
        a = L.linspace(-1.0, 1.0, 4).reshape(2, 2).requires_grad_()
        b = L.linspace(0.5, 2.0, 4).reshape(2, 2).requires_grad_()
        x = L.zeros(2, 2)
        res = [raised(lambda: L.mul(a, b, out=x))]
        with L.no_grad():
            L.mul(a, b, out=x)
        res += [x.clone(), x.requires_grad]
        y = L.zeros(2, 2, requires_grad=True)
        res.append(raised(lambda: L.mul(a.detach(), b.detach(), out=y)))
        res.append(raised(lambda: L.exp(a, out=L.zeros(2, 2))))
        return res

    compare(scenario)
