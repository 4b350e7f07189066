"""The rest of torch's autograd tests that tapegrad answers, each scenario run on torch and on
the library under test: anomaly mode with custom Functions, gradcheck's user-visible checks,
activation checkpointing through the autograd API, the multithreading switch
(api.tsv names the torch test each one ports).
"""

from __future__ import annotations

import gc
import importlib
import warnings
import weakref

import pytest
from torchcompare import raised

# --------------------------------------------------------------------------------------------
# Anomaly mode
# --------------------------------------------------------------------------------------------


def test_anomaly_detect_nan(compare):
    """test_anomaly_detect_nan: a NaN from a custom backward is reported by position, with the
    forward's traceback (or its absence) in a warning first."""

    def scenario(L):
        size = 10

        class MyFunc(L.autograd.Function):
            @staticmethod
            def forward(ctx, inp1, inp2, fail_0th):
                ctx.fail_0th = fail_0th
                return inp1.sum(0, keepdim=True)

            @staticmethod
            def backward(ctx, gO):
                gI = gO.expand(size).clone()
                gI[0] = 0
                gI[0] /= 0
                return (gI, None, None) if ctx.fail_0th else (None, gI, None)

        out = []
        inp = L.ones(size, requires_grad=True)
        MyFunc.apply(inp, inp, True).backward()
        inp = L.ones(size, requires_grad=True)
        o = MyFunc.apply(inp, inp, True)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with L.autograd.detect_anomaly():
                out.append(raised(lambda: o.backward()))
        out.append(["No forward pass information" in str(x.message) for x in w])
        inp = L.ones(size, requires_grad=True)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with L.autograd.detect_anomaly():
                o = MyFunc.apply(inp, inp, False)
                out.append(raised(lambda: o.backward()))
        out.append(["MyFunc.apply" in str(x.message) for x in w])
        return out

    compare(scenario)


def test_nested_anomaly_detect_nan(compare):
    """test_nested_anomaly_detect_nan: a NaN in the backward of a Function called by another
    Function's backward names both forward calls."""

    def scenario(L):
        size = 10

        class MyFunc(L.autograd.Function):
            @staticmethod
            def forward(ctx, inp1, fail_0th):
                ctx.fail_0th = fail_0th
                ctx.save_for_backward(inp1)
                return inp1.sum(0, keepdim=True)

            @staticmethod
            def backward(ctx, gO):
                (inp,) = ctx.saved_tensors
                g = gO.clone().expand(size)
                return MyFunc2.apply(g * inp, g + inp, ctx.fail_0th), None

        class MyFunc2(L.autograd.Function):
            @staticmethod
            def forward(ctx, inp1, inp2, fail_0th):
                ctx.fail_0th = fail_0th
                return inp1 * 2.0 + inp2

            @staticmethod
            def backward(ctx, gO):
                g1 = gO.clone()
                g2 = gO.clone()
                g1[0] = 0
                g2[0] = 0
                if ctx.fail_0th:
                    g1[0] /= 0
                else:
                    g2[0] /= 0
                return g1, g2, None

        out = []
        inp = L.ones(size, requires_grad=True)
        (ginp,) = L.autograd.grad(MyFunc.apply(inp, True), (inp,), create_graph=True)
        ginp.sum().backward()
        inp = L.ones(size, requires_grad=True)
        (ginp,) = L.autograd.grad(MyFunc.apply(inp, True), (inp,), create_graph=True)
        gsum = ginp.sum()
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with L.autograd.detect_anomaly():
                out.append(raised(lambda: gsum.backward()))
        out.append(["No forward pass information" in str(x.message) for x in w])
        inp = L.ones(size, requires_grad=True)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with L.autograd.detect_anomaly():
                o = MyFunc.apply(inp, False)
                (ginp,) = L.autograd.grad(o, (inp,), create_graph=True)
                out.append(raised(lambda: ginp.sum().backward()))
        out.append([("MyFunc2.apply" in str(x.message), "MyFunc.apply" in str(x.message))
                    for x in w])
        return out

    compare(scenario)


