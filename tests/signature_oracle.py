"""torch's signatures, read from torch itself, for the signature test (tests/test_signatures.py).

``torch.overrides.get_testing_overrides()`` names every overridable function and method of
torch; its lambdas, written by hand, are not always torch's signature (``torch.where``'s says
``x, y`` where torch takes ``input, other``; ``Tensor.abs_``'s takes an ``out`` that torch
rejects). So the entries come from there and the signatures from what torch itself runs:

* a function or method written in Python (``torch.functional.split``, ``torch.nn.functional
  .relu``, ``Tensor.backward``): ``inspect.signature`` of torch's own function, exactly;
* a built-in (C++) function or method: the overloads torch's argument parser accepts. They are
  read from the parser's own signature strings, compiled into ``libtorch_python`` (``add(Tensor
  input, Tensor other, *, Scalar alpha=1, Tensor out=None)``) for the namespaces whose names are
  unique to them (``special_``, ``linalg_``, ``fft_`` and ``torch._C._nn``), and from the type
  stubs generated from those same strings (``torch/_C/_VariableFunctions.pyi``, the
  ``TensorBase`` class of ``torch/_C/__init__.pyi``) for ``torch.X`` and ``Tensor.X``, where a
  function and a method share a name. The stubs give methods an ``out=`` that the parser of a
  method never takes, so it is dropped there.

A signature is a tuple of ``Param`` (name, kind, default); a built-in has one per overload.
"""

from __future__ import annotations

import ast
import functools
import inspect
import keyword
import math
import re
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch.overrides import get_ignored_functions, get_testing_overrides, resolve_name

TORCH_DIR = Path(torch.__file__).resolve().parent

POS, KW, VAR = "positional", "keyword-only", "*args"
POSONLY = "positional-only"  # a slot's parameter: passed by position, its name not a keyword


class _NoDefault:
    def __repr__(self) -> str:
        return "<required>"


class _Unknown:
    def __repr__(self) -> str:
        return "<some default>"


REQUIRED = _NoDefault()
UNKNOWN = _Unknown()  # a stub's ``= ...``: optional, its value not written down


@dataclass(frozen=True)
class Param:
    name: str
    kind: str  # POS, POSONLY, KW or VAR
    default: Any = REQUIRED  # a canonical value (``canonical``), REQUIRED or UNKNOWN

    def __str__(self) -> str:
        star = "*" if self.kind == VAR else ""
        text = star + self.name
        if self.default is not REQUIRED:
            text += f"={self.default!r}"
        return text


@dataclass(frozen=True)
class Expected:
    """What torch accepts for one entry: one exact signature (``exact``: torch's function is
    Python) or the argument parser's overloads."""

    overloads: tuple[tuple[Param, ...], ...]
    exact: bool
    source: str


def format_signature(params: tuple[Param, ...]) -> str:
    out: list[str] = []
    star = False
    for i, p in enumerate(params):
        if i and params[i - 1].kind == POSONLY and p.kind != POSONLY:
            out.append("/")
        if p.kind == KW and not star:
            out.append("*")
            star = True
        if p.kind == VAR:
            star = True
        out.append(str(p))
    if params and params[-1].kind == POSONLY:
        out.append("/")
    return "(" + ", ".join(out) + ")"


# --------------------------------------------------------------------------------------------
# Canonical default values: comparable between torch, its stubs, its parser strings, tapegrad
# --------------------------------------------------------------------------------------------

_NAMED_DEFAULTS = {  # names a stub or parser string writes for a torch object
    "strided": "torch.strided", "torch.strided": "torch.strided",
    "contiguous_format": "torch.contiguous_format",
    "torch.contiguous_format": "torch.contiguous_format",
    "torch.preserve_format": "torch.preserve_format",
    "MemoryFormat::Contiguous": "torch.contiguous_format",
}


