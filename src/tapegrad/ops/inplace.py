"""The in-place variants (``x.acos_()``, ``x.cumsum_(0)``, ``torch.sin_(x)``) generated from their
out-of-place ops, in one table.

An in-place op computes what its out-of-place op computes and writes the result into the
tensor's own memory, with torch's rules:

* the version counter goes up by one (saved tensors of earlier nodes notice the change);
* a leaf that requires grad may not be modified in place;
* the result must fit the tensor's dtype: ``torch.arange(3).sqrt_()`` raises "result type Float
  can't be cast to the desired output type Long";
* the tensor's history becomes the op's node, named as torch names it (``x.acos_()`` shows
  ``AcosBackward0``; the in-place shape ops show the next overload: ``t_`` is ``TBackward1``).

Three kinds of entries:

* ``_values``: the out-of-place function runs on a snapshot of the old values (it keeps the
  tensor's place in the graph), and its result and node replace the tensor's (``acos_``,
  ``lerp_``, ``addmm_``, ...). On a view, the base's history becomes a ``CopySlices`` node.
* ``_compare``: ``eq_`` & co. write 0/1 in the tensor's dtype; the node (``EqBackward0``) passes
  a zero gradient back, as torch's does.
* ``_logical``: ``logical_and_`` & co. write 0/1 and keep the tensor's history unchanged (torch
  records no node for them).
* ``_restride``: the shape ops (``t_``, ``squeeze_``, ``transpose_``, ...) change the tensor's
  shape in place: it becomes the view the out-of-place op returns.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import _signatures
from .._tensor import Tensor
from ..autograd.grad_mode import _state
from . import elementwise as ew
from . import linalg as la
from . import reduction as rd
from . import shape as sh
from ._registry import OpNode, _snapshot, check_inplace, defop, write_into
from ._views import bump_version, rebase_history


def _records(target: Tensor, args: tuple, kwargs: dict) -> bool:
    """Will this in-place op be recorded in the graph?"""
    if not _state.enabled:
        return False
    if target.requires_grad:
        return True
    return any(isinstance(a, Tensor) and a.requires_grad
               for a in (*args, *kwargs.values()))


def _values(fn: Callable) -> Callable:
    """The in-place form of ``fn``: compute out of place, write into the tensor."""

    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        record = _records(self, args, kwargs)
        check_inplace(self, record)
        if not record:
            result = fn(self, *args, **kwargs)
            write_into(self, result._data)
            bump_version(self)
            _carry_tangent(self, result)
            return self
        result = fn(_snapshot(self), *args, **kwargs)
        return _take_history(self, result)

    return method


def _carry_tangent(target: Tensor, result: Tensor) -> None:
    """Forward-mode AD: the tensor written in place takes the result's tangent (zeros when the
    result has none, as after a comparison: a piecewise-constant op)."""
    tangent = result._fw_grad
    if tangent is None and target._fw_grad is None:
        return
    if tangent is None:
        tangent = Tensor._make(np.zeros(target._data.shape, target._data.dtype))
    elif tangent._data.dtype != target._data.dtype:
        tangent = Tensor._make(tangent._data.astype(target._data.dtype))
    target._fw_grad = tangent


def _take_history(target: Tensor, result: Tensor) -> Tensor:
    """Write ``result`` into ``target``; ``result``'s node becomes the target's history
    (``_views.rebase_history``: on a view, the base's becomes CopySlices)."""
    write_into(target, result._data)
    bump_version(target)
    _carry_tangent(target, result)
    node = result._grad_fn
    if node is None:
        return target
    counter = target._version_counter
    if isinstance(node, OpNode) and node._out is not None and target._base is None:
        node._out = (target._data, counter, counter.value) + tuple(node._out[3:])
    rebase_history(target, node, result._output_nr)
    return target


# -- comparisons: 0/1 in the tensor's dtype, a zero gradient (EqBackward0, ...) ---------------

def _comparison_op(name: str, node: str, ufunc: Callable) -> tuple:
    """Two entries: against a number (``EqBackward0``) and against a tensor (``EqBackward1``)."""

    @defop(f"{name}_inplace", node=f"{node}Backward1")
    def op(x: np.ndarray, other: np.ndarray) -> np.ndarray:  # 0/1, cast by write_into
        return np.asarray(ufunc(x, other))

    @defop(f"{name}_scalar_inplace", node=f"{node}Backward0")
    def op_scalar(x: np.ndarray, *, other: Any) -> np.ndarray:
        return np.asarray(ufunc(x, other))

    @op.backward
    def comparison_backward(ctx: Any, grad: Tensor) -> tuple:  # piecewise constant: d/dx = 0
        need_x, need_other = ctx.needs_input_grad
        return (grad * 0 if need_x else None), (grad * 0 if need_other else None)

    @op_scalar.backward
    def comparison_scalar_backward(ctx: Any, grad: Tensor) -> tuple:
        return (grad * 0,)

    return op, op_scalar


_CMP = {
    "eq": _comparison_op("eq", "Eq", np.equal),
    "ne": _comparison_op("ne", "Ne", np.not_equal),
    "lt": _comparison_op("lt", "Lt", np.less),
    "le": _comparison_op("le", "Le", np.less_equal),
    "gt": _comparison_op("gt", "Gt", np.greater),
    "ge": _comparison_op("ge", "Ge", np.greater_equal),
}


def _compare(name: str) -> Callable:
    out_of_place = getattr(ew, name)
    op, op_scalar = _CMP[name]

    def method(self: Tensor, other: Any) -> Tensor:
        result = out_of_place(self, other)  # torch's argument checks and messages
        record = _records(self, (other,), {})
        check_inplace(self, record)
        if not record:
            write_into(self, result._data)
            bump_version(self)
            _carry_tangent(self, result)
            return self
        if isinstance(other, Tensor):
            return _take_history(self, op(_snapshot(self), other))
        return _take_history(self, op_scalar(_snapshot(self), other=other))

    return method


# -- logical ops: 0/1 in the tensor's dtype, no node ------------------------------------------

def _logical(fn: Callable) -> Callable:
    def method(self: Tensor, *args: Any) -> Tensor:
        result = fn(self, *args)
        check_inplace(self, False)
        write_into(self, np.broadcast_to(result._data, self.shape))
        bump_version(self)
        return self

    return method


# -- shape ops: the tensor becomes the view (TBackward1, SqueezeBackward3, ...) ----------------

_RENAMED: dict[tuple[type, str], type] = {}


def _renamed(node: Any, name: str) -> Any:
    """``node`` shown under torch's name for the in-place overload (same rule, same slots)."""
    key = (type(node), name)
    cls = _RENAMED.get(key)
    if cls is None:
        cls = _RENAMED[key] = type(name, (type(node),), {"__slots__": ()})
    node.__class__ = cls
    return node


def _restride(fn: Callable, node_name: Callable[..., str]) -> Callable:
    """The in-place form of a view op: the tensor takes the view's shape and strides (still
    over the same memory, still a view if it was one), and the view's node as its history."""

    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        # (an inference tensor records nothing: outside inference mode, torch changes its
        # shape and raises only then, at the version bump)
        record = _state.enabled and self.requires_grad and not self._inference
        check_inplace(self, record)
        view = fn(self, *args, **kwargs)
        self._data = view._data
        bump_version(self)
        node = view._grad_fn
        if record and node is not None:
            self._grad_fn = _renamed(node, node_name(*args, **kwargs))
            self._output_nr = 0
            self._requires_grad = True
            if self._base is not None:  # the new grad_fn is for the version just made
                self._vv = self._vc.value  # type: ignore[union-attr]
        return self

    return method


def _squeeze_node(dim: Any = None) -> str:
    if dim is None:
        return "SqueezeBackward3"
    return "SqueezeBackward5" if isinstance(dim, (tuple, list)) else "SqueezeBackward4"


def _as_strided(self: Tensor, size: Any, stride: Any, storage_offset: Any = None) -> Tensor:
    return sh.as_strided(self, size, stride, storage_offset)


def _div(self: Tensor, other: Any, *, rounding_mode: Any = None) -> Tensor:
    return ew.div(self, other, rounding_mode=rounding_mode)


def _same_dtype_cumulative(fn: Callable) -> Callable:
    """``cumsum_``/``cumprod_`` accumulate in the tensor's own dtype unless told otherwise."""
    def cumulative(self: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
        return fn(self, dim, dtype=self.dtype if dtype is None else dtype)

    return cumulative


# the ops whose in-place form computes out of place and writes the values back
_OUT_OF_PLACE: dict[str, Callable] = {
    "absolute": ew.abs, "acos": ew.acos, "arccos": ew.acos, "asin": ew.asin,
    "arcsin": ew.asin, "atan": ew.atan, "arctan": ew.atan, "ceil": ew.ceil,
    "floor": ew.floor, "trunc": ew.trunc, "round": ew.round, "sign": ew.sign,
    "cosh": ew.cosh, "sinh": ew.sinh, "tan": ew.tan, "expm1": ew.expm1,
    "log10": ew.log10, "log1p": ew.log1p, "log2": ew.log2, "reciprocal": ew.reciprocal,
    "rsqrt": ew.rsqrt, "square": ew.square, "negative": ew.neg,
    "clamp_min": ew.clamp_min, "clamp_max": ew.clamp_max,
    "cumsum": _same_dtype_cumulative(rd.cumsum),
    "cumprod": _same_dtype_cumulative(rd.cumprod),
    "divide": _div, "true_divide": ew.div, "multiply": ew.mul, "subtract": ew.sub,
    "floor_divide": ew.floor_divide, "fmod": ew.fmod, "remainder": ew.remainder,
    "lerp": ew.lerp, "addcdiv": ew.addcdiv, "addcmul": ew.addcmul, "addmm": la.addmm,
    "tril": sh.tril, "triu": sh.triu,
}

# name -> the in-place form; every entry is a Tensor method (``x.name(...)``), taking the
# parameters of the out-of-place op it comes from (``x.addcmul_(tensor1=a, tensor2=b)``)
_FORMS: dict[str, tuple[Callable, Callable]] = {
    **{name + "_": (_values(fn), fn) for name, fn in _OUT_OF_PLACE.items()},
    **{name + "_": (_compare(op), getattr(ew, op)) for name, op in {
        "eq": "eq", "ne": "ne", "not_equal": "ne", "lt": "lt", "less": "lt", "le": "le",
        "less_equal": "le", "gt": "gt", "greater": "gt", "ge": "ge", "greater_equal": "ge",
    }.items()},
    **{name + "_": (_logical(getattr(ew, name)), getattr(ew, name)) for name in (
        "logical_and", "logical_or", "logical_xor", "logical_not")},
    "t_": (_restride(sh.t, lambda: "TBackward1"), sh.t),
    "transpose_": (_restride(sh.transpose, lambda d0, d1: "TransposeBackward1"), sh.transpose),
    "swapaxes_": (_restride(sh.transpose, lambda d0, d1: "TransposeBackward1"), sh.swapaxes),
    "swapdims_": (_restride(sh.transpose, lambda d0, d1: "TransposeBackward1"), sh.transpose),
    "squeeze_": (_restride(sh.squeeze, _squeeze_node), sh.squeeze),
    "unsqueeze_": (_restride(sh.unsqueeze, lambda dim: "UnsqueezeBackward1"), sh.unsqueeze),
    "as_strided_": (_restride(_as_strided, lambda *a, **k: "AsStridedBackward1"), _as_strided),
}
METHODS: dict[str, Callable] = {
    name: _signatures.calling(name, _signatures.params_of(template, drop_first=True), method,
                              first="self")
    for name, (method, template) in _FORMS.items()
}


def _function(name: str, method: Callable) -> Callable:
    """``torch.name(input, ...)``: the method ``input.name(...)``, with its parameters."""

    def call(input: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        return getattr(input, name)(*args, **kwargs)

    return _signatures.calling(name, _signatures.params_of(method, drop_first=True), call,
                               first="input")


# torch.abs_(x), torch.sin_(x), ...: the function forms torch exposes at top level (made from
# the finished Tensor class, whose methods give their parameters)
FUNCTION_NAMES = (
    "abs_ acos_ acosh_ arccos_ arccosh_ arcsin_ arcsinh_ arctan_ arctanh_ asin_ asinh_ atan_ "
    "atanh_ ceil_ clamp_ clamp_max_ clamp_min_ clip_ cos_ cosh_ deg2rad_ erf_ erfc_ exp2_ exp_ "
    "expm1_ fix_ floor_ frac_ gcd_ i0_ lcm_ ldexp_ log10_ log1p_ log2_ log_ logit_ nan_to_num_ "
    "neg_ negative_ rad2deg_ reciprocal_ relu_ round_ rsqrt_ sigmoid_ sin_ sinc_ sinh_ sqrt_ "
    "square_ tan_ tanh_ trunc_ xlogy_ detach_").split()


def functions(tensor: type) -> dict[str, Callable]:
    """``{name: torch.name}`` for ``FUNCTION_NAMES``, from ``tensor``'s methods."""
    return {name: _function(name, getattr(tensor, name)) for name in FUNCTION_NAMES}


__all__ = ["FUNCTION_NAMES", "METHODS", "functions"]
