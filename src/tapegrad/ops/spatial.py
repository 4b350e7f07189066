"""Spatial rearranging and resampling: ``channel_shuffle``, ``affine_grid``, ``grid_sample`` and
fractional max pooling.

``grid_sample`` reads the input at arbitrary (x, y[, z]) positions given in [-1, 1]:

    unnormalize  x_pix = ((x + 1) / 2) (W - 1)            align_corners=True
                 x_pix = ((x + 1) W - 1) / 2              align_corners=False
    padding      zeros: taps outside read 0; border: clamp into [0, W-1];
                 reflection: mirror at the edges (then clamp)
    interpolate  nearest: round half to even; bilinear: the 2^d corners weighted by the
                 opposite distances; bicubic (2-D): 4x4 taps, cubic convolution (A = -0.75)

It is computed once with tapegrad's own ops (gathers and arithmetic), so its backward, and the
backward of that backward, are autograd's; the node that the output records
(``GridSampler2DBackward0``) differentiates that same computation.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from .. import _dtype, _rng
from .._tensor import Tensor
from ..autograd import grad as autograd_grad
from ..autograd.grad_mode import _state, enable_grad
from ._registry import defop
from .nn_common import _linked
from .pooling import max_pool_backward

# ---------------------------------------------------------------------------------------------
# channel_shuffle
# ---------------------------------------------------------------------------------------------

@defop("channel_shuffle", node="ChannelShuffleBackward0")
def _channel_shuffle(x: np.ndarray, *, groups: int) -> np.ndarray:
    n, c = x.shape[0], x.shape[1]
    y = x.reshape((n, groups, c // groups) + x.shape[2:]).swapaxes(1, 2)
    return np.ascontiguousarray(y).reshape(x.shape)


@_channel_shuffle.backward
def channel_shuffle_backward(ctx: Any, grad: Tensor) -> tuple:
    # a permutation: shuffle back with C/g groups
    c = grad.shape[1]
    return (_channel_shuffle(grad, groups=c // ctx.params["groups"]),)


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """Split the C channels into ``groups`` and interleave them: (N, g, C/g, *) -> (N, C/g, g,
    *), as ShuffleNet does."""
    if input.ndim <= 2:
        raise RuntimeError("channel_shuffle expects input with > 2 dims, but got input with "
                           f"sizes {list(input.shape)}")
    if groups <= 0:
        raise RuntimeError("Number of groups to divide channels in must be positive. Value "
                           f"of groups:{groups}")
    c = input.shape[1]
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels "
                           f"and {groups} groups.")
    return _channel_shuffle(input, groups=groups)


# ---------------------------------------------------------------------------------------------
# affine_grid
# ---------------------------------------------------------------------------------------------

def _base_grid(sizes: tuple, align_corners: bool, dtype: np.dtype) -> np.ndarray:
    """(*spatial, d + 1): normalized coordinates (x first, as torch) and a column of ones."""
    axes = []
    for s in sizes:
        if s <= 1:
            axes.append(np.zeros(s, dtype=dtype))
            continue
        v = np.linspace(-1.0, 1.0, s, dtype=dtype)
        if not align_corners:
            v = v * ((s - 1) / s)
        axes.append(v.astype(dtype))
    mesh = np.meshgrid(*axes, indexing="ij")  # (D, H, W) order
    coords = [m for m in reversed(mesh)]  # x (W), y (H), z (D)
    coords.append(np.ones(sizes, dtype=dtype))
    return np.stack(coords, axis=-1)


@defop("affine_grid_generator", node="AffineGridGeneratorBackward0")
def _affine_grid(theta: np.ndarray, *, sizes: tuple, align_corners: bool) -> np.ndarray:
    base = _base_grid(sizes, align_corners, theta.dtype).reshape(-1, len(sizes) + 1)
    out = base @ np.swapaxes(theta, 1, 2)  # (N, P, d)
    return out.reshape((theta.shape[0],) + sizes + (len(sizes),))


@_affine_grid.backward
def affine_grid_backward(ctx: Any, grad: Tensor) -> tuple:
    # grid = base theta^T: d theta = g^T base
    p = ctx.params
    n, d = grad.shape[0], len(p["sizes"])
    base = Tensor._make(_base_grid(p["sizes"], p["align_corners"], grad._data.dtype)
                        .reshape(-1, d + 1))
    return (grad.reshape(n, -1, d).transpose(1, 2) @ base,)


def affine_grid(theta: Tensor, size: Any, align_corners: bool) -> Tensor:
    """The sampling grid of an affine map: (N, H, W, 2) for a 2-D theta (N, 2, 3), or
    (N, D, H, W, 3) for (N, 3, 4)."""
    size = tuple(int(s) for s in size)
    if theta.dtype.name not in ("float16", "bfloat16", "float32", "float64"):
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    spatial = size[2:]
    d = len(spatial)
    if d == 2 and (theta.ndim != 3 or tuple(theta.shape[-2:]) != (2, 3)):
        raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                         f"{list(size)}. Got {list(theta.shape)}.")
    if d == 3 and (theta.ndim != 3 or tuple(theta.shape[-2:]) != (3, 4)):
        raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                         f"{list(size)}. Got {list(theta.shape)}.")
    if d not in (2, 3):
        raise NotImplementedError(
            f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
            f"respectively. Got size {list(size)}.")
    if min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {list(size)}")
    return _affine_grid(theta, sizes=spatial, align_corners=bool(align_corners))


# ---------------------------------------------------------------------------------------------
# grid_sample
# ---------------------------------------------------------------------------------------------

def _unnormalize(coord: Tensor, size: int, align_corners: bool) -> Tensor:
    if align_corners:
        return (coord + 1) / 2 * (size - 1)
    return ((coord + 1) * size - 1) / 2


def _reflect(x: Tensor, twice_low: int, twice_high: int) -> Tensor:
    """Mirror x into [low, high] (bounds given doubled, as torch's reflect_coordinates)."""
    if twice_low == twice_high:
        return x * 0
    low = twice_low / 2
    span = (twice_high - twice_low) / 2
    x = (x - low).abs()
    extra = x.fmod(span)
    flips = (x.detach() / span).floor()
    even = (flips.fmod(2) == 0)
    return even * (extra + low) + (~even) * (span - extra + low)


def _pad_coord(x: Tensor, size: int, padding: str, align_corners: bool) -> Tensor:
    if padding == "border":
        return x.clamp(0, size - 1)
    if padding == "reflection":
        if align_corners:
            x = _reflect(x, 0, 2 * (size - 1))
        else:
            x = _reflect(x, -1, 2 * size - 1)
        return x.clamp(0, size - 1)
    return x


def _gather(flat: Tensor, idx: list, valid: Any, sizes: tuple) -> Tensor:
    """input values at integer positions idx (x, y[, z]); 0 where not valid."""
    lin = idx[0]
    stride = 1
    for k in range(1, len(idx)):
        stride *= sizes[-k]
        lin = lin + idx[k] * stride
    n, c = flat.shape[0], flat.shape[1]
    lin = lin.reshape(n, 1, -1).expand(n, c, -1)
    vals = flat.gather(2, lin)
    if valid is not None:
        vals = vals * valid.reshape(n, 1, -1).to(vals.dtype)
    return vals


def _in_bounds(idx: list, sizes: tuple) -> Any:
    ok = None
    for k, i in enumerate(idx):
        s = sizes[-1 - k]
        cond = (i >= 0) & (i <= s - 1)
        ok = cond if ok is None else ok & cond
    return ok


def _clip_index(i: Tensor, s: int) -> Tensor:
    return i.clamp(0, s - 1).to(_dtype.int64)


def _cubic_coeffs(t: Tensor) -> list:
    a = -0.75

    def near(x: Tensor) -> Tensor:  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x: Tensor) -> Tensor:  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _grid_sample_composite(inp: Tensor, grid: Tensor, mode: str, padding: str,
                           align_corners: bool) -> Tensor:
    """grid_sample as tapegrad ops (differentiable in both arguments, to any order)."""
    n, c = inp.shape[0], inp.shape[1]
    sizes = tuple(inp.shape[2:])
    d = len(sizes)
    out_spatial = tuple(grid.shape[1:-1])
    flat = inp.reshape(n, c, -1)
    coords = [grid[..., k].reshape(n, -1) for k in range(d)]  # x, y[, z]
    pix = [_unnormalize(coords[k], sizes[-1 - k], align_corners) for k in range(d)]
    if mode == "bicubic":
        x, y = pix
        x0, y0 = x.detach().floor(), y.detach().floor()
        wx, wy = _cubic_coeffs(x - x0), _cubic_coeffs(y - y0)
        out: Any = 0
        for j in range(4):
            for i in range(4):
                xi = _pad_coord(x0 - 1 + i, sizes[1], padding, align_corners)
                yj = _pad_coord(y0 - 1 + j, sizes[0], padding, align_corners)
                ix, iy = xi.detach(), yj.detach()
                valid = _in_bounds([ix, iy], sizes) if padding == "zeros" else None
                idx = [_clip_index(ix, sizes[1]), _clip_index(iy, sizes[0])]
                v = _gather(flat, idx, valid, sizes)
                out = out + v * (wx[i] * wy[j]).reshape(n, 1, -1)
        return out.reshape((n, c) + out_spatial)
    pix = [_pad_coord(pix[k], sizes[-1 - k], padding, align_corners) for k in range(d)]
    if mode == "nearest":
        idx = [p.detach().round() for p in pix]
        valid = _in_bounds(idx, sizes) if padding == "zeros" else None
        idx = [_clip_index(idx[k], sizes[-1 - k]) for k in range(d)]
        return _gather(flat, idx, valid, sizes).reshape((n, c) + out_spatial)
    lo = [p.detach().floor() for p in pix]
    frac = [pix[k] - lo[k] for k in range(d)]
    out = 0
    for corner in range(2 ** d):
        bits = [(corner >> k) & 1 for k in range(d)]
        idx = [lo[k] + bits[k] for k in range(d)]
        w: Any = 1
        for k in range(d):
            w = w * (frac[k] if bits[k] else (1 - frac[k]))
        valid = _in_bounds(idx, sizes)
        ci = [_clip_index(idx[k], sizes[-1 - k]) for k in range(d)]
        v = _gather(flat, ci, valid, sizes)
        out = out + v * w.reshape(n, 1, -1)
    return out.reshape((n, c) + out_spatial)


