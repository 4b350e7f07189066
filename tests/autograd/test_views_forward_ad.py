"""Forward-mode AD through views and in-place ops, against torch: a dual tensor's primal and
tangent are views of what ``make_dual`` was given; in-place ops update the tangents of the
differentiable views they reach and stop at the others. One test per test of torch's
TestAutogradForwardMode (test_autograd.py) about views, named alike."""

from __future__ import annotations

import gc
import warnings
import weakref


def quiet():
    """torch's forward AD warns about its own internals (torch.jit.script) on first use."""
    warnings.simplefilter("ignore", DeprecationWarning)


def test_make_dual_inference_tensor_in_inference_mode(compare):
    def scenario(L):
        quiet()
        fwAD = L.autograd.forward_ad
        with L.inference_mode():
            foo = L.rand(2)
            bar = L.rand(2)
            foo_copy = foo.clone()
            with fwAD.dual_level():
                dual = fwAD.make_dual(foo, bar)
                out = [dual._is_view(), dual.is_inference()]
                dual += 1
                out.append(L.allclose(foo, foo_copy))
                out.append(L.allclose(foo, foo_copy + 1))
        return out

    compare(scenario)


def test_view_inplace_non_differentiable_views(compare):
    def scenario(L):
        quiet()
        fwAD = L.autograd.forward_ad
        L.manual_seed(0)
        original_foo = L.rand(2, dtype=L.double)
        original_bar = L.ones(2, dtype=L.double)
        foo = original_foo.clone()
        bar = original_bar.clone()
        out = []
        with fwAD.dual_level():
            dual = fwAD.make_dual(foo, bar)
            dual *= 2
            out.append((fwAD.unpack_dual(foo)[1], bar, fwAD.unpack_dual(dual)[1], foo,
                        fwAD.unpack_dual(dual)[0]))
            dual_primal, dual_tangent = fwAD.unpack_dual(dual)
            out.append((fwAD.unpack_dual(dual_primal)[1], fwAD.unpack_dual(dual_tangent)[1]))
            dual_primal *= 2
            out.append(fwAD.unpack_dual(dual))
            dual_tangent *= 2
            out.append(fwAD.unpack_dual(dual))
        return out

    compare(scenario)


def test_view_inplace_differentiable_views(compare):
    def scenario(L):
        quiet()
        fwAD = L.autograd.forward_ad
        L.manual_seed(0)
        original_foo = L.rand(2)
        original_bar = L.ones(2)
        foo = original_foo.clone()
        bar = original_bar.clone()
        out = []
        with fwAD.dual_level():
            dual = fwAD.make_dual(foo, bar)
            view = dual.narrow(0, 0, 1)
            view *= 2
            out.append((fwAD.unpack_dual(foo)[1], fwAD.unpack_dual(dual)[1],
                        fwAD.unpack_dual(view)[1]))
            baz = L.rand(2)
            baz += dual
            out.append(fwAD.unpack_dual(baz)[1])
            baz = L.rand(2)
            baz[0] = dual[0]
            out.append(fwAD.unpack_dual(baz)[1])
            baz = L.rand(2)
            view = baz.detach()
            view += dual
            out.append(fwAD.unpack_dual(baz)[1])
        return out

    compare(scenario)


def test_view_inplace_always_creates_a_view(compare):
    def scenario(L):
        quiet()
        fwAD = L.autograd.forward_ad
        L.manual_seed(0)
        out = []
        for op in (lambda x, y: x.add_(y), lambda x, y: x.mul_(y), lambda x, y: x.copy_(y)):
            base = L.randn(2, 2)
            view = base.transpose(0, 1)
            primal = L.randn(2, 2)
            tangent = L.randn(2, 2)
            with fwAD.dual_level():
                dual = fwAD.make_dual(primal, tangent)
                op(view, dual)
                p, t = fwAD.unpack_dual(base)
                p_clone, t_clone = p.clone(), t.clone()
                view *= 2
                p, t = fwAD.unpack_dual(base)
                out.append((L.allclose(p_clone * 2, p), L.allclose(t_clone * 2, t), t))
        return out

    compare(scenario)


def test_detach_view_tracking(compare):
    def scenario(L):
        foo = L.rand(2)
        ref = weakref.ref(foo)
        out = foo.detach()
        del foo
        gc.collect()
        return ref() is None, out._is_view(), out._base

    compare(scenario)


