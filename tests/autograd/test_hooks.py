"""Hooks, each scenario run on torch and on the library under test: tensor hooks, retain_grad,
post-accumulate-grad hooks, node pre-/post-hooks (AccumulateGrad's included), multi-grad hooks,
and module backward hooks, in torch's order, with torch's checks on what a hook returns.

Written from what torch's test/test_autograd.py and test/test_nn.py check (api.tsv names the
torch test each one ports).
"""

from __future__ import annotations

import gc
import threading
import warnings
import weakref

import pytest
from torchcompare import raised


def _mul2(L, custom):
    if not custom:
        return lambda x: x * 2

    class Mul2(L.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, gO):
            return gO * 2

    return Mul2.apply


# --------------------------------------------------------------------------------------------
# Tensor hooks and retain_grad
# --------------------------------------------------------------------------------------------


def test_hooks(compare):
    """test_hooks: tensor hooks fire once per backward, handles remove them, and a hook's
    result replaces the gradient (on a leaf and on a non-leaf)."""

    def scenario(L):
        x = L.ones(5, 5, requires_grad=True)
        y = L.ones(5, 5) * 4
        y.requires_grad_(True)
        counter = [0]

        def bw_hook(inc, grad):
            assert isinstance(grad, L.Tensor)
            counter[0] += inc

        z = x ** 2 + x * 2 + x * y + y
        x.register_hook(lambda *args: bw_hook(0, *args))
        test = z.register_hook(lambda *args: bw_hook(1, *args))
        z.backward(L.ones(5, 5), retain_graph=True)
        counts = [counter[0]]
        test2 = z.register_hook(lambda *args: bw_hook(2, *args))
        z.backward(L.ones(5, 5), retain_graph=True)
        counts.append(counter[0])
        test2.remove()
        z.backward(L.ones(5, 5), retain_graph=True)
        counts.append(counter[0])

        def bw_hook_modify(grad):
            return grad.mul(2)

        test.remove()
        z.register_hook(bw_hook_modify)
        with L.no_grad():
            y.grad.zero_()
        z.backward(L.ones(5, 5), retain_graph=True)
        g1 = y.grad.clone()
        y.register_hook(bw_hook_modify)
        with L.no_grad():
            y.grad.zero_()
        z.backward(L.ones(5, 5))
        return counts, g1, y.grad

    compare(scenario)


def test_hook_results_are_checked(compare):
    """What a hook may return: None or a tensor of the same size and type; torch's errors
    otherwise, naming the hook (``<unknown>`` for a callable object without __name__)."""

    def scenario(L):
        class NoName:
            def __call__(self, grad):
                return grad.sum()

        class Clone:
            def __call__(self, grad):
                return grad.clone()

        def named(g):
            return g.sum()

        out = []
        for make_leaf in (False, True):
            for hook in (lambda g: g.sum(), lambda g: g.double(), lambda g: 3, NoName(),
                         named, Clone(), lambda g: None):
                x = L.ones(2, requires_grad=True)
                t = x if make_leaf else x * 2
                t.register_hook(hook)
                out.append(raised(lambda t=t: t.sum().backward()))
                out.append(x.grad)
        return out

    compare(scenario)


def test_hooks_cpp(compare):
    """test_hooks_cpp: a hook on the output of a fused op (batch norm)."""

    def scenario(L):
        bn = L.nn.BatchNorm1d(5, affine=False)
        bn.double()
        bn.eval()
        counter = [0]

        def bw_hook(grad):
            counter[0] += 1
            return grad * 2

        x = L.ones(5, 5, dtype=L.double, requires_grad=True)
        z = bn(x)
        z.register_hook(bw_hook)
        z.sum().backward()
        return counter, x.grad

    compare(scenario, atol=1e-5)


def test_tensor_grad_warnings(compare):
    """test_tensor_grad_warnings: reading .grad of a non-leaf warns unless it retains grad."""

    def scenario(L):
        dummy = L.empty(1)
        dummy.requires_grad_()
        a = dummy.grad
        dummy = dummy.clone()
        b = dummy.grad
        dummy.retain_grad()
        c = dummy.grad
        return a, b, c

    compare(scenario)


