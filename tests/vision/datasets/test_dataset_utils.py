"""``datasets.utils`` against torchvision's: checksums, archives of every kind torchvision knows,
folder listings, argument checks, downloads (redirects, MD5 checks, Google Drive's error)."""

from __future__ import annotations

import bz2
import gzip
import hashlib
import io
import lzma
import os
import pathlib
import tarfile
import zipfile

import pytest
from loopback_http import LoopbackServer


def _raise(fn, *args, **kwargs):
    """``(type name, message)`` of what ``fn(*args, **kwargs)`` raises, None if nothing."""
    try:
        fn(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001  (compared between the two libraries)
        return type(exc).__name__, str(exc)
    return None


def _tree(folder):
    out = {}
    for root, _, files in os.walk(folder):
        for f in files:
            path = os.path.join(root, f)
            with open(path, "rb") as fh:
                out[os.path.relpath(path, folder)] = fh.read()
    return out


MEMBERS = {"top/a.txt": b"alpha\n", "top/sub/b.bin": bytes(range(200)), "c.txt": b"see"}


def _tar(compression):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=f"w:{compression}" if compression else "w") as tar:
        for name, data in MEMBERS.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _zip(method=zipfile.ZIP_DEFLATED):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=method) as zf:
        for name, data in MEMBERS.items():
            zf.writestr(name, data)
    return buf.getvalue()


ARCHIVES = {
    "x.tar": lambda: _tar(""),
    "x.tar.gz": lambda: _tar("gz"),
    "x.tgz": lambda: _tar("gz"),
    "x.tar.bz2": lambda: _tar("bz2"),
    "x.tbz": lambda: _tar("bz2"),
    "x.tbz2": lambda: _tar("bz2"),
    "x.tar.xz": lambda: _tar("xz"),
    "x.zip": lambda: _zip(),
    "x.zip.bz2": lambda: _zip(zipfile.ZIP_BZIP2),
    "x.zip.xz": lambda: _zip(zipfile.ZIP_LZMA),
    "data.bin.gz": lambda: gzip.compress(b"payload" * 9),
    "data.bz2": lambda: bz2.compress(b"payload" * 9),
    "data.v2.xz": lambda: lzma.compress(b"payload" * 9),
}


@pytest.mark.parametrize("name", sorted(ARCHIVES))
@pytest.mark.parametrize("as_path", [False, True])
@pytest.mark.parametrize("remove", [False, True])
def test_extract_archive(vision, tv, tmp_path, name, as_path, remove):
    data = ARCHIVES[name]()
    results = []
    for lib, folder in ((tv, tmp_path / "tv"), (vision, tmp_path / "ours")):
        (folder / "in").mkdir(parents=True)
        (folder / "out").mkdir()
        src = folder / "in" / name
        src.write_bytes(data)
        ret = lib.datasets.utils.extract_archive(src if as_path else str(src),
                                                 str(folder / "out"), remove_finished=remove)
        results.append((type(ret).__name__, os.path.relpath(ret, folder), _tree(folder)))
    assert results[0] == results[1]
    assert results[0][2]  # something was written


def test_extract_archive_default_folder_and_errors(vision, tv, tmp_path):
    for lib, folder in ((tv, tmp_path / "tv"), (vision, tmp_path / "ours")):
        folder.mkdir()
        (folder / "x.tar.gz").write_bytes(_tar("gz"))
        (folder / "plain.gz").write_bytes(gzip.compress(b"z"))
        lib.datasets.utils.extract_archive(str(folder / "x.tar.gz"))
        lib.datasets.utils._decompress(str(folder / "plain.gz"))
    assert _tree(tmp_path / "tv") == _tree(tmp_path / "ours")
    for bad in ("noext", "x.rar", "x.tar", "a.7z.gz.tar.rar"):
        for fn in ("extract_archive", "_detect_file_type", "_decompress"):
            theirs = _raise(getattr(tv.datasets.utils, fn), str(tmp_path / bad))
            ours = _raise(getattr(vision.datasets.utils, fn), str(tmp_path / bad))
            assert ours == theirs, (bad, fn)
    for name in ("a.tar.gz", "a.tgz", "b.zip", "c.gz", "d.tar.xz", "e.f.bz2", "g.tbz"):
        assert vision.datasets.utils._detect_file_type(name) == \
            tv.datasets.utils._detect_file_type(name)


