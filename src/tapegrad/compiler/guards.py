"""Guards: what a capture assumed, checked before each replay.

A program is only the right program for calls like the one captured. Its ``Guards`` hold:

* the grad mode and inference mode;
* per argument: a tensor's shape, dtype and ``requires_grad``; a Python constant's type and
  value (an ``int``, ``float``, ``str``, ``bool``, ``None`` or tuple of those); a list, tuple or
  dict (the built-in types): its type, length or keys, and the same per item, so a step that
  takes its parameters as a list is guarded on each parameter (as dynamo guards on a list's
  contents); any other object's identity;
* the training flag of every module the function reaches (the compiled module, or the
  modules named by the function and the functions it closes over);
* that each parameter or buffer the program reads is still the module's (not replaced) and
  keeps its ``requires_grad``;
* per tensor the function reaches through a global name, an attribute or a closure variable,
  directly or as an item of a list, tuple or dict held there (``params[0]``, ``layers[2]['w']``):
  that the name (and the path into the container) still leads to a tensor of the captured
  shape, dtype and ``requires_grad``; the program reads it through that path at each call.

``key(args, kwargs)`` is the part computed from the call alone (a tuple, compared at once);
``holds()`` checks the rest. When no capture fits a call, ``key_change`` and ``failure`` say
why in words (the recompile log, ``TORCH_LOGS=recompiles``, and the "fail_on_recompile"
stance's error).
"""

from __future__ import annotations

import types
from typing import Any

from .._tensor import Tensor
from ..autograd.grad_mode import _state
from ..nn.modules.module import Module
from ..optim.lr_scheduler import LRScheduler
from ..optim.optimizer import Optimizer

_CONSTANT_TYPES = (int, float, bool, str, type(None))
_CONTAINERS = (list, tuple, dict)
# how deep and how long a container is looked into (its items' keys, the tensors found in it);
# a longer or deeper one is guarded by identity, its tensors unwatched
MAX_DEPTH = 4
MAX_ITEMS = 4096


def _arg_key(a: Any, depth: int = MAX_DEPTH) -> Any:
    if isinstance(a, Tensor):
        d = a._data
        return (d.shape, d.dtype, a._requires_grad, a._inference)
    cls = type(a)
    if cls in _CONSTANT_TYPES:
        return (cls, a)
    if cls is tuple and all(type(x) in _CONSTANT_TYPES for x in a):
        return (tuple, a)
    if cls in _CONTAINERS and depth > 0 and len(a) <= MAX_ITEMS:
        if cls is dict:
            return (dict, tuple((k, _arg_key(v, depth - 1)) for k, v in a.items()))
        return (cls, tuple(_arg_key(x, depth - 1) for x in a))
    return (object, id(a))


def container_tensors(value: Any, depth: int = MAX_DEPTH) -> list[tuple[tuple, Tensor]]:
    """The tensors inside a list, tuple or dict (and the containers in it), each with its path
    of indices and keys: ``[((0,), w), ((1,), b)]`` for ``[w, b]``. The built-in types only,
    as far as ``_arg_key`` looks (so every tensor found has a guard on its metadata)."""
    found: list = []

    def walk(v: Any, path: tuple, d: int) -> None:
        if isinstance(v, Tensor):
            found.append((path, v))
            return
        cls = type(v)
        if cls not in _CONTAINERS or d <= 0 or len(v) > MAX_ITEMS:
            return
        items = v.items() if cls is dict else enumerate(v)
        for k, x in items:
            walk(x, path + (k,), d - 1)

    if type(value) in _CONTAINERS:
        walk(value, (), depth)
    return found


def follow(value: Any, path: tuple) -> Any:
    """The item at ``path`` inside ``value`` (``value[p0][p1]...``); ``_GONE`` where the path
    no longer leads anywhere (an item removed, a container replaced by another object)."""
    for k in path:
        if type(value) not in _CONTAINERS:
            return _GONE
        try:
            value = value[k]
        except (IndexError, KeyError, TypeError):
            return _GONE
    return value


