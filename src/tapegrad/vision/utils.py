"""``torchvision.utils``: pictures of tensors.

    make_grid                a batch of images tiled into one image (rows of ``nrow``, padded)
    save_image               make_grid, then the picture written to a file (through Pillow)
    draw_bounding_boxes      boxes (and labels) drawn onto a uint8/float image
    draw_segmentation_masks  boolean masks blended onto an image
    draw_keypoints           points and the lines joining them
    flow_to_image            an optical-flow field coloured by direction and size

Each returns what torchvision returns for the same input, element for element; the drawing
functions draw with Pillow's ``ImageDraw`` exactly as torchvision does, so the pixels agree. Also
here, as in torchvision, a few helpers the other submodules share (``_log_api_usage_once``,
``_make_ntuple``, ``_Image_fromarray``). Pillow is imported by the functions that need it, not by
this module, so the models and ops that import the helpers do not load it.
"""

from __future__ import annotations

import collections.abc
import math
import pathlib
import warnings
from itertools import repeat
from types import SimpleNamespace
from typing import Any, BinaryIO

import numpy as np

import tapegrad as torch

__all__ = ["_Image_fromarray", "make_grid", "save_image", "draw_bounding_boxes",
           "draw_segmentation_masks", "draw_keypoints", "flow_to_image"]

Tensor = torch.Tensor


# -- helpers the other submodules share ---------------------------------------------------------

def _pil() -> Any:
    """Pillow's modules that saving and drawing use."""
    # PIL: optional (pip install pillow), loaded on first use
    from PIL import Image, ImageColor, ImageDraw, ImageFont

    return SimpleNamespace(Image=Image, ImageColor=ImageColor, ImageDraw=ImageDraw,
                           ImageFont=ImageFont)


def _log_api_usage_once(obj: Any) -> None:
    """torchvision reports API use to a logger torch disables by default; nothing to do here."""


def _make_ntuple(x: Any, n: int) -> tuple[Any, ...]:
    """``x`` as an ``n``-tuple: an iterable as a tuple of its items, anything else repeated."""
    if isinstance(x, collections.abc.Iterable):
        return tuple(x)
    return tuple(repeat(x, n))


def _Image_fromarray(obj: np.ndarray, mode: str) -> Any:  # noqa: N802  (torchvision's name)
    """A PIL image of ``mode`` whose pixels are the raw bytes of ``obj`` (torchvision's reading
    of ``Image.fromarray(obj, mode)``, which Pillow 11.3 stopped honouring)."""
    Image = _pil().Image

    shape = obj.shape
    size = (1 if len(shape) == 1 else shape[1], shape[0])
    return Image.frombuffer(mode, size, np.ascontiguousarray(obj).tobytes(), "raw", mode, 0, 1)


# -- make_grid / save_image ---------------------------------------------------------------------

def make_grid(tensor: Any, nrow: int = 8, padding: int = 2,
              normalize: bool = False, value_range: tuple[int, int] | None = None,
              scale_each: bool = False, pad_value: float = 0.0) -> Tensor:
    """Tile images into one: ``(B, C, H, W)`` (or a list of ``(C, H, W)``) becomes
    ``(C, rows * (H + padding) + padding, cols * (W + padding) + padding)`` with ``nrow``
    images a row.

    Args:
        tensor: the images; a single ``(H, W)`` or ``(C, H, W)`` image is returned as it is
            (one channel made three).
        nrow: images per row.
        padding: pixels between images and around them, filled with ``pad_value``.
        normalize: shift and scale to [0, 1] by ``value_range`` (default the min and max).
        value_range: ``(low, high)``, clamped to before normalizing.
        scale_each: normalize each image by its own min and max.
        pad_value: the padding's value.
    """
    with torch.no_grad():
        if not torch.is_tensor(tensor):
            if not isinstance(tensor, list):
                raise TypeError(f"tensor or list of tensors expected, got {_torch_type(tensor)}")
            for t in tensor:
                if not torch.is_tensor(t):
                    raise TypeError("tensor or list of tensors expected, got a list containing "
                                    f"{_torch_type(t)}")
            tensor = torch.stack(tensor, dim=0)
        if tensor.dim() == 2:  # one (H, W) image
            tensor = tensor.unsqueeze(0)
        if tensor.dim() == 3:  # one (C, H, W) image
            if tensor.size(0) == 1:
                tensor = torch.cat((tensor, tensor, tensor), 0)
            tensor = tensor.unsqueeze(0)
        if tensor.dim() == 4 and tensor.size(1) == 1:  # grey images shown in three channels
            tensor = torch.cat((tensor, tensor, tensor), 1)

        if normalize is True:
            tensor = tensor.clone()  # the caller's images stay as they are
            if value_range is not None and not isinstance(value_range, tuple):
                raise TypeError("value_range has to be a tuple (min, max) if specified. min and "
                                "max are numbers")
            if scale_each is True:
                for image in tensor:
                    _normalize_(image, value_range)
            else:
                _normalize_(tensor, value_range)

        if tensor.size(0) == 1:
            return tensor.squeeze(0)
        count = tensor.size(0)
        cols = min(nrow, count)
        rows = int(math.ceil(float(count) / cols))
        height, width = int(tensor.size(2) + padding), int(tensor.size(3) + padding)
        grid = tensor.new_full((tensor.size(1), height * rows + padding, width * cols + padding),
                               pad_value)
        for k in range(count):
            y, x = divmod(k, cols)
            grid.narrow(1, y * height + padding, height - padding).narrow(
                2, x * width + padding, width - padding).copy_(tensor[k])
        return grid


