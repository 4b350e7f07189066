"""torch.hub against real torch.hub: cache folders, downloads (progress output, hash checks, the
temporary file), checkpoints by URL (legacy zips included), hubconf.py from a folder and from a
GitHub repository served by a loopback HTTP server (tests/loopback_http.py).

Each scenario runs twice, on real torch's hub and on the library's, in fresh folders; what they
print, return and raise must agree (paths shown relative to the scenario's folder).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
import textwrap
import warnings
import zipfile

import pytest
import torchcompare
from loopback_http import LoopbackServer, github_via


@pytest.fixture
def server():
    with LoopbackServer() as srv:
        yield srv


def _fallback_bars(monkeypatch, lib, oracle):
    """Both hubs draw torch's own fallback bar (a tqdm installed here would print timings)."""
    monkeypatch.setattr(oracle.hub, "tqdm", oracle.hub._Faketqdm)
    if lib is not oracle:
        monkeypatch.setattr(lib.hub, "tqdm", lib.hub._PercentBar)


def _both(lib, oracle, tmp_path, capsys, scenario):
    """Run ``scenario(hub, folder)`` on torch's hub and then on lib's, each in its own folder;
    return the two records (value or exception, stdout, stderr, warnings), folders masked."""
    records = []
    for name, module in (("torch", oracle), ("lib", lib)):
        folder = tmp_path / name
        folder.mkdir()
        capsys.readouterr()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                value = ("ok", scenario(module.hub, str(folder)))
            except Exception as exc:  # noqa: BLE001  (compared between the two libraries)
                value = ("raised", type(exc).__name__, str(exc))
        out, err = capsys.readouterr()
        text = repr((value, out, err, [(w.category.__name__, str(w.message)) for w in caught]))
        records.append(torchcompare.normalize_text(text.replace(str(folder), "<dir>")))
    return records


def _same(lib, oracle, tmp_path, capsys, scenario):
    theirs, ours = _both(lib, oracle, tmp_path, capsys, scenario)
    if os.environ.get("SHOW_RECORDS"):
        print("RECORD", theirs)
    assert ours == theirs
    return theirs


# -- the cache folder ---------------------------------------------------------------------------