def path_text(path: tuple) -> str:
    """``[0]['w']``: a path as the Python subscripts that follow it."""
    return "".join(f"[{k!r}]" for k in path)


def key(args: tuple, kwargs: dict) -> tuple:
    """The guard key of a call: grad mode and each argument's metadata or value."""
    k = (_state.enabled, _state.inference) + tuple(_arg_key(a) for a in args)
    if kwargs:
        k += tuple((n, _arg_key(v)) for n, v in sorted(kwargs.items()))
    return k


def key_change(old: tuple, new: tuple) -> str:
    """What differs between a capture's guard key and a call's, in words (the first
    difference)."""
    if old[0] != new[0]:
        return (f"grad mode {'enabled' if new[0] else 'disabled'} (captured with it "
                f"{'enabled' if old[0] else 'disabled'})")
    if old[1] != new[1]:
        return "inference mode changed"
    if len(old) != len(new):
        return f"called with {len(new) - 2} arguments (captured with {len(old) - 2})"
    for i, (a, b) in enumerate(zip(old[2:], new[2:], strict=True)):
        if a != b:
            return f"{_arg_name(i, b)}: {_arg_change(_unnamed(a), _unnamed(b))}"
    return "the same arguments"


def nearest(keys: list, new: tuple) -> tuple:
    """Of the captured keys, the one that shares most parts with ``new``."""
    return max(keys, key=lambda k: sum(x == y for x, y in zip(k, new, strict=False)))


def _arg_name(i: int, k: tuple) -> str:
    return f"keyword argument {k[0]!r}" if isinstance(k[0], str) else f"argument {i}"


def _unnamed(k: tuple) -> tuple:
    return k[1] if isinstance(k[0], str) else k  # a keyword argument's key is (name, key)


def _arg_change(a: tuple, b: tuple) -> str:
    if _kind(a) == _kind(b) == "a container" and a[0] is b[0]:
        return _container_change(a, b)
    if _kind(a) == _kind(b) == "a tensor":
        for what, x, y in zip(("shape", "dtype", "requires_grad", "inference"), a, b,
                              strict=True):
            if x != y:
                return f"tensor {what} {_show(y)}, captured with {_show(x)}"
    if _kind(a) == _kind(b) == "a constant":
        return f"{b[1]!r}, captured with {a[1]!r}"
    if _kind(a) == _kind(b):
        return "another object"
    return f"{_kind(b)}, captured with {_kind(a)}"


def _container_change(a: tuple, b: tuple) -> str:
    """What differs between two keys of containers of the same type: the length or keys,
    else the first item that differs (``item [2]: tensor shape ...``)."""
    cls, x, y = a[0], a[1], b[1]
    name = cls.__name__
    if cls is dict:
        kx, ky = [k for k, _ in x], [k for k, _ in y]
        if kx != ky:
            return f"a dict with keys {ky}, captured with {kx}"
        pairs = [(k, u, v) for (k, u), (_, v) in zip(x, y, strict=True)]
    else:
        if len(x) != len(y):
            return f"a {name} of {len(y)} items, captured with {len(x)}"
        pairs = [(k, u, v) for k, (u, v) in enumerate(zip(x, y, strict=True))]
    for k, u, v in pairs:
        if u != v:
            return f"item [{k!r}] of the {name}: {_arg_change(u, v)}"
    return "the same items"


def _kind(k: tuple) -> str:
    if isinstance(k[0], tuple):
        return "a tensor"
    if k[0] in _CONTAINERS and isinstance(k[1], tuple) and (
            k[0] is not tuple or any(type(x) is tuple for x in k[1])):
        return "a container"
    return "an object" if k[0] is object else "a constant"


def _show(v: Any) -> str:
    return str(tuple(v)) if isinstance(v, tuple) else str(v)


