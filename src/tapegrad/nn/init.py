"""``nn.init``: fill a tensor in place with the values PyTorch's initialisers give.

Every function runs under ``no_grad`` and draws from the global generator (or ``generator=``)
in torch's order, with torch's arithmetic in Python floats for the bounds, so after the same
``manual_seed`` the values are torch's bit for bit::

    kaiming_uniform_(w, a)   gain = calculate_gain(nonlinearity, a); std = gain / sqrt(fan)
                             bound = sqrt(3) * std; w.uniform_(-bound, bound)
    xavier_uniform_(w, g)    bound = sqrt(3) * g * sqrt(2 / (fan_in + fan_out))
    trunc_normal_            torch 2.13's rejection sampler (normal draws, or uniform proposals
                             accepted by log(u) <= -(z^2)/2 - log_peak when [a, b] holds < 30%)
    orthogonal_              QR of a normal matrix, columns signed by diag(R)
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from .._random import randperm
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad

__all__ = [
    "calculate_gain",
    "uniform_",
    "normal_",
    "trunc_normal_",
    "constant_",
    "ones_",
    "zeros_",
    "eye_",
    "dirac_",
    "xavier_uniform_",
    "xavier_normal_",
    "kaiming_uniform_",
    "kaiming_normal_",
    "orthogonal_",
    "sparse_",
    "uniform",
    "normal",
    "constant",
    "eye",
    "dirac",
    "xavier_uniform",
    "xavier_normal",
    "kaiming_uniform",
    "kaiming_normal",
    "orthogonal",
    "sparse",
]

_LINEAR_FNS = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
               "conv_transpose3d")


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for a nonlinearity (``leaky_relu`` takes its negative slope).

    Example:
        >>> import tapegrad as torch
        >>> torch.nn.init.calculate_gain("tanh")
        1.6666666666666667
    """
    if nonlinearity in _LINEAR_FNS or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif (not isinstance(param, bool) and isinstance(param, int)) or isinstance(param, float):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: Any = None) -> Tensor:
    """Fill with values drawn from U(a, b)."""
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator: Any = None
            ) -> Tensor:
    """Fill with values drawn from N(mean, std^2)."""
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def _new_like(t: Tensor) -> Tensor:
    """An uninitialised tensor with t's shape, dtype and memory layout (torch's empty_like)."""
    return Tensor._make(np.empty_like(t._data, order="K"))


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0,
                  b: float = 2.0, generator: Any = None) -> Tensor:
    """Fill with values from N(mean, std^2) truncated to [a, b] (torch 2.13's sampler)."""

    def norm_cdf(x: float) -> float:
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    if (mean < a - 2 * std) or (mean > b + 2 * std):
        warnings.warn(
            "mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The distribution of "
            "values may be incorrect.",
            stacklevel=2,
        )
    with no_grad():
        dt = tensor._data.dtype
        p = norm_cdf((b - mean) / std) - norm_cdf((a - mean) / std)
        if p > 0.3:
            # Draw normals; redraw (a whole tensor at a time) where a value fell outside [a, b].
            lo, hi = dt.type(a), dt.type(b)
            result = tensor.normal_(mean, std, generator=generator)._data.copy()
            while True:
                mask = (result < lo) | (result > hi)
                if not mask.any():
                    break
                fresh = _new_like(tensor).normal_(mean, std, generator=generator)._data
                result = np.where(mask, fresh, result)
            np.copyto(tensor._data, result)
            tensor._version_counter.value += 1
            return tensor
        # Uniform proposals on [a, b], accepted with probability exp(-z^2/2) / peak.
        mode = max(a, min(mean, b))
        log_peak = -0.5 * ((mode - mean) / std) ** 2
        c_mean, c_std, c_half, c_peak = (dt.type(v) for v in (mean, std, -0.5, log_peak))

        def log_density(x: np.ndarray) -> np.ndarray:
            z = (x - c_mean) / c_std
            return (z * z) * c_half - c_peak

        def log_uniform() -> np.ndarray:
            return np.log(_new_like(tensor).uniform_(generator=generator)._data)

        tensor.uniform_(a, b, generator=generator)
        result = tensor._data.copy()
        pending = log_uniform() > log_density(result)
        if pending.any():
            while True:
                cand = _new_like(tensor).uniform_(a, b, generator=generator)._data
                result = np.where(pending, cand, result)
                pending = np.where(pending, log_uniform() > log_density(cand), pending)
                if not pending.any():
                    break
            np.copyto(tensor._data, result)
            tensor._version_counter.value += 1
        return tensor


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill with ``val``."""
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor: Tensor) -> Tensor:
    """Fill with ones."""
    with no_grad():
        return tensor.fill_(1.0)


def zeros_(tensor: Tensor) -> Tensor:
    """Fill with zeros."""
    with no_grad():
        return tensor.zero_()


def eye_(tensor: Tensor) -> Tensor:
    """Fill a 2-D tensor with the identity matrix."""
    if tensor.ndimension() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with no_grad():
        tensor.copy_(Tensor._make(np.eye(*tensor._data.shape, dtype=tensor._data.dtype)))
    return tensor


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Fill a {3, 4, 5}-D conv weight with the Dirac delta (convolution preserves the input)."""
    dims = tensor.ndimension()
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.size()
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    per_group = sizes[0] // groups
    min_dim = min(per_group, sizes[1])
    values = np.zeros(tensor._data.shape, dtype=tensor._data.dtype)
    centre = tuple(s // 2 for s in sizes[2:])
    for g in range(groups):
        for d in range(min_dim):
            values[(g * per_group + d, d) + centre] = 1
    with no_grad():
        tensor.copy_(Tensor._make(values))
    return tensor


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    dims = tensor.dim()
    if dims < 2:
        raise ValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions"
        )
    num_input_fmaps = tensor.size(1)
    num_output_fmaps = tensor.size(0)
    receptive_field_size = 1
    for s in tensor.shape[2:]:
        receptive_field_size *= s
    return num_input_fmaps * receptive_field_size, num_output_fmaps * receptive_field_size


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """Glorot uniform: U(-b, b), b = gain * sqrt(6 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    with no_grad():
        return tensor.uniform_(-a, a, generator=generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """Glorot normal: N(0, std^2), std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    with no_grad():
        return tensor.normal_(0.0, std, generator=generator)


