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
