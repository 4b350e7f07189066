"""torch's checkpoint format, both ways: ``tapegrad.save`` files read by real ``torch.load`` and
``torch.save`` files read by ``tapegrad.load``.

Round trips within one library are compared with torch through the ``compare`` fixture. The
cross-library tests save with one library and load with the other: every dtype, views sharing
a storage (memory shared again after loading), non-contiguous strides, 0-d and empty tensors,
nested containers, state_dicts of an MLP and a small CNN (the loaded weights must give the
same outputs), optimizer state_dicts, torch's pre-1.6 stream format, zip64 records. For the
same object both libraries write the same archive, record for record (only the random
serialization id differs).
"""

from __future__ import annotations

import collections
import io
import pickle
import warnings
import zipfile

import numpy as np
import pytest
from torchcompare import raised


@pytest.fixture
def tg(lib, lib_name):
    """tapegrad itself, for the tests that pit it against real torch."""
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
        return ["Tensor", str(obj.dtype), list(obj.shape), list(obj.stride()), obj.requires_grad,
                obj.is_leaf]
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


# --------------------------------------------------------------------------------------------
# Across the two libraries
# --------------------------------------------------------------------------------------------


def saved(L, obj, **kw):
    buf = io.BytesIO()
    L.save(obj, buf, **kw)
    return buf.getvalue()


def as_numpy(t):
    """The values of a torch or tapegrad tensor (bfloat16 through float32)."""
    if str(t.dtype) == "torch.bfloat16":
        t = t.float()
    return np.asarray(t.detach().numpy() if hasattr(t, "detach") else t)


def same_tensor(ours, theirs):
    assert str(ours.dtype) == str(theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert tuple(ours.stride()) == tuple(theirs.stride())
    assert ours.requires_grad == theirs.requires_grad
    np.testing.assert_array_equal(as_numpy(ours), as_numpy(theirs))


def same(ours, theirs):
    """Structure, types and every tensor's dtype, shape, strides and values."""
    if hasattr(theirs, "dtype") and hasattr(theirs, "stride"):
        same_tensor(ours, theirs)
    elif isinstance(theirs, dict):
        assert type(ours).__name__ == type(theirs).__name__
        assert list(ours) == list(theirs)
        for k in theirs:
            same(ours[k], theirs[k])
    elif isinstance(theirs, (list, tuple)) and type(theirs).__name__ != "Size":
        assert type(ours) is type(theirs) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs, strict=True):
            same(a, b)
    else:
        assert repr(ours) == repr(theirs)


def everything(L):
    """Tensors of every dtype in every layout, in nested containers, and the other values
    torch's weights_only loader accepts."""
    obj = {}
    for name in DTYPES:
        base = (L.arange(24) % 7 - 3).reshape(4, 6).to(getattr(L, name))
        obj[name] = {"whole": base, "row": base[1], "cols": base[:, 1::2], "t": base.t(),
                     "0d": base[2, 3].clone(), "empty": L.zeros(0, 3, dtype=base.dtype)}
    w = L.tensor([[1.0, -2.0], [0.5, 4.0]], requires_grad=True)
    obj["grad"] = [w, (w, L.nn.Parameter(L.ones(3)))]
    obj["misc"] = (L.Size([2, 3]), L.float16, L.bool, L.device("cpu"), b"\x00\xff", {1, 2},
                   1.5 - 2j, None, True, 2**70, float("inf"), "text",
                   collections.OrderedDict([("b", 1), ("a", [2.5])]), bytearray(b"ab"))
    return obj


def test_torch_files_load_in_tapegrad(tg, oracle):
    data = saved(oracle, everything(oracle))
    ours = tg.load(io.BytesIO(data))
    same(ours, oracle.load(io.BytesIO(data)))
    assert type(ours["grad"][1][1]).__name__ == "Parameter"
    # views of one storage share memory again, as in torch
    f32 = ours["float32"]
    f32["whole"].add_(100)
    assert f32["row"].tolist() == (oracle.arange(6, 12) % 7 - 3 + 100.0).tolist()
    assert f32["t"][0, 0].item() == f32["whole"][0, 0].item()
    assert ours["grad"][0] is ours["grad"][1][0]


