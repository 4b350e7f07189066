"""Hostile and broken files: ``tapegrad.load`` builds data or refuses, and never runs code.

Every payload here would create a sentinel file if any of it ran. Each crafted pickle is loaded
by real torch and by tapegrad, which must raise the same exception type with the same message
(torch's ``weights_only`` unpickler is the specification); the sentinel must never appear.
Broken archives (records whose sizes lie, a tensor claiming more than its storage, truncated
files, flipped bits, random bytes) must each raise a clear error and never give wrong numbers.
"""

from __future__ import annotations

import io
import os
import re
import struct
import subprocess
import zipfile

import numpy as np
import pytest
from torchcompare import normalize_text, raised


@pytest.fixture
def tg(lib, lib_name):
    """tapegrad itself, loading files crafted against real torch."""
    if lib_name != "tapegrad":
        pytest.skip("compares tapegrad's loader with torch's on crafted files")
    return lib


@pytest.fixture
def sentinel(tmp_path):
    path = tmp_path / "PWNED"
    yield path
    assert not path.exists(), "a payload ran"


# -- a small pickle assembler (protocol 2 instructions) ------------------------------------------


def glob(module, name):
    return b"c" + f"{module}\n{name}\n".encode()


def text(s):
    raw = s.encode()
    return b"X" + struct.pack("<I", len(raw)) + raw


def num(n):
    if -(2**31) <= n < 2**31:
        return b"J" + struct.pack("<i", n)
    raw = n.to_bytes(16, "little", signed=True)
    return b"\x8a" + bytes([len(raw)]) + raw  # LONG1


def tup(*items):
    return b"(" + b"".join(items) + b"t"


def call(func, *args):
    return func + tup(*args) + b"R"


def program(body):
    return b"\x80\x02" + body + b"."


def tensor(offset=0, size=(4,), stride=(1,), numel=4, storage="FloatStorage", key="0"):
    pid = tup(text("storage"), glob("torch", storage), text(key), text("cpu"), num(numel)) + b"Q"
    return call(glob("torch._utils", "_rebuild_tensor_v2"), pid, num(offset),
                tup(*map(num, size)), tup(*map(num, stride)), b"\x89",
                call(glob("collections", "OrderedDict")))


def archive(pkl, storages=None, **extra):
    """A zip archive as torch writes one, around the pickle ``pkl``."""
    out = io.BytesIO()
    records = {"data.pkl": pkl, "byteorder": b"little", "version": b"3\n", **extra}
    for key, raw in (storages if storages is not None else {"0": bytes(16)}).items():
        records[f"data/{key}"] = raw
    with zipfile.ZipFile(out, "w") as z:
        for name, raw in records.items():
            if raw is not None:
                z.writestr("archive/" + name, raw)
    return out.getvalue()


def legacy(pkl):
    """The same pickle in torch's stream format before 1.6."""
    import pickle

    head = b"".join(pickle.dumps(v, protocol=2) for v in (
        0x1950A86A20F9469CFC6C, 1001, {"protocol_version": 1001, "little_endian": True,
                                       "type_sizes": {"short": 2, "int": 4, "long": 4}}))
    return head + pkl + pickle.dumps([], protocol=2)


def both(tg, oracle, data, **kw):
    """Load ``data`` with torch and with tapegrad: the same error, or the same result.

    The same error is the same message and a type that is torch's or a subclass of it
    (tapegrad's ``CheckpointError``s are RuntimeErrors)."""
    expected = raised(lambda: oracle.load(io.BytesIO(data), **kw))
    try:
        actual = tg.load(io.BytesIO(data), **kw)
    except Exception as exc:  # noqa: BLE001 - compared with torch's below
        assert hasattr(expected, "type"), f"torch loads it, tapegrad raised {exc!r}"
        assert expected.type in [c.__name__ for c in type(exc).__mro__], (expected, exc)
        # (torch's C++ reader prefixes where in its source the check failed; we do not)
        torch_message = re.sub(r"^\[enforce fail at [^\]]*\] \. ", "", expected.message)
        assert normalize_text(str(exc)) == torch_message
        return expected
    assert not hasattr(expected, "type"), f"tapegrad loads it, torch raised {expected}"
    return actual



