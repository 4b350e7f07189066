"""``VisionDataset``: the base of torchvision's datasets (root folder, transforms, the repr).

A dataset takes either ``transforms`` (a callable on ``(image, target)``) or the pair
``transform`` (on the image) / ``target_transform`` (on the target), which it wraps into one
:class:`StandardTransform`; its repr lists the size, the root folder, ``extra_repr()`` (the
split) and the transforms, indented as torchvision indents them.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from ...utils import data

T_co = TypeVar("T_co", covariant=True)


def _indented_repr(transform: Callable, head: str) -> list[str]:
    """``head`` before the first line of ``repr(transform)``, the other lines aligned under it."""
    lines = repr(transform).splitlines()
    return [head + lines[0]] + [" " * len(head) + line for line in lines[1:]]


def _transform_pair(transform: Callable | None, target_transform: Callable | None, input: Any,
                    target: Any) -> tuple[Any, Any]:
    """``(transform(input), target_transform(target))``; a transform that is None leaves its side
    as it is."""
    if transform is not None:
        input = transform(input)
    if target_transform is not None:
        target = target_transform(target)
    return input, target


class VisionDataset(data.Dataset[T_co]):
    """The base class of the datasets: subclasses define ``__getitem__`` and ``__len__``.

    Args:
        root: the dataset's folder (``~`` expanded; shown in the repr).
        transforms: a callable on ``(image, target)`` returning both transformed.
        transform: a callable on the image (a PIL image for the built-in datasets).
        target_transform: a callable on the target.

    ``transforms`` and ``transform``/``target_transform`` exclude each other.
    """

    _repr_indent = 4

    def __init__(self, root: str | Path = None,  # type: ignore[assignment]
                 transforms: Callable | None = None, transform: Callable | None = None,
                 target_transform: Callable | None = None) -> None:
        if isinstance(root, str):
            root = os.path.expanduser(root)
        self.root = root
        separate = transform is not None or target_transform is not None
        if transforms is not None and separate:
            raise ValueError("Only transforms or transform/target_transform can be passed as "
                             "argument")
        self.transform = transform  # kept as attributes too, as older code reads them
        self.target_transform = target_transform
        if separate:
            transforms = StandardTransform(transform, target_transform)
        self.transforms = transforms

    def __getitem__(self, index: int) -> T_co:
        raise NotImplementedError

    def __len__(self) -> int:
        raise NotImplementedError

    def __repr__(self) -> str:
        body = [f"Number of datapoints: {self.__len__()}"]
        if self.root is not None:
            body.append(f"Root location: {self.root}")
        body += self.extra_repr().splitlines()
        if getattr(self, "transforms", None) is not None:
            body.append(repr(self.transforms))
        indent = " " * self._repr_indent
        return "\n".join(["Dataset " + type(self).__name__] + [indent + line for line in body])

    def _format_transform_repr(self, transform: Callable, head: str) -> list[str]:
        return _indented_repr(transform, head)

    def extra_repr(self) -> str:
        """Lines the repr shows after the root (a subclass's split, for instance)."""
        return ""


class StandardTransform:
    """``transform`` on the input and ``target_transform`` on the target, as one callable."""

    def __init__(self, transform: Callable | None = None,
                 target_transform: Callable | None = None) -> None:
        self.transform = transform
        self.target_transform = target_transform

    def __call__(self, input: Any, target: Any) -> tuple[Any, Any]:
        return _transform_pair(self.transform, self.target_transform, input, target)

    def _format_transform_repr(self, transform: Callable, head: str) -> list[str]:
        return _indented_repr(transform, head)

    def __repr__(self) -> str:
        lines = [type(self).__name__]
        if self.transform is not None:
            lines += _indented_repr(self.transform, "Transform: ")
        if self.target_transform is not None:
            lines += _indented_repr(self.target_transform, "Target transform: ")
        return "\n".join(lines)
