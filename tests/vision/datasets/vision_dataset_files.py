"""Small generated files in the formats torchvision's datasets read, and helpers that compare two
datasets (torchvision's and the one under test) item by item.

    write_idx(path, array)                   an idx ("SN3 Pascal Vincent") file, big-endian
    mnist_files(n_train, n_test, seed)       {name: bytes} of the four MNIST .gz files
    cifar_archive(kind, per_batch, seed)     (tar.gz bytes, {member: bytes}) of CIFAR-10/100
    svhn_mat(n, seed)                        the bytes of an SVHN .mat file (scipy.io.savemat)
    image_tree(root)                         class folders of PNG/JPEG/BMP images and other files
    assert_same_dataset(ours, theirs, ...)   len, repr, attributes and items agree
"""

from __future__ import annotations

import gzip
import io
import os
import pickle
import tarfile

import numpy as np

_IDX_CODES = {np.dtype(np.uint8): 8, np.dtype(np.int8): 9, np.dtype(np.int16): 11,
              np.dtype(np.int32): 12, np.dtype(np.float32): 13, np.dtype(np.float64): 14}


def idx_bytes(array: np.ndarray) -> bytes:
    """The idx file of ``array``: magic (two zero bytes, type code, ndim), sizes, values."""
    array = np.asarray(array)
    head = bytes([0, 0, _IDX_CODES[array.dtype], array.ndim])
    sizes = b"".join(int(s).to_bytes(4, "big") for s in array.shape)
    return head + sizes + array.astype(array.dtype.newbyteorder(">")).tobytes()


def write_idx(path, array) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as fh:
        fh.write(idx_bytes(array))


