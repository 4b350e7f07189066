"""Pooling layers: Max/Avg/LP pooling, adaptive pooling and max-unpooling over 1-3 spatial dims.

Each stores its settings as given (``MaxPool2d(2)`` keeps ``kernel_size=2``; AvgPool1d and the
unpooling layers store tuples, as torch does, which shows in their reprs) and calls the
matching ``nn.functional`` op.
"""

from __future__ import annotations

from typing import Any

from ..._tensor import Tensor
from .. import functional as F
from .module import Module
from .utils import _functional_layer, _pair, _single, _triple

__all__ = [
    "MaxPool1d", "MaxPool2d", "MaxPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d",
    "AvgPool1d", "AvgPool2d", "AvgPool3d", "LPPool1d", "LPPool2d", "LPPool3d",
    "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d", "AdaptiveAvgPool3d",
]


def _set_window(module: Module, kernel_size: Any, stride: Any, padding: Any,
                to_tuple: Any = None) -> None:
    """Store ``kernel_size``, ``stride`` (the kernel size when None, as in torch) and
    ``padding`` on ``module``, each passed through ``to_tuple`` (``_pair`` & co.) when given."""
    if stride is None:
        stride = kernel_size
    if to_tuple is not None:
        kernel_size, stride, padding = to_tuple(kernel_size), to_tuple(stride), to_tuple(padding)
    module.kernel_size = kernel_size
    module.stride = stride
    module.padding = padding


class _MaxPoolNd(Module):
    """MaxPool1d/2d/3d: the settings as given; forward runs the subclass's ``_fn``."""

    __constants__ = ["kernel_size", "stride", "padding", "dilation", "return_indices",
                     "ceil_mode"]
    _fn: Any

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 dilation: Any = 1, return_indices: bool = False,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        _set_window(self, kernel_size, stride, padding)
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        return ("kernel_size={kernel_size}, stride={stride}, padding={padding}, "
                "dilation={dilation}, ceil_mode={ceil_mode}").format(**self.__dict__)

    def forward(self, input: Tensor) -> Any:
        return self._fn(input, self.kernel_size, self.stride, self.padding, self.dilation,
                        ceil_mode=self.ceil_mode, return_indices=self.return_indices)


MaxPool1d = _functional_layer("MaxPool1d", _MaxPoolNd, F.max_pool1d,
                              "Max over sliding windows of (N, C, L) inputs.", __name__)
MaxPool2d = _functional_layer("MaxPool2d", _MaxPoolNd, F.max_pool2d,
                              """Max over sliding windows of (N, C, H, W) inputs.

    Example:
        >>> import tapegrad as torch
        >>> torch.nn.MaxPool2d(2)(torch.randn(1, 1, 4, 4)).shape
        torch.Size([1, 1, 2, 2])
    """, __name__)
MaxPool3d = _functional_layer("MaxPool3d", _MaxPoolNd, F.max_pool3d,
                              "Max over sliding windows of (N, C, D, H, W) inputs.", __name__)


# MaxUnpool1d/2d/3d and FractionalMaxPool2d/3d own their __init__ and forward, as in torch
_OWN_INIT = ("__init__", "forward")


class _MaxUnpoolNd(Module):
    """MaxUnpool1d/2d/3d: the settings as tuples of the subclass's dimension (its
    ``_to_tuple``: _single, _pair or _triple); forward runs the subclass's ``_fn``."""

    _to_tuple: Any
    _fn: Any

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        super().__init__()
        _set_window(self, kernel_size, stride, padding, self._to_tuple)

    def forward(self, input: Tensor, indices: Tensor, output_size: Any = None) -> Tensor:
        return self._fn(input, indices, self.kernel_size, self.stride, self.padding,
                        output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


MaxUnpool1d = _functional_layer(
    "MaxUnpool1d", _MaxUnpoolNd, F.max_unpool1d,
    "Inverse of MaxPool1d: scatter values back to the positions of the maxima.", __name__,
    own=_OWN_INIT, _to_tuple=staticmethod(_single))
MaxUnpool2d = _functional_layer("MaxUnpool2d", _MaxUnpoolNd, F.max_unpool2d,
                                "Inverse of MaxPool2d.", __name__, own=_OWN_INIT,
                                _to_tuple=staticmethod(_pair))
MaxUnpool3d = _functional_layer("MaxUnpool3d", _MaxUnpoolNd, F.max_unpool3d,
                                "Inverse of MaxPool3d.", __name__, own=_OWN_INIT,
                                _to_tuple=staticmethod(_triple))


class _AvgPoolNd(Module):
    __constants__ = ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad"]

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPoolNd):
    """Mean over sliding windows of (N, C, L) inputs."""

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True) -> None:
        super().__init__()
        _set_window(self, kernel_size, stride, padding, _single)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)


class _AvgPoolNdOverride(_AvgPoolNd):
    """AvgPool2d/3d: the settings as given; forward runs the subclass's ``_fn``."""

    _fn: Any

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override: int | None = None) -> None:
        super().__init__()
        _set_window(self, kernel_size, stride, padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input: Tensor) -> Tensor:
        return self._fn(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                        self.count_include_pad, self.divisor_override)