def test_tapegrad_files_load_in_torch(tg, oracle):
    data = saved(tg, everything(tg))
    theirs = oracle.load(io.BytesIO(data), weights_only=True)
    same(tg.load(io.BytesIO(data)), theirs)
    same(theirs, oracle.load(io.BytesIO(saved(oracle, everything(oracle)))))
    f32 = theirs["float32"]
    assert f32["row"].untyped_storage().data_ptr() == f32["whole"].untyped_storage().data_ptr()
    assert f32["cols"].storage_offset() == 1 and f32["row"].storage_offset() == 6
    assert isinstance(theirs["grad"][1][1], oracle.nn.Parameter)


def records(data):
    z = zipfile.ZipFile(io.BytesIO(data))
    return [(i.filename, i.header_offset, i.file_size, i.CRC if "serialization_id" not in
             i.filename else None, z.read(i) if "serialization_id" not in i.filename else None)
            for i in z.infolist()]


@pytest.mark.parametrize("protocol", [2, 4])
def test_same_archive_as_torch(tg, oracle, protocol):
    """Record for record, at the same offsets: only the random serialization id differs."""
    ours = saved(tg, everything(tg), pickle_protocol=protocol)
    theirs = saved(oracle, everything(oracle), pickle_protocol=protocol)
    assert len(ours) == len(theirs)
    assert records(ours) == records(theirs)
    ident = zipfile.ZipFile(io.BytesIO(ours)).read("archive/.data/serialization_id")
    assert len(ident) == 40 and ident.isdigit()


def test_archive_name_follows_the_file_name(tg, oracle, tmp_path):
    for name in ("model.pt", "a.b.pth", "noext", "é.pt"):
        tg.save({"w": tg.ones(1)}, tmp_path / ("tg-" + name))
        oracle.save({"w": oracle.ones(1)}, tmp_path / ("torch-" + name))
        ours = zipfile.ZipFile(tmp_path / ("tg-" + name)).namelist()
        theirs = zipfile.ZipFile(tmp_path / ("torch-" + name)).namelist()
        assert [n.replace("tg-", "torch-") for n in ours] == theirs
        assert oracle.load(tmp_path / ("tg-" + name))["w"].tolist() == [1.0]


def mlp(L):
    return L.nn.Sequential(L.nn.Linear(5, 8), L.nn.ReLU(), L.nn.Linear(8, 3))


def cnn(L):
    return L.nn.Sequential(L.nn.Conv2d(2, 4, 3, padding=1), L.nn.BatchNorm2d(4), L.nn.ReLU(),
                           L.nn.MaxPool2d(2), L.nn.Flatten(), L.nn.Linear(4 * 3 * 3, 5))


@pytest.mark.parametrize("make,shape", [(mlp, (4, 5)), (cnn, (2, 2, 6, 6))])
def test_state_dicts_move_between_the_libraries(tg, oracle, make, shape):
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    oracle.manual_seed(0)
    theirs = make(oracle)
    theirs.train()
    theirs(oracle.tensor(x))  # moves BatchNorm's running statistics
    theirs.eval()
    ours = make(tg)
    loaded = tg.load(io.BytesIO(saved(oracle, theirs.state_dict())))
    assert type(loaded) is collections.OrderedDict
    assert loaded._metadata == theirs.state_dict()._metadata  # (module versions)
    ours.load_state_dict(loaded)  # strict
    ours.eval()
    expected = theirs(oracle.tensor(x)).detach().numpy()
    np.testing.assert_allclose(ours(tg.tensor(x)).detach().numpy(), expected, rtol=1e-5,
                               atol=1e-6)
    # and back: tapegrad's state_dict into a fresh torch model, strictly
    fresh = make(oracle)
    back = oracle.load(io.BytesIO(saved(tg, ours.state_dict())), weights_only=True)
    assert back._metadata == theirs.state_dict()._metadata
    fresh.load_state_dict(back)  # strict
    fresh.eval()
    np.testing.assert_array_equal(fresh(oracle.tensor(x)).detach().numpy(), expected)
    assert list(ours.state_dict()) == list(theirs.state_dict())


