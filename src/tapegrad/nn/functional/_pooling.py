"""Pooling: max, average, adaptive, LP and fractional max pooling in 1, 2 and 3 dims, and max
unpooling; the fused ones are entries of ``ops/pooling.py`` and ``ops/resampling.py``.
"""

from __future__ import annotations

import math
from typing import Any

from ..._random import rand
from ..._tensor import Tensor, _wrap_dim
from ...ops import elementwise as ew
from ...ops import pooling as K
from ...ops import resampling as R
from ...ops.conv import _Geometry
from ._activations import relu
from ._convolution import _tuple

# ---------------------------------------------------------------------------------------------
# Pooling
# ---------------------------------------------------------------------------------------------

def _pool_out(n: int, k: int, pad_: int, s: int, d: int, ceil: bool) -> int:
    """torch's pooling_output_shape."""
    if s == 0:
        raise RuntimeError("stride should not be zero")
    if pad_ < 0:
        raise RuntimeError(f"pad must be non-negative, but got pad: {pad_}")
    if pad_ > ((k - 1) * d + 1) // 2:
        raise RuntimeError(
            f"pad should be at most half of effective kernel size, but got pad={pad_}, "
            f"kernel_size={k} and dilation={d}"
        )
    num = n + 2 * pad_ - d * (k - 1) - 1 + (s - 1 if ceil else 0)
    out = num // s + 1
    if ceil and (out - 1) * s >= n + pad_:
        out -= 1
    return out


_COUNT = {1: "one", 2: "two", 3: "three"}


def _pool_args(name: str, kernel_size: Any, stride: Any, padding: Any, dilation: Any,
               nd: int = 2) -> tuple:
    n = _COUNT[nd]
    k = _tuple(kernel_size, nd)
    if len(k) not in (1, nd):
        raise RuntimeError(f"{name}: kernel_size must either be a single int, or a tuple of {n} "
                           "ints")
    if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0):
        s = k
    else:
        s = _tuple(stride, nd)
        if len(s) not in (1, nd):
            raise RuntimeError(f"{name}: stride must either be omitted, a single int, or a "
                               f"tuple of {n} ints")
    p = _tuple(padding, nd)
    if len(p) not in (1, nd):
        raise RuntimeError(f"{name}: padding must either be a single int, or a tuple of {n} "
                           "ints")
    d = _tuple(dilation, nd)
    if len(d) not in (1, nd):
        raise RuntimeError(f"{name}: dilation must be either a single int, or a tuple of {n} "
                           "ints")

    def full(t: tuple) -> tuple:
        return t * nd if len(t) == 1 else t

    return full(k), full(s), full(p), full(d)


def _pool_geometry(input: Tensor, k: tuple, s: tuple, p: tuple, d: tuple, ceil: bool
                   ) -> _Geometry:
    nd = len(k)
    size = tuple(input.shape[-nd:])
    names = ("kH", "kW") if nd == 2 else ("kT", "kH", "kW")
    if any(v <= 0 for v in k):
        if any(v == 0 for v in s):
            raise RuntimeError("stride should not be zero")
        raise RuntimeError("kernel size should be greater than zero, but got "
                           + " ".join(f"{a}: {v}" for a, v in zip(names, k, strict=True)))
    if any(v <= 0 for v in d):
        dn = ("dilationH", "dilationW") if nd == 2 else ("dilationT", "dilationH", "dilationW")
        raise RuntimeError("dilation should be greater than zero, but got "
                           + " ".join(f"{a}: {v}" for a, v in zip(dn, d, strict=True)))
    out = tuple(_pool_out(n, kk, pp, ss, dd, ceil)
                for n, kk, pp, ss, dd in zip(size, k, p, s, d, strict=True))
    if any(o < 1 for o in out):
        planes = input.shape[-nd - 1] if input.ndim > nd else 1
        raise RuntimeError(
            f"Given input size: ({'x'.join(str(v) for v in (planes,) + size)}). Calculated "
            f"output size: ({'x'.join(str(v) for v in (planes,) + out)}). Output size is too "
            "small"
        )
    pads = []
    for n, kk, ss, pp, dd, o in zip(size, k, s, p, d, out, strict=True):
        need = (o - 1) * ss + dd * (kk - 1) + 1
        pads.append((pp, max(need - n - pp, pp)))
    return _Geometry(size, k, s, tuple(pads), d, out)


