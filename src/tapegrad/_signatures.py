"""Functions made with a given parameter list: the public faces that share one implementation.

torch's functions and methods take their arguments by name (``torch.add(input=x, other=y)``,
``x.addcmul_(tensor1=a, tensor2=b, value=2)``), so a function made from another one (the
``out=`` variant of an op, the in-place method of an out-of-place op) must list the same
parameters, not ``*args, **kwargs``. ``make`` writes such a function as source and compiles it,
once, at import::

    def addcmul_(self, tensor1, tensor2, *, value=_d2):
        return _call(self, tensor1, tensor2, value=value)

so a call costs one plain Python call more, and ``inspect.signature`` and the errors for a
wrong argument are the ones a hand-written function would give.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Sequence
from typing import Any

# the file name a made function's code reports: tapegrad's folder and ``<name>``, so that a
# traceback shows where it comes from, and a warning raised inside finds the user's frame past
# it as past any other frame of tapegrad (``ops/_warnings.py``)
_HERE = os.path.dirname(os.path.abspath(__file__))


class _Unset:
    """The default of a parameter whose absence must be told apart from any value a caller
    passes, None included (NumPy's ``axis``/``keepdims`` beside torch's ``dim``/``keepdim``:
    _numpy_names.py, and ``Tensor.sum`` in ops/reduction.py)."""

    def __repr__(self) -> str:
        return "<unset>"


UNSET = _Unset()


def params_of(fn: Callable, *, drop_first: bool = False) -> list[inspect.Parameter]:
    """``fn``'s parameters (the first left out with ``drop_first``)."""
    params = list(inspect.signature(fn).parameters.values())
    return params[1:] if drop_first else params


def header_and_call(params: Sequence[inspect.Parameter], defaults: dict[str, Any]
                    ) -> tuple[str, str, list[str]]:
    """The parameter list of a ``def`` for ``params`` (defaults as names put in
    ``defaults``), the argument list that passes each on as given, and their names."""
    header: list[str] = []
    call: list[str] = []
    names: list[str] = []
    star = False
    for i, p in enumerate(params):
        text = p.name
        if p.default is not p.empty:
            key = f"_d{len(defaults)}"
            defaults[key] = p.default
            text += f"={key}"
        if p.kind == p.VAR_POSITIONAL:
            header.append("*" + p.name)
            call.append("*" + p.name)
            star = True
        elif p.kind == p.VAR_KEYWORD:
            header.append("**" + p.name)
            call.append("**" + p.name)
        elif p.kind == p.KEYWORD_ONLY:
            if not star:
                header.append("*")
                star = True
            header.append(text)
            call.append(f"{p.name}={p.name}")
        else:
            header.append(text)
            call.append(p.name)
            if p.kind == p.POSITIONAL_ONLY and (
                    i + 1 == len(params) or params[i + 1].kind != p.POSITIONAL_ONLY):
                header.append("/")
        names.append(p.name)
    return ", ".join(header), ", ".join(call), names


def make(name: str, params: Sequence[inspect.Parameter], body: str, scope: dict[str, Any],
         *, qualname: str | None = None, module: str | None = None, doc: str | None = None,
         passed: Sequence[str] = ()) -> Callable:
    """A function ``name(<params>)`` running ``body`` (source lines, indented four spaces,
    which may use ``{call}``: the arguments passed on as given, and ``{names}``: their names
    separated by commas; both leave out the parameters named in ``passed``) with ``scope`` as
    its globals."""
    defaults: dict[str, Any] = {}
    header, _, _ = header_and_call(params, defaults)
    _, call, names = header_and_call([p for p in params if p.name not in passed], {})
    source = f"def {name}({header}):\n" + body.format(call=call, names=", ".join(names))
    namespace = {**scope, **defaults}
    exec(compile(source, os.path.join(_HERE, f"<{qualname or name}>"), "exec"), namespace)
    fn = namespace[name]
    fn.__qualname__ = qualname or name
    if module is not None:
        fn.__module__ = module
    fn.__doc__ = doc
    return fn


def calling(name: str, params: Sequence[inspect.Parameter], target: Callable, *,
            first: str | None = None, doc: str | None = None, module: str | None = None
            ) -> Callable:
    """``name(<first>, <params>)``: ``target(<first>, <the arguments as given>)``; ``first``
    (``"self"`` for a method) is passed on first."""
    if first is not None:
        params = [inspect.Parameter(first, inspect.Parameter.POSITIONAL_OR_KEYWORD),
                  *params]
    return make(name, params, "    return _target({call})\n", {"_target": target},
                doc=doc, module=module)
