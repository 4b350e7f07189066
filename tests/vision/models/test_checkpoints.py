"""torchvision checkpoints in tapegrad: a resnet18 state_dict written by real torch loads with
``strict=True`` and gives torch's outputs; ``weights=`` downloads through ``torch.hub`` with the
hash check of the file name, from an HTTP server on the loopback address.

The server serves the path of the real URL (``/models/resnet18-f37072fd.pth``); each hub's
``urlopen`` is pointed at it for the test (https://download.pytorch.org -> http://127.0.0.1).
A checkpoint written here cannot have the published file's hash, so through the real enum the
download ends in the hub's hash error (compared with torch's); the success path uses a weights
enum of the test whose URL names the served file's own hash.
"""

from __future__ import annotations

import functools
import hashlib
import http.server
import importlib
import threading
import warnings
from pathlib import Path

import numpy as np
import pytest

PUBLISHED = "https://download.pytorch.org"


@pytest.fixture
def server(tmp_path):
    """An HTTP server on 127.0.0.1 serving tmp_path/www, stopped after the test."""
    root = tmp_path / "www"
    (root / "models").mkdir(parents=True)

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Quiet, directory=str(root)))
    httpd.timeout = 10
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield root, f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=10)


def _torch_checkpoint(oracle, tv, path: Path) -> dict:
    """A resnet18 state_dict from real torchvision, saved by real torch at ``path``."""
    oracle.manual_seed(0)
    model = tv.models.resnet18()
    oracle.save(model.state_dict(), path)
    return model.state_dict()


def _input(L):
    return L.tensor(np.random.RandomState(0).standard_normal((2, 3, 64, 64)).astype(np.float32))


def test_resnet18_checkpoint_loads_strictly(lib, oracle, vision, tv, tmp_path):
    path = tmp_path / "resnet18.pth"
    theirs_state = _torch_checkpoint(oracle, tv, path)
    theirs = tv.models.resnet18()
    theirs.load_state_dict(theirs_state)
    state = lib.load(str(path))
    ours = vision.models.resnet18()
    result = ours.load_state_dict(state, strict=True)
    assert list(result.missing_keys) == [] and list(result.unexpected_keys) == []
    for key, value in theirs.state_dict().items():
        np.testing.assert_array_equal(ours.state_dict()[key].numpy(), value.numpy(), err_msg=key)
    theirs.eval()
    ours.eval()
    with oracle.no_grad():
        expected = theirs(_input(oracle)).numpy()
        truth = theirs.double()(_input(oracle).double()).numpy()
    with lib.no_grad():
        got = ours(_input(lib)).numpy()
    # float32: as close to the exact result as torch's own float32 output (within 3 times)
    assert np.abs(got - truth).max() <= 3 * np.abs(expected - truth).max() + 1e-7
    ours.double()
    with lib.no_grad():
        np.testing.assert_allclose(ours(_input(lib).double()).numpy(), truth, rtol=1e-10,
                                   atol=1e-12)


def _redirect(monkeypatch, hub, base: str, cache: Path) -> None:
    """Point ``hub``'s downloads at the loopback server and its cache at ``cache``."""
    real = hub.urlopen

    def urlopen(request, *args, **kwargs):
        url = request.full_url if hasattr(request, "full_url") else request
        if url.startswith(PUBLISHED):
            url = base + url[len(PUBLISHED):]
            request = type(request)(url, headers=dict(request.header_items())) \
                if hasattr(request, "full_url") else url
        return real(request, *args, **kwargs)

    monkeypatch.setattr(hub, "urlopen", urlopen)
    hub.set_dir(str(cache))


def _hub_of(L):
    return importlib.import_module(f"{L.__name__}.hub")


def test_weights_download_checks_the_hash(lib, oracle, vision, tv, server, tmp_path,
                                          monkeypatch):
    # the served file is not the published one: both hubs refuse it by its name's hash
    root, base = server
    _torch_checkpoint(oracle, tv, root / "models" / "resnet18-f37072fd.pth")
    outcomes = []
    for L, V, name in ((oracle, tv, "torch"), (lib, vision, "lib")):
        hub = _hub_of(L)
        before = hub.get_dir()
        _redirect(monkeypatch, hub, base, tmp_path / f"cache-{name}")
        try:
            seen = []
            for kwargs in ({"weights": V.models.ResNet18_Weights.IMAGENET1K_V1},
                           {"pretrained": True}):
                with pytest.raises(RuntimeError) as caught, warnings.catch_warnings(
                        record=True) as caught_warnings:
                    warnings.simplefilter("always")
                    V.models.resnet18(progress=False, **kwargs)
                seen.append((str(caught.value).replace(str(tmp_path / f"cache-{name}"), ""),
                             [str(w.message) for w in caught_warnings]))
            outcomes.append(seen)
        finally:
            hub.set_dir(before)
    assert outcomes[0] == outcomes[1]
    assert 'invalid hash value (expected "f37072fd"' in outcomes[0][0][0]
    assert "'pretrained' is deprecated" in outcomes[0][1][1][0]


def test_weights_download_and_load(lib, oracle, vision, tv, server, tmp_path, monkeypatch):
    # a weights enum naming the served file by its own hash: the builder's path, end to end
    root, base = server
    staging = tmp_path / "staging.pth"
    theirs_state = _torch_checkpoint(oracle, tv, staging)
    digest = hashlib.sha256(staging.read_bytes()).hexdigest()[:8]
    filename = f"resnet18-{digest}.pth"
    (root / "models" / filename).write_bytes(staging.read_bytes())
    url = f"{PUBLISHED}/models/{filename}"

    results = []
    for L, V, name in ((oracle, tv, "torch"), (lib, vision, "lib")):
        hub = _hub_of(L)
        before = hub.get_dir()
        _redirect(monkeypatch, hub, base, tmp_path / f"cache-{name}")
        try:
            api = importlib.import_module(f"{V.models.__name__}._api")
            resnet = importlib.import_module(f"{V.models.__name__}.resnet")
            weights = api.WeightsEnum("TestWeights", {"LOCAL": api.Weights(
                url=url, transforms=V.models.ResNet18_Weights.DEFAULT.transforms,
                meta=dict(V.models.ResNet18_Weights.DEFAULT.meta))}).LOCAL
            model = resnet._resnet(resnet.BasicBlock, [2, 2, 2, 2], weights, False)
            cached = Path(hub.get_dir()) / "checkpoints" / filename
            assert cached.exists()
            model.eval()
            with L.no_grad():
                results.append(model.double()(_input(L).double()).numpy())
            for key, value in theirs_state.items():
                np.testing.assert_array_equal(model.state_dict()[key].float().numpy(),
                                              value.numpy(), err_msg=key)
        finally:
            hub.set_dir(before)
    np.testing.assert_allclose(results[1], results[0], rtol=1e-10, atol=1e-12)
