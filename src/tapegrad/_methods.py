"""The method forms of the functional ops: ``x.exp()`` is ``tapegrad.exp(x)``.

``_attach`` puts every entry of ``METHODS`` on Tensor when ``tapegrad`` is imported, so the
class body stays about the tensor itself while each op keeps one definition in ``ops/``.
"""

from __future__ import annotations

import inspect
from typing import Any

from . import _conversions, _signatures
from ._creation import from_numpy
from ._tensor import Tensor
from .ops import (
    activations,
    calculus,
    elementwise_math,
    hashing,
    histograms,
    inplace,
    norms,
    sorting,
    spectral,
    statistics,
    view_copies,
    view_scatter,
)
from .ops import decompositions as dc
from .ops import elementwise as ew
from .ops import factorizations as fz
from .ops import indexing as ix
from .ops import linalg as la
from .ops import linalg_legacy as lg
from .ops import reduction as rd
from .ops import scatter as sc
from .ops import shape as sh
from .ops import shape_composite as shc
from .ops import solvers as sv
from .ops import special as sp
from .ops._registry import apply_

# The methods that take a size as separate ints or one sequence: x.view(2, 3), x.view((2, 3)),
# and by keyword, x.view(size=(2, 3)) (torch's other overload: Python takes it in **kwargs).

def _one(name: str, given: tuple, kwargs: dict, key: str) -> tuple:
    """The ints of a ``*size`` method, given positionally or as ``key=`` (``dim=`` also as
    NumPy's ``axis=``, as torch's parser takes it: ``_numpy_names``)."""
    if key == "dim" and "axis" in kwargs and "dim" not in kwargs:
        kwargs = {("dim" if k == "axis" else k): v for k, v in kwargs.items()}
    if kwargs:
        if given or set(kwargs) != {key}:
            raise TypeError(f"{name}() got an unexpected keyword argument "
                            f"'{next(k for k in kwargs if k != key or given)}'")
        return (kwargs[key],)
    return given


def _view(self: Any, *size: Any, dtype: Any = None, **kwargs: Any) -> Any:
    if dtype is not None:
        return sh.view(self, dtype)
    return sh.view(self, *_one("view", size, kwargs, "size"))


def _reshape(self: Any, *shape: Any, **kwargs: Any) -> Any:
    return sh.reshape(self, *_one("reshape", shape, kwargs, "shape"))


def _permute(self: Any, *dims: Any, **kwargs: Any) -> Any:
    return sh.permute(self, *_one("permute", dims, kwargs, "dims"))


def _expand(self: Any, *size: Any, implicit: bool = False, **kwargs: Any) -> Any:
    return sh.expand(self, *_one("expand", size, kwargs, "size"))


def _repeat(self: Any, *repeats: Any, **kwargs: Any) -> Any:
    return sh.repeat(self, *_one("repeat", repeats, kwargs, "repeats"))


def _flip(self: Any, *dims: Any, **kwargs: Any) -> Any:
    return sh.flip(self, *_one("flip", dims, kwargs, "dims"))


def _split(self: Any, split_size: Any, dim: int = 0) -> Any:
    return sh.split(self, split_size, dim)


def _max(self: Any, dim: Any = None, keepdim: bool = False, *, other: Any = None) -> Any:
    return rd.max(self, dim, keepdim, other=other)


def _min(self: Any, dim: Any = None, keepdim: bool = False, *, other: Any = None) -> Any:
    return rd.min(self, dim, keepdim, other=other)


def _masked_fill(self: Any, mask: Any, value: Any) -> Any:
    return ix.masked_fill(self, mask, value)


def _index_put(self: Any, indices: Any, values: Any, accumulate: bool = False) -> Any:
    return ix.index_put(self, indices, values, accumulate)