def _kaiming_std(tensor: Tensor, a: float, mode: str, nonlinearity: str) -> float | None:
    """He's std, ``gain / sqrt(fan)``; None, after torch's warning (naming the caller of the
    init function), for a tensor without elements."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=3)
        return None
    fan = _calculate_correct_fan(tensor, mode)
    gain = calculate_gain(nonlinearity, a)
    return gain / math.sqrt(fan)


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu", generator: Any = None) -> Tensor:
    """He uniform: U(-b, b), b = gain * sqrt(3 / fan).

    Example:
        >>> import tapegrad as torch
        >>> w = torch.empty(3, 5)
        >>> _ = torch.nn.init.kaiming_uniform_(w, mode="fan_in", nonlinearity="relu")
    """
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    bound = math.sqrt(3.0) * std
    with no_grad():
        return tensor.uniform_(-bound, bound, generator=generator)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu", generator: Any = None) -> Tensor:
    """He normal: N(0, std^2), std = gain / sqrt(fan)."""
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    with no_grad():
        return tensor.normal_(0, std, generator=generator)


def orthogonal_(tensor: Tensor, gain: float = 1, generator: Any = None) -> Tensor:
    """A (semi-)orthogonal matrix from the QR decomposition of a normal matrix, times gain.

    The normal draws are torch's exactly; the QR is NumPy's LAPACK, not torch's, so values agree
    with torch to rounding (a few float32 ulps), not bit for bit.
    """
    if tensor.ndimension() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.size(0)
    cols = tensor.numel() // rows
    flat = tensor.new_empty((rows, cols)).normal_(0, 1, generator=generator)._data
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diagonal(r)).astype(q.dtype)
    if rows < cols:
        q = q.T
    with no_grad():
        tensor.copy_(Tensor._make(np.ascontiguousarray(q).reshape(tensor._data.shape)))
        tensor.mul_(gain)
    return tensor


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator: Any = None) -> Tensor:
    """A 2-D normal N(0, std^2) matrix with a fraction ``sparsity`` of each column zeroed."""
    if tensor.ndimension() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = math.ceil(sparsity * rows)
    with no_grad():
        tensor.normal_(0, std, generator=generator)
        for col in range(cols):
            zero_rows = randperm(rows)._data[:num_zeros]  # the default generator, as torch
            tensor._data[zero_rows, col] = 0
        tensor._version_counter.value += 1
    return tensor


def _make_deprecate(meth: Callable) -> Callable:
    new_name = meth.__name__
    old_name = new_name[:-1]

    def deprecated_init(*args: Any, **kwargs: Any) -> Any:
        warnings.warn(
            f"`nn.init.{old_name}` is now deprecated in favor of `nn.init.{new_name}`.",
            FutureWarning,
            stacklevel=2,
        )
        return meth(*args, **kwargs)

    deprecated_init.__doc__ = f"Deprecated alias of :func:`{new_name}`."
    deprecated_init.__name__ = old_name
    return deprecated_init


uniform = _make_deprecate(uniform_)
normal = _make_deprecate(normal_)
constant = _make_deprecate(constant_)
eye = _make_deprecate(eye_)
dirac = _make_deprecate(dirac_)
xavier_uniform = _make_deprecate(xavier_uniform_)
xavier_normal = _make_deprecate(xavier_normal_)
kaiming_uniform = _make_deprecate(kaiming_uniform_)
kaiming_normal = _make_deprecate(kaiming_normal_)
orthogonal = _make_deprecate(orthogonal_)
sparse = _make_deprecate(sparse_)