AvgPool2d = _functional_layer("AvgPool2d", _AvgPoolNdOverride, F.avg_pool2d,
                              "Mean over sliding windows of (N, C, H, W) inputs.", __name__)
AvgPool3d = _functional_layer("AvgPool3d", _AvgPoolNdOverride, F.avg_pool3d,
                              "Mean over sliding windows of (N, C, D, H, W) inputs.", __name__)


class _LPPoolNd(Module):
    """LPPool1d/2d/3d: forward runs the subclass's ``_fn``."""

    __constants__ = ["norm_type", "kernel_size", "stride", "ceil_mode"]
    _fn: Any

    def __init__(self, norm_type: float, kernel_size: Any, stride: Any = None,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        return ("norm_type={norm_type}, kernel_size={kernel_size}, stride={stride}, "
                "ceil_mode={ceil_mode}").format(**self.__dict__)

    def forward(self, input: Tensor) -> Tensor:
        return self._fn(input, float(self.norm_type), self.kernel_size, self.stride,
                        self.ceil_mode)


LPPool1d = _functional_layer("LPPool1d", _LPPoolNd, F.lp_pool1d,
                             "Power-average pooling: ``(sum x^p)^(1/p)`` over windows.", __name__)
LPPool2d = _functional_layer("LPPool2d", _LPPoolNd, F.lp_pool2d,
                             "Power-average pooling over 2-D windows.", __name__)
LPPool3d = _functional_layer("LPPool3d", _LPPoolNd, F.lp_pool3d,
                             "Power-average pooling over 3-D windows.", __name__)


class _AdaptiveMaxPoolNd(Module):
    """AdaptiveMaxPool1d/2d/3d: forward runs the subclass's ``_fn``."""

    __constants__ = ["output_size", "return_indices"]
    _fn: Any

    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"

    def forward(self, input: Tensor) -> Any:
        return self._fn(input, self.output_size, self.return_indices)


AdaptiveMaxPool1d = _functional_layer("AdaptiveMaxPool1d", _AdaptiveMaxPoolNd,
                                      F.adaptive_max_pool1d,
                                      "Max pooling to a fixed output length.", __name__)
AdaptiveMaxPool2d = _functional_layer("AdaptiveMaxPool2d", _AdaptiveMaxPoolNd,
                                      F.adaptive_max_pool2d,
                                      "Max pooling to a fixed output size (H_out, W_out).",
                                      __name__)
AdaptiveMaxPool3d = _functional_layer("AdaptiveMaxPool3d", _AdaptiveMaxPoolNd,
                                      F.adaptive_max_pool3d,
                                      "Max pooling to a fixed output size (D_out, H_out, W_out).",
                                      __name__)


class _AdaptiveAvgPoolNd(Module):
    """AdaptiveAvgPool1d/2d/3d: forward runs the subclass's ``_fn``."""

    __constants__ = ["output_size"]
    _fn: Any

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"

    def forward(self, input: Tensor) -> Tensor:
        return self._fn(input, self.output_size)


AdaptiveAvgPool1d = _functional_layer("AdaptiveAvgPool1d", _AdaptiveAvgPoolNd,
                                      F.adaptive_avg_pool1d,
                                      "Average pooling to a fixed output length.", __name__)
AdaptiveAvgPool2d = _functional_layer(
    "AdaptiveAvgPool2d", _AdaptiveAvgPoolNd, F.adaptive_avg_pool2d,
    "Average pooling to a fixed output size, e.g. ``AdaptiveAvgPool2d((1, 1))``.", __name__)
AdaptiveAvgPool3d = _functional_layer(
    "AdaptiveAvgPool3d", _AdaptiveAvgPoolNd, F.adaptive_avg_pool3d,
    "Average pooling to a fixed output size (D_out, H_out, W_out).", __name__)


class _FractionalMaxPoolNd(Module):
    """FractionalMaxPool2d/3d: ``_dims`` spatial dims; forward runs the subclass's ``_fn``."""

    _dims: int
    _fn: Any

    def __init__(self, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,
                 return_indices: bool = False, _random_samples: Any = None) -> None:
        super().__init__()
        n = self._dims
        self.kernel_size = _ntuple(kernel_size, n)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = _ntuple(output_size, n) if output_size is not None else None
        self.output_ratio = _ntuple(output_ratio, n) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(f"FractionalMaxPool{n}d requires specifying either an output size, "
                             "or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input: Tensor) -> Any:
        return self._fn(input, self.kernel_size, self.output_size, self.output_ratio,
                        self.return_indices, _random_samples=self._random_samples)


FractionalMaxPool2d = _functional_layer(
    "FractionalMaxPool2d", _FractionalMaxPoolNd, F.fractional_max_pool2d,
    """Max pooling over pseudo-randomly placed windows (Graham, 2014): output_size or
    output_ratio (in (0, 1)) sets the output; each call draws the window offsets from the
    default generator unless ``_random_samples`` is given.""", __name__,
    own=_OWN_INIT, _dims=2)
FractionalMaxPool3d = _functional_layer("FractionalMaxPool3d", _FractionalMaxPoolNd,
                                        F.fractional_max_pool3d,
                                        "Fractional max pooling over (D, H, W).", __name__,
                                        own=_OWN_INIT, _dims=3)


def _ntuple(v: Any, n: int) -> tuple:
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n
