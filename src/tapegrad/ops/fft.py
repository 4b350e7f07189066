"""Discrete Fourier transforms (``torch.fft``) on NumPy's ``numpy.fft``, with torch's gradients.

NumPy's pocketfft is enough (SciPy's ``scipy.fft`` is the same pocketfft with threads, and not a
dependency tapegrad needs): single precision is transformed in double precision and rounded, so
float32 input gives complex64 as in torch, within about an ulp of torch's values. Three
primitives carry every transform, as in torch:

* ``c2c``: complex -> complex over ``dims``, forward (e^-i) or inverse (e^+i) kernel;
* ``r2c``: real -> complex, forward kernel; ``onesided`` keeps the last dim's n//2 + 1 entries;
* ``c2r``: the half spectrum of a Hermitian signal -> real, inverse kernel, last dim of size n.

``norm`` is NumPy's (and torch's) word: "backward" leaves the forward transform unscaled and
divides the inverse by n, "forward" the other way round, "ortho" scales both by 1/sqrt(n). A
transform ``y = A x`` is linear, so its gradient is ``A^H g``: the transform in the other
direction with the dual ``norm`` (backward <-> forward); r2c then keeps the real part (of the
gradient padded back to the full spectrum), and c2r's gradient is the one-sided forward
transform with the entries that stand for two (conjugate) bins doubled.

``n``/``s`` resize the input first (zero padding or trimming, recorded as ops of their own),
exactly as torch does, so the primitives only ever see the sizes they transform.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _dtype
from .._tensor import Tensor
from ._registry import defop, scalar_type_name
from .complex import conj, conj_physical, real
from .padding import pad
from .shape import roll

_DUAL: dict[str, Any] = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


def _wide(x: np.ndarray) -> np.ndarray:
    """Single precision is transformed in double and rounded once at the end: torch's
    transforms (MKL) are accurate to about an ulp, which single-precision pocketfft is not
    (several ulps on larger n-d transforms)."""
    if x.dtype == np.float32:
        return x.astype(np.float64)
    if x.dtype == np.complex64:
        return x.astype(np.complex128)
    return x


def _complex_of(x: np.ndarray) -> np.dtype:
    return np.dtype(np.complex64 if x.dtype in (np.float32, np.complex64) else np.complex128)


# --------------------------------------------------------------------------------------------
# The three primitives
# --------------------------------------------------------------------------------------------


@defop("fft_c2c", node="FftC2CBackward0")
def _c2c(x: np.ndarray, *, dims: tuple, norm: Any, forward: bool) -> np.ndarray:
    if not dims or x.size == 0:
        return x.astype(_complex_of(x), copy=True)
    f = np.fft.fftn if forward else np.fft.ifftn
    return np.asarray(f(_wide(x), axes=dims, norm=norm), dtype=_complex_of(x))


@_c2c.backward
def c2c_backward(ctx: Any, grad: Tensor) -> tuple:  # A^H: the other direction, the dual norm
    p = ctx.params
    return (_c2c(grad, dims=p["dims"], norm=_DUAL[p["norm"]], forward=not p["forward"]),)


@defop("fft_r2c", node="FftR2CBackward0")
def _r2c(x: np.ndarray, *, dims: tuple, norm: Any, onesided: bool) -> np.ndarray:
    cdt = _complex_of(x)
    if x.size == 0:
        shape = list(x.shape)
        if onesided:
            shape[dims[-1]] = shape[dims[-1]] // 2 + 1
        return np.zeros(shape, cdt)
    if onesided:
        return np.asarray(np.fft.rfftn(_wide(x), axes=dims, norm=norm), dtype=cdt)
    return np.asarray(np.fft.fftn(_wide(x), axes=dims, norm=norm), dtype=cdt)


@_r2c.backward
def r2c_backward(ctx: Any, grad: Tensor) -> tuple:
    # Re A^H g, the one-sided g padded with zeros first
    p = ctx.params
    dims = p["dims"]
    if p["onesided"]:
        last = dims[-1]
        n = ctx.input_shapes[0][last]
        grad = _resize(grad, (last,), (n,))
    return (real(_c2c(grad, dims=dims, norm=_DUAL[p["norm"]], forward=False)),)


@defop("fft_c2r", node="FftC2RBackward0")
def _c2r(x: np.ndarray, *, dims: tuple, norm: Any, n: int) -> np.ndarray:
    rdt = np.dtype(np.float32 if x.dtype == np.complex64 else np.float64)
    sizes = [x.shape[d] for d in dims[:-1]] + [n]
    if x.size == 0:
        shape = list(x.shape)
        shape[dims[-1]] = n
        return np.zeros(shape, rdt)
    return np.asarray(np.fft.irfftn(_wide(x), s=sizes, axes=dims, norm=norm), dtype=rdt)


@_c2r.backward
def c2r_backward(ctx: Any, grad: Tensor) -> tuple:
    # the one-sided forward transform; paired bins count 2x
    p = ctx.params
    dims, n = p["dims"], p["n"]
    g = _r2c(grad, dims=dims, norm=_DUAL[p["norm"]], onesided=True)
    half = n // 2 + 1
    twice = n - half  # bins 1 .. n - half stand for themselves and their conjugate mirror
    if twice > 0:
        w = np.ones(half, dtype=grad._data.dtype)
        w[1:1 + twice] = 2
        shape = [1] * grad.ndim
        shape[dims[-1]] = half
        g = g * Tensor._make(w.reshape(shape))
    return (g,)


_c2c.holomorphic = _r2c.holomorphic = _c2r.holomorphic = False

NAMES = ("fft_c2c", "fft_r2c", "fft_c2r")  # covered by OpInfo (tests/ops/test_opinfo.py)


# --------------------------------------------------------------------------------------------
# Arguments: dims, sizes, norm, dtypes
# --------------------------------------------------------------------------------------------


def _norm(norm: Any) -> Any:  # "backward", "forward" or "ortho" (NumPy's Literal type)
    if norm is None:
        return "backward"
    if norm not in _DUAL:
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')
    return norm


def _dim(d: int, ndim: int) -> int:
    if ndim == 0:
        raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
    if not -ndim <= d < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, "
                         f"{ndim - 1}], but got {d})")
    return d % ndim


def _check_n(n: int) -> None:
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


def _float_input(x: Tensor) -> Tensor:
    """Integers and bools are transformed as the default float dtype."""
    if x._data.dtype.kind in "biu":
        return x.to(_dtype.get_default_dtype())
    return x


def _real_only(x: Tensor, name: str) -> Tensor:
    if x.is_complex():
        raise RuntimeError(f"{name} expects a real input tensor, but got "
                           f"{scalar_type_name(x.dtype)}")
    return _float_input(x)


def _as_complex(x: Tensor) -> Tensor:
    x = _float_input(x)
    return x if x.is_complex() else x.to(x.dtype.to_complex())


def _resize(x: Tensor, dims: tuple, sizes: tuple) -> Tensor:
    """Trim or zero-pad ``x`` along ``dims`` to ``sizes`` (torch's resize of fft inputs)."""
    for d, n in zip(dims, sizes, strict=True):
        have = x.shape[d]
        if n < have:
            x = x.narrow(d, 0, n)
        elif n > have:
            widths = [0, 0] * (x.ndim - d)
            widths[-1] = n - have  # pad's list runs from the last dim backwards
            x = pad(x, widths)
    return x


def _one_dim(x: Tensor, n: Any, dim: int) -> tuple:
    d = _dim(dim, x.ndim)
    if n is None:
        n = x.shape[d]
    _check_n(n)
    return (d,), (n,)


def _n_dims(x: Tensor, s: Any, dim: Any) -> tuple:
    """torch's dims and sizes of an n-d transform: ``dim`` (all dims when None, the last
    ``len(s)`` when only ``s`` is given) and ``s`` (-1: the input's size)."""
    if isinstance(dim, int):
        dim = (dim,)
    if s is not None:
        s = tuple(s)
        if dim is None:
            if len(s) > x.ndim:
                raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has "
                                   f"{x.ndim} dimensions.")
            dim = tuple(range(x.ndim - len(s), x.ndim))
        elif len(s) != len(dim):
            raise RuntimeError(f"When given, dim and shape arguments must have the same length. "
                               f"Got dim={len(dim)} and shape={len(s)}")
    if dim is None:
        dims = tuple(range(x.ndim))
    else:
        dims = tuple(_dim(d, x.ndim) for d in dim)
    if len(set(dims)) != len(dims):
        raise RuntimeError("FFT dims must be unique")
    if s is None:
        sizes = tuple(x.shape[d] for d in dims)
    else:
        sizes = tuple(x.shape[d] if n == -1 else n for d, n in zip(dims, s, strict=True))
    for n in sizes:
        _check_n(n)
    return dims, sizes


