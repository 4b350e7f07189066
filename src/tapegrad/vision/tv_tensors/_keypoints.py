"""``KeyPoints``: points (x, y) with the size of the image they are drawn on."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..._tensor import Tensor
from ...utils._pytree import tree_flatten
from ._tv_tensor import TVTensor, _same_sequence


class KeyPoints(TVTensor):
    """Points: a tensor of shape ``(..., 2)`` holding (x, y) pairs (a 1-D tensor is one point).

    Args:
        data: a tensor or anything ``torch.as_tensor`` takes.
        canvas_size: the (height, width) of the image the points belong to.
        dtype, device, requires_grad: as for ``torch.tensor``.
    """

    canvas_size: tuple[int, int]

    @classmethod
    def _wrap(cls, tensor: Tensor, *, canvas_size: tuple[int, int],  # type: ignore[override]
              check_dims: bool = True) -> KeyPoints:
        if check_dims:
            if tensor.ndim == 1:
                tensor = tensor.unsqueeze(0)
            elif tensor.shape[-1] != 2:
                raise ValueError(f"Expected a tensor of shape (..., 2), not {tensor.shape}")
        points: Any = tensor.as_subclass(cls)
        points.canvas_size = canvas_size
        return points  # type: ignore[no-any-return]

    @classmethod
    def wrap(cls, tensor: Tensor, like: KeyPoints, **kwargs: Any  # type: ignore[override]
             ) -> KeyPoints:
        """``tensor`` as points with the canvas size of ``like`` (or the one in ``kwargs``)."""
        return cls._wrap(tensor, canvas_size=kwargs.get("canvas_size", like.canvas_size))

    def __new__(cls, data: Any, *, canvas_size: tuple[int, int], dtype: Any = None,
                device: Any = None, requires_grad: bool | None = None) -> KeyPoints:
        tensor = cls._to_tensor(data, dtype=dtype, device=device, requires_grad=requires_grad)
        return cls._wrap(tensor, canvas_size=canvas_size)

    @classmethod
    def _wrap_output(cls, output: Any, args: Sequence[Any] = (),
                     kwargs: Mapping[str, Any] | None = None) -> Any:
        flat_params, _ = tree_flatten(tuple(args) + (tuple(kwargs.values()) if kwargs else ()))
        canvas_size = next(x for x in flat_params if isinstance(x, KeyPoints)).canvas_size
        if isinstance(output, Tensor) and not isinstance(output, KeyPoints):
            output = KeyPoints._wrap(output, canvas_size=canvas_size, check_dims=False)
        elif isinstance(output, (tuple, list)):
            output = _same_sequence(output, (KeyPoints._wrap(part, canvas_size=canvas_size,
                                                             check_dims=False)
                                             for part in output))
        return output

    def __repr__(self, *, tensor_contents: Any = None) -> str:  # type: ignore[override]
        return self._make_repr(canvas_size=self.canvas_size)