def reachable(fn: Any, depth: int = 3, refs: list | None = None,
              spaces: list | None = None) -> tuple[list, list]:
    """Modules and optimizers a function names (its globals, closure and default argument
    values, the attributes of the objects among them or of a method's ``self``, and theirs;
    an LR scheduler's optimizer).

    With ``refs``, every name, attribute or closure cell found holding a tensor, module or
    optimizer is appended to it as ``(globals or attribute dict, or cell; name or None; the
    object; path)``: a program is only valid while those names still hold those objects (a
    training loop that rebinds a global ``x`` to each new batch must not replay the old one).
    ``path`` is ``()``, or for a tensor that is an item of a list, tuple or dict the name holds
    (``params = [w, b]``), the indices and keys that lead to it (``container_tensors``).

    With ``spaces``, every namespace looked into is appended as ``(globals or attribute dict,
    or cell; the names read, or None for all)``: ``Rebinds`` watches them during a capture.
    """
    modules: list = []
    optimizers: list = []
    seen: set = set()

    def note(where: Any, name: Any, obj: Any) -> None:
        if refs is None:
            return
        if isinstance(obj, (Tensor, Module, Optimizer, LRScheduler)):
            refs.append((where, name, obj, ()))
        elif type(obj) in _CONTAINERS:
            for path, t in container_tensors(obj):
                refs.append((where, name, t, path))

    def visit(obj: Any, d: int) -> None:
        if id(obj) in seen:
            return
        seen.add(id(obj))
        if isinstance(obj, Module):
            modules.append(obj)
            return
        if isinstance(obj, Optimizer):
            optimizers.append(obj)
            return
        if isinstance(obj, LRScheduler):
            # its step() is replayed as an opaque call that changes its attributes itself
            # (capture.py), so they are not names to watch; its optimizer is reachable
            visit(obj.optimizer, d)
            return
        if d <= 0:
            return
        if type(obj) in _CONTAINERS and len(obj) <= MAX_ITEMS:
            # the modules and optimizers in a list or dict the function names (``models =
            # [enc, dec]``): their flags are guarded as those of modules named directly
            for item in (obj.values() if type(obj) is dict else obj):
                if isinstance(item, (Module, Optimizer, LRScheduler)):
                    visit(item, d - 1)
            return
        if isinstance(obj, types.MethodType):
            visit(obj.__self__, d)
            visit(obj.__func__, d)
            return
        if isinstance(obj, types.FunctionType):
            code = obj.__code__
            for cell in obj.__closure__ or ():
                try:
                    value = cell.cell_contents
                except ValueError:  # an empty cell
                    continue
                note(cell, None, value)
                visit(value, d - 1)
                if spaces is not None:
                    spaces.append((cell, None))
            # default argument values: fixed to the function (no name to rebind them)
            for value in (*(obj.__defaults__ or ()), *(obj.__kwdefaults__ or {}).values()):
                visit(value, d - 1)
            g = obj.__globals__
            names = [name for name in code.co_names if name in g]
            for name in names:
                note(g, name, g[name])
                visit(g[name], d - 1)
            if spaces is not None:
                spaces.append((g, tuple(names)))
            return
        attrs = getattr(obj, "__dict__", None)
        if type(attrs) is dict and not isinstance(obj, (type, types.ModuleType, Tensor)):
            # an object the function reaches (a method's self, a global): its attributes are
            # names too (a trainer whose step reads self.x, rebound to each new batch)
            for name, value in list(attrs.items()):
                note(attrs, name, value)
                visit(value, d - 1)
            if spaces is not None:
                spaces.append((attrs, None))

    visit(fn, depth)
    return modules, optimizers


