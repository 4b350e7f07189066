"""tapegrad.overrides (the ``__torch_function__`` checks) and ``boolean_dispatch``
(tapegrad/_jit_internal.py), as ``torch.nn.functional`` exports them, against torch."""

from __future__ import annotations

import pytest
import torch

import tapegrad


class Overrides:
    """A user type taking over the functions that guard themselves."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return ("Overrides", func.__name__, types, len(args))


class Declines:
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return NotImplemented


class SubOverrides(Overrides):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return ("SubOverrides", func.__name__, types, len(args))


@pytest.fixture(params=["torch", "tapegrad"])
def lib(request):
    return torch if request.param == "torch" else tapegrad


def test_tensors_and_plain_values_do_not_dispatch(lib):
    F = lib.nn.functional
    t = lib.ones(2)
    p = lib.nn.Parameter(lib.ones(2))
    assert F.has_torch_function((t, p, 1, "a", None)) is False
    assert F.has_torch_function([]) is False
    assert F.has_torch_function_unary(t) is False
    assert F.has_torch_function_variadic(t, p, 3) is False
    assert F.has_torch_function_variadic() is False


def test_user_types_dispatch(lib):
    F = lib.nn.functional
    o = Overrides()
    assert F.has_torch_function((lib.ones(1), o)) is True
    assert F.has_torch_function_unary(o) is True
    assert F.has_torch_function_variadic(1, o) is True

    def guarded(x, y):
        if F.has_torch_function_variadic(x, y):
            return F.handle_torch_function(guarded, (x, y), x, y)
        return "plain"

    assert guarded(lib.ones(1), 2) == "plain"
    assert guarded(o, 2) == ("Overrides", "guarded", (Overrides,), 2)
    # subclasses are asked before their bases, each type once
    res = guarded(o, SubOverrides())
    assert res == ("SubOverrides", "guarded", (SubOverrides, Overrides), 2)
    # every overriding type declines: TypeError naming them
    with pytest.raises(TypeError) as info:
        F.handle_torch_function(guarded, (Declines(),), 1)
    assert str(info.value) == (
        f"no implementation found for '{__name__}.guarded' on types that implement "
        f"__torch_function__: [{Declines!r}]")


def test_bad_arguments(lib):
    F = lib.nn.functional
    with pytest.raises(TypeError, match="expected a sequence"):
        F.has_torch_function(3)
    with pytest.raises(TypeError):
        F.has_torch_function_unary()


def test_boolean_dispatch(lib):
    F = lib.nn.functional

    def if_true(x, flag=False):
        """Doubled."""
        return 2 * x

    def if_false(x, flag=False):
        return x

    fn = F.boolean_dispatch("flag", 1, False, if_true, if_false, "mymodule", "scale")
    assert (fn(3), fn(3, True), fn(3, flag=True), fn(3, flag=False)) == (3, 6, 6, 3)
    assert fn.__name__ == "scale" and fn.__module__ == "mymodule"
    assert fn.__doc__ == "Doubled." and if_false.__doc__ == "Doubled."

    def documented(x, flag=False):
        """Another doc."""
        return x

    with pytest.raises(RuntimeError, match="only one function can have a docstring"):
        F.boolean_dispatch("flag", 1, False, if_true, documented, None, None)


def test_assert_int_or_pair(lib):
    F = lib.nn.functional
    assert F.assert_int_or_pair(3, "kernel_size", "{} must be int or pair") is None
    assert F.assert_int_or_pair([1, 2], "kernel_size", "{} must be int or pair") is None
    with pytest.raises(AssertionError, match="^kernel_size must be int or pair$"):
        F.assert_int_or_pair([1, 2, 3], "kernel_size", "{} must be int or pair")