def _grid_forward_2d(inp: np.ndarray, grid: np.ndarray, mode: str, padding: str,
                     align_corners: bool) -> np.ndarray:
    """2-D bilinear and nearest sampling (zeros or border padding) in the arithmetic of torch's
    vectorized CPU kernel: the position (g + 1) * size/2 - 0.5 as one fused multiply-add
    ((g + 1) * (size - 1)/2 with align_corners), the four bilinear terms summed nw first, then
    fused in ne, sw, se; nearest rounds half to even."""
    fma = _rng._fma32 if inp.dtype == np.float32 else _rng._fma64  # (not this module's _fma32)
    t = inp.dtype.type
    n, c, h, w = inp.shape
    gx = grid[..., 0].reshape(n, -1).astype(inp.dtype, copy=False)
    gy = grid[..., 1].reshape(n, -1).astype(inp.dtype, copy=False)

    def position(g: np.ndarray, size: int) -> np.ndarray:
        if align_corners:
            p = (g + t(1)) * t((size - 1) / 2)
        else:
            p = fma(g + t(1), t(size / 2), t(-0.5)).astype(inp.dtype, copy=False)
        if padding == "border":
            p = np.minimum(t(size - 1), np.maximum(p, t(0)))
        return p

    x, y = position(gx, w), position(gy, h)
    flat = inp.reshape(n, c, h * w)

    def tap(ix: np.ndarray, iy: np.ndarray) -> np.ndarray:  # (n, c, m), 0 outside
        ok = (ix >= 0) & (ix <= w - 1) & (iy >= 0) & (iy <= h - 1)
        lin = (np.clip(iy, 0, h - 1).astype(np.int64) * w
               + np.clip(ix, 0, w - 1).astype(np.int64))
        vals = np.take_along_axis(flat, lin[:, None, :], axis=2)
        return np.where(ok[:, None, :], vals, t(0))

    if mode == "nearest":
        out = tap(np.rint(x), np.rint(y))
    else:
        x0, y0 = np.floor(x), np.floor(y)
        fw, fn = x - x0, y - y0
        fe, fs = t(1) - fw, t(1) - fn
        nw, ne, sw, se = fs * fe, fs * fw, fn * fe, fn * fw
        out = tap(x0, y0) * nw[:, None, :]
        for (dx, dy), wt in (((1, 0), ne), ((0, 1), sw), ((1, 1), se)):
            out = fma(tap(x0 + dx, y0 + dy), wt[:, None, :], out)
    return np.ascontiguousarray(out.astype(inp.dtype, copy=False).reshape(
        (n, c) + grid.shape[1:3]))


