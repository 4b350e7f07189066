"""Inference mode and inference tensors, against torch: which tensors are inference tensors,
what may be done to them outside inference mode, views of normal tensors made inside, and the
errors. One test per test of torch's TestAutogradInferenceMode, named alike, then the rest of
the rules (item assignment, nn.Parameter, saving for backward, in-place through views)."""

from __future__ import annotations

from torchcompare import error_of


def is_inference(L, t):
    """torch's test helper: an inference tensor has no version counter."""
    try:
        t._version  # noqa: B018 - reading it is the check
    except RuntimeError as exc:
        return str(exc)
    return False


def test_inference_mode_context_manager(compare):
    def scenario(L):
        out = [L.is_inference_mode_enabled()]
        with L.inference_mode():
            out.append(L.is_inference_mode_enabled())
            with L.inference_mode(False):
                out.append(L.is_inference_mode_enabled())
            out.append(L.is_inference_mode_enabled())
        out.append(L.is_inference_mode_enabled())
        return out

    compare(scenario)


def test_inference_mode_decorator(compare):
    def scenario(L):
        out = []
        for mode, use_kwarg in ((True, True), (True, False), (False, True), (False, False),
                                (None, True), (None, False)):
            def func(x):
                out.append(L.is_inference_mode_enabled())
                return x * x

            if mode is None:
                decorated = L.inference_mode(mode=func) if use_kwarg else L.inference_mode(func)
            else:
                decorated = (L.inference_mode(mode=mode)(func) if use_kwarg
                             else L.inference_mode(mode)(func))
            for requires_grad in (True, False):
                c = L.ones(1, 2, 3, requires_grad=requires_grad)
                d = decorated(c)
                out.append((L.is_inference(d), d.requires_grad, decorated.__name__))
        return out

    compare(scenario)


def test_inference_mode_tensor_creation(compare):
    def scenario(L):
        with L.inference_mode():
            c = L.ones(1, 2, 3)
            tmp = L.ones(1, 2, 3, requires_grad=True)
            tmp2 = L.ones(1, 2, 3).requires_grad_(False)
            return ((c.requires_grad, L.is_inference(c)), (tmp.requires_grad, L.is_inference(tmp)),
                    (tmp2.requires_grad, L.is_inference(tmp2)), is_inference(L, c))

    compare(scenario)


def test_inference_mode_existing_autograd_session(compare):
    def scenario(L):
        s = L.ones(1, 2, 3, requires_grad=True)
        a = s.clone()
        out = a * a
        with L.inference_mode():
            a.add_(2)
        return L.is_inference(a), a._version, error_of(lambda: out.backward(L.ones_like(out)))

    compare(scenario)


def test_inference_mode_inf_tensor_in_inf_mode_functional_op(compare):
    def scenario(L):
        out = []
        with L.inference_mode():
            for requires_grad in (True, False):
                c = L.ones(1, 2, 3, requires_grad=requires_grad)
                func_out = c * c
                out.append((L.is_inference(func_out), func_out.requires_grad, func_out.grad_fn))
        return out

    compare(scenario)


def test_inference_mode_inf_tensor_in_inf_mode_inplace_op(compare):
    def scenario(L):
        out = []

        @L.inference_mode()
        def run_test(fn):
            for requires_grad in (True, False):
                c = L.ones(1, 2, 3, requires_grad=requires_grad)
                fn(c)
                out.append((L.is_inference(c), c.requires_grad, tuple(c.shape)))

        run_test(lambda x: x.add_(2))
        run_test(lambda x: x.transpose_(0, 1))
        run_test(lambda x: x.resize_(1, 2))
        run_test(lambda x: x.resize_as_(L.ones(1, 2)))
        run_test(lambda x: x.copy_(L.ones(1, 2, 3)))
        return out

    compare(scenario)


def test_inference_mode_inf_tensor_in_inf_mode_view_op(compare):
    def scenario(L):
        out = []
        with L.inference_mode():
            for requires_grad in (True, False):
                c = L.ones(1, 2, 3, requires_grad=requires_grad)
                view_out = c.view(-1)
                out.append((L.is_inference(view_out), view_out.requires_grad,
                            view_out._is_view()))
        return out

    compare(scenario)


def test_inference_mode_inf_tensor_in_normal_mode_functional_op(compare):
    def scenario(L):
        out = []
        for requires_grad in (True, False):
            with L.inference_mode():
                c = L.ones(1, 2, 3, requires_grad=requires_grad)
            func_out = c * c
            out.append((L.is_inference(func_out), func_out.requires_grad, func_out.is_leaf))
        return out

    compare(scenario)


