"""``Transform``: the base of the v2 transforms.

A call flattens its inputs (any nesting of tuples, lists and dicts: ``utils._pytree``), decides
which leaves to transform (images, videos, masks, boxes, keypoints; a plain tensor only when the
sample holds no image or video, and then only the first one), draws the random parameters once
for all of them (``make_params``), and applies ``transform`` to each with those parameters, so
that a crop cuts the image, its boxes and its mask alike.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any

import PIL.Image

import tapegrad
from tapegrad import Tensor, nn
from tapegrad.utils._pytree import tree_flatten, tree_unflatten
from tapegrad.vision import tv_tensors

from ..functional import InterpolationMode
from ._utils import check_type, has_any, is_pure_tensor
from .functional._utils import _get_kernel


class Transform(nn.Module):
    """The base class of the v2 transforms: subclasses implement ``transform(inpt, params)`` and,
    when random, ``make_params(flat_inputs)``."""

    # the types (or checks) of the leaves this transform changes; the others pass through
    _transformed_types: tuple[type | Callable[[Any], bool], ...] = (Tensor, PIL.Image.Image)

    def __init__(self) -> None:
        super().__init__()

    def check_inputs(self, flat_inputs: list[Any]) -> None:
        pass

    def make_params(self, flat_inputs: list[Any]) -> dict[str, Any]:
        """The random parameters shared by all the inputs of one call."""
        return dict()

    def _call_kernel(self, functional: Callable, inpt: Any, *args: Any, **kwargs: Any) -> Any:
        kernel = _get_kernel(functional, type(inpt), allow_passthrough=True)
        return kernel(inpt, *args, **kwargs)

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        """Transform one input with the parameters of this call."""
        raise NotImplementedError

    def forward(self, *inputs: Any) -> Any:
        flat_inputs, spec = tree_flatten(inputs if len(inputs) > 1 else inputs[0])
        self.check_inputs(flat_inputs)
        return self._transform_flat(flat_inputs, spec)

    def _transform_flat(self, flat_inputs: list[Any], spec: Any) -> Any:
        """The inputs (``flat_inputs`` of the tree ``spec``) with the ones this transform
        handles transformed, all with the parameters drawn once for them."""
        needs_transform_list = self._needs_transform_list(flat_inputs)
        params = self.make_params(
            [inpt for (inpt, needs) in zip(flat_inputs, needs_transform_list, strict=True)
             if needs])
        flat_outputs = [self.transform(inpt, params) if needs else inpt
                        for (inpt, needs) in zip(flat_inputs, needs_transform_list, strict=True)]
        return tree_unflatten(flat_outputs, spec)

    def _needs_transform_list(self, flat_inputs: list[Any]) -> list[bool]:
        # A plain tensor counts as the image only when the sample has no Image, Video or PIL
        # image, and then only the first plain tensor: the rest (labels, ...) pass through.
        needs_transform_list = []
        transform_pure_tensor = not has_any(flat_inputs, tv_tensors.Image, tv_tensors.Video,
                                            PIL.Image.Image)
        for inpt in flat_inputs:
            needs_transform = True
            if not check_type(inpt, self._transformed_types):
                needs_transform = False
            elif is_pure_tensor(inpt):
                if transform_pure_tensor:
                    transform_pure_tensor = False
                else:
                    needs_transform = False
            needs_transform_list.append(needs_transform)
        return needs_transform_list

    def extra_repr(self) -> str:
        extra = []
        for name, value in self.__dict__.items():
            if name.startswith("_") or name == "training":
                continue
            if not isinstance(value, (bool, int, float, str, tuple, list, enum.Enum)):
                continue
            extra.append(f"{name}={value}")
        return ", ".join(extra)

    # the v1 class a v2 transform replaces; torchvision scripts that one (tapegrad has no
    # TorchScript: the attribute is kept for code that reads it)
    _v1_transform_cls: type[nn.Module] | None = None

    def __init_subclass__(cls) -> None:
        # the v1 transform's get_params, where it has one
        if cls._v1_transform_cls is not None and hasattr(cls._v1_transform_cls, "get_params"):
            cls.get_params = staticmethod(cls._v1_transform_cls.get_params)  # type: ignore

    def _extract_params_for_v1_transform(self) -> dict[str, Any]:
        common_attrs = nn.Module().__dict__.keys()
        params = {attr: value for attr, value in self.__dict__.items()
                  if not attr.startswith("_") and attr not in common_attrs}
        if "interpolation" in params and isinstance(params["interpolation"], str):
            params["interpolation"] = InterpolationMode(params["interpolation"])
        return params


class _RandomApplyTransform(Transform):
    """A transform applied with probability ``p`` (one ``torch.rand(1)`` draw per call)."""

    def __init__(self, p: float = 0.5) -> None:
        if not (0.0 <= p <= 1.0):
            raise ValueError("`p` should be a floating point value in the interval [0.0, 1.0].")
        super().__init__()
        self.p = p

    def forward(self, *inputs: Any) -> Any:
        inputs = inputs if len(inputs) > 1 else inputs[0]
        flat_inputs, spec = tree_flatten(inputs)
        self.check_inputs(flat_inputs)
        if tapegrad.rand(1) >= self.p:
            return inputs
        return self._transform_flat(flat_inputs, spec)
