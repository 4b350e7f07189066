"""CIFAR10/100, SVHN, ImageFolder/DatasetFolder, FakeData and VisionDataset against torchvision on
generated files: lengths, reprs, attributes, every item, errors."""

from __future__ import annotations

import hashlib
import io
import os
import tarfile

import pytest
from vision_dataset_files import assert_same_dataset, cifar_archive, image_tree, plain, svhn_mat


def _raise(fn, *args, **kwargs):
    """``(type name, message)`` of what ``fn(*args, **kwargs)`` raises, None if nothing."""
    try:
        fn(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001  (compared between the two libraries)
        return type(exc).__name__, str(exc)
    return None


def _same_error(make, vision, tv):
    """``make(lib)`` raises the same exception with torchvision and with the library."""
    theirs, ours = _raise(make, tv), _raise(make, vision)
    assert theirs is not None and ours == theirs
    return theirs


def _unpack_cifar(root, kind):
    archive, _ = cifar_archive(kind, per_batch=6)
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
        tar.extractall(root, filter="data")


def _patch_cifar_md5s(monkeypatch, classes, root, kind):
    """The generated files' own MD5 sums in place of the real release's."""
    top = "cifar-10-batches-py" if kind == "cifar10" else "cifar-100-python"

    def md5(name):
        with open(os.path.join(root, top, name), "rb") as fh:
            return hashlib.md5(fh.read()).hexdigest()

    for cls in classes:
        monkeypatch.setattr(cls, "train_list", [[n, md5(n)] for n, _ in cls.train_list])
        monkeypatch.setattr(cls, "test_list", [[n, md5(n)] for n, _ in cls.test_list])
        monkeypatch.setattr(cls, "meta", {**cls.meta, "md5": md5(cls.meta["filename"])})


@pytest.mark.parametrize("kind", ["cifar10", "cifar100"])
@pytest.mark.parametrize("train", [True, False])
def test_cifar(vision, tv, tmp_path, monkeypatch, kind, train):
    name = "CIFAR10" if kind == "cifar10" else "CIFAR100"
    _unpack_cifar(tmp_path, kind)
    ours_cls, theirs_cls = getattr(vision.datasets, name), getattr(tv.datasets, name)
    # the real release's sums: the generated files are "corrupted"
    _same_error(lambda lib: getattr(lib.datasets, name)(str(tmp_path), train=train),
                vision, tv)
    _patch_cifar_md5s(monkeypatch, {ours_cls, theirs_cls}, str(tmp_path), kind)
    theirs = theirs_cls(str(tmp_path), train=train)
    ours = ours_cls(str(tmp_path), train=train)
    assert_same_dataset(ours, theirs, ("data", "targets", "classes", "class_to_idx", "train",
                                       "base_folder", "url", "filename", "tgz_md5"))
    assert ours[0][0].mode == "RGB" and type(ours[0][1]) is int
    assert ours.data.shape == (30 if train and kind == "cifar10" else 6, 32, 32, 3)


def test_cifar_class_attributes(vision, tv):
    for name in ("CIFAR10", "CIFAR100"):
        ours, theirs = getattr(vision.datasets, name), getattr(tv.datasets, name)
        for attr in ("base_folder", "url", "filename", "tgz_md5", "train_list", "test_list",
                     "meta"):
            assert getattr(ours, attr) == getattr(theirs, attr), (name, attr)


def test_cifar_missing_meta(vision, tv, tmp_path, monkeypatch):
    _unpack_cifar(tmp_path, "cifar10")
    _patch_cifar_md5s(monkeypatch, {vision.datasets.CIFAR10, tv.datasets.CIFAR10},
                      str(tmp_path), "cifar10")
    os.remove(tmp_path / "cifar-10-batches-py" / "batches.meta")
    _same_error(lambda lib: lib.datasets.CIFAR10(str(tmp_path)), vision, tv)


@pytest.mark.parametrize("split", ["train", "test", "extra"])
def test_svhn(vision, tv, tmp_path, monkeypatch, split):
    data = svhn_mat(9, seed=len(split))
    (tmp_path / f"{split}_32x32.mat").write_bytes(data)
    _same_error(lambda lib: lib.datasets.SVHN(str(tmp_path), split=split), vision, tv)
    for cls in (vision.datasets.SVHN, tv.datasets.SVHN):
        table = {k: list(v) for k, v in cls.split_list.items()}
        table[split][2] = hashlib.md5(data).hexdigest()
        monkeypatch.setattr(cls, "split_list", table)
    theirs = tv.datasets.SVHN(str(tmp_path), split=split)
    ours = vision.datasets.SVHN(str(tmp_path), split=split)
    assert_same_dataset(ours, theirs, ("data", "labels", "split", "url", "filename",
                                       "file_md5"))
    assert int(ours.labels[0]) == 0  # the file's 10 is the digit 0


def test_svhn_bad_split_and_class_table(vision, tv, tmp_path):
    _same_error(lambda lib: lib.datasets.SVHN(str(tmp_path), split="valid"), vision, tv)
    assert vision.datasets.SVHN.split_list == tv.datasets.SVHN.split_list


# -- folders ------------------------------------------------------------------------------------

def test_image_folder(vision, tv, tmp_path):
    image_tree(tmp_path)
    theirs = tv.datasets.ImageFolder(str(tmp_path), allow_empty=True)
    ours = vision.datasets.ImageFolder(str(tmp_path), allow_empty=True)
    assert_same_dataset(ours, theirs, ("classes", "class_to_idx", "samples", "targets", "imgs",
                                       "extensions"))
    assert [os.path.relpath(p, tmp_path) for p, _ in ours.samples] == [
        "cat/a.jpg", "cat/b.png", "cat/nested/deeper/c.PNG", "dog/w.webp", "dog/x.bmp",
        "dog/y.png", "dog/z.tiff"]
    assert {img.mode for img, _ in (ours[i] for i in range(len(ours)))} == {"RGB"}


def test_image_folder_errors(vision, tv, tmp_path):
    image_tree(tmp_path)
    _same_error(lambda lib: lib.datasets.ImageFolder(str(tmp_path)), vision, tv)  # empty zebra
    (tmp_path / "empty").mkdir()
    _same_error(lambda lib: lib.datasets.ImageFolder(str(tmp_path / "empty")), vision, tv)
    _same_error(lambda lib: lib.datasets.ImageFolder(str(tmp_path / "nowhere")), vision, tv)
    _same_error(lambda lib: lib.datasets.DatasetFolder(str(tmp_path), loader=len), vision, tv)
    _same_error(lambda lib: lib.datasets.DatasetFolder(
        str(tmp_path), loader=len, extensions=(".png",), is_valid_file=bool), vision, tv)
    _same_error(lambda lib: lib.datasets.folder.make_dataset(
        str(tmp_path), class_to_idx={}, extensions=".png"), vision, tv)
    _same_error(lambda lib: lib.datasets.DatasetFolder.make_dataset(
        str(tmp_path), None, extensions=".png"), vision, tv)
    _same_error(lambda lib: lib.datasets.DatasetFolder(
        str(tmp_path), loader=len, extensions="png"), vision, tv)


def test_dataset_folder_custom_loader_and_filters(vision, tv, tmp_path):
    image_tree(tmp_path)

    def size_loader(path):
        return os.path.getsize(path)

    def only_png(path):
        return path.endswith(".png")

    class Negate:
        def __call__(self, x):
            return -x

        def __repr__(self):
            return "Negate()"

    for kwargs in (dict(extensions=(".txt", ".bmp")),
                   dict(extensions=".png", allow_empty=True),
                   dict(is_valid_file=only_png, allow_empty=True),
                   dict(extensions=(".png",), transform=Negate(), target_transform=Negate(),
                        allow_empty=True)):
        if "txt" in str(kwargs.get("extensions")):
            _same_error(lambda lib, kw=kwargs: lib.datasets.DatasetFolder(
                str(tmp_path), loader=size_loader, **kw), vision, tv)
            kwargs["allow_empty"] = True
        theirs = tv.datasets.DatasetFolder(str(tmp_path), loader=size_loader, **kwargs)
        ours = vision.datasets.DatasetFolder(str(tmp_path), loader=size_loader, **kwargs)
        assert_same_dataset(ours, theirs, ("classes", "class_to_idx", "samples", "targets",
                                           "extensions"))


def test_folder_helpers(vision, tv, tmp_path):
    image_tree(tmp_path)
    for name in ("a.JPG", "b.png", "c.txt", "d.tar.gz", "e.webp", ".png"):
        assert vision.datasets.folder.is_image_file(name) == tv.datasets.folder.is_image_file(
            name)
        for ext in (".txt", (".gz", ".txt"), [".gz"], "png"):
            assert vision.datasets.folder.has_file_allowed_extension(name, ext) == \
                tv.datasets.folder.has_file_allowed_extension(name, ext)
    assert vision.datasets.folder.IMG_EXTENSIONS == tv.datasets.folder.IMG_EXTENSIONS
    assert vision.datasets.folder.find_classes(str(tmp_path)) == \
        tv.datasets.folder.find_classes(str(tmp_path))
    for loader in ("pil_loader", "default_loader"):
        path = str(tmp_path / "dog" / "y.png")
        assert plain(getattr(vision.datasets.folder, loader)(path)) == plain(
            getattr(tv.datasets.folder, loader)(path))


class Subclassed:
    """find_classes overridden: only the 'dog' folder."""

    @staticmethod
    def make(base):
        class OnlyDogs(base):
            def find_classes(self, directory):
                return ["dog"], {"dog": 0}

        return OnlyDogs


def test_dataset_folder_find_classes_override(vision, tv, tmp_path):
    image_tree(tmp_path)
    theirs = Subclassed.make(tv.datasets.ImageFolder)(str(tmp_path))
    ours = Subclassed.make(vision.datasets.ImageFolder)(str(tmp_path))
    assert_same_dataset(ours, theirs, ("classes", "class_to_idx", "samples"))


# -- FakeData, VisionDataset --------------------------------------------------------------------

@pytest.mark.parametrize("size", [(3, 6, 5), (1, 4, 4), (4, 3, 2), (2, 2, 3), (7, 5)])
def test_fake_data(vision, tv, size, lib, oracle):
    theirs = tv.datasets.FakeData(6, size, num_classes=3, random_offset=2)
    ours = vision.datasets.FakeData(6, size, num_classes=3, random_offset=2)
    assert_same_dataset(ours, theirs, ("size", "num_classes", "image_size", "random_offset"))
    # the global generator is left as it was
    oracle.manual_seed(5)
    want = oracle.rand(3).tolist()
    lib.manual_seed(5)
    [ours[i] for i in range(len(ours))]
    assert lib.rand(3).tolist() == want


def test_fake_data_errors_and_target_transform(vision, tv):
    _same_error(lambda lib: lib.datasets.FakeData(2)[2], vision, tv)
    _same_error(lambda lib: lib.datasets.FakeData(2, (5, 3, 3))[0], vision, tv)
    _same_error(lambda lib: lib.datasets.FakeData(2, (1, 1, 3, 3))[0], vision, tv)
    ours = vision.datasets.FakeData(3, (3, 2, 2), target_transform=lambda t: t + 10)
    theirs = tv.datasets.FakeData(3, (3, 2, 2), target_transform=lambda t: t + 10)
    assert [ours[i][1] for i in range(3)] == [theirs[i][1] for i in range(3)]


def test_vision_dataset_base(vision, tv):
    class Marker:
        def __init__(self, text):
            self.text = text

        def __call__(self, *args):
            return args

        def __repr__(self):
            return self.text

    def build(lib, **kwargs):
        class Tiny(lib.datasets.VisionDataset):
            def __len__(self):
                return 3

            def extra_repr(self):
                return "first\nsecond"

        return Tiny(**kwargs)

    for kwargs in ({}, {"root": "~/x"}, {"root": "r", "transform": Marker("T(\n  a\n)")},
                   {"root": "r", "target_transform": Marker("U")},
                   {"transforms": Marker("Both(\n  x\n)")}):
        assert repr(build(vision, **kwargs)) == repr(build(tv, **kwargs))
    _same_error(lambda lib: build(lib, transforms=Marker("a"), target_transform=Marker("b")),
                vision, tv)
    _same_error(lambda lib: lib.datasets.VisionDataset("r")[0], vision, tv)
    _same_error(lambda lib: len(lib.datasets.VisionDataset("r")), vision, tv)
    standard = vision.datasets.vision.StandardTransform(Marker("A\nB"), None)
    assert repr(standard) == repr(tv.datasets.vision.StandardTransform(Marker("A\nB"), None))
    assert standard(1, 2) == ((1,), 2)
