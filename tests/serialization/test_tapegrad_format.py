"""tapegrad's own checkpoint format, still read by ``tapegrad.load``, and atomic saving.

Files in the older tapegrad format are written here with ``write_checkpoint`` (``save`` now
writes torch's format): every truncation and every single-bit flip of such a file must raise a
``CheckpointError`` (a RuntimeError) that names the problem. A crash in the middle of
``tapegrad.save`` to a path leaves the previous file whole.
"""

from __future__ import annotations

import collections
import io
import os
import stat
import struct
import subprocess
import sys
import textwrap

import numpy as np
import pytest


@pytest.fixture
def tg(lib, lib_name):
    """tapegrad itself: these tests are about tapegrad's own file format and writer."""
    if lib_name != "tapegrad":
        pytest.skip("tapegrad's checkpoint format")
    return lib


def roundtrip(tg, obj):
    from tapegrad.serialization._tapegrad_format import write_checkpoint

    buf = io.BytesIO()
    write_checkpoint(obj, buf)
    buf.seek(0)
    return tg.load(buf, weights_only=True)


# --------------------------------------------------------------------------------------------
# the format: types beyond torch's weights_only set, errors
# --------------------------------------------------------------------------------------------


def test_more_types_round_trip(tg):
    obj = {
        "bytes": b"\x00\xff",
        "complex": 1.5 - 2j,
        "nan": float("nan"),
        "ctr": collections.Counter([2, 2, 5]),
        "dtype": tg.float16,
        "size": tg.Size([2, 3]),
        "device": tg.device("cpu"),
        "ndarray": np.arange(6, dtype=np.int16).reshape(2, 3)[:, ::2],
        "npscalar": np.float32(2.5),
        "neg0": -0.0,
    }
    out = roundtrip(tg, obj)
    assert out["bytes"] == b"\x00\xff" and out["complex"] == 1.5 - 2j
    assert np.isnan(out["nan"]) and type(out["ctr"]) is collections.Counter
    assert out["ctr"] == collections.Counter([2, 2, 5])
    assert out["dtype"] is tg.float16 and out["size"] == tg.Size([2, 3])
    assert str(out["device"]) == "cpu"
    np.testing.assert_array_equal(out["ndarray"], obj["ndarray"])
    assert out["ndarray"].dtype == np.int16
    assert out["npscalar"] == np.float32(2.5) and out["npscalar"].dtype == np.float32
    assert str(out["neg0"]) == "-0.0"


def test_loaded_tensors_are_writable_and_independent(tg):
    a = tg.arange(4.0)
    out = roundtrip(tg, {"a": a, "b": a * 2})
    out["a"].add_(1)
    assert out["a"].tolist() == [1.0, 2.0, 3.0, 4.0] and a.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert out["b"].tolist() == [0.0, 2.0, 4.0, 6.0]


def test_unsupported_objects_are_refused_at_save(tg):
    from tapegrad.serialization._tapegrad_format import write_checkpoint

    class Thing:
        pass

    buf = io.BytesIO()
    with pytest.raises(TypeError, match="cannot store an object of type .*Thing"):
        write_checkpoint({"x": [Thing()]}, buf)
    loop: list = []
    loop.append(loop)
    with pytest.raises(ValueError, match="reference to itself"):
        write_checkpoint(loop, io.BytesIO())
    with pytest.raises(TypeError, match="dtype"):
        write_checkpoint(np.zeros(2, dtype="M8[s]"), io.BytesIO())


def sample_checkpoint(tg):
    from tapegrad.serialization._tapegrad_format import write_checkpoint

    buf = io.BytesIO()
    write_checkpoint({"w": tg.arange(6.0).reshape(2, 3), "step": 3, "names": ["a", None, 1.5],
                      "i": tg.tensor([1, 2], dtype=tg.int64)}, buf)
    return buf.getvalue()


def load_bytes(tg, data):
    return tg.load(io.BytesIO(data))


def test_every_truncation_is_reported(tg):
    from tapegrad.serialization import CheckpointError, TruncatedCheckpointError

    data = sample_checkpoint(tg)
    with pytest.raises(EOFError, match="empty"):  # torch's type for an empty file
        load_bytes(tg, b"")
    for cut in range(1, len(data)):
        with pytest.raises(TruncatedCheckpointError) as info:
            load_bytes(tg, data[:cut])
        assert isinstance(info.value, CheckpointError) and isinstance(info.value, RuntimeError)
        assert "truncated" in str(info.value) or "empty" in str(info.value)


def test_every_bit_flip_is_detected(tg):
    from tapegrad.serialization import CheckpointError

    data = sample_checkpoint(tg)
    kinds = collections.Counter()
    for i in range(len(data)):
        for bit in (0, 3, 7):
            corrupt = bytearray(data)
            corrupt[i] ^= 1 << bit
            expected = CheckpointError if i >= 8 else Exception
            with pytest.raises(expected) as info:
                load_bytes(tg, bytes(corrupt))
            kinds["magic" if i < 8 else type(info.value).__name__] += 1
    # a flip in the 8 magic bytes makes it some other file (torch's reader then refuses it);
    # every other flip is found corrupted
    assert set(kinds) == {"CorruptCheckpointError", "magic"}