def _special_methods() -> dict[str, Any]:
    """x.erf(), x.lgamma(), x.polygamma(n), ... and their in-place forms (x.erf_())."""
    def inplace(op: Any, **fixed: Any) -> Any:
        def method(self: Any, *args: Any) -> Any:
            return apply_(op, self, *args, **fixed)

        return method

    def polygamma_(self: Any, n: int) -> Any:
        return apply_(sp._polygamma, self, n=int(n))

    def mvlgamma_(self: Any, p: int) -> Any:
        return apply_(sp._mvlgamma, self, p=int(p))

    def logit_(self: Any, eps: Any = None) -> Any:
        return apply_(sp._logit, self) if eps is None else apply_(sp._logit, self,
                                                                   eps=float(eps))

    out: dict[str, Any] = {
        "erf": sp.erf, "erfc": sp.erfc, "erfinv": sp.erfinv, "lgamma": sp.lgamma,
        "digamma": sp.digamma, "i0": sp.i0, "sinc": sp.sinc, "logit": sp.logit,
        "xlogy": sp.xlogy, "mvlgamma": sp.mvlgamma,
        "polygamma": lambda self, n: sp.polygamma(n, self),
        "polygamma_": polygamma_, "mvlgamma_": mvlgamma_, "logit_": logit_,
        "xlogy_": lambda self, other: apply_(sp._xlogy, self, other),
    }
    for name, op in (("erf", sp._erf), ("erfc", sp._erfc), ("erfinv", sp._erfinv),
                     ("lgamma", sp._lgamma), ("digamma", sp._digamma), ("i0", sp._i0),
                     ("sinc", sp._sinc)):
        out[name + "_"] = inplace(op)
    return out