def _check_pool_input(input: Tensor, nd: int = 2) -> None:
    if input.ndim not in (nd + 1, nd + 2) or input.numel() == 0:
        which = "3D or 4D" if nd == 2 else "4D or 5D"
        raise RuntimeError(f"non-empty {which} (batch mode) tensor expected for input")


def _check_pool_pads(k: tuple, p: tuple, d: tuple) -> None:
    """torch's pooling_output_shape checks the padding before anything about the input."""
    for kk, pp, dd in zip(k, p, d, strict=True):
        if pp < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {pp}")
        if pp > ((kk - 1) * dd + 1) // 2:
            raise RuntimeError(
                f"pad should be at most half of effective kernel size, but got pad={pp}, "
                f"kernel_size={kk} and dilation={dd}")


def _check_max_pool_input(input: Tensor, nd: int) -> None:
    shape = list(input.shape)
    if nd == 2:
        if input.ndim not in (3, 4):
            _check_pool_input(input)
        if 0 in shape[-3:]:
            raise RuntimeError("Expected 3D or 4D (batch mode) tensor with optional 0 dim batch "
                               f"size for input, but got:{shape}")
        return
    if input.ndim not in (4, 5):
        _check_pool_input(input, 3)
    first = input.ndim - 4
    for i in range(first, input.ndim):
        if shape[i] == 0:  # (torch's message names dimension 0 whichever it is)
            raise RuntimeError(
                "max_pool3d_with_indices_out_cpu_template(): Expected input's non-batch "
                f"dimensions to have positive length, but input has a shape of {shape} and "
                "non-batch dimension 0 has length zero!")


def max_pool2d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None,
                            padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple:
    """max_pool2d, always returning (values, indices)."""
    k, s, p, d = _pool_args("max_pool2d", kernel_size, stride, padding, dilation)
    _check_pool_pads(k, p, d)
    _check_max_pool_input(input, 2)
    geo = _pool_geometry(input, k, s, p, d, ceil_mode)
    return K._max_pool(input, geo=geo, _cache={})


def max_pool3d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None,
                            padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple:
    """max_pool3d, always returning (values, indices)."""
    k, s, p, d = _pool_args("max_pool3d", kernel_size, stride, padding, dilation, 3)
    _check_pool_pads(k, p, d)
    _check_max_pool_input(input, 3)
    geo = _pool_geometry(input, k, s, p, d, ceil_mode)
    return K._max_pool3d(input, geo=geo, _cache={})


def max_pool3d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """The maximum of each 3-D window (MaxPool3DWithIndicesBackward0)."""
    out, idx = max_pool3d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return (out, idx) if return_indices else out


def max_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """The maximum of each window (MaxPool2DWithIndicesBackward0); ``return_indices`` also
    gives each maximum's flat position in its (H, W) plane."""
    out, idx = max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return (out, idx) if return_indices else out


def _check_1d(input: Tensor, name: str) -> None:
    if input.ndim not in (2, 3):
        raise RuntimeError(
            f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor for argument "
            f"#1 'self' (while checking arguments for {name})"
        )


def max_pool1d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None,
                            padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple:
    """max_pool1d, always returning (values, indices)."""
    k1 = _tuple(kernel_size, 1)
    _check_pool_pads(k1, _tuple(padding, 1) * len(k1), _tuple(dilation, 1) * len(k1))
    if input.ndim not in (2, 3):
        raise RuntimeError(
            "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size "
            f"for input, but got:{list(input.shape)}"
        )
    def one(v):
        return ((1,) + _tuple(v, 1))
    s = None if stride is None or stride == [] or stride == () else one(stride)
    out, idx = max_pool2d_with_indices(input.unsqueeze(-2), one(kernel_size), s,
                                       (0,) + _tuple(padding, 1), one(dilation), ceil_mode)
    return out.squeeze(-2), Tensor._make(idx._data.squeeze(-2))


