"""Checkpoints (``save``/``load``) and the .safetensors format.

Round trips of nested structures are compared with torch (torch.save + torch.load with
weights_only=True gives the oracle's view of the same objects). The rest is tapegrad's own
format and is skipped when the library under test is torch: every truncation and every
single-bit flip of a checkpoint must raise a ``CheckpointError`` (a RuntimeError) that names the
problem; foreign files (a torch.save zip, a pickle, random bytes) are recognised; a crash in the
middle of a save leaves the previous file whole. The .safetensors writer must produce the bytes
the format prescribes (built here by hand from the spec) and the bytes the reference
``safetensors`` package writes, when it is installed.
"""

from __future__ import annotations

import collections
import io
import json
import os
import pickle
import stat
import struct
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from torchcompare import raised


@pytest.fixture
def tg(lib, lib_name):
    """tapegrad itself: these tests are about tapegrad's own file formats."""
    if lib_name != "tapegrad":
        pytest.skip("tapegrad's checkpoint format")
    return lib


def roundtrip(L, obj):
    buf = io.BytesIO()
    L.save(obj, buf)
    buf.seek(0)
    return L.load(buf, weights_only=True)


def describe(obj):
    """Types all the way down (the values are compared by the snapshot)."""
    if isinstance(obj, dict):
        return [type(obj).__name__, [(describe(k), describe(v)) for k, v in obj.items()]]
    if isinstance(obj, (list, tuple)):
        return [type(obj).__name__, [describe(v) for v in obj]]
    if type(obj).__name__ == "Tensor":
        # (not is_contiguous(): torch keeps a view's strides, tapegrad saves its values)
        return ["Tensor", str(obj.dtype), list(obj.shape), obj.requires_grad, obj.is_leaf]
    return type(obj).__name__


# --------------------------------------------------------------------------------------------
# Round trips, compared with torch
# --------------------------------------------------------------------------------------------


DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
          "float64", "complex64", "complex128"]


def test_round_trip_of_every_dtype(compare):
    def scenario(L):
        obj = {}
        for name in DTYPES:
            t = (L.arange(12) % 5 - 2).reshape(3, 4).to(getattr(L, name))
            obj[name] = t
            obj[name + "_0d"] = t[1, 2].clone()
            obj[name + "_empty"] = t[:0]
        out = roundtrip(L, obj)
        # (torch cannot hand bfloat16 to NumPy: compare those values through float32)
        values = {k: v.float() if v.dtype == L.bfloat16 else v for k, v in out.items()}
        return values, describe(out)

    compare(scenario, rtol=0, atol=0)


def test_round_trip_of_views_and_nested_structures(compare):
    def scenario(L):
        base = L.arange(24.0).reshape(2, 3, 4)
        w = L.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        obj = {
            "t": base.transpose(0, 2),
            "strided": base[:, ::2, 1:],
            "expand": L.ones(3, 1).expand(3, 4),
            "leaf": w,
            "nonleaf": w * 2,
            "list": [1, 2.5, None, True, "text", (3, [4.0, {"deep": L.zeros(1)}])],
            "od": collections.OrderedDict([("b", 1), ("a", L.tensor([1, 2]))]),
            3: "int key",
            (1, 2): "tuple key",
            "inf": float("inf"),
            "big": 2**70,
            "same": [w, w],
        }
        out = roundtrip(L, obj)
        return out, describe(out), out["same"][0] is out["same"][1], out["leaf"] is out["same"][0]

    compare(scenario, rtol=0, atol=0)


@pytest.mark.parametrize("name,kw", [("SGD", {"momentum": 0.9}), ("Adam", {"amsgrad": True}),
                                     ("AdamW", {}), ("RMSprop", {"centered": True}),
                                     ("Adagrad", {})])
def test_optimizer_and_scheduler_state_dicts_survive(compare, name, kw):
    def scenario(L):
        w = L.tensor([1.0, -2.0, 0.5], requires_grad=True)
        opt = getattr(L.optim, name)([w], lr=0.1, **kw)
        sched = L.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=4)
        for _ in range(3):
            opt.zero_grad()
            (w**2).sum().backward()
            opt.step()
            sched.step()
        sd = roundtrip(L, {"opt": opt.state_dict(), "sched": sched.state_dict(), "w": w})
        w2 = sd["w"]
        opt2 = getattr(L.optim, name)([w2], lr=0.1, **kw)
        opt2.load_state_dict(sd["opt"])
        sched2 = L.optim.lr_scheduler.CosineAnnealingLR(opt2, T_max=4)
        sched2.load_state_dict(sd["sched"])
        for o, p, s in ((opt, w, sched), (opt2, w2, sched2)):
            o.zero_grad()
            (p**2).sum().backward()
            o.step()
            s.step()
        return w, w2, opt2.state_dict(), sched2.get_last_lr() == sched.get_last_lr()

    compare(scenario, rtol=1e-6)  # float32: torch's sqrt differs from NumPy's in the last bit