METHODS: dict[str, Any] = {
    # elementwise
    "add": ew.add, "sub": ew.sub, "subtract": ew.sub, "mul": ew.mul, "multiply": ew.mul,
    "div": ew.div, "divide": ew.div, "true_divide": ew.div, "pow": ew.pow, "neg": ew.neg,
    "negative": ew.neg, "reciprocal": ew.reciprocal, "remainder": ew.remainder,
    "fmod": ew.fmod, "floor_divide": ew.floor_divide, "square": ew.square,
    "exp": ew.exp, "log": ew.log, "log2": ew.log2, "log10": ew.log10, "log1p": ew.log1p,
    "expm1": ew.expm1, "sqrt": ew.sqrt, "rsqrt": ew.rsqrt, "sin": ew.sin, "cos": ew.cos,
    "tan": ew.tan, "tanh": ew.tanh, "asin": ew.asin, "acos": ew.acos, "atan": ew.atan,
    "sinh": ew.sinh, "cosh": ew.cosh, "sigmoid": ew.sigmoid, "relu": ew.relu, "abs": ew.abs,
    "absolute": ew.abs, "sign": ew.sign, "floor": ew.floor, "ceil": ew.ceil,
    "round": ew.round, "trunc": ew.trunc, "clamp": ew.clamp, "clip": ew.clamp,
    "clamp_min": ew.clamp_min, "clamp_max": ew.clamp_max, "maximum": ew.maximum,
    "minimum": ew.minimum, "where": lambda self, condition, other: ew.where(condition, self,
                                                                             other),
    "lerp": ew.lerp, "addcmul": ew.addcmul, "addcdiv": ew.addcdiv,
    "eq": ew.eq, "ne": ew.ne, "lt": ew.lt, "le": ew.le, "gt": ew.gt, "ge": ew.ge,
    "greater": ew.gt, "greater_equal": ew.ge, "less": ew.lt, "less_equal": ew.le,
    "not_equal": ew.ne, "logical_and": ew.logical_and, "logical_or": ew.logical_or,
    "logical_xor": ew.logical_xor, "logical_not": ew.logical_not, "isnan": ew.isnan,
    "isinf": ew.isinf, "isfinite": ew.isfinite, "signbit": ew.signbit,
    "bitwise_not": lambda self: ew.bitwise("invert", self),
    "bitwise_and": lambda self, other: ew.bitwise("and", self, other),
    "bitwise_or": lambda self, other: ew.bitwise("or", self, other),
    "bitwise_xor": lambda self, other: ew.bitwise("xor", self, other),
    # reductions
    "sum": rd.tensor_sum, "nansum": rd.nansum, "mean": rd.mean, "prod": rd.prod, "max": _max,
    "min": _min, "amax": rd.amax, "amin": rd.amin, "argmax": rd.argmax, "argmin": rd.argmin,
    "var": rd.var, "std": rd.std, "norm": rd.norm, "logsumexp": rd.logsumexp,
    "cumsum": rd.cumsum, "cumprod": rd.cumprod, "softmax": rd.softmax,
    "log_softmax": rd.log_softmax, "sort": rd.sort, "argsort": rd.argsort, "topk": rd.topk,
    "all": rd.all, "any": rd.any, "count_nonzero": rd.count_nonzero,
    # linear algebra
    "matmul": la.matmul, "mm": la.mm, "bmm": la.bmm, "mv": la.mv, "dot": la.dot,
    "inner": la.dot, "outer": la.outer, "ger": la.outer, "addmm": la.addmm,
    # shape
    "view": _view, "view_as": lambda self, other: sh.view(self, other.shape),
    "reshape": _reshape, "reshape_as": lambda self, other: sh.reshape(
        self, other.shape), "flatten": sh.flatten, "unflatten": sh.unflatten,
    "squeeze": sh.squeeze, "unsqueeze": sh.unsqueeze, "permute": _permute,
    "movedim": sh.movedim, "moveaxis": sh.movedim, "transpose": sh.transpose,
    "swapaxes": sh.transpose, "swapdims": sh.transpose, "t": sh.t,
    "expand": _expand, "expand_as": sh.expand_as,
    "broadcast_to": sh.broadcast_to, "repeat": _repeat,
    "repeat_interleave": sh.repeat_interleave, "flip": _flip,
    "fliplr": sh.fliplr, "flipud": sh.flipud, "roll": sh.roll, "tril": sh.tril,
    "triu": sh.triu, "split": _split, "chunk": sh.chunk, "tensor_split": sh.tensor_split,
    "unbind": sh.unbind, "select": sh.select, "narrow": sh.narrow, "as_strided": sh.as_strided,
    # indexing
    "gather": ix.gather, "scatter": ix.scatter, "scatter_add": ix.scatter_add,
    "index_select": ix.index_select, "masked_fill": _masked_fill,
    "masked_select": sc.masked_select, "index_put": _index_put, "nonzero": ix.nonzero,
    "take": sc.take, "take_along_dim": ix.take_along_dim,
}
METHODS.update(_special_methods())


def _math_methods() -> dict[str, Any]:
    """x.atan2(y), x.hypot(y), x.gcd(y), ... (ops/elementwise_math.py) and in-place forms."""
    return elementwise_math.METHODS


METHODS.update(_math_methods())


def _shape_composite_methods() -> dict[str, Any]:
    """x.diagonal(), x.tile(...), x.ravel(), x.hsplit(...), ... (ops/shape_composite.py)."""
    return {"diagonal": shc.diagonal, "diag_embed": shc.diag_embed, "diag": shc.diag,
            "diagflat": shc.diagflat, "trace": shc.trace, "rot90": shc.rot90,
            "ravel": shc.ravel,
            "tile": lambda self, *dims: shc.tile(self, dims[0] if len(dims) == 1 else dims),
            "hsplit": shc.hsplit, "vsplit": shc.vsplit, "dsplit": shc.dsplit,
            "argwhere": shc.argwhere, "nanmean": rd.nanmean}


METHODS.update(_shape_composite_methods())


def _inplace_methods() -> dict[str, Any]:
    """x.acos_(), x.eq_(y), x.t_(), ...: the in-place table of ops/inplace.py."""
    return inplace.METHODS