def test_retain_grad(compare):
    """test_retain_grad: retain_grad twice is fine, gradients accumulate, no-op on leaves."""

    def scenario(L):
        input = L.arange(1.0, 4.0).reshape(1, 3).requires_grad_()
        h1 = input * 3
        out = (h1 * h1).sum()
        h1.retain_grad()
        h1.retain_grad()
        out.backward(retain_graph=True)
        g1 = h1.grad.clone()
        out.backward(retain_graph=True)
        g2 = h1.grad.clone()
        with L.no_grad():
            input.grad.zero_()
        input.retain_grad()
        input.retain_grad()
        out.backward()
        return g1, g2, input.grad, h1.retains_grad, input.retains_grad

    compare(scenario)


def test_retain_grad_cycle(compare):
    """test_retain_grad_cycle: retain_grad keeps no reference to its tensor."""

    def scenario(L):
        x = L.ones(5, 5, requires_grad=True)

        def run_test():
            y = x * 2
            y.retain_grad()
            return y / 2, weakref.ref(y)

        z, ref = run_test()
        dead = ref() is None
        z.sum().backward()
        return dead, x.grad

    compare(scenario)


def test_hook_ordering_with_retain_grad(compare):
    """test_retains_grad_can_always_observe_tensor_prehook / test_prehook_ordering: tensor
    hooks run before retain_grad, which runs before the node's pre-hooks; grad() runs the
    tensor hooks of a leaf input but not its accumulator's pre-hooks; backward(inputs=...)
    fills a non-leaf's .grad."""

    def scenario(L):
        def tensor_prehook(g):
            return g * 2

        a = L.tensor(1.0, requires_grad=True)
        b = a.clone()
        b.register_hook(tensor_prehook)
        b.retain_grad()
        b.register_hook(tensor_prehook)
        b.clone().backward()
        out = [b.grad]
        a = L.tensor(1.0, requires_grad=True)
        b = a.clone()
        b.retain_grad()
        b.register_hook(tensor_prehook)
        b.clone().backward()
        out.append(b.grad)

        log = []

        def hook1(g):
            log.append(1)
            return g * 3

        def hook2(gs):
            log.append(2)
            return tuple(g * 2 for g in gs)

        a = L.tensor(1.0, requires_grad=True)
        b = a.clone()
        b.grad_fn.register_prehook(hook2)
        b.register_hook(hook1)
        b.grad_fn.register_prehook(hook2)
        acc = b.grad_fn.next_functions[0][0]
        a.register_hook(hook1)
        acc.register_prehook(hook2)
        a.register_hook(hook1)
        b.sum().backward(retain_graph=True)
        out.append(list(log))
        log.clear()
        out.append(L.autograd.grad(b.sum(), inputs=(a,), retain_graph=True))
        out.append(list(log))
        log.clear()
        b.sum().backward(inputs=(b,))
        out += [list(log), b.grad, b.retains_grad, a.grad]
        return out

    compare(scenario)


def test_hook_edge_case_when_called_with_grad(compare):
    """test_hook_edge_case_when_called_with_grad: which tensor hooks and node hooks run for
    grad() and backward() with and without inputs."""

    def scenario(L):
        a = L.tensor(1.0, requires_grad=True)
        b = a * 2
        c = b * 2
        counts = {"tensor": 0, "pre": 0, "post": 0}

        def bump(key):
            def hook(*args):
                counts[key] += 1

            return hook

        a.register_hook(bump("tensor"))
        b.register_hook(bump("tensor"))
        acc = b.grad_fn.next_functions[0][0]
        acc.register_hook(bump("post"))
        acc.register_prehook(bump("pre"))
        b.grad_fn.register_hook(bump("post"))
        b.grad_fn.register_prehook(bump("pre"))
        out = []
        for run in (lambda: L.autograd.grad(c, inputs=(b), retain_graph=True),
                    lambda: L.autograd.grad(c, inputs=(a, b), retain_graph=True),
                    lambda: c.backward(retain_graph=True),
                    lambda: c.backward(inputs=(a, b), retain_graph=True)):
            for k in counts:
                counts[k] = 0
            res = run()
            out.append((dict(counts), res))
        return out

    compare(scenario)


def test_grad_nonleaf_register_hook(compare):
    """test_grad_nonleaf_register_hook: a hook on one output of unbind sees None when the
    backward comes through another output."""

    def scenario(L):
        x = L.arange(5.0, requires_grad=True)
        x_list = x.unbind()
        results = []
        x_list[0].register_hook(lambda g: results.append(g))
        x_list[0].backward()
        out = [x.grad.clone()]
        for i in range(1, 5):
            x_list[i].backward()
            out.append(x.grad.clone())
        return results, out

    compare(scenario)


