"""Grad-mode blocks entered during a backward pass (in a hook, or by checkpointing's
recomputation) leave the rest of that pass as it was."""

from __future__ import annotations


def test_grad_mode_block_inside_a_backward_hook(compare):
    def scenario(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        w = L.tensor([3.0, -1.0], requires_grad=True)
        h = x * w
        y = h.exp()
        seen = []

        def hook(g):
            with L.enable_grad():
                pass
            with L.no_grad():
                pass
            return g

        y.register_hook(hook)
        h.register_hook(lambda g: seen.append((g.requires_grad, g.grad_fn is None)))
        y.sum().backward()
        return x.grad, w.grad, seen

    compare(scenario)


# -- torch's grad-mode tests (test_autograd.py), against the oracle ----------------------------

def test_no_grad(compare):
    def scenario(L):
        x = L.ones(5, 5, requires_grad=True)
        y = L.ones(5, 5) * 4
        with L.no_grad():
            w = x + y

        def adder(x, y):
            return x + y

        out = [w.requires_grad, w.grad_fn]
        for add in (L.no_grad()(adder), L.no_grad(adder)):
            z = add(x, y)
            out.append((z.requires_grad, z.grad_fn, L.is_grad_enabled()))
            try:
                z.backward(L.ones(5, 5))
            except RuntimeError as exc:
                out.append(exc)
        with L.no_grad():
            out.append(L.is_grad_enabled())
            w = add(x, y)
            out.append((L.is_grad_enabled(), w.requires_grad))
        out.append(L.is_grad_enabled())
        out.append(type(L.no_grad()).__name__)
        return out

    compare(scenario)


def test_enable_grad_decorator_no_paren(compare):
    def scenario(L):
        x = L.ones(1, requires_grad=True)

        @L.enable_grad
        def doubler(x):
            return x * 2

        @L.no_grad
        def halver(x):
            return x / 2

        with L.no_grad():
            z = doubler(x)
        return z, halver(x), doubler.__name__, halver.__name__

    compare(scenario)


def test_grad_mode_class_decoration(compare):
    def scenario(L):
        seen = []

        @L.no_grad()
        class Foo:
            def __init__(self) -> None:
                seen.append(("init", L.is_grad_enabled()))

            def foo(self):
                seen.append(("foo", L.is_grad_enabled()))

        Foo().foo()

        @L.no_grad()
        def foo():
            seen.append(("fn", L.is_grad_enabled()))

        foo()

        class Foo2:
            @L.no_grad()
            def __init__(self) -> None:
                seen.append(("init2", L.is_grad_enabled()))

            @L.no_grad()
            def foo(self):
                seen.append(("method", L.is_grad_enabled()))

        Foo2().foo()
        return seen

    compare(scenario)


def test_set_grad_enabled(compare):
    def scenario(L):
        x = L.tensor([1.0], requires_grad=True)
        out = []
        with L.set_grad_enabled(False):
            y = x * 2
        out.append(y.requires_grad)
        with L.set_grad_enabled(True):
            y = x * 2
        out.append(y.requires_grad)
        with L.set_grad_enabled(False):
            L.set_grad_enabled(True)
            y = x * 2
        out.append((y.requires_grad, L.is_grad_enabled()))
        out.append(repr(L.set_grad_enabled(False)))
        L.set_grad_enabled(True)
        for bad in (1, None, "a"):
            try:
                L.set_grad_enabled(bad)
            except TypeError as exc:
                out.append(exc)
        out.append(L.is_grad_enabled())
        return out

    compare(scenario)


def test_set_grad_enabled_wraps(compare):
    def scenario(L):
        out = []
        for decorator in (True, False):
            with L.enable_grad():
                out.append(L.is_grad_enabled())
                if decorator:
                    @L.set_grad_enabled(False)
                    def inner_func(x):
                        return x.sin()
                else:
                    def inner_func(x):
                        return x.sin()

                    obj = L.set_grad_enabled(False)
                    out.append(L.is_grad_enabled())
                    inner_func = obj(inner_func)
                out.append(L.is_grad_enabled())
                x = L.zeros(1, requires_grad=True)
                out.append(inner_func(x).requires_grad)
        return out

    compare(scenario)


def test_set_grad_generator_functions(compare):
    def scenario(L):
        seen = []

        @L.no_grad()
        def gen_no_grad():
            for i in range(3):
                seen.append(("in", L.is_grad_enabled()))
                yield i

        with L.enable_grad():
            for _ in gen_no_grad():
                seen.append(("out", L.is_grad_enabled()))

        @L.enable_grad()
        def gen_enable_grad():
            for i in range(3):
                seen.append(("in", L.is_grad_enabled()))
                yield i

        with L.no_grad():
            for _ in gen_enable_grad():
                seen.append(("out", L.is_grad_enabled()))
        return seen

    compare(scenario)


def test_set_grad_generator_functions_recursive(compare):
    def scenario(L):
        seen = []

        @L.enable_grad()
        def enable_grad_decorator_recursive(depth):
            seen.append(L.is_grad_enabled())
            if depth > 0:
                no_grad_decorator_recursive(depth - 1)
                seen.append(L.is_grad_enabled())

        @L.no_grad()
        def no_grad_decorator_recursive(depth):
            seen.append(L.is_grad_enabled())
            if depth > 0:
                enable_grad_decorator_recursive(depth - 1)
                seen.append(L.is_grad_enabled())

        def enable_grad_context_manager_recursive(depth):
            with L.enable_grad():
                seen.append(L.is_grad_enabled())
                if depth > 0:
                    no_grad_context_manager_recursive(depth - 1)
                    seen.append(L.is_grad_enabled())

        def no_grad_context_manager_recursive(depth):
            with L.no_grad():
                seen.append(L.is_grad_enabled())
                if depth > 0:
                    enable_grad_context_manager_recursive(depth - 1)
                    seen.append(L.is_grad_enabled())

        for mode in (L.enable_grad, L.no_grad):
            with mode():
                seen.append(L.is_grad_enabled())
                enable_grad_decorator_recursive(4)
                seen.append(L.is_grad_enabled())
                enable_grad_context_manager_recursive(4)
                seen.append(L.is_grad_enabled())
        return seen

    compare(scenario)


def test_set_grad_coroutines(compare):
    def scenario(L):
        seen = []

        @L.no_grad()
        def coro_no_grad(n=4):
            seen.append(("start", L.is_grad_enabled()))
            for i in range(n):
                r = yield i
                seen.append(("got", r, L.is_grad_enabled()))
            seen.append(("end", L.is_grad_enabled()))
            return "done"

        @L.enable_grad()
        def coro_enable_grad(n=4):
            for i in range(n):
                r = yield i
                seen.append(("got", r, L.is_grad_enabled()))

        for mode, coro_fn in ((L.enable_grad, coro_no_grad), (L.no_grad, coro_enable_grad)):
            with mode():
                coro, r = coro_fn(), None
                try:
                    while True:
                        seen.append(("caller", L.is_grad_enabled()))
                        r = coro.send(r)
                except StopIteration as stop:
                    seen.append(("stop", stop.value))
        return seen

    compare(scenario)


def test_set_grad_coroutines_benign_exceptions(compare):
    def scenario(L):
        class RecoverableException(Exception):
            pass

        seen = []

        def make(mode):
            @mode()
            def coro(n=4):
                has_raised = False
                for i in range(n):
                    try:
                        seen.append(("in", L.is_grad_enabled()))
                        yield (-i if has_raised else i)
                    except RecoverableException:
                        seen.append(("caught", L.is_grad_enabled()))
                        has_raised = True

            return coro

        for outer, inner in ((L.enable_grad, L.no_grad), (L.no_grad, L.enable_grad)):
            with outer():
                coro = make(inner)()
                seen.append(next(coro))
                try:
                    while True:
                        seen.append(coro.throw(RecoverableException))
                        seen.append(("caller", L.is_grad_enabled()))
                except StopIteration:
                    seen.append("stop")
        return seen

    compare(scenario)


def test_set_grad_coroutines_critical_exceptions(compare):
    def scenario(L):
        class UnrecoverableException(Exception):
            pass

        class SecondaryException(Exception):
            pass

        seen = []

        def make(mode):
            @mode()
            def coro(n=4):
                for i in range(n):
                    try:
                        yield i
                    except UnrecoverableException:
                        seen.append(("caught", L.is_grad_enabled()))
                        raise SecondaryException from None

            return coro

        for outer, inner in ((L.enable_grad, L.no_grad), (L.no_grad, L.enable_grad)):
            with outer():
                coro = make(inner)()
                seen.append(next(coro))
                try:
                    coro.throw(UnrecoverableException)
                except SecondaryException:
                    seen.append(("secondary", L.is_grad_enabled()))
        return seen

    compare(scenario)


def test_set_grad_coroutines_exit(compare):
    def scenario(L):
        state = []

        def make(mode):
            @mode()
            def coro():
                for i in range(10):
                    try:
                        yield i
                    except GeneratorExit:
                        state.append(("GeneratorExit", L.is_grad_enabled()))
                        raise

            return coro

        for outer, inner in ((L.enable_grad, L.no_grad), (L.no_grad, L.enable_grad)):
            with outer():
                coro = make(inner)()
                for _ in range(5):
                    next(coro)
                coro.close()
                state.append(("after", L.is_grad_enabled()))
        return state

    compare(scenario)


def test_grad_mode_inside_backward(compare):
    """Grad mode during a backward pass is ``create_graph`` (what hooks see)."""
    def scenario(L):
        seen = []
        x = L.ones(2, requires_grad=True)
        y = x * 2
        y.register_hook(lambda g: seen.append(L.is_grad_enabled()))
        y.sum().backward(retain_graph=True)
        y.sum().backward(create_graph=True)
        x.grad = None
        return seen

    compare(scenario)


def test_grad_mode_thread_local(compare):
    def scenario(L):
        import threading

        seen = []

        def worker():
            seen.append(("thread", L.is_grad_enabled(), L.is_inference_mode_enabled()))
            with L.no_grad():
                seen.append(("thread no_grad", L.is_grad_enabled()))

        with L.no_grad(), L.inference_mode():
            t = threading.Thread(target=worker)
            t.start()
            t.join()
            seen.append(("main", L.is_grad_enabled(), L.is_inference_mode_enabled()))
        return seen

    compare(scenario)


def test_view_under_no_grad_requires_grad(compare):
    def scenario(L):
        x = L.ones(3, requires_grad=True)
        with L.no_grad():
            v = x[:2]
            w = x.view(3)
            s = x * 2
        return (v.requires_grad, v.is_leaf, v.grad_fn, repr(v), w.requires_grad,
                s.requires_grad, v._is_view(), v._base is x)

    compare(scenario)


def test_inference_mode_false_turns_grad_on(compare):
    def scenario(L):
        out = []
        with L.no_grad():
            with L.inference_mode(False):
                out.append((L.is_grad_enabled(), L.is_inference_mode_enabled()))
            out.append(L.is_grad_enabled())
        with L.inference_mode():
            with L.inference_mode(False):
                out.append((L.is_grad_enabled(), L.is_inference_mode_enabled()))
                x = L.ones(2, requires_grad=True)
                out.append((x * 2).grad_fn)
            out.append((L.is_grad_enabled(), L.is_inference_mode_enabled()))
            with L.enable_grad():
                a = L.ones(2, requires_grad=True)
                b = a * 2
                out.append((L.is_grad_enabled(), b.requires_grad, b.grad_fn, b.is_inference()))
        return out

    compare(scenario)


def test_set_multithreading_enabled_as_context_manager_and_function(compare):
    def scenario(L):
        out = []
        with L.autograd.set_multithreading_enabled(False):
            out.append(L.autograd.is_multithreading_enabled())
        out.append(L.autograd.is_multithreading_enabled())
        with L.autograd.set_multithreading_enabled(False):
            L.autograd.set_multithreading_enabled(True)
            out.append(L.autograd.is_multithreading_enabled())
        out.append(L.autograd.is_multithreading_enabled())
        L.autograd.set_multithreading_enabled(False)
        out.append(L.autograd.is_multithreading_enabled())
        L.autograd.set_multithreading_enabled(True)
        out.append(L.autograd.is_multithreading_enabled())
        return out

    compare(scenario)


def test_backward_no_grad(compare):
    # a root that requires grad with no gradient given: an error, not an implicit ones
    def scenario(L):
        a = L.randn(5, 5, requires_grad=True)
        b = a + 2
        try:
            L.autograd.backward([b], [None])
        except RuntimeError as exc:
            return exc, a.grad
        return None

    compare(scenario)


def test_multi_backward_no_grad(compare):
    # one of several roots neither requires grad nor has a grad_fn: an error
    def scenario(L):
        x = L.randn(5, 5, requires_grad=True)
        y = L.randn(5, 5, requires_grad=False)
        z = x + y
        q = y * 2
        try:
            L.autograd.backward([z, q], [L.ones(5, 5), L.ones(5, 5)])
        except RuntimeError as exc:
            return exc, x.grad
        return None

    compare(scenario)


# -- torch's TestAutogradFunctional *_no_grad: autograd.functional under no_grad ----------------


def test_functional_under_no_grad(compare):
    # under no_grad the results carry no graph; with create_graph=True they do, no_grad or not
    def scenario(L):
        F = L.autograd.functional

        def reducer(x):
            return x.sum(dim=1)

        def exp_reducer(x):
            return x.exp().sum(dim=1)

        def exp_sum(x):
            return x.exp().sum()

        def pow_sum(x):
            return x.pow(3).sum()

        def calls(inputs, v4, v44):
            return [
                ("vjp", lambda **kw: F.vjp(reducer, inputs, v4, **kw)),
                ("jvp", lambda **kw: F.jvp(reducer, inputs, v44, **kw)),
                ("vhp", lambda **kw: F.vhp(exp_sum, inputs, v44, **kw)),
                ("hvp", lambda **kw: F.hvp(exp_sum, inputs, v44, **kw)),
                ("jacobian", lambda **kw: F.jacobian(exp_reducer, inputs, **kw)),
                ("hessian", lambda **kw: F.hessian(pow_sum, inputs[:2, :2], **kw)),
            ]

        def graphs(res):
            if isinstance(res, tuple):
                return [graphs(r) for r in res]
            return res.grad_fn is not None

        out = []
        L.manual_seed(0)
        inputs, v4, v44 = L.rand(4, 4), L.ones(4), L.ones(4, 4)
        for name, call in calls(inputs, v4, v44):
            with L.no_grad():
                res = call()
            out.append((name, res, graphs(res)))
            with L.no_grad():
                res = call(create_graph=True)
            out.append((name, "create_graph", graphs(res)))
        # vjp and jvp with inputs and v that require grad
        inputs.requires_grad_()
        v4.requires_grad_()
        v44.requires_grad_()
        for name, call in calls(inputs, v4, v44)[:2]:
            with L.no_grad():
                res = call(create_graph=True)
            out.append((name, "requires_grad", graphs(res)))
        return out

    compare(scenario)