def _check_max_pool1d(input: Tensor, kernel_size: Any, stride: Any, padding: Any,
                      dilation: Any, ceil_mode: bool) -> None:
    shape = list(input.shape)
    if input.ndim not in (2, 3) or shape[-1] == 0 or shape[-2] == 0:
        raise RuntimeError("max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 "
                           f"dim batch size for input, but got:{shape}")
    k = _tuple(kernel_size, 1)[0]
    st = k if stride is None or stride == [] or stride == () else _tuple(stride, 1)[0]
    p, d = _tuple(padding, 1)[0], _tuple(dilation, 1)[0]
    if k <= 0:
        raise RuntimeError(f"max_pool1d() kernel_size must be greater than zero, but got {k}")
    if st <= 0:
        raise RuntimeError(f"max_pool1d() stride must be greater than zero, but got {st}")
    if p < 0:
        raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {p}")
    if p > k // 2:
        raise RuntimeError("max_pool1d() padding should be at most half of kernel size, but got "
                           f"padding={p} and kernel_size={k}")
    if d <= 0:
        raise RuntimeError(f"max_pool1d() dilation must be greater than zero, but got {d}")
    out = _pool_out(shape[-1], k, p, st, d, ceil_mode)
    if out < 0:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {out}")


def max_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """max_pool2d over a (N, C, 1, L) view of the input."""
    if not return_indices:  # torch's max_pool1d checks its arguments in its own words
        _check_max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode)
    out, idx = max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return (out, idx) if return_indices else out


def avg_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """The mean of each window (AvgPool2DBackward0)."""
    return _avg_pool_nd(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                        divisor_override, 2)


def avg_pool3d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """The mean of each 3-D window (AvgPool3DBackward0)."""
    return _avg_pool_nd(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                        divisor_override, 3)


def _avg_pool_nd(input: Tensor, kernel_size: Any, stride: Any, padding: Any, ceil_mode: bool,
                 count_include_pad: bool, divisor_override: Any, nd: int) -> Tensor:
    k, s, p, _ = _pool_args(f"avg_pool{nd}d", kernel_size, stride, padding, 1, nd)
    _check_pool_pads(k, p, (1,) * nd)
    if input.ndim not in (nd + 1, nd + 2):
        if nd == 2:  # torch's avg_pool2d reads the input's dim -3 first
            _wrap_dim(-nd - 1, input.ndim)
        _check_pool_input(input, nd)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    geo = _pool_geometry(input, k, s, p, (1,) * nd, ceil_mode)
    div = K._avg_divisor(geo, count_include_pad, divisor_override)
    entry = K._avg_pool if nd == 2 else K._avg_pool3d
    return entry(input, geo=geo, divisor=div)


def avg_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True) -> Tensor:
    """avg_pool2d over a (N, C, 1, L) view of the input."""
    _check_1d(input, "avg_pool1d")
    def one(v):
        return ((1,) + _tuple(v, 1))
    s = None if stride is None or stride == [] or stride == () else one(stride)
    out = avg_pool2d(input.unsqueeze(-2), one(kernel_size), s, (0,) + _tuple(padding, 1),
                     ceil_mode, count_include_pad)
    return out.squeeze(-2)


def _check_output_dims(input: Tensor, output_size: Any) -> None:
    """torch's Python wrapper first fills Nones from the input's trailing sizes."""
    if isinstance(output_size, (list, tuple)) and input.ndim <= len(output_size):
        raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")


def _one_int(output_size: Any, name: str) -> int:
    if isinstance(output_size, (list, tuple)) and len(output_size) != 1:
        raise RuntimeError(f"{name}() argument 'output_size' should contain one int (got "
                           f"{len(output_size)})")
    return _tuple(output_size, 1)[0]