def canonical(value: Any) -> Any:
    """A default value as a plain comparable value: numbers by kind and value, sequences as
    tuples, torch's (or tapegrad's) dtypes, layouts and memory formats as their repr."""
    if value is inspect.Parameter.empty or type(value) is object:
        # (a bare object() default is a "not given" sentinel: the function raises torch's
        # TypeError for a missing argument itself, so the parameter is required all the same)
        return REQUIRED
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, int):
        return ("number", value)
    if isinstance(value, float):
        return ("number", value) if not math.isnan(value) else ("number", "nan")
    if isinstance(value, (tuple, list)):
        return tuple(canonical(v) for v in value)
    text = repr(value).replace("tapegrad.", "torch.")
    return ("object", text)


def _literal(text: str) -> Any:
    """A stub's default expression as a canonical value."""
    if text == "...":
        return UNKNOWN
    if text in _NAMED_DEFAULTS:
        return ("object", _NAMED_DEFAULTS[text])
    return canonical(ast.literal_eval(text))


def _cpp_literal(text: str) -> Any:
    """A parser string's default (C++ spelling: ``{-2,-1}``, ``"none"``, ``c10::nullopt``)."""
    text = text.strip()
    if text in ("None", "c10::nullopt", "nullptr", "std::nullopt"):
        return None
    if text in _NAMED_DEFAULTS:
        return ("object", _NAMED_DEFAULTS[text])
    if text in ("True", "true"):
        return ("bool", True)
    if text in ("False", "false"):
        return ("bool", False)
    if text.startswith("{") and text.endswith("}"):
        inner = text[1:-1].strip()
        return tuple(_cpp_literal(v) for v in inner.split(",")) if inner else ()
    if text.startswith('"') and text.endswith('"'):
        return text[1:-1]
    if text.startswith("at::Reduction::"):
        # the loss kernels' reduction, an int64: the parser reads its default with atol, which
        # makes every such name 0 (no reduction), and so torch.kl_div(x, y) does not reduce
        return canonical(0)
    return canonical(ast.literal_eval(text))


# --------------------------------------------------------------------------------------------
# Sources: Python signatures, the type stubs, the parser's strings
# --------------------------------------------------------------------------------------------

def from_inspect(sig: inspect.Signature, *, drop_first: bool = False) -> tuple[Param, ...]:
    """A Python signature as Params (``**kwargs`` kept as a VAR named ``**name``)."""
    out = []
    items = list(sig.parameters.values())
    if drop_first and items and items[0].kind in (items[0].POSITIONAL_ONLY,
                                                  items[0].POSITIONAL_OR_KEYWORD):
        items = items[1:]
    for p in items:
        if p.kind == p.VAR_POSITIONAL:
            out.append(Param(p.name, VAR))
        elif p.kind == p.VAR_KEYWORD:
            out.append(Param("**" + p.name, VAR))
        elif p.kind == p.KEYWORD_ONLY:
            out.append(Param(p.name, KW, canonical(p.default)))
        elif p.kind == p.POSITIONAL_ONLY:
            out.append(Param(p.name, POSONLY, canonical(p.default)))
        else:
            out.append(Param(p.name, POS, canonical(p.default)))
    return tuple(out)


def _stub_params(args: ast.arguments, *, method: bool) -> tuple[Param, ...]:
    out: list[Param] = []
    pos = list(args.posonlyargs) + list(args.args)
    if method:
        pos = pos[1:]  # self
    defaults = [None] * (len(pos) - len(args.defaults)) + list(args.defaults)
    if method and len(args.defaults) > len(pos):
        defaults = list(args.defaults)[-len(pos):] if pos else []
    for a, d in zip(pos, defaults, strict=True):
        out.append(Param(a.arg, POS, REQUIRED if d is None else _literal(ast.unparse(d))))
    if args.vararg is not None:
        out.append(Param(args.vararg.arg, VAR))
    for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        if method and a.arg == "out":  # a method's parser never takes out= (module docstring)
            continue
        out.append(Param(a.arg, KW, REQUIRED if d is None else _literal(ast.unparse(d))))
    return tuple(out)


