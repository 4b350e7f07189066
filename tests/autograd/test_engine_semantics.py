"""Autograd engine behaviour, each scenario run on torch and on the library under test.

Every test hands a ``scenario(L)`` to the ``compare`` fixture, which runs it with ``L = torch``
and with ``L = lib`` and asserts the same returned values (tensors: values, dtype, shape,
requires_grad, grad_fn name), the same exceptions (type and message) and the same warnings.
Where it matters, the test also checks that torch really did what the scenario is about.
"""

from __future__ import annotations

import threading

import pytest
from torchcompare import Raised, raised


def node_name(t):
    """``type(grad_fn).__name__`` or None."""
    return None if t.grad_fn is None else type(t.grad_fn).__name__


def edges(node):
    """next_functions as ``((class name or None, input index), ...)``."""
    return tuple((None if n is None else type(n).__name__, i) for n, i in node.next_functions)


# --------------------------------------------------------------------------------------------
# .grad accumulation, retain_graph, backward variants
# --------------------------------------------------------------------------------------------


def test_grad_accumulates_in_place_across_backward_calls(compare):
    """Leaf .grad sums over backward calls, in the same tensor object (create_graph=False)."""

    def scenario(L):
        x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        before = x.grad
        (x * x).sum().backward()
        first = x.grad
        first_copy = first.clone()
        (x * x).sum().backward()
        return before, first_copy, x.grad, x.grad is first, x.grad.requires_grad

    compare(scenario)


def test_first_grad_shares_no_buffer_anyone_else_can_see(compare):
    """AccumulateGrad may take the incoming gradient's buffer for ``.grad`` (torch steals it),
    but only when nothing else holds it: not the user's grad_tensors, not a hook's capture,
    not another leaf that got the same gradient. Then ``.grad`` stays independent and has the
    parameter's layout."""

    def scenario(L):
        a = L.randn(3, requires_grad=True)
        b = L.randn(3, requires_grad=True)
        (a + b).sum().backward()  # AddBackward hands one gradient to both leaves
        shared_leaves = a.grad.data_ptr() == b.grad.data_ptr()
        a.grad.add_(1.0)
        d = L.randn(3, requires_grad=True)
        gt = L.ones(3)
        d.backward(gt)
        user = d.grad.data_ptr() == gt.data_ptr()
        d.grad.mul_(5.0)
        kept = []
        c = L.randn(3, requires_grad=True)
        c.register_hook(lambda g: kept.append(g))
        (c * 2).sum().backward()
        hooked = kept[0].data_ptr() == c.grad.data_ptr()
        c.grad.zero_()
        w = L.randn(4, 3, requires_grad=True)
        L.nn.functional.linear(L.randn(2, 3), w, L.zeros(4)).sum().backward()
        replaced = []  # a leaf hook's replacement gradient, kept by the hook
        h = L.randn(3, requires_grad=True)
        h.register_hook(lambda g: replaced.append(g * 2) or replaced[-1])
        (h * 3).sum().backward()
        (h * 3).sum().backward()  # accumulates into h.grad: the kept tensor must not change
        r = L.tensor([-1.0, 2.0, 0.5], requires_grad=True)
        L.relu(r).sum().backward()  # a gradient built on another dtype's bits keeps its dtype
        return (shared_leaves, b.grad, user, gt, hooked, kept[0], w.grad.stride(),
                w.grad.is_contiguous(), w.grad._base is None, r.grad, replaced[0], h.grad)

    compare(scenario)


def test_gradients_summed_for_a_node_stay_independent(compare):
    """A node reached along several paths gets their gradients summed (in place in tapegrad's
    buffers when nothing else holds them). The first gradient to arrive may be one a hook
    kept, or the same tensor sent along two edges; what the hooks kept, retain_grad and
    autograd.grad must still show what torch shows. (The last consumer's rule runs first, so
    each hooked consumer below is created last.)"""

    def scenario(L):
        x = L.linspace(-1.5, 2.0, 12).reshape(4, 3).requires_grad_()
        h = x * 2
        h.retain_grad()
        given = []
        a, c = h.sin(), h.cos()
        d = h.exp()  # its rule's output is the first gradient into h's buffer, and kept
        d.grad_fn.register_hook(lambda grad_in, grad_out: given.append(grad_in))
        loss = (a + c + d).sum() + (a * 3).sum()
        loss.backward(retain_graph=True)
        (gh,) = L.autograd.grad(loss, [h])

        y = L.tensor([[0.5, -1.0, 2.0], [0.0, 1.5, -0.25]], requires_grad=True)
        k = y * 3
        q = k.tanh()
        p = k + k  # one node, two edges to k, the same gradient on both: a hook keeps it
        kept = []
        p.register_hook(lambda g: kept.append(g))
        (q + p * p).sum().backward()

        r = L.tensor([[0.5, -1.0, 2.0], [0.0, 1.5, -0.25]], requires_grad=True)
        t = r.tanh()
        u = t + t.sigmoid() + t.view(6).view(2, 3)  # a view's gradient meets the others
        u.sum().backward()
        return (h.grad, x.grad, given[0][0], gh, kept[0], y.grad, r.grad)

    compare(scenario)


