"""The short-time Fourier transform and its inverse: ``torch.stft`` and ``torch.istft``.

Both are compositions of differentiable ops, as in torch, so their gradients (of any order) come
from the ops they are made of: the transforms are ops/fft.py's primitives (``r2c``, ``c2c``,
``c2r``), framing is ``unfold`` and overlap-add is ``index_add``.

stft, for a signal x of length L (or a batch of them, B x L)::

    center:  pad x by n_fft // 2 on each side (pad_mode, "reflect" by default)
    frames:  frame t = x[t * hop : t * hop + n_fft]          (B, n_frames, n_fft)
    window:  frames * window, the window (win_length) zero-padded to n_fft in the middle
    fft:     along each frame: r2c (onesided: n_fft // 2 + 1 bins) or c2c (complex input or
             window); normalized scales by 1 / sqrt(n_fft)
    layout:  transposed in place to (B, freq, n_frames), squeezed in place for a 1-d signal

istft inverts it by the least-squares overlap-add::

    frames = ifft(spectrum along freq) * window              (C, n_frames, n_fft)
    y      = overlap-add of the frames / overlap-add of window**2
    center trims n_fft // 2 at each end; ``length`` trims (or zero-pads) the end

The last op each records is the one torch records last (TransposeBackward1 or
SqueezeBackward4 for stft, ViewAsRealBackward0 with ``return_complex=False``; DivBackward0 or
SqueezeBackward1 for istft), so grad_fn reads the same.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .._tensor import Tensor
from . import fft as _fft
from .complex import view_as_real
from .padding import pad as pad_nd
from .scatter import index_add

_STFT_NO_WINDOW = (
    "A window was not provided. A rectangular window will be applied,which is known to cause "
    "spectral leakage. Other windows such as torch.hann_window or torch.hamming_window are "
    "recommended to reduce spectral leakage.To suppress this warning and use a rectangular "
    "window, explicitly set `window=torch.ones(n_fft, device=<device>)`."
)
_ISTFT_NO_WINDOW = (
    "A window was not provided. A rectangular window will be applied.Please provide the same "
    "window used by stft to make the inversion lossless.To suppress this warning and use a "
    "rectangular window, explicitly set `window=torch.ones(n_fft, device=<device>)`."
)
_REAL_DEPRECATED = (
    "stft with return_complex=False is deprecated. In a future pytorch release, stft will "
    "return complex tensors for all inputs, and return_complex=False will raise an error.\n"
    "Note: you can still call torch.view_as_real on the complex output to recover the old "
    "return format."
)
_ONESIDED_COMPLEX = "Cannot have onesided output if window or input is complex"
_PADDED_TAIL = (
    "The length of signal is shorter than the length parameter. Result is being padded with "
    "zeros in the tail. Please check your center and hop_length settings."
)
_warned: set[str] = set()


def _warn_once(message: str) -> None:
    """torch's TORCH_WARN_ONCE: each of these warnings once per process."""
    if message not in _warned:
        _warned.add(message)
        warnings.warn(message, UserWarning, stacklevel=3)


def _flag(v: Any) -> str:
    """A bool as torch's message prints it (``1``/``0``), None as ``None``."""
    return "None" if v is None else str(int(bool(v)))


def _legacy_name(t: Tensor, braces: bool) -> str:
    """``torch.FloatTensor[28]`` (or ``{[8]}``), as torch prints a tensor argument."""
    shape = ", ".join(str(n) for n in t.shape)
    return f"{t.type()}{{[{shape}]}}" if braces else f"{t.type()}[{shape}]"


def _window_name(window: Tensor | None) -> str:
    return "None" if window is None else _legacy_name(window, True)


def _padded_window(window: Tensor | None, win_length: int, n_fft: int, like: Tensor
                   ) -> Tensor | None:
    """The window zero-padded on both sides to n_fft (left gets the smaller half); None when
    there is no window and nothing to pad (a rectangular window of n_fft)."""
    if win_length == n_fft:
        return window

    if window is None:
        real = like.real if like.is_complex() else like
        window = Tensor._make(np.ones(win_length, dtype=real._data.dtype))
    left = (n_fft - win_length) // 2
    return pad_nd(window, (left, n_fft - win_length - left))


def _overlap_add(frames: Tensor, hop: int, total: int) -> Tensor:
    """(C, n_frames, n_fft) -> (C, total): frame t added in at t * hop (``unfold``'s adjoint)."""
    c, n_frames, n_fft = frames.shape
    where = (np.arange(n_frames)[:, None] * hop + np.arange(n_fft)[None, :]).reshape(-1)
    zeros = Tensor._make(np.zeros((c, total), dtype=frames._data.dtype))
    return index_add(zeros, 1, Tensor._make(where.astype(np.int64)),
                     frames.reshape(c, n_frames * n_fft))


