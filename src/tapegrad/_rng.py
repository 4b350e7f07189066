"""torch's CPU random-number generator, bit for bit, in NumPy.

This module is tapegrad's random engine. Seeded the same way, an :class:`Engine` produces exactly
the values that PyTorch 2.13's CPU generator (``torch.Generator()`` / the default generator)
produces on an x86-64 AVX2 or AVX-512 machine, and its state bytes are the same as
``torch.get_rng_state()``. It does not depend on the rest of tapegrad: every draw takes a shape
and a NumPy dtype and returns a new C-contiguous ndarray, which the Tensor layer wraps.

Data flow, from the seed to the values::

    manual_seed(s) --> key[624] = init_genrand(s & 0xFFFFFFFF)      (mt19937 seeding)
    key ---twist + temper---> 32-bit words w0, w1, w2, ...           (np.random.MT19937.random_raw)
    words --> r32 = w                         r64 = w[2i] << 32 | w[2i+1]
          --> u24 = (r32 & 0xFFFFFF) * 2^-24  (float32, also the opmath of float16/bfloat16)
              u53 = (r64 & (2^53-1)) * 2^-53  (float64)
          --> uniform     fma(u, to-from, from), then "== to becomes from"
              normal      Box-Muller: numel >= 16 and contiguous -> blocks of 16 (cos/sin of 8
                          radius/angle pairs, float32 through an emulation of avx_mathfun);
                          otherwise the scalar path (pairs of u53, second value cached)
              randint     r % range (+ from)        random_    r % (max + 1) per dtype
              bernoulli   u < p                     exponential  -log1p(-u53) / lambda
              randperm    Fisher-Yates swaps        multinomial  exponential race / cumsum search

Where the values depend on floating-point details, the module reproduces them exactly:

* torch's ``uniform_`` is compiled with FMA contraction on AVX2/AVX-512, so ``u*(to-from)+from``
  is rounded once. NumPy has no fused multiply-add; :func:`_fma32` / :func:`_fma64` emulate it
  (double-rounding detection for float32, Boldo-Melquiond round-to-odd for float64).
* float32 ``randn`` with 16 or more elements runs ``log256_ps`` and ``sincos256_ps`` (Cephes
  polynomials, AVX) with the compiler's contraction pattern; :func:`_avx_log` and
  :func:`_avx_sincos` replay those float32 operations one by one.
* float64 paths call glibc's ``log``/``sin``/``cos``, which are not exactly the correctly rounded
  values; :func:`_libm` evaluates them in x87 long double, keeps the correctly rounded result
  where glibc is known to return it (not near a rounding midpoint) and asks Python's ``math``
  (the same glibc) for the rest. ``log1p`` always goes through ``math`` (glibc's is <1 ulp).

How the layers above use the engine (all verified against torch 2.13):

* ``torch.rand``/``uniform_(a, b)``/``nn.init.uniform_``: :meth:`Engine.uniform`.
* ``randn``/``normal_``/``nn.init.normal_``/``nn.Embedding``: :meth:`Engine.normal`. A
  non-contiguous destination (``x.t().normal_()``) must pass ``contiguous=False``.
* ``kaiming_uniform_(w, a, mode, nonlinearity)``: ``gain = calculate_gain(nonlinearity, a)``
  (leaky_relu: ``math.sqrt(2.0 / (1 + a**2))``), ``std = gain / math.sqrt(fan)``,
  ``bound = math.sqrt(3.0) * std``, then ``uniform(-bound, bound)``; all in Python floats, see
  :func:`kaiming_uniform_bound`. ``xavier_uniform_``:
  ``bound = math.sqrt(3.0) * (gain * math.sqrt(2.0 / (fan_in + fan_out)))``.
* ``nn.Linear(in, out)`` / ``ConvNd``: weight ``kaiming_uniform_(a=math.sqrt(5))`` (drawn first,
  row-major over the weight), then bias ``uniform(-1/math.sqrt(fan_in), 1/math.sqrt(fan_in))``;
  see :func:`linear_init_bounds`.
* ``F.dropout(x, p, training=True)`` on CPU (0 < p < 1): ``noise = bernoulli(1 - p)`` in x's
  dtype, ``noise /= (1 - p)`` in that dtype, ``out = x * noise``; p == 0 draws nothing, p == 1
  gives zeros without drawing; see :meth:`Engine.dropout_noise`. ``Dropout2d`` draws the noise
  with shape ``(N, C, 1, 1)``.
* ``DataLoader(shuffle=True)``, one epoch: the loader takes ``_base_seed`` with
  ``random_()`` (int64) from the default generator, then ``RandomSampler`` takes another
  ``random_()`` int64 ``seed``, seeds a fresh generator with it and yields ``randperm(n)`` of that
  generator; see :func:`shuffle_permutation`.
* ``random_split(ds, lengths)``: ``randperm(sum(lengths))`` of the default generator, then
  consecutive slices.

Destination order: torch fills every tensor in TensorIterator order, which is memory order (the
dimension with the smallest stride varies fastest). Every draw here returns its values in that
fill order; for a non-contiguous destination, :func:`fill_order` / :func:`place` map them to
logical positions.

Target: x86-64, AVX2 or AVX-512 (``torch.backends.cpu.get_cpu_capability()``), Linux/glibc.
Against a DEFAULT-capability torch (no AVX2), these differ in the last bits: float32, float16 and
bfloat16 ``normal_`` with >= 16 values (libm instead of avx_mathfun), and ``uniform_``/``normal_``
with bounds, mean or std other than the defaults (no FMA contraction).

Known differences from torch: ``multinomial`` without replacement orders *tied* ratios by index,
where torch's top-k leaves them in the order its partial sort produces; this shows only when
more samples are asked for than there are non-zero probabilities (the zero ones tie), e.g.
``multinomial([1, 0, 0, 3], 4)`` gives ``[3, 0, 1, 2]`` here and ``[3, 0, 2, 1]`` in torch.
:meth:`Engine.set_state` rejects hand-made states whose pending words would lie past the
mt19937 key, which torch accepts and then reads out of bounds.

Speed, for 1e6 values: rand/randint/bernoulli a few ms (about torch's); float32 randn ~20 ms
(the float32 emulation, evaluated in blocks of ``_BLOCK`` values to stay in cache); float64 randn
~100 ms (long double plus ``math`` fallbacks); ``exponential_`` and the scalar normal path call
``math.log1p`` per value (~60 ms); randperm ~40 ms (sort + pointer jumping, no Python loop).
"""

from __future__ import annotations

import functools
import math
import os
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

# What the draws and the seeding are announced to (``Engine.manual_seed``...): the top of the
# listener stack, None when nothing listens. autograd/listeners.py sets it on every push and
# pop, as it sets ``tapegrad._announce.listener``: this module imports nothing of tapegrad's,
# so that it loads on its own.
listener: Any = None

__all__ = [
    "DEFAULT_SEED",
    "STATE_SIZE",
    "Engine",
    "fill_order",
    "place",
    "kaiming_uniform_bound",
    "linear_init_bounds",
    "shuffle_permutation",
]

DEFAULT_SEED = 67280421310721  # torch.Generator().initial_seed()
STATE_SIZE = 5056  # len(torch.get_rng_state())

_N = 624  # mt19937 state words
_RANDPERM_64BIT_FROM = (2**32 - 1) // 20  # randperm switches to random64() at this n

_BF16: list = []  # ml_dtypes' bfloat16 NumPy dtype (or None), once _bf16() has looked


def _bf16() -> np.dtype | None:
    """bfloat16 arrays need ml_dtypes; without it, bfloat16 results are uint16 bit patterns.
    Imported on first use, as tapegrad's bfloat16 dtype does (it costs about 0.5 s). This
    module loads on its own, without the package, so it keeps its own lookup."""
    if not _BF16:
        try:
            import ml_dtypes  # optional, loaded on first use (see above)
        except ImportError:  # pragma: no cover - depends on the environment
            _BF16.append(None)
        else:
            _BF16.append(np.dtype(ml_dtypes.bfloat16))
    return _BF16[0]


# Long double is the x87 80-bit format on x86-64 Linux: 64-bit mantissa.
_HAVE_LD = np.finfo(np.longdouble).nmant >= 63

# Large draws are transformed in blocks of this many values: the temporaries then stay in the
# CPU cache and below malloc's mmap threshold (fresh pages are slow, especially in a VM).
_BLOCK = 1 << 15

_F32 = np.float32
_TWO_M24 = _F32(2.0**-24)
_TWO_M53 = 2.0**-53
_TWO_PI = 2.0 * math.pi

# ---------------------------------------------------------------------------------------------
# dtypes