def test_inference_mode_inf_tensor_in_normal_mode_inplace_op(compare):
    def scenario(L):
        out = []
        for fn in (lambda x: x.add_(2), lambda x: x.transpose_(0, 1)):
            for requires_grad in (False, True):
                with L.inference_mode():
                    c = L.ones(1, 2, 3, requires_grad=requires_grad)
                out.append((error_of(lambda c=c, fn=fn: fn(c)), c))  # (torch writes, then raises)
        return out

    compare(scenario)


def test_inference_mode_inf_tensor_in_normal_mode_view_op(compare):
    def scenario(L):
        out = []
        for requires_grad in (True, False):
            with L.inference_mode():
                c = L.ones(1, 2, 3, requires_grad=requires_grad)
            v = c.view(-1)
            out.append((L.is_inference(v), v.requires_grad, v._is_view(), v.is_leaf))
        return out

    compare(scenario)


def test_normal_tensor_inplace_output_in_inference_mode(compare):
    def scenario(L):
        out = []
        for fn in (lambda x: x.add_(2), lambda x: x.transpose_(0, 1)):
            for requires_grad in (True, False):
                s = L.ones(1, 2, 3, requires_grad=requires_grad)
                a = s.clone()
                with L.inference_mode():
                    fn(a)
                    out.append((L.is_inference(a), a.requires_grad))
                    fn(a)
                    out.append((L.is_inference(a), a.requires_grad))
                    view_out = a.view(-1)
                    out.append((L.is_inference(view_out), view_out.requires_grad,
                                view_out._is_view()))
        return out

    compare(scenario)


def test_normal_tensor_inplace_output_in_normal_mode(compare):
    def scenario(L):
        out = []
        for fn in (lambda x: x.add_(2), lambda x: x.transpose_(0, 1)):
            for requires_grad in (True, False):
                s = L.ones(1, 2, 3, requires_grad=requires_grad)
                a = s.clone()
                with L.inference_mode():
                    fn(a)
                    out.append((L.is_inference(a), a.requires_grad))
                fn(a)
                out.append((L.is_inference(a), a.requires_grad, a.grad_fn))
                fn(a)
                view_out = a.view(-1)
                out.append((L.is_inference(view_out), view_out.requires_grad,
                            view_out.grad_fn))
        return out

    compare(scenario)


def test_normal_tensor_view_output_in_inference_mode(compare):
    def scenario(L):
        out = []
        for requires_grad in (True, False):
            s = L.ones(1, 2, 3, requires_grad=requires_grad)
            a = s.clone()
            with L.inference_mode():
                o = a.view(-1)
                out.append((L.is_inference(o), o.requires_grad, o._is_view()))
                tmp = o.view(-1)
                out.append((L.is_inference(tmp), tmp.requires_grad, tmp._is_view(), tmp.is_leaf))
                tmp.add_(2)
                out.append((L.is_inference(tmp), tmp.requires_grad,
                            a._version == tmp._version, L.is_inference_mode_enabled()))
            out.append(error_of(lambda tmp=tmp: tmp.is_leaf))
        return out

    compare(scenario)


def test_normal_tensor_view_output_in_normal_mode(compare):
    def scenario(L):
        out = []
        for requires_grad in (True, False):
            s = L.ones(1, 2, 3, requires_grad=requires_grad)
            a = s.clone()
            with L.inference_mode():
                o = a.view(-1)
                out.append((L.is_inference(o), o.requires_grad, o._is_view(), o.is_leaf))
            tmp = o * o
            out.append((L.is_inference(tmp), tmp.requires_grad, tmp.grad_fn))
            out.append(error_of(lambda o=o: o.add_(2)))
            tmp = o.view(2, 3)
            out.append((L.is_inference(tmp), tmp.requires_grad))
        return out

    compare(scenario)


def test_mix_inference_and_normal_tensor_functional_op(compare):
    def scenario(L):
        out = []
        for requires_grad in (True, False):
            s = L.ones(1, 2, 3, requires_grad=requires_grad)
            with L.inference_mode():
                c = L.ones(1, 2, 3, requires_grad=requires_grad)
            o = c.add(s)
            out.append((L.is_inference(o), o.requires_grad, o.grad_fn))
            if requires_grad:
                o.backward(L.ones_like(o))
                out.append((c.grad, L.is_inference(c.grad), s.grad))
                out.append(error_of(lambda c=c, s=s: c * s))
        return out

    compare(scenario)


def test_mix_inference_and_normal_tensor_inplace_op(compare):
    def scenario(L):
        out = []
        for requires_grad in (True, False):
            s = L.ones(1, 2, 3, requires_grad=requires_grad)
            a = s.clone()
            with L.inference_mode():
                c = L.ones(1, 2, 3)
            out.append(L.is_inference(c))
            out.append(error_of(lambda a=a, c=c: a.mul_(c)))
            out.append((a, a.grad_fn, L.is_inference(a)))
        return out

    compare(scenario)


