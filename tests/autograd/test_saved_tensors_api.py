"""Saved tensors as torch's autograd tests use them, each scenario run on torch and on the
library under test: saved_tensors_hooks (default hooks, nesting, errors in them, double
backward, saving to disk), save_on_cpu, disable_saved_tensors_hooks, and what a node's
``_saved_*`` attributes give back.

Written from what torch's test/test_autograd.py checks (api.tsv names the torch test each one
ports); the tests of torch's private SavedTensor objects (``_raw_saved_*``) are out of scope.
"""

from __future__ import annotations

import os
import tempfile
import uuid
import warnings
import weakref

from torchcompare import raised


def _v(L, n=5, start=0.5):
    return L.linspace(start, start + 1, n)


def test_default_hooks_save_original(compare):
    """test_saved_variable_packing_unpacking_saved_original_with_default_hooks: the pack hook
    runs once per saved tensor, what it returns is what backward sees through unpack, and the
    hooks are gone after the block."""

    def scenario(L):
        out = []

        def pack(x):
            warnings.warn("pack", stacklevel=2)
            return x

        with L.autograd.graph.saved_tensors_hooks(pack, lambda x: x):
            a = L.ones(5, requires_grad=True)
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                a * a
            out.append(len(w))
        for pack_fn, unpack_fn in ((lambda x: x, lambda x: x),
                                   (lambda x: 2 * x, lambda x: x / 2),
                                   (lambda x: 2 * x, lambda x: x)):
            with L.autograd.graph.saved_tensors_hooks(pack_fn, unpack_fn):
                a = _v(L).requires_grad_()
                y = a * a
                out += [y.grad_fn._saved_self, y.grad_fn._saved_other]
                y.sum().backward()
                out.append(a.grad)
        a = _v(L).requires_grad_()
        y = a * a
        out.append(y.grad_fn._saved_self)
        y.sum().backward()
        out.append(a.grad)
        return out

    compare(scenario)


def test_default_hooks_did_not_save_original(compare):
    """test_saved_variable_packing_unpacking_did_not_save_original_with_default_hooks: a saved
    output comes back through the hooks."""

    def scenario(L):
        with L.autograd.graph.saved_tensors_hooks(lambda x: x, lambda x: x):
            a = _v(L).requires_grad_()
            y = L.exp(a)
            out = [L.equal(y, y.grad_fn._saved_result)]
            y.sum().backward()
            out += [a.grad, y]
        return out

    compare(scenario)


def test_nested_default_hooks(compare):
    """test_setting_default_saved_variable_hooks_twice_should_not_fail / _should_use_inner."""

    def scenario(L):
        with L.autograd.graph.saved_tensors_hooks(lambda x: x, lambda x: x):
            with L.autograd.graph.saved_tensors_hooks(lambda x: x, lambda x: x):
                pass
        with L.autograd.graph.saved_tensors_hooks(lambda x: 3 * x, lambda x: 3 * x):
            b = _v(L).requires_grad_()
            with L.autograd.graph.saved_tensors_hooks(lambda x: 5 * x, lambda x: 5 * x):
                a = _v(L, start=2.0).requires_grad_()
                y = a * a
            z = b * b
        y.sum().backward()
        z.sum().backward()
        return a.grad, b.grad

    compare(scenario)


def test_disabling_saved_tensor_hooks(compare):
    """test_disabling_saved_tensor_hooks / _nested: entering hooks while disabled raises the
    given message (the innermost one); disabling while hooks are active raises too."""

    def scenario(L):
        G = L.autograd.graph
        out = []

        def enter_hooks():
            with G.saved_tensors_hooks(lambda x: x, lambda x: x):
                pass

        with G.disable_saved_tensors_hooks("error message"):
            out.append(raised(enter_hooks))
        enter_hooks()

        def disable_inside():
            with G.saved_tensors_hooks(lambda x: x, lambda x: x):
                with G.disable_saved_tensors_hooks("error message"):
                    pass

        out.append(raised(disable_inside))
        with G.disable_saved_tensors_hooks("outer"):
            with G.disable_saved_tensors_hooks("inner"):
                out.append(raised(enter_hooks))
            out.append(raised(enter_hooks))
        enter_hooks()
        return out

    compare(scenario)


