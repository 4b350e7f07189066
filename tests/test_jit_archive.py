"""TorchScript archives (torch.jit.save / torch.jit.load) of modules built from torch's standard
layers: what the library under test writes, real torch loads and runs with the same results and
the same state (bit for bit); what real torch writes, the library loads; anything else is
refused before a file is written."""

from __future__ import annotations

import io
import re
import warnings
import zipfile

import numpy as np
import pytest


def _quiet(fn, *args, **kwargs):
    """Call without the DeprecationWarnings of torch.jit (and torch's implicit-dim warning)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def _np(t):
    return t.detach().numpy()


# name -> (builder of the module from a library L, input shape)
CASES = {
    "linear_relu": (lambda L: L.nn.Sequential(L.nn.Linear(6, 4), L.nn.ReLU(),
                                              L.nn.Linear(4, 3, bias=False)), (5, 6)),
    "activations": (lambda L: L.nn.Sequential(L.nn.Sigmoid(), L.nn.Tanh(), L.nn.Identity(7),
                                              L.nn.ReLU(inplace=True), L.nn.Softmax(dim=-1)),
                    (3, 6)),
    "softmax_implicit_dim": (lambda L: L.nn.Sequential(L.nn.Softmax()), (3, 4)),
    "flatten_dropout": (lambda L: L.nn.Sequential(L.nn.Flatten(), L.nn.Dropout(0.25),
                                                  L.nn.Linear(12, 2), L.nn.Flatten(0, 1)),
                        (4, 3, 2, 2)),
    "conv2d": (lambda L: L.nn.Sequential(
        L.nn.Conv2d(3, 4, 3, padding=1),
        L.nn.Conv2d(4, 4, (3, 1), stride=2, padding=(1, 0), groups=2),
        L.nn.Conv2d(4, 2, 3, padding="same", bias=False, dilation=2),
        L.nn.Conv2d(2, 2, 3, padding=1, padding_mode="reflect"),
        L.nn.Conv2d(2, 2, 3, padding=2, padding_mode="circular", stride=(1, 2)),
        L.nn.Conv2d(2, 1, 1, padding=1, padding_mode="replicate")), (2, 3, 9, 8)),
    "pooling": (lambda L: L.nn.Sequential(
        L.nn.MaxPool2d(2), L.nn.MaxPool2d(3, stride=1, padding=1, ceil_mode=True),
        L.nn.MaxPool2d((2, 1), dilation=(1, 2)), L.nn.AvgPool2d(2, stride=1),
        L.nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False, ceil_mode=True),
        L.nn.AvgPool2d(1, divisor_override=2)), (2, 3, 12, 12)),
    "batchnorm2d": (lambda L: L.nn.Sequential(
        L.nn.BatchNorm2d(3), L.nn.BatchNorm2d(3, momentum=None, affine=False),
        L.nn.BatchNorm2d(3, eps=1e-3, momentum=0.3, track_running_stats=False)), (4, 3, 5, 5)),
    "batchnorm1d": (lambda L: L.nn.Sequential(
        L.nn.BatchNorm1d(4), L.nn.BatchNorm1d(4, momentum=None),
        L.nn.BatchNorm1d(4, affine=False, track_running_stats=False)), (6, 4, 3)),
    "nested": (lambda L: L.nn.Sequential(
        L.nn.Sequential(L.nn.Linear(4, 3), L.nn.ReLU()),
        L.nn.Sequential(L.nn.Linear(3, 3), L.nn.Sequential(L.nn.Linear(3, 2), L.nn.Tanh())),
        L.nn.Sequential(), L.nn.Linear(2, 2)), (3, 4)),
    "lenet": (lambda L: L.nn.Sequential(
        L.nn.Conv2d(1, 6, kernel_size=5, padding=2), L.nn.BatchNorm2d(6), L.nn.Sigmoid(),
        L.nn.AvgPool2d(kernel_size=2, stride=2), L.nn.Conv2d(6, 16, kernel_size=5),
        L.nn.BatchNorm2d(16), L.nn.Sigmoid(), L.nn.MaxPool2d(kernel_size=2, stride=2),
        L.nn.Flatten(), L.nn.Linear(16 * 5 * 5, 120), L.nn.BatchNorm1d(120), L.nn.Sigmoid(),
        L.nn.Dropout(0.5), L.nn.Linear(120, 10)), (4, 1, 28, 28)),
    "linear_alone": (lambda L: L.nn.Linear(5, 3), (2, 5)),
    "conv2d_alone": (lambda L: L.nn.Conv2d(2, 3, 2, stride=2), (1, 2, 6, 6)),
    "batchnorm1d_alone": (lambda L: L.nn.BatchNorm1d(3), (5, 3)),
}


def _build(L, case, train):
    L.manual_seed(0)
    m = CASES[case][0](L)
    m.train(train)
    return m


def _input(case):
    return np.random.RandomState(1).randn(*CASES[case][1]).astype(np.float32)


def _same_state(got, want):
    """Two state_dicts: the same keys in the same order, dtypes, shapes and bytes."""
    assert list(got) == list(want)
    for key in want:
        a, b = _np(got[key]), _np(want[key])
        assert a.dtype == b.dtype and a.shape == b.shape, key
        assert a.tobytes() == b.tobytes(), key


def _snapshot(module):
    return {k: v.detach().clone() for k, v in module.state_dict().items()}


@pytest.mark.parametrize("train", [False, True], ids=["eval", "train"])
@pytest.mark.parametrize("case", list(CASES))
def test_saved_archive_runs_in_torch(lib, oracle, case, train, tmp_path):
    m = _build(lib, case, train)
    path = tmp_path / "model.pt"
    _quiet(lib.jit.script, m).save(str(path))
    saved = _snapshot(m)
    loaded = oracle.jit.load(str(path))
    _same_state(loaded.state_dict(), saved)
    # torch's own module with the saved values (a seeded initialisation's last bits depend on
    # the CPU kernels torch runs)
    reference = _build(oracle, case, train)
    reference.load_state_dict({k: oracle.from_numpy(_np(v).copy()) for k, v in saved.items()})
    _same_state(reference.state_dict(), saved)
    assert loaded.training == train
    assert repr(loaded) == repr(_quiet(oracle.jit.script, reference))
    x = _input(case)
    for _ in range(2):  # (training: the running statistics move, and must move alike)
        oracle.manual_seed(3)
        got = _quiet(loaded, oracle.from_numpy(x))
        oracle.manual_seed(3)
        want = _quiet(reference, oracle.from_numpy(x))
        lib.manual_seed(3)
        eager = _quiet(m, lib.from_numpy(x))
        assert _np(got).tobytes() == _np(want).tobytes()
        np.testing.assert_allclose(_np(got), _np(eager), rtol=1e-5, atol=1e-6)
    _same_state(loaded.state_dict(), reference.state_dict())


@pytest.mark.parametrize("train", [False, True], ids=["eval", "train"])
@pytest.mark.parametrize("case", list(CASES))
def test_torch_archive_loads(lib, oracle, case, train):
    reference = _build(oracle, case, train)
    scripted = _quiet(oracle.jit.script, reference)
    buf = io.BytesIO()
    oracle.jit.save(scripted, buf)
    want = _snapshot(reference)
    loaded = lib.jit.load(io.BytesIO(buf.getvalue()))
    _same_state(loaded.state_dict(), want)
    assert isinstance(loaded, lib.jit.ScriptModule)
    assert loaded.training == train
    assert repr(loaded) == repr(scripted)
    again = io.BytesIO()  # the loaded module saves again, to the same state
    lib.jit.save(loaded, again)
    _same_state(oracle.jit.load(io.BytesIO(again.getvalue())).state_dict(), want)
    x = _input(case)
    oracle.manual_seed(3)
    expected = _quiet(scripted, oracle.from_numpy(x))
    lib.manual_seed(3)
    got = _quiet(loaded, lib.from_numpy(x))
    np.testing.assert_allclose(_np(got), _np(expected), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("case", ["nested", "lenet", "batchnorm1d"])
def test_round_trip(lib, case):
    m = _build(lib, case, False)
    buf = io.BytesIO()
    lib.jit.save(_quiet(lib.jit.script, m), buf)
    loaded = lib.jit.load(io.BytesIO(buf.getvalue()), map_location="cpu")
    _same_state(loaded.state_dict(), m.state_dict())
    assert repr(loaded) == repr(_quiet(lib.jit.script, m))
    x = lib.from_numpy(_input(case))
    assert _np(loaded(x)).tobytes() == _np(m(x)).tobytes()
    assert all(p.requires_grad for p in loaded.parameters())


def test_d2l_hybridize_mlp(lib, oracle, tmp_path, monkeypatch):
    """d2l-zh's hybridize chapter: ``net = torch.jit.script(net); net.save('my_mlp')``."""
    monkeypatch.chdir(tmp_path)
    lib.manual_seed(0)
    net = lib.nn.Sequential(lib.nn.Linear(512, 256), lib.nn.ReLU(), lib.nn.Linear(256, 128),
                            lib.nn.ReLU(), lib.nn.Linear(128, 2))
    net = _quiet(lib.jit.script, net)
    assert net.save("my_mlp") is None
    names = zipfile.ZipFile(tmp_path / "my_mlp").namelist()
    assert all(n.startswith("my_mlp/") for n in names)
    for record in ("data.pkl", "constants.pkl", "version", "byteorder"):
        assert f"my_mlp/{record}" in names
    # (the Sequential's code: container.py, or container/___torch_mangle_<n>.py where torch
    # compiled another Sequential type before in this process)
    assert any(n.startswith("my_mlp/code/__torch__/torch/nn/modules/container") for n in names)
    loaded = oracle.jit.load("my_mlp")
    x = np.random.RandomState(0).randn(1, 512).astype(np.float32)
    np.testing.assert_allclose(_np(loaded(oracle.from_numpy(x))), _np(net(lib.from_numpy(x))),
                               rtol=1e-5, atol=1e-6)
    _same_state(loaded.state_dict(), net.state_dict())


