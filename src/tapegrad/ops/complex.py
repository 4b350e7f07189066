"""Complex tensors: the ops that exist only because of them, and their gradients.

complex64 and complex128 tensors hold NumPy complex arrays; the arithmetic (add, mul, exp,
matmul, sum...) is the real ops' own, whose real backward rules the registry extends to complex
gradients (``conj(rule(conj(grad)))``, see ``_registry``). This module has the ops that move
between real and complex numbers or are not holomorphic, each with torch's gradient:

* ``real``/``imag`` (views: ``x.real.mul_(2)`` changes ``x``), ``view_as_real`` (a ``[..., 2]``
  real view) and ``view_as_complex``, ``complex(real, imag)``, ``polar(abs, angle)``, ``angle``;
* ``conj``, ``conj_physical``, ``resolve_conj``, ``resolve_neg``, ``is_conj``, ``is_neg``.

The gradient convention is torch's: a tensor's gradient is the conjugate Wirtinger derivative
(times two) of the real loss, ``dL/dx + i dL/dy``. For an op ``s(z)`` that gets ``G`` from its
output, the input's gradient is ``G * conj(ds/dz) + conj(G) * ds/dconj(z)``.

``conj()`` in torch is lazy: it returns a view with a conjugate bit that ops resolve. NumPy has no
such view, so here ``conj()`` returns the conjugated values in new memory, marked ``is_conj()``
(what torch reports); the values, dtypes and gradients are torch's, but writing into the original
does not show through the conjugate.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .. import _dtype
from .._out import rule as out_rule
from .._tensor import Tensor
from ._registry import apply_, defop, scalar_type_name
from ._views import provide as provide_view_ops
from .elementwise import where
from .shape import matrix_transpose, transpose

# --------------------------------------------------------------------------------------------
# real, imag: views of the real and imaginary parts
# --------------------------------------------------------------------------------------------


@defop("real", node="SelectBackward0", view=True)
def _real(x: np.ndarray) -> np.ndarray:
    return x.real


@_real.backward
def real_backward(ctx: Any, grad: Tensor) -> tuple:  # d Re z: the real gradient, imaginary part 0
    return (grad,)  # the engine casts it to the complex input's dtype


@defop("imag", node="SelectBackward0", view=True)
def _imag(x: np.ndarray) -> np.ndarray:
    return x.imag


@_imag.backward
def imag_backward(ctx: Any, grad: Tensor) -> tuple:  # d Im z: dL/dy lands in the imaginary part
    return (grad * 1j,)


_real.holomorphic = _imag.holomorphic = False


def _complex_only(op: Any, input: Tensor) -> Tensor:
    """``op(input)`` for a complex tensor; a real tensor is its own result, as in torch."""
    return op(input) if input._data.dtype.kind == "c" else input


def real(input: Tensor) -> Tensor:
    """The real part, a view sharing memory (the tensor itself when it is not complex)."""
    return _complex_only(_real, input)


def imag(input: Tensor) -> Tensor:
    """The imaginary part of a complex tensor, a view sharing memory."""
    if input._data.dtype.kind != "c":
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    out = _imag(input)
    if input._is_conj:
        out._is_neg = True  # torch: the imaginary part of a conjugate view is a negative view
    return out


# --------------------------------------------------------------------------------------------
# view_as_real, view_as_complex
# --------------------------------------------------------------------------------------------


@defop("view_as_real", node="ViewAsRealBackward0", view=True)
def _view_as_real(x: np.ndarray) -> np.ndarray:
    r = x.real  # the real parts with the complex strides; the imaginary part follows each
    return np.lib.stride_tricks.as_strided(r, x.shape + (2,), r.strides + (r.itemsize,))


@_view_as_real.backward
def view_as_real_backward(ctx: Any, grad: Tensor) -> tuple:  # the pairs back into complex numbers
    return (view_as_complex(grad.contiguous()),)


@defop("view_as_complex", node="ViewAsComplexBackward0", view=True)
def _view_as_complex(x: np.ndarray) -> np.ndarray:
    cdt = np.complex64 if x.dtype == np.float32 else np.complex128
    return x.view(cdt)[..., 0]


@_view_as_complex.backward
def view_as_complex_backward(ctx: Any, grad: Tensor) -> tuple:
    # the complex gradient as (real, imag) pairs
    return (view_as_real(grad),)


_view_as_real.holomorphic = _view_as_complex.holomorphic = False


def view_as_real(input: Tensor) -> Tensor:
    """A real view of a complex tensor with a last dimension of size 2 (real, imaginary)."""
    if input._data.dtype.kind != "c":
        raise RuntimeError("view_as_real is only supported for complex tensors")
    if input._is_conj:
        raise RuntimeError("view_as_real doesn't work on unresolved conjugated tensors.  To "
                           "resolve the conjugate tensor so you can view it as real, use "
                           "self.resolve_conj()")
    return _view_as_real(input)


def view_as_complex(input: Tensor) -> Tensor:
    """A complex view of a float tensor whose last dimension (size 2, stride 1) holds pairs."""
    a = input._data
    if a.dtype not in (np.float32, np.float64):
        name = scalar_type_name(input.dtype)
        raise RuntimeError("view_as_complex is only supported for half, float and double "
                           f"tensors, but got a tensor of scalar type: {name}")
    if a.ndim == 0:
        raise RuntimeError("Input tensor must have one or more dimensions")
    if a.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    isz = a.itemsize
    if a.strides[-1] != isz:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(st % (2 * isz) for st, n in zip(a.strides[:-1], a.shape[:-1], strict=True) if n > 1):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    base = input._base._data if input._base is not None else None
    if base is not None and base.size:
        offset = a.__array_interface__["data"][0] - base.__array_interface__["data"][0]
        if (offset // isz) % 2:
            raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    return _view_as_complex(input)


# the view machinery (ops/_views.py) makes views again with these
provide_view_ops(view_as_real=view_as_real, view_as_real_entry=_view_as_real,
                 view_as_complex=view_as_complex)


# --------------------------------------------------------------------------------------------
# complex(real, imag), polar(abs, angle)
# --------------------------------------------------------------------------------------------


def _pair(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    cdt = np.complex64 if a.dtype == np.float32 else np.complex128
    out = np.empty(np.broadcast_shapes(a.shape, b.shape), dtype=cdt)
    out.real = a  # assigned part by part: inf + 0j stays inf + 0j (a + 1j*b would give nan)
    out.imag = b
    return out


@defop("complex", node="ComplexBackward0")
def _complex(re: np.ndarray, im: np.ndarray) -> np.ndarray:
    return _pair(re, im)


@_complex.backward
def complex_backward(ctx: Any, grad: Tensor) -> tuple:  # z = x + iy: dL/dx = Re g, dL/dy = Im g
    need_re, need_im = ctx.needs_input_grad
    return (real(grad) if need_re else None), (imag(grad) if need_im else None)


@defop("polar", node="PolarBackward0", save_output=True)
def _polar(r: np.ndarray, theta: np.ndarray) -> np.ndarray:
    return _pair(r * np.cos(theta), r * np.sin(theta))


@_polar.backward
def polar_backward(ctx: Any, grad: Tensor) -> tuple:
    # z = r e^(i theta): Re(conj g sgn z), Re(conj g i z)
    (z,) = ctx.saved
    need_r, need_t = ctx.needs_input_grad
    g = conj_physical(grad)
    return (real(g * z.sgn()) if need_r else None), (real(g * (z * 1j)) if need_t else None)


_complex.holomorphic = _polar.holomorphic = False


def _check_parts(fname: str, names: tuple, a: Any, b: Any) -> None:
    for pos, (arg, x) in enumerate(zip(names, (a, b), strict=True)):
        if not isinstance(x, Tensor):
            raise TypeError(f"{fname}(): argument '{arg}' (position {pos + 1}) must be Tensor, "
                            f"not {type(x).__name__}")
    ok = ("float16", "float32", "float64")
    if a.dtype.name not in ok or b.dtype.name not in ok:
        raise RuntimeError("Expected both inputs to be Half, Float or Double tensors but got "
                           f"{scalar_type_name(a.dtype)} and {scalar_type_name(b.dtype)}")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"Expected object of scalar type {scalar_type_name(a.dtype)} but got "
                           f"scalar type {scalar_type_name(b.dtype)} for second argument")
    if a.dtype.name == "float16":
        raise TypeError("tapegrad has no complex32 (torch.chalf): NumPy has no half-precision "
                        "complex type")


def _complex_out(args: tuple, out: Any) -> None:
    """complex's and polar's out rule: out is the complex type of the parts."""
    want = args[0].dtype.to_complex()
    if isinstance(out, Tensor) and out.dtype is not want:
        raise RuntimeError(f"Expected object of scalar type {scalar_type_name(want)} but got "
                           f"scalar type {scalar_type_name(out.dtype)} for argument 'out'")


def complex(real: Tensor, imag: Tensor) -> Tensor:  # noqa: A001
    """The complex tensor ``real + i imag`` (float32 parts make complex64, float64 complex128)."""
    _check_parts("complex", ("real", "imag"), real, imag)
    return _complex(real, imag)


def polar(abs: Tensor, angle: Tensor) -> Tensor:  # noqa: A002
    """The complex tensor ``abs * (cos angle + i sin angle)``."""
    _check_parts("polar", ("abs", "angle"), abs, angle)
    return _polar(abs, angle)


out_rule("complex", "polar", check=_complex_out)


# --------------------------------------------------------------------------------------------
# angle
# --------------------------------------------------------------------------------------------


@defop("angle", node="AngleBackward0", save=(0,))
def _angle(x: np.ndarray) -> np.ndarray:
    if x.dtype.kind == "c":
        return np.angle(x)
    if x.dtype.kind != "f":
        x = x.astype(_dtype.get_default_dtype().np)
    # pi for negative numbers, 0 otherwise (-0.0 too), nan stays nan
    return np.where(x < 0, np.asarray(np.pi, x.dtype), np.where(np.isnan(x), x, 0)).astype(x.dtype)


@_angle.backward
def angle_backward(ctx: Any, grad: Tensor) -> tuple:
    # d arg z = g i z / |z|^2 (0 at z = 0; real x: 0)
    (x,) = ctx.saved
    if not x.is_complex():
        return (grad * 0,)
    return (where(x == 0, 0.0, grad * x / (x.abs() ** 2) * 1j),)


_angle.holomorphic = False


def angle(input: Tensor) -> Tensor:
    """The argument (phase) of each element, in radians; real tensors give 0 or pi."""
    return _angle(input)


# --------------------------------------------------------------------------------------------
# conj and the conjugate / negative bits
# --------------------------------------------------------------------------------------------


def _conjugating(name: str, node: str) -> Any:
    """A registry entry that conjugates its input: conj's (whose result is marked
    ``is_conj()``) and conj_physical's are alike but for their nodes."""

    @defop(name, node=node)
    def forward(x: np.ndarray) -> np.ndarray:
        return np.conj(x)

    @forward.backward
    def conj_backward(ctx: Any, grad: Tensor) -> tuple:
        # d conj z / d conj z = 1: the gradient conjugated
        return (conj_physical(grad),)

    return forward