def test_anomaly_grad_warnings(compare):
    """test_anomaly_grad_warnings: the "enabled" warning and the forward traceback of the
    node whose saved tensor was modified."""

    def scenario(L):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with L.autograd.detect_anomaly():
                a = L.ones(5, requires_grad=True)
                d1 = a + 1
                d2 = d1 ** 2
                d1 += 1
                err = raised(lambda: L.autograd.grad(d2.sum(), a))
        return err, len(w), ["Anomaly Detection has been enabled" in str(w[0].message),
                             "Error detected in PowBackward0" in str(w[1].message)]

    compare(scenario)


def test_anomaly_mode_no_check_nan(compare):
    """test_anomaly_mode_no_check_nan: check_nan=False lets NaN through, nested True catches
    it."""

    def scenario(L):
        class MyFunc(L.autograd.Function):
            @staticmethod
            def forward(ctx, inp):
                return inp.clone()

            @staticmethod
            def backward(ctx, gO):
                return L.tensor(float("nan")).expand(10, 10)

        with warnings.catch_warnings(record=True):
            warnings.simplefilter("always")
            with L.autograd.detect_anomaly(check_nan=False):
                inp = L.ones(10, 10, requires_grad=True)
                o = MyFunc.apply(inp).sum()
                o.backward(retain_graph=True)
                with L.autograd.detect_anomaly(check_nan=True):
                    err = raised(lambda: o.backward(retain_graph=True))
                o.backward()
        return err, inp.grad

    compare(scenario)


def test_anomaly_metadata_cleanup(compare):
    """test_anomaly_assign_parent_cleanup / test_nested_anomaly_printstack_cleanup: a node's
    metadata dict lives as long as its graph, anomaly mode or not."""

    def scenario(L):
        class Foo:
            pass

        def get_ref():
            x = L.ones(2, 2, requires_grad=True)
            t = x.exp()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                with L.autograd.detect_anomaly():
                    L.autograd.grad(t, x, L.ones_like(t), create_graph=True)
            obj = Foo()
            t.grad_fn.metadata[0] = obj
            return t, weakref.ref(obj)

        t, ref = get_ref()
        alive = ref() is not None
        del t
        gc.collect()
        return alive, ref() is None

    compare(scenario)


# --------------------------------------------------------------------------------------------
# gradcheck
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fast_mode", [True, False])
def test_gradcheck_single_input_and_errors(compare, fast_mode):
    """test_gradcheck_single_input / test_gradcheck_custom_error /
    test_gradcheck_jacobian_mismatch (real case) / test_gradcheck_validates_inputs (dense
    part): a passing check, a mismatch raised as GradcheckError (a RuntimeError) or returned
    as False, other errors passed on, inputs that cannot be checked."""

    def scenario(L):
        gc_ = L.autograd.gradcheck
        out = [gc_(lambda t: t.mul(5), L.linspace(0, 1, 10, dtype=L.float64).requires_grad_(),
                   fast_mode=fast_mode),
               L.autograd.gradgradcheck(lambda t: t.mul(5),
                                        L.linspace(0, 1, 10, dtype=L.float64).requires_grad_(),
                                        fast_mode=fast_mode)]

        def fn(x):
            y = x.clone()
            y.register_hook(lambda g: g + 1e-2)
            return y

        x = L.ones(2, 2, dtype=L.float64, requires_grad=True)
        err = raised(lambda: gc_(fn, (x,), fast_mode=fast_mode))
        out.append((err.type, err.message.split(",")[0]) if hasattr(err, "type") else err)
        out.append(gc_(fn, (x,), raise_exception=False, fast_mode=fast_mode))
        gc_module = importlib.import_module(L.__name__ + ".autograd.gradcheck")
        out.append(isinstance(gc_module.GradcheckError("m"), RuntimeError))

        def fn2(x):
            raise RuntimeError("Not a GradcheckError!")

        out.append(raised(lambda: gc_(fn2, (x,), fast_mode=fast_mode, raise_exception=False)))
        x = L.ones(10, requires_grad=False)
        out.append(raised(lambda: gc_(lambda x: x, (x,), raise_exception=False,
                                      fast_mode=fast_mode)))
        return out

    compare(scenario)