def test_paths_and_file_objects(compare, tmp_path):
    def scenario(L):
        p = tmp_path / f"{L.__name__}.ckpt"
        L.save({"a": L.ones(2)}, p)
        L.save({"b": L.zeros(1)}, str(p))  # overwrite through a str path
        with open(p, "rb") as fh:
            from_file = L.load(fh)
        return L.load(p), from_file, L.load(str(p), map_location="cpu")

    compare(scenario)


def test_missing_parent_directory(compare, tmp_path):
    compare(lambda L: raised(lambda: L.save({"a": 1}, str(tmp_path / "nope" / "x.ckpt"))))


# --------------------------------------------------------------------------------------------
# tapegrad's format: types beyond torch's weights_only set, errors
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
    class Thing:
        pass

    buf = io.BytesIO()
    with pytest.raises(TypeError, match="cannot store an object of type .*Thing"):
        tg.save({"x": [Thing()]}, buf)
    loop: list = []
    loop.append(loop)
    with pytest.raises(ValueError, match="reference to itself"):
        tg.save(loop, io.BytesIO())
    with pytest.raises(TypeError, match="dtype"):
        tg.save(np.zeros(2, dtype=np.uint16), io.BytesIO())


def sample_checkpoint(tg):
    buf = io.BytesIO()
    tg.save({"w": tg.arange(6.0).reshape(2, 3), "step": 3, "names": ["a", None, 1.5],
             "i": tg.tensor([1, 2], dtype=tg.int64)}, buf)
    return buf.getvalue()


def load_bytes(tg, data):
    return tg.load(io.BytesIO(data))


def test_every_truncation_is_reported(tg):
    from tapegrad.serialization import CheckpointError, TruncatedCheckpointError

    data = sample_checkpoint(tg)
    for cut in range(len(data)):
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
            with pytest.raises(CheckpointError) as info:
                load_bytes(tg, bytes(corrupt))
            kinds[type(info.value).__name__] += 1
    # flips in the 8 magic bytes make it "not a checkpoint"; all others are corruption
    assert set(kinds) == {"CorruptCheckpointError", "NotACheckpointError"}
    assert kinds["NotACheckpointError"] == 8 * 3


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


def test_foreign_files_are_named(tg, oracle, tmp_path):
    from tapegrad.serialization import NotACheckpointError

    torch_file = tmp_path / "model.pt"
    oracle.save({"w": oracle.ones(2)}, torch_file)
    with pytest.raises(NotACheckpointError, match="not a tapegrad checkpoint.*torch.save"):
        tg.load(torch_file)
    with pytest.raises(NotACheckpointError, match=r"model\.pt"):
        tg.load(str(torch_file))
    with pytest.raises(NotACheckpointError, match="pickle"):
        load_bytes(tg, pickle.dumps({"a": 1}, protocol=2))
    rng = np.random.default_rng(0)
    for n in (9, 100, 5000):
        with pytest.raises(NotACheckpointError, match="not a tapegrad checkpoint"):
            load_bytes(tg, rng.bytes(n))
    with pytest.raises(NotACheckpointError):
        load_bytes(tg, b"hello world, this is text")
    np_file = io.BytesIO()
    np.save(np_file, np.zeros(3))
    with pytest.raises(NotACheckpointError, match="NumPy"):
        load_bytes(tg, np_file.getvalue())


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
    import tapegrad.serialization as ser

    path = tmp_path / "model.ckpt"
    tg.save({"version": 1, "w": tg.ones(3)}, path)
    before = path.read_bytes()
    calls = {"n": 0}
    real = ser._le_bytes

    def failing(arr):
        calls["n"] += 1
        if calls["n"] == 2:  # the header, the manifest and one tensor are already written
            raise OSError("disk full (simulated)")
        return real(arr)

    monkeypatch.setattr(ser, "_le_bytes", failing)
    with pytest.raises(OSError, match="simulated"):
        tg.save({"version": 2, "w": tg.zeros(1000), "v": tg.zeros(1000)}, path)
    assert path.read_bytes() == before
    assert tg.load(path)["version"] == 1
    assert sorted(os.listdir(tmp_path)) == ["model.ckpt"]  # the temporary file is gone


