"""The custom ``autograd.Function`` API, each scenario run on torch and on the library under test.

Written from what torch's test/test_autograd.py checks (the coverage list, api.tsv, names the
torch test each one ports): forward/backward and setup_context styles, ctx's marks
(mark_dirty, mark_non_differentiable, set_materialize_grads), save_for_backward's rules,
once_differentiable, vjp/jvp, and every error torch raises on the way.
"""

from __future__ import annotations

import gc
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


def graph_desc(fn):
    """``Name(child, child, ...)`` of a node and everything below it (torch's test helper)."""
    if fn is None:
        return "None"
    children = ", ".join(graph_desc(n) for n, _ in fn.next_functions)
    return f"{type(fn).__name__}({children})"


def node_name(t):
    return None if t.grad_fn is None else t.grad_fn.name()


def _scalar_fn(L, once=False):
    """test_function's MyFunction: t1 + pyscalar * t2 + t1 * t2, its backward written by hand."""

    class MyFunction(L.autograd.Function):
        @staticmethod
        def forward(ctx, tensor1, pyscalar, tensor2):
            ctx.pyscalar = pyscalar
            ctx.save_for_backward(tensor1, tensor2)
            return tensor1 + pyscalar * tensor2 + tensor1 * tensor2

        @staticmethod
        def backward(ctx, grad_output):
            var1, var2 = ctx.saved_tensors
            seen.append((type(var1).__name__, type(grad_output).__name__,
                         L.is_grad_enabled()))
            return (grad_output + grad_output * var2, None,
                    grad_output * ctx.pyscalar + grad_output * var1)

    seen: list = []
    if once:
        MyFunction.backward = staticmethod(L.autograd.function.once_differentiable(
            MyFunction.backward.__func__ if hasattr(MyFunction.backward, "__func__")
            else MyFunction.backward))
    return MyFunction, seen


@pytest.mark.parametrize("once", [False, True])
def test_function_and_once_differentiable(compare, once):
    """test_function / test_once_differentiable: gradients with create_graph, the graph of the
    gradient (an Error node after once_differentiable) and grad mode inside backward."""

    def scenario(L):
        fn, seen = _scalar_fn(L, once)
        x = L.arange(1.0, 26.0).reshape(5, 5).requires_grad_()
        y = L.arange(2.0, 27.0).reshape(5, 5).requires_grad_()
        result = fn.apply(x, 2, y)
        go = L.ones((), requires_grad=True)
        result.sum().backward(go, create_graph=True)
        out = (x.grad, y.grad, x.grad.grad_fn is not None, graph_desc(x.grad.grad_fn),
               graph_desc(y.grad.grad_fn), seen)
        if once:
            out += (raised(lambda: x.grad.sum().backward()),)
        x.grad = None
        y.grad = None
        return out

    compare(scenario)


def test_function_returns_input(compare):
    """test_function_returns_input: returning an input makes a view with the Function's node."""

    def scenario(L):
        class MyFunction(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, grad):
                return grad * 2

        out = []
        for shape in [(1,), ()]:
            v = L.ones(shape, requires_grad=True)
            y = MyFunction.apply(v)
            out += [y is v, y._is_view(), y._base is v, node_name(y)]
            y.backward()
            out.append(v.grad.clone())
            with L.no_grad():
                v.grad.zero_()
            MyFunction.apply(v.clone()).backward()
            out.append(v.grad)
        with L.no_grad():  # not recording: a plain view, no history
            y = MyFunction.apply(L.ones(2))
        out += [y._is_view(), y.requires_grad, y.grad_fn]
        return out

    compare(scenario)


def test_function_returns_undefined_tensor(compare):
    """test_function_returns_undefined_tensor: None gradients stay None, never zeros."""

    def scenario(L):
        class MyFunction(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, grad):
                return None

        x = L.ones(1, requires_grad=True)
        MyFunction.apply(x).backward()
        a = x.grad
        MyFunction.apply(x ** 2).backward()
        b = x.grad
        MyFunction.apply(x).sum().backward()
        return a, b, x.grad, L.autograd.grad(MyFunction.apply(x), x, allow_unused=True)[0]

    compare(scenario)


