"""The .safetensors format: the writer produces the bytes the format prescribes (built here by
hand from the spec) and the bytes the reference ``safetensors`` package writes, when it is
installed; the reader refuses malformed files with the package's messages.
"""

from __future__ import annotations

import io
import json
import os
import struct

import numpy as np
import pytest


@pytest.fixture
def tg(lib, lib_name):
    """tapegrad itself: these tests are about tapegrad's reader and writer."""
    if lib_name != "tapegrad":
        pytest.skip("tapegrad's safetensors module")
    return lib


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


