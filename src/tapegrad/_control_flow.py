"""torch's structured control-flow operators, ``torch.cond`` and ``torch.while_loop``, in eager
mode: the branch that the predicate picks runs (``cond``), the body runs while the condition
holds (``while_loop``), after torch's checks of the arguments.

torch captures both branches (and the loop's body) with its compiler even in eager mode and
checks them as graphs; tapegrad has no compiler, so a branch that is not taken is never run,
and the gradient flows through the ops the taken branch recorded (torch records one
``CondAutogradOpBackward`` node around them).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._tensor import Tensor


def _leaves(tree: Any) -> list:
    """The leaves of nested tuples, lists and dicts (pytree order: dicts by insertion)."""
    if isinstance(tree, (tuple, list)):
        return [leaf for v in tree for leaf in _leaves(v)]
    if isinstance(tree, dict):
        return [leaf for v in tree.values() for leaf in _leaves(v)]
    return [tree]


def cond(pred: Any, true_fn: Callable, false_fn: Callable, operands: Any = ()) -> Any:
    """``true_fn(*operands)`` if ``pred`` else ``false_fn(*operands)``; ``pred`` is a Python
    bool (or number) or a one-element tensor.

    >>> import tapegrad as torch
    >>> torch.cond(torch.tensor(True), lambda x: x + 1, lambda x: x - 1, (torch.tensor(1),))
    tensor(2)
    """
    if isinstance(pred, (bool, int, float)):  # a constant: the branch it names, unchecked
        return true_fn(*operands) if pred else false_fn(*operands)
    if not isinstance(pred, Tensor):
        raise RuntimeError(f"Expected pred to be bool or tensor, but got {pred}.")
    if pred.numel() != 1:
        raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got {pred}.")
    if not callable(true_fn) or not callable(false_fn):
        raise RuntimeError("Expect both branches to be callable.")
    if not isinstance(operands, (tuple, list)) or any(
            not isinstance(t, Tensor) for t in _leaves(operands)):
        raise RuntimeError("Expect operands to be a tuple of possibly nested dict/list/tuple "
                           f"that only consists of tensor leaves, but got {operands}.")
    return true_fn(*operands) if bool(pred.item()) else false_fn(*operands)


def while_loop(cond_fn: Callable, body_fn: Callable, carried_inputs: Any) -> tuple:
    """Run ``carried = body_fn(*carried)`` while ``cond_fn(*carried)`` holds; returns the
    final carried values (a tuple). Leaves are tensors or ints; the body returns as many
    values as it takes.

    >>> import tapegrad as torch
    >>> torch.while_loop(lambda i: i < 3, lambda i: (i + 1,), (torch.tensor(0),))
    (tensor(3),)
    """
    if not callable(cond_fn) or not callable(body_fn):
        raise RuntimeError("Expect cond_fn and body_fn to be callable.")
    leaves = _leaves(carried_inputs)
    for leaf in leaves:
        if not isinstance(leaf, (Tensor, int)) or isinstance(leaf, bool):
            raise AssertionError(
                f"{leaves} can only be of (<class 'torch.Tensor'>, <class 'int'>, "
                f"<class 'torch.SymInt'>) but got {tuple(type(v) for v in leaves)}")
    carried = tuple(carried_inputs)
    while True:
        go = cond_fn(*carried)
        if isinstance(go, Tensor):
            if go.numel() != 1 or go.dtype.name != "bool":
                raise RuntimeError("cond_fn must return a boolean scalar tensor or a boolean, "
                                   f"but got {go}")
            go = bool(go.item())
        if not go:
            return carried
        out = body_fn(*carried)
        out = tuple(out) if isinstance(out, (tuple, list)) else (out,)
        if len(out) != len(carried):
            raise RuntimeError(f"body_fn should return the same number of elements as "
                               f"carried_inputs, but got {len(out)} and {len(carried)}")
        carried = out


__all__ = ["cond", "while_loop"]
