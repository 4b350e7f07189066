"""Custom autograd Functions and views, against torch: a Function that returns a view or an
input as is, one that modifies an input in place (``ctx.mark_dirty``) that is a view, and what
may be done to their outputs in place afterwards. One test per test of torch's test_autograd.py,
named alike."""

from __future__ import annotations

import gc
import warnings
import weakref

from torchcompare import error_of


def test_autograd_simple_views_python(compare):
    """(torch's version also runs each Function as a "pure view" through a private ctx flag,
    ``ctx._is_pure_view``; that variant is left out. gradcheck runs on the double case only:
    tapegrad's gradcheck compares real Jacobians.)"""
    def scenario(L):
        results = []
        bw_called = [0]
        ga_nz = [False]

        class IdOneOutput(L.autograd.Function):
            @staticmethod
            def forward(ctx, a, make_view):
                return a.narrow(0, 0, 2) if make_view else a.clone()

            @staticmethod
            def backward(ctx, ga):
                bw_called[0] += 1
                return ga, None

        class IdTwoOutput(L.autograd.Function):
            @staticmethod
            def forward(ctx, a, b, make_view):
                a = a.narrow(0, 0, 2) if make_view else a.clone()
                return a, a + b

            @staticmethod
            def backward(ctx, ga, gab):
                bw_called[0] += 1
                ga_nz[0] = not bool(ga.eq(0).all())
                return ga + gab, gab, None

        class ViewOfTemp(L.autograd.Function):
            @staticmethod
            def forward(ctx, a, make_view):
                ctx.save_for_backward(a)
                a = a.narrow(0, 0, 2) if make_view else a.clone()
                b = a.clone()
                return b.select(0, 0)

            @staticmethod
            def backward(ctx, grad):
                bw_called[0] += 1
                (a,) = ctx.saved_tensors
                res = L.zeros_like(a)
                res.select(0, 0).copy_(grad)
                return res, None

        for dtype in (L.double, L.cdouble):
            for fn_id in ("one_output", "two_output", "view_of_temp"):
                for inplace in (True, False):
                    for make_view in (True, False):
                        def fn(a, b, fn_id=fn_id, inplace=inplace, make_view=make_view):
                            a = a.clone()
                            b = b.clone()
                            if fn_id == "two_output":
                                tmp1, tmp2 = IdTwoOutput.apply(a, b, make_view)
                                if inplace:
                                    tmp1 += 3
                                    tmp2 += 3
                                else:
                                    tmp1 = tmp1 + 3
                                    tmp2 = tmp2 + 3
                                tmp = tmp1 * tmp2
                            else:
                                if fn_id == "one_output":
                                    tmp = IdOneOutput.apply(a, make_view)
                                else:
                                    tmp = ViewOfTemp.apply(a + b, make_view)
                                if inplace:
                                    tmp += 3
                                else:
                                    tmp = tmp + 3
                            return tmp.sum()

                        a = L.ones(2, dtype=dtype, requires_grad=True)
                        b = L.ones(2, dtype=dtype, requires_grad=True)
                        check = None if dtype is L.cdouble else error_of(
                            lambda fn=fn, a=a, b=b: L.autograd.gradcheck(
                                fn, (a, b), check_batched_grad=False))
                        bw_called[0] = 0
                        ga_nz[0] = True
                        r = error_of(lambda fn=fn, a=a, b=b: fn(a, b).abs().backward())
                        results.append((check, r, bw_called[0], ga_nz[0]))
        return results

    compare(scenario)


def test_autograd_multiple_views_python(compare):
    def scenario(L):
        bw_called = [0]

        class ComplexView(L.autograd.Function):
            @staticmethod
            def forward(ctx, a, idx):
                res = a.narrow(0, idx, 1)
                res = a.select(0, idx)
                ctx.save_for_backward(a)
                ctx.idx = idx
                return res

            @staticmethod
            def backward(ctx, grad):
                bw_called[0] += 1
                (a,) = ctx.saved_tensors
                res = L.zeros_like(a)
                res.select(0, ctx.idx).copy_(grad)
                return res, None

        a = L.ones(2, requires_grad=True)
        out = ComplexView.apply(a.clone(), 1)
        out.sum().backward()
        first = (bw_called[0], a.grad, out.grad_fn, out._is_view())
        out = ComplexView.apply(a.clone(), 1)

        def iadd():
            nonlocal out
            out += 1

        return first, error_of(iadd)

    compare(scenario)