METHODS.update(_inplace_methods())


def _hardshrink(self: Any, lambd: float = 0.5) -> Any:
    return activations._hardshrink(self, lambd=lambd)


def _prelu(self: Any, weight: Any) -> Any:
    # upward: prelu's argument checks live in nn.functional, in the libraries layer
    from .nn import functional

    return functional.prelu(self, weight)


# x.hardshrink(lambd), x.prelu(weight): nn ops torch also has as Tensor methods
METHODS.update({"hardshrink": _hardshrink, "prelu": _prelu})


def _igamma_methods() -> dict[str, Any]:
    """x.igamma(y), x.igammac(y) and their in-place forms."""
    return {"igamma": sp.igamma, "igammac": sp.igammac, "igamma_": sp.igamma_,
            "igammac_": sp.igammac_}


METHODS.update(_igamma_methods())


def _scatter_methods() -> dict[str, Any]:
    """x.index_add(...), x.scatter_reduce(...), x.put_(...), x.select_scatter(...), ...
    (ops/scatter.py, ops/view_scatter.py)."""
    return {**sc.METHODS, **view_scatter.METHODS}


METHODS.update(_scatter_methods())


def _sorting_methods() -> dict[str, Any]:
    """x.sort(), x.topk(k), x.median(dim), x.cummax(dim), x.unique(), ... (ops/sorting.py)."""
    return sorting.METHODS


METHODS.update(_sorting_methods())


def _histogram_methods() -> dict[str, Any]:
    """x.histc(...), x.histogram(...), x.bincount() (ops/histograms.py)."""
    return histograms.METHODS


METHODS.update(_histogram_methods())


def _statistics_methods() -> dict[str, Any]:
    """x.quantile(q), x.nanquantile(q) (ops/statistics.py)."""
    return statistics.METHODS


METHODS.update(_statistics_methods())


def _view_copy_methods() -> dict[str, Any]:
    """x.unfold(...), x.split_with_sizes(...), x.sum_to_size(...) (ops/view_copies.py)."""
    return view_copies.METHODS


METHODS.update(_view_copy_methods())


def _spectral_methods() -> dict[str, Any]:
    """x.stft(n_fft, ...), x.istft(n_fft, ...) (ops/spectral.py)."""
    return spectral.METHODS


METHODS.update(_spectral_methods())


