"""Module hooks as torch's nn hook tests (test_nn.py / test/nn/test_module_hooks.py) check them,
each scenario run on torch and on the library under test: forward, forward-pre, backward,
full backward and backward-pre hooks, what they receive and return, and torch's errors and
warnings.
"""

from __future__ import annotations

import pytest
from torchcompare import raised


@pytest.mark.parametrize("register", ["register_backward_hook", "register_full_backward_hook",
                                      "register_full_backward_pre_hook"])
def test_hooks(compare, register):
    """test_hooks: forward and backward hooks count calls, see the module and the gradients,
    and are removed by their handles."""

    def scenario(L):
        module = L.nn.Sigmoid()
        input = L.ones(5, 5, requires_grad=True)
        counter = {"forwards": 0, "backwards": 0}
        seen = []

        def fw_hook(inc, h_module, input, output):
            seen.append((isinstance(output, L.Tensor), h_module is module))
            counter["forwards"] += inc

        def bw_hook(inc, h_module, grad_input, grad_output):
            seen.append((type(grad_input).__name__, h_module is module, grad_output[0].clone()))
            counter["backwards"] += inc

        def bw_pre_hook(inc, h_module, grad_output):
            seen.append((h_module is module, grad_output[0].clone()))
            counter["backwards"] += inc

        hook = bw_pre_hook if register == "register_full_backward_pre_hook" else bw_hook
        log = []
        test_fwd = module.register_forward_hook(lambda *a: fw_hook(1, *a))
        module(input)
        module(input)
        log.append(dict(counter))
        test_bwd = getattr(module, register)(lambda *a: hook(1, *a))
        output = module(input)
        output.backward(L.ones(5, 5) * 2, retain_graph=True)
        output.backward(L.ones(5, 5) * 2, retain_graph=True)
        log.append(dict(counter))
        test2_fwd = module.register_forward_hook(lambda *a: fw_hook(2, *a))
        module(input)
        test2_bwd = getattr(module, register)(lambda *a: hook(2, *a))
        module(input).backward(L.ones(5, 5) * 2)
        log.append(dict(counter))
        test2_bwd.remove()
        module(input).backward(L.ones(5, 5) * 2)
        test2_fwd.remove()
        module(input).backward(L.ones(5, 5) * 2)
        log.append(dict(counter))
        test_fwd.remove()
        test_bwd.remove()
        return log, seen

    compare(scenario)


def test_hook_cpp_and_interaction(compare):
    """test_hook_cpp / test_backward_hooks_interaction: a full backward hook on batch norm;
    what a backward pre-hook returns is what the full backward hook sees."""

    def scenario(L):
        bn = L.nn.BatchNorm1d(5)
        seen = []
        bn.register_full_backward_hook(
            lambda m, gi, go: seen.append((len(gi), len(go), m is bn)))
        bn(L.linspace(0, 1, 25).reshape(5, 5).requires_grad_()).sum().backward()
        module = L.nn.Sigmoid()
        module.register_full_backward_pre_hook(lambda m, go: (go[0] * 0.5,))
        module.register_full_backward_hook(lambda m, gi, go: seen.append(go[0].clone()) or go)
        t = L.ones(1, 2, requires_grad=True)
        module(t).sum().backward()
        return seen, t.grad

    compare(scenario)


def test_hook_invalid_outputs(compare):
    """test_hook_invalid_outputs: a backward (pre-)hook returning the wrong number of
    gradients."""

    def scenario(L):
        module = L.nn.Sigmoid()
        input = L.ones(5, 5, requires_grad=True)
        out = []
        for register, hook in (
                ("register_backward_hook", lambda m, gi, go: gi[:-1]),
                ("register_backward_hook", lambda m, gi, go: gi + (L.ones(2, 2),)),
                ("register_full_backward_pre_hook", lambda m, go: ()),
                ("register_full_backward_pre_hook", lambda m, go: go + (L.ones(2, 2),))):
            with getattr(module, register)(hook):
                out.append(raised(lambda: module(input).sum().backward()))
        return out

    compare(scenario)


