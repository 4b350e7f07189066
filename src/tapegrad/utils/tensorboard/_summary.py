"""``Summary`` protocol buffers: what one ``add_*`` call of ``SummaryWriter`` records.

Each function turns tensors (tapegrad tensors, NumPy arrays or Python numbers) into the
TensorBoard message a plugin reads::

    scalar     Summary.Value(tag, simple_value)            (new_style: a float tensor, 'scalars')
    histogram  Summary.Value(tag, histo=HistogramProto)    min, max, num, sum, sum of squares,
                                                           right bucket edges and counts
    image      Summary.Value(tag, image=Summary.Image)     PNG, see _image.py
    text       Summary.Value(tag + '/text_summary', a string tensor, plugin 'text')
    hparams    three Summaries for the 'hparams' plugin: the experiment (which hyperparameters
               and metrics exist), this session's values, and the session's end

The contents are torch's, field for field, so TensorBoard shows the same thing.
"""

from __future__ import annotations

import io
import wave
from typing import Any

import numpy as np
from google.protobuf import struct_pb2
from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.plugins.custom_scalar import layout_pb2
from tensorboard.plugins.hparams import metadata as hp_metadata
from tensorboard.plugins.hparams.api_pb2 import (
    DataType,
    Experiment,
    HParamInfo,
    MetricInfo,
    MetricName,
    Status,
)
from tensorboard.plugins.hparams.plugin_data_pb2 import (
    HParamsPluginData,
    SessionEndInfo,
    SessionStartInfo,
)
from tensorboard.plugins.pr_curve.plugin_data_pb2 import PrCurvePluginData
from tensorboard.plugins.text.plugin_data_pb2 import TextPluginData

from ... import _dtype
from ..._tensor import Tensor
from ._image import convert_to_HWC, encode_png, to_uint8


def make_np(x: Any) -> np.ndarray:
    """A NumPy array of a tensor (detached), an array, or a Python/NumPy scalar (shape (1,))."""
    if isinstance(x, np.ndarray):
        return x
    if np.isscalar(x):
        return np.array([x])
    if isinstance(x, Tensor):
        if x.dtype == _dtype.bfloat16:
            x = x.to(_dtype.float16)
        return x.detach().numpy()
    raise NotImplementedError(f"Got {type(x)}, but numpy array or torch tensor are expected.")


def scalar(name: str, tensor: Any, collections: Any = None, new_style: bool = False,
           double_precision: bool = False) -> Summary:
    """One number: a ``simple_value`` (or, ``new_style``, a one-element float tensor)."""
    array = make_np(tensor).squeeze()
    if array.ndim != 0:
        raise AssertionError(
            "Tensor should contain one element (0 dimensions).             Was given size: "
            f"{array.size} and {array.ndim} dimensions."
        )
    value = float(array)
    if not new_style:
        return Summary(value=[Summary.Value(tag=name, simple_value=value)])
    if double_precision:
        proto = TensorProto(double_val=[value], dtype="DT_DOUBLE")
    else:
        proto = TensorProto(float_val=[value], dtype="DT_FLOAT")
    metadata = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="scalars"))
    return Summary(value=[Summary.Value(tag=name, tensor=proto, metadata=metadata)])


def default_bins() -> list[float]:
    """TensorFlow's histogram edges: +-1e-12 growing by 10% up to 1e20, and 0."""
    positive = []
    v = 1e-12
    while v < 1e20:
        positive.append(v)
        v *= 1.1
    return [-b for b in reversed(positive)] + [0] + positive


def make_histogram(values: np.ndarray, bins: Any, max_bins: int | None = None) -> HistogramProto:
    """Counts of ``values`` in ``bins`` (NumPy's ``bins``: edges, a count or a rule name), at most
    ``max_bins`` buckets, trimmed to the non-empty range plus one empty bucket on its left."""
    if values.size == 0:
        raise ValueError("The input has no element.")
    values = values.reshape(-1)
    counts, limits = np.histogram(values, bins=bins)
    if max_bins is not None and len(counts) > max_bins:
        group = len(counts) // max_bins  # merge groups of neighbouring buckets
        if len(counts) % group:
            counts = np.pad(counts, (0, group - len(counts) % group))
        counts = counts.reshape(-1, group).sum(axis=-1)
        limits = np.concatenate([limits[:-1:group], limits[-1:]])
    filled = np.flatnonzero(counts)
    if filled.size == 0:
        raise ValueError("The histogram is empty, please file a bug report.")
    first, last = int(filled[0]), int(filled[-1])
    counts = np.concatenate([[0], counts[first:last + 1]])
    limits = limits[first:last + 2]  # the right edge of every bucket kept
    return HistogramProto(min=values.min(), max=values.max(), num=len(values), sum=values.sum(),
                          sum_squares=values.dot(values), bucket_limit=limits.tolist(),
                          bucket=counts.tolist())


