"""What several families of ``nn.functional`` share: torch's names of dtypes in messages, and
torch.broadcast_tensors for a pair of inputs.
"""

from __future__ import annotations

import numpy as np

from ..._tensor import Tensor
from ...ops import elementwise as ew
from ...ops._registry import scalar_type_name


def _scalar_name(t: Tensor) -> str:
    return scalar_type_name(t.dtype)


def _lower_name(t: Tensor) -> str:
    """torch's lower-case C type name of a dtype, as some messages print it."""
    return {"float32": "float", "float64": "double", "float16": "c10::Half",
            "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int",
            "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
            "bool": "bool", "complex64": "c10::complex<float>",
            "complex128": "c10::complex<double>"}.get(t.dtype.name, t.dtype.name)


def _broadcast_pair(a: Tensor, b: Tensor) -> tuple:
    """torch.broadcast_tensors for two tensors (ExpandBackward0 where a shape grows)."""
    if a.shape == b.shape:
        return a, b
    try:
        shape = tuple(np.broadcast_shapes(tuple(a.shape), tuple(b.shape)))
    except ValueError:
        raise ew._broadcast_error(a._data, b._data) from None
    return (a if tuple(a.shape) == shape else a.expand(shape),
            b if tuple(b.shape) == shape else b.expand(shape))


def assert_int_or_pair(arg: list[int], arg_name: str, message: str) -> None:
    """Raise ``AssertionError(message.format(arg_name))`` unless ``arg`` is an int or has two
    elements (the check torch.nn.functional exports for kernel sizes and strides)."""
    if not (isinstance(arg, int) or len(arg) == 2):
        raise AssertionError(message.format(arg_name))