def gz(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


def mnist_arrays(n_train=70, n_test=30, seed=0):
    """Images and labels for MNIST's four files (random pixels, labels 0..9)."""
    rng = np.random.default_rng(seed)
    return {
        "train-images-idx3-ubyte": rng.integers(0, 256, (n_train, 28, 28), dtype=np.uint8),
        "train-labels-idx1-ubyte": rng.integers(0, 10, n_train, dtype=np.uint8),
        "t10k-images-idx3-ubyte": rng.integers(0, 256, (n_test, 28, 28), dtype=np.uint8),
        "t10k-labels-idx1-ubyte": rng.integers(0, 10, n_test, dtype=np.uint8),
    }


def mnist_files(n_train=70, n_test=30, seed=0):
    """``{"train-images-idx3-ubyte.gz": bytes, ...}``."""
    return {name + ".gz": gz(idx_bytes(a))
            for name, a in mnist_arrays(n_train, n_test, seed).items()}


def write_mnist_raw(raw_folder, n_train=70, n_test=30, seed=0, prefix=""):
    for name, array in mnist_arrays(n_train, n_test, seed).items():
        write_idx(os.path.join(raw_folder, prefix + name), array)


def cifar_archive(kind="cifar10", per_batch=8, seed=0):
    """The release's tar.gz (as bytes) and its members: pickled dicts of uint8 rows (R, G, B
    planes of 32 x 32) and label lists, and the meta pickle with the class names."""
    rng = np.random.default_rng(seed)
    top = "cifar-10-batches-py" if kind == "cifar10" else "cifar-100-python"
    members = {}
    if kind == "cifar10":
        names = [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]
        for name in names:
            members[name] = pickle.dumps({
                "batch_label": name, "labels": rng.integers(0, 10, per_batch).tolist(),
                "data": rng.integers(0, 256, (per_batch, 3072), dtype=np.uint8),
                "filenames": [f"img{i}.png" for i in range(per_batch)]}, protocol=2)
        members["batches.meta"] = pickle.dumps({
            "label_names": ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog",
                            "horse", "ship", "truck"], "num_vis": 3072}, protocol=2)
    else:
        for name in ("train", "test"):
            members[name] = pickle.dumps({
                "fine_labels": rng.integers(0, 100, per_batch).tolist(),
                "coarse_labels": rng.integers(0, 20, per_batch).tolist(),
                "data": rng.integers(0, 256, (per_batch, 3072), dtype=np.uint8)}, protocol=2)
        members["meta"] = pickle.dumps({
            "fine_label_names": [f"fine{i}" for i in range(100)],
            "coarse_label_names": [f"coarse{i}" for i in range(20)]}, protocol=2)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(f"{top}/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue(), {f"{top}/{k}": v for k, v in members.items()}


def svhn_mat(n=12, seed=0):
    """An SVHN .mat file: X (32, 32, 3, n) uint8 and y (n, 1) with 10 standing for the digit 0."""
    import scipy.io

    rng = np.random.default_rng(seed)
    y = rng.integers(1, 11, (n, 1)).astype(np.uint8)
    y[0, 0] = 10
    buf = io.BytesIO()
    scipy.io.savemat(buf, {"X": rng.integers(0, 256, (32, 32, 3, n), dtype=np.uint8), "y": y})
    return buf.getvalue()


def image_tree(root, seed=0):
    """root/<class>/... with images of several formats and modes, a nested folder, a file whose
    extension is upper case, files that are not images, and an empty class folder 'zebra'."""
    from PIL import Image

    rng = np.random.default_rng(seed)

    def save(rel, mode, size=(5, 4), fmt=None):
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        bands = {"L": 1, "RGB": 3, "RGBA": 4, "P": 1}[mode]
        arr = rng.integers(0, 256, (size[1], size[0], bands), dtype=np.uint8)
        img = Image.fromarray(arr[..., 0] if bands == 1 else arr, "L" if bands == 1 else mode)
        if mode == "P":
            img = img.convert("P")
        img.save(path, format=fmt)

    save("cat/b.png", "RGB")
    save("cat/a.jpg", "RGB", fmt="JPEG")
    save("cat/nested/deeper/c.PNG", "L", fmt="PNG")
    save("dog/x.bmp", "RGB", fmt="BMP")
    save("dog/y.png", "RGBA")
    save("dog/z.tiff", "P", fmt="TIFF")
    save("dog/w.webp", "RGB", fmt="WEBP")
    for rel, text in (("dog/notes.txt", "not an image"), ("cat/.hidden", "x"),
                      ("loose.png", "outside any class")):
        path = os.path.join(root, rel)
        with open(path, "w") as fh:
            fh.write(text)
    os.makedirs(os.path.join(root, "zebra"), exist_ok=True)


# -- comparing two datasets ---------------------------------------------------------------------

def _is_tensor(x):
    return any(c.__name__ == "Tensor" for c in type(x).__mro__) and hasattr(x, "numpy")


def plain(value):
    """A comparable form of an item or attribute: PIL images as (mode, size, pixel bytes),
    tensors as (dtype name, shape, values), containers elementwise."""
    from PIL import Image

    if isinstance(value, Image.Image):
        return ("PIL", value.mode, value.size, value.tobytes())
    if _is_tensor(value):
        return ("tensor", str(value.dtype).rsplit(".", 1)[-1], tuple(value.shape),
                value.detach().numpy().tolist())
    if isinstance(value, np.ndarray):
        return ("ndarray", str(value.dtype), value.shape, value.tolist())
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [plain(v) for v in value])
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return (type(value).__name__, value)


def assert_same_dataset(ours, theirs, attributes=(), indices=None):
    assert type(ours).__name__ == type(theirs).__name__
    assert len(ours) == len(theirs)
    ours_root, their_root = getattr(ours, "root", None), getattr(theirs, "root", None)
    if ours_root is not None and their_root is not None:  # read from different folders
        assert repr(ours).replace(str(ours_root), str(their_root)) == repr(theirs)
    else:
        assert repr(ours) == repr(theirs)
    for name in attributes:
        assert plain(getattr(ours, name)) == plain(getattr(theirs, name)), name
    for i in range(len(theirs)) if indices is None else indices:
        assert plain(ours[i]) == plain(theirs[i]), i
