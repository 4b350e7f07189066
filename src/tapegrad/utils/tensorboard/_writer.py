"""``SummaryWriter``: log scalars, histograms, images, text, hyperparameters and the model's graph.

    SummaryWriter(log_dir)                 log_dir default: runs/<Mon>DD_HH-MM-SS_<hostname>
      .file_writer: FileWriter(log_dir)    one event file, events.out.tfevents.<time>.<host>...
      .all_writers: {dir: FileWriter}      add_scalars writes each curve to <log_dir>/<tag>_<key>
    add_xxx(tag, value, global_step)  ->  a Summary proto (_summary.py, _graph.py)
                                      ->  Event(wall_time, step, summary) -> EventFileWriter

``EventFileWriter`` (from the ``tensorboard`` package) appends the events to the file as
TFRecords from a background thread: ``flush()`` writes what is pending, ``close()`` ends the
file. ``purge_step=T`` starts the file with a session-start event at step T, which tells
TensorBoard to hide the events at steps >= T left by a run that crashed.
"""

from __future__ import annotations

import os
import socket
import time
from datetime import datetime
from typing import Any

from google.protobuf import text_format
from tensorboard.compat.proto.event_pb2 import Event, SessionLog, TaggedRunMetadata
from tensorboard.plugins.projector.projector_config_pb2 import ProjectorConfig
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from . import _embedding, _summary
from ._graph import graph
from ._image import figure_to_image


class FileWriter:
    """Writes Event protocol buffers to one event file in ``log_dir`` (asynchronously).

    Args:
        log_dir: the directory of the event file.
        max_queue: pending events that force a write (default 10).
        flush_secs: seconds between writes of pending events (default 120).
        filename_suffix: appended to the event file's name.
    """

    def __init__(self, log_dir: Any, max_queue: int = 10, flush_secs: int = 120,
                 filename_suffix: str = "") -> None:
        self.event_writer = EventFileWriter(str(log_dir), max_queue, flush_secs, filename_suffix)

    def get_logdir(self) -> str:
        """The directory the event file is written in."""
        return self.event_writer.get_logdir()

    def add_event(self, event: Event, step: int | None = None,
                  walltime: float | None = None) -> None:
        event.wall_time = time.time() if walltime is None else walltime
        if step is not None:
            event.step = int(step)
        self.event_writer.add_event(event)

    def add_summary(self, summary: Any, global_step: int | None = None,
                    walltime: float | None = None) -> None:
        self.add_event(Event(summary=summary), global_step, walltime)

    def add_graph(self, graph_profile: Any, walltime: float | None = None) -> None:
        """The GraphDef, then its run metadata (tagged 'step1', as torch writes it)."""
        graph_def, stepstats = graph_profile
        self.add_event(Event(graph_def=graph_def.SerializeToString()), None, walltime)
        tagged = TaggedRunMetadata(tag="step1", run_metadata=stepstats.SerializeToString())
        self.add_event(Event(tagged_run_metadata=tagged), None, walltime)

    def flush(self) -> None:
        self.event_writer.flush()

    def close(self) -> None:
        self.event_writer.close()

    def reopen(self) -> None:
        """After ``close()``: continue in a new event file in the same directory."""
        self.event_writer.reopen()