def test_retain_graph_allows_a_second_backward(compare):
    """backward(retain_graph=True) keeps saved tensors; the second backward accumulates."""

    def scenario(L):
        x = L.tensor([0.5, -1.0], requires_grad=True)
        y = (x.exp() * x).sum()
        y.backward(retain_graph=True)
        once = x.grad.clone()
        y.backward()
        return once, x.grad

    compare(scenario)


def test_graph_that_saved_nothing_can_run_backward_twice(compare):
    """(x + 1).sum() saves no tensors, so a second backward works without retain_graph."""

    def scenario(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = (x + 1).sum()
        y.backward()
        y.backward()
        return x.grad

    compare(scenario)


def test_backward_with_explicit_gradient(compare):
    """backward(gradient=v) of a non-scalar output computes the vector-Jacobian product."""

    def scenario(L):
        x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * x
        y.backward(gradient=L.tensor([1.0, 0.1, 0.01]))
        return x.grad

    compare(scenario)


def test_backward_inputs_restricts_accumulation(compare):
    """backward(inputs=[x]) fills x.grad only; other leaves keep grad None."""

    def scenario(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        w = L.tensor([3.0, 4.0], requires_grad=True)
        (x * w).sum().backward(inputs=[x])
        return x.grad, w.grad

    compare(scenario)


def test_backward_inputs_can_be_a_non_leaf(compare):
    """backward(inputs=[h]) on a non-leaf stores h.grad without a warning."""

    def scenario(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        h = x * 2
        (h * h).sum().backward(inputs=[h])
        return h.grad, x.grad

    compare(scenario)


def test_autograd_backward_function(compare):
    """autograd.backward(tensors, grad_tensors) sums the contributions of several roots."""

    def scenario(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y1 = x * 2
        y2 = (x**2).sum()
        L.autograd.backward([y1, y2], [L.tensor([1.0, 10.0]), L.tensor(1.0)])
        w = L.tensor([1.0, -1.0], requires_grad=True)
        L.autograd.backward((w * 3).sum(), inputs=[w])
        return x.grad, w.grad

    compare(scenario)


def test_autograd_grad_returns_grads_without_touching_dot_grad(compare):
    """autograd.grad returns a tuple of gradients and leaves .grad alone."""

    def scenario(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        w = L.tensor([0.5, -0.5], requires_grad=True)
        y = (x * w).sum()
        grads = L.autograd.grad(y, [x, w])
        single = L.autograd.grad((x**2).sum(), x)
        return grads, single, x.grad, w.grad, type(grads).__name__

    compare(scenario)


def test_autograd_grad_with_grad_outputs_and_retain_graph(compare):
    """grad_outputs weights a non-scalar output; retain_graph=True allows a second call."""

    def scenario(L):
        x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x.exp()
        g1 = L.autograd.grad(y, x, grad_outputs=L.tensor([1.0, 0.0, 2.0]), retain_graph=True)
        g2 = L.autograd.grad([y], [x], grad_outputs=[L.ones(3)])
        return g1, g2

    compare(scenario)


def test_autograd_grad_allow_unused_and_materialize_grads(compare):
    """An unused input gives None with allow_unused=True and zeros with materialize_grads."""

    def scenario(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        z = L.tensor([5.0], requires_grad=True)
        unused = L.autograd.grad((x * 2).sum(), [x, z], allow_unused=True)
        materialized = L.autograd.grad((x * 2).sum(), [x, z], materialize_grads=True)
        return unused, materialized

    compare(scenario)


def test_autograd_grad_several_outputs(compare):
    """autograd.grad over several outputs sums their contributions."""

    def scenario(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        a, b = (x * 3).sum(), (x**2).sum()
        return L.autograd.grad([a, b], [x], grad_outputs=[L.tensor(1.0), L.tensor(2.0)])

    compare(scenario)


def test_diamond_graph_accumulates_both_paths(compare):
    """A tensor used twice (fan-out) receives the sum of both paths' gradients."""

    def scenario(L):
        a = L.tensor(1.5, requires_grad=True)
        b = a + a
        c = b * b + b.exp()
        c.backward()
        return a.grad

    compare(scenario)


def test_deep_chain_backpropagates_without_recursion(compare):
    """A 20,000-op chain backpropagates (the engine must not recurse)."""

    def scenario(L):
        x = L.tensor([1.0], requires_grad=True)
        y = x
        for _ in range(20_000):
            y = y * 1.0
        y.sum().backward()
        return x.grad

    compare(scenario)


# --------------------------------------------------------------------------------------------
# Higher order
# --------------------------------------------------------------------------------------------


def test_third_derivative_with_create_graph(compare):
    """d/dx of x**3 three times: 3x^2, 6x, 6; the constant third derivative has no history."""

    def scenario(L):
        x = L.tensor(2.0, requires_grad=True)
        y = x**3
        (g1,) = L.autograd.grad(y, x, create_graph=True)
        (g2,) = L.autograd.grad(g1, x, create_graph=True)
        (g3,) = L.autograd.grad(g2, x, create_graph=True)
        return g1, g2, g3, raised(L.autograd.grad, g3, x)

    compare(scenario)


def test_gradient_of_linear_function_has_no_history(compare):
    """create_graph grad of a linear function does not require grad (pytorch #36463)."""

    def scenario(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        (g,) = L.autograd.grad((x * 3).sum(), x, create_graph=True)
        return g, raised(L.autograd.grad, g.sum(), x)

    rec = compare(scenario)
    assert rec.result[1] == Raised(
        "RuntimeError", "element 0 of tensors does not require grad and does not have a grad_fn"
    )


def test_backward_create_graph_accumulates_differentiable_grad(compare):
    """backward(create_graph=True) leaves a differentiable x.grad; its backward adds to it."""

    def scenario(L):
        x = L.tensor(2.0, requires_grad=True)
        (x**3).backward(create_graph=True)
        first = repr(x.grad), x.grad.requires_grad
        x.grad.backward()
        return first, repr(x.grad)

    rec = compare(scenario)
    assert rec.result == (
        ("tensor(12., grad_fn=<CopyBackwards>)", True),
        "tensor(24., grad_fn=<CopyBackwards>)",
    )


def test_hessian_vector_product(compare):
    """grad of (grad . v) gives H v for f(x) = sum(x^2 * y) + prod(x)."""

    def scenario(L):
        x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = L.tensor([0.5, -1.0, 2.0], requires_grad=True)
        f = (x * x * y).sum() + x.prod()
        (gx,) = L.autograd.grad(f, x, create_graph=True)
        v = L.tensor([1.0, 0.0, -1.0])
        return L.autograd.grad((gx * v).sum(), [x, y])

    compare(scenario)


# --------------------------------------------------------------------------------------------
# grad_fn introspection
# --------------------------------------------------------------------------------------------


def test_next_functions_structure(compare):
    """AccumulateGrad for leaves, None for constants and Python scalars, (node, output index)."""

    def scenario(L):
        a = L.tensor([1.0, 2.0], requires_grad=True)
        b = L.tensor([3.0, 4.0], requires_grad=True)
        c = a * b
        d = c + 2
        e = c * L.tensor([1.0, 1.0])
        v = a.unbind()[1] * 2
        s = a.sum() * a
        return [edges(t.grad_fn) for t in (c, d, e, v, s, 2 - a, a.exp())]

    compare(scenario)


def test_node_names_and_accumulate_grad_variable(compare):
    """name() strings, the AccumulateGrad node's .variable, and one accumulator per leaf."""

    def scenario(L):
        a = L.tensor([1.0, 2.0], requires_grad=True)
        c = a * 2
        acc = c.grad_fn.next_functions[0][0]
        other = (a * 3).grad_fn.next_functions[0][0]
        return (
            c.grad_fn.name(),
            acc.name(),
            type(acc).__name__,
            acc.variable is a,
            acc is other,
            acc.next_functions,
        )

    compare(scenario)


def test_grad_fn_repr(compare):
    """str(grad_fn) is ``<MulBackward0 object at 0x...>``; tensor reprs name their grad_fn."""

    def scenario(L):
        a = L.tensor([1.0, 1.0, 1.0], requires_grad=True)
        b = a * 2
        return str(b.grad_fn), repr(a), repr(b), repr(b.sum()), repr(b.grad_fn.next_functions)

    compare(scenario)


def test_hook_firing_order(compare):
    """Node pre-hooks, node hooks, tensor hooks and post-accumulate hooks fire in torch's order."""

    def scenario(L):
        log = []
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = x * 3
        z = y.exp()
        y.register_hook(lambda g: log.append(("y-hook-1", g.tolist())))
        y.register_hook(lambda g: g * 10)
        y.register_hook(lambda g: log.append(("y-hook-3", g.tolist())))
        x.register_hook(lambda g: log.append(("x-hook", g.tolist())))
        z.grad_fn.register_prehook(lambda go: log.append(("exp-pre", [g.tolist() for g in go])))
        z.grad_fn.register_hook(
            lambda gi, go: log.append(("exp-post", [g.tolist() for g in gi], len(go)))
        )
        y.grad_fn.register_prehook(lambda go: log.append(("mul-pre", len(go))))
        y.grad_fn.register_hook(
            lambda gi, go: log.append(("mul-post", [g is None for g in gi], len(go)))
        )
        x.register_post_accumulate_grad_hook(lambda t: log.append(("post-acc", t.grad.tolist())))
        z.sum().backward()
        return log, x.grad

    compare(scenario)


def test_node_hooks_can_replace_gradients(compare):
    """A node hook's returned grad_inputs and a pre-hook's returned grad_outputs are used."""

    def scenario(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = x * 3
        y.grad_fn.register_hook(lambda gi, go: (gi[0] * 100,) + tuple(gi[1:]))
        y.sum().backward()
        post = x.grad.clone()
        x.grad = None
        z = (x * 3) * 2
        z.grad_fn.register_prehook(lambda go: (go[0] * 7,))
        z.sum().backward()
        return post, x.grad

    compare(scenario)


def test_tensor_hook_replaces_grad_and_handle_removes_it(compare):
    """Tensor.register_hook may return a new grad; handle.remove() unregisters it."""

    def scenario(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        h = x.register_hook(lambda g: g * 0)
        h.remove()
        (x * 2).sum().backward()
        removed = x.grad.clone()
        x.grad = None
        y = x * 2
        y.register_hook(lambda g: g + 1)  # non-leaf hook changes what flows further back
        x.register_hook(lambda g: g * 10)  # leaf hook changes what is accumulated
        (y * y).sum().backward()
        return removed, x.grad, type(h).__name__

    compare(scenario)


def test_retain_grad_on_non_leaf(compare):
    """retain_grad() keeps a non-leaf's grad (accumulating over calls), without a warning."""

    def scenario(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = x * x
        y.retain_grad()
        z = (y * 3).sum()
        z.backward(retain_graph=True)
        first = y.grad.clone()
        z.backward()
        return first, y.grad, y.retains_grad, x.retains_grad, y.is_leaf

    compare(scenario)


def test_non_leaf_grad_access_warns_and_returns_none(compare):
    """Reading .grad of a non-leaf warns (torch's exact text) and gives None; leaves don't."""

    def scenario(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        y.sum().backward()
        return x.grad, y.grad

    rec = compare(scenario)
    assert len(rec.warnings) == 1 and rec.warnings[0][1].startswith(
        "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed."
    )


def test_post_accumulate_grad_hook_sees_accumulated_grad(compare):
    """register_post_accumulate_grad_hook runs after accumulation and gets the leaf itself."""

    def scenario(L):
        seen = []
        x = L.tensor([1.0, 2.0], requires_grad=True)
        x.register_post_accumulate_grad_hook(lambda t: seen.append((t is x, t.grad.tolist())))
        (x * 2).sum().backward()
        (x * 3).sum().backward()
        return seen

    compare(scenario)


# --------------------------------------------------------------------------------------------
# Grad modes
# --------------------------------------------------------------------------------------------


def test_no_grad_and_enable_grad_contexts(compare):
    """no_grad disables recording; enable_grad re-enables it inside; state is restored."""

    def scenario(L):
        x = L.tensor([1.0], requires_grad=True)
        with L.no_grad():
            inside = L.is_grad_enabled()
            y = x * 2
            with L.enable_grad():
                z = x * 2
                nested = L.is_grad_enabled()
        return inside, nested, L.is_grad_enabled(), y, z, y.is_leaf

    compare(scenario)


def test_grad_mode_decorators(compare):
    """no_grad(), enable_grad() and set_grad_enabled(False) work as decorators."""

    def scenario(L):
        x = L.tensor([1.0], requires_grad=True)

        @L.no_grad()
        def off(t):
            return t * 2, L.is_grad_enabled()

        @L.set_grad_enabled(False)
        def off2(t):
            return t * 2

        @L.enable_grad()
        def on(t):
            return t * 2

        with L.no_grad():
            inner_on = on(x)
        return off(x), off2(x), inner_on, L.is_grad_enabled()

    compare(scenario)


def test_set_grad_enabled_as_context_and_function(compare):
    """set_grad_enabled(mode) as a context manager and as a plain call."""

    def scenario(L):
        x = L.tensor([1.0], requires_grad=True)
        with L.set_grad_enabled(False):
            a = x * 2
        with L.set_grad_enabled(True):
            b = x * 2
        L.set_grad_enabled(False)
        try:
            c = x * 2
            disabled = L.is_grad_enabled()
        finally:
            L.set_grad_enabled(True)
        return a, b, c, disabled, L.is_grad_enabled()

    compare(scenario)


def test_inference_mode_tensors(compare):
    """inference_mode: results are inference tensors that don't require grad."""

    def scenario(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        before = L.is_inference_mode_enabled()
        with L.inference_mode():
            enabled = L.is_inference_mode_enabled(), L.is_grad_enabled()
            y = x * 2
            with L.enable_grad():
                w = x * 2
        normal = x * 2
        return (
            before,
            enabled,
            L.is_inference_mode_enabled(),
            y,
            y.is_inference(),
            w.is_inference(),
            w.requires_grad,
            normal.is_inference(),
            x.is_inference(),
            repr(y),
        )

    compare(scenario)


def test_inference_mode_decorator_and_disabled_mode(compare):
    """@inference_mode() decorates functions; inference_mode(False) is a no-op context."""

    def scenario(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)

        @L.inference_mode()
        def f(t):
            return t * 2

        with L.inference_mode(False):
            g = x * 2
        out = f(x)
        return out.is_inference(), out.requires_grad, g.is_inference(), g

    compare(scenario)


def test_inference_tensor_used_outside(compare):
    """An inference tensor is usable outside when nothing needs saving (result is normal)."""

    def scenario(L):
        with L.inference_mode():
            t = L.tensor([1.0, 2.0]) * 1
        e = t.exp()
        return t.is_inference(), e.is_inference(), e

    compare(scenario)


def test_grad_mode_is_thread_local(compare):
    """A thread started inside no_grad() still sees grad mode enabled."""

    def scenario(L):
        x = L.tensor([1.0], requires_grad=True)
        seen = {}

        def worker():
            seen["enabled"] = L.is_grad_enabled()
            seen["requires_grad"] = (x * 2).requires_grad

        with L.no_grad():
            t = threading.Thread(target=worker)
            t.start()
            t.join()
            seen["main"] = L.is_grad_enabled()
        return seen

    rec = compare(scenario)
    assert rec.result == {"enabled": True, "requires_grad": True, "main": False}


# --------------------------------------------------------------------------------------------
# In-place ops and views
# --------------------------------------------------------------------------------------------


def test_version_counter_bumps(compare):
    """Each in-place op bumps _version once; views and detach() share the counter."""

    def scenario(L):
        x = L.zeros(2, 3)
        versions = [x._version]
        steps = [
            lambda: x.add_(1),
            lambda: x.mul_(2),
            lambda: x.sub_(1),
            lambda: x.div_(2),
            lambda: x.zero_(),
            lambda: x.fill_(3.0),
            lambda: x.clamp_(0, 1),
            lambda: x.copy_(L.ones(2, 3)),
        ]
        for step in steps:
            step()
            versions.append(x._version)
        x += 1
        versions.append(x._version)
        x[0] = 5.0
        versions.append(x._version)
        v = x[1]
        v.mul_(2)
        d = x.detach()
        d.add_(1)
        return versions, x._version, v._version, d._version, x

    compare(scenario)


def test_out_of_place_ops_do_not_bump_version(compare):
    """Reading and out-of-place ops leave _version alone."""

    def scenario(L):
        x = L.ones(3)
        _ = x + 1, x.sum(), x[0], x.view(3), x.clone()
        return x._version

    compare(scenario)


def test_inplace_on_non_leaf_gradients_and_node_names(compare):
    """In-place ops on a non-leaf rebase its grad_fn and give torch's gradients."""

    def scenario(L):
        x = L.tensor([0.5, -1.0, 2.0], requires_grad=True)
        y = x * 2
        names = [node_name(y)]
        y.add_(1)
        names.append(node_name(y))
        y.mul_(x)
        names.append(node_name(y))
        y.exp_()
        names.append(node_name(y))
        y.mul_(3)  # multiplying by a Python number saves nothing, so exp_'s output stays intact
        names.append(node_name(y))
        y.sum().backward()
        return names, x.grad, y._version

    compare(scenario)


def test_inplace_on_view_of_non_leaf_uses_copyslices(compare):
    """b = a.clone(); b[:2].mul_(3): b's grad_fn becomes CopySlices, gradients are torch's."""

    def scenario(L):
        a = L.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        b = a.clone()
        view = b[:2]
        view.mul_(3)
        names = node_name(b), b.grad_fn.name(), node_name(view)
        b.sum().backward()
        return names, a.grad, b

    compare(scenario)


def test_setitem_on_non_leaf_with_values_requiring_grad(compare):
    """b[1] = v * 2 routes gradient to v and blocks it from the overwritten part of a."""

    def scenario(L):
        a = L.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], requires_grad=True)
        v = L.tensor([10.0, 20.0], requires_grad=True)
        b = a * 1
        b[1] = v * 2
        b[2, 0] = 0.0
        (b * L.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])).sum().backward()
        return node_name(b), a.grad, v.grad, b

    compare(scenario)


def test_setitem_with_mask_and_index_on_non_leaf(compare):
    """Masked and integer-array setitem on a non-leaf give torch's gradients."""

    def scenario(L):
        a = L.tensor([1.0, -2.0, 3.0, -4.0], requires_grad=True)
        b = a * 1
        b[b < 0] = 0.0
        c = a * 1
        c[L.tensor([0, 2])] = L.tensor([7.0, 8.0])
        (b * L.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
        (c * 2).sum().backward()
        return b, c, a.grad

    compare(scenario)


def test_detach_shares_storage_and_version(compare):
    """detach() shares memory and the version counter, and is a leaf not requiring grad."""

    def scenario(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        d = y.detach()
        d[0] = 100.0
        return d.requires_grad, d.is_leaf, d.grad_fn, y, y._version, x.detach().is_leaf

    compare(scenario)


def test_detach_in_place(compare):
    """detach_() turns a non-leaf into a leaf that doesn't require grad."""

    def scenario(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        same = y.detach_() is y
        return same, y.requires_grad, y.is_leaf, y.grad_fn, y

    compare(scenario)


def test_requires_grad_in_place(compare):
    """requires_grad_() on a leaf returns the tensor itself; the default is True."""

    def scenario(L):
        t = L.tensor([1.0, 2.0])
        same = t.requires_grad_() is t
        on = t.requires_grad
        t.requires_grad_(False)
        off = t.requires_grad
        u = L.tensor([1.0]).requires_grad_(True) * 2
        u.requires_grad_(True)  # allowed on a non-leaf that already requires grad
        return same, on, off, u.requires_grad

    compare(scenario)


def test_data_attribute(compare):
    """.data shares memory, is a leaf not requiring grad and does not bump the version."""

    def scenario(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        d = x.data
        d.add_(1)
        y = x * 2
        y.data.mul_(10)
        x.data = L.tensor([5.0, 6.0])
        return d.requires_grad, d.is_leaf, x._version, x, y, node_name(y)

    compare(scenario)


def test_inplace_on_leaf_allowed_under_no_grad(compare):
    """Inside no_grad() a leaf may be updated in place (an optimizer step)."""

    def scenario(L):
        w = L.tensor([1.0, 2.0], requires_grad=True)
        (w * w).sum().backward()
        with L.no_grad():
            w -= 0.1 * w.grad
            w.grad.zero_()
        return w, w.is_leaf, w.requires_grad, w._version, w.grad

    compare(scenario)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_grad_dtype_follows_leaf(compare, dtype):
    """Gradients have the leaf's dtype even when a Python float or other dtype mixes in."""

    def scenario(L):
        x = L.tensor([1.0, 2.0], dtype=getattr(L, dtype), requires_grad=True)
        y = (x * 2.5 + L.tensor([1, 2])).sum()
        y.backward()
        return x.grad

    compare(scenario)