def _normalize_(images: Tensor, value_range: tuple[float, float] | None) -> None:
    """Clamp to ``value_range`` (default: the images' min and max) and map it onto [0, 1]."""
    low, high = value_range if value_range is not None else (float(images.min()),
                                                             float(images.max()))
    images.clamp_(min=low, max=high)
    images.sub_(low).div_(max(high - low, 1e-5))


def _torch_type(obj: Any) -> str:
    """``type(obj)`` as torch's classes print (``<class 'torch.Tensor'>`` for a tensor)."""
    return str(type(obj)).replace("tapegrad.", "torch.").replace("_tensor.", "")


def save_image(tensor: Tensor | list[Tensor], fp: str | pathlib.Path | BinaryIO,
               format: str | None = None, **kwargs: Any) -> None:  # noqa: A002
    """Write images to a file: :func:`make_grid` (``**kwargs`` are its arguments), values in
    [0, 1] scaled to bytes (rounded), saved by Pillow in ``format`` (default: from the file
    name's extension; a file object needs ``format``)."""
    Image = _pil().Image

    with torch.no_grad():
        grid = make_grid(tensor, **kwargs)
        pixels = grid.mul(255).add_(0.5).clamp_(0, 255).permute(1, 2, 0).to("cpu", torch.uint8)
        Image.fromarray(pixels.numpy()).save(fp, format=format)


# -- drawing ------------------------------------------------------------------------------------

def _to_uint8(image: Tensor) -> Tensor:
    """A float image in [0, 1] as uint8, scaled as torchvision's ``to_dtype(scale=True)``:
    times 255.999 and truncated, so every value below 1 lands on the right byte."""
    return image.mul(255 + 1.0 - 1e-3).to(torch.uint8)


def _from_uint8(image: Tensor, dtype: Any) -> Tensor:
    """uint8 back to a float dtype, scaled to [0, 1]."""
    return image.to(dtype).mul_(1.0 / 255)


def _generate_color_palette(num_objects: int) -> list[tuple[Any, ...]]:
    palette = torch.tensor([2**25 - 1, 2**15 - 1, 2**21 - 1])
    return [tuple((i * palette) % 255) for i in range(num_objects)]


def _parse_colors(colors: Any, *, num_objects: int,
                  dtype: Any = torch.uint8) -> list[tuple[Any, ...]]:
    """``colors`` (None: a palette; a color; a list of at least ``num_objects`` colors; a color
    is a Pillow color name or an RGB triple) as one RGB tuple per object, in [0, 1] for a float
    ``dtype``."""
    ImageColor = _pil().ImageColor

    if colors is None:
        colors = _generate_color_palette(num_objects)
    elif isinstance(colors, list):
        if len(colors) < num_objects:
            raise ValueError("Number of colors must be equal or larger than the number of "
                             f"objects, but got {len(colors)} < {num_objects}.")
    elif not isinstance(colors, (tuple, str)):
        raise ValueError("colors must be a tuple or a string, or a list thereof, but got "
                         f"{colors}.")
    elif isinstance(colors, tuple) and len(colors) != 3:
        raise ValueError(f"If passed as tuple, colors should be an RGB triplet, but got {colors}.")
    else:
        colors = [colors] * num_objects
    colors = [ImageColor.getrgb(c) if isinstance(c, str) else c for c in colors]
    if dtype.is_floating_point:
        colors = [tuple(v / 255 for v in c) for c in colors]
    return colors