def _grid_forward(inp: np.ndarray, grid: np.ndarray, *, mode: str, padding: str,
                  align_corners: bool) -> np.ndarray:
    if (inp.ndim == 4 and mode in ("bilinear", "nearest") and padding in ("zeros", "border")
            and inp.dtype in (np.float32, np.float64) and grid.dtype == inp.dtype):
        with np.errstate(all="ignore"):
            return _grid_forward_2d(inp, grid, mode, padding, align_corners)
    with np.errstate(all="ignore"):
        out = _grid_sample_composite(Tensor._make(inp), Tensor._make(grid), mode, padding,
                                     align_corners)
    return out._data


_GRID_2D = defop("grid_sampler_2d", node="GridSampler2DBackward0", save=(0, 1))(_grid_forward)
_GRID_3D = defop("grid_sampler_3d", node="GridSampler3DBackward0", save=(0, 1))(_grid_forward)


# The grid's gradient of float32 bicubic sampling, in torch's kernel's arithmetic. Its sums run
# over 16 taps and every channel, and the composite's order of the same additions differs
# from the kernel's by more than the float32 tolerance; so the first-order rule follows the
# kernel: per position, gx -= v g cx'(i) cy(j) and gy -= v g cy'(j) cx(i) for channel c, then
# tap i (x), then tap j (y), times the unnormalisation's scale at the end. torch's build fuses
# some of these roundings (fused multiply-adds): the two accumulations, the unnormalisation
# (x + 1) W/2 - 1/2, and both steps of the near coefficient ((A+2) t - (A+3)) t^2 + 1; not
# the far coefficient nor the coefficients' derivatives. A fused a b + c is computed here in
# float64 (a float32 product is exact there) and rounded once.
_A = np.float32(-0.75)