def _adaptive_size(input: Tensor, output_size: Any, name: str, nd: int = 2) -> tuple:
    if isinstance(output_size, (list, tuple)):
        o = tuple(output_size)
    else:
        o = (output_size,) * nd
    if len(o) != nd:
        raise RuntimeError(f"{name}: output_size must be {nd}")
    o = tuple(input.shape[-nd + i] if v is None else int(v) for i, v in enumerate(o))
    if any(v < 0 for v in o):
        raise RuntimeError(
            f"{name}: elements of output_size must be greater than or equal to 0 but received "
            # (torch's 3-d message has no space before its third element)
            f"{{{', '.join(str(v) for v in o[:2])}{''.join(',' + str(v) for v in o[2:])}}}"
        )
    return o


def _adaptive_avg(input: Tensor, output_size: Any, nd: int) -> Tensor:
    name = f"adaptive_avg_pool{nd}d"
    _check_output_dims(input, output_size)
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got {list(input.shape)}"
        )
    o = _adaptive_size(input, output_size, name, nd)
    if all(v == 1 for v in o):
        return input.mean(tuple(range(-nd, 0)), keepdim=True)
    size = tuple(input.shape[-nd:])
    dt = input._data.dtype
    mats = tuple(R._adaptive_matrix(n, v, dt) for n, v in zip(size, o, strict=True))
    return R.SEPARABLE[name](input, mats=mats)


def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:
    """Average pooling to a given output size (AdaptiveAvgPool2DBackward0; (1, 1) is a mean)."""
    return _adaptive_avg(input, output_size, 2)


def adaptive_avg_pool3d(input: Tensor, output_size: Any) -> Tensor:
    """Average pooling to a given 3-D output size (AdaptiveAvgPool3DBackward0)."""
    return _adaptive_avg(input, output_size, 3)


def adaptive_avg_pool1d(input: Tensor, output_size: Any) -> Tensor:
    """adaptive_avg_pool2d over a (N, C, 1, L) view of the input."""
    _check_1d(input, "adaptive_avg_pool1d")
    o = _one_int(output_size, "adaptive_avg_pool1d")
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1, o)).squeeze(-2)


def _adaptive_max_size(input: Tensor, output_size: Any, nd: int) -> tuple:
    """torch's checks of adaptive max pooling over ``nd`` dimensions (the input's rank, and for
    3-d no empty non-batch dimension), then the output size: ``nd`` ints (a number repeated,
    None the input's size there), with torch's errors for a wrong length and a negative size."""
    name = f"adaptive_max_pool{nd}d()"
    _check_output_dims(input, output_size)
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}: Expected {nd + 1}D or {nd + 2}D tensor, but got: "
                           f"{list(input.shape)}")
    if nd == 3:
        for i in range(input.ndim - 3, input.ndim):
            if input.shape[i] == 0:
                raise RuntimeError(
                    f"{name}: Expected input to have non-zero size for non-batch dimensions, "
                    f"but input has sizes {list(input.shape)} with dimension {i} being empty")
    o = tuple(output_size) if isinstance(output_size, (list, tuple)) else (output_size,) * nd
    if len(o) != nd:
        raise RuntimeError(f"{name}: internal error: output_size.size() must be {nd}")
    o = tuple(input.shape[-nd + i] if v is None else int(v) for i, v in enumerate(o))
    if any(v < 0 for v in o):
        shape = list(input.shape[:-nd]) + list(o)
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(o)}: {shape}")
    return o


def adaptive_max_pool2d_with_indices(input: Tensor, output_size: Any,
                                     return_indices: bool = False) -> tuple:
    """adaptive_max_pool2d, always returning (values, indices)."""
    o = _adaptive_max_size(input, output_size, 2)
    return K._adaptive_max_pool(input, output_size=o, _cache={})


def adaptive_max_pool2d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """Max pooling to a given output size (AdaptiveMaxPool2DBackward0)."""
    out, idx = adaptive_max_pool2d_with_indices(input, output_size)
    return (out, idx) if return_indices else out


def adaptive_max_pool3d_with_indices(input: Tensor, output_size: Any,
                                     return_indices: bool = False) -> tuple:
    """adaptive_max_pool3d, always returning (values, indices into each D*H*W volume)."""
    o = _adaptive_max_size(input, output_size, 3)
    return K._adaptive_max_pool3d(input, output_size=o, _cache={})