# -- payloads ----------------------------------------------------------------------------------


def payloads(sentinel):
    touch = ["touch", str(sentinel)]
    return {
        "os.system": call(glob("posix", "system"), text(f"touch {sentinel}")),
        "builtins.eval": call(glob("__builtin__", "eval"), text(f"open({str(sentinel)!r}, 'w')")),
        "builtins.exec": call(glob("builtins", "exec"), text(f"open({str(sentinel)!r}, 'w')")),
        "subprocess.Popen": call(glob("subprocess", "Popen"), b"]" + b"(" + b"".join(
            map(text, touch)) + b"e"),
        "os via getattr": call(glob("builtins", "getattr"), glob("os", "system"),
                               text("system")),
        "importlib": call(glob("importlib", "import_module"), text("os")),
        "reduce of a string": text("posix.system") + tup(text("x")) + b"R",
        "newobj of a list": b"]" + b")" + b"\x81",
        "build of a list": b"]" + b"}" + b"b",
        "append to a dict": b"}" + text("x") + b"a",
        "setitem on a list": b"]" + text("k") + text("v") + b"s",
        "INST": b"(" + b"iposix\nsystem\n",
        "persistent module": tup(text("module"), text("x")) + b"Q",
        "EXT1": b"\x82\x01",
        "STACK_GLOBAL": text("posix") + text("system") + b"\x93",
        "stack underflow": b"R",
    }


@pytest.mark.parametrize("name", list(payloads("x")))
def test_payloads_are_refused_as_torch_refuses_them(tg, oracle, sentinel, name):
    body = payloads(sentinel)[name]
    for data in (archive(program(body)), legacy(program(body))):
        for kw in ({}, {"weights_only": True}):
            expected = both(tg, oracle, data, **kw)
            assert expected.type in ("UnpicklingError", "KeyError", "IndexError"), expected
    if name in ("os.system", "builtins.eval", "subprocess.Popen"):
        error = raised(lambda: tg.load(io.BytesIO(archive(program(body)))))
        assert error.type == "UnpicklingError" and "Weights only load failed" in error.message


def test_real_reduce_payloads_written_by_torch(tg, oracle, sentinel):
    """Objects whose ``__reduce__`` runs a command, pickled by torch.save itself."""
    target = str(sentinel)

    class System:
        def __reduce__(self):
            return os.system, (f"touch {target}",)

    class Popen:
        def __reduce__(self):
            return subprocess.Popen, (["touch", target],)

    class Eval:
        def __reduce__(self):
            return eval, (f"open({target!r}, 'w')",)

    for payload in (System(), Popen(), Eval()):
        for new in (True, False):
            buf = io.BytesIO()
            oracle.save({"w": oracle.ones(2), "x": payload}, buf,
                        _use_new_zipfile_serialization=new)
            expected = both(tg, oracle, buf.getvalue())
            assert expected.type == "UnpicklingError"


def test_the_os_system_message(tg, sentinel):
    error = raised(lambda: tg.load(io.BytesIO(archive(program(payloads(sentinel)["os.system"])))))
    assert error.message.startswith("Weights only load failed.")
    assert "Trying to load unsupported GLOBAL posix.system whose module posix is blocked." in (
        error.message)
    error = raised(lambda: tg.load(io.BytesIO(archive(program(
        payloads(sentinel)["builtins.eval"])))))
    assert ("Unsupported global: GLOBAL eval was not an allowed global by default. Please use "
            "`torch.serialization.add_safe_globals([eval])`") in error.message


class Point:
    def __init__(self, x):
        self.x = x

    def __eq__(self, other):
        return isinstance(other, Point) and other.x == self.x