def _kind(dtype: Any) -> str:
    """Classify a requested dtype: 'f16', 'bf16', 'f32', 'f64', 'int' or 'bool'."""
    if isinstance(dtype, str) and dtype == "bfloat16":
        return "bf16"
    dt = np.dtype(dtype)
    if _is_bf16(dt):
        return "bf16"
    if dt == np.float16:
        return "f16"
    if dt == np.float32:
        return "f32"
    if dt == np.float64:
        return "f64"
    if dt == np.bool_:
        return "bool"
    if dt.kind in "iu":
        return "int"
    raise TypeError(f"unsupported dtype for random numbers: {dtype!r}")


def check_sample_count(num_samples: int, n_cat: int, replacement: bool) -> None:
    """torch's multinomial checks of ``num_samples`` draws from ``n_cat`` categories."""
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement and num_samples > n_cat:
        raise RuntimeError(
            "cannot sample n_sample > prob_dist.size(-1) samples without replacement"
        )


def _torch_name(dtype: Any) -> str:
    """The C++ type name torch prints in its messages ('Long', 'Float', ...)."""
    names = {
        "float16": "Half",
        "float32": "Float",
        "float64": "Double",
        "int8": "Char",
        "int16": "Short",
        "int32": "Int",
        "int64": "Long",
        "uint8": "Byte",
        "bool": "Bool",
    }
    if _kind(dtype) == "bf16":
        return "BFloat16"
    return names.get(np.dtype(dtype).name, np.dtype(dtype).name)


def _bf16_bits(x: np.ndarray) -> np.ndarray:
    """float32 -> bfloat16 bit patterns, round to nearest even (c10::BFloat16's rounding)."""
    b = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    rounded = (b + (np.uint32(0x7FFF) + ((b >> 16) & np.uint32(1)))) >> 16
    nan = np.isnan(x)
    if nan.any():
        rounded = np.where(nan, np.uint32(0x7FC0), rounded)
    return rounded.astype(np.uint16)


def _from_f32(x: np.ndarray, kind: str, dtype: Any) -> np.ndarray:
    """Cast float32 values to a float32/float16/bfloat16 result array."""
    if kind == "f32":
        return x
    if kind == "f16":
        return x.astype(np.float16)
    bits = _bf16_bits(x)
    bf16 = _bf16()
    return bits.view(bf16) if bf16 is not None else bits