def test_autograd_python_custom_function_inplace(compare):
    def scenario(L):
        results = []
        bw_called = [0]

        class MyAdder(L.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                a.add_(b)
                ctx.mark_dirty(a)
                return a

            @staticmethod
            def backward(ctx, grad):
                bw_called[0] += 1
                return grad, grad

        a = L.ones(2, requires_grad=True)
        b = L.ones(2, requires_grad=True)
        for make in (lambda: a.clone(), lambda: a.clone().view_as(a)):
            bw_called[0] = 0
            c = MyAdder.apply(make(), b)
            c.sum().backward()
            results.append((bw_called[0], c.grad_fn, a.grad, b.grad))
        bw_called[0] = 0
        c = MyAdder.apply(a.clone(), b)
        c += 2
        c.sum().backward()
        results.append((bw_called[0], c.grad_fn))

        class MyBadAdder(L.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                a.add_(b)
                ctx.mark_dirty(a)
                return a, a + b

            @staticmethod
            def backward(ctx, ga, gab):
                bw_called[0] += 1
                return ga + gab, ga + gab

        bw_called[0] = 0
        c, d = MyBadAdder.apply(a.clone(), b)
        (c * d).sum().backward()
        results.append(bw_called[0])
        bw_called[0] = 0
        c, d = MyBadAdder.apply(a.clone(), b)
        c += 2
        (c * d).sum().backward()
        results.append((bw_called[0], a.grad, b.grad))
        results.append(error_of(lambda: MyBadAdder.apply(a.clone().view_as(a), b)))
        return results

    compare(scenario)


def test_custom_function_inplace_on_non_default_view(compare):
    def scenario(L):
        class Func(L.autograd.Function):
            @staticmethod
            def forward(ctx, inp):
                inp.add_(1)
                ctx.mark_dirty(inp)
                return inp

            @staticmethod
            def backward(ctx, gO):
                pass

        a = L.tensor([1.0, 2.0], requires_grad=True)
        b, c = a.split_with_sizes([1, 1], dim=0)
        return error_of(lambda: Func.apply(b)), b

    compare(scenario)


def test_custom_function_inplace_on_view_of_leaf(compare):
    def scenario(L):
        class Func(L.autograd.Function):
            @staticmethod
            def forward(ctx, inp):
                inp.add_(1)
                ctx.mark_dirty(inp)
                return inp

            @staticmethod
            def backward(ctx, gO):
                pass

        a = L.tensor([1.0, 2.0], requires_grad=True)
        b = a.view_as(a)
        return error_of(lambda: Func.apply(b))

    compare(scenario)


def test_custom_function_saving_mutated_view_no_leak(compare):
    def scenario(L):
        class Test(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.mark_dirty(x)
                ctx.save_for_backward(x)
                return x

            @staticmethod
            def backward(ctx, grad):
                pass

        def scope():
            x = L.tensor(1.0, requires_grad=True).clone()
            x = x.view_as(x)
            Test.apply(x)
            return weakref.ref(x)

        ref = scope()
        gc.collect()
        return ref() is None

    compare(scenario)


def test_custom_function_return_view_in_nograd(compare):
    def scenario(L):
        class Alias(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x[:]

            @staticmethod
            def backward(ctx, gx):
                return gx

        inp = L.rand(2, requires_grad=True)
        with L.no_grad():
            output = Alias.apply(inp)
        with L.no_grad():
            expected_output = inp[:]
        return (output.requires_grad, expected_output.requires_grad, output.grad_fn,
                output._is_view(), error_of(lambda: output.zero_()))

    compare(scenario)


def test_return_duplicate_inplace(compare):
    def scenario(L):
        class DoubleInplace(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.mul_(2)
                ctx.mark_dirty(x)
                return x, x

            @staticmethod
            def backward(ctx, grad1, grad2):
                return grad1 * 2 + grad2 * 2

        seen = []

        def inplace_fn(x):
            a, b = DoubleInplace.apply(x.clone())
            seen.append(a is b)
            return a + b

        x = L.randn(3, 3, dtype=L.double, requires_grad=True)
        return (L.autograd.gradcheck(inplace_fn, [x]), L.autograd.gradgradcheck(inplace_fn, [x]),
                all(seen), error_of(lambda: L.autograd.function.InplaceFunction.apply(x)),
                error_of(lambda: L.autograd.function.InplaceFunction.apply(x.clone()[0])))

    compare(scenario)


def test_return_leaf_inplace(compare):
    def scenario(L):
        class Inplace(L.autograd.function.InplaceFunction):
            @staticmethod
            def forward(ctx, a, b):
                ctx.mark_dirty(a)
                return a.add_(b), b + 2

            @staticmethod
            def backward(ctx, grad_a, grad_b):
                return grad_a, grad_a + grad_b

        x = L.randn(5, 5)
        y = L.randn(5, 5, requires_grad=True)
        q, p = Inplace.apply(x, y)
        out = [q is x, q.grad_fn.__class__ is Inplace._backward_cls, q.requires_grad, q.grad_fn,
               p.grad_fn]
        q.sum().backward()
        out.append(y.grad)
        return out

    compare(scenario)


def test_saved_tensors_hook_version_counter_not_shared(compare):
    def scenario(L):
        seen = []

        class Test(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x.sin()

            @staticmethod
            def backward(ctx, grad_output):
                (x,) = ctx.saved_tensors
                before = a._version
                x.add_(1)
                seen.append(a._version == before)
                return grad_output

        a = L.tensor(1.0, requires_grad=True)
        a_replacement = a.clone()
        with L.autograd.graph.saved_tensors_hooks(lambda x: a_replacement, lambda x: x):
            b = Test.apply(a)
        b.backward()
        return seen, a.grad

    compare(scenario)


def test_pack_hook_with_inplace_modification_should_fail(compare):
    def scenario(L):
        a = L.randn(5, requires_grad=True)

        def inc(x):
            x += 1
            return x

        def run():
            with L.autograd.graph.saved_tensors_hooks(inc, lambda x: x):
                return L.exp(a)

        return error_of(run), L.exp(a).grad_fn

    compare(scenario)


def test_custom_function_mark_output_view_of_intermediate(compare):
    def scenario(L):
        class Func(L.autograd.Function):
            @staticmethod
            def forward(ctx, inp):
                out = inp.clone().view_as(inp)
                ctx.mark_dirty(out)
                return out

            @staticmethod
            def backward(ctx, gO):
                pass

        a = L.tensor([1.0], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return error_of(lambda: Func.apply(a.clone()))

    compare(scenario)
