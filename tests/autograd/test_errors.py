"""Autograd error and warning texts: same exception type and ``str(exc)`` as torch, verbatim.

Each scenario runs on torch and on the library under test through the ``compare`` fixture (see
``tests/torchcompare.py``). Every test also pins the start of torch's message, so a scenario that
stops raising on torch is noticed. Warnings that torch emits once per process are checked in a
fresh interpreter (``run_fresh``).
"""

from __future__ import annotations

import pytest
from torchcompare import Raised, raised, run_fresh

SECOND_BACKWARD = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you "
    "call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward "
    "through the graph a second time or if you need to access saved tensors after calling "
    "backward."
)
NO_GRAD_FN = "element 0 of tensors does not require grad and does not have a grad_fn"
INPLACE_HINT = (
    "Hint: enable anomaly detection to find the operation that failed to compute its gradient, "
    "with torch.autograd.set_detect_anomaly(True, check_nan=False)."
)


def assert_raised(record, exc_type: str, start: str) -> None:
    """torch's result really is the expected error (guards the scenario itself)."""
    result = record.result
    assert isinstance(result, Raised), f"torch did not raise: {result!r}"
    assert result.type == exc_type and result.message.startswith(start), result


# --------------------------------------------------------------------------------------------
# Backward twice, missing graph, non-scalar outputs, shapes
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("op", ["mul", "exp", "autograd.grad"])
def test_second_backward_through_freed_graph(compare, op):
    """A second backward through a graph whose saved tensors were freed raises torch's text."""

    def scenario(L):
        x = L.tensor([2.0], requires_grad=True)
        if op == "mul":
            z = (x * x).sum()
            z.backward()
            z.backward()
        elif op == "exp":
            z = x.exp().sum()
            z.backward()
            z.backward()
        else:
            z = (x * x).sum()
            L.autograd.grad(z, x)
            L.autograd.grad(z, x)

    rec = compare(scenario)
    assert rec.result == Raised("RuntimeError", SECOND_BACKWARD)