# --------------------------------------------------------------------------------------------
# Checkpointing through the autograd API
# --------------------------------------------------------------------------------------------


def test_checkpointing_correct_grad(compare):
    """test_checkpointing_without_reentrant_correct_grad / test_checkpointing (small) /
    test_checkpointing_without_reentrant_arbitrary_input_output /
    test_checkpointing_without_reentrant_parameter_used_in_an_out: checkpointed gradients,
    through backward() and grad(), dict inputs and outputs, a hook called once."""

    def scenario(L):
        cp = L.utils.checkpoint.checkpoint
        a = L.linspace(0.1, 0.9, 4).reshape(2, 2).requires_grad_()
        L.exp(a).sum().backward()
        out = [a.grad.clone()]
        a.grad = None
        cp(L.exp, a, use_reentrant=False).sum().backward()
        out.append(a.grad.clone())
        a.grad = None
        out.append(L.autograd.grad(cp(L.exp, a, use_reentrant=False).sum(), (a,)))
        L.manual_seed(0)
        module = L.nn.Sequential(L.nn.Linear(4, 8), L.nn.ReLU(), L.nn.Linear(8, 4))
        feats = []
        for i in range(5):
            data = L.full((1, 4), 0.1 * i).requires_grad_()
            feats.append(cp(module, data, use_reentrant=True))
        L.stack(feats).mean().backward()
        out.append([p.grad for p in module.parameters()])

        class MyModel(L.nn.Module):
            def __init__(self):
                super().__init__()
                self.layer = L.nn.Linear(5, 5, bias=False)

            def forward(self, dict_input):
                return {"result": self.layer(dict_input["tensor"])}

        model = MyModel()
        inp = {"tensor": L.linspace(0, 1, 25).reshape(5, 5)}
        cp(model, inp, use_reentrant=False)["result"].sum().backward()
        out.append(model.layer.weight.grad)
        w = L.ones(10, 10, requires_grad=True)
        count = [0]
        w.register_hook(lambda g: count.__setitem__(0, count[0] + 1))
        x = L.ones(10, 10, requires_grad=True)
        h = w * x
        cp(lambda t: w * t, h, use_reentrant=False).sum().backward()
        out.append(count[0])
        return out

    compare(scenario, rtol=1e-5)