def _draw_class() -> Any:
    """Pillow's ImageDraw with a dashed outline for rotated boxes (8 coordinates): the first
    edge dashed (5 pixels on, 5 off), the others solid, the inside filled as a polygon."""
    base: Any = _pil().ImageDraw.ImageDraw

    class _ImageDrawTV(base):
        def oriented_rectangle(self, xy: list[float], fill: Any = None, outline: Any = None,
                               width: int = 1) -> None:
            self.dashed_line(((xy[0], xy[1]), (xy[2], xy[3])), width=width, fill=outline)
            for i in range(2, len(xy), 2):
                self.line(((xy[i], xy[i + 1]), (xy[(i + 2) % len(xy)], xy[(i + 3) % len(xy)])),
                          width=width, fill=outline)
            self.polygon(xy, fill=fill, outline=None, width=0)

        def dashed_line(self, xy: Any, fill: Any = None, width: int = 0, joint: Any = None,
                        dash_length: float = 5, space_length: float = 5) -> None:
            drawing = True
            for (x1, y1), (x2, y2) in zip(xy[:-1], xy[1:], strict=False):
                left = ((x2 - x1) ** 2 + (y2 - y1) ** 2) ** 0.5
                angle = math.atan2(y2 - y1, x2 - x1)
                while left > 0:
                    step = min(left, dash_length if drawing else space_length)
                    end_x = x1 + math.cos(angle) * step
                    end_y = y1 + math.sin(angle) * step
                    if drawing:
                        self.line([(x1, y1), (end_x, end_y)], fill, width, joint)
                    left -= step
                    x1, y1 = end_x, end_y
                    drawing = not drawing

    return _ImageDrawTV


def _check_image(image: Any, not_a_tensor: str = "The image must be a tensor",
                 channels: tuple[int, ...] = (3,),
                 bad_channels: str = "Pass an RGB image. Other Image formats are not supported"
                 ) -> None:
    """The checks of the image the boxes, masks and keypoints are drawn on: one (C, H, W)
    tensor, uint8 or floating, with C in ``channels``; ``not_a_tensor`` and ``bad_channels``
    are the drawing function's messages."""
    if not isinstance(image, Tensor):
        raise TypeError(f"{not_a_tensor}, got {_torch_type(image)}")
    if not (image.dtype == torch.uint8 or image.is_floating_point()):
        raise ValueError(f"The image dtype must be uint8 or float, got {image.dtype}")
    if image.dim() != 3:
        raise ValueError("Pass individual images, not batches")
    if image.size(0) not in channels:
        raise ValueError(bad_channels)


def draw_bounding_boxes(image: Tensor, boxes: Tensor, labels: list[str] | None = None,
                        colors: Any = None, fill: bool | None = False, width: int = 1,
                        font: str | None = None, font_size: int | None = None,
                        label_colors: Any = None, label_background_colors: Any = None,
                        fill_labels: bool = False) -> Tensor:
    """Draw boxes on an image of shape ``(C, H, W)`` (C 1 or 3, uint8 or float in [0, 1]).

    Args:
        boxes: ``(N, 4)`` as ``(xmin, ymin, xmax, ymax)`` or ``(N, 8)`` corners of rotated
            boxes, in pixels (truncated to integers).
        labels: one string per box, written inside its top-left corner.
        colors: a color or a list of colors (Pillow names or RGB triples); default a palette.
        fill: fill the boxes (with the color at alpha 100).
        width: the outline's width.
        font, font_size: a TrueType font file and its size (default Pillow's font).
        label_colors, label_background_colors, fill_labels: the labels' text color, and the
            color of a box drawn behind them when ``fill_labels``.

    Returns:
        The image with the boxes, in the input's dtype (3 channels).
    """
    ImageFont = _pil().ImageFont

    with torch.no_grad():
        _check_image(image, "Tensor expected", (1, 3),
                     "Only grayscale and RGB images are supported")
        if boxes.shape[-1] == 4 and ((boxes[:, 0] > boxes[:, 2]).any()
                                     or (boxes[:, 1] > boxes[:, 3]).any()):
            raise ValueError("Boxes need to be in (xmin, ymin, xmax, ymax) format. Use "
                             "torchvision.ops.box_convert to convert them")
        num_boxes = boxes.shape[0]
        if num_boxes == 0:
            warnings.warn("boxes doesn't contain any box. No box was drawn", stacklevel=2)
            return image
        if labels is None:
            labels = [None] * num_boxes  # type: ignore[list-item]
        elif len(labels) != num_boxes:
            raise ValueError(f"Number of boxes ({num_boxes}) and labels ({len(labels)}) "
                             "mismatch. Please specify labels for each box.")

        colors = _parse_colors(colors, num_objects=num_boxes)
        if label_colors or fill_labels:
            text_colors = _parse_colors(label_colors if label_colors else "black",
                                        num_objects=num_boxes)
        else:
            text_colors = list(colors)
        if fill_labels and label_background_colors:
            back_colors = _parse_colors(label_background_colors, num_objects=num_boxes)
        else:
            back_colors = list(colors)

        if font is None:
            if font_size is not None:
                warnings.warn("Argument 'font_size' will be ignored since 'font' is not set.",
                              stacklevel=2)
            text_font = ImageFont.load_default()
        else:
            text_font = ImageFont.truetype(font=font, size=font_size or 10)

        if image.size(0) == 1:
            image = torch.tile(image, (3, 1, 1))
        original_dtype = image.dtype
        if original_dtype.is_floating_point:
            image = _to_uint8(image)
        canvas = _to_pil(image)
        draw = _draw_class()(canvas, "RGBA" if fill else None)
        for box, color, label, text_color, back_color in zip(
                boxes.to(torch.int64).tolist(), colors, labels, text_colors, back_colors,
                strict=False):
            shape = draw.oriented_rectangle if len(box) > 4 else draw.rectangle
            shape(box, width=width, outline=color, fill=color + (100,) if fill else None)
            if label is not None:
                margin = width + 1
                corner = (box[0] + margin, box[1] + margin)
                if fill_labels:
                    left, top, right, bottom = draw.textbbox(corner, label, font=text_font)
                    draw.rectangle((left - 1, top - 1, right + 1, bottom + 1), fill=back_color)
                draw.text(corner, label, fill=text_color, font=text_font)
        out = _from_pil(canvas)
        if original_dtype.is_floating_point:
            out = _from_uint8(out, original_dtype)
        return out