# --------------------------------------------------------------------------------------------
# The transforms
# --------------------------------------------------------------------------------------------


def _fftn_any(x: Tensor, dims: tuple, sizes: tuple, norm: str, forward: bool,
              one_dim: bool) -> Tensor:
    x = _float_input(x)
    x = _resize(x, dims, sizes)
    if not x.is_complex() and one_dim:  # fft/ifft of a real signal: r2c, the full spectrum
        if forward:
            return _r2c(x, dims=dims, norm=norm, onesided=False)
        return conj(_r2c(x, dims=dims, norm=_DUAL[norm], onesided=False))
    return _c2c(_as_complex(x), dims=dims, norm=norm, forward=forward)


def fft(input: Tensor, n: Any = None, dim: int = -1, norm: Any = None) -> Tensor:
    """The one-dimensional discrete Fourier transform along ``dim`` (size ``n``)."""
    dims, sizes = _one_dim(input, n, dim)
    return _fftn_any(input, dims, sizes, _norm(norm), True, True)


def ifft(input: Tensor, n: Any = None, dim: int = -1, norm: Any = None) -> Tensor:
    """The inverse of ``fft``."""
    dims, sizes = _one_dim(input, n, dim)
    return _fftn_any(input, dims, sizes, _norm(norm), False, True)