def test_crash_mid_save_leaves_the_old_file_whole(tg, tmp_path):
    """A process killed half-way through writing (os._exit) cannot damage the old file."""
    path = tmp_path / "model.ckpt"
    tg.save({"version": 1}, path)
    code = textwrap.dedent(
        f"""
        import os, tapegrad, tapegrad.serialization as ser
        real = ser._le_bytes
        def crash(arr):
            out = real(arr)
            os._exit(17)  # dies after the header and manifest went out
        ser._le_bytes = crash
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


# --------------------------------------------------------------------------------------------
# .safetensors
# --------------------------------------------------------------------------------------------


def by_hand(tensors, metadata=None):
    """The .safetensors bytes built from the spec: (name, code, shape, raw bytes) in file order."""
    header = {}
    if metadata is not None:
        header["__metadata__"] = metadata
    data, offset = b"", 0
    for name, code, shape, raw in tensors:
        header[name] = {"dtype": code, "shape": shape, "data_offsets": [offset, offset + len(raw)]}
        data += raw
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - (8 + len(text)) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + data


def test_safetensors_bytes_follow_the_spec(tg):
    from tapegrad.utils import safetensors as st

    tensors = {
        "small": tg.tensor([1, -2, 3], dtype=tg.int8),
        "b": tg.tensor([[1.5, -2.0]], dtype=tg.float32),
        "a": tg.tensor([0.25], dtype=tg.float32),
        "d": tg.tensor(7.0, dtype=tg.float64),
        "flag": tg.tensor([True, False]),
    }
    expected = by_hand(
        [
            ("d", "F64", [], struct.pack("<d", 7.0)),
            ("a", "F32", [1], struct.pack("<f", 0.25)),
            ("b", "F32", [1, 2], struct.pack("<2f", 1.5, -2.0)),
            ("small", "I8", [3], struct.pack("<3b", 1, -2, 3)),
            ("flag", "BOOL", [2], b"\x01\x00"),
        ],
        metadata={"format": "pt", "z": "last"},
    )
    assert st.save(tensors, metadata={"z": "last", "format": "pt"}) == expected
    back = st.load(expected)
    assert list(back) == ["a", "b", "d", "flag", "small"]
    for k, v in tensors.items():
        assert back[k].dtype == v.dtype and back[k].tolist() == v.tolist()


def test_safetensors_against_torch_raw_bytes(tg, oracle):
    """Whatever the package: our tensors' bytes are torch's tensors' bytes."""
    from tapegrad.utils import safetensors as st

    rng = np.random.default_rng(3)
    for name in ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16",
                 "uint8", "int8", "bool", "complex64"]:
        ref = (oracle.tensor(rng.standard_normal((3, 5)) * 4)).to(getattr(oracle, name))
        raw = ref.reshape(-1).view(oracle.uint8).numpy().tobytes()
        mine = st.load(st.save({"x": tg.load(io.BytesIO(_torch_as_safetensors(oracle, ref)))[
            "x"]}))["x"]
        assert mine.dtype.name == name
        assert mine._data.tobytes() == raw


def _torch_as_safetensors(oracle, t):
    """Hand-built safetensors bytes of a torch tensor (no package needed)."""
    codes = {"float32": "F32", "float64": "F64", "float16": "F16", "bfloat16": "BF16",
             "int64": "I64", "int32": "I32", "int16": "I16", "uint8": "U8", "int8": "I8",
             "bool": "BOOL", "complex64": "C64"}
    raw = t.contiguous().reshape(-1).view(oracle.uint8).numpy().tobytes()
    return by_hand([("x", codes[str(t.dtype).split(".")[1]], list(t.shape), raw)])


def test_safetensors_package_interop(tg, oracle, tmp_path):
    stt = pytest.importorskip("safetensors.torch")
    from tapegrad.utils import safetensors as st

    rng = np.random.default_rng(0)
    names = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "uint8",
             "int8", "bool", "complex64"]
    ours, theirs = {}, {}
    for i, name in enumerate(names):
        shape = [(2, 3), (0, 4), (), (5,)][i % 4]
        t = oracle.tensor(rng.standard_normal(shape) * 3).to(getattr(oracle, name))
        theirs[f"t{i}.{name}"] = t
        ours[f"t{i}.{name}"] = tg.load(io.BytesIO(_torch_as_safetensors(oracle, t)))["x"]
    meta = {"note": "ünïcode"}
    assert st.save(ours, metadata=meta) == stt.save(theirs, metadata=meta)
    assert st.save(ours) == stt.save(theirs)
    # the package orders several metadata keys at random (a hash map); we sort them
    two = {"format": "pt", "note": "x"}
    mine, ref = st.save(ours, metadata=two), stt.save(theirs, metadata=two)
    n = struct.unpack("<Q", ref[:8])[0]
    assert len(mine) == len(ref) and mine[8 + n:] == ref[8 + n:]
    assert json.loads(mine[8:8 + n]) == json.loads(ref[8:8 + n])
    st.save_file(ours, tmp_path / "ours.safetensors", metadata=meta)
    stt.save_file(theirs, tmp_path / "theirs.safetensors", metadata=meta)
    assert (tmp_path / "ours.safetensors").read_bytes() == (
        tmp_path / "theirs.safetensors").read_bytes()
    loaded_by_them = stt.load_file(tmp_path / "ours.safetensors")
    loaded_by_us = st.load_file(tmp_path / "theirs.safetensors")
    assert list(loaded_by_us) == sorted(theirs)
    for k, t in theirs.items():
        assert oracle.equal(loaded_by_them[k], t)
        raw = t.contiguous().reshape(-1).view(oracle.uint8).numpy().tobytes()
        assert loaded_by_us[k]._data.tobytes() == raw
        assert loaded_by_us[k].dtype.name == str(t.dtype).split(".")[1]
    assert tg.load(tmp_path / "theirs.safetensors").keys() == loaded_by_us.keys()


