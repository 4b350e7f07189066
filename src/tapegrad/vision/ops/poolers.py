"""Multi-scale RoI Align (Lin et al. 2017, Feature Pyramid Networks): each box is pooled from
the pyramid level that matches its size, ``k = floor(4 + log2(sqrt(area) / 224))`` clamped to
the levels present, as the detection heads of Faster and Mask R-CNN do."""

from ... import cat, floor, full_like, int64, log2, nn, sqrt, tensor, where, zeros
from ... import clamp as _clamp
from ... import float32 as _float32
from ... import strided as _strided
from ..._tensor import Tensor
from .boxes import box_area
from .roi_align import roi_align


class LevelMapper:
    """Assign each box to a pyramid level (``k_min`` to ``k_max``, returned minus ``k_min``):
    a box of ``canonical_scale`` pixels a side goes to ``canonical_level``, one twice as large to
    the next level."""

    def __init__(self, k_min: int, k_max: int, canonical_scale: int = 224,
                 canonical_level: int = 4, eps: float = 1e-6):
        self.k_min = k_min
        self.k_max = k_max
        self.s0 = canonical_scale
        self.lvl0 = canonical_level
        self.eps = eps

    def __call__(self, boxlists: list[Tensor]) -> Tensor:
        s = sqrt(cat([box_area(boxlist) for boxlist in boxlists]))
        target_lvls = floor(self.lvl0 + log2(s / self.s0) + tensor(self.eps, dtype=s.dtype))
        target_lvls = _clamp(target_lvls, min=self.k_min, max=self.k_max)
        return (target_lvls.to(int64) - self.k_min).to(int64)


def initLevelMapper(k_min: int, k_max: int, canonical_scale: int = 224,
                    canonical_level: int = 4, eps: float = 1e-6) -> LevelMapper:
    return LevelMapper(k_min, k_max, canonical_scale, canonical_level, eps)


def _convert_to_roi_format(boxes: list[Tensor]) -> Tensor:
    concat_boxes = cat(boxes, dim=0)
    device, dtype = concat_boxes.device, concat_boxes.dtype
    ids = cat([full_like(b[:, :1], i, dtype=dtype, layout=_strided, device=device)
               for i, b in enumerate(boxes)], dim=0)
    return cat([ids, concat_boxes], dim=1)


def _infer_scale(feature: Tensor, original_size: tuple[int, ...] | list[int]) -> float:
    """The feature map's scale relative to the image, rounded to a power of 2."""
    size = feature.shape[-2:]
    possible_scales: list[float] = []
    for s1, s2 in zip(size, original_size, strict=False):
        approx_scale = float(s1) / float(s2)
        scale = 2 ** float(tensor(approx_scale).log2().round())
        possible_scales.append(scale)
    return possible_scales[0]


def _setup_scales(features: list[Tensor], image_shapes: list[tuple[int, int]],
                  canonical_scale: int, canonical_level: int) -> tuple[list[float], LevelMapper]:
    if not image_shapes:
        raise ValueError("images list should not be empty")
    max_x = 0
    max_y = 0
    for shape in image_shapes:
        max_x = max(shape[0], max_x)
        max_y = max(shape[1], max_y)
    original_input_shape = (max_x, max_y)
    scales = [_infer_scale(feat, original_input_shape) for feat in features]
    # the levels are the negated log2 of the scales
    lvl_min = -log2(tensor(scales[0], dtype=_float32)).item()
    lvl_max = -log2(tensor(scales[-1], dtype=_float32)).item()
    map_levels = initLevelMapper(int(lvl_min), int(lvl_max), canonical_scale=canonical_scale,
                                 canonical_level=canonical_level)
    return scales, map_levels


def _filter_input(x: dict[str, Tensor], featmap_names: list[str]) -> list[Tensor]:
    return [v for k, v in x.items() if k in featmap_names]


def _multiscale_roi_align(x_filtered: list[Tensor], boxes: list[Tensor], output_size: tuple,
                          sampling_ratio: int, scales: list[float] | None,
                          mapper: LevelMapper | None) -> Tensor:
    if scales is None or mapper is None:
        raise ValueError("scales and mapper should not be None")
    num_levels = len(x_filtered)
    rois = _convert_to_roi_format(boxes)
    if num_levels == 1:
        return roi_align(x_filtered[0], rois, output_size=output_size, spatial_scale=scales[0],
                         sampling_ratio=sampling_ratio)
    levels = mapper(boxes)
    num_rois = len(rois)
    num_channels = x_filtered[0].shape[1]
    dtype, device = x_filtered[0].dtype, x_filtered[0].device
    result = zeros((num_rois, num_channels) + tuple(output_size), dtype=dtype, device=device)
    for level, (per_level_feature, scale) in enumerate(zip(x_filtered, scales, strict=False)):
        idx_in_level = where(levels == level)[0]
        rois_per_level = rois[idx_in_level]
        result_idx_in_level = roi_align(per_level_feature, rois_per_level,
                                        output_size=output_size, spatial_scale=scale,
                                        sampling_ratio=sampling_ratio)
        result[idx_in_level] = result_idx_in_level.to(result.dtype)
    return result


class MultiScaleRoIAlign(nn.Module):
    """RoI Align over the feature maps named ``featmap_names`` of an OrderedDict of pyramid
    levels, each box from the level matching its size. The levels' scales are inferred, on the
    first call, from the maps' sizes relative to the largest image in ``image_shapes``."""

    __annotations__ = {"scales": list[float] | None, "map_levels": LevelMapper | None}

    def __init__(self, featmap_names: list[str], output_size: int | tuple[int] | list[int],
                 sampling_ratio: int, *, canonical_scale: int = 224, canonical_level: int = 4):
        super().__init__()
        size = (output_size, output_size) if isinstance(output_size, int) else output_size
        self.featmap_names = featmap_names
        self.sampling_ratio = sampling_ratio
        self.output_size = tuple(size)
        self.scales: list[float] | None = None
        self.map_levels: LevelMapper | None = None
        self.canonical_scale = canonical_scale
        self.canonical_level = canonical_level

    def forward(self, x: dict[str, Tensor], boxes: list[Tensor],
                image_shapes: list[tuple[int, int]]) -> Tensor:
        x_filtered = _filter_input(x, self.featmap_names)
        if self.scales is None or self.map_levels is None:
            self.scales, self.map_levels = _setup_scales(x_filtered, image_shapes,
                                                         self.canonical_scale,
                                                         self.canonical_level)
        return _multiscale_roi_align(x_filtered, boxes, self.output_size, self.sampling_ratio,
                                     self.scales, self.map_levels)

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__}(featmap_names={self.featmap_names}, "
                f"output_size={self.output_size}, sampling_ratio={self.sampling_ratio})")