def test_hook_none(compare):
    """test_hook_none: hooks on a Function's outputs, one of which gets no gradient."""

    def scenario(L):
        class NoneGradientFunction(L.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                return x, y

            @staticmethod
            def backward(ctx, grad_x, grad_y):
                return grad_x, None

        seen = []
        x = L.ones(5, 5, requires_grad=True)
        y = L.ones(5, 5)
        rx, ry = NoneGradientFunction.apply(x, y)
        rx.register_hook(lambda g: seen.append(g is not None))
        ry.register_hook(lambda g: seen.append(g is not None))
        sum(rx, ry).sum().backward()
        return seen, x.grad

    compare(scenario)


# --------------------------------------------------------------------------------------------
# Post-accumulate-grad hooks
# --------------------------------------------------------------------------------------------


def test_post_accumulate_grad_hooks(compare):
    """test_post_accumulate_grad_hook_on_non_leaf / _multiple_hooks / _multiple_tensors /
    _returns_not_None: only on leaves, in order, each tensor's own; a result is an error."""

    def scenario(L):
        out = []
        leaf = L.ones(3, requires_grad=True)
        out.append(raised(lambda: (2.0 * leaf).register_post_accumulate_grad_hook(lambda t: None)))

        def hook1(tensor):
            tensor.sub_(tensor.grad)

        def hook2(tensor):
            tensor.mul_(4.0)

        tensor = L.arange(3.0, requires_grad=True)
        tensor.register_post_accumulate_grad_hook(hook1)
        tensor.register_post_accumulate_grad_hook(hook2)
        tensor.sum().backward()
        out.append(tensor)
        t1 = L.arange(3.0, requires_grad=True)
        t2 = L.arange(5.0, requires_grad=True)
        t1.register_post_accumulate_grad_hook(hook1)
        t2.register_post_accumulate_grad_hook(hook1)
        t1.sum().backward()
        t2.sum().backward()
        out += [t1, t2]
        for result in (lambda t: t.grad, lambda t: 1, lambda t: [1]):
            t = L.ones(2, 3, requires_grad=True)
            t.register_post_accumulate_grad_hook(result)
            out.append(raised(lambda t=t: t.sum().backward()))
        return out

    compare(scenario)


def test_post_accumulate_grad_hook_e2e(compare):
    """test_post_accumulate_grad_hook_e2e: an optimizer step in the hook, then removed."""

    def scenario(L):
        L.manual_seed(0)
        model = L.nn.Linear(3, 2)
        model_copy = L.nn.Linear(3, 2)
        model_copy.load_state_dict(model.state_dict())
        input = L.rand(2, 3)
        optims = {}
        handles = []

        def optim_step_hook(param):
            optims[param].step()
            optims[param].zero_grad()

        for p in model.parameters():
            optims[p] = L.optim.Adam([p])
            handles.append(p.register_post_accumulate_grad_hook(optim_step_hook))
        optim_copy = L.optim.Adam(model_copy.parameters())
        for _ in range(5):
            model(input).sum().backward()
            model_copy(input).sum().backward()
            optim_copy.step()
            optim_copy.zero_grad()
        snapshot = [p.detach().clone() for p in model.parameters()]
        same = [L.equal(a, b)
                for a, b in zip(model.parameters(), model_copy.parameters(), strict=True)]
        for h in handles:
            h.remove()
        for _ in range(5):
            model(input).sum().backward()
            model_copy(input).sum().backward()
            optim_copy.step()
            optim_copy.zero_grad()
        return (same, [L.equal(a, b) for a, b in zip(snapshot, model.parameters(), strict=True)],
                list(model.parameters()), list(model_copy.parameters()))

    compare(scenario, rtol=1e-5, atol=1e-6)


def test_post_accumulate_grad_hook_gets_cleaned_up(compare):
    """test_post_accumulate_grad_hook_gets_cleaned_up: the hook lives as long as its tensor."""

    def scenario(L):
        def fun_stuff_with_hook():
            thing_to_put_in_hook = L.ones(3)

            def hook(tensor):
                tensor.sub_(tensor.grad)
                tensor.add_(thing_to_put_in_hook)

            tensor = L.ones(3, requires_grad=True)
            tensor.register_post_accumulate_grad_hook(hook)
            tensor.sum().backward()
            ref = weakref.ref(thing_to_put_in_hook)
            gc.collect()
            return tensor, ref

        tensor, ref = fun_stuff_with_hook()
        alive = ref() is not None
        del tensor
        gc.collect()
        return alive, ref() is None

    compare(scenario)


def test_post_accumulate_grad_hook_ordering(compare):
    """test_post_accumulate_grad_hook_ordering: tensor hook, accumulator pre-hook,
    post-accumulate hook, accumulator post-hook."""

    def scenario(L):
        tensor = L.ones(3, requires_grad=True)

        def acc_grad_node_post_hook(grad_in, grad_out):
            tensor.grad = grad_out[0].mul(10)

        acc_grad = tensor.view_as(tensor).grad_fn.next_functions[0][0]
        tensor.register_hook(lambda g: g.sub(2.0))
        acc_grad.register_prehook(lambda go: (go[0].div(5.0),))
        tensor.register_post_accumulate_grad_hook(lambda t: t.grad.add_(0.5))
        acc_grad.register_hook(acc_grad_node_post_hook)
        tensor.sum().backward()
        return tensor.grad

    compare(scenario)


def test_accumulate_grad_node_hooks(compare):
    """test_accumulate_grad_posthooks_can_observe_tensor_prehook /
    test_accumulate_grad_posthooks_should_not_execute: an accumulator's hooks see what the
    tensor hooks made, and do not run when backward(inputs=...) leaves the leaf out."""

    def scenario(L):
        seen = []
        a = L.tensor(1.0, requires_grad=True)
        b = a.clone()
        acc = b.grad_fn.next_functions[0][0]
        acc.register_hook(lambda gO, gI: seen.append(("post", len(gO), gI)))
        acc.register_prehook(lambda gI: seen.append(("pre", len(gI), gI)))
        a.register_hook(lambda g: g * 2)
        b.backward()

        def boom(*args):
            raise RuntimeError

        a = L.tensor(1.0, requires_grad=True)
        a.register_hook(boom)
        b = L.tensor(1.0, requires_grad=True)
        c = a.clone()
        c.grad_fn.next_functions[0][0].register_hook(boom)
        (a + b + c).sum().backward(inputs=[b])
        return seen, a.grad, b.grad

    compare(scenario)


# --------------------------------------------------------------------------------------------
# Node hooks
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("custom", [True, False])
def test_grad_fn_prehooks(compare, custom):
    """test_grad_fn_prehooks: pre-hooks in order (None keeps the gradient), post-hooks see the
    final gradients; test_grad_fn_prehooks_remove_hooks: handles, also removed mid-backward."""

    def scenario(L):
        mul2 = _mul2(L, custom)
        a = L.tensor([1.0], requires_grad=True)
        b = mul2(a)
        post, pre = [], [0]

        def posthook(grad_input, grad_output):
            post.append((pre[0], grad_output[0].clone(), grad_input[0].clone()))
            return grad_input

        def prehook(grad_output):
            pre[0] += 1
            return (grad_output[0] * 2,)

        b.grad_fn.register_hook(posthook)
        b.grad_fn.register_hook(posthook)
        b.grad_fn.register_prehook(prehook)
        b.grad_fn.register_prehook(lambda x: None)
        b.grad_fn.register_prehook(prehook)
        b.grad_fn.register_prehook(prehook)
        b.grad_fn.register_prehook(lambda x: x)
        b.grad_fn.register_prehook(lambda x: None)
        b.sum().backward()
        out = [post, pre[0], a.grad]

        counter = [0]

        def counting(grad_output):
            counter[0] += 1

        a = L.ones(3, 3, requires_grad=True)
        b = mul2(a)
        handle = b.grad_fn.register_prehook(counting)
        b.grad_fn.register_prehook(counting)
        handle.remove()
        b.sum().backward()
        out += [a.grad, counter[0]]

        a = L.ones(3, 3, requires_grad=True)
        b = mul2(a)
        counter[0] = 0

        def prehook1(grad_output):
            handle2.remove()
            handle3.remove()  # removing twice is fine

        b.grad_fn.register_prehook(prehook1)
        handle2 = b.grad_fn.register_prehook(counting)
        handle3 = b.grad_fn.register_prehook(counting)
        handle3.remove()
        b.sum().backward()
        out += [a.grad, counter[0]]
        return out

    compare(scenario)


def test_grad_fn_prehooks_multiple_outputs(compare):
    """test_grad_fn_prehooks_multiple_outputs: a pre-hook on a two-output node (var_mean and a
    Function) sees and replaces both gradients."""

    def scenario(L):
        b = L.linspace(0, 1, 9).reshape(3, 3).requires_grad_()
        var, mean = L.var_mean(b, dim=0)
        (var + mean).sum().backward()
        a = b.detach().requires_grad_()
        counter = [0]

        def prehook(grad_output):
            gvar, gmean = grad_output
            counter[0] += 1
            return (gvar * 2, gmean * 2)

        var, mean = L.var_mean(a, dim=0)
        mean.grad_fn.register_prehook(prehook)
        (var + mean).sum().backward()
        out = [counter[0], b.grad, a.grad]

        class DoubleMul2(L.autograd.Function):
            @staticmethod
            def forward(ctx, x, a, y):
                ctx.a = a
                return a * x * 2, a, a * y * 2

            @staticmethod
            def backward(ctx, g1, _a, g2):
                return ctx.a * g1 * 2, None, ctx.a * g2 * 2

        seen = []

        def prehook2(grad_output):
            g1, ga, g2 = grad_output
            seen.append(ga)
            return (g1 * 2, None, g2 * 2)

        x = L.ones(3, 3, requires_grad=True)
        y = L.ones(3, 3, requires_grad=True)
        c, _, d = DoubleMul2.apply(x, 3, y)
        c.grad_fn.register_prehook(prehook2)
        (c + d).sum().backward()
        return out + [seen, x.grad, y.grad]

    compare(scenario)


def test_node_hook_results_are_checked(compare):
    """A node hook returns a tuple of the right length (or None); torch's errors otherwise."""

    def scenario(L):
        out = []
        for reg, hook in (("register_hook", lambda gi, go: (gi[0], gi[0])),
                          ("register_hook", lambda gi, go: gi[0]),
                          ("register_hook", lambda gi, go: [gi[0] * 0]),
                          ("register_hook", lambda gi, go: (gi[0].sum(), None)),
                          ("register_hook", lambda gi, go: (gi[0] * 3, None)),
                          ("register_prehook", lambda go: (go[0], go[0])),
                          ("register_prehook", lambda go: go[0]),
                          ("register_prehook", lambda go: (go[0].double(),)),
                          ("register_prehook", lambda go: (3,))):
            x = L.ones(2, requires_grad=True)
            y = x * 2
            getattr(y.grad_fn, reg)(hook)
            out.append(raised(lambda y=y: y.sum().backward()))
            out.append(x.grad)
        return out

    compare(scenario)


def test_grad_fn_badcalls(compare):
    """test_grad_fn_badcalls: calling a node checks the number of gradients."""

    def scenario(L):
        x = L.ones(1, requires_grad=True)
        y = x ** 2
        return (raised(lambda: y.grad_fn(x.detach(), x.detach())),
                raised(lambda: y.grad_fn()), y.grad_fn(x.detach()))

    compare(scenario)


def test_node_names_and_metadata(compare):
    """Node.name(), metadata (a dict kept on the node) and _sequence_nr ordering."""

    def scenario(L):
        x = L.ones(2, requires_grad=True)
        y = x * 2
        acc = y.grad_fn.next_functions[0][0]
        y.grad_fn.metadata["k"] = 1
        z = y.exp()
        return (y.grad_fn.name(), acc.name(), y.grad_fn.metadata,
                z.grad_fn._sequence_nr() > y.grad_fn._sequence_nr(), acc._sequence_nr())

    compare(scenario)


def test_set_sequence_nr(compare):
    """TestAutogradMultipleDispatch.test_set_sequence_nr: the sequence number orders the ready
    queue."""

    def scenario(L):
        x = L.ones(10, requires_grad=True)
        y = L.ones(10, requires_grad=True)
        z = L.ones(10, requires_grad=True)
        a = x + y
        b = y + z
        c = a + b
        a.grad_fn._set_sequence_nr(100)
        b.grad_fn._set_sequence_nr(99)
        c.grad_fn._set_sequence_nr(98)
        order = []
        for t, name in ((a, "a"), (b, "b"), (c, "c")):
            t.register_hook(lambda g, name=name: order.append(name))
        c.sum().backward()
        return ([t.grad_fn._sequence_nr() for t in (a, b, c)], order, x.grad, y.grad, z.grad)

    compare(scenario)


@pytest.mark.parametrize("custom", [True, False])
@pytest.mark.parametrize("tensor_hook", [True, False])
def test_hook_closure_cycle(compare, custom, tensor_hook):
    """test_hook_closure_cycle: a hook whose closure holds its node keeps working after a
    collection, and the cycle is freed once the graph is dropped."""

    def scenario(L):
        class Function(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, grad):
                return grad

        class Test:
            pass

        count = [0]

        def scope():
            a = L.tensor(1.0, requires_grad=True)
            b = Function.apply(a) if custom else a.clone()
            grad_fn_b = b.grad_fn
            obj = Test()

            def hook(*args):
                grad_fn_b  # noqa: B018
                obj  # noqa: B018
                count[0] += 1

            if tensor_hook:
                b.register_hook(hook)
            else:
                b.grad_fn.register_hook(hook)
            c = b.clone()
            return c, weakref.ref(obj)

        out, ref = scope()
        out.backward(retain_graph=True)
        gc.collect()
        out.backward(retain_graph=True)
        alive = ref() is not None
        del out
        gc.collect()
        return count[0], alive, ref() is None

    compare(scenario)


# --------------------------------------------------------------------------------------------
# register_multi_grad_hook
# --------------------------------------------------------------------------------------------


def test_multi_grad_all_hooks(compare):
    """test_multi_grad_all_hooks: the hook fires once per backward with the gradients the pass
    computed (None for the rest), not when it reaches none of the tensors, not after an error,
    not after remove()."""

    def scenario(L):
        t1 = L.ones(2, requires_grad=True).mul(2)

        class Foo(L.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a.clone()

            @staticmethod
            def backward(ctx, gO):
                return gO

        t2 = Foo.apply(L.ones(2, requires_grad=True))
        t3 = L.ones(2, requires_grad=True)
        t4 = L.ones(2, requires_grad=True).clone()
        res = [None] * 4
        count = [0]

        def hook(grads):
            nonlocal res
            count[0] += 1
            res = [g is not None for g in grads]

        handle = L.autograd.graph.register_multi_grad_hook((t1, t2, t3, t4), hook)
        out = t2 * t3
        log = []
        out.sum().backward(inputs=(t2, t3), retain_graph=True)
        log.append((count[0], list(res)))
        out.sum().backward(inputs=(t1, t4), retain_graph=True)
        log.append(count[0])
        out.sum().backward(inputs=(t1, t3), retain_graph=True)
        log.append((count[0], list(res)))

        class Func(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, gO):
                raise RuntimeError("error message")

        out = Func.apply(t2) * t3
        log.append(raised(lambda: out.sum().backward(inputs=(t2, t3), retain_graph=True)))
        log.append(count[0])
        handle.remove()
        out.sum().backward(inputs=(t1, t3), retain_graph=True)
        log.append(count[0])
        return log

    compare(scenario)


def test_multi_grad_any_hooks(compare):
    """test_multi_grad_any_hooks: an "any" hook runs once per module output pair, before the
    tensor hooks of the layer below, and not once removed."""

    def scenario(L):
        hook_id = 0
        any_hook_handles = []
        hook_order = []

        def hook(hook_id, *unused):
            hook_order.append(hook_id)

        class MultiOutputModule(L.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = L.nn.Linear(3, 3)

            def forward(self, x):
                nonlocal hook_id
                z = self.lin(x)
                out = L.sin(z), L.cos(z)
                z.register_hook(lambda g, i=hook_id: hook(i))
                hook_id += 1
                any_hook_handles.append(L.autograd.graph.register_multi_grad_hook(
                    out, lambda g, i=hook_id: hook(i), mode="any"))
                hook_id += 1
                return out

        class Model(L.nn.Module):
            def __init__(self):
                super().__init__()
                self.mod1 = MultiOutputModule()
                self.mod2 = MultiOutputModule()

            def forward(self, x):
                y = self.mod1(x)
                return self.mod2(y[0] + y[1])

        L.manual_seed(0)
        model = Model()
        inp = L.ones(2, 3)
        out = model(inp)
        (out[0] + out[1]).sum().backward()
        first = (len(any_hook_handles), list(hook_order))
        hook_id = 0
        hook_order.clear()
        any_hook_handles.clear()
        out = model(inp)
        for handle in any_hook_handles:
            handle.remove()
        (out[0] + out[1]).sum().backward()
        return first, hook_order

    compare(scenario)


def test_multi_grad_hooks_invalid_mode(compare):
    """test_multi_grad_hooks_invalid_mode."""

    def scenario(L):
        t1 = L.ones(2, requires_grad=True)
        t2 = L.ones(2, requires_grad=True)
        return raised(lambda: L.autograd.graph.register_multi_grad_hook(
            (t1, t2), lambda _: None, mode="foo"))

    compare(scenario)


@pytest.mark.parametrize("mode", ["all", "any"])
def test_multi_grad_hooks_in_threads(compare, mode):
    """TestMultithreadAutograd.test_multi_grad_all_hooks / test_multi_grad_any_hooks: each
    thread's backward is its own pass for the hook; an error in one pass leaves the others."""

    def scenario(L):
        t1, t2, t3, t4 = (L.ones(2, requires_grad=True) for _ in range(4))
        lock = threading.Lock()
        state = {"res": None, "count": 0}

        def hook(grads):
            with lock:
                state["count"] += 1
                state["res"] = ([g is not None for g in grads] if mode == "all" else "foo")

        L.autograd.graph.register_multi_grad_hook((t1, t2, t3, t4), hook, mode=mode)
        out = (t2 * t3).sum()

        def run(fn):
            threads = [threading.Thread(target=fn) for _ in range(5)]
            for th in threads:
                th.start()
            for th in threads:
                th.join(timeout=60)

        run(lambda: out.backward(inputs=(t2, t3), retain_graph=True))
        first = (state["count"], state["res"])
        state.update(res=None, count=0)
        errors = [0]
        calls = [0]

        class Func(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, gO):
                with lock:
                    calls[0] += 1
                    if calls[0] == 1:
                        raise RuntimeError("error message")
                return gO

        out2 = (Func.apply(t2) * t3).sum()

        def backward():
            try:
                out2.backward(inputs=(t2, t3), retain_graph=True)
            except RuntimeError:
                with lock:
                    errors[0] += 1

        run(backward)
        return first, state["count"], errors[0], state["res"]

    compare(scenario)


# --------------------------------------------------------------------------------------------
# Module hooks
# --------------------------------------------------------------------------------------------


def test_backward_hook_relative_ordering(compare):
    """test_backward_hook_relative_ordering: node pre/post hooks, tensor hooks,
    post-accumulate hooks and a module's full backward hook, in torch's order."""

    def scenario(L):
        order = []

        class MyModule(L.nn.Module):
            def __init__(self):
                super().__init__()
                self.linear = L.nn.Linear(10, 10)

            def forward(self, x):
                return self.linear(x)

        L.manual_seed(0)
        x = L.ones(10, 10, requires_grad=True)
        module = MyModule()
        module.register_full_backward_hook(
            lambda _1, _2, _3: order.append("module_full_backward_hook"))
        count = 0

        def register(nodes):
            nonlocal count
            for node, _ in nodes:
                if node is None:
                    continue
                count += 1
                name = f"{node.name()}_{count}"
                node.register_prehook(lambda _, name=name: order.append(f"pre_hook_{name}"))
                node.register_hook(lambda _1, _2, name=name: order.append(f"post_hook_{name}"))
                register(node.next_functions)

        loss = module(x).sum()
        register(((loss.grad_fn, None),))
        for t, name in ((x, "x"), (module.linear.weight, "weight"),
                        (module.linear.bias, "bias")):
            t.register_hook(lambda _, name=name: order.append(f"tensor_pre_hook_{name}"))
            t.register_post_accumulate_grad_hook(
                lambda _, name=name: order.append(f"post_acc_grad_hook_{name}"))
        loss.backward()
        return order

    compare(scenario)


def test_full_backward_hook_double_backward(compare):
    """test_full_backward_hook_double_backward: the hook fires for the first backward only."""

    def scenario(L):
        x = L.tensor([0.25], requires_grad=True)
        y = L.tensor([0.75])
        func = L.nn.MSELoss()
        counter = [0]
        func.register_full_backward_hook(lambda m, gi, go: counter.__setitem__(0, counter[0] + 1))
        f = func(x, y)
        (gradx_f,) = L.autograd.grad(f, x, create_graph=True)
        first = counter[0]
        g2 = L.autograd.grad(gradx_f, x)
        return first, counter[0], gradx_f.detach(), gradx_f.requires_grad, g2

    compare(scenario)


def test_create_graph_and_full_backward_hook_cycle(compare):
    """test_create_graph_and_full_backward_hook_cycle: no cycle through a full backward hook
    after backward(create_graph=True)."""

    def scenario(L):
        class TestCls:
            pass

        def get_ref(input_requires_grad, nb_hooks):
            t = L.ones(10, requires_grad=input_requires_grad)
            a = L.tensor(1.0, requires_grad=True)

            class Test(L.nn.Module):
                def forward(self, x):
                    return x ** 2 * a ** 2

            mod = Test()
            for _ in range(nb_hooks):
                mod.register_full_backward_hook(lambda a, b, c: None)
            tmp = mod(t)
            test = TestCls()
            ref = weakref.ref(test)
            tmp.grad_fn.metadata["a"] = test
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tmp.exp().sum().backward(create_graph=True)
            a.grad = None
            t.grad = None
            return ref

        out = []
        for nb_hooks in (1, 2, 3):
            for input_requires_grad in (True, False):
                ref = get_ref(input_requires_grad, nb_hooks)
                gc.collect()
                out.append(ref() is None)
        return out

    compare(scenario)


def test_full_backward_hook_on_inplace_module(compare):
    """A full backward hook on a module that changes its input in place (ReLU(inplace=True))
    is torch's custom-Function view error; without the hook it works."""

    def scenario(L):
        out = []
        for hooked in (True, False):
            m = L.nn.ReLU(inplace=True)
            if hooked:
                m.register_full_backward_hook(lambda m, gi, go: None)
            x = L.linspace(-1, 1, 3).requires_grad_()
            res = raised(lambda m=m, x=x: m(x * 1))
            out.append(res)
        return out

    compare(scenario)


def test_module_hooks_see_gradients(compare):
    """Module forward pre-hooks, forward hooks, full backward pre-hooks and full backward
    hooks: what each receives and how its result replaces the values (test_nn.py's hook
    tests)."""

    def scenario(L):
        log = []
        lin = L.nn.Linear(3, 2)
        with L.no_grad():  # values of our own: a seeded initialisation's last bits depend on
            lin.weight.copy_(L.tensor([[0.5, -0.25, 0.125], [1.0, 2.0, -3.0]]))  # the CPU
            lin.bias.copy_(L.tensor([0.75, -1.5]))
        lin.register_forward_pre_hook(lambda m, args: log.append(("fpre", len(args))))
        lin.register_forward_hook(lambda m, args, out: log.append(("fwd", out.shape)) or out * 2)
        lin.register_full_backward_pre_hook(
            lambda m, go: log.append(("bpre", go[0].clone())) or (go[0] * 3,))
        lin.register_full_backward_hook(
            lambda m, gi, go: log.append(("bwd", gi[0].clone(), go[0].clone())))
        x = L.ones(4, 3, requires_grad=True)
        y = lin(x)
        y.sum().backward()
        return log, y, x.grad, lin.weight.grad, lin.bias.grad

    compare(scenario)


def test_module_backward_hook_errors(compare):
    """Full backward (pre-)hooks returning the wrong number of gradients, and mixing
    register_backward_hook with register_full_backward_hook: torch's errors."""

    def scenario(L):
        out = []
        lin = L.nn.Linear(2, 2)
        lin.register_full_backward_hook(lambda m, gi, go: (gi[0], gi[0]))
        x = L.ones(1, 2, requires_grad=True)
        out.append(raised(lambda: lin(x).sum().backward()))
        lin = L.nn.Linear(2, 2)
        lin.register_full_backward_pre_hook(lambda m, go: (go[0], go[0]))
        out.append(raised(lambda: lin(x).sum().backward()))
        lin = L.nn.Linear(2, 2)
        lin.register_full_backward_hook(lambda m, gi, go: None)
        out.append(raised(lambda: lin.register_backward_hook(lambda m, gi, go: None)))
        return out

    compare(scenario)