def _fma32(a: Any, b: Any, c: Any) -> np.ndarray:
    """a b + c for float32 operands, rounded once to float32 (up to a rare double rounding)."""
    return (np.asarray(a, np.float64) * np.asarray(b, np.float64) + c).astype(np.float32)


def _cubic_taps32(t: np.ndarray) -> tuple:
    """torch's cubic convolution coefficients of the four taps at offset t, and their
    derivatives in t, in float32 as its kernel rounds them."""
    f = np.float32

    def far(x: np.ndarray) -> np.ndarray:  # ((A x - 5A) x + 8A) x - 4A
        return ((_A * x - f(-3.75)) * x + f(-6.0)) * x - f(-3.0)

    def near(x: np.ndarray) -> np.ndarray:  # ((A + 2) x - (A + 3)) x x + 1
        return _fma32(_fma32(1.25, x, -2.25) * x, x, 1.0)

    x0, x1, x2, x3 = t + f(1.0), t, f(1.0) - t, f(2.0) - t
    coeffs = (far(x0), near(x1), near(x2), far(x3))
    u0, u1, u2, u3 = f(-1.0) - t, f(0.0) - t, f(1.0) - t, f(2.0) - t
    grads = ((f(2.25) * u0 - f(-7.5)) * u0 - f(-6.0),  # (-3A u - 10A) u - 8A
             (f(-3.75) * u1 - f(4.5)) * u1,  # (-3(A + 2) u - 2(A + 3)) u
             (f(3.75) * u2 - f(4.5)) * u2,  # (3(A + 2) u - 2(A + 3)) u
             (f(-2.25) * u3 - f(-7.5)) * u3 + f(-6.0))  # (3A u - 10A) u + 8A
    return coeffs, grads