def test_mix_inference_and_normal_tensor_view_op(compare):
    def scenario(L):
        out = []
        for requires_grad in (True, False):
            s = L.ones(1, 2, 3, requires_grad=requires_grad)
            with L.inference_mode():
                c = L.ones(1, 2, 3)
            tmp1 = c.view_as(s)
            tmp2 = s.view_as(c)
            out.append((L.is_inference(tmp1), tmp1.requires_grad, L.is_inference(tmp2),
                        tmp2.requires_grad, tmp2._is_view()))
        return out

    compare(scenario)


def test_inference_mode_handle_direct_view_on_rebase(compare):
    def scenario(L):
        out = []
        for fn in (lambda x: x.add_(2), lambda x: x.transpose_(0, 1)):
            for requires_grad in (True, False):
                s = L.ones(1, 2, 3, requires_grad=requires_grad)
                a = s.clone()
                with L.inference_mode():
                    view_out = a.view_as(a)
                out.append(error_of(lambda v=view_out, fn=fn: fn(v)))
        return out

    compare(scenario)


def test_inference_mode_handle_indirect_view_on_rebase(compare):
    def scenario(L):
        out = []
        for fn in (lambda x: x.add_(2), lambda x: x.transpose_(0, 1)):
            for requires_grad in (True, False):
                s = L.ones(1, 2, 3, requires_grad=requires_grad)
                a = s.clone()
                with L.inference_mode():
                    view_out = a.view(-1)
                fn(a)
                out.append(error_of(lambda v=view_out: v.grad_fn))
        return out

    compare(scenario)


# -- the rest of the rules -----------------------------------------------------------------

def test_item_assignment_outside_inference_mode(compare):
    def scenario(L):
        with L.inference_mode():
            c = L.ones(3)
        out = [error_of(lambda: c.__setitem__(0, 5.0)), c]
        out.append(error_of(lambda: c.__setitem__(L.tensor([1, 2]), 7.0)))
        out.append(error_of(lambda: c.zero_()))
        out.append(error_of(lambda: c.fill_(2.0)))
        out.append(c)
        with L.inference_mode():
            c[0] = 9.0
            c.mul_(2)
        out.append(c)
        return out

    compare(scenario)


def test_parameter_of_inference_tensor(compare):
    def scenario(L):
        with L.inference_mode():
            c = L.ones(2)
            p = L.nn.Parameter(L.ones(2))
        return (error_of(lambda: L.nn.Parameter(c)), error_of(lambda: c.requires_grad_()),
                L.nn.Parameter(c, requires_grad=False).is_inference(), p.is_inference(),
                p.requires_grad, c.requires_grad_(False).requires_grad)

    compare(scenario)


def test_inference_tensor_saved_for_backward(compare):
    def scenario(L):
        with L.inference_mode():
            c = L.ones(2)
        x = L.ones(2, requires_grad=True)

        class Save(L.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                ctx.save_for_backward(b)
                return a * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2, None

        return (error_of(lambda: x * c), error_of(lambda: c * x), (x + c).grad_fn,
                error_of(lambda: L.exp(x).mul(c)), error_of(lambda: Save.apply(x, c)))

    compare(scenario)


def test_inference_tensor_properties(compare):
    def scenario(L):
        with L.inference_mode():
            c = L.ones(2)
            d = c.detach()
            e = c.data
        return (L.is_inference(c.detach()), L.is_inference(c.clone()), L.is_inference(c.data),
                L.is_inference(d), L.is_inference(e), is_inference(L, c),
                L.is_inference(L.ones(2)), error_of(lambda: c._version), c.is_leaf,
                c.view(-1)._is_view(), c[0]._is_view())

    compare(scenario)


def test_inference_view_of_normal_tensor(compare):
    """A view of a normal tensor made in inference mode is a view, not an inference tensor; in
    place through it outside, or on its base, raises torch's errors when recorded."""
    def scenario(L):
        x = L.ones(3, requires_grad=True)
        with L.inference_mode():
            y = x.view(3)
            z = x[:2]
        out = [(y.requires_grad, y.is_inference(), y._is_view(), y.grad_fn, y.is_leaf)]
        w = y * 2
        out.append((w.grad_fn, w.requires_grad))
        base = L.ones(3, requires_grad=True).clone()
        with L.inference_mode():
            v = base[1:]
        out.append(error_of(lambda: v.mul_(2)))
        base.add_(1)
        out.append(error_of(lambda: v.grad_fn))
        out.append(error_of(lambda: v * 2))
        out.append(z._version == x._version)
        return out

    compare(scenario)