def _linalg_methods() -> dict[str, Any]:
    """x.det(), x.inverse(), x.svd(), x.pinverse(), x.addmv(...), ... and the in-place forms
    of the fused products (ops/solvers.py, decompositions.py, linalg_legacy.py, linalg.py)."""
    def fused_(op: Any, check: Any) -> Any:
        def method(self: Any, a: Any, b: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
            check(op.name, self, beta, alpha)
            return apply_(op, self, a, b, beta=beta, alpha=alpha)

        return method

    def addr_(self: Any, a: Any, b: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
        la.addr(self, a, b, beta=beta, alpha=alpha)  # torch's checks
        return apply_(la._addr, self, a, b, beta=beta, alpha=alpha)

    check = la._check_fused_args
    return {"det": sv.torch_det, "logdet": sv.logdet, "slogdet": sv.torch_slogdet,
            "inverse": sv.inverse, "pinverse": sv.pinverse,
            "cholesky_inverse": sv.cholesky_inverse, "cholesky_solve": sv.cholesky_solve,
            "triangular_solve": sv.triangular_solve, "svd": dc.torch_svd, "lu": dc.torch_lu,
            "lu_solve": dc.torch_lu_solve, "qr": lg.qr, "cholesky": lg.cholesky,
            "matrix_power": lg.matrix_power, "ormqr": lg.ormqr, "geqrf": fz.geqrf,
            "orgqr": fz.householder_product, "matrix_exp": fz.matrix_exp,
            "addmv": la.addmv, "addr": la.addr, "addbmm": la.addbmm, "baddbmm": la.baddbmm,
            "addmv_": fused_(la._addmv, check), "addbmm_": fused_(la._addbmm, check),
            "baddbmm_": fused_(la._baddbmm, check), "addr_": addr_, "inner": la.inner}


METHODS.update(_linalg_methods())


def _math_ops_methods() -> dict[str, Any]:
    """x.diff(), x.kron(y), x.cross(y), x.vdot(y), x.dist(y), x.renorm(...), x.renorm_(...)
    (ops/calculus.py, shape_composite.py, linalg.py, norms.py), and x.eig(), x.symeig(),
    x.lstsq(A), x.solve(A), which raise torch's "removed" error (ops/linalg_legacy.py)."""
    return {**calculus.METHODS, **norms.METHODS, **lg.REMOVED_METHODS, "kron": shc.kron,
            "cross": la.torch_cross, "vdot": la.vdot}


METHODS.update(_math_ops_methods())


def _conversion_methods() -> dict[str, Any]:
    """x.float(), x.double(), x.long(), x.bool(), ... (the shorthands of ``to``,
    _conversions.py)."""
    return _conversions.SHORTHANDS


METHODS.update(_conversion_methods())


def _hashing_methods() -> dict[str, Any]:
    """x.hash_tensor(dim) (ops/hashing.py)."""
    return hashing.METHODS


METHODS.update(_hashing_methods())


# ---------------------------------------------------------------------------------------------
# The methods' faces: where a method takes other parameters than the function it calls (torch
# names them per method: x.dot(tensor), x.swapaxes(axis0, axis1); a size as ints or one
# sequence: x.squeeze(0, 1)), a small function with torch's parameters calls the function.
# ---------------------------------------------------------------------------------------------

def _faces() -> dict[str, Any]:
    def broadcast_to(self: Any, *size: Any, **kwargs: Any) -> Any:
        return sh.broadcast_to(self, _one("broadcast_to", size, kwargs, "size"))

    def count_nonzero(self: Any, *dim: Any, **kwargs: Any) -> Any:
        dims = _one("count_nonzero", dim, kwargs, "dim")
        return rd.count_nonzero(self, None if not dims else dims[0] if len(dims) == 1 else dims)

    def hash_tensor(self: Any, *dim: Any, keepdim: bool = False, mode: int = 0,
                    **kwargs: Any) -> Any:
        dims = _one("hash_tensor", dim, kwargs, "dim")
        return hashing.hash_tensor(self, None if not dims else dims[0] if len(dims) == 1
                                   else dims, keepdim=keepdim, mode=mode)

    def squeeze(self: Any, *dim: Any, **kwargs: Any) -> Any:
        dims = _one("squeeze", dim, kwargs, "dim")
        return sh.squeeze(self, None if not dims else dims[0] if len(dims) == 1 else dims)

    def squeeze_(self: Any, *dim: Any, **kwargs: Any) -> Any:
        dims = _one("squeeze_", dim, kwargs, "dim")
        return _SQUEEZE_(self, None if not dims else dims[0] if len(dims) == 1 else dims)

    def split_face(name: str, fn: Any) -> Any:
        def method(self: Any, *indices: Any, sections: Any = None, **kwargs: Any) -> Any:
            if sections is not None:
                return fn(self, sections)
            given = _one(name, indices, kwargs, "indices")
            return fn(self, given[0] if len(given) == 1 else list(given))

        method.__name__ = name
        return method

    def tensor_split(self: Any, sections: Any = None, dim: int = 0, *, indices: Any = None,
                     tensor_indices_or_sections: Any = None) -> Any:
        for given in (indices, tensor_indices_or_sections):
            if given is not None:
                sections = given
        return sh.tensor_split(self, sections, dim)

    def repeat_interleave(self: Any, repeats: Any, dim: Any = None, *,
                          output_size: Any = None) -> Any:
        return sh.repeat_interleave(self, repeats, dim, output_size=output_size)

    def swapaxes(self: Any, axis0: int, axis1: int) -> Any:
        return sh.transpose(self, axis0, axis1)

    def swapaxes_(self: Any, axis0: int, axis1: int) -> Any:
        return _SWAPAXES_(self, axis0, axis1)

    def dot(self: Any, tensor: Any) -> Any:
        return la.dot(self, tensor)

    def softmax(self: Any, dim: Any, dtype: Any = None) -> Any:
        return rd.softmax(self, dim, dtype)

    def log_softmax(self: Any, dim: Any, dtype: Any = None) -> Any:
        return rd.log_softmax(self, dim, dtype)

    def subtract(self: Any, other: Any, alpha: Any = 1) -> Any:
        return ew.sub(self, other, alpha=alpha)

    def subtract_(self: Any, other: Any, alpha: Any = 1) -> Any:
        return ew.sub_(self, other, alpha=alpha)

    def true_divide(self: Any, other: Any) -> Any:
        return ew.div(self, other)

    def true_divide_(self: Any, other: Any) -> Any:
        return ew.div_(self, other)

    def heaviside_(self: Any, values: Any) -> Any:
        return _HEAVISIDE_(self, values)

    def fused_face(name: str, first: str, second: str) -> Any:
        inner = METHODS[name]
        return _signatures_calling(name, first, second, inner)

    faces = {
        "broadcast_to": broadcast_to, "count_nonzero": count_nonzero, "hash_tensor": hash_tensor,
        "squeeze": squeeze, "squeeze_": squeeze_, "tensor_split": tensor_split,
        "repeat_interleave": repeat_interleave,
        "hsplit": split_face("hsplit", shc.hsplit),
        "vsplit": split_face("vsplit", shc.vsplit),
        "dsplit": split_face("dsplit", shc.dsplit), "swapaxes": swapaxes,
        "swapaxes_": swapaxes_, "dot": dot, "softmax": softmax, "log_softmax": log_softmax,
        "subtract": subtract, "subtract_": subtract_, "true_divide": true_divide,
        "true_divide_": true_divide_, "heaviside_": heaviside_, "orgqr": orgqr, "ormqr": ormqr,
    }
    for name, first, second in (("addmv_", "mat", "vec"), ("addr_", "vec1", "vec2"),
                                ("addbmm_", "batch1", "batch2"),
                                ("baddbmm_", "batch1", "batch2")):
        faces[name] = fused_face(name, first, second)
    return faces


# (module functions, not closures: autocast swaps the code of the ones it lists)
def orgqr(self: Any, input2: Any) -> Any:
    return fz.householder_product(self, input2)


def ormqr(self: Any, input2: Any, input3: Any, left: bool = True, transpose: bool = False
          ) -> Any:
    return lg.ormqr(self, input2, input3, left, transpose)


def _signatures_calling(name: str, first: str, second: str, inner: Any) -> Any:
    """``name(self, <first>, <second>, *, beta=1, alpha=1)`` calling ``inner``."""
    p = inspect.Parameter
    params = [p(first, p.POSITIONAL_OR_KEYWORD), p(second, p.POSITIONAL_OR_KEYWORD),
              p("beta", p.KEYWORD_ONLY, default=1), p("alpha", p.KEYWORD_ONLY, default=1)]
    return _signatures.calling(name, params, inner, first="self")


_SQUEEZE_ = METHODS["squeeze_"]
_SWAPAXES_ = METHODS["swapaxes_"]
_HEAVISIDE_ = METHODS["heaviside_"]
METHODS.update(_faces())


def _in_place_faces() -> dict[str, Any]:
    """The in-place methods made without a parameter list of their own (``x.gcd_(other)``
    through a generic ``(self, *args, **kwargs)``): the parameters of their out-of-place
    method."""
    faces = {}
    for name, fn in METHODS.items():
        if not (name.endswith("_") and name[:-1] in METHODS):
            continue
        kinds = [q.kind for q in inspect.signature(fn).parameters.values()][1:]
        if not kinds or any(k not in (inspect.Parameter.VAR_POSITIONAL,
                                      inspect.Parameter.VAR_KEYWORD) for k in kinds):
            continue
        template = _signatures.params_of(METHODS[name[:-1]], drop_first=True)
        faces[name] = _signatures.calling(name, template, fn, first="self")
    for name, base in (("__ilshift__", "bitwise_left_shift"),
                       ("__irshift__", "bitwise_right_shift")):
        faces[name] = _signatures.calling(
            name, _signatures.params_of(METHODS[base], drop_first=True), METHODS[name],
            first="self")
    return faces


METHODS.update(_in_place_faces())


def _protocol_methods() -> dict[str, Any]:
    """The Python protocol names torch's Tensor has beyond the operators: ``x.__div__``,
    ``__long__``, ``__nonzero__`` (Python 2's names), in-place bitwise and remainder operators,
    ``element in x``, ``reversed(x)``, and NumPy's ``__array_wrap__``."""

    def __contains__(self: Any, element: Any, /) -> bool:  # noqa: N807
        if not isinstance(element, (Tensor, int, float, complex, bool)):
            raise RuntimeError("Tensor.__contains__ only supports Tensor or scalar, but you "
                               f"passed in a {type(element)}.")
        return bool((element == self).any().item())

    def __reversed__(self: Any) -> Any:  # noqa: N807
        """``self`` reversed along dimension 0 (a 0-d tensor itself)."""
        return self if self.ndim == 0 else self.flip(0)

    def __array_wrap__(self: Any, array: Any) -> Any:  # noqa: N807
        if array.dtype == bool:
            array = array.astype("uint8")
        return from_numpy(array)

    def __setstate__(self: Any, state: Any) -> None:  # noqa: N807
        """Restore a tensor pickled by an old torch (``__reduce_ex__`` is what pickles now)."""
        if not self.is_leaf:
            raise RuntimeError("__setstate__ can be only called on leaf Tensors")
        if len(state) == 4:
            self.set_(*state)
            return
        if len(state) == 5:
            self.data = state[0]
            state = (state[3], state[4], state[2])
        self.requires_grad = state[0]

    def in_place(name: str, method: str) -> Any:
        def operator(self: Any, other: Any) -> Any:
            return getattr(self, method)(other)

        operator.__name__ = name
        return operator

    return {
        "__contains__": __contains__, "__reversed__": __reversed__,
        "__array_wrap__": __array_wrap__, "__setstate__": __setstate__,
        "__div__": lambda self, other: self.__truediv__(other),
        "__long__": lambda self: self.__int__(),
        "__nonzero__": lambda self: self.__bool__(),
        "__iand__": in_place("__iand__", "bitwise_and_"),
        "__ior__": in_place("__ior__", "bitwise_or_"),
        "__ixor__": in_place("__ixor__", "bitwise_xor_"),
        "__ifloordiv__": in_place("__ifloordiv__", "floor_divide_"),
        "__imod__": in_place("__imod__", "remainder_"),
        "__ipow__": lambda self, exponent: self.pow_(exponent),
    }


METHODS.update(_protocol_methods())


def _attach() -> None:
    """Attach the method forms of the functional ops (x.exp(), x.sum(dim=1), ...)."""
    for name, fn in METHODS.items():
        setattr(Tensor, name, fn)
    Tensor.T = property(lambda self: sh.numpy_T(self))  # type: ignore[attr-defined]
    Tensor.mT = property(lambda self: sh.matrix_transpose(self))  # type: ignore
    # (mH and H, the conjugate transposes: ops/complex.py installs them)


_attach()