def fftn(input: Tensor, s: Any = None, dim: Any = None, norm: Any = None) -> Tensor:
    """The n-dimensional transform over ``dim`` (every dim by default)."""
    dims, sizes = _n_dims(input, s, dim)
    return _fftn_any(input, dims, sizes, _norm(norm), True, False)


def ifftn(input: Tensor, s: Any = None, dim: Any = None, norm: Any = None) -> Tensor:
    """The inverse of ``fftn``."""
    dims, sizes = _n_dims(input, s, dim)
    return _fftn_any(input, dims, sizes, _norm(norm), False, False)


def fft2(input: Tensor, s: Any = None, dim: Any = (-2, -1), norm: Any = None) -> Tensor:
    """The two-dimensional transform over the last two dims."""
    return fftn(input, s, dim, norm)


def ifft2(input: Tensor, s: Any = None, dim: Any = (-2, -1), norm: Any = None) -> Tensor:
    return ifftn(input, s, dim, norm)


def _rfftn_any(x: Tensor, dims: tuple, sizes: tuple, norm: str) -> Tensor:
    return _r2c(_resize(x, dims, sizes), dims=dims, norm=norm, onesided=True)


def rfft(input: Tensor, n: Any = None, dim: int = -1, norm: Any = None) -> Tensor:
    """The transform of a real signal: the n//2 + 1 non-negative frequencies."""
    x = _real_only(input, "rfft")
    dims, sizes = _one_dim(x, n, dim)
    return _rfftn_any(x, dims, sizes, _norm(norm))


def rfftn(input: Tensor, s: Any = None, dim: Any = None, norm: Any = None) -> Tensor:
    x = _real_only(input, "rfftn")
    dims, sizes = _n_dims(x, s, dim)
    return _rfftn_any(x, dims, sizes, _norm(norm))


def rfft2(input: Tensor, s: Any = None, dim: Any = (-2, -1), norm: Any = None) -> Tensor:
    x = _real_only(input, "rfftn")
    dims, sizes = _n_dims(x, s, dim)
    return _rfftn_any(x, dims, sizes, _norm(norm))