@pytest.mark.parametrize("name,kw", [("Adam", {"amsgrad": True}), ("SGD", {"momentum": 0.9})])
def test_optimizer_state_dicts_move_between_the_libraries(tg, oracle, name, kw):
    def run(L, state=None):
        w = L.tensor([1.0, -2.0, 0.5], requires_grad=True)
        opt = getattr(L.optim, name)([w], lr=0.1, **kw)
        if state is not None:
            opt.load_state_dict(state)
        for _ in range(2):
            opt.zero_grad()
            (w**2).sum().backward()
            opt.step()
        return w, opt

    w, opt = run(oracle)
    ours_w, ours_opt = run(tg, tg.load(io.BytesIO(saved(oracle, opt.state_dict()))))
    again_w, again_opt = run(oracle, opt.state_dict())  # torch continuing from its own state
    np.testing.assert_allclose(ours_w.detach().numpy(), again_w.detach().numpy(), rtol=1e-6)
    back = oracle.load(io.BytesIO(saved(tg, ours_opt.state_dict())), weights_only=True)
    same(tg.load(io.BytesIO(saved(oracle, back))), ours_opt.state_dict())
    assert back["param_groups"] == again_opt.state_dict()["param_groups"]


def test_legacy_stream_format_both_ways(tg, oracle):
    data = saved(oracle, everything(oracle), _use_new_zipfile_serialization=False)
    assert not data.startswith(b"PK")
    ours = tg.load(io.BytesIO(data))
    same(ours, oracle.load(io.BytesIO(data)))
    ours["float32"]["whole"].add_(1)  # views share their storage here too
    assert ours["float32"]["row"][0].item() == ours["float32"]["whole"][1, 0].item()
    mine = saved(tg, everything(tg), _use_new_zipfile_serialization=False)
    same(oracle.load(io.BytesIO(mine), weights_only=True), oracle.load(io.BytesIO(data)))


def test_big_endian_files(tg, oracle):
    data = saved(oracle, {"a": oracle.arange(4, dtype=oracle.int32),
                          "c": oracle.tensor([1 + 2j], dtype=oracle.complex64)})
    z = zipfile.ZipFile(io.BytesIO(data))
    recs = {n: z.read(n) for n in z.namelist()}
    recs["archive/byteorder"] = b"big"
    recs["archive/data/0"] = np.arange(4, dtype=">i4").tobytes()
    recs["archive/data/1"] = np.array([1 + 2j], dtype=">c8").tobytes()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zz:
        for n, d in recs.items():
            zz.writestr(n, d)
    for L in (tg, oracle):
        loaded = L.load(io.BytesIO(out.getvalue()))
        assert loaded["a"].tolist() == [0, 1, 2, 3] and loaded["c"].tolist() == [1 + 2j]


def test_zip64_records(tg, oracle, monkeypatch):
    """Records past 4 GiB use zip64 fields; forced on a small file, torch and zipfile read it."""
    from tapegrad.serialization import _zip

    monkeypatch.setattr(_zip, "_ZIP64_FROM", 0)
    data = saved(tg, {"a": tg.arange(5.0), "b": tg.ones(2, 2, dtype=tg.int64)})
    assert zipfile.ZipFile(io.BytesIO(data)).testzip() is None
    for L in (tg, oracle):
        loaded = L.load(io.BytesIO(data))
        assert loaded["a"].tolist() == [0, 1, 2, 3, 4] and loaded["b"].sum().item() == 4


