"""``download=True`` against torchvision: each dataset fetches generated files in the real formats
from a loopback HTTP server (tests/loopback_http.py), its mirrors/URLs pointed at the server and
its MD5 sums replaced by the generated files' own, as a user points a dataset at a mirror. Both
libraries must print the same progress, leave the same files, raise the same errors and then
give the same items."""

from __future__ import annotations

import hashlib
import io
import os
import re
import zipfile

import pytest
import torchcompare
from loopback_http import LoopbackServer
from vision_dataset_files import (
    assert_same_dataset,
    cifar_archive,
    gz,
    idx_bytes,
    mnist_files,
    svhn_mat,
)


def md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


@pytest.fixture
def server():
    with LoopbackServer() as srv:
        yield srv


@pytest.fixture
def libs(vision, tv, monkeypatch):
    """(torchvision, library under test), both drawing torch's fallback progress bar (a tqdm
    installed here would print timings)."""
    import torch

    monkeypatch.setattr(tv.datasets.utils, "tqdm", torch.hub._Faketqdm)
    if vision is not tv:
        import tapegrad

        monkeypatch.setattr(vision.datasets.utils, "tqdm", tapegrad.hub._PercentBar)
    return tv, vision


def _tree(folder):
    out = []
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        out += [os.path.relpath(os.path.join(root, f), folder) for f in sorted(files)]
    return out


def _both(libs, tmp_path, capfd, scenario):
    """Run ``scenario(lib, folder)`` with torchvision, then with the library, each in a fresh
    folder; return (their record, our record, their value, our value)."""
    records, values = [], []
    for name, lib in zip(("tv", "ours"), libs, strict=True):
        folder = tmp_path / name
        folder.mkdir()
        capfd.readouterr()
        try:
            value = scenario(lib, str(folder))
            outcome = ("ok",)
        except Exception as exc:  # noqa: BLE001  (compared between the two libraries)
            value, outcome = None, ("raised", type(exc).__name__, str(exc))
        out, err = capfd.readouterr()
        text = repr((outcome, out, err, _tree(folder))).replace(str(folder), "<root>")
        records.append(torchcompare.normalize_text(text))
        values.append(value)
    return records[0], records[1], values[0], values[1]


def _serve_mnist(server, prefix="/mnist/", n_train=110, seed=0):
    files = mnist_files(n_train=n_train, n_test=20, seed=seed)
    for name, data in files.items():
        server.add(prefix + name, data)
    return [(name, md5(data)) for name, data in files.items()]


@pytest.mark.parametrize("name", ["MNIST", "FashionMNIST", "KMNIST"])
def test_mnist_like_download(libs, tmp_path, capfd, monkeypatch, server, name):
    resources = _serve_mnist(server, seed=len(name))
    mirrors = [server.url + "/nothing-here/", server.url + "/mnist/"]  # the first one fails
    for lib in libs:
        monkeypatch.setattr(getattr(lib.datasets, name), "mirrors", mirrors)
        monkeypatch.setattr(getattr(lib.datasets, name), "resources", resources)

    def scenario(lib, root):
        ds = getattr(lib.datasets, name)(root, train=False, download=True)
        asked = len(server.requests)
        again = getattr(lib.datasets, name)(root, train=True, download=True)
        assert len(server.requests) == asked  # already there: nothing fetched
        return ds, again

    theirs, ours, (t1, t2), (o1, o2) = _both(libs, tmp_path, capfd, scenario)
    assert ours == theirs
    # the 86 KB images file arrives 32 KiB at a time: three steps of torch's fallback bar
    assert re.search(r"'\\r\d\d\.\d%\\r\d\d\.\d%\\r100\.0%\\n\\r100\.0%\\n", theirs)
    assert_same_dataset(o1, t1, ("data", "targets"))
    assert_same_dataset(o2, t2, ("data", "targets"), indices=range(0, 110, 7))
    assert {h["User-Agent"] for _, _, h in server.requests} == {"pytorch/vision"}


def test_mnist_download_errors(libs, tmp_path, capfd, monkeypatch, server):
    resources = _serve_mnist(server)
    resources[1] = (resources[1][0], "0" * 32)  # the labels' sum is wrong everywhere
    for lib in libs:
        monkeypatch.setattr(lib.datasets.MNIST, "mirrors",
                            [server.url + "/nothing-here/", server.url + "/mnist/"])
        monkeypatch.setattr(lib.datasets.MNIST, "resources", resources)

    def scenario(lib, root):
        lib.datasets.MNIST(root, download=True)

    theirs, ours, _, _ = _both(libs, tmp_path, capfd, scenario)
    assert ours == theirs
    assert "Error downloading train-labels-idx1-ubyte.gz" in theirs
    assert "HTTP Error 404: Not Found" in theirs and "File not found or corrupted." in theirs


def test_mnist_redirected_mirror(libs, tmp_path, capfd, monkeypatch, server):
    resources = _serve_mnist(server, n_train=5)
    for name, _ in resources:
        server.add(f"/moved/{name}", status=302, headers={"Location": f"/mnist/{name}"})
    for lib in libs:
        monkeypatch.setattr(lib.datasets.MNIST, "mirrors", [server.url + "/moved/"])
        monkeypatch.setattr(lib.datasets.MNIST, "resources", resources)

    def scenario(lib, root):
        return lib.datasets.MNIST(root, download=True)

    theirs, ours, t, o = _both(libs, tmp_path, capfd, scenario)
    assert ours == theirs
    assert_same_dataset(o, t, ("data", "targets"))