def _to_pil(image: Tensor) -> Any:
    """A uint8 ``(3, H, W)`` tensor as a PIL RGB image."""
    Image = _pil().Image

    return Image.fromarray(np.ascontiguousarray(image.permute(1, 2, 0).numpy()))


def _from_pil(picture: Any) -> Tensor:
    """A PIL RGB image as a uint8 ``(3, H, W)`` tensor."""
    return torch.from_numpy(np.array(picture, copy=True)).permute(2, 0, 1)


def draw_segmentation_masks(image: Tensor, masks: Tensor, alpha: float = 0.8,
                            colors: Any = None) -> Tensor:
    """Blend boolean masks ``(N, H, W)`` (or one ``(H, W)``) onto an RGB image ``(3, H, W)``
    (uint8, or float in [0, 1]): ``image * (1 - alpha) + painted * alpha``, where ``painted``
    has each mask's color on its pixels and black where masks overlap."""
    with torch.no_grad():
        _check_image(image)
        if masks.ndim == 2:
            masks = masks[None, :, :]
        if masks.ndim != 3:
            raise ValueError("masks must be of shape (H, W) or (batch_size, H, W)")
        if masks.dtype != torch.bool:
            raise ValueError(f"The masks must be of dtype bool. Got {masks.dtype}")
        if masks.shape[-2:] != image.shape[-2:]:
            raise ValueError("The image and the masks must have the same height and width")
        num_masks = masks.size()[0]
        overlapping = masks.sum(dim=0) > 1
        if num_masks == 0:
            warnings.warn("masks doesn't contain any mask. No mask was drawn", stacklevel=2)
            return image
        dtype = image.dtype
        palette = [torch.tensor(c, dtype=dtype)
                   for c in _parse_colors(colors, num_objects=num_masks, dtype=dtype)]
        painted = image.detach().clone()
        for mask, color in zip(masks, palette, strict=False):
            painted[:, mask] = color[:, None]
        painted[:, overlapping] = 0
        return (image * (1 - alpha) + painted * alpha).to(dtype)


