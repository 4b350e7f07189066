"""Convolution: ``convolution`` (every conv and transposed conv, ``ConvolutionBackward0``) by
im2col through a strided view and one matrix product per direction, and ``im2col``/``col2im``
(``F.unfold``/``F.fold``). ``_Geometry`` (the windows of a kernel over padded input) is also
what pooling slides.
"""


from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._tensor import Tensor
from . import reduction as rd
from ._registry import defop
from .nn_common import _fast_sum, _linked, _take
from .normalization import _channel_shape

_as_strided = np.lib.stride_tricks.as_strided

# ---------------------------------------------------------------------------------------------
# Convolution: im2col through a strided view, one matrix product per direction
#
#   x (N, C, *S) --pad--> xp --as_strided--> windows (N, C, *K, *O)   (a view, no copy)
#   cols = windows as (C*K, N*L)       (the one copy; each row a run of whole output rows)
#   out  = W (O, C*K) @ cols           (one product) -> (O, N, *O) -> (N, O, *O)
#   backward:  dW = g (O, N*L) @ cols^T      dcols = W^T @ g  (one product each)
#              dx = col2im(dcols): one strided add per kernel offset, never per pixel
#              (per kernel row in the stride-1 2-D path: see _conv_backward_chunked)
# Groups split C*K and O into G blocks: the same products with a leading group dim.
# F.unfold / F.fold are the im2col / col2im entries, in torch's (N, C*K, L) layout.
# ---------------------------------------------------------------------------------------------

class _Scratch:
    """Reused work arrays for the convolution's big temporaries (the im2col matrix, its
    gradient, the padded flat input). A training loop asks for the same shapes every step;
    handing back the previous step's arrays saves the page faults a fresh multi-megabyte
    allocation costs. Only arrays nothing else references are ever put back."""

    def __init__(self, limit_bytes: int = 1 << 28) -> None:
        self.free: dict = {}
        self.limit = limit_bytes
        self.bytes = 0

    def get(self, shape: tuple, dtype: Any) -> np.ndarray:
        stack = self.free.get((shape, np.dtype(dtype)))
        if stack:
            a = stack.pop()
            self.bytes -= a.nbytes
            return a
        return np.empty(shape, dtype=dtype)

    def put(self, a: np.ndarray) -> None:
        if a.base is not None or not a.flags.c_contiguous or a.nbytes < 1 << 16:
            return
        stack = self.free.setdefault((a.shape, a.dtype), [])
        if len(stack) >= 2 or self.bytes + a.nbytes > self.limit:
            return
        stack.append(a)
        self.bytes += a.nbytes


_SCRATCH = _Scratch()


def _out_size(size: int, k: int, stride: int, lo: int, hi: int, dilation: int) -> int:
    return (size + lo + hi - dilation * (k - 1) - 1) // stride + 1


def _windows(xp: np.ndarray, kernel: tuple, stride: tuple, dilation: tuple,
             out: tuple) -> np.ndarray:
    """View (N, C, *kernel, *out) of xp (N, C, *S): entry [.., k, o] is xp[.., k*dil + o*s]."""
    sp = xp.strides[2:]
    shape = xp.shape[:2] + tuple(kernel) + tuple(out)
    strides = (xp.strides[:2] + tuple(s * d for s, d in zip(sp, dilation, strict=True))
               + tuple(s * st for s, st in zip(sp, stride, strict=True)))
    return _as_strided(xp, shape, strides, writeable=False)


def _pad_array(x: np.ndarray, pads: tuple, value: Any = 0) -> np.ndarray:
    if not any(lo or hi for lo, hi in pads):
        return x
    return np.pad(x, ((0, 0), (0, 0)) + tuple(pads), mode="constant", constant_values=value)


def _col2im(windows: np.ndarray, padded: tuple, kernel: tuple, stride: tuple,
            dilation: tuple) -> np.ndarray:
    """Add windows (N, C, *kernel, *out) back where they came from: an array of ``padded``."""
    out = np.zeros(padded, dtype=windows.dtype)
    _col2im_into(out, windows, kernel, stride, dilation)
    return out


def _col2im_into(out: np.ndarray, windows: np.ndarray, kernel: tuple, stride: tuple,
                 dilation: tuple) -> None:
    osz = windows.shape[2 + len(kernel):]
    head = (slice(None), slice(None))
    # (the adds run over a (C, N, ...) view of both sides: the batch dim innermost of the two)
    out_t = out.swapaxes(0, 1)
    win_t = windows.swapaxes(0, 1)
    for offs in np.ndindex(*kernel):
        region = tuple(slice(o * d, o * d + s * (n - 1) + 1, s)
                       for o, d, s, n in zip(offs, dilation, stride, osz, strict=True))
        out_t[head + region] += win_t[head + offs]