def test_backward_of_tensor_without_graph(compare):
    """backward() on a tensor that doesn't require grad (plain, or made under no_grad)."""

    def scenario(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        plain = raised(lambda: L.tensor([1.0, 2.0]).sum().backward())
        with L.no_grad():
            y = (x * 2).sum()
        under_no_grad = raised(y.backward)
        via_grad = raised(L.autograd.grad, y, x)
        return plain, under_no_grad, via_grad

    rec = compare(scenario)
    assert rec.result == (Raised("RuntimeError", NO_GRAD_FN),) * 3


def test_unused_input_without_allow_unused(compare):
    """autograd.grad w.r.t. a tensor not in the graph needs allow_unused=True (index named)."""

    def scenario(L):
        x = L.tensor([1.0], requires_grad=True)
        z = L.tensor([1.0], requires_grad=True)
        return (
            raised(L.autograd.grad, (x * 2).sum(), [x, z]),
            raised(L.autograd.grad, (x * 2).sum(), [z, x]),
        )

    rec = compare(scenario)
    assert rec.result[0] == Raised(
        "RuntimeError",
        "The differentiated Tensor at index 1 appears to not have been used in the graph. "
        "Set allow_unused=True if this is the desired behavior.",
    )


def test_differentiated_tensor_does_not_require_grad(compare):
    """autograd.grad w.r.t. an input that doesn't require grad."""

    def scenario(L):
        x = L.tensor([1.0], requires_grad=True)
        c = L.tensor([1.0])
        L.autograd.grad((x * c).sum(), [x, c])

    rec = compare(scenario)
    assert rec.result == Raised(
        "RuntimeError", "One of the differentiated Tensors does not require grad"
    )


@pytest.mark.parametrize("how", ["backward", "autograd.grad"])
def test_implicit_grad_only_for_scalar_outputs(compare, how):
    """A non-scalar output needs an explicit gradient."""

    def scenario(L):
        x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 2
        if how == "backward":
            y.backward()
        else:
            L.autograd.grad(y, x)

    rec = compare(scenario)
    assert rec.result == Raised(
        "RuntimeError", "grad can be implicitly created only for scalar outputs"
    )


@pytest.mark.parametrize("how", ["backward", "autograd.grad"])
def test_gradient_shape_mismatch(compare, how):
    """A grad_output of the wrong shape is rejected with torch's 'Mismatch in shape' text."""

    def scenario(L):
        x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 2
        if how == "backward":
            y.backward(L.ones(2))
        else:
            L.autograd.grad(y, x, grad_outputs=L.ones(2))

    rec = compare(scenario)
    assert rec.result == Raised(
        "RuntimeError",
        "Mismatch in shape: grad_output[0] has a shape of torch.Size([2]) and output[0] has a "
        "shape of torch.Size([3]).",
    )


def test_materialize_grads_conflicts_with_allow_unused_false(compare):
    """materialize_grads=True together with allow_unused=False is a ValueError."""

    def scenario(L):
        x = L.tensor([1.0], requires_grad=True)
        L.autograd.grad((x * 2).sum(), x, materialize_grads=True, allow_unused=False)

    assert_raised(compare(scenario), "ValueError", "Expected allow_unused to be True")


def test_backward_through_floor_divide(compare):
    """floor division has no derivative: backward through it raises torch's error."""

    def scenario(L):
        x = L.tensor([1.5, 2.5], requires_grad=True)
        y = x // 2
        return y.requires_grad, raised(lambda: y.sum().backward())

    compare(scenario)


# --------------------------------------------------------------------------------------------
# In-place modification of saved tensors, leaves and views
# --------------------------------------------------------------------------------------------


def test_modified_saved_output_message(compare):
    """Sigmoid's saved output modified in place: names the tensor, its producer and versions."""

    def scenario(L):
        a = L.ones(3, 4, requires_grad=True)
        b = a.sigmoid()
        b.add_(1)
        b.sum().backward()

    rec = compare(scenario)
    assert rec.result == Raised(
        "RuntimeError",
        "one of the variables needed for gradient computation has been modified by an inplace "
        "operation: [torch.FloatTensor [3, 4]], which is output 0 of Sigmoid, is at version 1; "
        "expected version 0 instead. " + INPLACE_HINT,
    )


def test_modified_saved_input_of_mm(compare):
    """mm's saved second input modified in place (output of Mul, then Add)."""

    def scenario(L):
        a = L.ones(2, 3, requires_grad=True)
        b = L.ones(3, 2, requires_grad=True)
        w = b * 2
        y = a.mm(w)
        w.add_(1)
        y.sum().backward()

    assert_raised(compare(scenario), "RuntimeError", "one of the variables needed")


def test_modified_saved_tensor_via_setitem(compare):
    """Writing one element of exp's output bumps the version of the whole tensor."""

    def scenario(L):
        a = L.ones(2, 2, requires_grad=True)
        y = a.exp()
        y[0, 0] = 0.0
        y.sum().backward()

    assert_raised(compare(scenario), "RuntimeError", "one of the variables needed")


def test_modified_saved_tensor_via_detach(compare):
    """detach() shares the version counter, so zeroing the detached tensor is caught."""

    def scenario(L):
        w = L.ones(3, requires_grad=True)
        y = w.exp()
        z = (y * y).sum()
        y.detach().zero_()
        z.backward()

    assert_raised(compare(scenario), "RuntimeError", "one of the variables needed")


def test_modified_saved_leaf_message(compare):
    """A leaf changed under no_grad after use: the message has no 'which is output' clause."""

    def scenario(L):
        w = L.ones(3, requires_grad=True)
        y = (w * w).sum()
        with L.no_grad():
            w.add_(1)
        y.backward()

    rec = compare(scenario)
    assert rec.result == Raised(
        "RuntimeError",
        "one of the variables needed for gradient computation has been modified by an inplace "
        "operation: [torch.FloatTensor [3]] is at version 1; expected version 0 instead. "
        + INPLACE_HINT,
    )


def test_modified_saved_tensor_float64_type_name(compare):
    """The message names DoubleTensor for float64 tensors."""

    def scenario(L):
        a = L.ones(2, dtype=L.float64, requires_grad=True)
        b = a.tanh()
        b.mul_(2)
        b.sum().backward()

    assert_raised(compare(scenario), "RuntimeError", "one of the variables needed")


@pytest.mark.parametrize("how", ["add_", "iadd", "setitem", "view-mul_"])
def test_inplace_on_leaf_requiring_grad(compare, how):
    """In-place on a leaf (or a view of it) that requires grad fails before mutating it."""

    def scenario(L):
        x = L.ones(3, requires_grad=True)
        if how == "add_":
            error = raised(lambda: x.add_(1))
        elif how == "iadd":

            def iadd():
                nonlocal x
                x += 1

            error = raised(iadd)
        elif how == "setitem":
            error = raised(lambda: x.__setitem__(0, 5.0))
        else:
            error = raised(lambda: x[:2].mul_(2))
        return error, x, x._version

    rec = compare(scenario)
    view = how in ("setitem", "view-mul_")
    prefix = "a view of a leaf Variable" if view else "a leaf Variable"
    assert rec.result[0] == Raised(
        "RuntimeError", f"{prefix} that requires grad is being used in an in-place operation."
    )


def test_view_created_in_no_grad_modified_with_grad(compare):
    """A view made under no_grad and modified in place with grad mode on is forbidden."""

    def scenario(L):
        x = L.ones(3, requires_grad=True)
        a = x * 1
        with L.no_grad():
            v = a[:2]
        v.mul_(2)

    assert_raised(compare(scenario), "RuntimeError", "A view was created in no_grad mode")


@pytest.mark.parametrize("op", ["unbind", "split", "chunk"])
def test_inplace_on_output_of_multi_view_op(compare, op):
    """Outputs of unbind/split/chunk are views that must not be modified in place."""

    def scenario(L):
        a = L.ones(4, 2, requires_grad=True) * 1
        parts = {"unbind": a.unbind, "split": lambda: a.split(2), "chunk": lambda: a.chunk(2)}[op]()
        parts[0].mul_(2)

    assert_raised(compare(scenario), "RuntimeError", "Output 0 of ")


# --------------------------------------------------------------------------------------------
# requires_grad, retain_grad, hooks, .grad assignment
# --------------------------------------------------------------------------------------------


def test_requires_grad_errors(compare):
    """requires_grad flags: non-leaf, integer tensors, retain_grad and hooks without grad."""

    def scenario(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        return (
            raised(lambda: y.requires_grad_(False)),
            raised(lambda: L.tensor([1, 2]).requires_grad_()),
            raised(lambda: L.tensor([1, 2], requires_grad=True)),
            raised(lambda: L.tensor([1.0, 2.0]).retain_grad()),
            raised(lambda: L.tensor([1.0, 2.0]).register_hook(lambda g: g)),
            raised(lambda: y.register_post_accumulate_grad_hook(lambda t: None)),
        )

    rec = compare(scenario)
    assert [r.message.split(".")[0] for r in rec.result] == [
        "you can only change requires_grad flags of leaf variables",
        "only Tensors of floating point dtype can require gradients",
        "Only Tensors of floating point and complex dtype can require gradients",
        "can't retain_grad on Tensor that has requires_grad=False",
        "cannot register a hook on a tensor that doesn't require gradient",
        "post accumulate grad hooks cannot be registered on non-leaf tensors",
    ]


def test_assigning_grad_of_wrong_size(compare):
    """x.grad = tensor of another size raises; a same-size assignment works (even on non-leaf)."""

    def scenario(L):
        x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)

        def assign(value):
            x.grad = value

        wrong = raised(assign, L.ones(2))
        assign(L.ones(3))
        y = x * 2
        y.grad = L.zeros(3)
        return wrong, x.grad

    rec = compare(scenario)
    assert rec.result[0].message.startswith("attempting to assign a gradient of size '[2]'")


# --------------------------------------------------------------------------------------------
# Inference mode errors
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "case", ["saved-for-backward", "inplace-outside", "requires-grad", "version"]
)
def test_inference_tensor_errors(compare, case):
    """Inference tensors: can't be saved for backward, updated in place outside, etc."""

    def scenario(L):
        with L.inference_mode():
            t = L.ones(2)
            inside = t.add_(1)  # in place *inside* inference mode is fine
        if case == "saved-for-backward":
            w = L.ones(2, requires_grad=True)
            return t * w
        if case == "inplace-outside":
            return t.add_(1)
        if case == "requires-grad":
            return t.requires_grad_()
        return inside._version

    rec = compare(scenario)
    assert isinstance(rec.result, Raised)