def test_map_location(tg, oracle):
    data = saved(oracle, {"w": oracle.arange(3.0)})
    for where in ("cpu", oracle.device("cpu"), {"cpu": "cpu"}, lambda s, loc: s,
                  lambda s, loc: None):
        where_tg = tg.device("cpu") if isinstance(where, oracle.device) else where
        assert tg.load(io.BytesIO(data), map_location=where_tg)["w"].tolist() == [0, 1, 2]
    for where in ("cuda", "cuda:1", "foo"):
        expected = raised(lambda w=where: oracle.load(io.BytesIO(data), map_location=w))
        assert expected.type == "RuntimeError"
        assert raised(lambda w=where: tg.load(io.BytesIO(data), map_location=w)) == expected
    seen = []
    tg.load(io.BytesIO(data), map_location=lambda s, loc: seen.append((s.nbytes(), loc)))
    assert seen == [(12, "cpu")]


def cuda_file(oracle, location="cuda:0"):
    """A torch file as a machine with CUDA writes it: the storage is tagged 'cuda:0'."""
    data = saved(oracle, {"w": oracle.arange(3.0)})
    z = zipfile.ZipFile(io.BytesIO(data))
    recs = {n: z.read(n) for n in z.namelist()}
    tag = location.encode()
    recs["archive/data.pkl"] = recs["archive/data.pkl"].replace(
        b"X\x03\x00\x00\x00cpu", b"X" + len(tag).to_bytes(4, "little") + tag)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zz:
        for n, d in recs.items():
            zz.writestr(n, d)
    return out.getvalue()


def test_cuda_checkpoints_need_map_location(tg, oracle):
    data = cuda_file(oracle)
    expected = raised(lambda: oracle.load(io.BytesIO(data)))
    assert expected.type == "RuntimeError" and "CUDA" in expected.message
    assert raised(lambda: tg.load(io.BytesIO(data))) == expected
    for where in ("cpu", {"cuda:0": "cpu"}, lambda s, loc: s.cpu()):
        assert tg.load(io.BytesIO(data), map_location=where)["w"].tolist() == [0.0, 1.0, 2.0]
    for location in ("cuda", "cuda:3", "mps", "xpu:0", "hpu", "mtia:0", "privateuseone"):
        data = cuda_file(oracle, location)
        expected = raised(lambda d=data: oracle.load(io.BytesIO(d)))
        assert expected.type == "RuntimeError"
        assert raised(lambda d=data: tg.load(io.BytesIO(d))) == expected
        assert tg.load(io.BytesIO(data), map_location="cpu")["w"].tolist() == [0.0, 1.0, 2.0]


def test_mmap(tg, oracle, tmp_path):
    path = tmp_path / "w.pt"
    oracle.save({"w": oracle.arange(6.0).reshape(2, 3), "v": oracle.ones(4)}, path)
    before = path.read_bytes()
    loaded = tg.load(path, mmap=True)
    assert loaded["w"].tolist() == [[0, 1, 2], [3, 4, 5]] and loaded["v"].sum().item() == 4
    loaded["w"].add_(1)  # a private mapping: the file does not change
    assert path.read_bytes() == before
    for L in (tg, oracle):
        assert raised(lambda L=L: L.load(io.BytesIO(before), mmap=True)).type == "ValueError"
    legacy = tmp_path / "old.pt"
    oracle.save({"w": oracle.ones(1)}, legacy, _use_new_zipfile_serialization=False)
    assert raised(lambda: tg.load(legacy, mmap=True)) == raised(
        lambda: oracle.load(legacy, mmap=True))