def _crop(x: np.ndarray, pads: tuple) -> np.ndarray:
    if not any(lo or hi for lo, hi in pads):
        return x
    return x[(slice(None), slice(None)) + tuple(slice(lo, x.shape[2 + i] - hi)
                                                for i, (lo, hi) in enumerate(pads))]


class _Geometry:
    """Kernel, stride, padding (before, after) per dim, dilation, and the sizes they give."""

    __slots__ = ("kernel", "stride", "pads", "dilation", "in_size", "out_size", "padded",
                 "flat")

    def __init__(self, in_size: tuple, kernel: tuple, stride: tuple, pads: tuple,
                 dilation: tuple, out_size: tuple | None = None) -> None:
        self.kernel, self.stride, self.pads, self.dilation = kernel, stride, pads, dilation
        # the flat layout (below) is open to stride-1 2-D windows; _conv_geometry may close it
        self.flat = len(kernel) == 2 and stride == (1, 1)
        self.in_size = tuple(in_size)
        self.padded = tuple(n + lo + hi for n, (lo, hi) in zip(in_size, pads, strict=True))
        if out_size is None:
            out_size = tuple(_out_size(n, k, s, lo, hi, d) for n, k, s, (lo, hi), d in
                             zip(in_size, kernel, stride, pads, dilation, strict=True))
        self.out_size = tuple(out_size)

    def cols(self, x: np.ndarray) -> np.ndarray:
        """im2col: (N, C*K, L), rows ordered (c, *kernel), columns (*out)."""
        win = _windows(_pad_array(x, self.pads), self.kernel, self.stride, self.dilation,
                       self.out_size)
        n, c = x.shape[:2]
        return np.ascontiguousarray(win).reshape(n, c * math.prod(self.kernel),
                                                 math.prod(self.out_size))

    def uncols(self, cols: np.ndarray, c: int) -> np.ndarray:
        """col2im of (N, C*K, L): the windows summed back into (N, C, *in_size)."""
        n = cols.shape[0]
        win = cols.reshape((n, c) + self.kernel + self.out_size)
        full = _col2im(win, (n, c) + self.padded, self.kernel, self.stride, self.dilation)
        return _crop(full, self.pads)

    # The convolution's own layout: im2col as one matrix (C*K, N*R), R entries per image.
    # Stride-1 2-D windows are read from the flattened plane: entry (c, k) of image n is one
    # contiguous run of the plane starting at k's offset, R = out_h * padded_w long (the columns
    # past out_w are junk that the forward drops and the backward feeds zero gradients), so the
    # copies and the col2im adds move long contiguous runs instead of short rows.

    # Without the flat layout, stride-1 windows take the batch-last layout: columns ordered
    # (*out, n) over a (C, *padded, N) copy of the input, so that each copied run is a whole
    # output row of every image (out_w * N entries) instead of one image's (out_w): on
    # ResNet-18's 4x4 and 8x8 maps, batch 4, the im2col copy 0.49 -> 0.18 ms (AMD EPYC).
    # Strided windows keep the columns (n, *out): the input's move costs more than it saves.

    @property
    def batch_last(self) -> bool:
        return not self.flat and all(st == 1 for st in self.stride)

    def image_major(self, a: np.ndarray, n: int) -> np.ndarray:
        """(P, L*N) batch-last columns as (P, N*L), image by image (otherwise ``a`` itself):
        the weight gradient's product sums its columns in this order, which gives torch's
        bits where the plain layout did."""
        if not self.batch_last:
            return a
        return np.ascontiguousarray(a.reshape(a.shape[0], -1, n).swapaxes(1, 2)).reshape(
            a.shape[0], -1)

    @property
    def run(self) -> int:
        if self.flat:
            return self.out_size[0] * self.padded[1]
        return math.prod(self.out_size)

    def _flat_buffer(self, x: np.ndarray, value: Any = 0) -> np.ndarray:
        """The padded input as one flat buffer with a zero tail (the last runs read past the
        last plane by (kw - 1) * dilation_w)."""
        n, c = x.shape[:2]
        size = n * c * math.prod(self.padded)
        tail = (self.kernel[1] - 1) * self.dilation[1]
        buf = _SCRATCH.get((size + tail,), x.dtype)
        buf[size:] = 0
        dst = buf[:size].reshape((n, c) + self.padded)
        if any(lo or hi for lo, hi in self.pads):
            dst[...] = value
            dst[(slice(None), slice(None)) + tuple(
                slice(lo, lo + m) for (lo, _), m in zip(self.pads, self.in_size, strict=True))
            ] = x
        else:
            dst[...] = x
        return buf

    def _flat_view(self, buf: np.ndarray, n: int, c: int, offset: int = 0,
                   with_kernel: bool = True) -> np.ndarray:
        it = buf.itemsize
        plane = self.padded[0] * self.padded[1]
        shape: tuple
        strides: tuple
        if with_kernel:
            shape = (c, self.kernel[0], self.kernel[1], n, self.run)
            strides = (plane * it, self.dilation[0] * self.padded[1] * it,
                       self.dilation[1] * it, c * plane * it, it)
        else:
            shape = (c, n, self.run)
            strides = (plane * it, c * plane * it, it)
        return _as_strided(buf[offset:], shape, strides, writeable=not with_kernel)

    def cols_t(self, x: np.ndarray) -> np.ndarray:
        """im2col as one matrix (C*K, N*R)."""
        n, c = x.shape[:2]
        kk = math.prod(self.kernel)
        if self.flat:
            buf = self._flat_buffer(x)
            view = self._flat_view(buf, n, c)
            cols = _SCRATCH.get((c * kk, n * self.run), x.dtype)
            np.copyto(cols.reshape(view.shape), view)
            _SCRATCH.put(buf)
            return cols
        if self.batch_last:
            xt = self._batch_last_padded(x)  # (C, *padded, N)
            d = len(self.kernel)
            sp = xt.strides[1:1 + d]
            win = _as_strided(xt, (c,) + self.kernel + self.out_size + (n,),
                              (xt.strides[0],)
                              + tuple(st * dl for st, dl in zip(sp, self.dilation, strict=True))
                              + sp + (xt.strides[-1],), writeable=False)
            return np.ascontiguousarray(win).reshape(c * kk, -1)
        win = _windows(_pad_array(x, self.pads), self.kernel, self.stride, self.dilation,
                       self.out_size)
        d = len(self.kernel)
        order = (1,) + tuple(range(2, 2 + d)) + (0,) + tuple(range(2 + d, 2 + 2 * d))
        return np.ascontiguousarray(win.transpose(order)).reshape(c * kk, -1)

    def _batch_last_padded(self, x: np.ndarray) -> np.ndarray:
        """x (N, C, *in_size) padded with zeros and moved to (C, *padded, N)."""
        moved = np.moveaxis(x, 0, -1)
        if not any(lo or hi for lo, hi in self.pads):
            return np.ascontiguousarray(moved)
        xt = np.zeros((x.shape[1],) + self.padded + (x.shape[0],), dtype=x.dtype)
        xt[(slice(None),) + self._interior()] = moved
        return xt

    def _interior(self) -> tuple:
        """The slices of the padded spatial dims that hold the input."""
        return tuple(slice(lo, lo + m) for (lo, _), m in zip(self.pads, self.in_size, strict=True))

    def uncols_t(self, cols: np.ndarray, n: int, c: int) -> np.ndarray:
        """col2im of (C*K, N*R): the windows summed back into (N, C, *in_size), contiguous."""
        if self.flat:
            plane = self.padded[0] * self.padded[1]
            buf = np.zeros(n * c * plane + (self.kernel[1] - 1) * self.dilation[1],
                           dtype=cols.dtype)
            runs = cols.reshape((c,) + self.kernel + (n, self.run))
            for i in range(self.kernel[0]):
                for j in range(self.kernel[1]):
                    off = i * self.dilation[0] * self.padded[1] + j * self.dilation[1]
                    view = self._flat_view(buf, n, c, off, with_kernel=False)
                    view += runs[:, i, j]
            full = buf[:n * c * plane].reshape((n, c) + self.padded)
            return np.ascontiguousarray(_crop(full, self.pads))
        if self.batch_last:  # one add per kernel offset into (C, *padded, N)
            win = cols.reshape((c,) + self.kernel + self.out_size + (n,))
            full_t = np.zeros((c,) + self.padded + (n,), dtype=cols.dtype)
            for offs in np.ndindex(*self.kernel):
                region = tuple(slice(o * dl, o * dl + m) for o, dl, m in
                               zip(offs, self.dilation, self.out_size, strict=True))
                full_t[(slice(None),) + region] += win[(slice(None),) + offs]
            inner = full_t[(slice(None),) + self._interior()]
            return np.ascontiguousarray(np.moveaxis(inner, -1, 0))
        d = len(self.kernel)
        win = cols.reshape((c,) + self.kernel + (n,) + self.out_size)
        order = (d + 1, 0) + tuple(range(1, 1 + d)) + tuple(range(d + 2, 2 * d + 2))
        full = np.zeros((n, c) + self.padded, dtype=cols.dtype)
        _col2im_into(full, win.transpose(order), self.kernel, self.stride, self.dilation)
        return np.ascontiguousarray(_crop(full, self.pads))

    def rows_to_out(self, rows: np.ndarray, n: int, bias: Any = None) -> np.ndarray:
        """(O, N*R) products -> (N, O, *out_size), contiguous (junk columns dropped), plus
        the bias per channel if given (added in the same pass as the copy)."""
        o = rows.shape[0]
        if self.flat:
            r = rows.reshape(o, n, self.out_size[0], self.padded[1])[..., :self.out_size[1]]
            r = r.swapaxes(0, 1)
        elif self.batch_last:
            r = np.moveaxis(rows.reshape((o,) + self.out_size + (n,)), -1, 0)
        else:
            r = rows.reshape((o, n) + self.out_size).swapaxes(0, 1)
        if bias is None:
            return np.ascontiguousarray(r)
        out = np.empty((n, o) + self.out_size, dtype=rows.dtype)
        np.add(r, bias.reshape(_channel_shape(out.ndim, o)), out=out)
        return out

    def out_to_rows(self, g: np.ndarray, rows: np.ndarray | None = None,
                    image_major: bool = False) -> np.ndarray:
        """(N, O, *out_size) -> (O, N*R), zeros in the junk columns; written into ``rows``
        when given (flat geometry). ``image_major``: the columns (n, *out) even where the
        layout is batch-last (what ``image_major`` makes of the other operand)."""
        n, o = g.shape[:2]
        if self.flat:
            if rows is None:
                rows = _SCRATCH.get((o, n * self.run), g.dtype)
            r4 = rows.reshape(o, n, self.out_size[0], self.padded[1])
            r4[..., self.out_size[1]:] = 0
            r4[..., :self.out_size[1]] = g.swapaxes(0, 1)
            return rows
        if self.batch_last and not image_major:
            return np.ascontiguousarray(np.moveaxis(g, 0, -1)).reshape(o, -1)
        return np.ascontiguousarray(g.swapaxes(0, 1)).reshape(o, -1)