class SummaryWriter:
    """Writes entries to event files in ``log_dir``, for TensorBoard.

    Args:
        log_dir: where to write (default ``runs/CURRENT_DATETIME_HOSTNAME``).
        comment: appended to the default ``log_dir`` (ignored when ``log_dir`` is given).
        purge_step: hide events at steps >= ``purge_step`` from an earlier run (restart).
        max_queue: pending events that force a write (default 10).
        flush_secs: seconds between writes of pending events (default 120).
        filename_suffix: appended to the event files' names.

    Example:
        >>> import tempfile
        >>> from tapegrad.utils.tensorboard import SummaryWriter
        >>> with SummaryWriter(tempfile.mkdtemp()) as writer:
        ...     for step in range(3):
        ...         writer.add_scalar("loss", 1.0 / (step + 1), step)
    """

    def __init__(self, log_dir: Any = None, comment: str = "", purge_step: int | None = None,
                 max_queue: int = 10, flush_secs: int = 120, filename_suffix: str = "") -> None:
        if not log_dir:
            now = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", now + "_" + socket.gethostname() + comment)
        self.log_dir = log_dir
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        self.file_writer: FileWriter | None = None
        self.all_writers: dict[str, FileWriter] | None = None
        self._get_file_writer()
        self.default_bins = _summary.default_bins()

    def _get_file_writer(self) -> FileWriter:
        """The main FileWriter, made again after ``close()``."""
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = FileWriter(self.log_dir, self.max_queue, self.flush_secs,
                                          self.filename_suffix)
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                step = self.purge_step
                self.file_writer.add_event(Event(step=step, file_version="brain.Event:2"))
                self.file_writer.add_event(
                    Event(step=step, session_log=SessionLog(status=SessionLog.START)))
                self.purge_step = None
        return self.file_writer

    def get_logdir(self) -> str:
        """The directory event files are written in."""
        return self.log_dir

    def add_hparams(self, hparam_dict: dict[str, Any], metric_dict: dict[str, Any],
                    hparam_domain_discrete: dict[str, list[Any]] | None = None,
                    run_name: str | None = None, global_step: int | None = None) -> None:
        """Hyperparameters and their metrics, for the HPARAMS tab: written to a sub-run
        ``log_dir/run_name`` (default: the current time), with each metric as a scalar."""
        if type(hparam_dict) is not dict or type(metric_dict) is not dict:
            raise TypeError("hparam_dict and metric_dict should be dictionary.")
        experiment, start, end = _summary.hparams(hparam_dict, metric_dict,
                                                  hparam_domain_discrete)
        if not run_name:
            run_name = str(time.time())
        logdir = os.path.join(self._get_file_writer().get_logdir(), run_name)
        with SummaryWriter(log_dir=logdir) as w_hp:
            assert w_hp.file_writer is not None
            for summary in (experiment, start, end):
                w_hp.file_writer.add_summary(summary, global_step)
            for k, v in metric_dict.items():
                w_hp.add_scalar(k, v, global_step)

    def add_scalar(self, tag: str, scalar_value: Any, global_step: int | None = None,
                   walltime: float | None = None, new_style: bool = False,
                   double_precision: bool = False) -> None:
        """One value of the curve ``tag`` at ``global_step``."""
        summary = _summary.scalar(tag, scalar_value, new_style=new_style,
                                  double_precision=double_precision)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_scalars(self, main_tag: str, tag_scalar_dict: dict[str, Any],
                    global_step: int | None = None, walltime: float | None = None) -> None:
        """Several curves in one chart: each key is written, under ``main_tag``, to its own
        run directory ``log_dir/<main_tag>_<key>``."""
        walltime = time.time() if walltime is None else walltime
        logdir = self._get_file_writer().get_logdir()
        assert self.all_writers is not None
        for tag, value in tag_scalar_dict.items():
            run = logdir + "/" + main_tag.replace("/", "_") + "_" + tag
            if run not in self.all_writers:
                self.all_writers[run] = FileWriter(run, self.max_queue, self.flush_secs,
                                                   self.filename_suffix)
            self.all_writers[run].add_summary(_summary.scalar(main_tag, value), global_step,
                                              walltime)

    def add_tensor(self, tag: str, tensor: Any, global_step: int | None = None,
                   walltime: float | None = None) -> None:
        """A whole tensor, with its dtype and shape."""
        self._get_file_writer().add_summary(_summary.tensor_proto(tag, tensor), global_step,
                                            walltime)

    def add_histogram(self, tag: str, values: Any, global_step: int | None = None,
                      bins: Any = "tensorflow", walltime: float | None = None,
                      max_bins: int | None = None) -> None:
        """A histogram of ``values``; ``bins`` as NumPy's, or 'tensorflow' (the default) for
        TensorFlow's exponential buckets."""
        if isinstance(bins, str) and bins == "tensorflow":
            bins = self.default_bins
        self._get_file_writer().add_summary(
            _summary.histogram(tag, values, bins, max_bins=max_bins), global_step, walltime)

    def add_histogram_raw(self, tag: str, min: float, max: float, num: int, sum: float,
                          sum_squares: float, bucket_limits: Any, bucket_counts: Any,
                          global_step: int | None = None,
                          walltime: float | None = None) -> None:
        """A histogram given by its statistics and buckets."""
        if len(bucket_limits) != len(bucket_counts):
            raise ValueError("len(bucket_limits) != len(bucket_counts), see the document.")
        self._get_file_writer().add_summary(
            _summary.histogram_raw(tag, min, max, num, sum, sum_squares, bucket_limits,
                                   bucket_counts), global_step, walltime)

    def add_image(self, tag: str, img_tensor: Any, global_step: int | None = None,
                  walltime: float | None = None, dataformats: str = "CHW") -> None:
        """An image: float values in [0, 1] or uint8 in [0, 255], laid out as ``dataformats``
        ('CHW', 'HWC', 'HW')."""
        self._get_file_writer().add_summary(
            _summary.image(tag, img_tensor, dataformats=dataformats), global_step, walltime)

    def add_images(self, tag: str, img_tensor: Any, global_step: int | None = None,
                   walltime: float | None = None, dataformats: str = "NCHW") -> None:
        """A batch of images, shown as one grid of up to 8 per row."""
        self._get_file_writer().add_summary(
            _summary.image(tag, img_tensor, dataformats=dataformats), global_step, walltime)

    def add_figure(self, tag: str, figure: Any, global_step: int | None = None,
                   close: bool = True, walltime: float | None = None) -> None:
        """A matplotlib figure (or a list of them) rendered as an image; needs matplotlib."""
        if isinstance(figure, list):
            self.add_image(tag, figure_to_image(figure, close), global_step, walltime,
                           dataformats="NCHW")
        else:
            self.add_image(tag, figure_to_image(figure, close), global_step, walltime,
                           dataformats="CHW")

    def add_audio(self, tag: str, snd_tensor: Any, global_step: int | None = None,
                  sample_rate: int = 44100, walltime: float | None = None) -> None:
        """A mono sound clip: one dimension of samples in [-1, 1]."""
        self._get_file_writer().add_summary(
            _summary.audio(tag, snd_tensor, sample_rate=sample_rate), global_step, walltime)

    def add_text(self, tag: str, text_string: str, global_step: int | None = None,
                 walltime: float | None = None) -> None:
        """A string (Markdown) for the TEXT tab."""
        self._get_file_writer().add_summary(_summary.text(tag, text_string), global_step,
                                            walltime)

    @staticmethod
    def _encode(rawstr: str) -> str:
        """A tag as a directory name: '%', '/' and '\\' percent-encoded."""
        return rawstr.replace("%", "%25").replace("/", "%2f").replace("\\", "%5c")

    def add_embedding(self, mat: Any, metadata: Any = None, label_img: Any = None,
                      global_step: int | None = None, tag: str = "default",
                      metadata_header: Any = None) -> None:
        """Points for the PROJECTOR tab: ``mat`` (N x D), optional labels (``metadata``, a
        list of N, or of rows under ``metadata_header``) and label images (N x C x H x W)."""
        mat = _summary.make_np(mat)
        if global_step is None:
            global_step = 0
        subdir = f"{str(global_step).zfill(5)}/{self._encode(tag)}"
        save_path = os.path.join(self._get_file_writer().get_logdir(), subdir)
        if os.path.exists(save_path):
            if os.path.isdir(save_path):
                print("warning: Embedding dir exists, did you set global_step for "
                      "add_embedding()?")
            else:
                raise NotADirectoryError(
                    f"Path: `{save_path}` exists, but is a file. Cannot proceed.")
        else:
            os.makedirs(save_path)
        if metadata is not None:
            if mat.shape[0] != len(metadata):
                raise AssertionError("#labels should equal with #data points")
            _embedding.make_tsv(metadata, save_path, metadata_header=metadata_header)
        if label_img is not None:
            if mat.shape[0] != label_img.shape[0]:
                raise AssertionError("#images should equal with #data points")
            _embedding.make_sprite(_summary.make_np(label_img), save_path)
        if mat.ndim != 2:
            raise AssertionError(
                "mat should be 2D, where mat.size(0) is the number of data points")
        _embedding.make_mat(mat, save_path)
        if not hasattr(self, "_projector_config"):
            self._projector_config = ProjectorConfig()
        self._projector_config.embeddings.extend([_embedding.get_embedding_info(
            metadata, label_img, subdir, global_step, tag)])
        _embedding.write_pbtxt(self._get_file_writer().get_logdir(),
                               text_format.MessageToString(self._projector_config))

    def add_pr_curve(self, tag: str, labels: Any, predictions: Any,
                     global_step: int | None = None, num_thresholds: int = 127,
                     weights: Any = None, walltime: float | None = None) -> None:
        """A precision-recall curve: ``labels`` (0/1) against ``predictions`` in [0, 1]."""
        labels, predictions = _summary.make_np(labels), _summary.make_np(predictions)
        self._get_file_writer().add_summary(
            _summary.pr_curve(tag, labels, predictions, num_thresholds, weights), global_step,
            walltime)

    def add_pr_curve_raw(self, tag: str, true_positive_counts: Any, false_positive_counts: Any,
                         true_negative_counts: Any, false_negative_counts: Any, precision: Any,
                         recall: Any, global_step: int | None = None, num_thresholds: int = 127,
                         weights: Any = None, walltime: float | None = None) -> None:
        """A precision-recall curve given by its counts at each threshold."""
        self._get_file_writer().add_summary(
            _summary.pr_curve_raw(tag, true_positive_counts, false_positive_counts,
                                  true_negative_counts, false_negative_counts, precision,
                                  recall, num_thresholds, weights), global_step, walltime)

    def add_custom_scalars_multilinechart(self, tags: list[str], category: str = "default",
                                          title: str = "untitled") -> None:
        """A custom chart drawing the scalars ``tags`` together."""
        self._get_file_writer().add_summary(
            _summary.custom_scalars({category: {title: ["Multiline", tags]}}))

    def add_custom_scalars_marginchart(self, tags: list[str], category: str = "default",
                                       title: str = "untitled") -> None:
        """A custom chart of a value between a lower and an upper scalar (three tags)."""
        if len(tags) != 3:
            raise AssertionError(f"Expected 3 tags, got {len(tags)}.")
        self._get_file_writer().add_summary(
            _summary.custom_scalars({category: {title: ["Margin", tags]}}))

    def add_custom_scalars(self, layout: dict[str, dict[str, list[Any]]]) -> None:
        """The layout of the CUSTOM SCALARS tab (see ``_summary.custom_scalars``)."""
        self._get_file_writer().add_summary(_summary.custom_scalars(layout))

    def add_graph(self, model: Any, input_to_model: Any = None, verbose: bool = False,
                  use_strict_trace: bool = True) -> None:
        """The graph of ``model(*input_to_model)``, read from the autograd graph it records
        (see _graph.py); the model runs once, in eval mode."""
        self._get_file_writer().add_graph(graph(model, input_to_model, verbose,
                                                use_strict_trace))

    def flush(self) -> None:
        """Write every pending event to disk."""
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()

    def close(self) -> None:
        """Flush and close every event file (a later ``add_*`` starts a new file)."""
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()
            writer.close()
        self.file_writer = self.all_writers = None

    def __enter__(self) -> SummaryWriter:
        return self

    def __exit__(self, exc_type: Any, exc_val: Any, exc_tb: Any) -> None:
        self.close()