def test_safetensors_save_errors_match_the_package(tg):
    from tapegrad.utils import safetensors as st

    x = tg.ones(4)
    with pytest.raises(ValueError, match="non contiguous tensor: `t`"):
        st.save({"t": tg.ones(2, 3).t()})
    with pytest.raises(RuntimeError, match="Some tensors share memory"):
        st.save({"a": x, "b": x[1:3]})
    st.save({"a": x[:2].clone(), "b": x[2:].clone()})  # separate memory is fine
    with pytest.raises(ValueError, match="Expected a dict"):
        st.save([x])
    with pytest.raises(ValueError, match="Key `a` is invalid"):
        st.save({"a": 1})
    with pytest.raises(TypeError, match="not an instance of 'str'"):
        st.save({1: x})
    with pytest.raises(TypeError, match="metadata"):
        st.save({"a": x}, metadata={"k": 1})
    with pytest.raises(ValueError, match="complex128"):
        st.save({"a": tg.zeros(1, dtype=tg.complex128)})


def test_safetensors_load_errors(tg):
    from tapegrad.serialization import CheckpointError
    from tapegrad.utils import safetensors as st

    ok = {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}
    cases = [
        (b"", "header too small"),
        (struct.pack("<Q", 100) + b"{}", "invalid header length"),
        (struct.pack("<Q", 2) + b"{]", "invalid JSON"),
        (by_hand([("a", "F32", [1], b"\0" * 4)]) + b"\0\0", "not fully covered"),
        (by_hand([("a", "F32", [2], b"\0" * 4)]), "invalid shape, data type, or offset"),
        (by_hand([("a", "X32", [1], b"\0" * 4)]), "unknown dtype"),
        (by_hand([("a", "U16", [2], b"\0" * 4)]), "does not support"),
        (by_hand([], metadata={"k": 1}), "__metadata__"),
    ]
    overlapping = {"a": ok, "b": ok}
    text = json.dumps(overlapping).encode()
    cases.append((struct.pack("<Q", len(text)) + text + b"\0" * 4, "invalid offset"))
    for data, message in cases:
        with pytest.raises(st.SafetensorError, match=message):
            st.load(data)
        assert issubclass(st.SafetensorError, CheckpointError)


def test_safe_open_and_atomic_save_file(tg, tmp_path):
    from tapegrad.utils import safetensors as st

    path = tmp_path / "w.safetensors"
    st.save_file({"w": tg.ones(2, 2), "b": tg.zeros(2)}, path, metadata={"epoch": "3"})
    with st.safe_open(path, framework="pt", device="cpu") as f:
        assert f.keys() == ["b", "w"] and f.metadata() == {"epoch": "3"}
        assert f.get_tensor("w").tolist() == [[1.0, 1.0], [1.0, 1.0]]
        with pytest.raises(st.SafetensorError, match="does not contain tensor nope"):
            f.get_tensor("nope")
    with pytest.raises(ValueError):
        st.save_file({"w": tg.ones(2, 2).t()}, path)
    assert st.load_file(path)["b"].tolist() == [0.0, 0.0]
    assert sorted(os.listdir(tmp_path)) == ["w.safetensors"]


def test_parameters_come_back_as_parameters(tg):
    nn = pytest.importorskip("tapegrad.nn")
    if not hasattr(nn, "Parameter"):
        pytest.skip("tapegrad.nn.Parameter is not there yet")
    p = nn.Parameter(tg.ones(2))
    out = roundtrip(tg, {"p": p})
    assert type(out["p"]) is type(p) and out["p"].requires_grad


def test_load_refuses_a_non_file_object(compare):
    """torch and tapegrad raise the same exception type for ``load(3.5)``."""
    compare(lambda L: type(raised(lambda: L.load(3.5))).__name__)