# The common case (2-D, stride 1, one group) runs a few images at a time. One chunk's im2col
# matrix (about _CHUNK_BYTES) stays in the CPU's cache from the copy that builds it to the
# product that reads it, instead of a whole batch's (11.5 MB in the benchmark's second layer)
# going out to memory and back; the backward rebuilds each chunk from the padded input rather
# than keeping the batch's matrix alive between the passes. Measured on the benchmark's
# 16->32 layer with a cold cache: 2.3 ms -> 1.6 ms forward.
# A chunk also stays under _CHUNK_COLUMNS columns: the weight gradient's product runs over
# them, and OpenBLAS takes several times longer on a long inner dimension with a small result
# (the first layer's (9 x 23296) @ (23296 x 16): 0.24 ms whole, 0.07 ms in 4096-column pieces).
# The sizes: 8 images a chunk in both of the benchmark's layers, against 4 and 5 at 1.5 MB and
# 4096 columns, measured 4.5 -> 4.4 ms for their forward and backward; 2 images (2.9 ms for the
# second layer's backward) and 16 (2.7) are slower than 8 (2.5).
#
# The input gradient goes through the kernel's column offsets on the gradient side. Column Q of
# a chunk's rows is output position q = h*pw + w, and dcols = W^T G0 puts entry (c, i, j) of it
# at input position q + i*dh*pw + j*dw, so col2im would cost one add per kernel offset. Summing
# over j first, D[(c, i), Q] = sum_j dcols[(c, i, j), Q - j*dw] = Wm @ [G0; G1; ...] with
# G_j = G0 shifted right by j*dw columns and Wm[(c, i), (j, o)] = W[o, c, i, j]: one product of
# the same cost, then one add per kernel row (3 instead of 9 for 3x3). A shift moves nothing
# across an output row's start but zeros: the last (kw-1)*dw columns of every output row are
# junk columns, zero in G0, and the chunk's first columns are filled with zeros.
# Measured on the benchmark's two layers, forward and backward: 5.3 -> 4.9 ms.
_CHUNK_BYTES = 3 << 20
_CHUNK_COLUMNS = 6144


