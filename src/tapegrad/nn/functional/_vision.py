"""Vision functions: ``interpolate`` and the ``upsample`` family, ``pixel_shuffle``,
``pixel_unshuffle``, ``channel_shuffle``, ``affine_grid`` and ``grid_sample``.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, cast

import numpy as np

from ..._tensor import Tensor
from ...ops import resampling as K
from ._common import _scalar_name
from ._pooling import adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d


def _spatial() -> Any:
    """ops/spatial.py: grid sampling, affine grids, channel shuffle."""
    # ops.spatial: loaded on first use (its ops join the registry when it loads)
    from ...ops import spatial

    return spatial


def _shuffle_factor(op: str, input: Tensor, factor_name: str, factor: int) -> int:
    """``factor`` as an int, after torch's checks of pixel_shuffle's and pixel_unshuffle's
    (``op``'s) input rank and factor."""
    r = int(factor)
    if input.ndim < 3:
        raise RuntimeError(
            f"{op} expects input to have at least 3 dimensions, but got input with "
            f"{input.ndim} dimension(s)"
        )
    if r <= 0:
        raise RuntimeError(f"{op} expects a positive {factor_name}, but got {r}")
    return r


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """(*, C r^2, H, W) -> (*, C, H r, W r) (PixelShuffleBackward0)."""
    r = _shuffle_factor("pixel_shuffle", input, "upscale_factor", upscale_factor)
    c = input.shape[-3]
    if c % (r * r):
        raise RuntimeError(
            "pixel_shuffle expects its input's 'channel' dimension to be divisible by the square "
            f"of upscale_factor, but input.size(-3)={c} is not divisible by {r * r}"
        )
    return K._pixel_shuffle(input, r=r)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """(*, C, H r, W r) -> (*, C r^2, H, W) (PixelUnshuffleBackward0)."""
    r = _shuffle_factor("pixel_unshuffle", input, "downscale_factor", downscale_factor)
    for name, d in (("height", -2), ("width", -1)):
        if input.shape[d] % r:
            raise RuntimeError(
                f"pixel_unshuffle expects {name} to be divisible by downscale_factor, but "
                f"input.size({d})={input.shape[d]} is not divisible by {r}"
            )
    return K._pixel_unshuffle(input, r=r)


def _scale_value(n_in: int, n_out: int, scale: Any, dtype: Any) -> Any:
    """torch's compute_scales_value: 1/scale_factor when given, else in/out, in ``dtype``."""
    if scale is not None and scale > 0:
        return dtype(1.0 / scale)
    return dtype(n_in) / dtype(n_out)


def _nearest_index(n_in: int, n_out: int, scale: Any, exact: bool) -> np.ndarray:
    dst = np.arange(n_out)
    if not exact and n_out == n_in:
        return dst
    if not exact and n_out == 2 * n_in:
        return dst >> 1
    sc = _scale_value(n_in, n_out, scale, np.float32)
    pos = (dst.astype(np.float32) + np.float32(0.5)) * sc if exact else dst.astype(
        np.float32) * sc
    return np.minimum(np.floor(pos).astype(np.int64), n_in - 1)


def _source_coords(n_in: int, n_out: int, align_corners: bool, scale: Any, cubic: bool,
                   dtype: Any) -> np.ndarray:
    """torch's area_pixel_compute_scale + area_pixel_compute_source_index, in ``dtype``."""
    dst = np.arange(n_out).astype(dtype)
    if align_corners:
        sc = dtype(n_in - 1) / dtype(n_out - 1) if n_out > 1 else dtype(0)
        return sc * dst
    sc = _scale_value(n_in, n_out, scale, dtype)
    src = sc * (dst + dtype(0.5)) - dtype(0.5)
    return src if cubic else np.maximum(src, dtype(0))


def _linear_matrix(n_in: int, n_out: int, align_corners: bool, scale: Any, dtype: Any
                   ) -> np.ndarray:
    src = _source_coords(n_in, n_out, align_corners, scale, False, dtype)
    i0 = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
    lam1 = np.clip(src - i0.astype(dtype), 0, 1).astype(dtype)
    lam0 = (dtype(1) - lam1).astype(dtype)
    i1 = i0 + (i0 < n_in - 1)
    m = np.zeros((n_out, n_in), dtype=dtype)
    rows = np.arange(n_out)
    np.add.at(m, (rows, i0), lam0)
    np.add.at(m, (rows, i1), lam1)
    return m


def _cubic_matrix(n_in: int, n_out: int, align_corners: bool, scale: Any, dtype: Any
                  ) -> np.ndarray:
    src = _source_coords(n_in, n_out, align_corners, scale, True, dtype)
    i0 = np.floor(src).astype(np.int64)
    t = (src - i0.astype(dtype)).astype(dtype)
    a = dtype(-0.75)

    def conv1(x: np.ndarray) -> np.ndarray:
        return ((a + dtype(2)) * x - (a + dtype(3))) * x * x + dtype(1)

    def conv2(x: np.ndarray) -> np.ndarray:
        return ((a * x - dtype(5) * a) * x + dtype(8) * a) * x - dtype(4) * a

    weights = (conv2(t + dtype(1)), conv1(t), conv1(dtype(1) - t), conv2(dtype(2) - t))
    m = np.zeros((n_out, n_in), dtype=dtype)
    rows = np.arange(n_out)
    for j, w in enumerate(weights):
        np.add.at(m, (rows, np.clip(i0 - 1 + j, 0, n_in - 1)), w.astype(dtype))
    return m


_LINEAR_MODES = {"linear": 1, "bilinear": 2, "trilinear": 3, "bicubic": 2}


def _channels_last(x: Tensor) -> bool:
    """torch's is_contiguous(memory_format=channels_last(_3d)): C innermost, then W, H (, D);
    size-1 dims do not count."""
    shape, strides = tuple(x.shape), x.stride()
    order = (1,) + tuple(range(x.ndim - 1, 1, -1)) + (0,)
    expected = 1
    for d in order:
        if shape[d] != 1 and strides[d] != expected:
            return False
        expected *= shape[d]
    return True


def _resample_dtype_check(input: Tensor, mode: str, dim: int, out_size: list) -> None:
    """torch's kernels take floating inputs (and uint8 for nearest, bilinear and bicubic); the
    error names the kernel that rejects the dtype, which depends on the path torch takes."""
    kind = input.dtype.name
    if input.is_floating_point() or (kind == "uint8" and mode in (
            "nearest", "nearest-exact", "bilinear", "bicubic")):
        return
    wide = input.ndim > 1 and input.shape[1] > 3
    if mode == "area":
        kernel = "adaptive_avg_pool3d_cpu" if dim == 3 else "adaptive_avg_pool2d"
        if dim == 2 and _channels_last(input) and not input.is_contiguous():
            kernel = "adaptive_avg_pool2d_channels_last"
    elif mode == "bicubic":
        kernel = "compute_indices_weights_cubic"
    elif dim == 2 and mode in ("nearest", "nearest-exact", "bilinear") and (
            sum(out_size) <= 128 or (wide and _channels_last(input))):
        kernel = "upsample_nearest2d_channels_last" if mode != "bilinear" else (
            "upsample_bilinear2d_channels_last")
    elif dim == 3 and mode == "trilinear" and wide and _channels_last(input):
        kernel = "upsample_trilinear3d_channels_last"
    elif dim == 3 and mode != "trilinear" and wide and _channels_last(input):
        kernel = "upsample_nearest3d_channels_last"
    else:
        kernel = ("compute_indices_weights_nearest" if mode.startswith("nearest")
                  else "compute_indices_weights_linear")
    raise NotImplementedError(f'"{kernel}" not implemented for \'{_scalar_name(input)}\'')


def _per_spatial_dim(value: Any, dim: int, convert: Any, mismatch: str) -> list:
    """``value`` (one number, or a list or tuple of one per spatial dim) as ``dim`` numbers made
    by ``convert``; ``mismatch`` is the ValueError's message for a list of another length."""
    if isinstance(value, (list, tuple)):
        if len(value) != dim:
            raise ValueError(mismatch)
        return [convert(v) for v in value]
    return [convert(value)] * dim


def interpolate(input: Tensor, size: Any = None, scale_factor: Any = None,
                mode: str = "nearest", align_corners: bool | None = None,
                recompute_scale_factor: bool | None = None, antialias: bool = False) -> Tensor:
    """Resample the spatial dims (nearest, nearest-exact, (bi/tri)linear, bicubic, area).

    Every mode but nearest is one matrix per spatial dim (a separable linear map), so the
    backward is the transposed matrices; nearest gathers indices. uint8 images resample in
    torch's fixed-point arithmetic instead (bilinear, bicubic: ``ops/resample_uint8.py``).
    """
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError(
                "align_corners option can only be set with the interpolating modes: linear | "
                "bilinear | bicubic | trilinear"
            )
    elif align_corners is None:
        align_corners = False
    dim = input.ndim - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        scales = None
        out_size = _per_spatial_dim(
            size, dim, int,
            "Input and output must have the same number of spatial dimensions, but got "
            f"input with spatial dimensions of {list(input.shape[2:])} and output size "
            f"of {size}. Please provide input tensor in (N, C, d1, d2, ...,dK) format "
            "and output size in (o1, o2, ...,oK) format.")
    elif scale_factor is not None:
        out_size = None
        scales = _per_spatial_dim(
            scale_factor, dim, float,
            "Input and scale_factor must have the same number of spatial dimensions, but "
            f"got input with spatial dimensions of {list(input.shape[2:])} and "
            f"scale_factor of shape {scale_factor}. Please provide input tensor in (N, "
            "C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) format.")
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and out_size is None:
        recompute_scale_factor = True
    if out_size is None:  # scale_factor was given, so scales is set
        given = cast(list, scales)
        out_size = [math.floor(input.shape[i + 2] * given[i]) for i in range(dim)]
    if recompute_scale_factor:
        scales = None
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes "
                         "and requires a 4-D tensor as input")
    if dim not in (1, 2, 3):
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) for "
            "the modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | area | "
            f"nearest-exact (got {mode})"
        )
    in_size = tuple(input.shape[2:])
    sc = scales if scales is not None else [None] * dim
    if mode in ("nearest", "nearest-exact"):
        _resample_dtype_check(input, mode, dim, out_size)
        exact = mode == "nearest-exact"
        index = tuple(_nearest_index(n, o, s_, exact)
                      for n, o, s_ in zip(in_size, out_size, sc, strict=True))
        entry = K.GATHERS[("nearest_exact" if exact else "nearest", dim)]
        return entry(input, index=index)
    if mode == "area":
        _resample_dtype_check(input, mode, dim, out_size)
        return {1: adaptive_avg_pool1d, 2: adaptive_avg_pool2d, 3: adaptive_avg_pool3d}[dim](
            input, out_size if dim > 1 else out_size[0])
    if mode == "lanczos" and dim == 2:
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
    if antialias:
        return _interpolate_aa(input, out_size, sc, mode, bool(align_corners))
    need = _LINEAR_MODES.get(mode)
    if need is None:
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) for "
            "the modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | area | "
            f"nearest-exact (got {mode})"
        )
    if need != dim:
        raise NotImplementedError(
            f"Got {input.ndim}D input, but {mode} mode needs {need + 2}D input"
        )
    _resample_dtype_check(input, mode, dim, out_size)
    if input.dtype.name == "uint8" and mode in ("bilinear", "bicubic"):
        # torch resamples images in fixed point, not through float matrices
        # ops.resample_uint8: loaded on first use (uint8 images only)
        from ...ops.resample_uint8 import resample_uint8

        return Tensor._make(resample_uint8(input._data, out_size, bool(align_corners),
                                           list(sc), mode == "bicubic"))
    dt = input._data.dtype.type
    build = _cubic_matrix if mode == "bicubic" else _linear_matrix
    mats = tuple(build(n, o, bool(align_corners), s_, dt)
                 for n, o, s_ in zip(in_size, out_size, sc, strict=True))
    name = {"linear": "upsample_linear1d", "bilinear": "upsample_bilinear2d",
            "trilinear": "upsample_trilinear3d", "bicubic": "upsample_bicubic2d"}[mode]
    return K.SEPARABLE[name](input, mats=mats)


