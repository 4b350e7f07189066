"""``boolean_dispatch``: one public function that runs one of two implementations, chosen by a
boolean argument, as ``torch.nn.functional`` builds ``max_pool2d(..., return_indices=...)``.

TorchScript needs the flag to be a constant so that it can pick the implementation when it
compiles; tapegrad runs Python eagerly, so the flag is simply read at each call. The table
``boolean_dispatched`` records, for each function made this way, its two implementations and
where its flag is, as torch's does.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

__all__ = ["boolean_dispatch", "boolean_dispatched"]

boolean_dispatched: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def boolean_dispatch(arg_name: str, arg_index: int, default: bool, if_true: Callable,
                     if_false: Callable, module_name: str | None,
                     func_name: str | None) -> Callable:
    """Dispatches to either of 2 script functions based on a boolean argument.

    The flag is the keyword ``arg_name``, else the positional argument at ``arg_index``, else
    ``default``. The result takes the docstring of whichever implementation has one (both
    having one is an error), and the given ``__module__`` and ``__name__``.

    Example:
        >>> import tapegrad as torch
        >>> f = torch.nn.functional.boolean_dispatch(
        ...     "twice", 1, False, lambda x, twice=False: 2 * x, lambda x, twice=False: x,
        ...     None, "scale")
        >>> f(3), f(3, True)
        (3, 6)
    """

    def fn(*args: Any, **kwargs: Any) -> Any:
        flag = default
        if arg_name in kwargs:
            flag = kwargs[arg_name]
        elif arg_index < len(args):
            flag = args[arg_index]
        return if_true(*args, **kwargs) if flag else if_false(*args, **kwargs)

    if if_true.__doc__ is None and if_false.__doc__ is not None:
        doc = if_true.__doc__ = if_false.__doc__
    elif if_false.__doc__ is None and if_true.__doc__ is not None:
        doc = if_false.__doc__ = if_true.__doc__
    elif if_false.__doc__ is None and if_true.__doc__ is None:
        doc = None
    else:
        raise RuntimeError("only one function can have a docstring")
    fn.__doc__ = doc
    if module_name is not None:
        fn.__module__ = module_name
    if func_name is not None:
        fn.__name__ = func_name
    boolean_dispatched[fn] = {"if_true": if_true, "if_false": if_false, "index": arg_index,
                              "default": default, "arg_name": arg_name}
    return fn