class Rebinds:
    """What the names a function reads hold before a capture, to see whether the call rebinds
    any of them: a step that keeps state in ``self.h`` or a ``global`` changes it as a side
    effect, which a replay of NumPy calls would not repeat, so such a call runs eagerly."""

    __slots__ = ("before", "contents")

    def __init__(self, spaces: list) -> None:
        before = []
        for where, names in spaces:
            if isinstance(where, dict):
                keys = list(where) if names is None else names
                before.append((where, names is None,
                               {k: where[k] for k in keys if k in where}))
            else:
                try:
                    before.append((where, False, {None: where.cell_contents}))
                except ValueError:  # an empty cell
                    pass
        self.before = before
        # the lists, dicts and sets those names hold: a step that appends its loss to a
        # ``losses`` list changes one in place (the library's own ``_parameters``-style
        # dicts, named with an underscore, are left out)
        contents: dict[int, tuple] = {}
        for _, _, old in before:
            for k, v in old.items():
                if type(v) in (list, dict, set) and not (isinstance(k, str) and
                                                         k.startswith("_")):
                    contents.setdefault(id(v), (k, v, _content(v)))
        self.contents = list(contents.values())

    def change(self) -> str | None:
        """The first name the call rebound (or added, or deleted), in words; None if none."""
        for where, whole, old in self.before:
            if isinstance(where, dict):
                for k, v in old.items():
                    if where.get(k, _GONE) is not v:
                        return f"the call rebinds {_where(where)} {k!r}"
                if whole and len(where) != len(old):
                    new = next(k for k in where if k not in old)
                    return f"the call sets the new attribute {new!r}"
            elif where.cell_contents is not old[None]:
                return "the call rebinds a closure variable (nonlocal)"
        for name, v, content in self.contents:
            if _content(v) != content:
                what = f"the {type(v).__name__} " + (
                    repr(name) if name is not None else "in a closure variable")
                return f"the call changes {what} in place (adds, sets or removes items)"
        return None


def _content(v: list | dict | set) -> Any:
    """What a container holds, by identity (its length alone when it is long)."""
    if len(v) > 4096:
        return len(v)
    if type(v) is dict:
        return tuple((k, id(x)) for k, x in v.items())
    if type(v) is set:
        return frozenset(map(id, v))
    return tuple(map(id, v))


_GONE = object()


def _where(holder: dict) -> str:
    return "the global" if "__builtins__" in holder else "the attribute"


class Guards:
    """The rest of a capture's assumptions: module flags, parameters in place."""

    __slots__ = ("modules", "flags", "params", "names")

    def __init__(self, roots: list, bound: list, names: list | None = None) -> None:
        # a tensor behind a name: its metadata (the program reads it through the name);
        # a module or optimizer: its identity
        self.names = tuple(
            (w, n, _arg_key(o) if isinstance(o, Tensor) else None, o, path)
            for w, n, o, path in names or ())
        mods: list = []
        seen: set = set()
        for root in roots:
            for m in root.modules():
                if id(m) not in seen:
                    seen.add(id(m))
                    mods.append(m)
        self.modules = tuple(mods)
        self.flags = tuple(m.training for m in mods)
        where: dict = {}
        for m in mods:
            for table in (m._parameters, m._buffers):
                for name, p in table.items():
                    if p is not None:
                        where.setdefault(id(p), (table, name))
        params = []
        for t in bound:
            w = where.get(id(t))
            if w is not None:
                params.append((w[0], w[1], t, t._requires_grad))
        self.params = tuple(params)

    def failure(self) -> str | None:
        """The first assumption that no longer holds, in words; None when all hold."""
        for m, flag in zip(self.modules, self.flags, strict=True):
            if m.training is not flag:
                return (f"{type(m).__name__}.training is {m.training} (captured with "
                        f"{flag})")
        for table, name, t, rg in self.params:
            if table.get(name) is not t:
                return f"parameter or buffer {name!r} was replaced"
            if t._requires_grad is not rg:
                return f"requires_grad of {name!r} is {t._requires_grad} (captured with {rg})"
        for where, name, meta, obj, path in self.names:
            now = where.get(name) if name is not None else where.cell_contents
            what = f"name {name!r}" if name is not None else "a closure variable"
            if path:
                now = follow(now, path)
                what += f", item {path_text(path)}"
                if now is _GONE:
                    return f"{what} is gone (the container changed)"
            if meta is None and now is not obj:
                return f"{what} holds another object"
            if meta is not None and (not isinstance(now, Tensor) or _arg_key(now) != meta):
                return f"{what} holds a tensor of another shape, dtype or requires_grad"
        return None

    def holds(self) -> bool:
        return self.failure() is None