def _complex_frames_fft(frames: Tensor, onesided: bool, norm: str, forward: bool) -> Tensor:
    """The complex FFT (``forward``) or inverse FFT of each frame (B, n_frames, n): stft's and
    istft's complex case, where a one-sided spectrum is refused."""
    if onesided:
        raise RuntimeError(_ONESIDED_COMPLEX)
    return _fft._c2c(frames, dims=(2,), norm=norm, forward=forward)


def stft(input: Tensor, n_fft: int, hop_length: int | None = None,
         win_length: int | None = None, window: Tensor | None = None, center: bool = True,
         pad_mode: str = "reflect", normalized: bool = False, onesided: bool | None = None,
         return_complex: bool | None = None, align_to_window: bool | None = None) -> Tensor:
    """Short-time Fourier transform: the spectrum of each frame of ``n_fft`` samples taken
    every ``hop_length`` (``n_fft // 4``) along a 1-d signal or each row of a 2-d batch.

    Returns a complex tensor (B?, n_fft // 2 + 1 or n_fft, n_frames), or with
    ``return_complex=False`` its real view (..., 2).

    Example:
        >>> import tapegrad as torch
        >>> x = torch.arange(8.)
        >>> torch.stft(x, 4, 2, window=torch.ones(4), return_complex=True).shape
        torch.Size([3, 5])
    """
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    if center:

        signal_dim = input.dim()
        extended = [1] * (3 - signal_dim) + list(input.shape)
        pad = int(n_fft // 2)
        input = pad_nd(input.view(extended), [pad, pad], pad_mode)
        input = input.view(input.shape[-signal_dim:])
    hop = n_fft >> 2 if hop_length is None else int(hop_length)
    win = n_fft if win_length is None else int(win_length)
    complex_in = input.is_complex() or (window is not None and window.is_complex())

    def fail(message: str) -> RuntimeError:
        return RuntimeError(
            f"stft({_legacy_name(input, False)}, n_fft={n_fft}, hop_length={hop}, "
            f"win_length={win}, window={_window_name(window)}, normalized={_flag(normalized)}, "
            f"onesided={_flag(onesided)}, return_complex={_flag(return_complex)}, "
            f"align_to_window={_flag(align_to_window)}) : {message}")

    if window is None:
        _warn_once(_STFT_NO_WINDOW)
    if return_complex is None:
        if not complex_in:
            raise RuntimeError(
                "stft requires the return_complex parameter be given for real inputs, and will "
                "further require that return_complex=True in a future PyTorch release.")
        return_complex = True
    elif not return_complex:
        _warn_once(_REAL_DEPRECATED)
    if input.dim() not in (1, 2):
        raise fail("expected a 1D or 2D tensor")
    if not (input.is_floating_point() or input.is_complex()):
        raise fail("expected a tensor of floating point or complex values")
    x = input.unsqueeze(0) if input.dim() == 1 else input
    length = x.shape[1]
    if n_fft <= 0 or n_fft > length:
        raise fail(f"expected 0 < n_fft < {length}, but got n_fft={win}")
    if hop <= 0:
        raise fail(f"expected hop_length > 0, but got hop_length={hop}")
    if win <= 0 or win > n_fft:
        raise fail(f"expected 0 < win_length <= n_fft, but got win_length={win}")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        raise fail(f"expected a 1D window tensor of size equal to win_length={win}, but got "
                   f"window with size {list(window.shape)}")
    full_window = _padded_window(window, win, n_fft, x)
    if align_to_window and win < n_fft:
        # frames start where their window's non-zero part does: torch pads the signal by the
        # window's left padding on both sides and counts 1 + (L - win_length) // hop frames

        left = (n_fft - win) // 2
        x = pad_nd(x, (left, left))
        n_frames = 1 + (length - win) // hop
        need = (n_frames - 1) * hop + n_fft
        if need > x.shape[1]:
            isz = x._data.itemsize
            raise RuntimeError(
                f"setStorage: sizes [{x.shape[0]}, {n_frames}, {n_fft}], strides "
                f"[{x.shape[1]}, {hop}, 1], storage offset 0, and itemsize {isz} requiring a "
                f"storage size of {need * isz} are out of bounds for storage of size "
                f"{x.numel() * isz}")
    frames = x.unfold(-1, n_fft, hop)  # (B, n_frames, n_fft)
    if full_window is not None:
        frames = frames * full_window
    complex_fft = frames.is_complex()
    one = (not complex_fft) if onesided is None else bool(onesided)
    norm = "ortho" if normalized else "backward"
    if complex_fft:
        out = _complex_frames_fft(frames, one, norm, forward=True)
    else:
        out = _fft._r2c(frames, dims=(2,), norm=norm, onesided=one)
    out.transpose_(1, 2)
    if input.dim() == 1:
        out.squeeze_(0)
    if return_complex:
        return out
    return view_as_real(out)


def istft(input: Tensor, n_fft: int, hop_length: int | None = None,
          win_length: int | None = None, window: Tensor | None = None, center: bool = True,
          normalized: bool = False, onesided: bool | None = None, length: int | None = None,
          return_complex: bool = False) -> Tensor:
    """Inverse short-time Fourier transform: the signal whose ``stft`` (with the same
    arguments) is ``input`` (C?, freq, n_frames), by least-squares overlap-add.

    Example:
        >>> import tapegrad as torch
        >>> x = torch.arange(8.)
        >>> w = torch.ones(4)
        >>> torch.istft(torch.stft(x, 4, window=w, return_complex=True), 4, window=w)
        tensor([0., 1., 2., 3., 4., 5., 6., 7.])
    """
    if window is None:
        _warn_once(_ISTFT_NO_WINDOW)
    hop = n_fft >> 2 if hop_length is None else int(hop_length)
    win = n_fft if win_length is None else int(win_length)
    if not input.is_complex():
        raise RuntimeError("istft requires a complex-valued input tensor matching the output "
                           "from stft with return_complex=True.")
    kind = {"complex64": "ComplexFloat", "complex128": "ComplexDouble"}[input._data.dtype.name]
    shape = ", ".join(str(n) for n in input.shape)
    header = (f"istft(CPU{kind}Type[{shape}], n_fft={n_fft}, hop_length={hop}, "
              f"win_length={win}, window={_window_name(window)}, center={_flag(center)}, "
              f"normalized={_flag(normalized)}, onesided={_flag(onesided)}, "
              f"length={'None' if length is None else length}, "
              f"return_complex={_flag(return_complex)})")

    def fail(message: str) -> RuntimeError:
        return RuntimeError(f"{header} : {message}")

    if input.numel() == 0:
        raise fail("input tensor cannot be empty.")
    if input.dim() not in (2, 3):
        raise fail(f"expected a tensor with 3 or 4 dimensions, but got {input.dim() + 1}")
    n_frames, fft_size = input.shape[-1], input.shape[-2]
    expected_len = n_fft + hop * (n_frames - 1)
    one = (fft_size != n_fft) if onesided is None else bool(onesided)
    if one and n_fft // 2 + 1 != fft_size:
        raise fail("expected the frequency dimension (3rd to the last) of the input tensor to "
                   f"match n_fft / 2 + 1 when onesided=True, but got {fft_size}")
    if not one and n_fft != fft_size:
        raise fail("expected the frequency dimension (3rd to the last) of the input tensor to "
                   f"match n_fft when onesided=False, but got {fft_size}")
    if not 0 < hop <= win:
        raise fail("expected 0 < hop_length <= win_length")
    if not 0 < win <= n_fft:
        raise fail("expected 0 < win_length <= n_fft")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        raise fail("Invalid window shape. window has to be 1D and length of `win_length`")
    if window is None:
        real = np.float32 if input._data.dtype == np.complex64 else np.float64
        window = Tensor._make(np.ones(win, dtype=real))
    full_window = _padded_window(window, win, n_fft, window)
    assert full_window is not None
    spec = input.unsqueeze(0) if input.dim() == 2 else input
    spec = spec.transpose(1, 2)  # (C, n_frames, freq)
    norm = "ortho" if normalized else "backward"
    if return_complex:
        frames = _complex_frames_fft(spec, one, norm, forward=False)
    else:
        if window.is_complex():
            raise RuntimeError("Complex windows are incompatible with return_complex=False")
        if not one:
            spec = spec.narrow(-1, 0, n_fft // 2 + 1)
        frames = _fft._c2r(spec, dims=(2,), norm=norm, n=n_fft)  # (C, n_frames, n_fft)
    y = _overlap_add(frames * full_window.view(1, 1, n_fft), hop, expected_len)
    squared = full_window.pow(2).expand(1, n_frames, n_fft)
    envelope = _overlap_add(squared, hop, expected_len)
    start = n_fft // 2 if center else 0
    if length is not None:
        end = start + int(length)
    else:
        end = -(n_fft // 2) if center else expected_len
    y = y[:, start:end]
    envelope = envelope[:, start:end]
    if bool((envelope.detach().abs().min() < 1e-11).item()):
        raise RuntimeError(f"{header} window overlap add min: 1\n[ CPUBoolType{{}} ]")
    y = y / envelope
    if input.dim() == 2:
        y = y.squeeze(0)
    if end > expected_len:

        _warn_once(_PADDED_TAIL)
        y = pad_nd(y, (0, end - expected_len))
    return y


NAMES = ("stft", "istft")
METHODS = {"stft": stft, "istft": istft}
