"""``torch.fft``: discrete Fourier transforms and their helpers (the ops live in ``ops/fft.py``)."""

from __future__ import annotations

from typing import Any

from ._tensor import Tensor
from .ops.fft import (
    fft,
    fft2,
    fftfreq,
    fftn,
    fftshift,
    hfft,
    hfft2,
    hfftn,
    ifft,
    ifft2,
    ifftn,
    ifftshift,
    ihfft,
    ihfft2,
    ihfftn,
    irfft,
    irfft2,
    irfftn,
    rfft,
    rfft2,
    rfftfreq,
    rfftn,
)

__all__ = ["fft", "fft2", "fftfreq", "fftn", "fftshift", "hfft", "hfft2", "hfftn", "ifft",
           "ifft2", "ifftn", "ifftshift", "ihfft", "ihfft2", "ihfftn", "irfft", "irfft2",
           "irfftn", "rfft", "rfft2", "rfftfreq", "rfftn"]

# -- out=: torch.fft.fft(x, out=t) & co. (one seam for every function: _out.py) ---------------

from . import _out  # noqa: E402
from .ops._registry import scalar_type_name as _scalar_type_name  # noqa: E402

_COMPLEX = "fft fft2 fftn ifft ifft2 ifftn ihfft ihfft2 ihfftn rfft rfft2 rfftn"
_REAL = "hfft hfft2 hfftn irfft irfft2 irfftn"


def _out_kind(name: str, complex_out: bool) -> Any:
    """The out rule of a transform: a complex (or a real) out, in torch's words."""
    said = name.replace("2", "n")  # (fft2's messages name fftn)

    def check(args: tuple, out: Any) -> None:
        if isinstance(out, Tensor) and out.dtype.is_complex != complex_out:
            kind = "complex" if complex_out else "floating point"
            raise RuntimeError(f"{said} expects a {kind} output tensor, but got "
                               f"{_scalar_type_name(out.dtype)}")

    return check


for _name in _COMPLEX.split():
    _out.rule("fft_" + _name, check=_out_kind(_name, True))
for _name in _REAL.split():
    _out.rule("fft_" + _name, check=_out_kind(_name, False))
_out.install(globals(), _COMPLEX + " " + _REAL, prefix="fft_")
_out.install(globals(), "fftfreq rfftfreq", prefix="fft_", factory=True)