def histogram(name: str, values: Any, bins: Any, max_bins: int | None = None) -> Summary:
    hist = make_histogram(make_np(values).astype(float), bins, max_bins)
    return Summary(value=[Summary.Value(tag=name, histo=hist)])


def histogram_raw(name: str, min: float, max: float, num: int, sum: float, sum_squares: float,
                  bucket_limits: Any, bucket_counts: Any) -> Summary:
    hist = HistogramProto(min=min, max=max, num=num, sum=sum, sum_squares=sum_squares,
                          bucket_limit=bucket_limits, bucket=bucket_counts)
    return Summary(value=[Summary.Value(tag=name, histo=hist)])


def image(tag: str, tensor: Any, rescale: float = 1, dataformats: str = "NCHW") -> Summary:
    """An image (or a grid of a batch) as PNG. Float images are in [0, 1], uint8 in [0, 255]."""
    if rescale != 1:
        raise NotImplementedError("tapegrad's SummaryWriter writes images at their own size")
    hwc = to_uint8(convert_to_HWC(make_np(tensor), dataformats))
    height, width, channels = hwc.shape
    picture = Summary.Image(height=height, width=width, colorspace=channels,
                            encoded_image_string=encode_png(hwc))
    return Summary(value=[Summary.Value(tag=tag, image=picture)])


def text(tag: str, text: str) -> Summary:
    """A string for the text plugin (rendered as Markdown), under ``tag/text_summary``."""
    content = TextPluginData(version=0).SerializeToString()
    metadata = SummaryMetadata(
        plugin_data=SummaryMetadata.PluginData(plugin_name="text", content=content))
    proto = TensorProto(dtype="DT_STRING", string_val=[text.encode(encoding="utf_8")],
                        tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]))
    return Summary(value=[Summary.Value(tag=tag + "/text_summary", metadata=metadata,
                                        tensor=proto)])


def hparams(hparam_dict: Any = None, metric_dict: Any = None,
            hparam_domain_discrete: Any = None) -> tuple[Summary, Summary, Summary]:
    """The hparams plugin's experiment, session-start and session-end summaries."""
    if not isinstance(hparam_dict, dict):
        raise TypeError("parameter: hparam_dict should be a dictionary, nothing logged.")
    if not isinstance(metric_dict, dict):
        raise TypeError("parameter: metric_dict should be a dictionary, nothing logged.")
    domains = hparam_domain_discrete or {}
    if not isinstance(domains, dict):
        raise TypeError(
            "parameter: hparam_domain_discrete should be a dictionary, nothing logged.")
    for k, v in domains.items():
        if (k not in hparam_dict or not isinstance(v, list)
                or not all(isinstance(d, type(hparam_dict[k])) for d in v)):
            raise TypeError(
                f"parameter: hparam_domain_discrete[{k}] should be a list of same type as "
                f"hparam_dict[{k}]."
            )

    def domain(key: str, field: str) -> struct_pb2.ListValue | None:
        if key not in domains:
            return None
        return struct_pb2.ListValue(values=[struct_pb2.Value(**{field: d}) for d in domains[key]])

    infos = []
    start = SessionStartInfo()
    for k, v in hparam_dict.items():
        if v is None:
            continue
        # as torch, a bool is an int here and is logged as a number
        if isinstance(v, (int, float)):
            start.hparams[k].number_value = v
            kind, values = "DATA_TYPE_FLOAT64", domain(k, "number_value")
        elif isinstance(v, str):
            start.hparams[k].string_value = v
            kind, values = "DATA_TYPE_STRING", domain(k, "string_value")
        elif isinstance(v, Tensor):
            start.hparams[k].number_value = make_np(v)[0]
            kind, values = "DATA_TYPE_FLOAT64", None
        else:
            raise ValueError("value should be one of int, float, str, bool, or torch.Tensor")
        infos.append(HParamInfo(name=k, type=DataType.Value(kind), domain_discrete=values))

    def summary(tag: str, **data: Any) -> Summary:
        content = HParamsPluginData(version=hp_metadata.PLUGIN_DATA_VERSION, **data)
        metadata = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(
            plugin_name=hp_metadata.PLUGIN_NAME, content=content.SerializeToString()))
        return Summary(value=[Summary.Value(tag=tag, metadata=metadata)])

    experiment = Experiment(hparam_infos=infos,
                            metric_infos=[MetricInfo(name=MetricName(tag=k)) for k in metric_dict])
    return (
        summary(hp_metadata.EXPERIMENT_TAG, experiment=experiment),
        summary(hp_metadata.SESSION_START_INFO_TAG, session_start_info=start),
        summary(hp_metadata.SESSION_END_INFO_TAG,
                session_end_info=SessionEndInfo(status=Status.Value("STATUS_SUCCESS"))),
    )