@pytest.mark.parametrize("env", [
    {},
    {"TORCH_HOME": "/opt/th"},
    {"TORCH_HOME": "~/th"},
    {"XDG_CACHE_HOME": "/var/cache/x"},
    {"XDG_CACHE_HOME": "~/xdg", "TORCH_HOME": "/opt/th"},
    {"XDG_CACHE_HOME": "~/xdg"},
])
def test_get_dir_follows_torch_home_and_xdg(lib, oracle, monkeypatch, env):
    for key in ("TORCH_HOME", "XDG_CACHE_HOME", "TORCH_HUB"):
        monkeypatch.delenv(key, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("HOME", "/home/learner")
    monkeypatch.setattr(lib.hub, "_hub_dir", None)
    monkeypatch.setattr(oracle.hub, "_hub_dir", None)
    assert lib.hub.get_dir() == oracle.hub.get_dir()
    assert lib.hub._get_torch_home() == oracle.hub._get_torch_home()


def test_set_dir_and_the_deprecated_variable(lib, oracle, monkeypatch):
    monkeypatch.setenv("HOME", "/home/learner")
    for hub in (lib.hub, oracle.hub):
        monkeypatch.setattr(hub, "_hub_dir", None)
    results = []
    for hub in (oracle.hub, lib.hub):
        hub.set_dir("~/my_hub")
        got = [hub.get_dir()]
        hub.set_dir(os.path.join("/tmp", "elsewhere"))
        got.append(hub.get_dir())
        monkeypatch.setenv("TORCH_HUB", "/old")
        with pytest.warns(UserWarning, match="TORCH_HUB is deprecated, please use env "
                          "TORCH_HOME instead"):
            got.append(hub.get_dir())
        monkeypatch.delenv("TORCH_HUB")
        results.append(got)
    assert results[0] == results[1] == [
        "/home/learner/my_hub", "/tmp/elsewhere", "/tmp/elsewhere"]


def test_hub_is_an_attribute_loaded_on_first_use(lib_name):
    if lib_name == "torch":
        pytest.skip("torch imports torch.hub eagerly; the lazy loading is tapegrad's")
    code = textwrap.dedent("""
        import sys
        import tapegrad as torch
        assert "tapegrad.hub" not in sys.modules and "urllib.request" not in sys.modules
        from tapegrad.utils.model_zoo import load_url, tqdm
        assert load_url is torch.hub.load_state_dict_from_url and tqdm is torch.hub.tqdm
        print(torch.hub.load_state_dict_from_url.__module__, torch.hub.__all__)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, env={**os.environ, "PYTHONPATH": _src_path()})
    assert out.returncode == 0, out.stderr
    import torch

    assert out.stdout.split(" ", 1)[1].strip() == str(torch.hub.__all__)


def _src_path() -> str:
    import tapegrad

    return os.path.dirname(os.path.dirname(tapegrad.__file__))


def test_tqdm_is_used_when_installed(tmp_path, lib_name):
    if lib_name == "torch":
        pytest.skip("checks tapegrad's choice of progress bar")
    fake = tmp_path / "tqdm"
    fake.mkdir()
    (fake / "__init__.py").write_text("class tqdm:\n    pass\n")
    code = "import tapegrad; print(tapegrad.hub.tqdm.__module__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120,
                         env={**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{_src_path()}"})
    assert out.returncode == 0, out.stderr
    assert out.stdout == "tqdm\n"


# -- download_url_to_file ----------------------------------------------------------------------

PAYLOAD = bytes(range(256)) * 1200  # 300 KiB: three chunks of 128 KiB for the progress bar
DIGEST = hashlib.sha256(PAYLOAD).hexdigest()


def _listing(folder):
    return sorted(os.listdir(folder))


@pytest.mark.parametrize("case", ["progress", "quiet", "good-hash", "bad-hash", "no-length",
                                  "missing", "tilde"])
def test_download_url_to_file(lib, oracle, tmp_path, capsys, monkeypatch, server, case):
    _fallback_bars(monkeypatch, lib, oracle)
    monkeypatch.setenv("HOME", str(tmp_path))
    url = server.add("/w/file.bin", PAYLOAD)
    server.add("/w/stream.bin", PAYLOAD[:1000], length=False)

    def scenario(hub, folder):
        dst = os.path.join(folder, "out.bin")
        if case == "progress":
            hub.download_url_to_file(url, dst)
        elif case == "quiet":
            hub.download_url_to_file(url, dst, progress=False)
        elif case == "good-hash":
            hub.download_url_to_file(url, dst, hash_prefix=DIGEST[:10])
        elif case == "bad-hash":
            try:
                hub.download_url_to_file(url, dst, hash_prefix="0123abcd")
            finally:
                print("left behind:", _listing(folder))
        elif case == "no-length":
            hub.download_url_to_file(server.url + "/w/stream.bin", dst)
        elif case == "missing":
            try:
                hub.download_url_to_file(server.url + "/w/nothing", dst)
            finally:
                print("left behind:", _listing(folder))
        elif case == "tilde":
            name = os.path.basename(folder)
            hub.download_url_to_file(url, f"~/{name}/out.bin", progress=False)
        with open(dst, "rb") as fh:
            return hashlib.sha256(fh.read()).hexdigest(), _listing(folder)

    record = _same(lib, oracle, tmp_path, capsys, scenario)
    if case == "progress":
        assert "\\r42.7%\\r85.3%\\r100.0%\\n" in record
    if case == "bad-hash":
        assert 'invalid hash value (expected "0123abcd"' in record
    assert all(h["User-Agent"] == "torch.hub" for _, _, h in server.requests)


# -- load_state_dict_from_url ------------------------------------------------------------------

def _checkpoint_bytes(oracle, legacy=False):
    state = {"w": oracle.arange(6.0).reshape(2, 3), "b": oracle.tensor([1, 2], dtype=oracle.int16)}
    buf = io.BytesIO()
    oracle.save(state, buf, _use_new_zipfile_serialization=not legacy)
    return buf.getvalue()


def _summary(state):
    return {k: (torchcompare.dtype_name(v.dtype), v.tolist()) for k, v in state.items()}


def test_load_state_dict_from_url_downloads_once(lib, oracle, tmp_path, capsys, monkeypatch,
                                                 server):
    _fallback_bars(monkeypatch, lib, oracle)
    data = _checkpoint_bytes(oracle)
    prefix = hashlib.sha256(data).hexdigest()[:8]
    url = server.add(f"/models/net-{prefix}.pth", data)

    def scenario(hub, folder):
        first = hub.load_state_dict_from_url(url, model_dir=folder, check_hash=True)
        asked = len(server.requests)
        second = hub.load_state_dict_from_url(url, model_dir=folder, check_hash=True,
                                              map_location="cpu", weights_only=True)
        assert len(server.requests) == asked  # served from the cache
        return _summary(first), _summary(second), _listing(folder)

    record = _same(lib, oracle, tmp_path, capsys, scenario)
    assert f'Downloading: "{url}" to <dir>/net-{prefix}.pth' in record


def test_load_state_dict_from_url_default_folder_and_file_name(lib, oracle, tmp_path, capsys,
                                                               monkeypatch, server):
    _fallback_bars(monkeypatch, lib, oracle)
    url = server.add("/models/weights.pth?download=1", _checkpoint_bytes(oracle))

    def scenario(hub, folder):
        monkeypatch.setenv("TORCH_HOME", folder)
        monkeypatch.setattr(hub, "_hub_dir", None)
        state = hub.load_state_dict_from_url(url, progress=False, file_name="mine.pt")
        return _summary(state), _listing(os.path.join(folder, "hub", "checkpoints"))

    _same(lib, oracle, tmp_path, capsys, scenario)


def test_load_state_dict_from_url_hash_mismatch(lib, oracle, tmp_path, capsys, monkeypatch,
                                                server):
    _fallback_bars(monkeypatch, lib, oracle)
    url = server.add("/models/net-deadbeef.pth", _checkpoint_bytes(oracle))

    def scenario(hub, folder):
        try:
            hub.load_state_dict_from_url(url, model_dir=folder, check_hash=True, progress=False)
        finally:
            print(_listing(folder))

    record = _same(lib, oracle, tmp_path, capsys, scenario)
    assert "RuntimeError" in record and "[]" in record
    # without check_hash the same file loads
    state = lib.hub.load_state_dict_from_url(url, model_dir=str(tmp_path / "again"),
                                             progress=False)
    assert _summary(state) == _summary(oracle.load(io.BytesIO(_checkpoint_bytes(oracle))))


def test_load_state_dict_from_url_legacy_zip(lib, oracle, tmp_path, capsys, monkeypatch, server):
    _fallback_bars(monkeypatch, lib, oracle)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("old_net.pth", _checkpoint_bytes(oracle, legacy=True))
    url = server.add("/models/old_net.zip", buf.getvalue())

    def scenario(hub, folder):
        state = hub.load_state_dict_from_url(url, model_dir=folder, progress=False)
        return _summary(state), _listing(folder)

    record = _same(lib, oracle, tmp_path, capsys, scenario)
    assert "FutureWarning" in record and "old_net.pth" in record


def test_model_zoo_load_url(lib, oracle, tmp_path, server, lib_name):
    import torch.utils.model_zoo as theirs

    if lib_name == "torch":
        ours = theirs
    else:
        from tapegrad.utils import model_zoo as ours
    url = server.add("/m/x.pth", _checkpoint_bytes(oracle))
    got = ours.load_url(url, model_dir=str(tmp_path / "a"), progress=False)
    want = theirs.load_url(url, model_dir=str(tmp_path / "b"), progress=False)
    assert _summary(got) == _summary(want)


# -- hubconf.py in a local folder --------------------------------------------------------------

HUBCONF = '''
"""A repository's entry points."""
import helper_module

dependencies = {deps}

def tiny(width=2, *, scale=1):
    """A tiny model: a list."""
    return helper_module.make(width, scale)

def _private():
    return 0

not_callable = 3
'''

HELPER = "def make(width, scale):\n    return [scale] * width\n"


def _write_repo(folder, deps="['os']"):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "hubconf.py"), "w") as fh:
        fh.write(HUBCONF.format(deps=deps))
    with open(os.path.join(folder, "helper_module.py"), "w") as fh:
        fh.write(HELPER)


@pytest.mark.parametrize("case", ["call", "kwargs", "private", "not-callable", "not-a-string",
                                  "missing-deps", "bad-source", "LOCAL"])
def test_load_local(lib, oracle, tmp_path, capsys, case):
    def scenario(hub, folder):
        _write_repo(folder, deps="['os', 'no_such_pkg_a', 'no_such_pkg_b']"
                    if case == "missing-deps" else "['os']")
        before = list(sys.path)
        try:
            if case == "call":
                return hub.load(folder, "tiny", 3, source="local")
            if case == "kwargs":
                return hub.load(folder, "tiny", width=1, scale=7, source="local")
            if case == "private":
                return hub.load(folder, "_private", source="local")
            if case == "not-callable":
                return hub.load(folder, "not_callable", source="local")
            if case == "not-a-string":
                return hub.load(folder, len, source="local")
            if case == "missing-deps":
                return hub.load(folder, "tiny", source="local")
            if case == "bad-source":
                return hub.load(folder, "tiny", source="svn")
            return hub.load(folder, "tiny", source="LOCAL")
        finally:
            assert sys.path == before
            sys.modules.pop("helper_module", None)

    _same(lib, oracle, tmp_path, capsys, scenario)


# -- hubconf.py from GitHub (served by the loopback server) ------------------------------------

def _zipball(top, deps="['os']"):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr(f"{top}/", b"")
        zf.writestr(f"{top}/hubconf.py", HUBCONF.format(deps=deps))
        zf.writestr(f"{top}/helper_module.py", HELPER)
        zf.writestr(f"{top}/README.md", "a repository\n")
    return buf.getvalue()


def _serve_repo(server, owner, name, *, main=True, branches=("main", "dev"), tags=("v1.0",),
                refuse_tokens=False):
    """What GitHub answers for owner/name: the default-branch probe, the API's branch and tag
    pages, and each ref's archive (a redirect to codeload, as GitHub does)."""
    base = f"/github.com/{owner}/{name}"
    server.add(f"{base}/tree/main/", b"<html>", status=200 if main else 404)
    for kind, refs in (("branches", branches), ("tags", tags)):
        page = [{"name": r, "commit": {"sha": hashlib.sha1(r.encode()).hexdigest()}}
                for r in refs]
        api = f"/api.github.com/repos/{owner}/{name}/{kind}?per_page=100"
        refuse = "Authorization" if refuse_tokens else None
        server.add(f"{api}&page=1", json.dumps(page).encode(),
                   headers={"Content-Type": "application/json; charset=utf-8"},
                   refuse_header=refuse)
        server.add(f"{api}&page=2", b"[]", headers={"Content-Type": "application/json"},
                   refuse_header=refuse)
    for ref in (*branches, *tags):
        sha = hashlib.sha1(ref.encode()).hexdigest()
        codeload = f"/codeload.github.com/{owner}/{name}/legacy.zip/{ref}"
        server.add(f"{base}/zipball/{ref}", status=302,
                   headers={"Location": server.url + codeload})
        server.add(codeload, _zipball(f"{owner}-{name}-{sha[:7]}"))


@pytest.fixture
def github(server):
    with github_via(server):
        yield server


def _hub_at(hub, folder, monkeypatch):
    monkeypatch.setattr(hub, "_hub_dir", None)
    hub.set_dir(os.path.join(folder, "hub"))


def _tree(folder):
    out = []
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        rel = os.path.relpath(root, folder)
        out += [os.path.join(rel, f) for f in sorted(files)]
    return out


def test_github_load_list_help(lib, oracle, tmp_path, capsys, monkeypatch, github):
    _serve_repo(github, "someone", "models")

    def scenario(hub, folder):
        _hub_at(hub, folder, monkeypatch)
        try:
            first = hub.load("someone/models", "tiny", 2, scale=5, trust_repo=True)
            names = hub.list("someone/models")  # cached now: "Using cache found in"
            doc = hub.help("someone/models:main", "tiny")
            quiet = hub.load("someone/models", "tiny", verbose=False)
            with open(os.path.join(folder, "hub", "trusted_list")) as fh:
                trusted = fh.read()
            return first, names, doc, quiet, trusted, _tree(os.path.join(folder, "hub"))
        finally:
            sys.modules.pop("helper_module", None)

    record = _same(lib, oracle, tmp_path, capsys, scenario)
    assert "someone_models\\n" in record and "Using cache found in" in record
    asked = [path for _, path, _ in github.requests]
    assert "/github.com/someone/models/zipball/main" in asked


def test_github_refs_tags_and_forks(lib, oracle, tmp_path, capsys, monkeypatch, github):
    _serve_repo(github, "someone", "old", main=False, branches=("master",), tags=("v1.0",))

    def scenario(hub, folder):
        _hub_at(hub, folder, monkeypatch)
        try:
            got = [hub.load("someone/old", "tiny", trust_repo=True)]       # master by default
            got.append(hub.load("someone/old:v1.0", "tiny", 1, trust_repo=True))
            sha = hashlib.sha1(b"master").hexdigest()
            try:
                hub.load(f"someone/old:{sha[:7]}", "tiny", trust_repo=True)  # a commit's prefix
            except Exception as exc:  # noqa: BLE001  (the archive of a bare sha is not served)
                got.append(type(exc).__name__)
            try:
                hub.load("someone/old:from-a-fork", "tiny", trust_repo=True)
            except ValueError as exc:
                got.append(str(exc))
            got.append(hub.load("someone/old:v1.0", "tiny", 2, force_reload=True,
                                trust_repo=True, skip_validation=True))
            return got, _tree(os.path.join(folder, "hub"))
        finally:
            sys.modules.pop("helper_module", None)

    record = _same(lib, oracle, tmp_path, capsys, scenario)
    assert "Cannot find from-a-fork in https://github.com/someone/old" in record


@pytest.mark.parametrize("answer", ["y", "YES", "n", "", "maybe"])
def test_github_trust_prompt(lib, oracle, tmp_path, capsys, monkeypatch, github, answer):
    _serve_repo(github, "stranger", "repo")
    prompts = []

    def fake_input(prompt=""):
        prompts.append(prompt)
        return answer

    monkeypatch.setattr("builtins.input", fake_input)

    def scenario(hub, folder):
        _hub_at(hub, folder, monkeypatch)
        try:
            value = hub.load("stranger/repo", "tiny")            # trust_repo="check": asks
            again = hub.load("stranger/repo", "tiny", trust_repo=False)  # asks every time
            return value, again, _tree(os.path.join(folder, "hub"))
        finally:
            sys.modules.pop("helper_module", None)

    _same(lib, oracle, tmp_path, capsys, scenario)
    assert len(set(prompts)) == 1 and "stranger_repo" in prompts[0]


def test_github_trusted_owner_is_not_asked(lib, oracle, tmp_path, capsys, monkeypatch, github):
    _serve_repo(github, "pytorch", "vision")
    monkeypatch.setattr("builtins.input", lambda prompt="": pytest.fail("asked"))

    def scenario(hub, folder):
        _hub_at(hub, folder, monkeypatch)
        try:
            return hub.list("pytorch/vision"), _tree(os.path.join(folder, "hub"))
        finally:
            sys.modules.pop("helper_module", None)

    _same(lib, oracle, tmp_path, capsys, scenario)


def test_github_offline_uses_the_cache(lib, oracle, tmp_path, capsys, monkeypatch, github):
    _serve_repo(github, "someone", "models")

    def scenario(hub, folder):
        _hub_at(hub, folder, monkeypatch)
        try:
            got = [hub.load("someone/models", "tiny", trust_repo=True)]
            with monkeypatch.context() as offline:
                # the probe for a main branch fails with a URLError: the cached main is used
                offline.setattr(hub, "urlopen", _offline)
                got.append(hub.load("someone/models", "tiny", 1))
                offline.setattr(hub, "_hub_dir", os.path.join(folder, "empty"))
                os.makedirs(os.path.join(folder, "empty"))
                try:
                    hub.load("someone/models", "tiny", trust_repo=True)
                except RuntimeError as exc:
                    got.append(str(exc))
            return got
        finally:
            sys.modules.pop("helper_module", None)

    record = _same(lib, oracle, tmp_path, capsys, scenario)
    assert "there is no internet connection" in record


def _offline(*args, **kwargs):
    from urllib.error import URLError

    raise URLError("no network")


@pytest.mark.parametrize("refused", [False, True])
def test_github_token_is_sent_and_dropped_when_refused(lib, oracle, tmp_path, capsys,
                                                       monkeypatch, github, refused):
    _serve_repo(github, "someone", "models", refuse_tokens=refused)
    monkeypatch.setenv("GITHUB_TOKEN", "secret123")

    def scenario(hub, folder):
        _hub_at(hub, folder, monkeypatch)
        try:
            return hub.list("someone/models:dev", trust_repo=True)
        finally:
            sys.modules.pop("helper_module", None)

    _same(lib, oracle, tmp_path, capsys, scenario)
    api = [h for _, path, h in github.requests if path.startswith("/api.github.com/")]
    assert any(h.get("Authorization") == "token secret123" for h in api)
    assert any("Authorization" not in h for h in api) == refused
    assert all(h.get("Accept") == "application/vnd.github.v3+json" for h in api)


def test_bad_repository_strings(lib, oracle, tmp_path, capsys, monkeypatch, github):
    def scenario(hub, folder):
        _hub_at(hub, folder, monkeypatch)
        got = []
        for repo in ("justaname:main", "a/b:c:d", "a/b/c:main"):
            try:
                hub.list(repo, trust_repo=True)
            except ValueError as exc:
                got.append(str(exc))
        return got

    _same(lib, oracle, tmp_path, capsys, scenario)