def test_checkpointing_custom_function_and_identity(compare):
    """test_checkpointing_without_reentrant_saved_object_identity (values): what a custom
    Function saved comes back (the same object outside checkpoint, equal values through it;
    tapegrad's recomputation hands out new objects)."""

    def scenario(L):
        x_backward = [None]

        class Test(L.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                ctx.save_for_backward(y)
                return x

            @staticmethod
            def backward(ctx, x):
                (x_backward[0],) = ctx.saved_tensors
                return x, None

        a = L.tensor(1.0, requires_grad=True)
        b = L.tensor(1.0, requires_grad=False)
        Test.apply(a, b).backward()
        out = [x_backward[0] is b]
        L.utils.checkpoint.checkpoint(Test.apply, a, b, use_reentrant=False).backward()
        out += [L.equal(x_backward[0], b), a.grad]
        return out

    compare(scenario)


def test_checkpoint_valid_reset_on_error(compare):
    """test_checkpoint_valid_reset_on_error: reentrant checkpoint refuses autograd.grad, and
    still works afterwards."""

    def scenario(L):
        a = L.linspace(0.1, 0.9, 4).reshape(2, 2).requires_grad_()
        b = L.utils.checkpoint.checkpoint(L.exp, a, use_reentrant=True).sum()
        err = raised(lambda: L.autograd.grad(b, (a,)))
        c = L.utils.checkpoint.checkpoint(L.exp, a, use_reentrant=True).sum()
        c.backward()
        return err, a.grad

    compare(scenario)


def test_nested_checkpoint_kwargs_and_non_tensors(compare):
    """TestNestedCheckpoint.test_nested_checkpoint_kwargs /
    test_nested_checkpoint_non_tensor_inputs_and_outputs / test_nested_checkpoint_same_graph:
    keyword tensors, non-tensor inputs and outputs, hooks on the original graph."""

    def scenario(L):
        cp = L.utils.checkpoint.checkpoint
        out = []

        def fn(a, blah=None):
            o = a.sin().exp()
            if blah is not None:
                o = o * blah
            return o.sin().exp()

        a = L.tensor(2.0, requires_grad=True)
        b = L.tensor(3.0, requires_grad=True)
        out.append(L.autograd.grad(cp(fn, a, blah=b, use_reentrant=False), (a, b)))
        out.append(L.autograd.grad(fn(a, blah=b), (a, b)))

        def fn2(k, a, b, f):
            return f(k * a * b.exp()), 1, "abcd"

        o, one, s = cp(fn2, 3, a, b, lambda x: x.sin(), use_reentrant=False)
        out += [L.autograd.grad(o, (a, b)), one, s]
        counter = [0]
        a = L.tensor(1.0, requires_grad=True)
        o = cp(lambda t: t.sin().cos().sin(), a, use_reentrant=False)
        o.grad_fn.next_functions[0][0].register_hook(
            lambda *_: counter.__setitem__(0, counter[0] + 1))
        o.backward()
        out += [counter[0], a.grad]
        return out

    compare(scenario)


def test_checkpoint_warns_if_use_reentrant_not_passed(compare):
    """test_checkpoint_warns_if_use_reentrant_not_passed_explcitly /
    test_checkpoint_sequential_warns_if_use_reentrant_not_passed_explcitly."""

    def scenario(L):
        a = L.ones(3, requires_grad=True)
        cp = L.utils.checkpoint
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            cp.checkpoint(lambda x: x, a, use_reentrant=False)
            quiet = len(w)
            cp.checkpoint(lambda x: x, a)
        mods = [L.nn.Linear(3, 3), L.nn.Linear(3, 3), L.nn.Linear(3, 3)]
        with warnings.catch_warnings(record=True) as w2:
            warnings.simplefilter("always")
            cp.checkpoint_sequential(mods, 3, a, use_reentrant=False)
            quiet2 = len(w2)
            cp.checkpoint_sequential(mods, 3, a)
        return (quiet, ["use_reentrant parameter should be passed explicitly" in str(x.message)
                        for x in w], quiet2,
                ["use_reentrant parameter should be passed explicitly" in str(x.message)
                 for x in w2])

    compare(scenario)


# --------------------------------------------------------------------------------------------
# Switches
# --------------------------------------------------------------------------------------------


def test_set_multithreading_enabled(compare):
    """TestMultithreadAutograd.test_set_multithreading_enabled_as_context_manager_and_function."""

    def scenario(L):
        A = L.autograd
        out = []
        with A.set_multithreading_enabled(False):
            out.append(A.is_multithreading_enabled())
        out.append(A.is_multithreading_enabled())
        with A.set_multithreading_enabled(True):
            out.append(A.is_multithreading_enabled())
        with A.set_multithreading_enabled(False):
            A.set_multithreading_enabled(True)
            out.append(A.is_multithreading_enabled())
        out.append(A.is_multithreading_enabled())
        A.set_multithreading_enabled(False)
        out.append(A.is_multithreading_enabled())
        A.set_multithreading_enabled(True)
        out.append(A.is_multithreading_enabled())
        return out

    compare(scenario)


def test_autograd_print_tensor(compare):
    """test_autograd_print_tensor: how a leaf, a non-leaf and a Function output print."""

    def scenario(L):
        a = L.ones(1, requires_grad=True)

        class Func(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, x):
                return x

        with L.no_grad():  # a view changed in place under no_grad: its grad_fn is <Invalid>
            b = a[:]
            b *= 2
        with L.no_grad():
            c = a[:]
        return (repr(a), repr(a.clone()), repr(Func.apply(a)), repr(b), repr(c),
                raised(lambda: b.grad_fn))

    compare(scenario)