def test_corruption_messages(tg):
    from tapegrad.serialization import CorruptCheckpointError

    data = sample_checkpoint(tg)
    payload = bytearray(data)
    payload[-60] ^= 0x10  # inside the tensor bytes
    with pytest.raises(CorruptCheckpointError, match="SHA-256 checksum mismatch"):
        load_bytes(tg, bytes(payload))
    header = bytearray(data)
    header[20] ^= 1  # a length field
    with pytest.raises(CorruptCheckpointError, match="header is corrupted"):
        load_bytes(tg, bytes(header))
    with pytest.raises(CorruptCheckpointError, match="unexpected bytes"):
        load_bytes(tg, data + b"\0")


def test_newer_format_version_is_refused(tg):
    import hashlib
    import zlib

    from tapegrad.serialization import UnsupportedCheckpointError

    data = bytearray(sample_checkpoint(tg))
    struct.pack_into("<H", data, 8, 99)
    struct.pack_into("<I", data, 40, zlib.crc32(bytes(data[:40])))
    body = len(data) - 40
    data[body:body + 32] = hashlib.sha256(bytes(data[:body])).digest()
    with pytest.raises(UnsupportedCheckpointError, match="newer tapegrad.*version 99"):
        load_bytes(tg, bytes(data))


def test_map_location_and_bad_arguments(tg, tmp_path):
    data = sample_checkpoint(tg)
    assert load_bytes(tg, data)["step"] == 3
    assert tg.load(io.BytesIO(data), map_location=tg.device("cpu"))["step"] == 3
    assert tg.load(io.BytesIO(data), map_location={"cuda:0": "cpu"})["step"] == 3
    assert tg.load(io.BytesIO(data), weights_only=False)["step"] == 3
    with pytest.raises(RuntimeError, match="cuda"):
        tg.load(io.BytesIO(data), map_location="cuda")
    with pytest.raises(FileNotFoundError):
        tg.load(tmp_path / "missing.ckpt")
    with pytest.raises(AttributeError, match="file object"):
        tg.load(42)
    with pytest.raises(TypeError, match="binary mode"):
        tg.load(io.StringIO("text"))



# --------------------------------------------------------------------------------------------
# Atomic writes
# --------------------------------------------------------------------------------------------


def test_failed_save_leaves_the_old_file_whole(tg, tmp_path, monkeypatch):
    from tapegrad.serialization import _zip

    path = tmp_path / "model.pt"
    tg.save({"version": 1, "w": tg.ones(3)}, path)
    before = path.read_bytes()
    real = _zip.ZipWriter.write_record

    def failing(self, name, data):
        if name.startswith("data/"):  # the pickle and three records are already written
            raise OSError("disk full (simulated)")
        return real(self, name, data)

    monkeypatch.setattr(_zip.ZipWriter, "write_record", failing)
    with pytest.raises(OSError, match="simulated"):
        tg.save({"version": 2, "w": tg.zeros(1000), "v": tg.zeros(1000)}, path)
    assert path.read_bytes() == before
    assert tg.load(path)["version"] == 1
    assert sorted(os.listdir(tmp_path)) == ["model.pt"]  # the temporary file is gone


def test_crash_mid_save_leaves_the_old_file_whole(tg, tmp_path):
    """A process killed half-way through writing (os._exit) cannot damage the old file."""
    path = tmp_path / "model.pt"
    tg.save({"version": 1}, path)
    code = textwrap.dedent(
        f"""
        import os, tapegrad
        from tapegrad.serialization import _zip
        real = _zip.ZipWriter.write_record
        def crash(self, name, data):
            if name.startswith("data/"):
                os._exit(17)  # dies after the pickle went out
            return real(self, name, data)
        _zip.ZipWriter.write_record = crash
        tapegrad.save({{"version": 2, "w": tapegrad.ones(100000)}}, {str(path)!r})
        """
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=120)
    assert proc.returncode == 17, proc.stderr
    assert tg.load(path) == {"version": 1}


def test_save_keeps_mode_and_follows_symlinks(tg, tmp_path):
    target = tmp_path / "real.ckpt"
    tg.save({"a": 1}, target)
    os.chmod(target, 0o640)
    link = tmp_path / "link.ckpt"
    link.symlink_to(target)
    tg.save({"a": 2}, link)
    assert link.is_symlink() and tg.load(target) == {"a": 2}
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o640
    fresh = tmp_path / "fresh.ckpt"
    tg.save({}, fresh)
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(os.stat(fresh).st_mode) == 0o666 & ~umask