def draw_keypoints(image: Tensor, keypoints: Tensor,
                   connectivity: list[tuple[int, int]] | None = None, colors: Any = None,
                   radius: int = 2, width: int = 3, visibility: Tensor | None = None) -> Tensor:
    """Draw keypoints ``(num_instances, K, 2)`` (x, y) as discs of ``radius`` on an RGB image
    ``(3, H, W)`` (uint8, or float in [0, 1]), and the ``connectivity`` pairs as lines of
    ``width``; a keypoint whose ``visibility`` is False is skipped with its lines."""
    Image = _pil().Image
    ImageDraw = _pil().ImageDraw

    with torch.no_grad():
        _check_image(image)
        if keypoints.ndim != 3:
            raise ValueError("keypoints must be of shape (num_instances, K, 2)")
        if visibility is None:
            visibility = torch.ones(keypoints.shape[:-1], dtype=torch.bool)
        if visibility.ndim == 3:  # (num_instances, K, 1), as pred.split([2, 1], -1) gives
            visibility = visibility.squeeze(-1)
        if visibility.ndim != 2:
            raise ValueError(f"visibility must be of shape (num_instances, K). Got "
                             f"ndim={visibility.ndim}")
        if visibility.shape != keypoints.shape[:-1]:
            raise ValueError("keypoints and visibility must have the same dimensionality for "
                             "num_instances and K. Got "
                             f"visibility.shape={_torch_size(visibility.shape)} and "
                             f"keypoints.shape={_torch_size(keypoints.shape)}")
        original_dtype = image.dtype
        if original_dtype.is_floating_point:
            image = _to_uint8(image)
        canvas = Image.fromarray(image.permute(1, 2, 0).numpy())
        draw = ImageDraw.Draw(canvas)
        for points, seen in zip(keypoints.to(torch.int64).tolist(),
                                visibility.bool().tolist(), strict=False):
            for (x, y), visible in zip(points, seen, strict=False):
                if visible:
                    draw.ellipse([x - radius, y - radius, x + radius, y + radius], fill=colors,
                                 outline=None, width=0)
            for start, end in connectivity or ():
                if seen[start] and seen[end]:
                    draw.line(((points[start][0], points[start][1]),
                               (points[end][0], points[end][1])), width=width)
        out = torch.from_numpy(np.array(canvas)).permute(2, 0, 1)
        if original_dtype.is_floating_point:
            out = _from_uint8(out, original_dtype)
        return out


def _torch_size(shape: Any) -> str:
    return repr(shape).replace("tapegrad.", "torch.")


# -- optical flow -------------------------------------------------------------------------------

def flow_to_image(flow: Tensor) -> Tensor:
    """An optical flow ``(2, H, W)`` or ``(N, 2, H, W)`` (float32) as uint8 RGB images: the
    direction picks a hue on Middlebury's color wheel, the length (relative to the largest in
    the batch) the saturation."""
    with torch.no_grad():
        if flow.dtype != torch.float:
            raise ValueError(f"Flow should be of dtype torch.float, got {flow.dtype}.")
        orig_shape = flow.shape
        if flow.ndim == 3:
            flow = flow[None]
        if flow.ndim != 4 or flow.shape[1] != 2:
            raise ValueError("Input flow should have shape (2, H, W) or (N, 2, H, W), got "
                             f"{_torch_size(orig_shape)}.")
        max_norm = torch.sum(flow.pow(2), dim=1).sqrt().max()
        epsilon = torch.finfo(flow.dtype).eps
        img = _normalized_flow_to_image(flow / (max_norm + epsilon))
        return img[0] if len(orig_shape) == 3 else img


def _normalized_flow_to_image(normalized_flow: Tensor) -> Tensor:
    """Flow vectors of length at most 1, ``(N, 2, H, W)``, as uint8 ``(N, 3, H, W)``."""
    n, _, h, w = normalized_flow.shape
    image = torch.zeros((n, 3, h, w), dtype=torch.uint8)
    wheel = _make_colorwheel()
    num_cols = wheel.shape[0]
    norm = torch.sum(normalized_flow.pow(2), dim=1).sqrt()
    angle = torch.atan2(-normalized_flow[:, 1, :, :], -normalized_flow[:, 0, :, :]) / math.pi
    position = (angle + 1) / 2 * (num_cols - 1)
    k0 = torch.floor(position).to(torch.long)
    k1 = k0 + 1
    k1[k1 == num_cols] = 0
    frac = position - k0
    for c in range(wheel.shape[1]):
        column = wheel[:, c]
        col = (1 - frac) * (column[k0] / 255.0) + frac * (column[k1] / 255.0)
        col = 1 - norm * (1 - col)  # short vectors fade to white
        image[:, c, :, :] = torch.floor(255 * col)
    return image


def _make_colorwheel() -> Tensor:
    """The 55 colors of Baker et al.'s wheel (ICCV 2007), red -> yellow -> green -> cyan ->
    blue -> magenta -> red, as a float ``(55, 3)`` tensor of 0..255 values."""
    ramps = [(15, 0, 1, False), (6, 1, 0, True), (4, 1, 2, False), (11, 2, 1, True),
             (13, 2, 0, False), (6, 0, 2, True)]  # (length, full channel, ramped, falling)
    wheel = torch.zeros((sum(r[0] for r in ramps), 3))
    start = 0
    for length, full, ramped, falling in ramps:
        ramp = torch.floor(255 * torch.arange(0, length) / length)
        wheel[start:start + length, full] = 255
        wheel[start:start + length, ramped] = 255 - ramp if falling else ramp
        start += length
    return wheel