_conj = _conjugating("conj", "ConjBackward0")
_conj_physical = _conjugating("conj_physical", "ConjPhysicalBackward0")


@defop("resolve", node="CloneBackward0")
def _resolve(x: np.ndarray) -> np.ndarray:
    return x.copy()


@_resolve.backward
def resolve_backward(ctx: Any, grad: Tensor) -> tuple:
    return (grad,)


_conj.holomorphic = _conj_physical.holomorphic = _resolve.holomorphic = False


def conj(input: Tensor) -> Tensor:
    """The complex conjugate (``is_conj()`` is True); a real tensor comes back as it is."""
    if input._data.dtype.kind != "c":
        return input
    out = _conj(input)
    out._is_conj = not input._is_conj
    return out


def conj_physical(input: Tensor) -> Tensor:
    """The complex conjugate in new memory; a real tensor comes back as it is."""
    return _complex_only(_conj_physical, input)


def conj_physical_(input: Tensor) -> Tensor:
    if input._data.dtype.kind != "c":
        return input
    return apply_(_conj_physical, input)


def resolve_conj(input: Tensor) -> Tensor:
    """A tensor with the conjugate bit resolved: a copy if it was set, else the tensor."""
    if not input._is_conj:
        return input
    return _resolve(input)


def resolve_neg(input: Tensor) -> Tensor:
    """A tensor with the negative bit resolved: a copy if it was set, else the tensor."""
    if not input._is_neg:
        return input
    return _resolve(input)