def test_safe_globals(tg, oracle):
    buf = io.BytesIO()
    oracle.save({"p": Point(3), "w": oracle.ones(1)}, buf)
    data = buf.getvalue()
    expected = both(tg, oracle, data)
    assert expected.type == "UnpicklingError" and "Point" in expected.message
    for L in (oracle, tg):
        with L.serialization.safe_globals([Point]):
            assert Point in L.serialization.get_safe_globals()
            assert L.load(io.BytesIO(data))["p"] == Point(3)
        assert Point not in L.serialization.get_safe_globals()
        L.serialization.add_safe_globals([(Point, f"{Point.__module__}.Point")])
        try:
            assert L.load(io.BytesIO(data))["p"] == Point(3)
        finally:
            L.serialization.clear_safe_globals()
        assert raised(lambda L=L: L.load(io.BytesIO(data))) == expected


def test_protocol_4_is_refused_as_torch_refuses_it(tg, oracle):
    buf = io.BytesIO()
    oracle.save({"w": oracle.ones(1)}, buf, pickle_protocol=4)
    with pytest.warns(UserWarning, match="Detected pickle protocol 4"):
        expected = both(tg, oracle, buf.getvalue())
    assert expected.type == "UnpicklingError" and "Unsupported operand 149" in expected.message
    assert tg.load(io.BytesIO(buf.getvalue()), weights_only=False)["w"].tolist() == [1.0]


# -- archives that lie -------------------------------------------------------------------------


@pytest.mark.parametrize("storages", [{"0": bytes(8)}, {"0": bytes(24)}, {}, {"1": bytes(16)}])
def test_storage_records_that_lie_about_their_size(tg, oracle, storages):
    expected = both(tg, oracle, archive(program(tensor()), storages))
    assert expected.type == "RuntimeError"


def test_missing_pickle_and_missing_version(tg, oracle):
    assert both(tg, oracle, archive(None)).type == "RuntimeError"
    assert both(tg, oracle, archive(program(tensor()), version=None)).type == "RuntimeError"
    assert both(tg, oracle, archive(program(tensor()), version=b"99\n")).type == "RuntimeError"
    assert both(tg, oracle, archive(program(tensor()), byteorder=b"middle")).type == "ValueError"


def test_a_tensor_larger_than_its_storage_is_refused(tg):
    from tapegrad.serialization import CorruptCheckpointError

    for case in (dict(size=(10,)), dict(offset=3, size=(2,)), dict(size=(2, 2), stride=(3, 1)),
                 dict(size=(2,), stride=(1 << 40,))):
        with pytest.raises(CorruptCheckpointError, match="needs .* elements, but its storage"):
            tg.load(io.BytesIO(archive(program(tensor(**case)))))
    # (torch resizes the storage instead, giving uninitialised memory)
    out = tg.load(io.BytesIO(archive(program(tensor(offset=2, size=(2,))),
                                     {"0": np.arange(4, dtype=np.float32).tobytes()})))
    assert out.tolist() == [2.0, 3.0]


def test_negative_offsets_and_strides(tg, oracle):
    for case in (dict(offset=-1), dict(size=(2,), stride=(-1,))):
        expected = both(tg, oracle, archive(program(tensor(**case))))
        assert expected.type == "RuntimeError"


def test_central_directory_that_lies(tg, oracle):
    buf = io.BytesIO()
    oracle.save({"w": oracle.arange(4.0)}, buf)
    good = buf.getvalue()
    entry = good.index(b"PK\x01\x02", good.index(b"PK\x01\x02") + 1)
    entry = good.rindex(b"PK\x01\x02", 0, good.index(b"archive/data/0", entry))
    for size in (8, 10**6):
        bad = bytearray(good)
        struct.pack_into("<II", bad, entry + 20, size, size)
        assert both(tg, oracle, bytes(bad)).type == "RuntimeError"


def small_checkpoint(oracle):
    buf = io.BytesIO()
    x = oracle.arange(6.0)
    oracle.save({"x": x, "v": x[1:3], "i": oracle.tensor([7, 8])}, buf)
    return buf.getvalue()


def test_every_truncation_is_an_error(tg, oracle):
    from tapegrad.serialization import CheckpointError

    data = small_checkpoint(oracle)
    for cut in range(len(data)):
        expected = (CheckpointError,) if cut >= 4 else (EOFError, Exception)
        with pytest.raises(expected):
            tg.load(io.BytesIO(data[:cut]))


