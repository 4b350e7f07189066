"""``out=``: a function's result written into a tensor the caller gives, as torch's out variants do.

    out = torch.empty(3)
    torch.add(x, y, out=out)       # returns out, now holding x + y

Every public function that torch gives an ``out=`` gets it here, in one place: ``install``
replaces the namespace's function by one made from it (``out_variant``) with the same
parameters plus a keyword-only ``out=None``::

    def add(input, other, *, alpha=1, out=None):
        if out is None:
            return _fn(input, other, alpha=alpha)         # the function itself, unchanged
        _a = (input, other, alpha)
        _check("add", out, _a)                           # torch's autograd error
        return _write("add", out, _fn(input, other, alpha=alpha), _a)

so a call without ``out`` runs the function as before (no check, no copy), and the method form
(``x.add(y)``, which has no ``out`` in torch either) is the function itself. With ``out``:

* grad mode on and an input (or ``out``) requiring grad: torch's RuntimeError, "functions with
  out=... arguments don't support automatic differentiation"; a dual tensor of forward-mode AD
  among them: torch's NotImplementedError, "Trying to use forward AD with add_out";
* the result's dtype must cast to ``out``'s without going down a category (float into int:
  "result type Float can't be cast to the desired output type Long"), or be ``out``'s
  exactly (products, factorizations, the values and indices of ``sort``...), or anything for
  the reductions that cast (``sum``); a few functions have messages of their own (``rule``);
* ``out`` of another shape is resized (with torch's deprecation warning when it held elements);
  ``out`` whose elements overlap (an expanded tensor) is refused;
* the values are written into ``out``'s memory (its strides kept), its version counter is
  bumped, and ``out`` is returned (a tuple ``out`` for several results: ``max``'s, ``sort``'s, as
  torch's ``return_types.<name>_out``).

The functions that take their ``out`` at another place than the end (``torch.norm``'s is
positional, as in torch) declare it and call ``write`` themselves.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from . import _signatures, return_types
from ._dtype import cpp_type_name, scalar_type_name
from ._tensor import Tensor, _above
from .autograd.grad_mode import _state

AUTOGRAD_MESSAGE = ("{}(): functions with out=... arguments don't support automatic "
                    "differentiation, but one of the arguments requires grad.")
FORWARD_AD_MESSAGE = ("Trying to use forward AD with {}_out that does not support it because "
                      "it is an out= function")
RESIZE_WARNING = (
    "An output with one or more elements was resized since it had shape {}, which does not match "
    "the required output shape {}. This behavior is deprecated, and in a future PyTorch release "
    "outputs will not be resized unless they have zero elements. You can explicitly reuse an out "
    "tensor t by resizing it, inplace, to zero elements with t.resize_(0).")
OVERLAP_MESSAGE = (
    "unsupported operation: more than one element of the written-to tensor refers to a single "
    "memory location. Please clone() the tensor before performing the operation.")
INPUT_OVERLAP = (
    "unsupported operation: some elements of the input tensor and the written-to tensor refer "
    "to a single memory location. Please clone() the tensor before performing the operation.")


def _requires_grad(value: Any) -> bool:
    if isinstance(value, Tensor):
        return value._requires_grad
    if isinstance(value, (list, tuple)):
        return any(_requires_grad(v) for v in value)
    if isinstance(value, dict):
        return any(_requires_grad(v) for v in value.values())
    return False


def _has_tangent(value: Any) -> bool:
    if isinstance(value, Tensor):
        return value._fw_grad is not None
    if isinstance(value, (list, tuple)):
        return any(_has_tangent(v) for v in value)
    return False


def check(name: str, out: Any, args: Iterable[Any]) -> None:
    """torch's autograd errors, raised before the function runs: grad mode on, and an input
    or ``out`` requires grad; or an input or ``out`` is a dual tensor of forward-mode AD."""
    args = tuple(args)
    if _state.enabled and (_requires_grad(out) or any(_requires_grad(a) for a in args)):
        raise RuntimeError(AUTOGRAD_MESSAGE.format(name))
    if _has_tangent(out) or any(_has_tangent(a) for a in args):
        raise NotImplementedError(FORWARD_AD_MESSAGE.format(name))


def _type_name(value: Any) -> str:
    return type(value).__name__


# torch's out variants differ in a few rules, declared next to each function by ``rule``:
# a check of its own (a dtype out must have, in that function's words), which dtypes out may
# have, and whether out may share memory with an input at all (cat, gather, index_select...:
# not even be one).
_CHECKS: dict[str, Callable[[tuple, Any], None]] = {}
_NO_OVERLAP: set[str] = set()
_DTYPE: dict[str, str] = {}
# the factories that resize out without torch's warning, and those (arange's) that warn only
# when out has another number of elements, in words of their own
_SILENT_RESIZE = {"zeros", "ones", "empty", "eye", "full", "linspace", "logspace", "range"}
_RESIZE_BY_COUNT = {"arange", "fft_fftfreq", "fft_rfftfreq"}


def rule(*names: str, check: Callable[[tuple, Any], None] | None = None,
         no_overlap: bool = False, dtype: str | None = None) -> None:
    """Declare the out rules of the functions ``names`` (as torch's messages name them):
    ``check(args, out)`` runs first (``args``: the call's arguments in order); ``no_overlap``
    refuses an out sharing any memory with an input tensor; ``dtype`` says which dtypes out
    may have: ``"cast"`` (the default, an elementwise op's: one the result casts to without
    going down a category), ``"exact"`` (the result's: products, factorizations, softmax) or
    ``"any"`` (sum, prod, cumsum: any dtype, the result cast to it). Several results (values
    and indices) default to ``"exact"``."""
    for name in names:
        if check is not None:
            _CHECKS[name] = check
        if no_overlap:
            _NO_OVERLAP.add(name)
        if dtype is not None:
            _DTYPE[name] = dtype


def _tensors(value: Any) -> Iterable[Tensor]:
    if isinstance(value, Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _tensors(v)


def _check_overlap(name: str, dst: np.ndarray, args: tuple, out: Any = None) -> None:
    """torch refuses an out that partly overlaps an input (an out that is the input itself is
    fine: the result is computed first), or, for ``rule(no_overlap=True)``, any overlap (the
    out being an input too, even an empty one)."""
    strict = name in _NO_OVERLAP
    for t in _tensors(args):
        if strict and t is out:
            raise RuntimeError(INPUT_OVERLAP)
        a = t._data
        if not np.shares_memory(dst, a):
            continue
        same = (a.__array_interface__["data"][0] == dst.__array_interface__["data"][0]
                and a.shape == dst.shape and a.strides == dst.strides)
        if strict or not same:
            raise RuntimeError(INPUT_OVERLAP)


def _reach(dst: np.ndarray, n: int) -> np.ndarray:
    """The memory ``dst`` will be written in for ``n`` elements: its own, or when it must
    grow, its storage from its first element on (torch resizes the storage in place, so a
    grown out may reach an input that shares it)."""
    if dst.size >= n:
        return dst
    data, offset = _above.storage_bytes(dst)  # (the storage surface's, _storage.py)
    return data[offset:offset + n * dst.itemsize]


def _write_one(name: str, out: Any, result: Tensor, args: tuple, policy: str) -> None:
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {_type_name(out)}")
    have, want = out.dtype, result.dtype
    if policy == "exact" and have is not want:
        raise RuntimeError(f"Expected out tensor to have dtype {cpp_type_name(want)}, but got "
                           f"{cpp_type_name(have)} instead")
    if policy == "cast" and want._rank > have._rank:  # float into int, complex into float
        raise RuntimeError(f"result type {scalar_type_name(want)} can't be cast to the desired "
                           f"output type {scalar_type_name(have)}")
    shape = tuple(result.shape)
    if name in _RESIZE_BY_COUNT and out._data.size == result._data.size:
        result = result.reshape(out.shape)  # (as many elements: out keeps its shape)
        shape = tuple(out.shape)
    if tuple(out.shape) != shape and out._data.size and name not in _SILENT_RESIZE:
        if name not in _RESIZE_BY_COUNT:
            _warn_resize(out, shape)  # (torch warns, then finds any overlap)
        elif out._data.size != result._data.size:
            n = result._data.size
            warnings.warn(f"The number of elements in the out tensor of shape {list(out.shape)} "
                          f"is {out._data.size} which does not match the computed number of "
                          f"elements {n}. Note that this may occur as a result of rounding "
                          f"error. The out tensor will be resized to a tensor of shape ({n},).",
                          UserWarning, stacklevel=4)
    _check_overlap(name, _reach(out._data, result._data.size), args, out)
    prepare(out, shape, warn=False)
    src = result if have is want else result.to(have)
    np.copyto(out._data, src._data, casting="unsafe")
    out._version_counter.value += 1


def _warn_resize(out: Tensor, shape: tuple) -> None:
    warnings.warn(RESIZE_WARNING.format(list(out.shape), list(shape)), UserWarning,
                  stacklevel=5)


def prepare(out: Tensor, shape: tuple, warn: bool = False) -> None:
    """Ready ``out`` for a result of ``shape``: refused when its elements overlap (an expanded
    tensor), resized when its shape differs (with torch's deprecation warning when it held
    elements and ``warn``: the factories that fill ``out``, ``zeros``, ``randn``..., resize
    it silently)."""
    dst = out._data
    if any(s == 0 and n > 1 for s, n in zip(dst.strides, dst.shape, strict=True)):
        raise RuntimeError(OVERLAP_MESSAGE)
    if tuple(out.shape) != shape:
        if warn and dst.size:
            _warn_resize(out, shape)
        grad = out._requires_grad
        out._requires_grad = False  # (a leaf that requires grad, under no_grad: resized too)
        _above.resize_(out, shape)  # (Tensor.resize_, _storage.py)
        out._requires_grad = grad


def write(name: str, out: Any, result: Any, args: tuple = ()) -> Any:
    """Write ``result`` (a tensor, or a tuple of them) into ``out``; return what torch returns:
    ``out``, or for several results the ``return_types.<name>_out`` of the ``out`` tensors.
    ``args`` are the call's arguments (its input tensors among them)."""
    check_own = _CHECKS.get(name)
    if check_own is not None:
        check_own(args, out)
    if isinstance(result, Tensor):
        _write_one(name, out, result, args, _DTYPE.get(name, "cast"))
        return out
    if not isinstance(out, (tuple, list)):
        raise TypeError(f"{name}(): argument 'out' must be tuple of Tensors, not "
                        f"{_type_name(out)}")
    if len(out) != len(result):
        raise TypeError(f"expected tuple of {len(result)} elements but got {len(out)}")
    for o, r in zip(out, result, strict=True):  # (values and indices: the dtypes made)
        _write_one(name, o, r, args, _DTYPE.get(name, "exact"))
    kind: Any = return_types.out_type(type(result))
    return kind.of(*out) if kind is not None else tuple(out)


# --------------------------------------------------------------------------------------------
# The generated functions
# --------------------------------------------------------------------------------------------

def factory_dtype(out: Any, dtype: Any) -> Any:
    """A factory's dtype given ``out``: out's, which an explicit ``dtype`` must equal."""
    if not isinstance(out, Tensor):
        return dtype
    if dtype is None:
        return out.dtype
    if dtype is not out.dtype:
        raise RuntimeError(f"dtype {scalar_type_name(dtype)} does not match dtype of out "
                           f"parameter ({scalar_type_name(out.dtype)})")
    return dtype


def out_variant(fn: Callable, name: str, factory: bool = False) -> Callable:
    """``fn`` with a keyword-only ``out=None`` (see the module docstring); ``name`` is the one
    torch's messages give the function (``add``, ``linalg_inv``). A ``factory`` (``zeros``,
    ``randn``, ``arange``) makes its values in ``out``'s dtype, and has no inputs to check."""
    params = _signatures.params_of(fn)
    out = inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None)
    at = len(params)
    if params and params[-1].kind == inspect.Parameter.VAR_KEYWORD:
        at -= 1
    with_out = [*params[:at], out, *params[at:]]
    head = "    if out is None:\n        return _fn({call})\n"
    if factory:
        dtype = "    dtype = _factory_dtype(out, dtype)\n" if "dtype" in inspect.signature(
            fn).parameters else ""
        body = (f"{dtype}    _check('aten::{name}', out, ())\n"
                f"    return _write({name!r}, out, _fn({{call}}))\n")
    else:
        body = (f"    _a = ({{names}},)\n"
                f"    _check({name!r}, out, _a)\n"
                f"    return _write({name!r}, out, _fn({{call}}), _a)\n")
    made = _signatures.make(fn.__name__, with_out, head + body,
                            {"_fn": fn, "_check": check, "_write": write,
                             "_factory_dtype": factory_dtype},
                            qualname=fn.__qualname__, module=fn.__module__, doc=fn.__doc__,
                            passed=("out",))
    return made


def install(namespace: dict, names: str, prefix: str = "", factory: bool = False) -> None:
    """Give each function of ``namespace`` (a module's globals) named in ``names`` (separated
    by spaces) its ``out=``; ``prefix`` is what torch's messages put before the name
    (``linalg_``, ``special_``, ``fft_``)."""
    for name in names.split():
        fn = namespace[name]
        if "out" in inspect.signature(fn).parameters:
            raise TypeError(f"{name} already takes out=: it writes it itself")
        namespace[name] = out_variant(fn, prefix + name, factory)