# The weight gradient as (O, C*K) straight from g cols^T, instead of cols g^T (C*K, O) and a
# transposed copy, once the weight is large: NumPy's copy of a big transposed matrix runs
# column by column through memory (a (4608, 512) one, ResNet-18's last stage: 15 to 22 ms on
# one thread, three times its product), while the two products take the same time at that
# size. Below 2^18 entries the copy is cheap (0.2 ms at (1153, 128)) and cols g^T is the faster
# product (up to 1.3x at (145, 32) over 6048 columns). Measured on one thread, AMD EPYC.
_DIRECT_WGRAD_ENTRIES = 1 << 18


def _direct_weight_grad(o: int, ck: int) -> bool:
    return o * ck >= _DIRECT_WGRAD_ENTRIES


# Small planes go the plain way: the flat layout's junk columns ((kw-1)*dw of every padded row)
# are work in all three products, a third of it on a 4x4 map padded to 6x6, and once the
# products outweigh the copies (C*K of 256 or more) the plain im2col's exact columns pay,
# the whole batch at once. Measured on one thread, batch 4, 3x3 padding 1, forward +
# backward: 512 ch on 4x4 maps 30.9 ms chunked in the flat layout, 21.8 unchunked; then, on
# an AMD EPYC, 18.0 unchunked flat against 14.3 with exact columns, 256 ch on 8x8 13.5
# against 12.4; 128 ch on 16x16 (junk 2/18) is about even, so the rule draws the line at an
# eighth of the padded row.
_JUNK_FRACTION = 8  # the flat layout while (kw-1)*dw <= padded_w / _JUNK_FRACTION
_PLAIN_MIN_CK = 256