def _tap_index(i: np.ndarray, size: int, padding: str, align_corners: bool) -> np.ndarray:
    """The integer tap positions i (as floats) after padding: border clamps, reflection
    mirrors then clamps; zeros leaves them (out of range reads 0)."""
    if padding == "reflection":
        if align_corners:
            if size <= 1:
                return np.zeros_like(i)
            span2 = 2.0 * (size - 1)
            a = np.abs(i)
            extra = a - np.trunc(a / span2) * span2
            i = np.minimum(extra, span2 - extra)
        else:
            span2 = 2.0 * size
            a = np.abs(i + 0.5)
            extra = a - np.trunc(a / span2) * span2
            i = np.minimum(extra, span2 - extra) - 0.5
    if padding != "zeros":
        i = np.clip(i, 0, size - 1)
    return i


def _bicubic_grid_grad32(inp: np.ndarray, grid: np.ndarray, g: np.ndarray, padding: str,
                         align_corners: bool) -> np.ndarray:
    """The grid's gradient of 2-D bicubic grid sampling in float32, as torch's CPU kernel
    computes it (see the comment above)."""
    f = np.float32
    n, c, h, w = inp.shape
    gx_in = grid[..., 0].reshape(n, -1)
    gy_in = grid[..., 1].reshape(n, -1)
    if align_corners:
        sx, sy = f((w - 1) / 2), f((h - 1) / 2)
        x, y = (gx_in + f(1.0)) * sx, (gy_in + f(1.0)) * sy
    else:
        sx, sy = f(w / 2), f(h / 2)
        x, y = _fma32(sx, gx_in + f(1.0), -0.5), _fma32(sy, gy_in + f(1.0), -0.5)
    ix, iy = np.floor(x), np.floor(y)
    (cx, cxg), (cy, cyg) = _cubic_taps32(x - ix), _cubic_taps32(y - iy)
    flat = inp.reshape(n, c, h * w)
    gout = g.reshape(n, c, -1)
    taps = []  # (flat index, in range) of tap (i, j)
    for i in range(4):
        xi = _tap_index(ix + f(i - 1), w, padding, align_corners)
        for j in range(4):
            yj = _tap_index(iy + f(j - 1), h, padding, align_corners)
            ok = (xi > -1) & (xi < w) & (yj > -1) & (yj < h)
            lin = (np.clip(yj, 0, h - 1).astype(np.int64) * w
                   + np.clip(xi, 0, w - 1).astype(np.int64))
            taps.append((lin, ok))
    gx = np.zeros_like(x)
    gy = np.zeros_like(y)
    for ch in range(c):
        plane, go = flat[:, ch], gout[:, ch]
        for i in range(4):
            for j in range(4):
                lin, ok = taps[4 * i + j]
                v = np.where(ok, np.take_along_axis(plane, lin, axis=1), f(0.0))
                vg = v * go
                gx = _fma32(-(vg * cxg[i]), cy[j], gx)
                gy = _fma32(-(vg * cyg[j]), cx[i], gy)
    return np.stack([gx * sx, gy * sy], axis=-1).reshape(grid.shape)


def _reflect32(x: np.ndarray, size: int, align_corners: bool) -> tuple:
    """torch's scalar reflect_coordinates in float32, and the sign it gives the gradient."""
    f = np.float32
    lo2, hi2 = (0, 2 * (size - 1)) if align_corners else (-1, 2 * size - 1)
    if lo2 == hi2:
        return np.zeros_like(x), np.zeros_like(x)
    low, span = f(lo2) / f(2.0), f(hi2 - lo2) / f(2.0)
    v = x - low
    sign = np.where(v < 0, f(-1.0), f(1.0))
    v = np.abs(v)
    extra = np.fmod(v, span)
    even = np.floor(v / span) % 2 == 0
    return (np.where(even, extra + low, span - extra + low),
            np.where(even, sign, -sign))