def adaptive_max_pool3d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """Max pooling to a given 3-D output size (AdaptiveMaxPool3DBackward0)."""
    out, idx = adaptive_max_pool3d_with_indices(input, output_size)
    return (out, idx) if return_indices else out


def adaptive_max_pool1d_with_indices(input: Tensor, output_size: Any,
                                     return_indices: bool = False) -> tuple:
    """adaptive_max_pool1d, always returning (values, indices)."""
    _check_1d(input, "adaptive_max_pool1d")
    o = _one_int(output_size, "adaptive_max_pool1d")
    out, idx = adaptive_max_pool2d_with_indices(input.unsqueeze(-2), (1, o))
    return out.squeeze(-2), Tensor._make(idx._data.squeeze(-2))


def adaptive_max_pool1d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """adaptive_max_pool2d over a (N, C, 1, L) view of the input."""
    out, idx = adaptive_max_pool1d_with_indices(input, output_size)
    return (out, idx) if return_indices else out


def _unpool_output_size(input: Tensor, kernel: tuple, stride: tuple, padding: tuple,
                        output_size: Any) -> tuple:
    nd = len(kernel)
    default = [(input.shape[-nd + d] - 1) * stride[d] + kernel[d] - 2 * padding[d]
               for d in range(nd)]
    if output_size is None:
        ret = default
    else:
        given = output_size
        output_size = list(output_size)
        if len(output_size) == nd + 2:
            output_size = output_size[2:]
        if len(output_size) != nd:
            raise ValueError(
                f"output_size should be a sequence containing {nd} or {nd + 2} elements, but it "
                f"has a length of '{len(output_size)}'"
            )
        for d in range(nd):
            lo, hi = default[d] - stride[d], default[d] + stride[d]
            if not lo < output_size[d] < hi:
                raise ValueError(
                    f'invalid output_size "{given}" (dim {d} must be between {lo} and {hi})'
                )
        ret = output_size
    for d in range(nd):
        if ret[d] < 0:
            raise ValueError(
                "max_unpooling: output_size must contain non-negative spatial dimensions, but "
                f"got output_size[{d}]={ret[d]}"
            )
    return tuple(int(v) for v in ret)


def _max_unpool(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any, padding: Any,
                output_size: Any, nd: int) -> Tensor:
    k = _tuple(kernel_size, nd)
    k = k * nd if len(k) == 1 else k
    st = k if stride is None else _tuple(stride, nd)
    st = st * nd if len(st) == 1 else st
    pd = _tuple(padding, nd)
    pd = pd * nd if len(pd) == 1 else pd
    size = _unpool_output_size(input, k, st, pd, output_size)
    if tuple(indices.shape) != tuple(input.shape):
        extra = [1] if nd == 1 else []  # torch runs 1-d as 2-d with a trailing 1
        raise RuntimeError(
            "Expected shape of indices to be same as that of the input tensor "
            f"({list(input.shape) + extra}) but got indices tensor with shape: "
            f"{list(indices.shape) + extra}")
    if nd == 1:
        out = K._max_unpool2d(input.unsqueeze(-1), indices=indices._data[..., None],
                              out_size=size + (1,))
        return out.squeeze(-1)
    entry = K._max_unpool2d if nd == 2 else K._max_unpool3d
    return entry(input, indices=indices._data, out_size=size)


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None,
                 padding: Any = 0, output_size: Any = None) -> Tensor:
    """The partial inverse of max_pool1d."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 1)


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None,
                 padding: Any = 0, output_size: Any = None) -> Tensor:
    """The partial inverse of max_pool2d: each value back at its index, zeros elsewhere."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 2)