def test_traced_module_saves(lib, oracle):
    lib.manual_seed(0)
    m = lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.ReLU())
    traced = _quiet(lib.jit.trace, m, lib.ones(1, 3))
    buf = io.BytesIO()
    lib.jit.save(traced, buf)
    loaded = oracle.jit.load(io.BytesIO(buf.getvalue()))
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(_np(loaded(oracle.from_numpy(x))), _np(m(lib.from_numpy(x))),
                               rtol=1e-6, atol=1e-7)


def test_extra_files_and_float64(lib, oracle):
    lib.manual_seed(0)
    m = lib.nn.Sequential(lib.nn.Linear(2, 2).double(), lib.nn.Tanh())
    buf = io.BytesIO()
    lib.jit.save(_quiet(lib.jit.script, m), buf, _extra_files={"meta.txt": "epoch 3"})
    extra = {"meta.txt": ""}
    loaded = oracle.jit.load(io.BytesIO(buf.getvalue()), _extra_files=extra)
    assert extra == {"meta.txt": b"epoch 3"}
    _same_state(loaded.state_dict(), m.state_dict())
    back = {"meta.txt": ""}
    lib.jit.load(io.BytesIO(buf.getvalue()), _extra_files=back)
    assert back == extra


def test_save_of_a_plain_module_is_an_attribute_error(lib, oracle, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for L in (lib, oracle):
        with pytest.raises(AttributeError, match="'Linear' object has no attribute 'save'$"):
            L.jit.save(L.nn.Linear(1, 1), "never-written.pt")
        with pytest.raises(AttributeError, match="'Linear' object has no attribute "
                                                 "'save_to_buffer'"):
            L.jit.save(L.nn.Linear(1, 1), io.BytesIO())


def test_load_errors(lib, oracle, tmp_path):
    for L in (lib, oracle):
        with pytest.raises(ValueError, match="does not exist"):
            L.jit.load(str(tmp_path / "missing.pt"))
        checkpoint = tmp_path / "checkpoint.pt"
        L.save({"w": L.ones(1)}, str(checkpoint))
        with pytest.raises(RuntimeError, match="constants.pkl"):
            L.jit.load(str(checkpoint))


def test_unsupported_modules_are_refused(lib, tmp_path):
    if lib.__name__ == "torch":
        return  # torch compiles any module; the library writes the standard layers only

    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = lib.nn.Linear(2, 2)

        def forward(self, x):
            return self.fc(x) * 2

    class MySequential(lib.nn.Sequential):
        pass

    hooked = lib.nn.Sequential(lib.nn.Linear(2, 2))
    hooked[0].register_forward_hook(lambda *args: None)
    for module, named in [
            (Net(), "Net"),
            (lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.LSTM(2, 2)),
             "torch.nn.modules.rnn.LSTM (submodule 1)"),
            (lib.nn.Sequential(lib.nn.Sequential(lib.nn.GELU())), "GELU (submodule 0.0)"),
            (MySequential(lib.nn.ReLU()), "MySequential"),
            (lib.nn.Sequential(lib.nn.MaxPool2d(2, return_indices=True)), "return_indices"),
            (hooked, "hooks")]:
        scripted = _quiet(lib.jit.script, module)
        path = tmp_path / "refused.pt"
        with pytest.raises(NotImplementedError, match=re.escape(named)):
            scripted.save(str(path))
        assert not path.exists()


def test_torch_traced_archive_is_refused(lib, oracle):
    if lib.__name__ == "torch":
        return
    traced = _quiet(oracle.jit.trace, oracle.nn.Sequential(oracle.nn.Linear(2, 2)),
                    oracle.ones(1, 2))
    buf = io.BytesIO()
    oracle.jit.save(traced, buf)
    with pytest.raises(NotImplementedError, match="torch.jit.trace"):
        lib.jit.load(io.BytesIO(buf.getvalue()))

    class Net(oracle.nn.Module):
        def forward(self, x):
            return x + 1

    buf = io.BytesIO()
    oracle.jit.save(_quiet(oracle.jit.script, Net()), buf)
    with pytest.raises(NotImplementedError, match="TorchScript class __main__.Net|Net"):
        lib.jit.load(io.BytesIO(buf.getvalue()))