def _flat_pays(geo: _Geometry, ck: int) -> bool:
    junk = (geo.kernel[1] - 1) * geo.dilation[1]
    return junk * _JUNK_FRACTION <= geo.padded[1] or ck < _PLAIN_MIN_CK


def _chunked(geo: _Geometry, groups: int, transposed: bool) -> bool:
    return geo.flat and groups == 1 and not transposed


def _chunk_images(geo: _Geometry, n: int, c: int, itemsize: int) -> int:
    per_image = c * math.prod(geo.kernel) * geo.run * itemsize
    by_bytes = _CHUNK_BYTES // max(per_image, 1)
    return max(1, min(n, by_bytes, _CHUNK_COLUMNS // max(geo.run, 1)))


def _copy_shifted(src: np.ndarray, dst: np.ndarray) -> None:
    """``dst[...] = src`` for a destination a few bytes past its source modulo 4096 (a
    shifted copy inside one buffer whose size is a multiple of the page): the C library's
    ``memmove``, which NumPy's copy calls, runs about ten times slower on such a pair on AMD
    EPYC (185 against 16 us for 640 KB); NumPy's multiply by one, the same bits, does not."""
    np.multiply(src, src.dtype.type(1), out=dst)


def _conv_forward_chunked(geo: _Geometry, x: np.ndarray, w2: np.ndarray, b: Any,
                          cache: dict) -> np.ndarray:
    """out = [W b] [cols; 1], chunk by chunk: cols (C*K, m*R) and a row of ones (the bias rides
    in the product instead of costing a pass of its own) -> (O, m*R) -> out[m images]."""
    n, c = x.shape[:2]
    o = w2.shape[0]
    oh, ow = geo.out_size
    pw, run = geo.padded[1], geo.run
    buf = geo._flat_buffer(x)
    cache["buf"] = buf
    m = _chunk_images(geo, n, c, x.itemsize)
    ck = c * math.prod(geo.kernel)
    extra = 0 if b is None else 1
    if b is not None:
        w2 = np.concatenate([w2, b.reshape(o, 1).astype(w2.dtype, copy=False)], axis=1)
    cols_buf = _SCRATCH.get(((ck + 1) * m * run,), x.dtype)
    rows_buf = _SCRATCH.get((o * m * run,), x.dtype)
    out = np.empty((n, o, oh, ow), dtype=np.result_type(x.dtype, w2.dtype))
    windows = geo._flat_view(buf, n, c)  # (C, kh, kw, N, R), sliced per chunk
    for s in range(0, n, m):
        k = min(m, n - s)
        view = windows[:, :, :, s:s + k]
        cols = cols_buf[:(ck + extra) * k * run].reshape(ck + extra, k * run)
        np.copyto(cols[:ck].reshape(view.shape), view)
        if extra:
            cols[ck] = 1
        rows = rows_buf[:o * k * run].reshape(o, k * run)
        np.matmul(w2, cols, out=rows)
        np.copyto(out[s:s + k], rows.reshape(o, k, oh, pw)[..., :ow].swapaxes(0, 1))
    _SCRATCH.put(cols_buf)
    _SCRATCH.put(rows_buf)
    return out


def _conv_backward_chunked(geo: _Geometry, g: np.ndarray, x: np.ndarray, w: np.ndarray,
                           need_x: bool, need_w: bool, need_b: bool, cache: dict) -> tuple:
    """Per chunk: g -> rows G0 (O, m*R); [dW db]^T += [cols; 1] G0^T (the bias gradient, the
    sum of g, comes out of the same product); the input gradient through G's shifted copies
    (see the comment above), added back one kernel row at a time."""
    n, c = x.shape[:2]
    o = w.shape[0]
    ph, pw = geo.padded
    run, plane = geo.run, ph * pw
    kh, kw = geo.kernel
    dh, dw = geo.dilation
    ck = c * kh * kw
    buf = _take(cache, "buf", lambda: geo._flat_buffer(x))
    m = _chunk_images(geo, n, c, x.itemsize)
    shifts = kw if need_x else 1  # G's blocks: G[j] is G0 shifted right by j * dw columns
    # G's rows are ``pitch`` apart, ``lead`` zero columns before G0's: G[j] is one copy of G0's
    # rows read from j * dw columns to the left (see _copy_shifted)
    lead = (kw - 1) * dw if need_x else 0
    pitch = lead + m * run
    g_buf = _SCRATCH.get((shifts * o * pitch,), g.dtype)
    blocks = g_buf.reshape(shifts, o, pitch)
    blocks[0, :, :lead] = 0
    cols_buf = _SCRATCH.get(((ck + 1) * m * run,), g.dtype)  # [cols; 1], then D
    lo = 0 if need_w else ck  # the rows of [cols; 1] the weight/bias gradients need
    hi = ck + 1 if need_b else ck
    gwt = part = gbuf = wm = None
    direct = _direct_weight_grad(o, hi - lo)
    if hi > lo:  # [dW db]^T (hi-lo, O), or [dW db] (O, hi-lo) when ``direct``
        gwt = np.empty((o, hi - lo) if direct else (hi - lo, o), dtype=g.dtype)
        part = np.empty_like(gwt)
    if need_x:
        gbuf = np.zeros(n * c * plane + (kw - 1) * dw, dtype=g.dtype)
        wm = np.ascontiguousarray(w.transpose(1, 2, 3, 0)).reshape(c * kh, kw * o)
    windows = geo._flat_view(buf, n, c) if need_w else None  # (C, kh, kw, N, R)
    # one (C, N, R) view of the input gradient per kernel row, sliced per chunk
    targets = [geo._flat_view(gbuf, n, c, i * dh * pw, with_kernel=False)
               for i in range(kh)] if gbuf is not None else []
    for s in range(0, n, m):
        k = min(m, n - s)
        width = k * run
        gs = blocks[:, :, lead:lead + width]  # (shifts, O, width), rows ``pitch`` apart
        rows = geo.out_to_rows(g[s:s + k], gs[0])
        cols = cols_buf[:(ck + 1) * width].reshape(ck + 1, width)
        if gwt is not None and part is not None:
            if windows is not None:
                view = windows[:, :, :, s:s + k]
                np.copyto(cols[:ck].reshape(view.shape), view)
            if need_b:
                cols[ck] = 1
            dst = gwt if s == 0 else part  # the first chunk's product is the running sum
            if direct:
                np.matmul(rows, cols[lo:hi].T, out=dst)
            else:
                np.matmul(cols[lo:hi], rows.T, out=dst)
            if s:
                np.add(gwt, part, out=gwt)
        if gbuf is not None and wm is not None:
            for j in range(1, shifts):
                _copy_shifted(blocks[0, :, lead - j * dw:lead - j * dw + width], gs[j])
            dx = cols[:c * kh]
            np.matmul(wm, gs.reshape(shifts * o, width), out=dx)  # in the same buffer
            runs = dx.reshape(c, kh, k, run)
            for i, target in enumerate(targets):
                target[:, s:s + k] += runs[:, i]
    _SCRATCH.put(g_buf)
    _SCRATCH.put(cols_buf)
    _SCRATCH.put(buf)
    gw = gb = None
    if gwt is not None:
        if direct:
            if need_w:
                gw = (gwt if hi == ck else np.ascontiguousarray(gwt[:, :ck])).reshape(w.shape)
            if need_b:
                gb = np.ascontiguousarray(gwt[:, -1])
        else:
            if need_w:
                gw = np.ascontiguousarray(gwt[:ck].T).reshape(w.shape)
            if need_b:
                gb = np.ascontiguousarray(gwt[-1])
    gx = None
    if gbuf is not None:
        full = gbuf[:n * c * plane].reshape((n, c) + geo.padded)
        gx = np.ascontiguousarray(_crop(full, geo.pads))
    return gx, gw, gb


def _conv_geometry(p: dict, kernel: tuple, spatial: tuple, ck: int) -> _Geometry:
    """A convolution's geometry, C*K = ``ck`` rows of im2col per group."""
    pads = tuple((q, q) for q in p["padding"])
    geo = _Geometry(spatial, kernel, p["stride"], pads, p["dilation"])
    geo.flat = geo.flat and _flat_pays(geo, ck)
    return geo


def _transposed_geometry(p: dict, kernel: tuple, spatial: tuple) -> _Geometry:
    """The geometry of the convolution whose input gradient a transposed one computes: its
    input is the transposed convolution's output, its output the transposed one's input."""
    full = tuple((n - 1) * s + d * (k - 1) + 1 + op for n, s, d, k, op in
                 zip(spatial, p["stride"], p["dilation"], kernel, p["output_padding"],
                     strict=True))
    pads = tuple((q, q) for q in p["padding"])
    inner = tuple(f - 2 * q for f, q in zip(full, p["padding"], strict=True))
    return _Geometry(inner, kernel, p["stride"], pads, p["dilation"], spatial)


def _mats(a: np.ndarray, groups: int) -> np.ndarray:
    """(G*P, M) -> (G, P, M) (no copy); unchanged for one group."""
    return a if groups == 1 else a.reshape(groups, -1, a.shape[-1])


def _unmats(a: np.ndarray, groups: int) -> np.ndarray:
    return a if groups == 1 else a.reshape(-1, a.shape[-1])


def _wmat2(w: np.ndarray, groups: int) -> np.ndarray:
    """The weight (A, B, *K) as (A, B*K), or (G, A/G, B*K) with groups."""
    return _mats(w.reshape(w.shape[0], -1), groups)


@defop("convolution", node="ConvolutionBackward0", save=(0, 1))
def _convolution(x: np.ndarray, w: np.ndarray, b: Any, *, stride: tuple, padding: tuple,
                 dilation: tuple, groups: int, transposed: bool, output_padding: tuple,
                 _cache: dict) -> np.ndarray:
    p = {"stride": stride, "padding": padding, "dilation": dilation,
         "output_padding": output_padding}
    n = x.shape[0]
    kernel = tuple(w.shape[2:])
    if not transposed:  # out = W cols
        geo = _conv_geometry(p, kernel, x.shape[2:], math.prod(w.shape[1:]))
        if _chunked(geo, groups, transposed):
            return _conv_forward_chunked(geo, x, w.reshape(w.shape[0], -1), b, _cache)
        cols = geo.cols_t(x)
        _cache["cols"] = cols
        rows = _unmats(np.matmul(_wmat2(w, groups), _mats(cols, groups)), groups)
        return geo.rows_to_out(rows, n, b)
    # transposed: out = col2im(W^T x), the input gradient of the matching convolution
    geo = _transposed_geometry(p, kernel, x.shape[2:])
    c_out = w.shape[1] * groups
    x2 = _mats(geo.out_to_rows(x), groups)
    cols = np.matmul(np.swapaxes(_wmat2(w, groups), -1, -2), x2)
    out = geo.uncols_t(_unmats(cols, groups), n, c_out)
    if b is not None:
        out += b.reshape(_channel_shape(out.ndim, c_out))
    return out


def _conv_backward_arrays(ctx: Any, g: np.ndarray, x: np.ndarray, w: np.ndarray) -> tuple:
    """The gradients on the arrays (the op's fast path: ops/fast_paths.py)."""
    p = ctx.params
    groups = p["groups"]
    n = x.shape[0]
    kernel = tuple(w.shape[2:])
    need_x, need_w, need_b = ctx.needs_input_grad
    gx = gw = gb = None
    if not p["transposed"]:
        geo = _conv_geometry(p, kernel, x.shape[2:], math.prod(w.shape[1:]))
        if _chunked(geo, groups, False):
            return _conv_backward_chunked(geo, g, x, w, need_x, need_w, need_b, p["_cache"])
    if need_b:
        gb = _fast_sum(g, (0,) + tuple(range(2, g.ndim)), False)
    if not p["transposed"]:
        rows = geo.out_to_rows(g)
        g2 = _mats(rows, groups)  # (O, N*R)
        if need_w:
            cols = _take(p["_cache"], "cols", lambda: geo.cols_t(x))
            c2 = _mats(geo.image_major(cols, n), groups)
            gm = _mats(geo.out_to_rows(g, image_major=True), groups) if geo.batch_last else g2
            if _direct_weight_grad(gm.shape[-2], c2.shape[-2]):
                gw = np.matmul(gm, np.swapaxes(c2, -1, -2)).reshape(w.shape)
            else:
                # dW^T = cols g^T, transposed back: the product with the long N*R dim inner to
                # both operands' rows runs about 1.7x faster in OpenBLAS than g cols^T
                # (measured).
                gwt = np.matmul(c2, np.swapaxes(gm, -1, -2))
                gw = np.ascontiguousarray(np.swapaxes(gwt, -1, -2)).reshape(w.shape)
            _SCRATCH.put(cols)
        else:
            _SCRATCH.put(p["_cache"].pop("cols", np.empty(0)))
        if need_x:
            wt = np.swapaxes(_wmat2(w, groups), -1, -2)
            dcols = _SCRATCH.get((wt.shape[-2] * groups, g2.shape[-1]), g.dtype)
            np.matmul(wt, g2, out=_mats(dcols, groups))
            gx = geo.uncols_t(dcols, n, x.shape[1])
            _SCRATCH.put(dcols)
        _SCRATCH.put(rows)
        return gx, gw, gb
    geo = _transposed_geometry(p, kernel, x.shape[2:])
    gcols = _mats(geo.cols_t(g), groups)  # (C_out*K, N*R)
    if need_w:
        x2 = _mats(geo.out_to_rows(x, image_major=True), groups)
        gc = _mats(geo.image_major(_unmats(gcols, groups), n), groups)
        gw = np.matmul(x2, np.swapaxes(gc, -1, -2)).reshape(w.shape)
    if need_x:
        gx = geo.rows_to_out(_unmats(np.matmul(_wmat2(w, groups), gcols), groups), n)
    return gx, gw, gb


@_convolution.backward
def convolution_backward(ctx: Any, grad: Tensor) -> tuple:
    # dx = col2im(W^T g), dW = g im2col(x)^T, db = sum g
    x, w = ctx.saved
    return _conv_backward_tensors(ctx, grad, x, w)


def _conv_backward_tensors(ctx: Any, g: Tensor, x: Tensor, w: Tensor) -> tuple:
    """The same gradients with Tensor ops (im2col / col2im entries), for create_graph."""
    p = ctx.params
    groups = p["groups"]
    need_x, need_w, need_b = ctx.needs_input_grad
    n = x.shape[0]
    kernel = tuple(w.shape[2:])
    gb = rd.sum(g, (0,) + tuple(range(2, g.ndim))) if need_b else None
    gx = gw = None

    def grouped(t: Tensor) -> Tensor:
        return t.reshape((t.shape[0], groups, -1) + tuple(t.shape[2:]))

    wm = w.reshape(groups, w.shape[0] // groups, -1)  # (G, A/G, B*K)
    if not p["transposed"]:
        geo = _conv_geometry(p, kernel, tuple(x.shape[2:]), math.prod(w.shape[1:]))
        g2 = grouped(g.reshape(n, g.shape[1], -1))  # (N, G, O/G, L)
        if need_w:
            cols = grouped(_im2col(x, geo=geo))
            gw = rd.sum(g2.matmul(cols.transpose(-1, -2)), (0,)).reshape(tuple(w.shape))
        if need_x:
            dcols = wm.transpose(-1, -2).matmul(g2).reshape(n, -1, g2.shape[-1])
            gx = _col2im_op(dcols, geo=geo, channels=x.shape[1])
        return gx, gw, gb
    geo = _transposed_geometry(p, kernel, tuple(x.shape[2:]))
    gcols = grouped(_im2col(g, geo=geo))  # (N, G, C_out/G*K, L_in)
    xg = grouped(x.reshape(n, x.shape[1], -1))  # (N, G, C_in/G, L_in)
    if need_w:
        gw = rd.sum(xg.matmul(gcols.transpose(-1, -2)), (0,)).reshape(tuple(w.shape))
    if need_x:
        gx = wm.matmul(gcols).reshape(tuple(x.shape))
    return gx, gw, gb


@defop("im2col", node="Im2ColBackward0")
def _im2col(x: np.ndarray, *, geo: _Geometry) -> np.ndarray:
    return geo.cols(x)


@_im2col.backward
def im2col_backward(ctx: Any, grad: Tensor) -> tuple:  # the adjoint of im2col is col2im
    return (_col2im_op(grad, geo=ctx.params["geo"], channels=ctx.input_shapes[0][1]),)


@defop("col2im", node="Col2ImBackward0")
def _col2im_op(cols: np.ndarray, *, geo: _Geometry, channels: int) -> np.ndarray:
    return np.ascontiguousarray(geo.uncols(cols, channels))


@_col2im_op.backward
def col2im_op_backward(ctx: Any, grad: Tensor) -> tuple:  # the adjoint of col2im is im2col
    return (_im2col(grad, geo=ctx.params["geo"]),)


# Rules whose gradient torch's double-backward node ties to the forward's inputs (see _link)
_linked(_convolution)