def test_hook_requires_grad_and_no_requires_grad(compare):
    """test_hook_requires_grad / test_hook_no_requires_grad / test_hook_last_arg_requires_grad /
    test_hook_extra_input: requires_grad is kept through the hook machinery; a module whose
    inputs need no gradient still reports grad_output, and must not return gradients."""

    def scenario(L):
        seen = []

        class MyModule(L.nn.Module):
            def forward(self, arg1, arg2, arg3):
                seen.append((arg1.requires_grad, arg2.requires_grad, arg3.requires_grad))
                return arg1.sum() + arg2.sum() + arg3.sum()

        inp = L.ones(2, requires_grad=True)
        mod = MyModule()
        mod(inp, inp.detach(), inp)
        mod.register_full_backward_hook(lambda mod, gI, gO: None)
        mod(inp, inp.detach(), inp)

        lin = L.nn.Linear(2, 3)
        x = L.ones(1, 2)
        mode = ["None"]

        def hook(m, grad_input, grad_output):
            seen.append(([g is None for g in grad_input], [tuple(g.shape) for g in grad_output]))
            if mode[0] == "grad_input":
                return grad_input
            if mode[0] == "invalid":
                return x
            return None

        lin.register_full_backward_hook(hook)
        res = []
        for m in ("None", "grad_input", "invalid"):
            mode[0] = m
            res.append(raised(lambda: lin(x).sum().backward()))
        l1 = L.nn.L1Loss()
        l1.register_full_backward_hook(lambda m, gI, gO: None)
        y = L.ones(1, requires_grad=True)
        res.append(l1(y.detach(), y))

        class Extra(L.nn.Module):
            def forward(self, non_tensor, tensor):
                return tensor.clone(), non_tensor

        extra = Extra()
        extra.register_full_backward_hook(
            lambda m, gi, go: seen.append(([g is None for g in gi], [g is None for g in go])))
        o, _ = extra(True, inp)
        o.sum().backward()
        return seen, res

    compare(scenario)


def test_hook_inplace(compare):
    """test_hook_inplace: with a full backward (pre-)hook, the module may not change its input
    in place, nor the caller its output (torch's custom-Function view error)."""

    def scenario(L):
        class MyModule(L.nn.Module):
            def forward(self, inp, do_inplace):
                self.inp = inp
                if do_inplace:
                    inp += 1
                return inp.clone()

        calls = [0]
        inp = L.ones(10, requires_grad=True)
        mod = MyModule()
        out = []
        for register, hook in ((mod.register_full_backward_hook,
                                lambda m, gi, go: calls.__setitem__(0, calls[0] + 1)),
                               (mod.register_full_backward_pre_hook,
                                lambda m, go: calls.__setitem__(0, calls[0] + 1))):
            calls[0] = 0
            with register(hook):
                mod(inp, False).sum().backward()
                out.append(calls[0])
                out.append(raised(lambda: mod(inp.clone(), True)))
                o = mod(inp, False)

                def modify(o=o):
                    o += 1

                out.append(raised(modify))
        return out

    compare(scenario)


def test_hook_non_full_warning(compare):
    """test_hook_non_full_warning: register_backward_hook's warnings for modules it cannot
    describe correctly."""

    def scenario(L):
        def noop(*args):
            pass

        a = L.ones(2, requires_grad=True)
        b = L.ones(2, requires_grad=True)

        class ListIn(L.nn.Module):
            def forward(self, lst):
                return lst[0].clone(), lst[1].clone()

        class ListOut(L.nn.Module):
            def forward(self, a, b):
                return [a.clone(), b.clone()]

        class TwoNodes(L.nn.Module):
            def forward(self, a, b):
                return a.clone(), b.clone()

        class Chain(L.nn.Module):
            def forward(self, a):
                return a.clone().clone()

        for cls, args in ((ListIn, ([a, b],)), (ListOut, (a, b)), (TwoNodes, (a, b)),
                          (Chain, (a,))):
            m = cls()
            m.register_backward_hook(noop)
            m(*args)
        return None

    compare(scenario)


def test_hook_backward_size_and_writeable(compare):
    """test_hook_backward_size / test_hook_backward_writeable /
    test_hook_forward_preforward_writable."""

    def scenario(L):
        class MyModule(L.nn.Module):
            def forward(self, arg1, arg2):
                tmp = arg1.sum() * arg2
                tmp = tmp + arg2.sum() * arg1.sum()
                tmp = tmp.sum().view(1)
                return tmp.expand(8).contiguous()

        seen = []
        module = MyModule()
        inp1 = L.ones(5, 5, requires_grad=True)
        inp2 = L.ones(10, 10, requires_grad=True)
        with module.register_full_backward_hook(lambda m, gi, go: seen.append(
                ([tuple(g.shape) for g in gi], [tuple(g.shape) for g in go]))):
            module(inp1, inp2).sum().backward()
        sig = L.nn.Sigmoid()
        x = L.linspace(-1, 1, 25).reshape(5, 5).requires_grad_()
        sig.register_backward_hook(lambda m, gi, go: tuple(g * 2 for g in gi))
        sig(x).backward(L.ones(5, 5))
        res = [seen, x.grad]
        sig2 = L.nn.Sigmoid()
        y = L.linspace(-1, 1, 25).reshape(5, 5).requires_grad_()
        sig2.register_forward_pre_hook(lambda m, inp: L.nn.functional.relu(inp[0]))
        sig2.register_forward_hook(lambda m, inp, output: -output)
        o = sig2(y)
        o.backward(L.ones(5, 5) * 2, retain_graph=True)
        return res + [o, y.grad]

    compare(scenario)
