"""Dropout: ``dropout``, ``dropout1d/2d/3d``, ``alpha_dropout`` and ``feature_alpha_dropout``,
the noise drawn as torch's CPU kernels draw it.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..._random import default_generator
from ..._rng import place as _rng_place
from ..._tensor import Tensor
from ...ops._registry import value_check
from ._common import _scalar_name

# ---------------------------------------------------------------------------------------------
# Dropout: torch's CPU noise, bernoulli(1 - p) in the input's dtype divided by (1 - p)
# ---------------------------------------------------------------------------------------------

def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _engine() -> Any:
    return default_generator.engine


def _noise_tensor(noise: np.ndarray, input: Tensor) -> Tensor:
    if input.dtype._rank < 2:  # torch: noise.div_(1 - p) fails on an integer noise tensor
        raise RuntimeError(
            f"result type Float can't be cast to the desired output type {_scalar_name(input)}"
        )
    return Tensor._make(noise)


@value_check
def _in_memory_order(values: np.ndarray, shape: tuple, strides: tuple) -> np.ndarray:
    """The noise drawn in a non-contiguous input's memory order, placed at its logical
    positions. Marked as a value check so that a compiled program records the placement as a
    call on each replay's fresh noise (instead of keeping the first noise as a constant)."""
    return _rng_place(values.reshape(-1), shape, list(strides))


def _dropout_impl(input: Tensor, p: float, train: bool, inplace: bool, feature: bool,
                  alpha: bool) -> Tensor:
    if p == 0 or not train or input.numel() == 0:
        return input
    if p == 1:
        zero = Tensor._make(np.zeros((), dtype=input._data.dtype))
        return input.mul_(zero) if inplace else input * zero
    shape = tuple(input.shape)
    if feature:
        if input.ndim < 2:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        shape = shape[:2] + (1,) * (input.ndim - 2)
    eng = _engine()
    np_dtype = input._data.dtype
    if not alpha:
        values = eng.dropout_noise(shape, np_dtype if input.dtype._rank >= 2 else np.float32, p)
        data = input._data
        if not feature and not data.flags.c_contiguous and data.ndim > 1:
            # torch's noise is empty_like(input): laid out like the input, so the draws fill
            # it in the input's memory order
            values = _in_memory_order(values, shape,
                                      tuple(st // data.itemsize for st in data.strides))
        noise = _noise_tensor(values, input)
        return input.mul_(noise) if inplace else input * noise
    if input.dtype._rank < 2:
        raise RuntimeError(
            f"result type Float can't be cast to the desired output type {_scalar_name(input)}"
        )
    scale, shift = eng.alpha_dropout_noise(shape, np_dtype, p)
    noise, b = Tensor._make(scale), Tensor._make(shift)
    if inplace:
        return input.mul_(noise).add_(b)
    return input * noise + b


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
            ) -> Tensor:
    """Zero each element with probability p and scale the rest by 1/(1-p) (when training).

    The noise is drawn from the default generator exactly as torch draws it on the CPU, so a
    seeded program drops the same elements.
    """
    _check_p(p)
    return _dropout_impl(input, p, training, inplace, False, False)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
              ) -> Tensor:
    """Zero whole channels of a (N, C, L) or (C, L) input."""
    _check_p(p)
    if input.ndim not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D input. Note that "
            "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial "
            "dimension, a channel dimension, and an optional batch dimension (i.e. 2D or 3D "
            "inputs)."
        )
    return _feature_unbatched(input, p, training, inplace, 3)


def _feature_unbatched(input: Tensor, p: float, training: bool, inplace: bool,
                       batched_dim: int) -> Tensor:
    if input.ndim == batched_dim:
        return _dropout_impl(input, p, training, inplace, True, False)
    x = input.unsqueeze(0)
    out = _dropout_impl(x, p, training, inplace, True, False)
    return out.squeeze(0)


def _check_feature_dropout(spatial: int, input: Tensor, p: float) -> int:
    """The rank of ``input``, after the check of ``p`` and torch's deprecation warning when
    dropout2d (``spatial`` = 2) or dropout3d gets an input with another number of spatial dims
    (one less is an unbatched input)."""
    _check_p(p)
    d = input.ndim
    if d not in (spatial + 1, spatial + 2):
        name = f"dropout{spatial}d"
        warnings.warn(
            f"{name}: Received a {d}-D input to {name}, which is deprecated and will "
            "result in an error in a future release. To retain the behavior and silence this "
            f"warning, please use dropout instead. Note that {name} exists to provide "
            f"channel-wise dropout on inputs with {spatial} spatial dimensions, a channel "
            f"dimension, and an optional batch dimension (i.e. {spatial + 1}D or {spatial + 2}D "
            "inputs).",
            stacklevel=3,
        )
    return d


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
              ) -> Tensor:
    """Zero whole channels of a (N, C, H, W) input."""
    d = _check_feature_dropout(2, input, p)
    if d == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
            "dropout behavior is desired - input is interpreted as shape (N, C, L), where C is "
            "the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=2,
        )
    return _dropout_impl(input, p, training, inplace, True, False)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
              ) -> Tensor:
    """Zero whole channels of a (N, C, D, H, W) or (C, D, H, W) input."""
    d = _check_feature_dropout(3, input, p)
    if d == 4:
        return _feature_unbatched(input, p, training, inplace, 5)
    return _dropout_impl(input, p, training, inplace, True, False)


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False
                  ) -> Tensor:
    """Dropout that keeps SELU's self-normalising mean and variance."""
    _check_p(p)
    return _dropout_impl(input, p, training, inplace, False, True)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                          inplace: bool = False) -> Tensor:
    """alpha_dropout of whole channels."""
    _check_p(p)
    return _dropout_impl(input, p, training, inplace, True, True)