# The same for float32 trilinear sampling (3-D, any padding), whose CPU kernel is
# scalar code without fused roundings: per position, for channel c, then corner (x fastest,
# then y, then z), gx -= or += ((v wy) wz) g with the corner's opposite distances, and gy, gz
# likewise; times the unnormalisation's scale (0 where the padding clamped the coordinate,
# negated where reflection flipped it). The input's gradient is added position by position,
# corner by corner, ((wx wy) wz) g each (np.add.at keeps that order), which matters where the
# padding clamps many positions onto one voxel.
def _trilinear_grads32(inp: np.ndarray, grid: np.ndarray, g: np.ndarray, padding: str,
                       align_corners: bool, need_input: bool) -> tuple:
    f = np.float32
    n, c = inp.shape[:2]
    sizes = inp.shape[:1:-1]  # W, H, D
    pos, mult = [], []
    for k, size in enumerate(sizes):
        v = grid[..., k].reshape(n, -1)
        if align_corners:
            x = ((v + f(1.0)) / f(2.0)) * f(size - 1)
            scale = f((size - 1) / 2)
        else:
            x = ((v + f(1.0)) * f(size) - f(1.0)) / f(2.0)
            scale = f(size / 2)
        m = np.full_like(x, scale)
        if padding == "reflection":
            x, sign = _reflect32(x, size, align_corners)
            m *= sign
        if padding != "zeros":  # clamped coordinates, and at the borders, get no gradient
            m[(x <= 0) | (x >= size - 1)] = 0
            x = np.clip(x, f(0.0), f(size - 1))
        pos.append(x)
        mult.append(m)
    lo = [np.floor(x) for x in pos]
    near = [lo[k] + f(1.0) - pos[k] for k in range(3)]  # distance to the upper neighbour
    far = [pos[k] - lo[k] for k in range(3)]  # distance to the lower one
    flat = inp.reshape(n, c, -1)
    gout = g.reshape(n, c, -1)
    corners = []
    for corner in range(8):
        bits = [(corner >> k) & 1 for k in range(3)]
        idx = [lo[k] + bits[k] for k in range(3)]
        ok = np.ones(idx[0].shape, dtype=bool)
        for k in range(3):
            ok &= (idx[k] >= 0) & (idx[k] < sizes[k])
        lin = np.zeros(idx[0].shape, dtype=np.int64)
        for k in (2, 1, 0):
            lin = lin * sizes[k] + np.clip(idx[k], 0, sizes[k] - 1).astype(np.int64)
        # d/dpos[k] of the corner's weight: the product of the other dims' distances, signed
        terms = []
        for k in range(3):
            a, b = [near[j] if not bits[j] else far[j] for j in range(3) if j != k]
            terms.append((bool(bits[k]), a, b))
        dist = [far[j] if bits[j] else near[j] for j in range(3)]
        corners.append((lin, ok, terms, (dist[0] * dist[1]) * dist[2]))
    gi: np.ndarray | None = None
    if need_input:  # (n, c) planes, each filled position by position, corner by corner
        lins = np.stack([lin for lin, *_ in corners], axis=-1)  # (n, L, 8)
        oks = np.stack([ok for _, ok, *_ in corners], axis=-1)
        ws = np.stack([w for *_, w in corners], axis=-1)
        planes = np.zeros(flat.shape, dtype=f)
        for b in range(n):
            keep = oks[b]
            where, wk = lins[b][keep], ws[b][keep]
            for ch in range(c):
                np.add.at(planes[b, ch], where, wk * np.repeat(gout[b, ch], 8).reshape(-1, 8)[keep])
        gi = planes.reshape(inp.shape)
    acc = [np.zeros_like(pos[0]) for _ in range(3)]
    for ch in range(c):
        plane, go = flat[:, ch], gout[:, ch]
        for lin, ok, terms, _ in corners:
            v = np.take_along_axis(plane, lin, axis=1)
            for k, (up, a, b) in enumerate(terms):
                t = ((v * a) * b) * go
                acc[k] = np.where(ok, acc[k] + t if up else acc[k] - t, acc[k])
    return gi, np.stack([acc[k] * mult[k] for k in range(3)], axis=-1).reshape(grid.shape)