def _float_matrix(tag: str, data: np.ndarray, metadata: SummaryMetadata) -> Summary:
    proto = TensorProto(dtype="DT_FLOAT", float_val=data.reshape(-1).tolist(),
                        tensor_shape=TensorShapeProto(
                            dim=[TensorShapeProto.Dim(size=n) for n in data.shape]))
    return Summary(value=[Summary.Value(tag=tag, metadata=metadata, tensor=proto)])


def _pr_metadata(num_thresholds: int) -> SummaryMetadata:
    content = PrCurvePluginData(version=0, num_thresholds=num_thresholds).SerializeToString()
    return SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="pr_curves",
                                                                  content=content))


def compute_curve(labels: np.ndarray, predictions: np.ndarray, num_thresholds: int,
                  weights: Any = None) -> np.ndarray:
    """Rows tp, fp, tn, fn, precision, recall at ``num_thresholds`` thresholds in [0, 1]:
    each prediction falls in bucket floor(p * (n - 1)); a threshold counts the buckets above."""
    weights = 1.0 if weights is None else weights
    buckets = np.int32(np.floor(predictions * (num_thresholds - 1)))
    positive = labels.astype(np.float64)
    edges = (0, num_thresholds - 1)
    tp_buckets, _ = np.histogram(buckets, bins=num_thresholds, range=edges,
                                 weights=positive * weights)
    fp_buckets, _ = np.histogram(buckets, bins=num_thresholds, range=edges,
                                 weights=(1.0 - positive) * weights)
    tp = np.cumsum(tp_buckets[::-1])[::-1]
    fp = np.cumsum(fp_buckets[::-1])[::-1]
    tn = fp[0] - fp
    fn = tp[0] - tp
    precision = tp / np.maximum(1e-7, tp + fp)
    recall = tp / np.maximum(1e-7, tp + fn)
    return np.stack((tp, fp, tn, fn, precision, recall))


def pr_curve(tag: str, labels: Any, predictions: Any, num_thresholds: int = 127,
             weights: Any = None) -> Summary:
    """A precision-recall curve of binary ``labels`` against ``predictions`` in [0, 1]."""
    num_thresholds = min(num_thresholds, 127)
    data = compute_curve(labels, predictions, num_thresholds, weights)
    return _float_matrix(tag, data, _pr_metadata(num_thresholds))


def pr_curve_raw(tag: str, tp: Any, fp: Any, tn: Any, fn: Any, precision: Any, recall: Any,
                 num_thresholds: int = 127, weights: Any = None) -> Summary:
    """A precision-recall curve from its counts."""
    num_thresholds = min(num_thresholds, 127)
    data = np.stack((tp, fp, tn, fn, precision, recall))
    return _float_matrix(tag, data, _pr_metadata(num_thresholds))