@functools.cache
def stubs() -> tuple[dict[str, list], dict[str, list]]:
    """{name: [overload, ...]} of torch._C._VariableFunctions and of TensorBase's methods."""
    functions: dict[str, list] = {}
    methods: dict[str, list] = {}
    tree = ast.parse((TORCH_DIR / "_C" / "_VariableFunctions.pyi").read_text())
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            o = _stub_params(node.args, method=False)
            if not _named_tensor(o):
                functions.setdefault(node.name, []).append(o)
    tree = ast.parse((TORCH_DIR / "_C" / "__init__.pyi").read_text())
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):  # torch._C's own functions (autocast's state)
            o = _stub_params(node.args, method=False)
            functions.setdefault(node.name, []).append(o)
        if isinstance(node, ast.ClassDef) and node.name == "TensorBase":
            for f in node.body:
                if isinstance(f, ast.FunctionDef):
                    o = _stub_params(f.args, method=True)
                    if not _named_tensor(o):
                        methods.setdefault(f.name, []).append(o)
    return functions, methods


def _named_tensor(overload: tuple[Param, ...]) -> bool:
    """An overload of named tensors (``names=``), which are out of scope."""
    return any(p.name == "names" for p in overload)


_SIGNATURE = re.compile(rb"(?<=\x00)([a-z_][a-z0-9_]*)\(([\x20-\x27\x2a-\x7e]*)\)"
                        rb"(\|deprecated|\|hidden)?(?=\x00)")


@functools.cache
def parser_strings() -> dict[str, list[str]]:
    """{name: [the parameter list of each signature string]} from libtorch_python."""
    data = (TORCH_DIR / "lib" / "libtorch_python.so").read_bytes()
    out: dict[str, list[str]] = {}
    for m in _SIGNATURE.finditer(data):
        if m.group(3) == b"|deprecated":
            continue
        name = m.group(1).decode()
        body = m.group(2).decode()
        if body and not re.match(r"^(\*|[A-Za-z:<>\[\]0-9_?*]+\s+\*?[a-z_A-Z][a-zA-Z0-9_]*)", body):
            continue  # a string that only looks like a signature
        out.setdefault(name, [])
        if body not in out[name]:
            out[name].append(body)
    return out