def _interpolate_aa(input: Tensor, out_size: list, scales: list, mode: str,
                    align_corners: bool) -> Tensor:
    """Antialiased bilinear, bicubic and lanczos resampling (ops/resample_aa.py)."""
    # ops.resample_aa: loaded on first use (its ops join the registry when it loads)
    from ...ops import resample_aa as AA

    kind = input.dtype.name
    if kind == "uint8":  # fixed point, as torch's uint8 kernels; no gradient
        return Tensor._make(AA.resample_aa_uint8(input._data, out_size, scales, mode,
                                                 align_corners))
    if kind not in ("float32", "float64"):
        raise NotImplementedError(
            f'"compute_index_ranges_weights" not implemented for \'{_scalar_name(input)}\'')
    dt = input._data.dtype.type
    in_size = tuple(input.shape[2:])
    plan = AA.aa_plan(in_size, out_size, scales, mode, dt, align_corners)
    return AA.AA_ENTRIES[mode](input, plan=plan, mats=AA.dense_mats(in_size, plan, dt))


def upsample(input: Tensor, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
             align_corners: bool | None = None) -> Tensor:
    """Deprecated: interpolate."""
    warnings.warn("nn.functional.upsample is deprecated. Use nn.functional.interpolate instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """Deprecated: interpolate(mode="nearest")."""
    warnings.warn("nn.functional.upsample_nearest is deprecated. Use nn.functional.interpolate "
                  "instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """Deprecated: interpolate(mode="bilinear", align_corners=True)."""
    warnings.warn("nn.functional.upsample_bilinear is deprecated. Use nn.functional.interpolate "
                  "instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """Interleave the channels of ``groups`` groups (ChannelShuffleBackward0)."""
    shuffle = _spatial().channel_shuffle

    return shuffle(input, groups)


native_channel_shuffle = channel_shuffle


def affine_grid(theta: Tensor, size: Any, align_corners: bool | None = None) -> Tensor:
    """The sampling grid of a batch of affine maps theta, for ``grid_sample``."""
    grid = _spatial().affine_grid
    align_corners_or_default = _spatial().align_corners_or_default

    return grid(theta, size, align_corners_or_default(align_corners))


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear",
                padding_mode: str = "zeros", align_corners: bool | None = None) -> Tensor:
    """Sample input at the normalized positions of grid (see ``ops/spatial.py``)."""
    sample = _spatial().grid_sample

    return sample(input, grid, mode, padding_mode, align_corners)
