"""``add_embedding``: the files of TensorBoard's PROJECTOR tab.

    log_dir/projector_config.pbtxt            one EmbeddingInfo per add_embedding call
    log_dir/<step, 5 digits>/<tag>/tensors.tsv    the vectors, one row per point
                                  metadata.tsv   labels (with a header row when columns)
                                  sprite.png     the label images, tiled in a square
"""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np
from tensorboard.plugins.projector.projector_config_pb2 import EmbeddingInfo

from ._image import encode_png, make_grid


def make_tsv(metadata: list[Any], save_path: str, metadata_header: Any = None) -> None:
    if not metadata_header:
        rows = [str(x) for x in metadata]
    else:
        if len(metadata_header) != len(metadata[0]):
            raise AssertionError(
                "len of header must be equal to the number of columns in metadata")
        rows = ["\t".join(str(e) for e in row) for row in [metadata_header] + list(metadata)]
    with open(os.path.join(save_path, "metadata.tsv"), "wb") as f:
        f.write(("\n".join(rows) + "\n").encode("utf_8"))


def make_sprite(label_img: np.ndarray, save_path: str) -> None:
    """The label images (NCHW, values in [0, 1]) in a grid padded to a square."""
    ncols = math.ceil(label_img.shape[0] ** 0.5)
    grid = make_grid(label_img, ncols=ncols)
    side = grid.shape[2]
    square = np.zeros((side, side, 3))
    square[:grid.shape[1]] = grid.transpose(1, 2, 0)
    with open(os.path.join(save_path, "sprite.png"), "wb") as f:
        f.write(encode_png((square * 255).clip(0, 255).astype(np.uint8)))


def make_mat(mat: np.ndarray, save_path: str) -> None:
    with open(os.path.join(save_path, "tensors.tsv"), "wb") as f:
        for row in mat:
            f.write(("\t".join(str(v) for v in row.tolist()) + "\n").encode("utf_8"))


def get_embedding_info(metadata: Any, label_img: Any, subdir: str, global_step: int,
                       tag: str) -> EmbeddingInfo:
    info = EmbeddingInfo()
    info.tensor_name = f"{tag}:{str(global_step).zfill(5)}"
    info.tensor_path = os.path.join(subdir, "tensors.tsv")
    if metadata is not None:
        info.metadata_path = os.path.join(subdir, "metadata.tsv")
    if label_img is not None:
        info.sprite.image_path = os.path.join(subdir, "sprite.png")
        info.sprite.single_image_dim.extend([label_img.shape[3], label_img.shape[2]])
    return info


def write_pbtxt(save_path: str, contents: str) -> None:
    with open(os.path.join(save_path, "projector_config.pbtxt"), "wb") as f:
        f.write(contents.encode("utf_8"))