# --------------------------------------------------------------------------------------------
# gradcheck failures
# --------------------------------------------------------------------------------------------


def test_gradcheck_reports_jacobian_mismatch(compare):
    """A wrong backward (a hook tripling the grad) fails gradcheck with GradcheckError."""

    def scenario(L):
        x = L.ones(3, dtype=L.float64, requires_grad=True)

        def f(t):
            y = t * 2
            y.register_hook(lambda g: g * 3)
            return y

        quiet = L.autograd.gradcheck(f, (x,), raise_exception=False)
        error = raised(L.autograd.gradcheck, f, (x,))
        return quiet, error.type, error.message.splitlines()[0]

    rec = compare(scenario)
    assert rec.result == (
        False,
        "GradcheckError",
        "Jacobian mismatch for output 0 with respect to input 0,",
    )


# --------------------------------------------------------------------------------------------
# Warnings torch emits once per process: checked in fresh interpreters
# --------------------------------------------------------------------------------------------


WARN_ONCE_BODY = """
x = L.tensor(2.0, requires_grad=True)
(x ** 3).backward(create_graph=True)
note(repr(x.grad))
y = L.tensor(2.5, requires_grad=True)
note(float(y), int(y), y.item())
"""


def test_warn_once_warnings_in_fresh_process(lib_name):
    """backward(create_graph=True) and float()/int() of a requires-grad tensor warn on first
    use only (torch's TORCH_WARN_ONCE): texts and counts over two runs match torch's."""
    expected = run_fresh("torch", WARN_ONCE_BODY)
    actual = run_fresh(lib_name, WARN_ONCE_BODY)
    assert actual == expected
    assert len(expected[-1]) == 2, "torch should warn exactly twice: the scenario is wrong"