def test_saved_tensor_hooks_custom_error_propagation(compare):
    """test_saved_tensor_hooks_custom_error_propagation: errors in pack and unpack hooks keep
    their type."""

    def scenario(L):
        class CustomError(Exception):
            pass

        def pack_hook(x):
            raise CustomError("pack")

        def unpack_hook(x):
            raise CustomError("unpack")

        a = L.tensor(1.0, requires_grad=True)
        out = []

        def packing():
            with L.autograd.graph.saved_tensors_hooks(pack_hook, lambda x: x):
                L.sin(a)

        out.append(raised(packing))
        with L.autograd.graph.saved_tensors_hooks(lambda x: x, unpack_hook):
            y = L.sin(a)
            out.append(raised(lambda: y.backward()))
        return out

    compare(scenario)


def test_saved_tensor_hooks_custom_function(compare):
    """test_saved_tensor_hooks_custom_function_intermediates / test_unpack_hooks_exec_count /
    test_wrapped_number_saved_tensors_hooks: a custom Function's saves go through the hooks;
    pack runs at save time, unpack at backward, numbers are not packed."""

    def scenario(L):
        class Func(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                intermediate = x.exp()
                ctx.save_for_backward(intermediate.clone().detach_().requires_grad_(True))
                return x.exp()

            @staticmethod
            def backward(ctx, grad_out):
                (intermediate,) = ctx.saved_tensors
                return grad_out * intermediate

        a = L.tensor(1.0, requires_grad=True)
        with L.autograd.graph.saved_tensors_hooks(lambda x: x, lambda x: x):
            out = Func.apply(a)
        out.backward()
        res = [a.grad]
        counts = {"pack": 0, "unpack": 0}

        def pack_hook(x):
            counts["pack"] += 1
            return x

        def unpack_hook(x):
            counts["unpack"] += 1
            return x

        x = L.ones(4, requires_grad=True)
        y = L.ones(4, requires_grad=False)
        with L.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
            t = x * y
            res.append(dict(counts))
            t.sum().backward()
            res.append(dict(counts))

        def err_hook(x):
            raise RuntimeError("this hook should not be called")

        with L.autograd.graph.saved_tensors_hooks(err_hook, err_hook):
            a = _v(L).requires_grad_()
            res.append(L.autograd.grad((a * 3).sum(), (a,)))
        return res

    compare(scenario)


def test_default_saved_tensors_hooks_double_backward(compare):
    """test_default_saved_tensors_hooks_double_backward: the hooks act on what the first and
    the second backward save."""

    def scenario(L):
        G = L.autograd.graph
        out = []
        with G.saved_tensors_hooks(lambda x: x, lambda x: x):
            a = _v(L).requires_grad_()
            s = (a ** 3).sum()
            (g,) = L.autograd.grad(s, (a,), create_graph=True)
            g.sum().backward()
            out.append(a.grad)
        with G.saved_tensors_hooks(lambda x: 2 * x, lambda x: x):
            a = _v(L).requires_grad_()
            s = (a ** 3).sum()
        (g,) = L.autograd.grad(s, (a,), create_graph=True)
        g.sum().backward()
        out.append(a.grad)
        a = _v(L).requires_grad_()
        s = (a ** 3).sum()
        with G.saved_tensors_hooks(lambda x: 2 * x, lambda x: x):
            (g,) = L.autograd.grad(s, (a,), create_graph=True)
            g.sum().backward()
            out.append(a.grad)
        with G.saved_tensors_hooks(lambda x: 2 * x, lambda x: x):
            a = _v(L).requires_grad_()
            s = (a ** 3).sum()
            (g,) = L.autograd.grad(s, (a,), create_graph=True)
            g.sum().backward()
            out.append(a.grad)
        return out

    compare(scenario)


def test_saving_variable_to_disk(compare):
    """test_saving_variable_to_disk: pack to a file, unpack by loading it."""

    def scenario(L):
        with tempfile.TemporaryDirectory() as tmp_dir:
            def pack(x):
                name = os.path.join(tmp_dir, str(uuid.uuid4()))
                L.save(x, name)
                return name

            def unpack(name):
                return L.load(name)

            with L.autograd.graph.saved_tensors_hooks(pack, unpack):
                a = L.ones(5, requires_grad=True)
                y = a * a
                saved = y.grad_fn._saved_self
                y.sum().backward()
            return saved, a.grad

    compare(scenario)


def test_graph_save_on_cpu(compare):
    """test_graph_save_on_cpu (dense tensors): save_on_cpu with and without pin_memory keeps
    values, dtype and layout."""

    def scenario(L):
        out = []
        for pin_memory in (True, False):
            for dtype in (L.float32, L.float64):
                with L.autograd.graph.save_on_cpu(pin_memory):
                    a = _v(L).to(dtype).requires_grad_()
                    y = a * a
                    out += [y.grad_fn._saved_self, y.grad_fn._saved_self.dtype,
                            str(y.grad_fn._saved_self.layout)]
                    y.sum().backward()
                    out.append(a.grad)
        return out

    compare(scenario)


def test_save_on_cpu_and_checkpoint(compare):
    """test_save_on_cpu_and_checkpoint: save_on_cpu around or inside a checkpointed block
    gives the plain gradients."""

    def scenario(L):
        a = L.linspace(0.5, 0.9, 4).reshape(2, 2).requires_grad_()
        a.pow(2).pow(2).pow(2).pow(2).sum().backward()
        out = [a.grad.clone()]
        a.grad.zero_()
        with L.autograd.graph.save_on_cpu():
            h = a.pow(2)
            h = L.utils.checkpoint.checkpoint(lambda x: x.pow(2).pow(2), h, use_reentrant=False)
            c = h.pow(2)
        c.sum().backward()
        out.append(a.grad.clone())
        a.grad.zero_()

        def f(a):
            h = a.pow(2)
            with L.autograd.graph.save_on_cpu():
                h = h.pow(2).pow(2)
            return h.pow(2)

        d = L.utils.checkpoint.checkpoint(f, a, use_reentrant=False)
        d.sum().backward()
        out.append(a.grad)
        return out

    compare(scenario)


def test_saved_tensor_hooks_extra_enter_exit(compare):
    """test_saved_tensor_hooks_extra_exit_during_bw_no_crash /
    test_saved_tensor_hooks_extra_enter_during_bw_no_leak (their user-visible part): hook
    contexts entered or exited by hand inside unpack do not break the backward, and the
    hooks do not outlive their context."""

    def scenario(L):
        G = L.autograd.graph

        def scope():
            def unpack(x):
                weak_ctx_1().__enter__()
                return x

            ctx_1 = G.saved_tensors_hooks(lambda x: x, unpack)
            weak_ctx_1 = weakref.ref(ctx_1)
            x = L.ones(3, 3, requires_grad=True)
            with ctx_1:
                x.sin().sum().backward()
            return weakref.ref(unpack), x.grad

        ref, g = scope()
        a = L.tensor(1.0, requires_grad=True)
        a.exp().backward()
        return g, a.grad, ref() is None

    compare(scenario)


def test_saved_output_and_inputs(compare):
    """test_no_unnecessary_unwrapping / test_saved_variable_version_counter /
    test_saved_variable_saved_original_inplace_detach (its output case): a saved leaf or
    intermediate comes back as the same tensor, a saved output as an equal tensor with the
    same version; freed after backward."""

    def scenario(L):
        a = _v(L).requires_grad_()
        a_orig = a.detach().clone()
        b = a * a
        c = a * b
        d = L.exp(a)
        out = [b.grad_fn._saved_self is a, b.grad_fn._saved_other is a,
               c.grad_fn._saved_self is a, c.grad_fn._saved_other is b,
               L.equal(d.grad_fn._saved_result, d), d.grad_fn._saved_result is d]
        c.sum().backward()
        out += [raised(lambda: c.grad_fn._saved_self), L.equal(a, a_orig)]
        a = L.ones(2, requires_grad=True)
        b = L.exp(a)
        unpacked = b.grad_fn._saved_result
        out += [L.equal(b, unpacked), b._version == unpacked._version]
        with L.no_grad():
            b += 1
        out += [L.equal(b, unpacked), b._version == unpacked._version]
        a = L.tensor(1.0, requires_grad=True).clone()
        b = a.exp()
        a.detach_()
        b.backward()
        return out

    compare(scenario)


def test_custom_function_saved_tensors(compare):
    """test_custom_function_saved_tensors (its public part) / test_clear_saved_tensors_on_access:
    saved_tensors before and after backward, a Function that saved nothing."""

    def scenario(L):
        def get_fn(save):
            class MyFn(L.autograd.Function):
                @staticmethod
                def forward(ctx, x):
                    if save:
                        ctx.save_for_backward(x, None)
                    return x

                @staticmethod
                def backward(ctx, g):
                    return g

            return MyFn

        a = _v(L).requires_grad_()
        y = get_fn(True).apply(a)
        out = [y.grad_fn.saved_tensors]
        y.sum().backward()
        out.append(raised(lambda: y.grad_fn.saved_tensors))
        out.append(get_fn(False).apply(a).grad_fn.saved_tensors)
        return out

    compare(scenario)


# --------------------------------------------------------------------------------------------
# allow_mutation_on_saved_tensors
# --------------------------------------------------------------------------------------------


def _cloned(ctx):
    return len(list(ctx.cloned.items()))


def test_allow_mutation_with_out_variant(compare):
    """TestAllowMutationOnSaved.test_with_out_variant: under allow_mutation_on_saved_tensors an
    out= function writing into a saved tensor that requires grad still gets torch's out= error,
    and the graph's value is untouched."""

    def scenario(L):
        G = L.autograd.graph
        a = L.linspace(0.1, 0.6, 6).reshape(2, 3).requires_grad_()
        with G.allow_mutation_on_saved_tensors():
            b = a.clone()
            out = b.sin()
            err = raised(lambda: L.sin(L.linspace(1.0, 2.0, 6).reshape(2, 3), out=b))
            out.sum().backward()
        return err, a.grad

    compare(scenario)


def test_allow_mutation_on_saved_tensors(compare):
    """TestAllowMutationOnSaved.test_basic / test_double_backward / test_saved_but_not_anymore /
    test_saved_same_tensor_many_times: an in-place change of a saved tensor keeps a copy for
    the graph (once per saved tensor, only while a graph still holds it)."""

    def scenario(L):
        G = L.autograd.graph
        a = L.linspace(0.1, 0.6, 6).reshape(2, 3).requires_grad_()

        def fn(a):
            b = a.clone()
            out = (b ** 2).sum()
            b.sin_()
            out.sum().backward()
            return a.grad

        res = [raised(lambda: fn(a))]
        a.grad = None
        with G.allow_mutation_on_saved_tensors() as ctx:
            res += [fn(a).clone(), _cloned(ctx)]
        with G.allow_mutation_on_saved_tensors() as ctx:
            a2 = L.linspace(0.1, 0.6, 6).reshape(2, 3).requires_grad_()
            b = a2.clone()
            out = (b ** 2).sum()
            b.sin_()
            L.autograd.grad(out, a2, create_graph=True)
            (da,) = L.autograd.grad(out, a2, create_graph=True)
            (d2a,) = L.autograd.grad(da.sum(), a2)
        res += [d2a, _cloned(ctx)]
        with G.allow_mutation_on_saved_tensors() as ctx:
            a3 = L.linspace(0.1, 0.6, 6).reshape(2, 3).requires_grad_().clone()
            out = (a3 ** 2).sum()
            counts = [len(list(ctx.tid_to_weakhandle.items())), _cloned(ctx)]
            out.backward()
            a3.sin_()
            counts.append(_cloned(ctx))
            out = (a3 ** 2).sum()
            a3.sin_()
            counts.append(_cloned(ctx))
            del out
            counts.append(_cloned(ctx))
            b = a3 ** 2
            c = a3 ** 2
            a3.sin_()
            counts.append(_cloned(ctx))
            del b, c
            counts.append(_cloned(ctx))
        return res + [counts]

    compare(scenario)


def test_allow_mutation_context_errors(compare):
    """TestAllowMutationOnSaved.test_backward_out_of_context / test_disallow_nesting."""

    def scenario(L):
        G = L.autograd.graph
        with G.allow_mutation_on_saved_tensors():
            a = L.ones(2, 3, requires_grad=True)
            out = (a ** 2).sum()
        res = [raised(lambda: out.backward())]
        with G.allow_mutation_on_saved_tensors():
            a = L.ones(2, 3, requires_grad=True)
            out = (a ** 2).sum()
        with G.allow_mutation_on_saved_tensors():
            res.append(raised(lambda: out.backward()))

        def nested():
            with G.allow_mutation_on_saved_tensors():
                with G.allow_mutation_on_saved_tensors():
                    pass

        res.append(raised(nested))
        return res

    compare(scenario)