def _to_f32(x: np.ndarray, kind: str) -> np.ndarray:
    """Read float16/bfloat16 results back as float32 (exact)."""
    if kind == "bf16":
        return (x.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
    return x.astype(np.float32)


def _scalar_to(value: float, kind: str) -> float:
    """Round a Python float to the dtype (as ``static_cast<scalar_t>`` does) and back."""
    if kind == "f64":
        return float(value)
    f = np.array([value], dtype=np.float64).astype(np.float32)
    if kind == "f16":
        return float(f.astype(np.float16)[0])
    if kind == "bf16":
        return float(_to_f32(_bf16_bits(f), "bf16")[0])
    return float(f[0])


def _from_f64(x: np.ndarray, kind: str, dtype: Any) -> np.ndarray:
    """Cast double values to the result dtype the way ``static_cast<scalar_t>(double)`` does:
    float16/bfloat16 go through float (two roundings), integers truncate."""
    if kind == "f64":
        return x
    if kind in ("f32", "f16", "bf16"):
        return _from_f32(x.astype(np.float32), kind, dtype)
    return x.astype(dtype)


# ---------------------------------------------------------------------------------------------
# fused multiply-add emulation


def _fma32(a: Any, b: Any, c: Any, tiny: bool = True) -> np.ndarray:
    """Single-rounding float32 ``a*b + c`` (what ``fmaf``/``vfmadd`` returns).

    The float32 product is exact in float64, so ``a*b + c`` in float64 has one rounding; rounding
    that to float32 is wrong only when the float64 sum landed exactly on a float32 midpoint while
    the true sum was not there. Those few elements are moved off the midpoint towards the true sum.
    ``tiny=False`` skips the check for float32-subnormal results, which the AVX kernels below
    cannot produce.
    """
    p = np.multiply(a, b, dtype=np.float64)
    s = p + np.asarray(c, dtype=np.float64)
    out = s.astype(np.float32)
    low = s.view(np.uint64) & np.uint64(0x1FFFFFFF)
    suspect = low == np.uint64(0x10000000)
    if tiny:  # float32 subnormals have their midpoints elsewhere
        suspect |= np.abs(s) < 2.0**-125
    if suspect.any():
        idx = np.flatnonzero(suspect)
        pf, sf = p.reshape(-1)[idx], s.reshape(-1)[idx]
        cf = np.broadcast_to(np.asarray(c, dtype=np.float64), s.shape).reshape(-1)[idx]
        bb = sf - pf
        err = (pf - (sf - bb)) + (cf - bb)  # TwoSum: exact rounding error of the float64 sum
        moved = np.where(err > 0, np.nextafter(sf, np.inf), np.nextafter(sf, -np.inf))
        fixed = np.where(err == 0, sf, moved).astype(np.float32)
        out.reshape(-1)[idx] = fixed
    return out


def _two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


_SPLIT = 134217729.0  # 2**27 + 1, Veltkamp splitting constant


def _two_prod(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    p = a * b
    t = _SPLIT * a
    ah = t - (t - a)
    al = a - ah
    t = _SPLIT * b
    bh = t - (t - b)
    bl = b - bh
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _fma64(a: np.ndarray, b: Any, c: Any) -> np.ndarray:
    """Single-rounding float64 ``a*b + c`` (Boldo-Melquiond: exact product, round-to-odd sum)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.broadcast_to(np.asarray(b, dtype=np.float64), a.shape)
    c = np.broadcast_to(np.asarray(c, dtype=np.float64), a.shape)
    uh, ul = _two_prod(a, b)
    th, tl = _two_sum(c, uh)
    v, e = _two_sum(tl, ul)
    # round v to odd: an inexact v with an even last bit moves one ulp towards the exact value
    even = (v.view(np.uint64) & np.uint64(1)) == 0
    fix = (e != 0) & even
    if fix.any():
        v = np.where(fix, np.nextafter(v, np.where(e > 0, np.inf, -np.inf)), v)
    out = th + v
    special = ~np.isfinite(uh)  # inf/nan operands: the plain expression is already right
    if special.any():
        out = np.where(special, a * b + c, out)
    return out


# ---------------------------------------------------------------------------------------------
# glibc log / sin / cos for float64


def _pi_over_2_parts() -> tuple[np.longdouble, np.longdouble]:
    """pi/2 as P1 (60 bits, so k*P1 is exact for k <= 4) + P2 (the next 64 bits)."""
    pi_200 = 0x3243F6A8885A308D313198A2E03707344A4093822299F31D008  # floor(pi * 16**50)
    half = pi_200 << 1  # value * 2**-201 = pi/2, scaled so that it is an integer
    scale = 4 * 50 + 2
    top = half >> (half.bit_length() - 60) << (half.bit_length() - 60)
    rest = half - top
    rest_top = rest >> max(rest.bit_length() - 64, 0) << max(rest.bit_length() - 64, 0)

    def to_ld(v: int) -> np.longdouble:
        # v has at most 64 significant bits: assemble it exactly from two doubles
        shift = max(v.bit_length() - 64, 0)
        m = v >> shift
        hi, lo = float(m >> 32 << 32), float(m & 0xFFFFFFFF)
        return (np.longdouble(hi) + np.longdouble(lo)) * np.longdouble(2.0) ** (shift - scale)

    return to_ld(top), to_ld(rest_top)


_PIO2_1, _PIO2_2 = _pi_over_2_parts()  # only used when _HAVE_LD
# glibc's log errs by at most 0.519 ulp and sin/cos by about 0.55 ulp (their documented
# bounds; the largest seen over 4M draws each was 0.518): a result further than this from a
# rounding midpoint (in ulps of the distance from it) is certainly the correctly rounded one.
_BAND = {"log": 0.46, "sincos": 0.44}


def _round_certain(yl: np.ndarray, band: float) -> tuple[np.ndarray, np.ndarray]:
    """Round long-double results to double; also flag the ones too close to a midpoint."""
    y = yl.astype(np.float64)
    err = (yl - y.astype(np.longdouble)).astype(np.float64)
    bits = y.view(np.uint64)
    expo = bits & np.uint64(0x7FF0000000000000)
    # ulp(y) = 2^(exponent - 52), built from the exponent bits; powers of two (whose lower
    # neighbour is closer), zeros and tiny values are simply left to math
    ulp = (expo - np.uint64(52 << 52)).view(np.float64)
    unsure = np.abs(err) > band * ulp
    unsure |= (bits & np.uint64(0x000FFFFFFFFFFFFF)) == 0
    unsure |= expo < np.uint64(54 << 52)
    return y, unsure


def _libm(name: str, x: np.ndarray) -> np.ndarray:
    """glibc's float64 ``log`` (``name='log'``, x > 0) or ``log1p``, elementwise, bit for bit."""
    scalar = getattr(math, name)
    x = np.asarray(x, dtype=np.float64)
    if x.size > _BLOCK and name == "log":
        flat, out = x.reshape(-1), np.empty(x.size)
        for i in range(0, x.size, _BLOCK):
            out[i : i + _BLOCK] = _libm(name, flat[i : i + _BLOCK])
        return out.reshape(x.shape)
    if name == "log1p" or not _HAVE_LD or x.size < 64:
        return np.fromiter(map(scalar, x.ravel().tolist()), np.float64, x.size).reshape(x.shape)
    y, unsure = _round_certain(np.log(x.astype(np.longdouble)), _BAND["log"])
    if unsure.any():
        y[unsure] = np.fromiter(map(scalar, x[unsure].tolist()), np.float64)
    return y


def _libm_sincos(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """glibc's float64 ``sin(x)`` and ``cos(x)`` for 0 <= x < 2*pi, bit for bit."""
    x = np.asarray(x, dtype=np.float64)
    if x.size > _BLOCK:
        flat, sin, cos = x.reshape(-1), np.empty(x.size), np.empty(x.size)
        for i in range(0, x.size, _BLOCK):
            sin[i : i + _BLOCK], cos[i : i + _BLOCK] = _libm_sincos(flat[i : i + _BLOCK])
        return sin.reshape(x.shape), cos.reshape(x.shape)
    if not _HAVE_LD or x.size < 64:
        xs = x.ravel().tolist()
        return (
            np.fromiter(map(math.sin, xs), np.float64, x.size).reshape(x.shape),
            np.fromiter(map(math.cos, xs), np.float64, x.size).reshape(x.shape),
        )
    # One sinl per element: reduce to |r| <= pi/4 (k quadrants), where cos(r) = sqrt(1 - sin^2 r)
    # is well conditioned; round both to double, then rotate by the quadrant (exact sign/swap).
    k = np.rint(x * (2.0 / math.pi))
    kl = k.astype(np.longdouble)
    r = (x.astype(np.longdouble) - kl * _PIO2_1) - kl * _PIO2_2
    s = np.sin(r)
    s_d, s_unsure = _round_certain(s, _BAND["sincos"])
    c_d, c_unsure = _round_certain(np.sqrt(1.0 - s * s), _BAND["sincos"])
    q = k.astype(np.int64) & 3
    odd = (q & 1).astype(bool)
    sin_d = np.where(odd, c_d, s_d)
    cos_d = np.where(odd, s_d, c_d)
    # q: 0 -> (s, c), 1 -> (c, -s), 2 -> (-s, -c), 3 -> (-c, s)
    np.negative(sin_d, out=sin_d, where=q >= 2)
    np.negative(cos_d, out=cos_d, where=(q + 1) & 2 != 0)
    sin_unsure = np.where(odd, c_unsure, s_unsure)
    cos_unsure = np.where(odd, s_unsure, c_unsure)
    if sin_unsure.any():
        sin_d[sin_unsure] = np.fromiter(map(math.sin, x[sin_unsure].tolist()), np.float64)
    if cos_unsure.any():
        cos_d[cos_unsure] = np.fromiter(map(math.cos, x[cos_unsure].tolist()), np.float64)
    return sin_d, cos_d


# ---------------------------------------------------------------------------------------------
# avx_mathfun (Cephes) float32 log and sincos, as compiled into torch's AVX2 kernels

_SQRTHF = _F32(0.707106781186547524)
_LOG_P = [
    _F32(v)
    for v in (
        7.0376836292e-2,
        -1.1514610310e-1,
        1.1676998740e-1,
        -1.2420140846e-1,
        1.4249322787e-1,
        -1.6668057665e-1,
        2.0000714765e-1,
        -2.4999993993e-1,
        3.3333331174e-1,
    )
]
_LOG_Q1 = _F32(-2.12194440e-4)
_LOG_Q2 = _F32(0.693359375)
_FOPI = _F32(1.27323954473516)  # 4 / pi
_DP = (_F32(-0.78515625), _F32(-2.4187564849853515625e-4), _F32(-3.77489497744594108e-8))
_SINCOF = (_F32(-1.9515295891e-4), _F32(8.3321608736e-3), _F32(-1.6666654611e-1))
_COSCOF = (_F32(2.443315711809948e-5), _F32(-1.388731625493765e-3), _F32(4.166664568298827e-2))
_HALF = _F32(0.5)
_ONE = _F32(1.0)


def _avx_log(x: np.ndarray) -> np.ndarray:
    """``log256_ps`` for float32 x in (0, 1], with GCC's FMA contraction of the AVX2 build.

    (Every fused result here is 0 or far above the float32 subnormal range: ``tiny=False``.)
    """
    x = np.maximum(x, _F32(1.17549435e-38))
    bits = x.view(np.uint32)
    e = ((bits >> 23).astype(np.int32) - 127).astype(np.float32) + _ONE
    x = ((bits & np.uint32(0x807FFFFF)) | np.uint32(0x3F000000)).view(np.float32)  # in [0.5, 1)
    small = x < _SQRTHF
    tmp = np.where(small, x, _F32(0.0))
    x = (x - _ONE) + tmp  # two float32 additions, as written
    e = e - small.astype(np.float32)
    z = x * x
    y = np.full_like(x, _LOG_P[0])
    for p in _LOG_P[1:]:
        y = _fma32(y, x, p, tiny=False)  # y*x + p is contracted
    y = y * x
    y = _fma32(
        y, z, e * _LOG_Q1, tiny=False
    )  # y*z + (e*q1): the y*z product is fused, e*q1 is rounded
    y = y - z * _HALF
    return (x + y) + e * _LOG_Q2  # e*q2 is exact


def _avx_sincos(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``sincos256_ps`` for float32 x >= 0, with GCC's FMA contraction of the AVX2 build."""
    j = (x * _FOPI).astype(np.int32)  # cvttps: truncation
    j = (j + 1) & ~1
    y = j.astype(np.float32)
    sign_sin = ((j & 4) << 29).astype(np.uint32)
    sign_cos = ((~(j - 2) & 4) << 29).astype(np.uint32)
    poly = (j & 2) == 0
    for dp in _DP:
        x = _fma32(y, dp, x, tiny=False)  # x + y*DPk, contracted
    z = x * x
    yc = _fma32(_COSCOF[0], z, _COSCOF[1], tiny=False)
    yc = _fma32(yc, z, _COSCOF[2], tiny=False)
    yc = yc * z
    yc = _fma32(yc, z, -(z * _HALF), tiny=False)
    yc = yc + _ONE
    ys = _fma32(_SINCOF[0], z, _SINCOF[1], tiny=False)
    ys = _fma32(ys, z, _SINCOF[2], tiny=False)
    ys = ys * z
    ys = _fma32(ys, x, x, tiny=False)
    # Both results are a sum/difference of the selected polynomial and zeros: -0.0 becomes +0.0.
    sin = np.where(poly, ys, yc) + _F32(0.0)
    cos = np.where(poly, yc, ys) + _F32(0.0)
    sin = (sin.view(np.uint32) ^ sign_sin).view(np.float32)
    cos = (cos.view(np.uint32) ^ sign_cos).view(np.float32)
    return sin, cos


def _normal16_f32(d: np.ndarray, mean: float, std: float) -> np.ndarray:
    """Box-Muller on rows of 16 float32 uniforms (torch's ``normal_fill_16_AVX2``).

    In each row, the first 8 uniforms give the radius and the last 8 the angle; cosines go to the
    first half, sines to the second.
    """
    u1 = _ONE - d[:, :8]
    u2 = d[:, 8:]
    radius = np.sqrt(_F32(-2.0) * _avx_log(u1))
    theta = _F32(2.0 * math.pi) * u2  # the constant is (float)(2*pi) = 6.2831855f
    sin, cos = _avx_sincos(theta)
    out = np.empty_like(d)
    first, second = radius * cos, radius * sin
    mean32, std32 = _F32(mean), _F32(std)
    if std32 == _ONE:  # fmaf(v, 1, mean) == v + mean, including the sign of a zero
        out[:, :8], out[:, 8:] = first + mean32, second + mean32
    else:
        out[:, :8] = _fma32(first, std32, mean32)
        out[:, 8:] = _fma32(second, std32, mean32)
    return out


def _normal16_f64(d: np.ndarray, mean: float, std: float) -> np.ndarray:
    """Box-Muller on rows of 16 float64 uniforms (torch's scalar ``normal_fill_16``)."""
    u1 = 1.0 - d[:, :8]
    u2 = d[:, 8:]
    radius = np.sqrt(-2.0 * _libm("log", u1))
    sin, cos = _libm_sincos(_TWO_PI * u2)
    out = np.empty_like(d)
    out[:, :8] = _fma_scale(radius * cos, mean, std)
    out[:, 8:] = _fma_scale(radius * sin, mean, std)
    return out


def _by_rows(block: Any, d: np.ndarray, out: np.ndarray, mean: float, std: float) -> None:
    """Apply a 16-wide Box-Muller block function to d (flat, len % 16 == 0) into out."""
    rows, dest = d.reshape(-1, 16), out.reshape(-1, 16)
    step = _BLOCK // 16
    for i in range(0, rows.shape[0], step):
        dest[i : i + step] = block(rows[i : i + step], mean, std)


def _blockwise_fma(fma: Any, u: np.ndarray, b: Any, c: Any) -> np.ndarray:
    """``fma(u, b, c)`` for scalar b and c, evaluated block by block."""
    out = np.empty_like(u)
    for i in range(0, u.size, _BLOCK):
        out[i : i + _BLOCK] = fma(u[i : i + _BLOCK], b, c)
    return out


def _fma_scale(z: np.ndarray, mean: float, std: float) -> np.ndarray:
    """fma(z, std, mean) in float64, with the cheap exact cases first."""
    if std == 1.0 or mean == 0.0:  # one rounding either way; "+ mean" also fixes zero signs
        return z * std + mean
    return _fma64(z, std, mean)


# ---------------------------------------------------------------------------------------------
# the engine


def _init_key(seed32: int) -> np.ndarray:
    """mt19937 seeding (init_genrand): key[j] = 1812433253*(k ^ k>>30) + j mod 2^32."""
    key = [seed32]
    k = seed32
    for j in range(1, _N):
        k = (1812433253 * (k ^ (k >> 30)) + j) & 0xFFFFFFFF
        key.append(k)
    return np.array(key, dtype=np.uint32)


def _temper(y: np.ndarray) -> np.ndarray:
    y = y ^ (y >> 11)
    y = y ^ ((y << 7) & np.uint32(0x9D2C5680))
    y = y ^ ((y << 15) & np.uint32(0xEFC60000))
    return y ^ (y >> 18)


def _check_seed(seed: Any) -> int:
    """Validate a seed as ``Generator.manual_seed`` does and map it to uint64."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
    seed = int(seed)
    if seed < -(2**63) or seed >= 2**64:
        raise ValueError("Overflow when unpacking long long")
    return seed % 2**64  # a negative seed is read as its two's-complement uint64


class Engine:
    """State of one torch CPU generator: mt19937 + the cached normal(s) torch keeps.

    >>> Engine(0).uniform((3,), np.float32)  # torch.manual_seed(0); torch.rand(3)
    array([0.4962566 , 0.7682218 , 0.08847743], dtype=float32)
    """

    def __init__(self, seed: int = DEFAULT_SEED) -> None:
        # NumPy's MT19937 runs the twists; it is made at the first draw, so that importing
        # tapegrad does not import numpy.random (about 20 ms) for a generator nobody draws from.
        self._bg: np.random.MT19937 | None = None
        self._bg_state: Any = None
        self.manual_seed(seed)

    # -- seeding and state -------------------------------------------------------------------

    def manual_seed(self, seed: int) -> None:
        """Seed as ``torch.Generator.manual_seed``: -2**63 <= seed < 2**64, only the low 32 bits
        reach the mt19937; also drops the cached normal."""
        if listener is not None:  # (a capture records the call as one step)
            listener.run_method(self, Engine.manual_seed, (seed,), {},
                                          functools.partial(Engine._manual_seed, self))
            return
        self._manual_seed(seed)

    def _manual_seed(self, seed: int) -> None:
        """``manual_seed``'s work (announced by :meth:`manual_seed`)."""
        seed = _check_seed(seed)
        self._seed = seed
        self._set_engine(_init_key(seed & 0xFFFFFFFF), left=1, nxt=0)
        self._normal_cache: float | None = None
        self._float_normal = b"\0" * 8  # torch's float cache (value + flag); never used by draws

    def seed(self) -> int:
        """Seed from the OS entropy pool, like ``Generator.seed()``; returns the seed (64 bits)."""
        if listener is not None:  # (a capture records the call as one step)
            return listener.run_method(self, Engine.seed, (), {},
                                                 functools.partial(Engine._seed_from_os, self))
        return self._seed_from_os()

    def _seed_from_os(self) -> int:
        """``seed``'s work (announced by :meth:`seed`)."""
        s = int.from_bytes(os.urandom(8), "little")
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        """The seed last given to :meth:`manual_seed` (as uint64)."""
        return self._seed

    def _set_engine(self, key: np.ndarray, left: int, nxt: int) -> None:
        """Load torch's mt19937 (key, left, next) into the NumPy bit generator.

        torch draws ``key[next]`` (tempered) while ``--left > 0``, then twists. NumPy's ``pos``
        is torch's ``next`` with ``left = 625 - pos``; the other states torch can hold are
        right after seeding (left=1, next=0: ``_hint`` keeps next for get_state) and states
        set by hand (``_pending``: the words they yield before their twist).
        """
        self._hint: int | None = None
        self._pending = np.empty(0, dtype=np.uint32)
        self._pending_next = 0
        if left == 1:
            pos, self._hint = _N, nxt
        elif left + nxt == _N + 1:
            pos = nxt
        else:
            pos = _N
            self._pending = _temper(key[nxt : nxt + left - 1])
            self._pending_next = nxt
        state: Any = {"bit_generator": "MT19937", "state": {"key": key, "pos": pos}}
        if self._bg is None:
            self._bg_state = state
        else:
            self._bg.state = state

    def get_state(self) -> np.ndarray:
        """torch's 5056-byte ``get_rng_state()`` layout (little-endian)."""
        st = (self._bg.state if self._bg is not None else self._bg_state)["state"]
        key, pos = np.asarray(st["key"], dtype=np.uint32), int(st["pos"])
        if self._pending.size:
            left, nxt = self._pending.size + 1, self._pending_next
        elif pos >= _N:
            left, nxt = 1, (_N if self._hint is None else self._hint)
        else:
            left, nxt = _N + 1 - pos, pos
        out = np.zeros(STATE_SIZE, dtype=np.uint8)
        out[0:8] = np.frombuffer(np.uint64(self._seed).tobytes(), np.uint8)
        out[8:16] = np.frombuffer(np.array([left, 1], "<i4").tobytes(), np.uint8)
        out[16:24] = np.frombuffer(np.uint64(nxt).tobytes(), np.uint8)
        out[24:5016] = np.frombuffer(key.astype("<u8").tobytes(), np.uint8)
        if self._normal_cache is not None:
            out[5024:5032] = np.frombuffer(np.float64(self._normal_cache).tobytes(), np.uint8)
            out[5040] = 1
        out[5048:5056] = np.frombuffer(self._float_normal, np.uint8)
        return out

    def set_state(self, state: np.ndarray) -> None:
        """Restore a state from :meth:`get_state` or from ``torch.get_rng_state().numpy()``."""
        if listener is not None:  # (a capture records the call as one step)
            listener.run_method(self, Engine.set_state, (state,), {},
                                          functools.partial(Engine._set_state, self))
            return
        self._set_state(state)

    def _set_state(self, state: np.ndarray) -> None:
        """``set_state``'s work (announced by :meth:`set_state`)."""
        state = np.asarray(state)
        if state.dtype != np.uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        state = state.reshape(-1)
        if state.size != STATE_SIZE:
            raise RuntimeError(
                f"Expected a CPUGeneratorImplState of size {STATE_SIZE} but found the input RNG "
                f"state size to be {state.size}"
            )
        raw = state.tobytes()
        seed = int.from_bytes(raw[0:8], "little")
        left = int.from_bytes(raw[8:12], "little", signed=True)
        seeded = int.from_bytes(raw[12:16], "little", signed=True)
        nxt = int.from_bytes(raw[16:24], "little") & 0xFFFFFFFF  # torch keeps 32 bits
        # torch rejects these; states whose next words lie past the key (undefined behaviour in
        # torch, which reads beyond its array) are rejected here as well.
        if seeded == 0 or not 1 <= left <= _N or (left > 1 and nxt + left > _N + 1):
            raise RuntimeError("Invalid mt19937 state")
        key = np.frombuffer(raw[24:5016], "<u8").astype(np.uint32)  # keeps the low 32 bits
        self._seed = seed
        self._set_engine(key, left=left, nxt=nxt)
        valid = int.from_bytes(raw[5040:5044], "little", signed=True) != 0
        self._normal_cache = float(np.frombuffer(raw[5024:5032], "<f8")[0]) if valid else None
        fvalid = raw[5052] != 0
        self._float_normal = (raw[5048:5052] + b"\x01\0\0\0") if fvalid else b"\0" * 8

    # -- raw draws ---------------------------------------------------------------------------

    def _words(self, n: int) -> np.ndarray:
        """The next n 32-bit outputs (``random()``), as uint32."""
        if n <= 0:
            return np.empty(0, dtype=np.uint32)
        self._hint = None
        if self._pending.size:
            k = min(n, self._pending.size)
            head = self._pending[:k]
            self._pending = self._pending[k:]
            self._pending_next += k
            if k == n:
                if not self._pending.size:  # now left = 1, next = where the words ended
                    self._hint = self._pending_next
                return head.copy()
            return np.concatenate([head, self._mt().random_raw(n - k).astype(np.uint32)])
        return self._mt().random_raw(n).astype(np.uint32)

    def _mt(self) -> np.random.MT19937:
        """NumPy's bit generator holding the mt19937 state, made at the first draw."""
        bg = self._bg
        if bg is None:
            bg = np.random.MT19937(0)
            bg.state = self._bg_state
            self._bg = bg
        return bg

    def _words64(self, n: int) -> np.ndarray:
        """The next n ``random64()`` values (two words each, first one high), as uint64."""
        w = self._words(2 * n).astype(np.uint64)
        return (w[0::2] << np.uint64(32)) | w[1::2]

    def _u24(self, n: int) -> np.ndarray:
        """n float32 uniforms in [0, 1): 24 random bits of one word each."""
        return (self._words(n) & np.uint32(0xFFFFFF)).astype(np.float32) * _TWO_M24

    def _u53(self, n: int) -> np.ndarray:
        """n float64 uniforms in [0, 1): 53 bits of random64()."""
        w = self._words(2 * n)
        hi = (w[0::2] & np.uint32(0x1FFFFF)).astype(np.float64)
        return (hi * 4294967296.0 + w[1::2]) * _TWO_M53

    # -- uniform -----------------------------------------------------------------------------

    def uniform(self, shape: Any, dtype: Any, low: float = 0.0, high: float = 1.0) -> np.ndarray:
        """``torch.rand`` / ``uniform_(low, high)``: one word per value (two for float64)."""
        shape, n = _shape(shape)
        kind = _kind(dtype)
        if kind in ("int", "bool"):
            raise NotImplementedError(
                f"\"check_uniform_bounds\" not implemented for '{_torch_name(dtype)}'"
            )
        # torch's checks, in its order: bounds within the dtype, from <= to, to - from finite
        limit = _FLOAT_MAX[kind]
        for name, bound in (("from", low), ("to", high)):
            if not -limit <= bound <= limit:
                raise RuntimeError(f"{name} is out of bounds for {_CPP_NAME[kind]}")
        if low > high:
            raise RuntimeError(
                f"uniform_ expects to return a [from, to) range, but found from={_fmt(low)} "
                f"> to={_fmt(high)}"
            )
        if float(high) - float(low) > limit:
            raise RuntimeError(
                f"uniform_ expects to-from <= std::numeric_limits<{_torch_name(dtype)}>::max(), "
                f"but found to={_fmt(high)} and from={_fmt(low)} which result in to-from to "
                "exceed the limit"
            )
        if kind == "f64":
            frm, to = float(low), float(high)
            u = self._u53(n)
            # u * (to - from) + from, fused on AVX2/AVX-512 builds
            v = u if (frm == 0.0 and to == 1.0) else _blockwise_fma(_fma64, u, to - frm, frm)
            v[v == to] = frm  # torch 2.13 maps a value that rounds up to `to` back to `from`
            return v.reshape(shape)
        # float32 opmath for float32/float16/bfloat16: bounds and to - from are float32
        lo32, hi32 = _F32(low), _F32(high)
        span = hi32 - lo32
        u = self._u24(n)
        v = u if (lo32 == 0.0 and span == 1.0) else _blockwise_fma(_fma32, u, span, lo32)
        out = _from_f32(v, kind, dtype)
        # the value is cast to the dtype first; one equal to (dtype)to becomes (dtype)from
        if kind == "f32":
            out[out == hi32] = lo32
        else:
            ends = _from_f32(np.array([lo32, hi32], np.float32), kind, dtype)
            out[_to_f32(out, kind) == _to_f32(ends[1:], kind)[0]] = ends[0]
        return out.reshape(shape)

    # -- normal ------------------------------------------------------------------------------

    def normal(
        self,
        shape: Any,
        dtype: Any,
        mean: float = 0.0,
        std: float = 1.0,
        contiguous: bool = True,
    ) -> np.ndarray:
        """``randn`` / ``normal_(mean, std)``.

        torch takes its blocked fill path when the destination has >= 16 elements and is
        contiguous; otherwise (``contiguous=False`` or fewer than 16 elements) the scalar path,
        which uses and refills the generator's cached normal. The scalar path's values are
        returned in fill (memory) order: see :func:`fill_order` / :func:`place`.
        """
        shape, n = _shape(shape)
        kind = _kind(dtype)
        if kind in ("int", "bool"):
            raise NotImplementedError(
                f"\"normal_kernel_cpu\" not implemented for '{_torch_name(dtype)}'"
            )
        if std < 0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {_fmt(std)}")
        if n >= 16 and contiguous:
            return self._normal_fill(n, kind, dtype, float(mean), float(std)).reshape(shape)
        z = self._std_normals(n)
        # value = z*std + mean in double, fused on AVX2/AVX-512; then cast
        return _from_f64(_fma_scale(z, float(mean), float(std)), kind, dtype).reshape(shape)

    def _std_normals(self, n: int) -> np.ndarray:
        """n standard normals from ``at::normal_distribution<double>`` (the scalar path)."""
        out = np.empty(n, dtype=np.float64)
        start = 0
        if n and self._normal_cache is not None:
            out[0] = self._normal_cache
            self._normal_cache = None
            start = 1
        pairs = (n - start + 1) // 2
        if pairs:
            u = self._u53(2 * pairs)
            u1, u2 = u[0::2], u[1::2]
            # the radius comes from the second uniform and uses log1p(-u), unlike the fill path
            r = np.sqrt(-2.0 * _libm("log1p", -u2))
            sin, cos = _libm_sincos(_TWO_PI * u1)
            z = np.empty(2 * pairs, dtype=np.float64)
            z[0::2] = r * cos
            z[1::2] = r * sin
            out[start:] = z[: n - start]
            if (n - start) % 2:
                self._normal_cache = float(z[-1])  # the unused sine waits for the next call
        return out

    def _normal_fill(self, n: int, kind: str, dtype: Any, mean: float, std: float) -> np.ndarray:
        """torch's ``normal_fill`` for a contiguous tensor of n >= 16 elements."""
        full = n // 16 * 16
        tail = n % 16 != 0
        if kind in ("f32", "f64"):
            # all n uniforms first, then 16 fresh ones for the last (overlapping) block
            d = self._u24(n + 16 * tail) if kind == "f32" else self._u53(n + 16 * tail)
            block = _normal16_f32 if kind == "f32" else _normal16_f64
            out = np.empty(n, dtype=d.dtype)
            _by_rows(block, d[:full], out[:full], mean, std)
            if tail:
                out[n - 16 :] = block(d[n:].reshape(1, 16), mean, std).reshape(-1)
            return out
        # float16/bfloat16: 16 uniforms are drawn and transformed per block, so the tail block
        # takes the 16 words right after the full blocks (not after n words as for float32).
        d = self._u24(full + 16 * tail)
        vals = np.empty(n, dtype=np.float32)
        _by_rows(_normal16_f32, d[:full], vals[:full], mean, std)
        if tail:
            vals[n - 16 :] = _normal16_f32(d[full:].reshape(1, 16), mean, std).reshape(-1)
        return _from_f32(vals, kind, dtype)

    def normal_tensor(self, mean: Any, std: Any, dtype: Any) -> np.ndarray:
        """``torch.normal(mean, std)`` with a tensor mean and/or std (the other may be a float).

        torch draws ``normal_(0, 1)`` (``normal_(0, std)`` when only mean is a tensor) into an
        output of the broadcast shape, then multiplies by std and adds mean, each op rounded.
        """
        kind = _kind(dtype)
        std_t = isinstance(std, np.ndarray)
        shape = np.broadcast_shapes(np.shape(mean), np.shape(std))
        bf16 = _bf16() if kind == "bf16" else None
        np_dt = bf16 if bf16 is not None else dtype
        if std_t and (std < 0).any():
            raise RuntimeError("normal expects all elements of std >= 0.0")
        if not std_t:
            out = self.normal(shape, dtype, 0.0, float(std))
            return _round_op(out, np.asarray(mean), np.add, kind, np_dt)
        out = self.normal(shape, dtype, 0.0, 1.0)
        out = _round_op(out, np.asarray(std), np.multiply, kind, np_dt)
        return _round_op(out, np.asarray(mean), np.add, kind, np_dt)

    # -- integers ----------------------------------------------------------------------------

    def randint(self, low: int, high: int, shape: Any, dtype: Any = np.int64) -> np.ndarray:
        """``torch.randint(low, high, shape)``: ``random_(low, high)`` on a new tensor."""
        return self.random_(shape, dtype, int(low), int(high))

    def random_(
        self, shape: Any, dtype: Any, low: int | None = None, high: int | None = None
    ) -> np.ndarray:
        """``Tensor.random_()``, ``random_(from, to)`` and ``random_(from, None)``.

        ``Tensor.random_(to)`` is ``random_(low=0, high=to)``.
        """
        shape, n = _shape(shape)
        kind = _kind(dtype)
        if low is None and high is None:
            return self._random_default(n, kind, dtype).reshape(shape)
        frm = 0 if low is None else int(low)
        if high is not None:
            to = int(high)
            if frm >= to:
                raise RuntimeError(
                    f"random_ expects 'from' to be less than 'to', but got from={frm} >= to={to}"
                )
            if kind in ("f16", "bf16", "f32", "f64"):
                frm, to = _update_from(frm, kind), _update_to(to, kind)
                if frm >= to:
                    raise RuntimeError(
                        "random_ expects 'from' casted to dtype to be less than 'to' casted to "
                        f"dtype, but got from={frm} >= to={to}"
                    )
            _check_in_range(frm, to - 1, kind, dtype)
            span = to - frm
        elif frm != -(2**63):
            to_inc = _max_int(kind, dtype)
            _check_in_range(frm, to_inc, kind, dtype)
            span = to_inc - frm + 1
        else:
            # the full int64 range: all 64 bits of random64()
            if kind not in ("f32", "f64", "bf16") and np.dtype(dtype) != np.int64:
                raise RuntimeError(
                    "random_full_64_bits_range_kernel_cpu handles only int64, double, float and "
                    "bfloat16"
                )
            full = self._words64(n).view(np.int64)
            return _cast_int64(full, kind, dtype).reshape(shape)
        span &= 2**64 - 1
        # ranges >= 2^28 take random64(), smaller ones random(), for every dtype (torch 2.13)
        r = self._words64(n) if span >= 2**28 else self._words(n).astype(np.uint64)
        v = (r % np.uint64(span)) + np.uint64(frm % 2**64)  # wraps mod 2^64 like uint64_t
        return _cast_int64(v.view(np.int64), kind, dtype).reshape(shape)

    def _random_default(self, n: int, kind: str, dtype: Any) -> np.ndarray:
        """``Tensor.random_()`` without bounds: [0, max] for ints, [0, 2^mantissa] for floats."""
        if kind == "bool":
            return (self._words(n) & np.uint32(1)).astype(np.bool_)
        if kind == "f64":
            return (self._words64(n) % np.uint64(2**53 + 1)).astype(np.float64)
        if kind in ("f32", "f16", "bf16"):
            digits = {"f32": 24, "f16": 11, "bf16": 8}[kind]
            v = (self._words(n) % np.uint32(2**digits + 1)).astype(np.float32)
            return _from_f32(v, kind, dtype)
        info = np.iinfo(dtype)
        if info.bits == 64:
            r = self._words64(n)
        else:
            r = self._words(n).astype(np.uint64)
        return (r % np.uint64(info.max + 1)).astype(dtype)

    def randperm(self, n: int, dtype: Any = np.int64) -> np.ndarray:
        """``torch.randperm(n)``: Fisher-Yates with ``random() % (n - i)``, or for
        n >= 214748364 the inside-out shuffle with ``random64() % (i + 1)``."""
        n = int(n)
        if n < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
        if n < _RANDPERM_64BIT_FROM:
            perm = _swap_shuffle(self._words(n - 1), n)
        else:
            perm = _inside_out_shuffle(self._words64(n), n)
        return perm.astype(dtype, copy=False)

    # -- bernoulli, exponential, multinomial --------------------------------------------------

    def bernoulli(self, p: Any, shape: Any = None, dtype: Any = np.float32) -> np.ndarray:
        """``bernoulli_(p)`` for a float p (two words per value, ``u53 < p``) or
        ``torch.bernoulli(p)`` / ``bernoulli_(p_tensor)`` for an ndarray p (broadcast to shape):
        float64 p compares ``u53 < p``, float32 p ``u24 < p`` in float."""
        if isinstance(p, np.ndarray):
            shape = p.shape if shape is None else shape
            shape, n = _shape(shape)
            pk = _kind(p.dtype) if p.dtype.kind == "f" or _is_bf16(p.dtype) else "int"
            if pk == "int":
                raise NotImplementedError(
                    f"\"bernoulli_tensor_cpu_p_\" not implemented for '{_torch_name(p.dtype)}'"
                )
            if pk == "f64":
                pv = np.broadcast_to(p, shape).reshape(-1)
                if ((pv < 0) | (pv > 1)).any():
                    raise RuntimeError(_P_IN_MSG)
                hit = self._u53(n) < pv
            else:
                pv = np.broadcast_to(_to_f32(p, pk) if pk != "f32" else p, shape).reshape(-1)
                if ((pv < 0) | (pv > 1)).any():
                    raise RuntimeError(_P_IN_MSG)
                hit = self._u24(n) < pv
            return _bool_to(hit, dtype).reshape(shape)
        shape, n = _shape(shape)
        p = float(p)
        if not 0.0 <= p <= 1.0:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_fmt(p)}")
        return _bool_to(self._u53(n) < p, dtype).reshape(shape)

    def dropout_noise(self, shape: Any, dtype: Any, p: float) -> np.ndarray:
        """The noise ``F.dropout`` multiplies by (CPU, training): ``bernoulli(1-p) / (1-p)``.

        ``out = x * noise`` in x's dtype. p == 0 draws nothing (the caller returns x); p == 1
        gives zeros without drawing.
        """
        noise = self._dropout_noise(shape, dtype, p)
        if listener is not None:  # (a capture records the draw)
            listener.noise_drawn(self, "dropout_noise", shape, dtype, p, noise)
        return noise

    def _dropout_noise(self, shape: Any, dtype: Any, p: float) -> np.ndarray:
        """``dropout_noise``'s work (announced by :meth:`dropout_noise`)."""
        shape, n = _shape(shape)
        kind = _kind(dtype)
        if not 0.0 <= p <= 1.0:
            raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
        if p == 1.0 or p == 0.0:
            fill = 0.0 if p == 1.0 else 1.0
            return _from_f64(np.full(n, fill), kind, dtype).reshape(shape)
        mask = self.bernoulli(1.0 - p, (n,), np.float64 if kind == "f64" else np.float32)
        if kind == "f64":
            return (mask / (1.0 - p)).reshape(shape)
        noise = mask / _F32(1.0 - p)  # the scalar is rounded to float, then a float division
        return _from_f32(noise, kind, dtype).reshape(shape)

    def alpha_dropout_noise(self, shape: Any, dtype: Any, p: float) -> tuple:
        """What ``F.alpha_dropout`` applies (CPU, training, 0 < p < 1): ``out = x * noise + b``,
        keep = ``bernoulli(1-p)`` in x's dtype, noise = keep a, b = (keep - 1) alpha' a +
        alpha' a p, with SELU's alpha' = 1.7580993408473766 and a = 1 / sqrt((alpha'^2 p + 1)
        (1 - p)): kept values scaled by a, dropped ones set to SELU's negative limit, both
        shifted so that the mean and variance stay 0 and 1."""
        keep = self.bernoulli(1.0 - p, shape, dtype)
        alpha = 1.7580993408473766
        a = 1.0 / math.sqrt((alpha * alpha * p + 1) * (1 - p))
        noise = keep * a, (keep - 1.0) * (alpha * a) + alpha * a * p
        if listener is not None:  # (a capture records the draw)
            listener.noise_drawn(self, "alpha_dropout_noise", shape, dtype, p, noise)
        return noise

    def exponential(self, shape: Any, dtype: Any, lambd: float = 1.0) -> np.ndarray:
        """``exponential_(lambd)``: ``(-1/lambd) * log1p(-u53)`` in double, then cast."""
        shape, n = _shape(shape)
        kind = _kind(dtype)
        if not lambd > 0.0:
            raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={_fmt(lambd)}")
        if kind in ("int", "bool"):
            raise NotImplementedError(
                f"\"exponential_cpu\" not implemented for '{_torch_name(dtype)}'"
            )
        v = (-1.0 / float(lambd)) * _libm("log1p", -self._u53(n))
        return _from_f64(v, kind, dtype).reshape(shape)

    def cauchy(self, shape: Any, dtype: Any, median: float = 0.0,
               sigma: float = 1.0) -> np.ndarray:
        """``cauchy_(median, sigma)``: median + sigma tan(pi (u53 - 1/2)) in double (fused),
        then cast; tan is the C library's."""
        shape, n = _shape(shape)
        kind = _kind(dtype)
        t = np.array([math.tan(math.pi * (u - 0.5)) for u in self._u53(n).tolist()])
        return _from_f64(_fma_scale(t, float(median), float(sigma)), kind, dtype).reshape(shape)

    def log_normal(self, shape: Any, dtype: Any, mean: float = 1.0,
                   std: float = 2.0) -> np.ndarray:
        """``log_normal_(mean, std)``: exp of the scalar-path normal (mean + std z, fused)."""
        shape, n = _shape(shape)
        kind = _kind(dtype)
        z = _fma_scale(self._std_normals(n), float(mean), float(std))
        v = np.array([math.exp(x) for x in z.tolist()])
        return _from_f64(v, kind, dtype).reshape(shape)

    def geometric(self, shape: Any, dtype: Any, p: float) -> np.ndarray:
        """``geometric_(p)``: ceil(log(u53) / log1p(-p)), the number of trials to a success."""
        shape, n = _shape(shape)
        kind = _kind(dtype)
        denom = math.log1p(-float(p))
        with np.errstate(divide="ignore"):
            v = np.array([math.ceil(math.log(u) / denom) if u > 0 else math.inf
                          for u in self._u53(n).tolist()])
        return _from_f64(v, kind, dtype).reshape(shape)

    def multinomial(
        self, probs: np.ndarray, num_samples: int, replacement: bool = False
    ) -> np.ndarray:
        """``torch.multinomial(probs, num_samples, replacement)`` for a 1-D or 2-D float array.

        Without replacement (or one sample): ``q = exponential_(1)`` shaped like probs,
        ``probs / q`` in probs' dtype, then argmax / top-k. With replacement: per row, the
        running sum in probs' dtype divided by the total, and a binary search for each ``u53``.
        """
        probs = np.asarray(probs)
        kind = _kind(probs.dtype)
        if probs.ndim not in (1, 2):
            raise RuntimeError("prob_dist must be 1 or 2 dim")
        if kind not in ("f16", "bf16", "f32", "f64"):
            raise RuntimeError(
                f"multinomial only supports floating-point dtypes for input, got: "
                f"{_torch_name(probs.dtype)}"
            )
        num_samples = int(num_samples)
        n_cat = probs.shape[-1]
        check_sample_count(num_samples, n_cat, replacement)
        rows = probs.reshape(-1, n_cat)
        pf = rows.astype(np.float64) if kind == "f64" else _to_f32(rows, kind)
        if not (np.isfinite(pf).all() and (pf >= 0).all()):
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        if (pf.sum(axis=1) == 0).any():
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        if not replacement or num_samples == 1:
            q = self.exponential(rows.shape, probs.dtype if kind != "bf16" else "bfloat16")
            qf = q if kind == "f64" else _to_f32(q, kind)
            if kind in ("f64", "f32"):
                ratio = pf / qf
            else:  # the division is rounded to the storage type
                ratio = _to_f32(_from_f32(pf / qf, kind, probs.dtype), kind)
            if num_samples == 1:
                out = np.argmax(ratio, axis=1)[:, None]
            else:
                # top-k, largest first; zero-probability categories tie at 0 and come last in
                # index order (torch 2.13 returns them rather than raising)
                out = np.argsort(-ratio, axis=1, kind="stable")[:, :num_samples]
        else:
            out = np.empty((rows.shape[0], num_samples), dtype=np.int64)
            acc = np.float64 if kind == "f64" else np.float32
            for i in range(rows.shape[0]):
                cum = np.cumsum(pf[i].astype(acc), dtype=acc)  # sequential, in the dtype
                total = cum[-1]
                cum = cum / total
                cum[-1] = 1.0
                u = self._u53(num_samples)
                out[i] = np.searchsorted(cum.astype(np.float64), u, side="left")
        out = out.astype(np.int64)
        return out[0] if probs.ndim == 1 else out


# ---------------------------------------------------------------------------------------------
# helpers for the draws

_P_IN_MSG = (
    "Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error message be "
    "improved?  If so, please report an enhancement request to PyTorch.)"
)


def _is_bf16(dt: np.dtype) -> bool:
    # (kind first: NumPy builds a dtype's name on every read, microseconds each)
    return dt.kind == "V" and dt.name == "bfloat16" and dt == _bf16()


def _shape(shape: Any) -> tuple[tuple[int, ...], int]:
    if shape is None:
        shape = ()
    elif isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    shape = tuple(int(s) for s in shape)
    for s in shape:
        if s < 0:
            dims = ", ".join(map(str, shape))
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: [{dims}]")
    return shape, math.prod(shape)


def _fmt(x: float) -> str:
    """A number the way torch's C++ stream prints it (``%g``-like)."""
    return f"{x:g}" if isinstance(x, float) else str(x)


def _bool_to(hit: np.ndarray, dtype: Any) -> np.ndarray:
    kind = _kind(dtype)
    if kind == "bf16":
        return _from_f32(hit.astype(np.float32), kind, dtype)
    return hit.astype(dtype)


def _round_op(a: np.ndarray, b: np.ndarray, op: Any, kind: str, np_dt: Any) -> np.ndarray:
    """One elementwise op in the dtype's precision (float16/bfloat16 compute in float)."""
    if kind in ("f32", "f64"):
        return op(a, b.astype(a.dtype)).astype(a.dtype)
    res = op(_to_f32(a, kind), _to_f32(np.asarray(b).astype(a.dtype), kind))
    return _from_f32(res.astype(np.float32), kind, np_dt)


def _max_int(kind: str, dtype: Any) -> int:
    """``to`` (inclusive) for ``random_(from, None)``: the dtype's max, 2^mantissa for floats."""
    if kind == "bool":
        return 1
    if kind in ("f16", "bf16", "f32", "f64"):
        return 2 ** {"f16": 11, "bf16": 8, "f32": 24, "f64": 53}[kind]
    return int(np.iinfo(dtype).max)


_DIGITS = {"f16": 11, "bf16": 8, "f32": 24, "f64": 53}
_FLOAT_MAX = {
    "f16": 65504.0,
    "bf16": 3.3895313892515355e38,
    "f32": float(np.finfo(np.float32).max),
    "f64": float(np.finfo(np.float64).max),
}
_CPP_NAME = {"f16": "c10::Half", "bf16": "c10::BFloat16", "f32": "float", "f64": "double"}


def _int_through(v: int, kind: str) -> int:
    """``(int64_t)(scalar_t)v``: round an integer to the float type and back."""
    return int(_scalar_to(float(v), kind)) if kind != "f64" else int(float(v))


def _update_from(frm: int, kind: str) -> int:
    """Move ``from`` up when ``from + 1`` is not representable in the float dtype, so that the
    smallest drawn value rounds to at least ``from`` (torch's ``update_from``)."""
    plus1 = _int_through(frm + 1, kind)
    if plus1 < frm:
        n = abs(frm + 1).bit_length() - 1
        frm = plus1 + (1 << (n - _DIGITS[kind] + 1))
    return frm


def _update_to(to: int, kind: str) -> int:
    """Move ``to`` down when ``to - 1`` is not representable (torch's ``update_to``)."""
    minus1 = _int_through(to - 1, kind)
    if minus1 >= to:
        n = abs(to - 1).bit_length() - 1
        to = minus1 - (1 << (n - _DIGITS[kind] + 1))
    return to


@functools.cache
def _int_limits(dt: np.dtype) -> tuple[int, int, str]:
    """An integer dtype's range and C++ type name (once per dtype: NumPy's ``iinfo`` and
    ``name`` cost microseconds each)."""
    info = np.iinfo(dt)
    name = {"int8": "signed char", "int16": "short", "int32": "int", "int64": "long",
            "uint8": "unsigned char"}.get(dt.name, dt.name)
    return int(info.min), int(info.max), name


def _check_in_range(frm: int, to_inc: int, kind: str, dtype: Any) -> None:
    """torch's ``check_from_to_in_range``: errors for integer dtypes, warnings for floats."""
    if kind in ("f16", "bf16", "f32", "f64"):
        digits = _DIGITS[kind]
        lim = 2**digits
        for name, v in (("from", frm), ("to - 1", to_inc)):
            if not -lim <= v <= lim:
                warnings.warn(
                    f"{name} is out of bounds [-(2^{digits}), 2^{digits}]. Due to precision "
                    f"limitations {_CPP_NAME[kind]} can support discrete uniform distribution "
                    "only within this range. This warning will become an error in version 1.7 "
                    "release, please fix the code in advance",
                    UserWarning,
                    stacklevel=4,
                )
        return
    lo, hi, name = (0, 1, "bool") if kind == "bool" else _int_limits(np.dtype(dtype))
    if not lo <= frm <= hi:
        raise RuntimeError(f"from is out of bounds for {name}")
    if not lo <= to_inc <= hi:
        raise RuntimeError(f"to - 1 is out of bounds for {name}")


def _cast_int64(v: np.ndarray, kind: str, dtype: Any) -> np.ndarray:
    """``static_cast<scalar_t>(int64_t)``: wrap for integers, != 0 for bool; one rounding to
    float/double (NumPy's casts are single roundings too), float16/bfloat16 through float."""
    if kind == "bool":
        return v != 0
    if kind == "int":
        return v.astype(dtype)
    if kind == "f64":
        return v.astype(np.float64)
    return _from_f32(v.astype(np.float32), kind, dtype)


def _swap_shuffle(words: np.ndarray, n: int) -> np.ndarray:
    """torch's randperm for n < 214748364 (as int32), without a Python loop.

    The sequential algorithm is ``r = arange(n); for i < n-1: swap(r[i], r[i + w[i] % (n-i)])``.
    Step i fixes r[i] for good and puts the old r[i] at position j_i = i + w[i] % (n-i) >= i.
    So the final r[i] is whatever sat at j_i before step i: the value the previous step aimed at
    j_i left there, or j_i itself if no earlier step aimed there. What a step k leaves behind is
    the value at position k just before step k, f(k), which in turn is the value left by the last
    step before k that aimed at k, or k. Chains of f are resolved by pointer jumping.
    """
    if n <= 1:
        return np.arange(n, dtype=np.int32)
    m = n - 1
    steps = np.arange(m, dtype=np.int64)
    target = steps + (words % (n - steps).astype(np.uint32))  # n < 2^31: 32-bit modulo
    # Sort the steps by (target, step), packed into one int64 key. Indices fit in int32, which
    # halves the memory traffic of the gathers below.
    packed = np.sort((target << 32) | steps)
    order = (packed & 0xFFFFFFFF).astype(np.int32)  # steps, by target, ascending in a group
    tgt = (packed >> 32).astype(np.int32)
    same = np.zeros(m, dtype=bool)  # same[i]: sorted entry i-1 aimed at the same target
    np.equal(tgt[1:], tgt[:-1], out=same[1:])
    # For each target p, the last step k < p aimed at it: the group's last entry, or the one
    # before if the last is step p itself (steps aimed at p all have k <= p).
    ends = np.nonzero(np.append(~same[1:], True))[0]
    p_end = tgt[ends]
    self_aim = order[ends] == p_end
    use = ends - self_aim
    valid = ~self_aim | same[ends]
    chained = p_end[valid]  # positions whose value came from an earlier step
    f = np.arange(n, dtype=np.int32)
    f[chained] = order[use[valid]]
    # f(p) = f(last step before p aimed at p), else p: resolve the chains by pointer jumping,
    # only over the positions not yet pointing at a root
    active = chained
    while active.size:
        jumped = f[f[active]]
        f[active] = jumped
        active = active[f[jumped] != jumped]
    # step k (entry i) ends with what the previous step aimed at its target left there, or the
    # target itself; the last position ends with f(n-1)
    prev = np.empty(m, dtype=np.int32)
    prev[0] = 0
    prev[1:] = order[:-1]
    out = np.empty(n, dtype=np.int32)
    out[order] = np.where(same, f[prev], tgt)
    out[m] = f[m]
    return out


def _inside_out_shuffle(r64: np.ndarray, n: int) -> np.ndarray:
    """torch's randperm for n >= 214748364, without a Python loop.

    The sequential algorithm is ``for i < n: z = r64[i] % (i+1); r[i] = r[z]; r[z] = i``. The
    last write to position p is the latest later step aimed at p (``r[p] = i``) if any; else the
    value step p itself wrote, V(p): p when z_p == p, otherwise what sat at q = z_p just before
    step p, which is the previous step aimed at q if there is one, else V(q). Steps are grouped
    by target with one sort, and the V chains are resolved by pointer jumping.
    """
    idx_t = np.int32 if n < 2**31 else np.int64
    steps = np.arange(n, dtype=np.int64)
    z = (r64 % (steps.astype(np.uint64) + np.uint64(1))).astype(np.int64)
    if n < 2**31:
        packed = np.sort((z << 32) | steps)
        order = (packed & 0xFFFFFFFF).astype(idx_t)
        tgt = (packed >> 32).astype(idx_t)
        del packed
    else:  # pragma: no cover - needs > 100 GB of memory
        perm = np.lexsort((steps, z))
        order, tgt = perm.astype(idx_t), z[perm].astype(idx_t)
    del z, steps
    same = np.zeros(n, dtype=bool)
    np.equal(tgt[1:], tgt[:-1], out=same[1:])
    is_self = order == tgt  # z_i == i: the first entry of its group
    prev = np.empty(n, dtype=idx_t)
    prev[0] = 0
    prev[1:] = order[:-1]
    prev_self = np.zeros(n, dtype=bool)
    prev_self[1:] = is_self[:-1]
    has_pred = same & ~prev_self  # an earlier step (not step q itself) aimed at the same q
    terminal = is_self | has_pred
    val = np.empty(n, dtype=idx_t)
    val[order] = np.where(is_self, order, prev)
    ptr = np.empty(n, dtype=idx_t)
    ptr[order] = np.where(terminal, order, tgt)
    del prev, prev_self, has_pred, terminal
    active = np.nonzero(ptr != np.arange(n, dtype=idx_t))[0]
    while active.size:
        jumped = ptr[ptr[active]]
        ptr[active] = jumped
        active = active[ptr[jumped] != jumped]
    out = val[ptr]
    # positions written by a later step keep the latest one
    ends = np.nonzero(np.append(~same[1:], True))[0]
    later = ~is_self[ends]
    out[tgt[ends[later]]] = order[ends[later]]
    return out


# ---------------------------------------------------------------------------------------------
# fill order of strided destinations


def fill_order(shape: Sequence[int], strides: Sequence[int]) -> np.ndarray:
    """Flat C-order indices of a strided tensor in the order torch fills it.

    torch's TensorIterator visits the dimensions sorted by stride, the smallest stride fastest
    (dimensions of size 1 do not matter; equal strides keep the later dimension faster), so the
    k-th value drawn goes to the k-th element in memory order. ``values[k]`` belongs at logical
    position ``np.unravel_index(order[k], shape)``.
    """
    shape = tuple(int(s) for s in shape)
    strides = tuple(int(s) for s in strides)
    n = math.prod(shape)
    idx = np.arange(n, dtype=np.int64).reshape(shape)
    dims = [d for d in range(len(shape) - 1, -1, -1)]  # fastest first, as TensorIterator starts
    dims.sort(key=lambda d: abs(strides[d]) if shape[d] > 1 else 0)  # stable: ties keep order
    return idx.transpose(dims[::-1]).reshape(-1)


def place(values: np.ndarray, shape: Sequence[int], strides: Sequence[int]) -> np.ndarray:
    """Arrange values drawn for a strided destination (in fill order) in logical C order."""
    out = np.empty(math.prod(shape), dtype=values.dtype)
    out[fill_order(shape, strides)] = values.reshape(-1)
    return out.reshape(tuple(shape))


# ---------------------------------------------------------------------------------------------
# initializers and data loading


def kaiming_uniform_bound(fan: int, a: float = 0.0, nonlinearity: str = "leaky_relu") -> float:
    """The bound of ``nn.init.kaiming_uniform_`` for the given fan (Python float arithmetic)."""
    if nonlinearity == "leaky_relu":
        gain = math.sqrt(2.0 / (1 + a**2))
    elif nonlinearity == "relu":
        gain = math.sqrt(2.0)
    elif nonlinearity in ("linear", "sigmoid") or nonlinearity.startswith("conv"):
        gain = 1.0
    elif nonlinearity == "tanh":
        gain = 5.0 / 3
    elif nonlinearity == "selu":
        gain = 3.0 / 4
    else:
        raise ValueError(f"Unsupported nonlinearity {nonlinearity}")
    std = gain / math.sqrt(fan)
    return math.sqrt(3.0) * std


def linear_init_bounds(fan_in: int) -> tuple[float, float]:
    """(weight bound, bias bound) of ``nn.Linear``/``ConvNd.reset_parameters``.

    The weight is drawn first with ``uniform(-w, w)`` over its (out, in, ...) shape in row-major
    order, then the bias with ``uniform(-b, b)``. A layer with fan_in == 0 draws no weight
    values and leaves the bias bound at 0.
    """
    w = kaiming_uniform_bound(fan_in, math.sqrt(5)) if fan_in else 0.0
    b = 1 / math.sqrt(fan_in) if fan_in > 0 else 0.0
    return w, b


def shuffle_permutation(default: Engine, n: int) -> np.ndarray:
    """One epoch of ``DataLoader(dataset_of_len_n, shuffle=True)`` with the default generator.

    The iterator draws ``_base_seed`` (``random_()`` int64) first; ``RandomSampler`` then draws
    its own int64 seed, seeds a fresh generator with it and takes ``randperm(n)`` from it.
    """
    default.random_((), np.int64)  # _BaseDataLoaderIter._base_seed
    seed = int(default.random_((), np.int64))
    return Engine(seed).randperm(n)