def is_conj(input: Tensor) -> bool:
    return input._is_conj


def is_neg(input: Tensor) -> bool:
    return input._is_neg


def sgn_backward(x: Tensor, grad: Tensor) -> Tensor:
    """d sgn z for complex z: (g - Re(g conj(sgn z)) sgn z) / |z|, 0 at z = 0."""
    s = x.sgn()
    a = x.abs()
    g = (grad - real(grad * conj_physical(s)) * s) / a
    return where(a == 0, 0.0, g)


# --------------------------------------------------------------------------------------------
# Tensor methods and properties
# --------------------------------------------------------------------------------------------


def _set_real(self: Tensor, value: Any) -> None:
    real(self).copy_(value)


def _set_imag(self: Tensor, value: Any) -> None:
    imag(self).copy_(value)


def adjoint(input: Tensor) -> Tensor:
    """The conjugate transpose of the last two dims (``x.adjoint()``)."""
    return conj(matrix_transpose(input, "adjoint"))


def _mH(input: Tensor) -> Tensor:
    """``x.mH``: the conjugate transpose of the last two dims."""
    return conj(matrix_transpose(input, "mH"))


def _H(self: Tensor) -> Tensor:
    if self.ndim == 2:
        return conj(transpose(self, 0, 1))
    if self.ndim == 0:
        warnings.warn("Tensor.H is deprecated on 0-D tensors. Consider using x.conj().",
                      UserWarning, stacklevel=2)
        return conj(self)
    hint = ". For batches of matrices, consider using tensor.mH" if self.ndim > 2 else "."
    raise RuntimeError("tensor.H is only supported on matrices (2-D tensors). Got "
                       f"{self.ndim}-D tensor{hint}")


def _install() -> None:
    Tensor.real = property(real, _set_real)  # type: ignore[attr-defined,assignment]
    Tensor.imag = property(imag, _set_imag)  # type: ignore[attr-defined,assignment]
    # the conjugate transposes (plain transposes for real tensors)
    Tensor.mH = property(_mH)  # type: ignore[attr-defined]
    Tensor.H = property(_H)  # type: ignore[attr-defined]
    methods = {
        "conj": conj, "conj_physical": conj_physical, "conj_physical_": conj_physical_,
        "resolve_conj": resolve_conj, "resolve_neg": resolve_neg, "is_conj": is_conj,
        "is_neg": is_neg, "angle": angle, "adjoint": adjoint,
    }
    for name, fn in methods.items():
        setattr(Tensor, name, fn)


_install()

# The registry entries of this module (their samples: tests/ops/test_complex.py).
NAMES = ("real", "imag", "view_as_real", "view_as_complex", "complex", "polar", "angle", "conj",
         "conj_physical", "resolve")

__all__ = ["adjoint", "real", "imag", "view_as_real", "view_as_complex", "complex", "polar",
           "angle", "conj", "conj_physical", "conj_physical_", "resolve_conj", "resolve_neg",
           "is_conj", "is_neg"]