def _undefined_grad_fn(L):
    """A Function whose backward returns None: what flows into the node before it is "no
    gradient" (torch's tests use the private UndefinedGrad node for this)."""

    class Undefined(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            return None

    return Undefined


@pytest.mark.parametrize("materialize", [True, False])
def test_materialize_grads(compare, materialize):
    """test_materialize_grads / test_dont_materialize_grads: a backward reached by no gradient
    still runs, with zeros (or None after set_materialize_grads(False))."""

    def scenario(L):
        seen = []

        class MyFunction(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.set_materialize_grads(materialize)
                return x

            @staticmethod
            def backward(ctx, grad):
                seen.append(grad)
                return grad

        x = L.ones(1, requires_grad=True)
        _undefined_grad_fn(L).apply(MyFunction.apply(x)).backward()
        return seen, x.grad

    compare(scenario)


def test_set_materialize_non_diff_grads(compare):
    """test_set_materialize_non_diff_grads: a non-differentiable output's gradient is None with
    _materialize_non_diff_grads off, zeros by default; materialize_grads is write-only."""

    def scenario(L):
        seen = []

        def make(flag):
            class Func(L.autograd.Function):
                @staticmethod
                def forward(ctx, x):
                    out0 = x.clone()
                    out1 = x.clone()
                    ctx.mark_non_differentiable(out1)
                    if flag is not None:
                        ctx._materialize_non_diff_grads = flag
                    return out0, out1

                @staticmethod
                def backward(ctx, g0, g1):
                    seen.append(g1)
                    return g0

            return Func

        a = L.tensor(1.0, requires_grad=True)
        for flag in (False, None):
            make(flag).apply(a)[0].backward()
        y = make(None).apply(a)[0]
        return (seen, a.grad, raised(lambda: y.grad_fn.materialize_grads),
                raised(lambda: y.grad_fn.set_materialize_grads(3)))

    compare(scenario)


def test_unused_grad_requires_grad_with_materialize(compare):
    """test_unused_grad_requires_grad_with_materialize: materialized zeros need no grad."""

    def scenario(L):
        x = L.ones(10, requires_grad=True)
        y = L.ones(10, requires_grad=True)
        z = (x ** 2).sum()
        g = L.autograd.grad(z, (x, y), allow_unused=True, materialize_grads=True,
                            create_graph=False)
        return g, g[0].requires_grad, g[1].requires_grad

    compare(scenario)


def test_legacy_function_errors(compare):
    """test_legacy_function_deprecation_exception / test_naughty_autograd_function_attribute_access:
    instantiating a Function warns, calling the instance raises the legacy-Function error, and
    the node is named after the Function."""

    def scenario(L):
        class MyFunction(L.autograd.Function):
            def forward(self, x):
                return x

            def backward(self, grad_output):
                return grad_output

        class Id(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, grad_x):
                return grad_x

        f = Id()
        x = L.zeros(1, requires_grad=True)
        # (torch's instance also lacks the node attributes, but touching them can crash
        # torch's interpreter at exit: not compared)

        return (raised(lambda: MyFunction()(L.arange(12.0).reshape(3, 4))),
                isinstance(f, Id), raised(lambda: f(x)), Id.apply(x).grad_fn.name(),
                type(Id.apply(x).grad_fn).__name__)

    compare(scenario)


def test_custom_function_exception(compare):
    """test_custom_function_exception: an exception raised in backward propagates."""

    def scenario(L):
        class SimulateBackwardError(L.autograd.Function):
            @staticmethod
            def forward(ctx, input):
                return input.clone()

            @staticmethod
            @L.autograd.function.once_differentiable
            def backward(ctx, input):
                raise ValueError("Simulate error on backward pass")

        t1 = L.ones(3, 3, requires_grad=True)
        t2 = L.ones(3, 3, requires_grad=True)
        tmp = (t1 + t2) * (t1 + t2)
        t3 = SimulateBackwardError.apply(tmp)
        return raised(lambda: t3.sum().backward())

    compare(scenario)


def _non_tensor_outputs_fn(L, save):
    class MyFunction(L.autograd.Function):
        @staticmethod
        def forward(ctx, t1, t2, scale, t3):
            t4 = t1 + t2 * t3
            t5 = t1 * t2 + t3
            t4 *= scale
            t5 *= scale
            if save:
                ctx.scale = scale
                ctx.save_for_backward(t1, t2, t3)
            return scale, t4, None, True, t5, "bar", t1

        @staticmethod
        @L.autograd.function.once_differentiable
        def backward(ctx, *grads):
            seen.append(tuple(g is None for g in grads))
            scale = ctx.scale
            var1, var2, var3 = ctx.saved_tensors
            return (grads[1] * scale + grads[4] * var2 * scale + grads[6],
                    grads[1] * var3 * scale + grads[4] * var1 * scale,
                    None,
                    grads[1] * var2 * scale + grads[4] * scale)

    seen: list = []
    return MyFunction, seen


def test_custom_function_non_tensor_inputs_outputs(compare):
    """test_custom_function_non_tensor_inputs_outputs: non-tensor outputs come back as they
    are; backward gets None for them; a returned input gets a gradient."""

    def scenario(L):
        fn, seen = _non_tensor_outputs_fn(L, save=True)
        t1 = L.linspace(0, 1, 10, dtype=L.double).requires_grad_()
        t2 = L.linspace(1, 2, 10, dtype=L.double).requires_grad_()
        t3 = L.linspace(2, 3, 10, dtype=L.double)
        res = fn.apply(t1, t2, 4, t3)
        L.autograd.backward([res[1].sum(), res[4].sum(), res[6].sum()])

        def foo(a, b, c):
            r = fn.apply(a, b, 4, c)
            return r[1], r[4], r[6]

        ok = L.autograd.gradcheck(foo, (t1.detach().requires_grad_(),
                                        t2.detach().requires_grad_(), t3))
        return res, seen[0], t1.grad, t2.grad, t3.grad, ok

    compare(scenario)


def test_custom_function_no_tensors(compare):
    """test_custom_function_no_tensors: a Function called on numbers only runs its forward."""

    def scenario(L):
        fn, _ = _non_tensor_outputs_fn(L, save=False)
        return fn.apply(0.25, 0.5, 3, 0.75)

    compare(scenario)


def test_invalid_gradients(compare):
    """test_invalid_gradients and the other wrong results of backward: shapes that do not
    broadcast back, wrong counts, non-tensors, gradients for non-tensor inputs, and dtypes
    (cast to the input's)."""

    def scenario(L):
        def make(result):
            class MyFunction(L.autograd.Function):
                @staticmethod
                def forward(ctx, x, n=None):
                    return x * 2

                @staticmethod
                def backward(ctx, grad_output):
                    return result(grad_output)

            return MyFunction

        out = []
        for result in (lambda g: L.ones(10), lambda g: (g, g), lambda g: (), lambda g: 3,
                       lambda g: (g, None, None), lambda g: g.double(), lambda g: g.int(),
                       lambda g: L.ones(1), lambda g: [g]):
            x = L.ones(5, 5, requires_grad=True)
            out.append(raised(lambda result=result, x=x: make(result).apply(x).sum().backward()))
            out.append(x.grad)
        x = L.ones(2, requires_grad=True)
        out.append(raised(lambda: make(lambda g: (g, 3)).apply(x, 1).sum().backward()))
        out.append(raised(lambda: make(lambda g: (g, g)).apply(x, 1).sum().backward()))
        return out

    compare(scenario)


def test_custom_function_setup_context(compare):
    """test_custom_function_setup_context_simple / _multi_output / _multi_input /
    test_setup_context_when_forward_has_default_args: forward without ctx plus setup_context
    (staticmethods or classmethods), keyword arguments and defaults reaching setup_context."""

    def scenario(L):
        class MySquare(L.autograd.Function):
            @staticmethod
            def forward(x):
                return x ** 2

            @staticmethod
            def setup_context(ctx, inputs, output):
                (x,) = inputs
                ctx.save_for_backward(x)

            @staticmethod
            def backward(ctx, gO):
                (x,) = ctx.saved_tensors
                return gO * 2 * x

        class MySquare2(L.autograd.Function):
            @staticmethod
            def forward(x):
                two_x = x.item() * 2
                return x ** 2, two_x

            @staticmethod
            def setup_context(ctx, inputs, output):
                _, two_x = output
                ctx.two_x = two_x

            @staticmethod
            @L.autograd.function.once_differentiable
            def backward(ctx, gO, _):
                return gO * ctx.two_x

        class MyReshape(L.autograd.Function):
            @staticmethod
            def forward(x, shape, scale_forward, scale_backward):
                return x.reshape(shape) * scale_forward

            @staticmethod
            def setup_context(ctx, inputs, output):
                x, shape, scale_forward, scale_backward = inputs
                ctx.scale_backward = scale_backward
                ctx.x_shape = x.shape

            @staticmethod
            def backward(ctx, gO):
                return gO.reshape(ctx.x_shape) * ctx.scale_backward, None, None, None

        class PowFunction(L.autograd.Function):
            @staticmethod
            def forward(x, y=3):
                return L.pow(x, y)

            @staticmethod
            def setup_context(ctx, inputs, output):
                x, y = inputs
                ctx.save_for_backward(x)
                ctx.y = y

            @staticmethod
            def backward(ctx, gO):
                (x,) = ctx.saved_tensors
                return gO * ctx.y * L.pow(x, ctx.y - 1), None

        class PowClassmethod(L.autograd.Function):
            @classmethod
            def forward(cls, x, y=3):
                return L.pow(x, y)

            @classmethod
            def setup_context(cls, ctx, inputs, output):
                x, y = inputs
                ctx.save_for_backward(x)
                ctx.y = y

            @classmethod
            def backward(cls, ctx, gO):
                (x,) = ctx.saved_tensors
                return gO * ctx.y * L.pow(x, ctx.y - 1), None

        x = L.tensor(1.5, requires_grad=True)
        out = [L.autograd.grad(MySquare.apply(x), x), MySquare.apply(x).grad_fn.name()]
        y, two_x = MySquare2.apply(x)
        out += [two_x, L.autograd.grad(y, x)]
        for shape_in, shape, fwd, bwd in (((24,), (3, 8), 7, 11), ((2, 3, 4), (6, 4), -1, 2)):
            a = L.arange(float(len(shape_in) * 10), float(len(shape_in) * 10 + 24)
                         ).reshape(shape_in).requires_grad_()
            r = MyReshape.apply(a, shape, scale_backward=bwd, scale_forward=fwd).sum()
            out += [r, L.autograd.grad(r, a)]
        x = L.tensor(2.0, requires_grad=True)
        for fn in (PowFunction, PowClassmethod):
            y1 = fn.apply(x)
            out += [y1, L.autograd.grad(y1, x), fn.apply(x, y=2)]
        return out

    compare(scenario)


def test_custom_function_vmap_defaults_and_transform_errors(compare):
    """test_custom_function_vmap_defaults: generate_vmap_rule is False and vmap exists; inside
    function transforms a Function needs setup_context (and a vmap rule under vmap)."""

    def scenario(L):
        class NoSetup(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2

        class WithSetup(L.autograd.Function):
            @staticmethod
            def forward(x):
                return x * 2

            @staticmethod
            def setup_context(ctx, inputs, output):
                pass

            @staticmethod
            def backward(ctx, g):
                return g * 2

        class Generated(WithSetup):
            generate_vmap_rule = True

        x = L.ones(2, 2)
        return (WithSetup.generate_vmap_rule, hasattr(WithSetup, "vmap"),
                raised(lambda: WithSetup.vmap(None, None)),
                raised(lambda: L.func.vmap(NoSetup.apply)(x)),
                raised(lambda: L.func.vmap(WithSetup.apply)(x)),
                L.func.vmap(Generated.apply)(x),
                raised(lambda: L.func.grad(lambda t: NoSetup.apply(t).sum())(x[0])),
                L.func.grad(lambda t: WithSetup.apply(t).sum())(x[0]))

    compare(scenario)


def test_save_for_backward_rules(compare):
    """test_save_none_for_backward / test_custom_function_saved_tensors /
    test_naughty_autograd_function_stashing_ctx: None is saved as None, non-tensors are a
    TypeError, a Function that saved nothing gives (), and the saved tensors are gone after
    backward."""

    def scenario(L):
        stash = []

        class MyFn(L.autograd.Function):
            @staticmethod
            def forward(ctx, input, save):
                if save == "none":
                    ctx.save_for_backward(None, input, None)
                elif save == "int":
                    ctx.save_for_backward(input, 3)
                return input * input

            @staticmethod
            def backward(ctx, grad_output):
                stash.append(ctx)
                saved = ctx.saved_tensors
                return 2 * saved[1] * grad_output if len(saved) == 3 else grad_output, None

        x = L.arange(1.0, 5.0).requires_grad_()
        y = MyFn.apply(x, "none")
        before = [t is None for t in y.grad_fn.saved_tensors]
        y.sum().backward()
        nothing = MyFn.apply(x, "nothing").grad_fn.saved_tensors
        return (before, x.grad, nothing, raised(lambda: MyFn.apply(x, "int")),
                MyFn.apply(L.ones(2), "int"),  # not recording: nothing is checked
                raised(lambda: stash[0].saved_tensors), raised(lambda: y.grad_fn.saved_tensors))

    compare(scenario)


def test_saved_variables_deprecated(compare):
    """test_saved_variables_deprecated: ctx.saved_variables warns."""

    def scenario(L):
        class MyFunction(L.autograd.Function):
            @staticmethod
            def forward(ctx, tensor1, tensor2):
                ctx.save_for_backward(tensor1, tensor2)
                return tensor1 + tensor2

            @staticmethod
            def backward(ctx, grad_output):
                var1, var2 = ctx.saved_variables
                return grad_output, grad_output

        x = L.ones(3, 3, requires_grad=True)
        y = L.ones(3, 3, requires_grad=True)
        MyFunction.apply(x, y).sum().backward()
        return x.grad, y.grad

    compare(scenario)


def test_save_output_nr(compare):
    """test_save_output_nr: a saved tensor keeps its output_nr."""

    def scenario(L):
        seen = []

        class MultiOutputFn(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x[:5], x[5:]

            @staticmethod
            def backward(ctx, *grad):
                return L.cat(grad)

        class TestFn(L.autograd.Function):
            @staticmethod
            def forward(ctx, b):
                ctx.save_for_backward(b)
                return b * 2

            @staticmethod
            def backward(ctx, grad_b):
                (b,) = ctx.saved_tensors
                seen.append(b.output_nr)

        x = L.ones(10, requires_grad=True)
        a, b = MultiOutputFn.apply(x)
        TestFn.apply(b).sum().backward()
        return a.output_nr, b.output_nr, seen

    compare(scenario)


def test_needs_input_grad_and_node_attributes(compare):
    """test_hook_none's needs_input_grad check, plus what a Function's node shows: its name,
    next_functions, metadata, and to_save/dirty_tensors/non_differentiable cleared after
    forward."""

    def scenario(L):
        seen = []

        class NoneGradientFunction(L.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                seen.append(ctx.needs_input_grad)
                return x, y

            @staticmethod
            def backward(ctx, grad_x, grad_y):
                return grad_x, None

        was_called = []
        x = L.ones(5, 5, requires_grad=True)
        y = L.ones(5, 5)
        rx, ry = NoneGradientFunction.apply(x, y)
        rx.register_hook(lambda g: was_called.append(g is not None))
        ry.register_hook(lambda g: was_called.append(g is not None))
        (rx + ry).sum().backward()
        node = rx.grad_fn
        return (seen, was_called, rx.requires_grad, ry.requires_grad, node.name(),
                [type(n).__name__ if n else None for n, _ in node.next_functions],
                node.metadata, node.to_save, node.dirty_tensors, node.non_differentiable,
                node.needs_input_grad, isinstance(node, L.autograd.function.BackwardCFunction),
                isinstance(node, L.autograd.graph.Node))

    compare(scenario)


def test_too_many_grads(compare):
    """test_too_many_grads: extra None gradients are dropped."""

    def scenario(L):
        class MyFn(L.autograd.Function):
            @staticmethod
            def forward(ctx, input):
                return input

            @staticmethod
            def backward(ctx, grad_output):
                return grad_output, None, None

        x = L.ones(5, 5, requires_grad=True)
        MyFn.apply(x).sum().backward()
        return x.grad

    compare(scenario)


def test_mark_non_differentiable(compare):
    """test_mark_non_differentiable / _mixed / _none and test_dep_nograd: marked outputs do
    not require grad and get zeros in backward; torch's error for a non-tensor mark."""

    def scenario(L):
        seen = []

        class Mask(L.autograd.Function):
            @staticmethod
            def forward(ctx, input):
                output = input > 0
                ctx.mark_non_differentiable(output)
                return output

            @staticmethod
            def backward(ctx, grad_output):
                return (grad_output * 0).to(L.double)

        class Mixed(L.autograd.Function):
            @staticmethod
            def forward(ctx, input):
                a = input + 1
                b = input + 2
                ctx.mark_non_differentiable(a)
                return a, b

            @staticmethod
            def backward(ctx, grad_a, grad_b):
                seen.append((grad_a, grad_b))
                return grad_b

        class NoneBack(L.autograd.Function):
            @staticmethod
            def forward(ctx, input):
                output = input.clone()
                ctx.mark_non_differentiable(output)
                return output

            @staticmethod
            def backward(ctx, grad_output):
                return None

        class F1(L.autograd.Function):
            @staticmethod
            def forward(ctx, input):
                out = L.zeros(input.size())
                ctx.mark_non_differentiable(out)
                return input, out

            @staticmethod
            def backward(ctx, grad_output, ignored):
                return grad_output

        class F2(L.autograd.Function):
            @staticmethod
            def forward(ctx, input, ignored):
                return input

            @staticmethod
            def backward(ctx, grad_output):
                return grad_output, None

        class Bad(L.autograd.Function):
            @staticmethod
            def forward(ctx, input):
                ctx.mark_non_differentiable(3)
                return input * 2

        x = L.linspace(-1, 1, 4).requires_grad_()
        mask = Mask.apply(x)
        x.masked_fill(mask, 0).sum().backward()
        out = [mask, x.grad]
        x = L.ones(3, requires_grad=True)
        a, b = Mixed.apply(x)
        b.sum().backward()
        out += [a.requires_grad, b.requires_grad, seen, x.grad]
        x = L.ones(2, requires_grad=True)
        r = NoneBack.apply(x * x)
        (r * x).sum().backward()
        out += [r.requires_grad, x.grad]
        x = L.ones(5, requires_grad=True)
        a, b = F1.apply(x)
        b = b + 1
        c = F2.apply(a, b)
        c.backward(L.ones(c.size()))
        out += [a.requires_grad, b.requires_grad, x.grad, raised(lambda: Bad.apply(x))]
        return out

    compare(scenario)


def test_mark_dirty_rules(compare):
    """mark_dirty: the modified input is returned as is with the Function's history and a
    bumped version; torch's errors for a leaf, for a tensor not returned, for a non-tensor
    argument; a warning for a dirty tensor that is not an input."""

    def scenario(L):
        def make(body, n_out=1):
            class Dirty(L.autograd.Function):
                @staticmethod
                def forward(ctx, a):
                    return body(ctx, a)

                @staticmethod
                def backward(ctx, *g):
                    return g[0] * 2

            return Dirty

        def inplace(ctx, a):
            ctx.mark_dirty(a)
            a.mul_(2)
            return a

        def not_returned(ctx, a):
            b = a.clone()
            ctx.mark_dirty(b)
            return a * 2

        def returns_other(ctx, a):
            ctx.mark_dirty(a)
            return a * 2

        def not_input(ctx, a):
            c = a * 3
            ctx.mark_dirty(c)
            return c

        def non_tensor(ctx, a):
            ctx.mark_dirty(3)
            return a * 2

        x = L.ones(2, requires_grad=True)
        c = x.clone()
        v0 = c._version
        y = make(inplace).apply(c)
        out = [y is c, c._version - v0, node_name(y)]
        y.sum().backward()
        out.append(x.grad)
        for body in (inplace, not_returned, returns_other, non_tensor):
            out.append(raised(lambda body=body: make(body).apply(x)))
        out.append(raised(lambda: make(not_returned).apply(x.clone())))
        out.append(make(not_input).apply(x))
        with L.no_grad():  # not recording: no history, no error
            out.append(make(inplace).apply(L.ones(2)))
        return out

    compare(scenario)


def test_return_duplicate(compare):
    """test_return_duplicate / test_return_duplicate_inplace: the same tensor returned twice is
    one output object; InplaceFunction's errors on a leaf and on a view."""

    def scenario(L):
        class DoubleDuplicate(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                output = x * 2
                return output, output

            @staticmethod
            def backward(ctx, grad1, grad2):
                return grad1 * 2 + grad2 * 2

        class DoubleInplace(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.mul_(2)
                ctx.mark_dirty(x)
                return x, x

            @staticmethod
            def backward(ctx, grad1, grad2):
                return grad1 * 2 + grad2 * 2

        def fn(x):
            a, b = DoubleDuplicate.apply(x)
            return a + b, a is b

        def inplace_fn(x):
            a, b = DoubleInplace.apply(x.clone())
            return a + b, a is b

        x = L.linspace(-1, 1, 25, dtype=L.double).reshape(5, 5).requires_grad_()
        out = []
        for f in (fn, inplace_fn):
            r, same = f(x)
            r.sum().backward()
            out += [same, x.grad.clone(),
                    L.autograd.gradcheck(lambda t, f=f: f(t)[0], [x]),
                    L.autograd.gradgradcheck(lambda t, f=f: f(t)[0], [x])]
            x.grad = None
        fn_cls = L.autograd.function.InplaceFunction
        out += [raised(lambda: fn_cls.apply(x)), raised(lambda: fn_cls.apply(x.clone()[0]))]
        return out

    compare(scenario)


def test_return_leaf(compare):
    """test_return_leaf / test_return_leaf_inplace: a returned input's hook sees only the
    gradient of that output; a dirty non-requires-grad input gets the Function's history."""

    def scenario(L):
        class Identity(L.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                return a, a + b

            @staticmethod
            def backward(ctx, grad_a, grad_b):
                return grad_a + grad_b, grad_b

        class Inplace(L.autograd.function.InplaceFunction):
            @staticmethod
            def forward(ctx, a, b):
                ctx.mark_dirty(a)
                return a.add_(b), b + 2

            @staticmethod
            def backward(ctx, grad_a, grad_b):
                return grad_a, grad_a + grad_b

        seen = []
        x = L.ones(5, 5, requires_grad=True)
        y = L.ones(5, 5, requires_grad=True)
        q, p = Identity.apply(x, y)
        q.register_hook(lambda g: seen.append(g))
        (q + p + x).sum().backward()
        out = [seen, x.grad, y.grad]
        x = L.ones(5, 5)
        y = L.ones(5, 5, requires_grad=True)
        q, p = Inplace.apply(x, y)
        out += [q is x, type(q.grad_fn) is Inplace._backward_cls, q.requires_grad]
        q.sum().backward()
        out.append(y.grad)
        return out

    compare(scenario)


def test_no_grad_python_function(compare):
    """test_no_grad_python_function / test_no_grad_input: no history under no_grad."""

    def scenario(L):
        class MyOp(L.autograd.Function):
            @staticmethod
            def forward(self, x):
                return x + 1

            @staticmethod
            def backward(self, dy):
                return dy

        class Same(L.autograd.Function):
            @staticmethod
            def forward(self, x):
                return x

            @staticmethod
            def backward(self, grad_output):
                return grad_output

        x = L.ones(5, 5, requires_grad=True)
        with L.no_grad():
            y = MyOp.apply(x)
            z = Same.apply(x)
        return (y.requires_grad, y.grad_fn, z.requires_grad, z.grad_fn, z._is_view(),
                x.requires_grad)

    compare(scenario)


def test_apply_with_keyword_arguments(compare):
    """Function.apply passes keyword arguments on to forward."""

    def scenario(L):
        class KW(L.autograd.Function):
            @staticmethod
            def forward(ctx, a, scale=2):
                ctx.scale = scale
                return a * scale

            @staticmethod
            def backward(ctx, g):
                return g * ctx.scale, None

        x = L.ones(2, requires_grad=True)
        y = KW.apply(x, scale=3)
        y.sum().backward()
        return y, x.grad, KW.apply(x)

    compare(scenario)


def test_vjp_alias_and_errors(compare):
    """test_custom_function_error: forward/backward/jvp missing, and both backward and vjp;
    a Function defining only vjp works."""

    def scenario(L):
        class BadFw(L.autograd.Function):
            @staticmethod
            def backward(ctx, foo):
                return foo

        class BadBw(L.autograd.Function):
            @staticmethod
            def forward(ctx, foo):
                return foo.clone()

        class BadBw2(L.autograd.Function):
            @staticmethod
            def forward(ctx, foo):
                return foo.clone()

            @staticmethod
            def backward(ctx, foo):
                return foo

            @staticmethod
            def vjp(ctx, foo):
                return foo

        class BadJvp(L.autograd.Function):
            @staticmethod
            def forward(ctx, foo):
                return foo.clone()

        class OnlyVjp(L.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2

            @staticmethod
            def vjp(ctx, g):
                return g * 3

        inp = L.ones(1, requires_grad=True)

        def jvp_missing():
            with L.autograd.forward_ad.dual_level():
                d = L.autograd.forward_ad.make_dual(inp, L.ones_like(inp))
                BadJvp.apply(d)

        OnlyVjp.apply(inp).sum().backward()
        return (raised(lambda: BadFw.apply(inp)),
                raised(lambda: BadBw.apply(inp).sum().backward()),
                raised(lambda: BadBw2.apply(inp).sum().backward()),
                raised(jvp_missing), inp.grad)

    compare(scenario)


def test_custom_function_forward_mode(compare):
    """test_custom_function_forward_mode_wrong_formula / _non_tensor_before_tensor_args /
    _forward_is_no_op / _non_differentiable / test_custom_function_save_for_forward /
    test_custom_function_mark_dirty_not_differentiable: jvp gives the tangents, with torch's
    checks."""

    def scenario(L):
        fwAD = L.autograd.forward_ad
        out = []

        class UserFn(L.autograd.Function):
            @staticmethod
            def forward(ctx, foo, factor):
                ctx.factor = factor
                return foo * 2

            @staticmethod
            def vjp(ctx, gO):
                return 2 * gO, None

            @staticmethod
            def jvp(ctx, gI, _):
                return ctx.factor * gI

        class NonTensorFirst(L.autograd.Function):
            @staticmethod
            def forward(ctx, nt, x, nt2, y):
                return x * 2 + y * 3

            @staticmethod
            def jvp(ctx, nt, x_t, nt2, y_t):
                out.append((nt, nt2, y_t))
                return x_t * 2 + y_t * 3

        class SaveForForward(L.autograd.Function):
            @staticmethod
            def forward(ctx, x, y, z):
                ctx.save_for_backward(x, y)
                ctx.save_for_forward(x, y)
                ctx.z = z
                return z * x * y

            @staticmethod
            def jvp(ctx, x_t, y_t, _):
                x_p, y_p = ctx.saved_tensors
                return ctx.z * (y_p * x_t + x_p * y_t)

            @staticmethod
            def vjp(ctx, grad_out):
                x, y = ctx.saved_tensors
                return ctx.z * grad_out * y, ctx.z * grad_out * x, None

        class OnlyBackwardSaved(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x.clone()

            @staticmethod
            def jvp(ctx, x_t):
                out.append(len(ctx.saved_tensors))
                return x_t

            @staticmethod
            def vjp(ctx, grad_out):
                out.append(len(ctx.saved_tensors))
                return grad_out

        def returns_input(fn):
            class MyFn(L.autograd.Function):
                @staticmethod
                def forward(ctx, x, y):
                    return x + y, x

                @staticmethod
                def vjp(ctx, gO1, gO2):
                    return gO1 + gO2, gO1

                @staticmethod
                def jvp(ctx, x_t, y_t):
                    return x_t + y_t, fn(x_t)

            return MyFn

        class NonDiff(L.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                o = y.clone()
                ctx.mark_non_differentiable(o)
                return x.clone(), o

            @staticmethod
            def jvp(ctx, x_tangent, y_tangent):
                return x_tangent, None

        class NonDiffWrong(NonDiff):
            @staticmethod
            def jvp(ctx, x_tangent, y_tangent):
                return x_tangent, x_tangent.clone()

        class NonTensorOut(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone(), "object", x.clone()

            @staticmethod
            def jvp(ctx, x_tangent):
                return x_tangent, None, x_tangent

        def inplace_mul(jvp_err):
            class InplaceMul(L.autograd.Function):
                @staticmethod
                def forward(ctx, x):
                    result = x.mul_(2)
                    ctx.mark_dirty(result)
                    return result

                @staticmethod
                def backward(ctx, grad_output):
                    pass

                @staticmethod
                def jvp(ctx, x_t):
                    return x_t if jvp_err else x_t.mul_(2)

            return InplaceMul

        a = L.tensor(1.5, dtype=L.double, requires_grad=True)
        t = L.tensor(1.0, dtype=L.double)
        b = L.tensor(2.0, dtype=L.double, requires_grad=True)
        with fwAD.dual_level():
            d = fwAD.make_dual(a, t)
            out.append(fwAD.unpack_dual(UserFn.apply(d, 2)).tangent)
            out.append(fwAD.unpack_dual(UserFn.apply(d, 3)).tangent)
            out.append(fwAD.unpack_dual(NonTensorFirst.apply(1, d, 1, b.detach())).tangent)
            r = SaveForForward.apply(d, b, 4)
            out.append(fwAD.unpack_dual(r).tangent)
            r.backward()
            out += [a.grad, b.grad]
            r = OnlyBackwardSaved.apply(d)
            out.append(fwAD.unpack_dual(r).tangent)
            r.backward()
            for name, fn in (("view_as", lambda x: x.view_as(x)), ("self", lambda x: x),
                             ("mul_by_2", lambda x: x * 2)):
                res = raised(lambda fn=fn: returns_input(fn).apply(d, b))
                if isinstance(res, tuple):
                    tangent = fwAD.unpack_dual(res[1]).tangent
                    res = (name, tangent._base is t, tangent)
                out.append(res)
            x = L.tensor(2.0)
            xd = fwAD.make_dual(x, L.tensor(1.0))
            out.append(fwAD.unpack_dual(NonDiff.apply(xd, L.tensor(3.0))[1]).tangent)
            out.append(raised(lambda: NonDiffWrong.apply(xd, L.tensor(3.0))))
            o1, _, o3 = NonTensorOut.apply(xd)
            out += [fwAD.unpack_dual(o1).tangent, fwAD.unpack_dual(o3).tangent]
            for jvp_err in (True, False):
                z = L.tensor(1.0).clone()
                zt = L.ones_like(z)
                zd = fwAD.make_dual(z, zt)
                res = raised(lambda jvp_err=jvp_err, zd=zd: inplace_mul(jvp_err).apply(zd))
                out.append(res if jvp_err else (res is zd, fwAD.unpack_dual(res).tangent is zt))
        return out

    compare(scenario)


def test_custom_function_cycle(compare):
    """test_custom_function_cycle: a Function whose ctx refers to its output is collected
    once unreferenced (with and without backward)."""

    def scenario(L):
        class MyFn(L.autograd.Function):
            @staticmethod
            def forward(ctx, x, metadata):
                x = x.clone()
                ctx.meta = metadata
                ctx.save_for_backward(x)
                return x

            @staticmethod
            def backward(ctx, gO):
                (x,) = ctx.saved_tensors
                return gO * x, None

        def get_refs(with_backward):
            a = L.tensor(3.14, requires_grad=True)
            metadata = {}
            out = MyFn.apply(a, metadata)
            metadata["foo"] = out
            if with_backward:
                out.sum().backward()
            return weakref.ref(out), a.grad

        res = []
        for with_backward in (False, True):
            ref, g = get_refs(with_backward)
            gc.collect()
            res += [ref() is None, g]
        return res

    compare(scenario)


def test_custom_autograd_double_backward(compare):
    """test_custom_autograd_repeated_grad_grad / test_custom_autograd_no_early_free: second
    derivatives through Functions, saved outputs reused across grad calls."""

    def scenario(L):
        def mult1(x):
            return x.prod(dim=-1).prod(dim=-1)

        class Mult(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = mult1(x)
                ctx.save_for_backward(x, y)
                return y

            @staticmethod
            def backward(ctx, grad_output):
                x, y = ctx.saved_tensors
                return (grad_output * y)[:, None, None] / x

        class Double(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = x ** 2
                ctx.save_for_backward(x, y)
                return y

            @staticmethod
            def backward(ctx, grad_output):
                x, _ = ctx.saved_tensors
                return grad_output * 2 * x

        class Double2(Double):
            @staticmethod
            def backward(ctx, grad_output):
                x, y = ctx.saved_tensors
                return grad_output * 2 * y / x

        out = []
        x = L.ones(2, 4, 4).requires_grad_()
        for y in (mult1(x), Mult.apply(x)):
            (gy,) = L.autograd.grad(y[0], x, create_graph=True)
            (ggy_1,) = L.autograd.grad(gy[0, 0, 0], x, retain_graph=True)
            (gy,) = L.autograd.grad(y[0], x, create_graph=True)
            (ggy_2,) = L.autograd.grad(gy[0, 0, 0], x, retain_graph=True)
            out += [ggy_1[0, 0, 1], ggy_2[0, 0, 1]]
        x = L.tensor(2).double().requires_grad_()
        for fn in (Double, Double2):
            out += [L.autograd.gradcheck(fn.apply, x), L.autograd.gradgradcheck(fn.apply, x)]
            y = fn.apply(x)
            out.append(L.autograd.grad(y, x, create_graph=True))
            out.append(L.autograd.grad(y, x))
        return out

    compare(scenario)


def test_grad_mode_restored_reentrant(compare):
    """test_grad_mode_restored_reentrant / test_simple_reentrant: backward inside backward,
    and grad mode as it was afterwards."""

    def scenario(L):
        modes = []

        class MyFunction(L.autograd.Function):
            @staticmethod
            def forward(ctx, inp):
                return inp.clone()

            @staticmethod
            def backward(ctx, go):
                original = L.is_grad_enabled()
                with L.enable_grad():
                    inside = L.is_grad_enabled()
                    foo = L.full(go.size(), 2.0, requires_grad=True)
                    (grad,) = L.autograd.grad(foo ** 3, foo, grad_outputs=go)
                    after_grad = L.is_grad_enabled()
                modes.append((original, inside, after_grad, L.is_grad_enabled()))
                return grad

        y_data = L.arange(4.0).reshape(2, 2)

        class Reenter(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                with L.enable_grad():
                    ctx.x = x.detach().requires_grad_()
                    ctx.y = y_data.clone().requires_grad_()
                    ctx.output_var = ctx.x * ctx.y
                return ctx.output_var.detach()

            @staticmethod
            def backward(ctx, grad_output):
                with L.enable_grad():
                    ctx.output_var.sum().backward()
                return ctx.x.grad * grad_output

        inp = L.ones(3, requires_grad=True)
        MyFunction.apply(inp).sum().backward()
        MyFunction.apply(inp).sum().backward(create_graph=True)
        x = L.ones(2, 2, requires_grad=True)
        Reenter.apply(x).sum().backward()
        return modes, inp.grad, x.grad, L.is_grad_enabled()

    compare(scenario)


def test_reentrant_errors_and_priority(compare):
    """test_reentrant_child_error / test_reentrant_priority / test_deep_reentrant (shallower):
    an error in a reentrant backward propagates; reentrant tasks run before the rest."""

    def scenario(L):
        order = []

        class SimulateBackwardError(L.autograd.Function):
            @staticmethod
            def forward(ctx, input):
                return input.clone()

            @staticmethod
            def backward(ctx, input):
                raise RuntimeError("Simulate error on backward pass")

        a = L.ones(3, 3, requires_grad=True)
        c = a * a
        b = L.ones(3, 3, requires_grad=True)
        reentrant_root = SimulateBackwardError.apply(b * b).sum()

        class ReentrantFunc(L.autograd.Function):
            @staticmethod
            def forward(ctx, inp):
                return inp.clone()

            @staticmethod
            def backward(ctx, grad):
                reentrant_root.backward()
                return grad

        err = raised(lambda: ReentrantFunc.apply(c).sum().backward())

        class MyFunction(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, x):
                order.append("MyFunction")
                return x

        class Reentrant(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                with L.enable_grad():
                    ctx.x = x.detach().requires_grad_() - 1
                return ctx.x.detach()

            @staticmethod
            def backward(ctx, x):
                order.append("Reentrant")
                if ctx.x < 0:
                    return x
                with L.enable_grad():
                    Reentrant.apply(ctx.x).backward()
                return x

        p = MyFunction.apply(L.tensor(6.0, requires_grad=True))
        q = Reentrant.apply(L.tensor(9.0, requires_grad=True))
        (p * q).backward()
        v = L.tensor(60.0, requires_grad=True)
        Reentrant.apply(v).sum().backward()
        return err, order[:11], len(order), v.grad

    compare(scenario)


def test_free_deep_graph_pyfunction(compare):
    """test_free_deep_graph_pyfunction (a shorter chain): a long chain of Function nodes is
    freed without recursion."""

    def scenario(L):
        class MyOp(L.autograd.Function):
            @staticmethod
            def forward(ctx, tensor1, tensor2):
                return tensor1 + tensor2

            @staticmethod
            def backward(ctx, grad_output):
                return grad_output, grad_output

        x = L.ones(1, requires_grad=True)
        y = x.clone()
        for _ in range(20000):
            y = MyOp.apply(y, y * 0)
        ref = weakref.ref(y.grad_fn)
        del y
        gc.collect()
        return ref() is None

    compare(scenario)


def test_gc_in_destructor_and_node_isinstance(compare):
    """test_gc_in_destructor / test_autograd_node_isinstance: every grad_fn (ops, accumulators,
    Functions, and ctx inside forward/backward) is an autograd.graph.Node."""

    def scenario(L):
        Node = L.autograd.graph.Node
        seen = []

        class Func(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                seen.append(isinstance(ctx, Node))
                return x

            @staticmethod
            def backward(ctx, x):
                seen.append(isinstance(ctx, Node))
                return x

        a = L.ones(3, 3, requires_grad=True)
        b = a.exp()
        out = Func.apply(a)
        out.sum().backward()
        return (isinstance(b.grad_fn, Node), isinstance(b.grad_fn.next_functions[0][0], Node),
                issubclass(L.autograd.function.BackwardCFunction, Node),
                isinstance(out.grad_fn, Node), isinstance(None, Node), isinstance(1, Node),
                seen)

    compare(scenario)


def test_custom_function_local_inplace(compare):
    """test_custom_function_local_inplace: in-place ops inside forward do not change the
    output's node."""

    def scenario(L):
        class MyFn(L.autograd.Function):
            @staticmethod
            def forward(ctx, inp, inplace):
                view = inp.clone()[:3]
                if inplace:
                    view += 2
                return view

            @staticmethod
            def backward(ctx, grad):
                return grad, None

        base = L.ones(10, requires_grad=True)
        foo = MyFn.apply(base, False)
        bar = MyFn.apply(base, True)
        return (type(foo.grad_fn).__name__, type(bar.grad_fn).__name__, foo._is_view(),
                bar._is_view())

    compare(scenario)


def test_custom_function_output_views_in_place(compare):
    """A Function's output that is an input returned as is (or a view of one) cannot be
    changed in place while recording: torch's custom-Function error (what a full backward hook
    on an in-place module meets); without grad mode it can."""

    def scenario(L):
        class F(L.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a

            @staticmethod
            def backward(ctx, g):
                return g

        class View(L.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a[:1]

            @staticmethod
            def backward(ctx, g):
                return L.cat([g, L.zeros(1)])

        x = L.ones(2, requires_grad=True)
        out = []
        for make in (lambda: F.apply(x * 1), lambda: F.apply(x), lambda: View.apply(x * 1)):
            y = make()
            out.append(raised(lambda y=y: y.add_(1)))
        y = F.apply(L.ones(2))
        y.add_(1)
        out.append(y)
        return out

    compare(scenario)


def test_once_differentiable_without_grad_inputs(compare):
    """once_differentiable: no Error node when nothing the backward got requires grad."""

    def scenario(L):
        class F(L.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2

            @staticmethod
            @L.autograd.function.once_differentiable
            def backward(ctx, g):
                return g * 2

        x = L.ones(2, requires_grad=True)
        (g,) = L.autograd.grad(F.apply(x).sum(), x, create_graph=True)
        (g2,) = L.autograd.grad(F.apply(x).sum(), x, L.ones((), requires_grad=True),
                                create_graph=True)
        return (g.grad_fn, g2.grad_fn.name(), type(g2.grad_fn).__name__,
                raised(lambda: g2.sum().backward()))

    compare(scenario)


def test_function_ctx_standalone(compare):
    """FunctionCtx used on its own: what save_for_backward/save_for_forward keep, and
    mark_shared_storage's deprecation warning."""

    def scenario(L):
        c = L.autograd.function.FunctionCtx()
        x = L.ones(2)
        c.save_for_backward(x, 3)
        c.mark_shared_storage((x, x))
        return c.to_save, raised(lambda: c.save_for_forward(x, 3))

    compare(scenario)
