"""``DatasetFolder`` and ``ImageFolder``: a dataset from a folder of class folders.

    root/dog/xxx.png        classes = ['cat', 'dog'] (the sub-folder names, sorted)
    root/dog/nested/xxz.png class_to_idx = {'cat': 0, 'dog': 1}
    root/cat/123.png        samples = [(path, class index), ...] (sorted, sub-folders walked)

A file counts when its name ends with one of ``extensions`` (case-insensitive) or, instead,
when ``is_valid_file(path)`` says so. ``loader(path)`` reads a sample; ``ImageFolder``'s
default opens it with Pillow and converts it to RGB.
"""

from __future__ import annotations

import os
import os.path
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import get_image_backend
from .vision import VisionDataset, _transform_pair

__all__ = ["DatasetFolder", "ImageFolder", "IMG_EXTENSIONS", "default_loader", "find_classes",
           "has_file_allowed_extension", "is_image_file", "make_dataset", "pil_loader"]

IMG_EXTENSIONS = (".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp")


def has_file_allowed_extension(filename: str, extensions: str | tuple[str, ...]) -> bool:
    """True if ``filename`` ends (case-insensitively) with one of ``extensions``."""
    return filename.lower().endswith(extensions if isinstance(extensions, str)
                                     else tuple(extensions))


def is_image_file(filename: str) -> bool:
    """True if ``filename`` has one of the image extensions ImageFolder reads."""
    return has_file_allowed_extension(filename, IMG_EXTENSIONS)


def find_classes(directory: str | Path) -> tuple[list[str], dict[str, int]]:
    """The sorted names of the folders in ``directory``, and each one's index."""
    classes = sorted(entry.name for entry in os.scandir(directory) if entry.is_dir())
    if not classes:
        raise FileNotFoundError(f"Couldn't find any class folder in {directory}.")
    return classes, {name: i for i, name in enumerate(classes)}


def make_dataset(directory: str | Path, class_to_idx: dict[str, int] | None = None,
                 extensions: str | tuple[str, ...] | None = None,
                 is_valid_file: Callable[[str], bool] | None = None,
                 allow_empty: bool = False) -> list[tuple[str, int]]:
    """``[(path, class index), ...]`` for the valid files under each class folder, classes and
    files in sorted order (symbolic links followed).

    Exactly one of ``extensions`` and ``is_valid_file`` must be given. A class without any valid
    file is an error unless ``allow_empty``.
    """
    directory = os.path.expanduser(directory)
    if class_to_idx is None:
        _, class_to_idx = find_classes(directory)
    elif not class_to_idx:
        raise ValueError("'class_to_index' must have at least one entry to collect any samples.")
    if (extensions is None) == (is_valid_file is None):
        raise ValueError("Both extensions and is_valid_file cannot be None or not None at the "
                         "same time")
    if extensions is not None:
        def is_valid_file(path: str) -> bool:
            return has_file_allowed_extension(path, extensions)  # type: ignore[arg-type]
    assert is_valid_file is not None

    instances = []
    found = set()
    for name in sorted(class_to_idx):
        index = class_to_idx[name]
        folder = os.path.join(directory, name)
        if not os.path.isdir(folder):
            continue
        for root, _, fnames in sorted(os.walk(folder, followlinks=True)):
            for fname in sorted(fnames):
                path = os.path.join(root, fname)
                if is_valid_file(path):
                    instances.append((path, index))
                    found.add(name)
    empty = set(class_to_idx) - found
    if empty and not allow_empty:
        message = f"Found no valid file for the classes {', '.join(sorted(empty))}. "
        if extensions is not None:
            shown = extensions if isinstance(extensions, str) else ", ".join(extensions)
            message += f"Supported extensions are: {shown}"
        raise FileNotFoundError(message)
    return instances


