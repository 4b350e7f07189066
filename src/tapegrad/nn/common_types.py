"""``torch.nn.common_types``: the type aliases of the layers' signatures (a size given as one
int or a tuple of them, and so on)."""

from __future__ import annotations

from typing import TypeVar, Union

from .._tensor import Tensor

T = TypeVar("T")
_scalar_or_tuple_any_t = Union[T, tuple[T, ...]]  # noqa: UP007 - torch's aliases
_scalar_or_tuple_1_t = Union[T, tuple[T]]  # noqa: UP007
_scalar_or_tuple_2_t = Union[T, tuple[T, T]]  # noqa: UP007
_scalar_or_tuple_3_t = Union[T, tuple[T, T, T]]  # noqa: UP007
_scalar_or_tuple_4_t = Union[T, tuple[T, T, T, T]]  # noqa: UP007
_scalar_or_tuple_5_t = Union[T, tuple[T, T, T, T, T]]  # noqa: UP007
_scalar_or_tuple_6_t = Union[T, tuple[T, T, T, T, T, T]]  # noqa: UP007
_size_any_t = _scalar_or_tuple_any_t[int]
_size_1_t = _scalar_or_tuple_1_t[int]
_size_2_t = _scalar_or_tuple_2_t[int]
_size_3_t = _scalar_or_tuple_3_t[int]
_size_4_t = _scalar_or_tuple_4_t[int]
_size_5_t = _scalar_or_tuple_5_t[int]
_size_6_t = _scalar_or_tuple_6_t[int]
_size_any_opt_t = _scalar_or_tuple_any_t[Union[int, None]]  # noqa: UP007
_size_2_opt_t = _scalar_or_tuple_2_t[Union[int, None]]  # noqa: UP007
_size_3_opt_t = _scalar_or_tuple_3_t[Union[int, None]]  # noqa: UP007
_ratio_2_t = _scalar_or_tuple_2_t[float]
_ratio_3_t = _scalar_or_tuple_3_t[float]
_ratio_any_t = _scalar_or_tuple_any_t[float]
_tensor_list_t = _scalar_or_tuple_any_t[Tensor]
_maybe_indices_t = _scalar_or_tuple_2_t[Tensor]