def _split_params(body: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in body:
        if ch in "{<[":
            depth += 1
        elif ch in "}>]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def parse_parser_string(body: str) -> tuple[Param, ...]:
    """``Tensor input, *, Scalar alpha=1, Tensor out=None`` -> Params."""
    out: list[Param] = []
    kind = POS
    for part in _split_params(body):
        if part == "*":
            kind = KW
            continue
        default: Any = REQUIRED
        if "=" in part:
            part, text = part.split("=", 1)
            default = _cpp_literal(text)
        ctype, name = part.rsplit(None, 1)
        if name.startswith("*"):  # IntArrayRef *size? (not used by the parser's strings)
            out.append(Param(name[1:], VAR))
            continue
        out.append(Param(name, kind, default))
    return tuple(out)


# --------------------------------------------------------------------------------------------
# The entries
# --------------------------------------------------------------------------------------------

def _qualified(f: Any) -> str:
    name = resolve_name(f)
    if name is None:
        mod = getattr(f, "__module__", None) or "torch"
        name = f"{mod}.{getattr(f, '__qualname__', getattr(f, '__name__', repr(f)))}"
    if name.startswith("torch._VariableFunctionsClass."):
        name = "torch." + f.__name__  # torch.segment_reduce, torch._assert_async
    return name


def entry_name(f: Any) -> str:
    """The public name an override entry is tested under: ``torch.add``, ``Tensor.add``,
    ``torch.nn.functional.relu``, ``torch.split`` (torch.functional's functions are torch's)."""
    name = _qualified(f)
    if name.endswith(".__get__"):  # a property's getter: the property (Tensor.T)
        name = name[: -len(".__get__")]
    if name.startswith("torch.Tensor."):
        return "Tensor." + name[len("torch.Tensor."):]
    if name.startswith("torch.functional."):
        return "torch." + name[len("torch.functional."):]
    return name


@functools.cache
def entries() -> dict[str, Any]:
    """{entry name: torch's callable (or descriptor, for Tensor's properties)}: every entry of
    ``get_testing_overrides()``, and the functions torch does not let a subclass override
    (``get_ignored_functions()``: the factories ``zeros``, ``randn``, ``arange``..., and a
    few more), which are public functions as well."""
    out: dict[str, Any] = {}
    for f in get_testing_overrides():
        name = entry_name(f)
        out.setdefault(name, f)
    for f in get_ignored_functions():
        if isinstance(f, type) or resolve_name(f) is None or entry_name(f).rsplit(".", 1)[
                -1].startswith("_"):
            continue  # classes (torch.device), private and protocol names (__torch_dispatch__)
        out.setdefault(entry_name(f), f)
    return out


def is_property(f: Any) -> bool:
    """A Tensor property (its getter is the override entry: ``Tensor.T.__get__``)."""
    return isinstance(f, (property, types.GetSetDescriptorType, types.MemberDescriptorType,
                          types.MethodWrapperType)) and getattr(f, "__name__", "") == "__get__"


def _takes_no_keywords(f: Any) -> bool:
    """torch says "takes no keyword arguments" (its arguments are positional only)."""
    try:
        f(__probe__=0)
    except TypeError as e:
        return "takes no keyword arguments" in str(e)
    except Exception:  # noqa: BLE001 - any other complaint: it looked at the keyword
        return False
    return False


def _takes_no_arguments(f: Any, method: bool = True) -> bool:
    """A built-in without a parser (``data_ptr``): torch says it takes no arguments."""
    try:
        f(torch.zeros(1), 0) if method else f(object())
    except TypeError as e:
        return "takes no arguments" in str(e)
    return False


def _builtin_module(f: Any) -> str:
    owner = getattr(f, "__self__", None)
    return getattr(owner, "__name__", "") if isinstance(owner, types.ModuleType) else ""


def _dispatched(f: Any) -> Any:
    """The function a boolean_dispatch calls (its ``if_false``), through nested dispatchers;
    None when ``f`` is none or the last one takes only ``*args, **kwargs``."""
    while isinstance(f, types.FunctionType) and f.__closure__ and "if_false" in (
            f.__code__.co_freevars):
        f = dict(zip(f.__code__.co_freevars, (c.cell_contents for c in f.__closure__),
                     strict=True))["if_false"]
        kinds = [p.kind for p in inspect.signature(f).parameters.values()]
        if kinds != [inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD]:
            return f
    return None


def _positional_names(overload: tuple[Param, ...]) -> tuple[str, ...]:
    return tuple(p.name for p in overload if p.kind in (POS, VAR))


def _parser_first(short: str, method: bool) -> tuple | None:
    """The overloads of a built-in of ``torch`` or ``Tensor`` from the parser's strings, which
    are exact; the stubs (generated from them, but not always right: ``requires_grad_(mode)``
    for torch's ``requires_grad``) decide which strings are the method's and which the
    function's where both have the name, and add what the parser leaves implicit: the
    ``*size`` form of a size argument. None when the parser has no string for the name (the
    stub's overloads are used as they are)."""
    functions, methods = stubs()
    parsed = [parse_parser_string(b) for b in parser_strings().get(short, ())]
    if method:
        theirs = {_positional_names(o) for o in functions.get(short, ())}
        mine = {_positional_names(o) for o in methods.get(short, ())}
        parsed = [o for o in parsed if not any(p.name == "input" for p in o)
                  and (_positional_names(o) in mine or _positional_names(o) not in theirs)]
        stub = methods.get(short, ())
    else:
        theirs = {_positional_names(o) for o in methods.get(short, ())}
        mine = {_positional_names(o) for o in functions.get(short, ())}
        parsed = [o for o in parsed if any(p.name == "input" for p in o)
                  or _positional_names(o) in mine
                  or (_positional_names(o) not in theirs and short not in methods)]
        stub = functions.get(short, ())
    if not parsed:
        return None
    varargs = [o for o in stub if any(p.kind == VAR for p in o)]
    return tuple(parsed + [o for o in varargs if o not in parsed])


def expected(name: str, f: Any) -> Expected | None:
    """torch's signature(s) for an entry; None for a property (no signature to compare)."""
    if is_property(f):
        return None
    method = name.startswith("Tensor.")
    if isinstance(f, functools._lru_cache_wrapper):
        f = f.__wrapped__  # torch.get_device_module
    wrapped = inspect.unwrap(f) if isinstance(f, types.FunctionType) else f
    if isinstance(wrapped, (types.BuiltinFunctionType, types.MethodDescriptorType)):
        f = wrapped  # a Python wrapper of a built-in (Tensor.__pow__ is TensorBase.pow)
    if isinstance(f, (types.FunctionType, types.MethodType)):
        sig = inspect.signature(f)
        params = from_inspect(sig, drop_first=method)
        if [p.kind for p in params] == [VAR, VAR]:
            # a dispatcher on a flag (boolean_dispatch: F.max_pool1d, torch.lu): the function
            # it calls; else (torch.unique) the signature the override documents
            inner = _dispatched(f)
            if inner is not None:
                return Expected((from_inspect(inspect.signature(inner)),), True, "dispatched")
            if f in get_testing_overrides():
                params = from_inspect(inspect.signature(get_testing_overrides()[f]))
                return Expected((params,), True, "documented")
        return Expected((params,), True, "python")
    short = getattr(f, "__name__", name.rsplit(".", 1)[-1])
    functions, methods = stubs()
    if method:
        found = methods.get(short)
        if found and isinstance(f, (types.WrapperDescriptorType, types.MethodWrapperType)):
            # a slot (__getitem__, __add__): called positionally only, whatever its names
            return Expected(tuple(tuple(Param(p.name, POSONLY if p.kind == POS else p.kind,
                                              p.default) for p in o) for o in found),
                            False, "stub")
        parsed = _parser_first(short, method=True)
        if parsed:
            return Expected(parsed, False, "parser")
        if found:
            return Expected(tuple(found), False, "stub")
        if short.startswith("__") and short.endswith("__"):  # a slot wrapper (__add__ & co.)
            return Expected(((Param("other", POS),),), False, "slot")
        bodies = [b for b in parser_strings().get(short, ()) if not b.startswith("Tensor input")]
        if bodies:
            return Expected(tuple(parse_parser_string(b) for b in bodies), False, "parser")
        if _takes_no_arguments(f):
            return Expected(((),), False, "no arguments")
    elif _builtin_module(f) in ("torch._C._nn", "torch._C._special", "torch._C._linalg",
                                "torch._C._fft") or short.startswith(("special_", "linalg_",
                                                                      "fft_")):
        bodies = parser_strings().get(short)
        if bodies:
            return Expected(tuple(parse_parser_string(b) for b in bodies), False, "parser")
    else:
        parsed = _parser_first(short, method=False)
        if parsed:
            return Expected(parsed, False, "parser")
        found = functions.get(short)
        if found:
            if _takes_no_keywords(f):  # a C function of positional arguments (METH_VARARGS)
                found = [tuple(Param(p.name, POSONLY if p.kind == POS else p.kind, p.default)
                               for p in o) for o in found]
            return Expected(tuple(found), False, "stub")
        if _takes_no_arguments(f, method=False):
            return Expected(((),), False, "no arguments")
        try:
            f()
        except TypeError as e:  # a C function of one argument, passed by position only
            if "takes exactly one argument (0 given)" in str(e):
                return Expected(((Param("arg", POSONLY),),), False, "one argument")
    raise LookupError(f"no signature source for {name} ({f!r})")


# --------------------------------------------------------------------------------------------
# Comparing a Python signature with torch's
# --------------------------------------------------------------------------------------------

def _usable(overloads: tuple, method: bool) -> list[tuple[Param, ...]]:
    """The overloads a call can reach by keyword: a function's stub overloads that name a
    parameter ``self`` (the deprecated ``add(self, alpha, other)`` order, ``where``'s scalar
    forms) are left out: torch's parser takes them positionally only."""
    if method:
        return list(overloads)
    return [o for o in overloads if not any(p.name == "self" for p in o)] or list(overloads)


# The NumPy names torch's argument parser takes for its own (torch.sum(x, axis=0)): a built-in
# may take them as keyword-only parameters defaulting to None.
NUMPY_ALIASES = {"axis": "dim", "keepdims": "keepdim", "x": "input", "a": "input",
                 "x1": "input", "x2": "other"}


def _dispatches(overloads: list) -> bool:
    """Several overloads that put different parameters at one position."""
    at: dict[int, set] = {}
    for o in overloads:
        for i, p in enumerate(q for q in o if q.kind in (POS, POSONLY)):
            at.setdefault(i, set()).add(p.name)
    return any(len(names) > 1 for names in at.values())


def mismatches(exp: Expected, ours: tuple[Param, ...], *, method: bool = False) -> list[str]:
    """How ``ours`` (a tapegrad signature, ``self`` dropped for methods) differs from torch's.

    torch's function written in Python: the same parameters, in the same order, of the same
    kinds, with the same defaults. A built-in with overloads (one Python signature cannot be
    several): every keyword torch takes, and no other; a parameter keyword-only in every
    overload keyword-only here too; at each position, a parameter some overload has there, and
    as many positions as torch takes; a default where some overload can leave the parameter
    out, equal to torch's where torch's overloads agree on one; ``*size`` where torch takes
    ``*size``.
    """
    if exp.exact:
        theirs = exp.overloads[0]
        if ours != theirs:
            return [f"torch {format_signature(theirs)} != tapegrad {format_signature(ours)}"]
        return []
    problems: list[str] = []
    overloads = _usable(exp.overloads, method)
    if any(keyword.iskeyword(p.name) for o in overloads for p in o):
        # a parameter named by a Python keyword (random_'s ``from``): Python can only take it
        # in **kwargs, and so the arguments around it in *args
        overloads = [tuple(p for p in o if not keyword.iskeyword(p.name)
                           and p.kind == KW) for o in overloads]
        ours = tuple(p for p in ours if p.kind == KW)
    varargs = {p.name for o in overloads for p in o if p.kind == VAR}
    our_by_name = {p.name: p for p in ours}
    our_var = [p for p in ours if p.kind == VAR and not p.name.startswith("**")]
    our_kwargs = any(p.name.startswith("**") for p in ours)
    our_pos = [p for p in ours if p.kind in (POS, POSONLY)]
    known = {p.name for o in overloads for p in o}
    lead = 0  # (parameters before the *args that every overload has there: randint_like's input)
    while lead < len(ours) and ours[lead].kind == POS and all(
            len(o) > lead and o[lead].name == ours[lead].name and o[lead].kind == POS
            for o in overloads):
        lead += 1
    rest = ours[lead:]
    if (len(rest) >= 2 and rest[0].kind == VAR and rest[-1].kind == VAR
            and _dispatches([o[lead:] for o in overloads])
            and all(p.kind == KW and p.name in known for p in rest[1:-1])):
        # a Python function that is torch's argument parser over overloads whose positions
        # take different things (Tensor.to's first: a dtype, a device or a tensor): it takes
        # *args (and torch's keyword-only names), **kwargs, and binds them as the parser does
        return []
    sequence_too = {p.name for o in overloads for p in o if p.kind == POS} & varargs
    if our_kwargs and not sequence_too:
        # (with *size, Python takes the size=(2, 3) form of torch's other overload only in
        # **kwargs: allowed there, and nowhere else)
        problems.append("takes **kwargs where torch names its keywords")
    if varargs:
        if [p.name for p in our_var] != sorted(varargs)[:1] or len(varargs) > 1:
            problems.append(f"torch takes *{'/'.join(sorted(varargs))}, tapegrad "
                            f"{'*' + our_var[0].name if our_var else 'no *args'}")
    elif our_var:
        problems.append(f"takes *{our_var[0].name}, torch does not")
    # every keyword torch takes (a *size overload's name is taken positionally only here)
    names: dict[str, list[Param]] = {}
    for o in overloads:
        for p in o:
            if p.kind not in (VAR, POSONLY):
                names.setdefault(p.name, []).append(p)
    for name, seen in names.items():
        if name in varargs:
            continue
        mine = our_by_name.get(name)
        if mine is None:
            problems.append(f"no parameter {name!r}")
            continue
        if mine.kind == VAR:
            continue
        if mine.kind == POSONLY:
            problems.append(f"{name!r} is a keyword in torch, positional-only here")
        if all(p.kind == KW for p in seen) and mine.kind != KW:
            problems.append(f"{name!r} is keyword-only in torch")
        if mine.kind == KW and any(p.kind == POS for p in seen) and len(overloads) == 1:
            # (with several overloads, a position may take one of several names: max's
            # second argument is dim or other; one Python name stands for them there)
            problems.append(f"{name!r} is positional in torch, keyword-only here")
        present_everywhere = len(seen) == len(overloads) and len(
            {o.index(p) for o in overloads for p in o if p.name == name}) == 1
        required = [p for p in seen if p.default is REQUIRED]
        defaults = {p.default for p in seen if p.default not in (REQUIRED, UNKNOWN)}
        if required and len(required) == len(seen) and present_everywhere:
            if mine.default is not REQUIRED:
                problems.append(f"{name!r} is required in torch, has default "
                                f"{mine.default!r} here")
            continue
        if mine.default is REQUIRED:
            problems.append(f"{name!r} is optional in torch, required here")
        elif defaults and mine.default not in defaults:
            want = " or ".join(repr(d) for d in sorted(defaults, key=repr))
            problems.append(f"{name!r} defaults to {want} in torch, {mine.default!r} here")
    slots = {i for o in overloads for i, p in enumerate(o) if p.kind == POSONLY}
    for i, p in enumerate(ours):
        alias = NUMPY_ALIASES.get(p.name)
        if alias in names and p.kind == KW and p.default is None:
            continue  # a NumPy name torch's parser takes for a parameter (axis for dim)
        if p.kind not in (VAR, POSONLY) and p.name not in names and p.name not in varargs and (
                i not in slots):
            problems.append(f"takes {p.name!r}, torch does not")
    # positions
    if not varargs:
        most = max((sum(p.kind in (POS, POSONLY) for p in o) for o in overloads), default=0)
        if len(our_pos) != most:
            problems.append(f"takes {len(our_pos)} positional arguments, torch {most}")
        for i, mine in enumerate(our_pos):
            at_i = [o_pos[i] for o in overloads
                    if len(o_pos := [p for p in o if p.kind in (POS, POSONLY)]) > i]
            there = {p.name for p in at_i}
            if at_i and all(p.kind == POSONLY for p in at_i):
                if mine.kind == POS and mine.name not in there:
                    problems.append(f"position {i} is {mine.name!r}, a keyword torch does not "
                                    "take (make it positional-only)")
                continue
            if there and mine.name not in there:
                problems.append(f"position {i} is {mine.name!r}, torch's "
                                f"{' or '.join(sorted(there))}")
    return problems
