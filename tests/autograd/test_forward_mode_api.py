"""Forward-mode AD as torch's TestAutogradForwardMode tests it, each scenario run on torch and on
the library under test: levels, make_dual/unpack_dual, tangent lifetime, printing, and how
dual tensors meet the backward graph (api.tsv names the torch test each one ports).
"""

from __future__ import annotations

import gc
import warnings
import weakref

import torch
from torchcompare import raised

with warnings.catch_warnings():  # torch's first dual op imports modules that warn
    warnings.simplefilter("ignore")
    with torch.autograd.forward_ad.dual_level():
        torch.autograd.forward_ad.make_dual(torch.ones(1), torch.ones(1)) * 2


def test_forward_level_cleanup(compare):
    """test_forward_level_cleanup: the dual keeps its tangent alive, the level does not."""

    def scenario(L):
        fw = L.autograd.forward_ad
        foo = L.ones(2)
        out = []
        with fw.dual_level():
            tangent = L.ones(2, requires_grad=True)
            ref = weakref.ref(tangent)
            dual = fw.make_dual(foo, tangent)
            out.append(fw.unpack_dual(dual)[1] is tangent)
            del tangent
            out.append(ref() is not None)
            del dual
            gc.collect()
            out.append(ref() is None)
        return out

    compare(scenario)


def test_levels_and_make_dual_errors(compare):
    """test_size_check / test_nested_level / test_set_fw_grad_having_own_fw_grad_at_same_level
    / test_make_dual_forbid_integral_dtype / test_default_level."""

    def scenario(L):
        fw = L.autograd.forward_ad
        out = []
        foo = L.ones(2)
        with fw.dual_level() as level:
            out.append(level)
            out.append(raised(lambda: fw.make_dual(foo, L.ones(3))))
            out.append(fw.make_dual(foo, L.arange(3.0)[1:]))
            out.append(raised(lambda: fw.enter_dual_level()))
            dual = fw.make_dual(foo, L.ones(2))
            out.append(raised(lambda: fw.make_dual(L.ones(2), dual)))
            pf, pl = L.ones(2, 2), L.ones(2, 2, dtype=L.long)
            for p, t in ((pf, pl), (pl, pl), (pl, pf)):
                out.append(raised(lambda p=p, t=t: fw.make_dual(p, t)))
            baz = fw.make_dual(L.ones(2), L.full((2,), 3.0))
            primal, tangent = fw.unpack_dual(baz)
            kept = tangent
        out += [primal, kept, fw.unpack_dual(baz)]
        return out

    compare(scenario)


def test_print(compare):
    """test_print: only a dual tensor prints its tangent."""

    def scenario(L):
        fw = L.autograd.forward_ad
        with fw.dual_level():
            a = L.ones(3)
            b = fw.make_dual(a, L.full((3,), 2.0))
            p, t = fw.unpack_dual(b)
            return ["tangent=" in str(x) for x in (a, b, p, t)]

    compare(scenario)


def test_basic_packing_unpacking(compare):
    """test_basic_packing_unpacking: unpack_dual gives a new primal view each time, the same
    tangent object, and a named tuple."""

    def scenario(L):
        fw = L.autograd.forward_ad
        foo = L.ones(2)
        bar = L.full((2,), 2.0)
        with fw.dual_level():
            baz = fw.make_dual(foo, bar)
            baz_primal, baz_tangent = fw.unpack_dual(baz)
            return (baz_primal, baz_tangent is bar, baz_primal is not fw.unpack_dual(baz).primal,
                    fw.unpack_dual(baz).tangent is bar, fw.unpack_dual(foo))

    compare(scenario)