# -- custom Functions under forward mode: views and in-place (TestAutograd) --------------------


def test_custom_function_forward_mode_view_checks(compare):
    # a Function whose forward returns a view of its input must have a jvp that returns a view
    # of the input's tangent (of the same base when that tangent is a view itself)
    def scenario(L):
        quiet()
        fwAD = L.autograd.forward_ad

        class ViewFn(L.autograd.Function):
            @staticmethod
            def forward(ctx, foo, flag):
                ctx.flag = flag
                ctx.size = foo.size()
                return foo.narrow(0, 0, 2)

            @staticmethod
            def vjp(ctx, gO):
                gI = gO.new_zeros(ctx.size)
                gI.narrow(0, 0, 2).copy_(gO)
                return gI, None

            @staticmethod
            def jvp(ctx, gI, _):
                res = gI.narrow(0, 0, 2)
                if ctx.flag != "ok":
                    res = res.clone()  # not a view any more
                if ctx.flag in ("not_a_view_of_inp", "not_a_view_of_inp_base"):
                    res = res.view_as(res)  # a view, of the wrong tensor
                return res

        L.manual_seed(0)
        inp = L.rand(4, 4, dtype=L.double, requires_grad=True)
        tangent = L.rand(4, 4, dtype=L.double)
        out = []
        for flag in ("ok", "not_a_view", "not_a_view_of_inp", "not_a_view_of_inp_base"):
            with fwAD.dual_level():
                x = fwAD.make_dual(inp, tangent)
                if flag == "not_a_view_of_inp_base":
                    x = x.view_as(x)
                try:
                    y = ViewFn.apply(x, flag)
                except RuntimeError as exc:
                    out.append((flag, exc))
                    continue
                t = fwAD.unpack_dual(y).tangent
                out.append((flag, y, t, t._base is tangent))
                y.sum().backward()
                out.append(inp.grad)
        return out

    compare(scenario)


def test_custom_function_forward_mode_inplace_checks(compare):
    # a Function that marks an input dirty must update that input's tangent in place in jvp
    def scenario(L):
        quiet()
        fwAD = L.autograd.forward_ad

        class InplaceFn(L.autograd.Function):
            @staticmethod
            def forward(ctx, foo, flag):
                ctx.mark_dirty(foo)
                ctx.flag = flag
                foo.mul_(2)
                return foo

            @staticmethod
            def vjp(ctx, gO):
                return 2 * gO, None

            @staticmethod
            def jvp(ctx, gI, _):
                if ctx.flag:
                    return 2 * gI  # not in place
                gI.mul_(2)
                return gI

        L.manual_seed(0)
        inp = L.rand(4, 4, dtype=L.double, requires_grad=True)
        out = []
        for flag in (False, True):
            with fwAD.dual_level():
                x = fwAD.make_dual(inp, L.ones(4, 4, dtype=L.double)).clone()
                try:
                    y = InplaceFn.apply(x, flag)
                except RuntimeError as exc:
                    out.append(exc)
                    continue
                out += [y is x, y, fwAD.unpack_dual(y).tangent]
                y.sum().backward()
                out.append(inp.grad)
        return out

    compare(scenario)


def test_custom_function_mark_dirty_not_differentiable(compare):
    # an input marked dirty comes back as is (with or without requires_grad), and so does its
    # tangent, which jvp must have modified in place
    def scenario(L):
        quiet()
        fwAD = L.autograd.forward_ad

        def get_custom_fn(jvp_err):
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

        out = []
        for requires_grad in (True, False):
            for jvp_err in (True, False):
                InplaceMul = get_custom_fn(jvp_err)
                z = L.tensor(1.0, requires_grad=requires_grad)
                x = z.clone()
                y = InplaceMul.apply(x)
                out += [x is y, x]
                with fwAD.dual_level():
                    x_tangent = L.ones_like(x)
                    x_dual = fwAD.make_dual(x, x_tangent)
                    try:
                        out_dual = InplaceMul.apply(x_dual)
                    except RuntimeError as exc:
                        out.append(exc)
                        continue
                    _, out_tangent = fwAD.unpack_dual(out_dual)
                    out += [out_dual is x_dual, out_tangent is x_tangent, out_tangent]
        return out

    compare(scenario)