def grid_sample_backward(ctx: Any, grad: Tensor) -> tuple:
    # differentiate the composite at the saved inputs (a graph of its own under create_graph)
    inp, grid = ctx.saved
    p = ctx.params
    needs = ctx.needs_input_grad
    create = _state.enabled
    if not create:  # leaves of the rule's own small graph, whatever the saved tensors are
        inp, grid = inp.detach().requires_grad_(needs[0]), grid.detach().requires_grad_(needs[1])
    as_kernel = (not create and grid._data.dtype == np.float32 and inp._data.dtype == np.float32
                 and grad._data.dtype == np.float32 and bool(np.isfinite(grid._data).all()))
    args = (inp._data, grid._data, grad._data, p["padding"], p["align_corners"])
    if as_kernel and p["mode"] == "bilinear" and grid.ndim == 5:
        gi_, gg_ = _trilinear_grads32(*args, need_input=needs[0])
        return (None if gi_ is None else Tensor._make(gi_),
                Tensor._make(gg_) if needs[1] else None)
    if as_kernel and p["mode"] == "bicubic" and needs[1]:
        gg = Tensor._make(_bicubic_grid_grad32(*args))
        if not needs[0]:
            return None, gg
        with enable_grad():
            out = _grid_sample_composite(inp, grid.detach(), p["mode"], p["padding"],
                                         p["align_corners"])
        (gi,) = autograd_grad(out, [inp], grad, allow_unused=True)
        if gi is None:
            gi = Tensor._make(np.zeros(inp.shape, dtype=inp._data.dtype))
        return gi, gg
    wanted = [t for t, need in zip((inp, grid), needs, strict=True) if need]
    with enable_grad():
        out = _grid_sample_composite(inp, grid, p["mode"], p["padding"], p["align_corners"])
    grads = iter(autograd_grad(out, wanted, grad, create_graph=create, allow_unused=True))
    res = []
    for t, need in zip((inp, grid), ctx.needs_input_grad, strict=True):
        g = next(grads) if need else None
        if need and g is None:
            g = Tensor._make(np.zeros(t.shape, dtype=t._data.dtype))
        res.append(g)
    return tuple(res)


_GRID_2D.rule = grid_sample_backward
_GRID_3D.rule = grid_sample_backward
_linked(_GRID_2D)  # create_graph: nearest mode's gradient is tied to the inputs (torch's is)
_linked(_GRID_3D)


def align_corners_or_default(align_corners: bool | None) -> bool:
    """``align_corners`` for ``grid_sample`` and ``affine_grid``: None is False, with torch's
    warning, which names the line that called them (two frames up)."""
    if align_corners is None:
        warnings.warn("Default grid_sample and affine_grid behavior has changed to "
                      "align_corners=False since 1.3.0. Please specify align_corners=True if "
                      "the old behavior is desired. See the documentation of grid_sample for "
                      "details.", stacklevel=3)
        return False
    return align_corners


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear",
                padding_mode: str = "zeros", align_corners: bool | None = None) -> Tensor:
    """Sample ``input`` (N, C, H, W) or (N, C, D, H, W) at the normalized positions of
    ``grid`` (N, H', W', 2) or (N, D', H', W', 3)."""
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError("nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    align_corners = align_corners_or_default(align_corners)
    # torch's checks in its order: the common ones (batch, last grid dimension, empty input),
    # then those of the 2-D (4-D input) or the 3-D kernel
    d = input.ndim - 2
    sizes = f"input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}"
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, "
                           f"but got {sizes}")
    if grid.shape[-1] != d:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {d} in last dimension, "
                           f"but got grid with sizes {list(grid.shape)}")
    for i in range(2, input.ndim):
        if input.shape[i] == 0:
            raise RuntimeError("grid_sampler(): expected input to have non-empty spatial "
                               f"dimensions, but input has sizes {list(input.shape)} with "
                               f"dimension {i} being empty")
    if input.ndim == 4:
        if grid.ndim != 4:
            raise RuntimeError("grid_sampler(): expected 4D input and grid with same number of "
                               f"dimensions, but got {sizes}")
    elif input.ndim != 5 or grid.ndim != 5:
        raise RuntimeError("grid_sampler(): expected 5D input and grid with same number of "
                           f"dimensions, but got {sizes}")
    if mode == "bicubic" and d != 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    op = _GRID_2D if d == 2 else _GRID_3D
    return op(input, grid, mode=mode, padding=padding_mode, align_corners=bool(align_corners))