def test_advanced_packing_unpacking(compare):
    """test_advanced_packing_unpacking: duals share memory and version counters with their
    primal and tangent; backward flows through packing and unpacking; detach drops the
    tangent, no_grad keeps it."""

    def scenario(L):
        fw = L.autograd.forward_ad
        out = []
        foo = L.ones(2)
        bar = L.ones(2)
        with fw.dual_level():
            dual = fw.make_dual(foo, bar)
            out.append(dual.data_ptr() == foo.data_ptr())
            out.append(foo._version == dual._version)
            foo.add_(1)
            out.append(foo._version == dual._version)
            p, t = fw.unpack_dual(dual)
            out += [p.data_ptr() == foo.data_ptr(), t is bar]
            bar.add_(1)
            out.append(bar._version == t._version)
        with fw.dual_level():
            foo.requires_grad_()
            bar.requires_grad_()
            dual = fw.make_dual(foo, bar)
            p, t = fw.unpack_dual(dual)
            out.append(L.autograd.grad(p.sum(), (foo, bar), retain_graph=True,
                                       allow_unused=True))
            out.append(L.autograd.grad(t.sum(), (foo, bar), retain_graph=True,
                                       allow_unused=True))
            o = dual.detach() * 2
            out.append(fw.unpack_dual(o))
            with L.no_grad():
                o = dual * 3
            p, t = fw.unpack_dual(o)
            out += [p.requires_grad, t.requires_grad, p, t]
            d = dual.clone()
            d.detach_()
            out.append(fw.unpack_dual(d * 2).tangent)
        return out

    compare(scenario)


def test_grad_cleanup(compare):
    """test_grad_cleanup: tangents do not outlive their level."""

    def scenario(L):
        fw = L.autograd.forward_ad
        foo, bar, baz = L.ones(2), L.full((2,), 2.0), L.full((2,), 3.0)
        out = []
        with fw.dual_level():
            dual = fw.make_dual(foo, bar)
            out += [fw.unpack_dual(foo)[1], fw.unpack_dual(dual)[1] is bar]
        out.append(fw.unpack_dual(dual)[1])
        with fw.dual_level():
            out.append(fw.unpack_dual(foo)[1])
            new_dual = fw.make_dual(foo, baz)
            out += [fw.unpack_dual(dual), fw.unpack_dual(new_dual)]
        return out

    compare(scenario)


def test_non_differentiable_and_graph_destruction(compare):
    """test_non_differentiable / test_backward_graph_destruction: comparisons of duals, an
    in-place comparison, and a dual whose backward graph saved it."""

    def scenario(L):
        fw = L.autograd.forward_ad
        with fw.dual_level():
            foo = fw.make_dual(L.ones(2), L.ones(2))
            bar = L.full((2,), 2.0)
            eq = foo == bar
            foo.eq_(bar)
            out = [eq, foo, fw.unpack_dual(foo).tangent]
        with fw.dual_level():
            a = L.ones(10, requires_grad=True)
            da = fw.make_dual(L.ones(10), a)
            db = da.exp()
            out.append(fw.unpack_dual(db).tangent.grad_fn is not None)
        return out

    compare(scenario)


def test_out_of_place_basic(compare):
    """TestAutogradForwardModeBatchedGrad.test_out_of_place_basic: gradcheck with forward mode
    on sin and add."""

    def scenario(L):
        a = L.linspace(0.1, 0.9, 16, dtype=L.double).reshape(4, 4).requires_grad_()
        b = L.linspace(0.2, 0.8, 16, dtype=L.double).reshape(4, 4).requires_grad_()
        return (L.autograd.gradcheck(L.sin, a, check_forward_ad=True),
                L.autograd.gradcheck(L.add, (a, b), check_forward_ad=True))

    compare(scenario)


def test_out_variant(compare):
    """TestAutogradForwardMode.test_out_variant: an out= function refuses a dual tensor, as the
    output or as an input, with forward AD's error."""

    def scenario(L):
        fwAD = L.autograd.forward_ad
        with fwAD.dual_level():
            foo = L.linspace(0.1, 0.9, 4)
            dual = fwAD.make_dual(foo, L.ones(4))
            bar = L.linspace(-1.0, 1.0, 4)
            return (raised(lambda: L.add(bar, bar, out=dual)),
                    raised(lambda: L.add(dual, bar, out=bar)))

    compare(scenario)
