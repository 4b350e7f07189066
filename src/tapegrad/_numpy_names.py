"""NumPy's keyword names for a dimension: ``x.sum(axis=0)``, ``x.argmax(axis=1, keepdims=True)``.

torch's argument parser, which reads the arguments of every function and method written in
C++ (``torch.sum``, ``Tensor.argmax``, ``Tensor.softmax``, ...), takes NumPy's names as well as
its own: ``axis`` for ``dim`` and ``keepdims`` for ``keepdim``. Code written with NumPy in mind
relies on it (d2l's ``argmax = lambda x, *args, **kwargs: x.argmax(*args, **kwargs)``, called
with ``axis=1``). torch's functions written in Python (``Tensor.split``, ``torch.norm``,
``torch.unique``, every ``torch.nn.functional`` function) do not: there ``axis`` is the
``TypeError`` any unknown keyword is.

``accept`` gives a function or method that has ``dim`` or ``keepdim`` both names: a face with
the same parameters and, keyword-only, ``axis`` and ``keepdims``, made once at import
(``_signatures.make``). A call that uses torch's names passes on as it came; giving both names
of one parameter raises the ``TypeError`` torch's parser raises. ``Tensor.sum``, called on
nearly every training step, takes them itself (ops/reduction.py), with no face in front.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from . import _signatures

__all__ = ["PYTHON_LEVEL", "TENSOR_PYTHON_LEVEL", "accept"]

ALIASES = {"dim": "axis", "keepdim": "keepdims"}  # torch's name -> NumPy's

# the functions (torch.<name>) and methods (Tensor.<name>) with a dim that torch writes in
# Python, so that its parser never sees their arguments: no NumPy names there
PYTHON_LEVEL = frozenset({"norm", "split", "unique", "unique_consecutive"})
TENSOR_PYTHON_LEVEL = PYTHON_LEVEL | {"unflatten"}


_UNSET = _signatures.UNSET  # the default of ``axis``/``keepdims``: told apart from any value


def accept(fn: Callable, name: str, *, method: bool = False) -> Callable:
    """``fn`` taking NumPy's names too, where it has ``dim``/``keepdim`` and torch's parser
    reads its arguments; otherwise ``fn`` itself. ``name`` is the one torch's message gives
    (``sum``: torch says ``sum()`` for the function and for the method, ``Tensor.sum``)."""
    if name in (TENSOR_PYTHON_LEVEL if method else PYTHON_LEVEL):
        return fn
    if any(n in (getattr(fn, "__kwdefaults__", None) or {}) for n in ALIASES.values()):
        return fn  # it takes them itself (``Tensor.sum``: ops/reduction.py)
    try:
        params = _signatures.params_of(fn)
    except (TypeError, ValueError):  # a builtin or a class: no signature to extend
        return fn
    names = [p.name for p in params]
    have = [p.name for p in params if p.name in ALIASES
            and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    if not have or any(n in ALIASES.values() for n in names):
        return fn
    # a required dim becomes optional in the face, so that axis can stand for it; that needs
    # every positional parameter after it to be optional already
    faced = []
    required: list[str] = []
    for i, p in enumerate(params):
        if p.name in have and p.default is p.empty:
            later = params[i + 1:]
            if any(q.default is q.empty and q.kind in (q.POSITIONAL_ONLY,
                                                       q.POSITIONAL_OR_KEYWORD)
                   for q in later):
                return fn
            p = p.replace(default=_UNSET)
            required.append(p.name)
        faced.append(p)
    at = len(faced)
    if faced and faced[-1].kind == inspect.Parameter.VAR_KEYWORD:
        at -= 1
    extra = [inspect.Parameter(ALIASES[n], inspect.Parameter.KEYWORD_ONLY, default=_UNSET)
             for n in have]
    scope: dict[str, Any] = {"_fn": fn, "_UNSET": _UNSET}
    body = ""
    for p in faced:
        if p.name not in have:
            continue
        numpy_name = ALIASES[p.name]
        scope[f"_DEFAULT_{p.name}"] = p.default
        body += (f"    if {numpy_name} is not _UNSET:\n"
                 f"        if {p.name} is not _DEFAULT_{p.name}:\n"
                 f"            raise TypeError(\"{name}() got an unexpected keyword argument "
                 f"'{numpy_name}'\")\n"
                 f"        {p.name} = {numpy_name}\n")
    for dim in required:  # neither name given: fn's own error for its missing argument
        at_dim = [p.name for p in faced].index(dim)
        _, before, _ = _signatures.header_and_call(faced[:at_dim], {})
        after = [p for p in faced[at_dim + 1:]]
        by_name = ", ".join(f"**{p.name}" if p.kind == p.VAR_KEYWORD else f"{p.name}={p.name}"
                            for p in after if p.kind != p.VAR_POSITIONAL)
        body += (f"    if {dim} is _UNSET:\n"
                 f"        return _fn({', '.join(x for x in (before, by_name) if x)})\n")
    body += "    return _fn({call})\n"
    made = _signatures.make(fn.__name__, [*faced[:at], *extra, *faced[at:]], body, scope,
                            qualname=getattr(fn, "__qualname__", None),
                            module=getattr(fn, "__module__", None), doc=fn.__doc__,
                            passed=tuple(ALIASES[n] for n in have))
    made.__wrapped__ = fn  # type: ignore[attr-defined]
    return made
