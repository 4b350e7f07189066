"""Helpers of the v2 transforms: argument checks, fill handling, the default labels getter,
and queries of a sample's contents (``query_size``, ``query_chw``, ``get_bounding_boxes``)."""

from __future__ import annotations

import collections.abc
import numbers
from collections.abc import Callable, Sequence
from contextlib import suppress
from typing import Any

import PIL.Image

from tapegrad import Tensor
from tapegrad.vision import tv_tensors

from ..transforms import _check_sequence_input, _setup_angle, _setup_size  # noqa: F401
from .functional import get_dimensions, get_size, is_pure_tensor
from .functional._utils import _FillType, _FillTypeJIT


def _sequence_to_str(seq: Sequence, separate_last: str = "") -> str:
    """'a', 'b' and 'c' style listing of a sequence's items."""
    if not seq:
        return ""
    if len(seq) == 1:
        return f"'{seq[0]}'"
    head = "'" + "', '".join([str(item) for item in seq[:-1]]) + "'"
    tail = f"{'' if separate_last and len(seq) == 2 else ','} {separate_last}'{seq[-1]}'"
    return head + tail


def _setup_number_or_seq(arg: Any, name: str) -> Sequence[float]:
    if not isinstance(arg, (int, float, Sequence)):
        raise TypeError(f"{name} should be a number or a sequence of numbers. Got {type(arg)}")
    if isinstance(arg, Sequence) and len(arg) not in (1, 2):
        raise ValueError(f"If {name} is a sequence its length should be 1 or 2. Got {len(arg)}")
    if isinstance(arg, Sequence):
        for element in arg:
            if not isinstance(element, (int, float)):
                raise ValueError(f"{name} should be a sequence of numbers. Got {type(element)}")
    if isinstance(arg, (int, float)):
        return [float(arg), float(arg)]
    if len(arg) == 1:
        return [float(arg[0]), float(arg[0])]
    return [float(arg[0]), float(arg[1])]


def _check_fill_arg(fill: Any) -> None:
    if isinstance(fill, dict):
        for value in fill.values():
            _check_fill_arg(value)
    elif fill is not None and not isinstance(fill, (numbers.Number, tuple, list)):
        raise TypeError(
            "Got inappropriate fill arg, only Numbers, tuples, lists and dicts are allowed.")


def _convert_fill_arg(fill: _FillType) -> _FillTypeJIT:
    # a sequence fill becomes a list of floats; numbers and None stay
    if fill is None:
        return fill
    if not isinstance(fill, (int, float)):
        fill = [float(v) for v in list(fill)]
    return fill  # type: ignore[return-value]


def _setup_fill_arg(fill: Any) -> dict[Any, _FillTypeJIT]:
    """The fill per input type: a dict as given (keys are types, or "others"), else one fill
    for all."""
    _check_fill_arg(fill)
    if isinstance(fill, dict):
        for k, v in fill.items():
            fill[k] = _convert_fill_arg(v)
        return fill
    return {"others": _convert_fill_arg(fill)}


def _set_fill(transform: Any, fill: Any) -> None:
    """Keep a transform's ``fill`` as given (``fill``, what ``__repr__`` and v1 read) and per
    input type (``_fill``, what its kernels get)."""
    transform.fill = fill
    transform._fill = _setup_fill_arg(fill)


def _setup_center(center: list[float] | None) -> list[float] | None:
    """A rotation's or affine map's ``center``: None (the image's center) or checked to be
    two numbers."""
    if center is not None:
        _check_sequence_input(center, "center", req_sizes=(2,))
    return center


def _get_fill(fill_dict: dict[Any, Any], inpt_type: type) -> Any:
    if inpt_type in fill_dict:
        return fill_dict[inpt_type]
    elif "others" in fill_dict:
        return fill_dict["others"]
    return None


def _check_padding_arg(padding: Any) -> None:
    err_msg = f"Padding must be an int or a 1, 2, or 4 element of tuple or list, got {padding}."
    if isinstance(padding, (tuple, list)):
        if len(padding) not in [1, 2, 4] or not all(isinstance(p, int) for p in padding):
            raise ValueError(err_msg)
    elif not isinstance(padding, int):
        raise ValueError(err_msg)


def _check_padding_mode_arg(padding_mode: str) -> None:
    if padding_mode not in ["constant", "edge", "reflect", "symmetric"]:
        raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")