def custom_scalars(layout: dict[str, dict[str, list[Any]]]) -> Summary:
    """The custom-scalars plugin's layout: {category: {chart: ['Multiline', tags] or
    ['Margin', [value, lower, upper]]}}."""
    categories = []
    for category, charts in layout.items():
        made = []
        for title, (kind, tags) in charts.items():
            if kind == "Margin":
                if len(tags) != 3:
                    raise AssertionError("len(tags) != 3")
                series = layout_pb2.MarginChartContent.Series(value=tags[0], lower=tags[1],
                                                               upper=tags[2])
                made.append(layout_pb2.Chart(
                    title=title, margin=layout_pb2.MarginChartContent(series=[series])))
            else:
                made.append(layout_pb2.Chart(
                    title=title, multiline=layout_pb2.MultilineChartContent(tag=tags)))
        categories.append(layout_pb2.Category(title=category, chart=made))
    proto = TensorProto(dtype="DT_STRING",
                        string_val=[layout_pb2.Layout(category=categories).SerializeToString()],
                        tensor_shape=TensorShapeProto())
    metadata = SummaryMetadata(
        plugin_data=SummaryMetadata.PluginData(plugin_name="custom_scalars"))
    return Summary(value=[Summary.Value(tag="custom_scalars__config__", tensor=proto,
                                        metadata=metadata)])


def _half_bits(values: np.ndarray) -> list[int]:
    # torch's half_val entries: each value as a float32, its bits read as an int32
    return values.astype(np.float32).reshape(-1).view(np.int32).tolist()


def _complex_parts(values: np.ndarray) -> list[float]:
    return np.stack([values.real, values.imag], -1).reshape(-1).tolist()


def _plain(values: np.ndarray) -> list[Any]:
    return values.reshape(-1).tolist()


# dtype name -> (TensorProto dtype, field, conversion), as torch fills them
_TENSOR_FIELDS: dict[str, tuple[str, str, Any]] = {
    "float16": ("DT_HALF", "half_val", _half_bits),
    "bfloat16": ("DT_BFLOAT16", "half_val", _half_bits),
    "float32": ("DT_FLOAT", "float_val", _plain),
    "float64": ("DT_DOUBLE", "double_val", _plain),
    "int8": ("DT_INT8", "int_val", _plain),
    "uint8": ("DT_UINT8", "uint32_val", _plain),
    "int16": ("DT_INT16", "int_val", _plain),
    "int32": ("DT_INT32", "int_val", _plain),
    "int64": ("DT_INT64", "int64_val", _plain),
    "complex64": ("DT_COMPLEX64", "scomplex_val", _complex_parts),
    "complex128": ("DT_COMPLEX128", "dcomplex_val", _complex_parts),
    "bool": ("DT_BOOL", "bool_val", _plain),
}


def tensor_proto(tag: str, tensor: Tensor) -> Summary:
    """A whole tensor (its dtype, shape and values) for the 'tensor' plugin."""
    if tensor.numel() * tensor.element_size() >= 1 << 31:
        raise ValueError("tensor is bigger than protocol buffer's hard limit of 2GB in size")
    name = str(tensor.dtype).rsplit(".", 1)[-1]
    if name not in _TENSOR_FIELDS:
        raise ValueError(f"{tag} has unsupported tensor dtype {tensor.dtype}")
    kind, field, convert = _TENSOR_FIELDS[name]
    values = tensor.detach()
    if name == "bfloat16":
        values = values.to(_dtype.float32)
    shape = TensorShapeProto(dim=[TensorShapeProto.Dim(size=n) for n in tensor.shape])
    proto = TensorProto(dtype=kind, tensor_shape=shape, **{field: convert(values.numpy())})
    metadata = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="tensor"))
    return Summary(value=[Summary.Value(tag=tag, metadata=metadata, tensor=proto)])


def audio(tag: str, tensor: Any, sample_rate: int = 44100) -> Summary:
    """A mono clip (values in [-1, 1], clipped with a warning) as 16-bit WAV."""
    samples = make_np(tensor).squeeze()
    if abs(samples).max() > 1:
        print("warning: audio amplitude out of range, auto clipped.")
        samples = samples.clip(-1, 1)
    if samples.ndim != 1:
        raise AssertionError("input tensor should be 1 dimensional.")
    pcm = (samples * np.iinfo(np.int16).max).astype("<i2")
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(sample_rate)
        wav.writeframes(pcm.tobytes())
    clip = Summary.Audio(sample_rate=sample_rate, num_channels=1, length_frames=pcm.shape[-1],
                         encoded_audio_string=buffer.getvalue(), content_type="audio/wav")
    return Summary(value=[Summary.Value(tag=tag, audio=clip)])