def test_every_bit_flip_is_an_error_or_harmless(tg, oracle):
    """A flipped bit is found (the records' CRC-32s, the zip structure) or lands where it
    changes nothing (padding, times, the serialization id): never a different number."""
    from tapegrad.serialization._zip import ZipReader

    data = small_checkpoint(oracle)
    reference = tg.load(io.BytesIO(data))
    reader = ZipReader(io.BytesIO(data), "<bytes>")
    payload = set()  # where the bytes of the records a load reads lie: a flip there is found
    for name, entry in reader.entries.items():
        if name.split("/", 1)[1] in ("data.pkl", "version", "byteorder") or "/data/" in name:
            start = reader.data_offset(name)
            payload.update(range(start, start + entry.size))
    found = harmless = 0
    for i in range(len(data)):
        bad = bytearray(data)
        bad[i] ^= 1 << (i % 8)
        try:
            out = tg.load(io.BytesIO(bytes(bad)))
        except Exception:  # noqa: BLE001 - any clear error is right here
            found += 1
            continue
        assert i not in payload, f"a flipped bit at {i} went unnoticed"
        assert list(out) == list(reference)
        for k in reference:
            assert out[k].dtype == reference[k].dtype
            assert out[k].tolist() == reference[k].tolist()
        harmless += 1
    assert found >= len(payload) and harmless > 0


def test_corrupted_storage_bytes_fail_their_checksum(tg, oracle):
    from tapegrad.serialization import CorruptCheckpointError

    data = bytearray(small_checkpoint(oracle))
    at = bytes(data).index(np.arange(6, dtype=np.float32).tobytes())
    data[at + 5] ^= 1
    assert oracle.load(io.BytesIO(bytes(data)))["x"][1].item() != 1.0  # torch does not notice
    with pytest.raises(CorruptCheckpointError, match="CRC-32 checksum mismatch"):
        tg.load(io.BytesIO(bytes(data)))


@pytest.mark.parametrize("data", [b"", b"hello world", b"\x80\x02}q\x00.",
                                  np.random.default_rng(0).bytes(100),
                                  np.random.default_rng(1).bytes(5000)],
                         ids=["empty", "text", "plain pickle", "random", "random5000"])
def test_files_that_are_not_checkpoints(tg, oracle, data):
    expected = raised(lambda: oracle.load(io.BytesIO(data)))
    actual = raised(lambda: tg.load(io.BytesIO(data)))
    assert actual.type == expected.type
    if data:  # (torch's EOFError for an empty file has no message; ours says so)
        assert actual == expected


def test_deflated_and_empty_and_torchscript_archives(tg, oracle):
    from tapegrad.serialization import CheckpointError, UnsupportedCheckpointError

    good = small_checkpoint(oracle)
    z = zipfile.ZipFile(io.BytesIO(good))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as zz:
        for n in z.namelist():
            zz.writestr(n, z.read(n))
    assert tg.load(io.BytesIO(out.getvalue()))["v"].tolist() == [1.0, 2.0]
    empty = io.BytesIO()
    zipfile.ZipFile(empty, "w").close()
    with pytest.raises(CheckpointError):
        tg.load(io.BytesIO(b"PK\x03\x04" + empty.getvalue()))
    with pytest.raises(UnsupportedCheckpointError, match="TorchScript"):
        tg.load(io.BytesIO(archive(program(tensor()), **{"constants.pkl": b""})))


def test_unsafe_globals_in_checkpoint(tg, oracle, sentinel):
    buf = io.BytesIO()
    oracle.save({"p": Point(3), "s": slice(1, 2), "w": oracle.ones(1)}, buf)
    files = [buf.getvalue(), archive(program(payloads(sentinel)["subprocess.Popen"]))]
    for data in files:
        expected = oracle.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(data))
        actual = tg.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(data))
        assert sorted(actual) == sorted(expected) and expected
    with tg.serialization.safe_globals([Point]):
        assert tg.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(files[0])) == [
            "builtins.slice"]
    legacy_file = legacy(program(tensor()))
    assert raised(lambda: tg.serialization.get_unsafe_globals_in_checkpoint(
        io.BytesIO(legacy_file))) == raised(
        lambda: oracle.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(legacy_file)))