def _irfft_sizes(x: Tensor, dims: tuple, s: Any) -> tuple:
    """The output sizes (the last one 2 (m - 1) by default) and the input sizes they read."""
    last = dims[-1]
    sizes = [x.shape[d] for d in dims]
    if s is None or s[-1] == -1:
        sizes[-1] = 2 * (x.shape[last] - 1)
    if s is not None:
        sizes = [n if given == -1 else given for n, given in zip(sizes, s, strict=True)]
    for n in sizes:
        _check_n(n)
    half = tuple(sizes[:-1]) + (sizes[-1] // 2 + 1,)
    return tuple(sizes), half


def _c2r_any(x: Tensor, dims: tuple, s: Any, norm: str, conj_first: bool) -> Tensor:
    x = _as_complex(x)
    sizes, half = _irfft_sizes(x, dims, s)
    x = _resize(x, dims, half)
    if conj_first:
        x = conj(x)
    return _c2r(x, dims=dims, norm=norm, n=sizes[-1])


def irfft(input: Tensor, n: Any = None, dim: int = -1, norm: Any = None) -> Tensor:
    """The inverse of ``rfft``: a real signal of size ``n`` (2 (m - 1) by default)."""
    d = _dim(dim, input.ndim)
    s = None if n is None else (n,)
    return _c2r_any(input, (d,), s, _norm(norm), False)


def irfftn(input: Tensor, s: Any = None, dim: Any = None, norm: Any = None) -> Tensor:
    dims, _ = _n_dims(input, None if s is None else tuple(-1 for _ in s), dim)
    return _c2r_any(input, dims, s, _norm(norm), False)


def irfft2(input: Tensor, s: Any = None, dim: Any = (-2, -1), norm: Any = None) -> Tensor:
    return irfftn(input, s, dim, norm)


def hfft(input: Tensor, n: Any = None, dim: int = -1, norm: Any = None) -> Tensor:
    """The transform of a Hermitian signal given by its half: a real spectrum of size ``n``."""
    d = _dim(dim, input.ndim)
    s = None if n is None else (n,)
    return _c2r_any(input, (d,), s, _DUAL[_norm(norm)], True)


def hfftn(input: Tensor, s: Any = None, dim: Any = None, norm: Any = None) -> Tensor:
    dims, _ = _n_dims(input, None if s is None else tuple(-1 for _ in s), dim)
    return _c2r_any(input, dims, s, _DUAL[_norm(norm)], True)


def hfft2(input: Tensor, s: Any = None, dim: Any = (-2, -1), norm: Any = None) -> Tensor:
    return hfftn(input, s, dim, norm)


def ihfft(input: Tensor, n: Any = None, dim: int = -1, norm: Any = None) -> Tensor:
    """The inverse of ``hfft``: the half spectrum of a real signal, conjugated."""
    x = _real_only(input, "ihfft")
    dims, sizes = _one_dim(x, n, dim)
    return conj(_rfftn_any(x, dims, sizes, _DUAL[_norm(norm)]))


def ihfftn(input: Tensor, s: Any = None, dim: Any = None, norm: Any = None) -> Tensor:
    x = _real_only(input, "ihfftn")
    dims, sizes = _n_dims(x, s, dim)
    norm = _norm(norm)
    x = _resize(x, dims, sizes)
    if len(dims) == 1:
        return conj(_r2c(x, dims=dims, norm=_DUAL[norm], onesided=True))
    # the last dim one-sided, conjugated; the others by the inverse kernel
    half = conj_physical(_r2c(x, dims=dims[-1:], norm=_DUAL[norm], onesided=True))
    return _c2c(half, dims=dims[:-1], norm=norm, forward=False)


def ihfft2(input: Tensor, s: Any = None, dim: Any = (-2, -1), norm: Any = None) -> Tensor:
    return ihfftn(input, s, dim, norm)


# --------------------------------------------------------------------------------------------
# Frequencies and shifts
# --------------------------------------------------------------------------------------------


def _freq_tensor(k: np.ndarray, scale: float, dtype: Any, requires_grad: bool) -> Tensor:
    d = _dtype.to_dtype(dtype) if dtype is not None else _dtype.get_default_dtype()
    # torch: the integers in the dtype, times 1 / (n d) in that dtype
    out = k.astype(d.np) * np.asarray(scale, dtype=d.np)
    return Tensor._make(out, requires_grad=requires_grad)


def fftfreq(n: int, d: float = 1.0, *, dtype: Any = None, layout: Any = None,
            device: Any = None, pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """The sample frequencies of an ``fft`` of size ``n``: [0, 1, ..., -(n // 2), ..., -1] over
    d n."""
    k = np.concatenate([np.arange((n + 1) // 2), np.arange(-(n // 2), 0)])
    return _freq_tensor(k, 1.0 / (n * d), dtype, requires_grad)


def rfftfreq(n: int, d: float = 1.0, *, dtype: Any = None, layout: Any = None,
             device: Any = None, pin_memory: bool = False, requires_grad: bool = False
             ) -> Tensor:
    """The sample frequencies of an ``rfft`` of size ``n``: [0, 1, ..., n // 2] / (d n)."""
    return _freq_tensor(np.arange(n // 2 + 1), 1.0 / (n * d), dtype, requires_grad)


def _shift_dims(x: Tensor, dim: Any) -> tuple:
    if dim is None:
        return tuple(range(x.ndim))
    return (dim,) if isinstance(dim, int) else tuple(dim)


def fftshift(input: Tensor, dim: Any = None) -> Tensor:
    """Move the zero frequency to the centre: a roll by n // 2 along ``dim`` (every dim)."""
    dims = _shift_dims(input, dim)
    return roll(input, tuple(input.shape[d] // 2 for d in dims), dims)


def ifftshift(input: Tensor, dim: Any = None) -> Tensor:
    """The inverse of ``fftshift``: a roll by (n + 1) // 2 along ``dim``."""
    dims = _shift_dims(input, dim)
    return roll(input, tuple((input.shape[d] + 1) // 2 for d in dims), dims)