class DatasetFolder(VisionDataset):
    """Samples from class folders (see the module's docstring).

    Args:
        root: the folder of class folders.
        loader: reads one sample from its path.
        extensions: the file endings that count (or give ``is_valid_file``).
        transform: applied to the sample.
        target_transform: applied to the class index.
        is_valid_file: decides which files count (or give ``extensions``).
        allow_empty: accept class folders without a valid file.

    Attributes: ``classes``, ``class_to_idx``, ``samples`` ([(path, class index)]), ``targets``.
    Override :meth:`find_classes` or :meth:`make_dataset` for another layout.
    """

    def __init__(self, root: str | Path, loader: Callable[[str], Any],
                 extensions: tuple[str, ...] | None = None, transform: Callable | None = None,
                 target_transform: Callable | None = None,
                 is_valid_file: Callable[[str], bool] | None = None,
                 allow_empty: bool = False) -> None:
        super().__init__(root, transform=transform, target_transform=target_transform)
        classes, class_to_idx = self.find_classes(self.root)
        samples = self.make_dataset(self.root, class_to_idx=class_to_idx, extensions=extensions,
                                    is_valid_file=is_valid_file, allow_empty=allow_empty)
        self.loader = loader
        self.extensions = extensions
        self.classes = classes
        self.class_to_idx = class_to_idx
        self.samples = samples
        self.targets = [s[1] for s in samples]

    @staticmethod
    def make_dataset(directory: str | Path, class_to_idx: dict[str, int],
                     extensions: tuple[str, ...] | None = None,
                     is_valid_file: Callable[[str], bool] | None = None,
                     allow_empty: bool = False) -> list[tuple[str, int]]:
        """The ``(path, class index)`` samples (the module's :func:`make_dataset`; override to
        read them from elsewhere, a zip file for instance)."""
        if class_to_idx is None:
            # the classes must come from find_classes(), which a subclass may override
            raise ValueError("The class_to_idx parameter cannot be None.")
        return make_dataset(directory, class_to_idx, extensions=extensions,
                            is_valid_file=is_valid_file, allow_empty=allow_empty)

    def find_classes(self, directory: str | Path) -> tuple[list[str], dict[str, int]]:
        """The class names (the sub-folders of ``directory``, sorted) and their indices."""
        return find_classes(directory)

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        """``(sample, class index)``, each through its transform when one is set."""
        path, target = self.samples[index]
        sample = self.loader(path)
        return _transform_pair(self.transform, self.target_transform, sample, target)

    def __len__(self) -> int:
        return len(self.samples)


def pil_loader(path: str | Path) -> Any:
    """The image at ``path`` as a PIL RGB image (read whole, the file closed)."""
    from PIL import Image  # PIL: optional (pip install pillow), loaded on first use

    with open(path, "rb") as fh:
        return Image.open(fh).convert("RGB")


def accimage_loader(path: str | Path) -> Any:
    """The image through ``accimage`` (when selected with ``set_image_backend``), Pillow if
    accimage cannot decode it."""
    import accimage  # type: ignore[import-not-found]

    try:
        return accimage.Image(path)
    except OSError:
        return pil_loader(path)


def default_loader(path: str | Path) -> Any:
    """The image backend's loader (``torchvision.get_image_backend()``)."""
    return accimage_loader(path) if get_image_backend() == "accimage" else pil_loader(path)


class ImageFolder(DatasetFolder):
    """Images from class folders (see the module's docstring): files with an image extension
    (``IMG_EXTENSIONS``), or those ``is_valid_file`` accepts, read by ``loader`` (default: a PIL
    RGB image).

    Args:
        root, transform, target_transform, is_valid_file, allow_empty: as DatasetFolder's.
        loader: reads one image from its path.

    Attributes: as DatasetFolder's, and ``imgs`` (the same list as ``samples``).
    """

    def __init__(self, root: str | Path, transform: Callable | None = None,
                 target_transform: Callable | None = None,
                 loader: Callable[[str], Any] = default_loader,
                 is_valid_file: Callable[[str], bool] | None = None,
                 allow_empty: bool = False) -> None:
        super().__init__(root, loader, IMG_EXTENSIONS if is_valid_file is None else None,
                         transform=transform, target_transform=target_transform,
                         is_valid_file=is_valid_file, allow_empty=allow_empty)
        self.imgs = self.samples