def test_file_urls_fail_as_in_torchvision(libs, tmp_path, capfd, monkeypatch):
    """A ``file://`` mirror does not work in torchvision (its progress bar asks the response for
    a length a file has not got); the library fails the same way."""
    served = tmp_path / "mirror"
    served.mkdir()
    resources = []
    for name, data in mnist_files(n_train=3, n_test=2).items():
        (served / name).write_bytes(data)
        resources.append((name, md5(data)))
    for lib in libs:
        monkeypatch.setattr(lib.datasets.MNIST, "mirrors", [served.as_uri() + "/"])
        monkeypatch.setattr(lib.datasets.MNIST, "resources", resources)

    def scenario(lib, root):
        lib.datasets.MNIST(root, download=True)

    theirs, ours, _, _ = _both(libs, tmp_path, capfd, scenario)
    assert ours == theirs and "AttributeError" in theirs


def test_emnist_download(libs, tmp_path, capfd, monkeypatch, server):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("gzip/", b"")
        for split, n in (("letters", 6), ("digits", 4)):
            for part in ("train", "test"):
                zf.writestr(f"gzip/emnist-{split}-{part}-images-idx3-ubyte.gz",
                            gz(idx_bytes(_pixels((n, 28, 28), n))))
                zf.writestr(f"gzip/emnist-{split}-{part}-labels-idx1-ubyte.gz",
                            gz(idx_bytes(_pixels((n,), n + 1) % 26)))
        zf.writestr("gzip/emnist-letters-mapping.txt", "1 65 97\n")
    archive = buf.getvalue()
    url = server.add("/emnist/gzip.zip", archive)
    for lib in libs:
        monkeypatch.setattr(lib.datasets.EMNIST, "url", url)
        monkeypatch.setattr(lib.datasets.EMNIST, "md5", md5(archive))

    def scenario(lib, root):
        return (lib.datasets.EMNIST(root, split="letters", download=True),
                lib.datasets.EMNIST(root, split="digits", train=False, download=True))

    theirs, ours, t, o = _both(libs, tmp_path, capfd, scenario)
    assert ours == theirs and "gzip.zip" in theirs
    for a, b in zip(o, t, strict=True):
        assert_same_dataset(a, b, ("data", "targets", "classes"))


def _pixels(shape, seed):
    import numpy as np

    return np.random.default_rng(seed).integers(0, 256, shape, dtype=np.uint8)


def test_qmnist_download(libs, tmp_path, capfd, monkeypatch, server):
    import lzma

    import numpy as np

    table = {}
    for subset, prefix, pack, ext, n in (("train", "qmnist-train", gz, ".gz", 5),
                                         ("test", "qmnist-test", gz, ".gz", 4),
                                         ("nist", "xnist", lzma.compress, ".xz", 3)):
        labels = np.arange(n * 8, dtype=np.int32).reshape(n, 8) % 10
        entries = []
        for kind, array in (("images-idx3-ubyte", _pixels((n, 28, 28), n)),
                            ("labels-idx2-int", labels)):
            data = pack(idx_bytes(array))
            entries.append((server.add(f"/q/{prefix}-{kind}{ext}", data), md5(data)))
        table[subset] = entries
    for lib in libs:
        monkeypatch.setattr(lib.datasets.QMNIST, "resources", table)

    def scenario(lib, root):
        return (lib.datasets.QMNIST(root, what="nist", download=True, compat=False),
                lib.datasets.QMNIST(root, train=True, download=True))

    theirs, ours, t, o = _both(libs, tmp_path, capfd, scenario)
    assert ours == theirs
    for a, b in zip(o, t, strict=True):
        assert_same_dataset(a, b, ("data", "targets"))


@pytest.mark.parametrize("kind", ["cifar10", "cifar100"])
def test_cifar_download(libs, tmp_path, capfd, monkeypatch, server, kind):
    name = "CIFAR10" if kind == "cifar10" else "CIFAR100"
    archive, members = cifar_archive(kind, per_batch=5)
    url = server.add(f"/toronto/{kind}.tar.gz", archive)
    for lib in libs:
        cls = getattr(lib.datasets, name)
        top = cls.base_folder
        monkeypatch.setattr(cls, "url", url)
        monkeypatch.setattr(cls, "tgz_md5", md5(archive))
        monkeypatch.setattr(cls, "train_list", [[n, md5(members[f"{top}/{n}"])]
                                                for n, _ in cls.train_list])
        monkeypatch.setattr(cls, "test_list", [[n, md5(members[f"{top}/{n}"])]
                                               for n, _ in cls.test_list])
        monkeypatch.setattr(cls, "meta", {**cls.meta,
                                          "md5": md5(members[f"{top}/{cls.meta['filename']}"])})

    def scenario(lib, root):
        cls = getattr(lib.datasets, name)
        first = cls(root, train=True, download=True)
        asked = len(server.requests)
        second = cls(root, train=False, download=True)
        assert len(server.requests) == asked
        return first, second

    theirs, ours, t, o = _both(libs, tmp_path, capfd, scenario)
    assert ours == theirs
    for a, b in zip(o, t, strict=True):
        assert_same_dataset(a, b, ("data", "targets", "classes"))


def test_svhn_download(libs, tmp_path, capfd, monkeypatch, server):
    data = svhn_mat(40, seed=2)
    url = server.add("/stanford/test_32x32.mat", data)
    for lib in libs:
        table = {k: list(v) for k, v in lib.datasets.SVHN.split_list.items()}
        table["test"] = [url, "test_32x32.mat", md5(data)]
        monkeypatch.setattr(lib.datasets.SVHN, "split_list", table)

    def scenario(lib, root):
        return lib.datasets.SVHN(root, split="test", download=True)

    theirs, ours, t, o = _both(libs, tmp_path, capfd, scenario)
    assert ours == theirs and "\\r" in theirs
    assert_same_dataset(o, t, ("data", "labels"))