# ---------------------------------------------------------------------------------------------
# fractional max pooling
# ---------------------------------------------------------------------------------------------

def fractional_intervals(sample: float, in_size: int, out_size: int, pool: int,
                         dtype: np.dtype) -> np.ndarray:
    """torch's pseudo-random window starts: alpha = (in - pool) / (out - 1), start_i =
    floor((i + u) alpha) - floor(u alpha), the last window flush with the end."""
    seq = np.empty(out_size, dtype=np.int64)
    if out_size > 1:
        t = dtype.type
        alpha = t(in_size - pool) / t(out_size - 1)
        u = t(sample)
        for i in range(out_size - 1):
            seq[i] = int(t(i + u) * alpha) - int(u * alpha)
    seq[out_size - 1] = in_size - pool
    return seq


def fractional_max_pool(x: np.ndarray, samples: np.ndarray, pool: tuple,
                        out_size: tuple) -> tuple[np.ndarray, np.ndarray]:
    """Values and flat indices of fractional max pooling over the last len(pool) dims of a
    (N, C, *spatial) array; samples (N, C, d) holds one uniform per spatial dim (x first)."""
    n, c = x.shape[:2]
    sizes = x.shape[2:]
    d = len(sizes)
    out = np.empty((n, c) + out_size, dtype=x.dtype)
    idx = np.empty((n, c) + out_size, dtype=np.int64)
    flat = x.reshape(n, c, math.prod(sizes))
    for b in range(n):
        for ch in range(c):
            # torch's 2-D kernel takes sample 0 for the width, its 3-D kernel for the depth
            order = [d - 1 - k for k in range(d)] if d == 2 else list(range(d))
            starts = [fractional_intervals(float(samples[b, ch, order[k]]), sizes[k],
                                           out_size[k], pool[k], x.dtype) for k in range(d)]
            win = [starts[k][:, None] + np.arange(pool[k])[None, :] for k in range(d)]
            # positions of every window element: (out..., pool...)
            lin = np.zeros(out_size + pool, dtype=np.int64)
            stride = 1
            for k in reversed(range(d)):
                shape = [1] * (2 * d)
                shape[k] = out_size[k]
                shape[d + k] = pool[k]
                lin = lin + win[k].reshape(shape) * stride
                stride *= sizes[k]
            vals = flat[b, ch][lin.reshape(out_size + (-1,))]
            # the first maximum, NaN winning, as torch's loop keeps it
            key = np.where(np.isnan(vals), np.inf, vals)
            arg = np.argmax(key, axis=-1)
            out[b, ch] = np.take_along_axis(vals, arg[..., None], -1)[..., 0]
            idx[b, ch] = np.take_along_axis(lin.reshape(out_size + (-1,)), arg[..., None],
                                            -1)[..., 0]
    return out, idx


def _fractional_forward(x: np.ndarray, *, samples: np.ndarray, pool: tuple, out_size: tuple,
                        _cache: dict) -> tuple:
    out, idx = fractional_max_pool(x, samples, pool, out_size)
    n, c = x.shape[:2]
    _cache["indices"] = idx.reshape(n * c, math.prod(out_size))
    _cache["plane"] = int(np.prod(x.shape[2:]))
    return out, idx


_FRACTIONAL_2D = defop("fractional_max_pool2d", node="FractionalMaxPool2DBackward0",
                       outputs=2, save=(0,))(_fractional_forward)
_FRACTIONAL_3D = defop("fractional_max_pool3d", node="FractionalMaxPool3DBackward0",
                       outputs=2, save=(0,))(_fractional_forward)
_FRACTIONAL_2D.backward(max_pool_backward)  # the gradient goes to each window's maximum
_FRACTIONAL_3D.backward(max_pool_backward)
_linked(_FRACTIONAL_2D)  # create_graph: the gradient is tied to the input (torch's node is)
_linked(_FRACTIONAL_3D)

# the registry entries of this module (their tests: tests/nn/test_spatial.py)
NAMES = ("channel_shuffle", "affine_grid_generator", "grid_sampler_2d", "grid_sampler_3d",
         "fractional_max_pool2d", "fractional_max_pool3d")