def _find_labels_default_heuristic(inputs: Any) -> Tensor:
    """The labels of a sample: its second item if a tensor, or the value of a "labels" key
    (else the first key containing "label") of its dict."""
    if isinstance(inputs, (tuple, list)):
        inputs = inputs[1]
    if is_pure_tensor(inputs):
        return inputs  # type: ignore[no-any-return]
    if not isinstance(inputs, collections.abc.Mapping):
        raise ValueError(
            "When using the default labels_getter, the input passed to forward must be a "
            "dictionary or a two-tuple whose second item is a dictionary or a tensor, but got "
            f"{inputs} instead.")
    candidate_key = None
    with suppress(StopIteration):
        candidate_key = next(key for key in inputs.keys() if key.lower() == "labels")
    if candidate_key is None:
        with suppress(StopIteration):
            candidate_key = next(key for key in inputs.keys() if "label" in key.lower())
    if candidate_key is None:
        raise ValueError(
            "Could not infer where the labels are in the sample. Try passing a callable as the "
            "labels_getter parameter?If there are no labels in the sample by design, pass "
            "labels_getter=None.")
    return inputs[candidate_key]  # type: ignore[no-any-return]


def _parse_labels_getter(labels_getter: Any) -> Callable[[Any], Any]:
    if labels_getter == "default":
        return _find_labels_default_heuristic
    elif callable(labels_getter):
        return labels_getter  # type: ignore[no-any-return]
    elif labels_getter is None:
        return lambda _: None
    raise ValueError("labels_getter should either be 'default', a callable, or None, but got "
                     f"{labels_getter}.")


def get_bounding_boxes(flat_inputs: list[Any]) -> tv_tensors.BoundingBoxes:
    """The first ``BoundingBoxes`` of a flattened sample."""
    try:
        return next(inpt for inpt in flat_inputs if isinstance(inpt, tv_tensors.BoundingBoxes))
    except StopIteration:
        raise ValueError("No bounding boxes were found in the sample") from None


def get_keypoints(flat_inputs: list[Any]) -> tv_tensors.KeyPoints:
    """The first ``KeyPoints`` of a flattened sample."""
    try:
        return next(inpt for inpt in flat_inputs if isinstance(inpt, tv_tensors.KeyPoints))
    except StopIteration:
        raise ValueError("No keypoints were found in the sample") from None


def query_chw(flat_inputs: list[Any]) -> tuple[int, int, int]:
    """The (channels, height, width) shared by the sample's images and videos."""
    chws = {
        tuple(get_dimensions(inpt)) for inpt in flat_inputs
        if check_type(inpt, (is_pure_tensor, tv_tensors.Image, PIL.Image.Image,
                             tv_tensors.Video))
    }
    if not chws:
        raise TypeError("No image or video was found in the sample")
    elif len(chws) > 1:
        raise ValueError(
            f"Found multiple CxHxW dimensions in the sample: {_sequence_to_str(sorted(chws))}")
    c, h, w = chws.pop()
    return c, h, w


def query_size(flat_inputs: list[Any]) -> tuple[int, int]:
    """The (height, width) shared by the sample's images, videos, masks, boxes and keypoints."""
    sizes = {
        tuple(get_size(inpt)) for inpt in flat_inputs
        if check_type(inpt, (is_pure_tensor, tv_tensors.Image, PIL.Image.Image,
                             tv_tensors.Video, tv_tensors.Mask, tv_tensors.BoundingBoxes,
                             tv_tensors.KeyPoints))
    }
    if not sizes:
        raise TypeError("No image, video, mask, bounding box of keypoint was found in the "
                        "sample")
    elif len(sizes) > 1:
        raise ValueError(
            f"Found multiple HxW dimensions in the sample: {_sequence_to_str(sorted(sizes))}")
    h, w = sizes.pop()
    return h, w


def check_type(obj: Any, types_or_checks: tuple) -> bool:
    """Whether ``obj`` is of one of the types or passes one of the checks."""
    for type_or_check in types_or_checks:
        if (isinstance(obj, type_or_check) if isinstance(type_or_check, type)
                else type_or_check(obj)):
            return True
    return False


def has_any(flat_inputs: list[Any], *types_or_checks: Any) -> bool:
    """Whether some input is of one of the types (or passes one of the checks)."""
    return any(check_type(inpt, types_or_checks) for inpt in flat_inputs)


def has_all(flat_inputs: list[Any], *types_or_checks: Any) -> bool:
    """Whether every type (or check) is met by some input."""
    for type_or_check in types_or_checks:
        for inpt in flat_inputs:
            if (isinstance(inpt, type_or_check) if isinstance(type_or_check, type)
                    else type_or_check(inpt)):
                break
        else:
            return False
    return True