def max_unpool3d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None,
                 padding: Any = 0, output_size: Any = None) -> Tensor:
    """The partial inverse of max_pool3d."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 3)


def _lp_pool(input: Tensor, norm_type: float, kernel_size: Any, stride: Any, ceil_mode: bool,
             nd: int) -> Tensor:
    k = _tuple(kernel_size, nd)
    k = k * nd if len(k) == 1 else k
    pool_max = {1: max_pool1d, 2: max_pool2d, 3: max_pool3d}[nd]
    if norm_type == float("inf"):
        return pool_max(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if norm_type == -float("inf"):
        return -pool_max(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    pool_avg = {1: avg_pool1d, 2: avg_pool2d, 3: avg_pool3d}[nd]
    out = pool_avg(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (ew.sign(out) * relu(out.abs())).mul(math.prod(k)).pow(1.0 / norm_type)


def lp_pool1d(input: Tensor, norm_type: float, kernel_size: int, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:
    """(sum of x^p over each window)^(1/p), 1-D."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 1)


def lp_pool2d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:
    """(sum of x^p over each window)^(1/p)."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 2)


def lp_pool3d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:
    """(sum of x^p over each window)^(1/p), 3-D."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 3)


def _fractional_max_pool(input: Tensor, kernel_size: Any, output_size: Any, output_ratio: Any,
                         return_indices: bool, _random_samples: Any, d: int) -> Any:
    # ops.spatial: loaded on first use (its ops join the registry when it loads)
    from ...ops import spatial

    name = f"fractional_max_pool{d}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an "
                         "output_ratio")
    k = _tuple(kernel_size, d)
    if output_size is None:
        if d == 2 and len(output_ratio) > 2:
            raise ValueError(f"{name} requires output_ratio to either be a single Int or tuple "
                             "of Ints.")
        ratio = (tuple(output_ratio) if isinstance(output_ratio, (tuple, list))
                 else (output_ratio,) * d)
        out_size = tuple(int(input.size(-d + i) * ratio[i]) for i in range(d))
    else:
        out_size = _tuple(output_size, d)
    batched = input.ndim == d + 2
    x = input if batched else input.unsqueeze(0)
    if _random_samples is None:
        n_batch = x.size(0)
        _random_samples = rand(n_batch, x.size(1), d, dtype=input.dtype)
    for i in range(d):
        if out_size[i] + k[i] - 1 > x.size(2 + i):
            raise RuntimeError(f"{name}(): pool height {k[i]} too large relative to input "
                               f"height {x.size(2 + i)}" if d == 2 and i == 0 else
                               f"{name}_out(): pool size {k[i]} too large relative to "
                               f"input size {x.size(2 + i)}")
    op = spatial._FRACTIONAL_2D if d == 2 else spatial._FRACTIONAL_3D
    out, idx = op(x, samples=_random_samples._data, pool=k, out_size=out_size, _cache={})
    idx = idx.detach() if hasattr(idx, "detach") else idx
    if not batched:
        out, idx = out.squeeze(0), idx.squeeze(0)
    return (out, idx) if return_indices else out


def fractional_max_pool2d(input: Tensor, kernel_size: Any, output_size: Any = None,
                          output_ratio: Any = None, return_indices: bool = False,
                          _random_samples: Any = None) -> Any:
    """Max pooling over pseudo-randomly placed windows (Graham, 2014), drawn from the
    default generator as torch draws them."""
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio,
                                return_indices, _random_samples, 2)


def fractional_max_pool3d(input: Tensor, kernel_size: Any, output_size: Any = None,
                          output_ratio: Any = None, return_indices: bool = False,
                          _random_samples: Any = None) -> Any:
    """Fractional max pooling over (D, H, W)."""
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio,
                                return_indices, _random_samples, 3)


def fractional_max_pool2d_with_indices(input: Tensor, kernel_size: Any, output_size: Any = None,
                                       output_ratio: Any = None, return_indices: bool = False,
                                       _random_samples: Any = None) -> Any:
    """fractional_max_pool2d, always returning (values, indices)."""
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio, True,
                                _random_samples, 2)


def fractional_max_pool3d_with_indices(input: Tensor, kernel_size: Any, output_size: Any = None,
                                       output_ratio: Any = None, return_indices: bool = False,
                                       _random_samples: Any = None) -> Any:
    """fractional_max_pool3d, always returning (values, indices)."""
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio, True,
                                _random_samples, 3)