def test_unsupported_dtypes_are_named(tg, oracle):
    from tapegrad.serialization import UnsupportedCheckpointError

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in ("float8_e4m3fn", "float8_e5m2"):
            data = saved(oracle, {"t": oracle.zeros(2, dtype=getattr(oracle, name))})
            with pytest.raises(UnsupportedCheckpointError, match=f"torch.{name}, which tapegrad"):
                tg.load(io.BytesIO(data))
        q = oracle.quantize_per_tensor(oracle.ones(2), 0.1, 0, oracle.qint8)
        with pytest.raises(UnsupportedCheckpointError, match="qint8"):
            tg.load(io.BytesIO(saved(oracle, q)))


@pytest.mark.parametrize("name", ["uint16", "uint32", "uint64", "complex32"])
def test_limited_dtypes_round_trip(tg, oracle, name):
    """The dtypes with no legacy storage class travel on untyped storages (_rebuild_tensor_v3),
    both ways, views sharing their storage."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch: "ComplexHalf support is experimental"
        t = (oracle.tensor([1.5 + 2j, -3j, 0.25]).chalf() if name == "complex32"
             else oracle.tensor([1, 2, 60000]).to(getattr(oracle, name)))
        loaded = tg.load(io.BytesIO(saved(oracle, {"t": t, "v": t[1:]})))
        assert repr(loaded["t"]) == repr(t) and repr(loaded["v"]) == repr(t[1:])
        mine = loaded["t"].clone()
        back = oracle.load(io.BytesIO(saved(tg, {"t": mine, "v": mine[1:]})))
        assert repr(back["t"]) == repr(t) and repr(back["v"]) == repr(t[1:])
        assert back["v"].untyped_storage().data_ptr() == back["t"].untyped_storage().data_ptr()


class Point:
    def __init__(self, x):
        self.x = x


def test_weights_only_false_loads_any_pickle(tg, oracle):
    data = saved(oracle, {"p": Point(3), "w": oracle.ones(2)})
    loaded = tg.load(io.BytesIO(data), weights_only=False)
    assert isinstance(loaded["p"], Point) and loaded["p"].x == 3
    assert loaded["w"].tolist() == [1.0, 1.0]
    mine = saved(tg, {"p": Point(4), "w": tg.ones(2)})
    assert oracle.load(io.BytesIO(mine), weights_only=False)["p"].x == 4
    assert tg.load(io.BytesIO(mine), pickle_module=pickle)["p"].x == 4
    for L in (tg, oracle):
        error = raised(lambda L=L: L.load(io.BytesIO(mine), pickle_module=pickle,
                                          weights_only=True))
        assert error.message == (
            "Can not safely load weights when explicit pickle_module is specified")


def test_saving_a_mapped_tensor_saves_only_its_storage(tg, tmp_path):
    path = tmp_path / "w.pt"
    tg.save({"w": tg.arange(6.0), "v": tg.zeros(1000)}, path)
    again = io.BytesIO()
    tg.save(tg.load(path, mmap=True)["w"], again)
    assert zipfile.ZipFile(io.BytesIO(again.getvalue())).getinfo("archive/data/0").file_size == 24
    assert tg.load(io.BytesIO(again.getvalue())).tolist() == [0, 1, 2, 3, 4, 5]


def test_whole_models_with_weights_only_false(tg, oracle):
    """``torch.save(model)`` pickles the module itself; torch's module classes load as
    tapegrad's."""
    x = np.ones((1, 5), dtype=np.float32)
    theirs = mlp(oracle)
    loaded = tg.load(io.BytesIO(saved(oracle, theirs)), weights_only=False)
    assert type(loaded).__module__.startswith("tapegrad")
    np.testing.assert_allclose(loaded(tg.tensor(x)).detach().numpy(),
                               theirs(oracle.tensor(x)).detach().numpy(), rtol=1e-6)
    ours = mlp(tg)
    again = tg.load(io.BytesIO(saved(tg, ours)), weights_only=False)
    assert again(tg.tensor(x)).tolist() == ours(tg.tensor(x)).tolist()
