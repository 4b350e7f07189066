"""``torchvision.datasets.utils``: downloads, checksums, archives and argument checks.

Every dataset's ``download=True`` goes through :func:`download_url` (follow redirects, fetch
with a progress bar on stderr, check the MD5) and :func:`extract_archive` (``.tar``, ``.zip``,
``.gz``, ``.bz2``, ``.xz`` and their combinations, ``.tgz``, ``.tbz``, ``.tbz2``), with
torchvision's ``User-Agent`` and messages. The progress bar is ``torch.hub``'s ``tqdm`` (tqdm's
own when installed, else torch's line of percentages).
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import lzma
import os
import pathlib
import re
import tarfile
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable, Iterable
from typing import IO, Any, TypeVar
from urllib.parse import urlparse

import numpy as np

from ...utils.model_zoo import tqdm

__all__ = ["calculate_md5", "check_md5", "check_integrity", "download_url",
           "download_file_from_google_drive", "download_and_extract_archive", "extract_archive",
           "iterable_to_str", "list_dir", "list_files", "verify_str_arg"]

USER_AGENT = "pytorch/vision"

PathLike = str | pathlib.Path


# -- checksums ----------------------------------------------------------------------------------

def calculate_md5(fpath: PathLike, chunk_size: int = 1024 * 1024) -> str:
    """The MD5 of a file in hex (a checksum against corruption, not a security measure)."""
    md5 = hashlib.md5(usedforsecurity=False)
    with open(fpath, "rb") as fh:
        while chunk := fh.read(chunk_size):
            md5.update(chunk)
    return md5.hexdigest()


def check_md5(fpath: PathLike, md5: str, **kwargs: Any) -> bool:
    return md5 == calculate_md5(fpath, **kwargs)


def check_integrity(fpath: PathLike, md5: str | None = None) -> bool:
    """True if ``fpath`` is a file and (when ``md5`` is given) has that MD5."""
    if not os.path.isfile(fpath):
        return False
    return md5 is None or check_md5(fpath, md5)


# -- downloads ----------------------------------------------------------------------------------

def _urlretrieve(url: str, filename: PathLike, chunk_size: int = 1024 * 32) -> None:
    request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
    with urllib.request.urlopen(request) as response:
        with open(filename, "wb") as fh, tqdm(total=response.length, unit="B",
                                              unit_scale=True) as bar:
            while chunk := response.read(chunk_size):
                fh.write(chunk)
                bar.update(len(chunk))


def _get_redirect_url(url: str, max_hops: int = 3) -> str:
    """Where ``url`` leads after at most ``max_hops`` redirects."""
    first = url
    headers = {"Method": "HEAD", "User-Agent": USER_AGENT}
    for _ in range(max_hops + 1):
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers)) as response:
            if response.url == url or response.url is None:
                return url
            url = response.url
    raise RecursionError(f"Request to {first} exceeded {max_hops} redirects. The last redirect "
                         f"points to {url}.")


def _get_google_drive_file_id(url: str) -> str | None:
    parts = urlparse(url)
    if re.match(r"(drive|docs)[.]google[.]com", parts.netloc) is None:
        return None
    match = re.match(r"/file/d/(?P<id>[^/]*)", parts.path)
    return None if match is None else match.group("id")


def download_url(url: str, root: PathLike, filename: PathLike | None = None,
                 md5: str | None = None, max_redirect_hops: int = 3) -> None:
    """Download ``url`` into folder ``root`` (as ``filename``, default the URL's last part),
    unless a file with the right MD5 is already there.

    Raises:
        RuntimeError: ``"File not found or corrupted."`` when the download's MD5 is wrong.
    """
    root = os.path.expanduser(root)
    if not filename:
        filename = os.path.basename(url)
    fpath = os.fspath(os.path.join(root, filename))
    os.makedirs(root, exist_ok=True)
    if check_integrity(fpath, md5):
        return
    url = _get_redirect_url(url, max_hops=max_redirect_hops)
    file_id = _get_google_drive_file_id(url)
    if file_id is not None:
        return download_file_from_google_drive(file_id, root, filename, md5)
    try:
        _urlretrieve(url, fpath)
    except (urllib.error.URLError, OSError):
        if url[:5] != "https":
            raise
        _urlretrieve(url.replace("https:", "http:"), fpath)  # a second try without TLS
    if not check_integrity(fpath, md5):
        raise RuntimeError("File not found or corrupted.")


def download_file_from_google_drive(file_id: str, root: PathLike,
                                    filename: PathLike | None = None,
                                    md5: str | None = None) -> None:
    """Download a Google Drive file (needs the ``gdown`` package, as torchvision does)."""
    try:
        import gdown  # type: ignore[import-not-found]
    except ModuleNotFoundError:
        raise RuntimeError("To download files from GDrive, 'gdown' is required. You can install "
                           "it with 'pip install gdown'.") from None
    root = os.path.expanduser(root)
    if not filename:
        filename = file_id
    fpath = os.fspath(os.path.join(root, filename))
    os.makedirs(root, exist_ok=True)
    if check_integrity(fpath, md5):
        return
    gdown.download(id=file_id, output=fpath, quiet=False, user_agent=USER_AGENT)
    if not check_integrity(fpath, md5):
        raise RuntimeError("File not found or corrupted.")


# -- listing folders ----------------------------------------------------------------------------

def list_dir(root: PathLike, prefix: bool = False) -> list[str]:
    """The folders in ``root`` (as paths under it when ``prefix``)."""
    root = os.path.expanduser(root)
    found = [p for p in os.listdir(root) if os.path.isdir(os.path.join(root, p))]
    return [os.path.join(root, d) for d in found] if prefix is True else found


def list_files(root: PathLike, suffix: str | tuple[str, ...], prefix: bool = False) -> list[str]:
    """The files in ``root`` whose names end with ``suffix`` (a string or a tuple of them)."""
    root = os.path.expanduser(root)
    found = [p for p in os.listdir(root)
             if os.path.isfile(os.path.join(root, p)) and p.endswith(suffix)]
    return [os.path.join(root, f) for f in found] if prefix is True else found


# -- archives and compressed files --------------------------------------------------------------

def _extract_tar(from_path: PathLike, to_path: PathLike, compression: str | None) -> None:
    mode = f"r:{compression[1:]}" if compression else "r"
    with tarfile.open(from_path, mode) as tar:  # type: ignore[call-overload]
        if hasattr(tarfile, "data_filter"):  # refuse members that would land outside to_path
            tar.extractall(to_path, filter="data")
        else:  # pragma: no cover  (Pythons before the tarfile filters)
            tar.extractall(to_path)


_ZIP_COMPRESSION_MAP: dict[str, int] = {".bz2": zipfile.ZIP_BZIP2, ".xz": zipfile.ZIP_LZMA}


def _extract_zip(from_path: PathLike, to_path: PathLike, compression: str | None) -> None:
    method = _ZIP_COMPRESSION_MAP[compression] if compression else zipfile.ZIP_STORED
    with zipfile.ZipFile(from_path, "r", compression=method) as archive:
        archive.extractall(to_path)


_ARCHIVE_EXTRACTORS: dict[str, Callable[[PathLike, PathLike, str | None], None]] = {
    ".tar": _extract_tar, ".zip": _extract_zip}
_COMPRESSED_FILE_OPENERS: dict[str, Callable[..., IO]] = {
    ".bz2": bz2.open, ".gz": gzip.open, ".xz": lzma.open}
_FILE_TYPE_ALIASES: dict[str, tuple[str | None, str | None]] = {
    ".tbz": (".tar", ".bz2"), ".tbz2": (".tar", ".bz2"), ".tgz": (".tar", ".gz")}


def _detect_file_type(file: PathLike) -> tuple[str, str | None, str | None]:
    """(suffix, archive type, compression) of a file from its name: ``a.tar.gz`` ->
    ``('.tar.gz', '.tar', '.gz')``, ``a.gz`` -> ``('.gz', None, '.gz')``."""
    suffixes = pathlib.Path(file).suffixes
    if not suffixes:
        raise RuntimeError(f"File '{file}' has no suffixes that could be used to detect the "
                           "archive type and compression.")
    suffix = suffixes[-1]
    if suffix in _FILE_TYPE_ALIASES:
        return (suffix, *_FILE_TYPE_ALIASES[suffix])
    if suffix in _ARCHIVE_EXTRACTORS:
        return suffix, suffix, None
    if suffix in _COMPRESSED_FILE_OPENERS:
        if len(suffixes) > 1 and suffixes[-2] in _ARCHIVE_EXTRACTORS:
            return suffixes[-2] + suffix, suffixes[-2], suffix
        return suffix, None, suffix
    known = sorted(set(_FILE_TYPE_ALIASES) | set(_ARCHIVE_EXTRACTORS)
                   | set(_COMPRESSED_FILE_OPENERS))
    raise RuntimeError(f"Unknown compression or archive type: '{suffix}'.\n"
                       f"Known suffixes are: '{known}'.")


def _decompress(from_path: PathLike, to_path: PathLike | None = None,
                remove_finished: bool = False) -> pathlib.Path:
    """Decompress a ``.gz``/``.bz2``/``.xz`` file (to ``from_path`` minus the suffix unless
    ``to_path`` is given); returns the path written."""
    suffix, archive_type, compression = _detect_file_type(from_path)
    if not compression:
        raise RuntimeError(f"Couldn't detect a compression from suffix {suffix}.")
    if to_path is None:
        to_path = pathlib.Path(os.fspath(from_path).replace(
            suffix, archive_type if archive_type is not None else ""))
    with _COMPRESSED_FILE_OPENERS[compression](from_path, "rb") as src, \
            open(to_path, "wb") as dst:
        dst.write(src.read())
    if remove_finished:
        os.remove(from_path)
    return pathlib.Path(to_path)


def extract_archive(from_path: PathLike, to_path: PathLike | None = None,
                    remove_finished: bool = False) -> PathLike:
    """Unpack an archive, or decompress a compressed file, into folder ``to_path`` (default:
    the file's folder); the type comes from the name. Returns the folder (or, for a single
    compressed file, the file written), as a ``str`` when ``from_path`` is one."""

    def same_kind(path: pathlib.Path) -> PathLike:
        return os.fspath(path) if isinstance(from_path, str) else path

    if to_path is None:
        to_path = os.path.dirname(from_path)
    suffix, archive_type, compression = _detect_file_type(from_path)
    if not archive_type:
        written = _decompress(
            from_path, os.path.join(to_path, os.path.basename(from_path).replace(suffix, "")),
            remove_finished=remove_finished)
        return same_kind(written)
    _ARCHIVE_EXTRACTORS[archive_type](from_path, to_path, compression)
    if remove_finished:
        os.remove(from_path)
    return same_kind(pathlib.Path(to_path))


def download_and_extract_archive(url: str, download_root: PathLike,
                                 extract_root: PathLike | None = None,
                                 filename: PathLike | None = None, md5: str | None = None,
                                 remove_finished: bool = False) -> None:
    """:func:`download_url` into ``download_root``, then :func:`extract_archive` into
    ``extract_root`` (default the same folder)."""
    download_root = os.path.expanduser(download_root)
    if extract_root is None:
        extract_root = download_root
    if not filename:
        filename = os.path.basename(url)
    download_url(url, download_root, filename, md5)
    extract_archive(os.path.join(download_root, filename), extract_root, remove_finished)


# -- argument checks ----------------------------------------------------------------------------

def iterable_to_str(iterable: Iterable) -> str:
    """``['a', 'b']`` -> ``"'a', 'b'"``."""
    return "'" + "', '".join(str(item) for item in iterable) + "'"


T = TypeVar("T", str, bytes)


def verify_str_arg(value: T, arg: str | None = None, valid_values: Iterable[T] | None = None,
                   custom_msg: str | None = None) -> T:
    """Check that ``value`` is a string and one of ``valid_values`` (when given); return it.

    Raises:
        ValueError: torchvision's messages, naming the argument ``arg``.
    """
    if not isinstance(value, str):
        where = "" if arg is None else f" for argument {arg}"
        raise ValueError(f"Expected type str{where}, but got type {type(value)}.")
    if valid_values is None or value in valid_values:
        return value
    if custom_msg is not None:
        raise ValueError(custom_msg)
    raise ValueError(f"Unknown value '{value}' for argument {arg}. Valid values are "
                     f"{{{iterable_to_str(valid_values)}}}.")


# -- file formats some datasets use -------------------------------------------------------------

def _read_pfm(file_name: PathLike, slice_channels: int = 2) -> np.ndarray:
    """A ``.pfm`` file (1 or 3 float channels, bottom row first) as a (C, H, W) float32 array."""
    with open(file_name, "rb") as fh:
        header = fh.readline().rstrip()
        if header not in (b"PF", b"Pf"):
            raise ValueError("Invalid PFM file")
        size = re.match(rb"^(\d+)\s(\d+)\s$", fh.readline())
        if not size:
            raise Exception("Malformed PFM header.")
        width, height = (int(v) for v in size.groups())
        scale = float(fh.readline().rstrip())
        data = np.fromfile(fh, dtype=("<" if scale < 0 else ">") + "f")
    channels = 3 if header == b"PF" else 1
    data = data.reshape(height, width, channels).transpose(2, 0, 1)
    return np.flip(data, axis=1)[:slice_channels].astype(np.float32)