def test_checksums_and_listings(vision, tv, tmp_path):
    (tmp_path / "d1").mkdir()
    (tmp_path / "d2").mkdir()
    (tmp_path / "f.png").write_bytes(b"png-ish")
    (tmp_path / "g.jpg").write_bytes(b"")
    (tmp_path / "h.PNG").write_bytes(b"x" * 3000000)
    want = hashlib.md5(b"x" * 3000000).hexdigest()
    for lib in (vision, tv):
        u = lib.datasets.utils
        assert u.calculate_md5(str(tmp_path / "h.PNG")) == want
        assert u.calculate_md5(tmp_path / "h.PNG", chunk_size=7) == want
        assert u.check_md5(str(tmp_path / "h.PNG"), want)
        assert u.check_integrity(str(tmp_path / "h.PNG"), want)
        assert u.check_integrity(str(tmp_path / "f.png"))
        assert not u.check_integrity(str(tmp_path / "f.png"), want)
        assert not u.check_integrity(str(tmp_path / "nope"))
        assert not u.check_integrity(str(tmp_path / "d1"))
    for args in ((str(tmp_path),), (str(tmp_path), True), (tmp_path,)):
        assert sorted(vision.datasets.utils.list_dir(*args)) == sorted(
            tv.datasets.utils.list_dir(*args))
    for args in ((str(tmp_path), ".png"), (str(tmp_path), (".png", ".jpg"), True),
                 (str(tmp_path), ".PNG")):
        assert sorted(vision.datasets.utils.list_files(*args)) == sorted(
            tv.datasets.utils.list_files(*args))
    assert _raise(vision.datasets.utils.list_dir, str(tmp_path / "nope")) == _raise(
        tv.datasets.utils.list_dir, str(tmp_path / "nope"))


@pytest.mark.parametrize("args", [
    ("train", "split", ("train", "test")),
    ("val", "split", ("train", "test")),
    ("val", None, ["a", "b"]),
    ("x", "split", ("a",), "Choose better."),
    (3, "split", ("a",)),
    (b"a", None, None),
    (None, "what", None),
    ("anything", None, None),
])
def test_verify_str_arg(vision, tv, args):
    assert _raise(vision.datasets.utils.verify_str_arg, *args) == _raise(
        tv.datasets.utils.verify_str_arg, *args)
    if _raise(tv.datasets.utils.verify_str_arg, *args) is None:
        assert vision.datasets.utils.verify_str_arg(*args) == args[0]
    assert vision.datasets.utils.iterable_to_str(["a", 1, None]) == \
        tv.datasets.utils.iterable_to_str(["a", 1, None])


@pytest.fixture
def server():
    with LoopbackServer() as srv:
        yield srv


def test_download_url(vision, tv, tmp_path, server, monkeypatch):
    import torch

    monkeypatch.setattr(tv.datasets.utils, "tqdm", torch.hub._Faketqdm)
    if vision is not tv:
        import tapegrad

        monkeypatch.setattr(vision.datasets.utils, "tqdm", tapegrad.hub._PercentBar)
    data = bytes(range(256)) * 300
    good = hashlib.md5(data).hexdigest()
    server.add("/f/data.bin", data)
    server.add("/r1", status=301, headers={"Location": "/r2"})
    server.add("/r2", status=302, headers={"Location": "/r3"})
    server.add("/r3", status=307, headers={"Location": "/f/data.bin"})
    base = server.url
    cases = [
        ((base + "/f/data.bin",), {}),
        ((base + "/f/data.bin",), {"filename": "renamed", "md5": good}),
        ((base + "/f/data.bin",), {"md5": "f" * 32}),
        ((base + "/r1",), {"filename": "via-redirects"}),
        ((base + "/r1",), {"filename": "too-many", "max_redirect_hops": 2}),
        ((base + "/gone.bin",), {}),
    ]
    for i, (args, kwargs) in enumerate(cases):
        records = []
        for lib, folder in ((tv, tmp_path / f"tv{i}"), (vision, tmp_path / f"ours{i}")):
            err = _raise(lib.datasets.utils.download_url, *args, str(folder), **kwargs)
            records.append((err, sorted(_tree(folder)) if folder.exists() else None))
        assert records[0] == records[1], (args, kwargs)
    # a file already there with the right sum is not fetched again
    (tmp_path / "have").mkdir()
    (tmp_path / "have" / "data.bin").write_bytes(data)
    asked = len(server.requests)
    vision.datasets.utils.download_url(base + "/f/data.bin", str(tmp_path / "have"), md5=good)
    assert len(server.requests) == asked


def test_google_drive_ids_and_gdown(vision, tv, tmp_path):
    for url in ("https://drive.google.com/file/d/1AbC_d/view?usp=sharing",
                "https://docs.google.com/file/d/xyz", "https://drive.google.com/open?id=1",
                "https://example.com/file/d/1"):
        assert vision.datasets.utils._get_google_drive_file_id(url) == \
            tv.datasets.utils._get_google_drive_file_id(url)
    assert _raise(vision.datasets.utils.download_file_from_google_drive, "id", str(tmp_path)) \
        == _raise(tv.datasets.utils.download_file_from_google_drive, "id", str(tmp_path))


def test_download_and_extract_archive(vision, tv, tmp_path, server):
    archive = _tar("gz")
    url = server.add("/a/pack.tar.gz", archive)
    results = []
    for lib, folder in ((tv, tmp_path / "tv"), (vision, tmp_path / "ours")):
        lib.datasets.utils.download_and_extract_archive(
            url, str(folder / "dl"), extract_root=str(folder / "x"),
            md5=hashlib.md5(archive).hexdigest(), remove_finished=True)
        lib.datasets.utils.download_and_extract_archive(url, pathlib.Path(folder / "second"),
                                                        filename="renamed.tgz")
        results.append(_tree(folder))
    assert results[0] == results[1]
