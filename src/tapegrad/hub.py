"""``torch.hub``: checkpoints and models fetched from the web, cached on disk.

Two services, as in torch:

* **Checkpoints by URL.** :func:`load_state_dict_from_url` downloads a file once into
  ``<hub dir>/checkpoints`` and hands it to :func:`tapegrad.load`; :func:`download_url_to_file`
  does the download: into a temporary ``<dst>.<random hex>.partial`` file renamed over ``dst``
  only when complete, with an optional SHA-256 prefix check and a progress bar on stderr (tqdm's
  when tqdm is installed, else a line of percentages, as torch's fallback writes).
* **Models from a repository's ``hubconf.py``.** :func:`load`, :func:`list` and :func:`help`
  import ``hubconf.py`` from a local folder (``source="local"``) or from a GitHub repository
  (``source="github"``, ``"owner/name[:ref]"``): the repository's zip archive is downloaded
  from ``https://github.com/<owner>/<name>/zipball/<ref>`` and unpacked into
  ``<hub dir>/<owner>_<name>_<ref>``; the same local loader then runs. A repository not on
  the trusted list (``<hub dir>/trusted_list``, or one of torch's own organisations) asks
  before its code runs, unless ``trust_repo=True``.

The hub directory is ``set_dir()``'s, else ``$TORCH_HOME/hub``, where ``$TORCH_HOME`` defaults
to ``$XDG_CACHE_HOME/torch`` and ``$XDG_CACHE_HOME`` to ``~/.cache``.

This module is imported on first use of ``tapegrad.hub``: ``import tapegrad`` does not pay for
urllib, json and zipfile.
"""

from __future__ import annotations

import builtins
import contextlib
import hashlib
import importlib.util
import json
import os
import re
import shutil
import sys
import uuid
import warnings
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.error import HTTPError, URLError
from urllib.parse import urlparse
from urllib.request import Request, urlopen

from .serialization import load as _load

__all__ = ["download_url_to_file", "get_dir", "help", "list", "load",
           "load_state_dict_from_url", "set_dir"]

# the hex digits after the last dash of a checkpoint's name: resnet18-f37072fd.pth -> f37072fd
HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")
ENV_GITHUB_TOKEN = "GITHUB_TOKEN"
ENV_TORCH_HOME = "TORCH_HOME"
ENV_XDG_CACHE_HOME = "XDG_CACHE_HOME"
DEFAULT_CACHE_DIR = "~/.cache"
VAR_DEPENDENCY = "dependencies"  # hubconf.py's list of the packages its entry points import
MODULE_HUBCONF = "hubconf.py"
READ_DATA_CHUNK = 128 * 1024  # bytes read (and reported to the progress bar) at a time

# repositories of these owners run without asking (torch's list)
_TRUSTED_REPO_OWNERS = ("facebookresearch", "facebookincubator", "pytorch", "fairinternal")

_hub_dir: str | None = None  # set_dir()'s folder, when called


# -- the progress bar -------------------------------------------------------------------------

class _PercentBar:
    """What torch writes when tqdm is not installed: ``\\r12.5%`` on stderr after each chunk
    (``\\r<n> bytes`` when the size is unknown), and a newline when the download ends."""

    def __init__(self, total: int | None = None, disable: bool = False, unit: str | None = None,
                 *args: Any, **kwargs: Any) -> None:
        self.total = total
        self.disable = disable
        self.n = 0

    def update(self, n: int) -> None:
        if self.disable:
            return
        self.n += n
        if self.total is None:
            sys.stderr.write(f"\r{self.n:.1f} bytes")
        else:
            sys.stderr.write(f"\r{100 * self.n / float(self.total):.1f}%")
        sys.stderr.flush()

    def set_description(self, *args: Any, **kwargs: Any) -> None:
        """tqdm's method; the fallback bar has no description."""

    def write(self, s: str) -> None:
        sys.stderr.write(f"{s}\n")

    def close(self) -> None:
        self.disable = True

    def __enter__(self) -> _PercentBar:
        return self

    def __exit__(self, *exc: object) -> None:
        if not self.disable:
            sys.stderr.write("\n")


try:  # tqdm's bar when it is installed (torchvision's downloads use this name too)
    from tqdm import tqdm
except ImportError:
    tqdm = _PercentBar  # type: ignore[misc, assignment]


# -- the cache folder ---------------------------------------------------------------------------

def _get_torch_home() -> str:
    """``$TORCH_HOME``, else ``$XDG_CACHE_HOME/torch``, else ``~/.cache/torch``."""
    xdg = os.getenv(ENV_XDG_CACHE_HOME, DEFAULT_CACHE_DIR)
    return os.path.expanduser(os.getenv(ENV_TORCH_HOME, os.path.join(xdg, "torch")))


def get_dir() -> str:
    """The folder the hub caches repositories and checkpoints in: the one given to
    :func:`set_dir`, else ``$TORCH_HOME/hub`` (``$TORCH_HOME`` defaults to
    ``$XDG_CACHE_HOME/torch``, ``$XDG_CACHE_HOME`` to ``~/.cache``)."""
    if os.getenv("TORCH_HUB"):
        warnings.warn("TORCH_HUB is deprecated, please use env TORCH_HOME instead", stacklevel=2)
    if _hub_dir is not None:
        return _hub_dir
    return os.path.join(_get_torch_home(), "hub")


def set_dir(d: str | os.PathLike) -> None:
    """Use folder ``d`` (``~`` expanded) as the hub's cache from now on."""
    global _hub_dir
    _hub_dir = os.path.expanduser(d)


# -- downloads ----------------------------------------------------------------------------------

def download_url_to_file(url: str, dst: str, hash_prefix: str | None = None,
                         progress: bool = True) -> None:
    """Download ``url`` to the path ``dst``.

    The bytes go to ``<dst>.<random hex>.partial`` first, renamed to ``dst`` when the download
    is complete (a broken download never replaces a good file) and removed on any error.

    Args:
        url: the address (any scheme urllib opens).
        dst: the file to write (``~`` expanded).
        hash_prefix: if given, the file's SHA-256 in hex must start with it, else
            ``RuntimeError('invalid hash value (expected "...", got "...")')``.
        progress: show a progress bar on stderr.
    """
    dst = os.path.expanduser(dst)
    tmp: str | None = None
    for _ in range(100):  # a fresh random name; an exclusive create never overwrites
        candidate = f"{dst}.{uuid.uuid4().hex}.partial"
        try:
            fh = open(candidate, "xb")  # noqa: SIM115  (closed in the finally below)
        except FileExistsError:
            continue
        tmp = candidate
        break
    if tmp is None:
        raise FileExistsError(17, "No usable temporary file name found")
    try:
        with urlopen(Request(url, headers={"User-Agent": "torch.hub"})) as response:
            lengths = response.info().get_all("Content-Length")
            size = int(lengths[0]) if lengths else None
            sha256 = hashlib.sha256() if hash_prefix is not None else None
            with tqdm(total=size, disable=not progress, unit="B", unit_scale=True,
                      unit_divisor=1024) as bar:
                while chunk := response.read(READ_DATA_CHUNK):
                    fh.write(chunk)
                    if sha256 is not None:
                        sha256.update(chunk)
                    bar.update(len(chunk))
            fh.close()
            if sha256 is not None and hash_prefix is not None:
                digest = sha256.hexdigest()
                if digest[:len(hash_prefix)] != hash_prefix:
                    raise RuntimeError(
                        f'invalid hash value (expected "{hash_prefix}", got "{digest}")')
        shutil.move(tmp, dst)
    finally:
        fh.close()
        if os.path.exists(tmp):
            os.remove(tmp)


def _is_legacy_zip_format(filename: str) -> bool:
    """A zip holding exactly one file: how checkpoints written before torch 1.6 were shipped
    (the file inside is the old, non-zip ``torch.save`` stream)."""
    if not zipfile.is_zipfile(filename):
        return False
    with zipfile.ZipFile(filename) as zf:
        members = zf.infolist()
    return len(members) == 1 and not members[0].is_dir()


def _legacy_zip_load(filename: str, model_dir: str, map_location: Any,
                     weights_only: bool) -> Any:
    warnings.warn("Falling back to the old format < 1.6. This support will be deprecated in "
                  "favor of default zipfile format introduced in 1.6. Please redo torch.save() "
                  "to save it in the new zipfile format.", FutureWarning, stacklevel=2)
    with zipfile.ZipFile(filename) as zf:
        members = zf.infolist()
        if len(members) != 1:
            raise RuntimeError("Only one file(not dir) is allowed in the zipfile")
        _safe_extract_zip(zf, model_dir)
        extracted = os.path.join(model_dir, members[0].filename)
    return _load(extracted, map_location=map_location, weights_only=weights_only)


def load_state_dict_from_url(url: str, model_dir: str | None = None, map_location: Any = None,
                             progress: bool = True, check_hash: bool = False,
                             file_name: str | None = None,
                             weights_only: bool = False) -> dict[str, Any]:
    """Load the checkpoint at ``url``, downloading it into ``model_dir`` the first time.

    Args:
        url: where the checkpoint is.
        model_dir: the cache folder (default ``<get_dir()>/checkpoints``).
        map_location: as in :func:`tapegrad.load`.
        progress: show a progress bar on stderr while downloading.
        check_hash: the file name follows ``name-<sha256 prefix>.ext`` (torchvision's weights
            do); the download must hash to that prefix.
        file_name: the name to cache the file under (default: the URL's last path part).
        weights_only: as in :func:`tapegrad.load`.

    A file already in the cache is loaded without checking its hash. A zip holding one old-format
    checkpoint is unpacked first (with a ``FutureWarning``, as in torch).
    """
    if os.getenv("TORCH_MODEL_ZOO"):
        warnings.warn("TORCH_MODEL_ZOO is deprecated, please use env TORCH_HOME instead",
                      stacklevel=2)
    if model_dir is None:
        model_dir = os.path.join(get_dir(), "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    filename = file_name if file_name is not None else os.path.basename(urlparse(url).path)
    cached_file = os.path.join(model_dir, filename)
    if not os.path.exists(cached_file):
        sys.stdout.write(f'Downloading: "{url}" to {cached_file}\n')
        hash_prefix = None
        if check_hash:
            found = HASH_REGEX.search(filename)
            hash_prefix = found.group(1) if found else None
        download_url_to_file(url, cached_file, hash_prefix, progress=progress)
    if _is_legacy_zip_format(cached_file):
        return _legacy_zip_load(cached_file, model_dir, map_location, weights_only)
    return _load(cached_file, map_location=map_location, weights_only=weights_only)


# -- hubconf.py: local folders and GitHub repositories -----------------------------------------

_PATH_SEP = re.compile(r"[/\\]")


def _safe_extract_zip(archive: zipfile.ZipFile, folder: str) -> None:
    """Unpack ``archive`` into ``folder``, refusing any entry that would land outside it."""
    root = Path(folder).resolve(strict=False)
    for member in archive.infolist():
        name = os.path.normpath(member.filename)
        if name.startswith(("/", "\\")) or (len(name) >= 2 and name[1] == ":"
                                              and name[0].isalpha()):
            raise ValueError(f"Archive entry has absolute path: {member.filename}")
        if ".." in _PATH_SEP.split(name):
            raise ValueError(f"Archive entry contains directory traversal: {member.filename}")
        if not (root / name).resolve(strict=False).is_relative_to(root):
            raise ValueError(f"Archive entry escapes target directory: {member.filename}")
        archive.extract(member, root)


@contextlib.contextmanager
def _add_to_sys_path(path: str) -> Iterator[None]:
    """``hubconf.py`` imports its repository's other modules: put the folder first on the path."""
    sys.path.insert(0, path)
    try:
        yield
    finally:
        sys.path.remove(path)


def _import_module(name: str, path: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise AssertionError(f"failed to load spec from {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _import_hubconf(folder: str) -> Any:
    with _add_to_sys_path(folder):
        return _import_module(MODULE_HUBCONF, os.path.join(folder, MODULE_HUBCONF))


def _load_attr_from_module(module: Any, name: str) -> Any:
    return getattr(module, name) if name in dir(module) else None


def _check_dependencies(module: Any) -> None:
    """hubconf.py's ``dependencies``: the packages that must be importable."""
    dependencies = _load_attr_from_module(module, VAR_DEPENDENCY)
    if dependencies is not None:
        missing = [pkg for pkg in dependencies if importlib.util.find_spec(pkg) is None]
        if missing:
            raise RuntimeError(f"Missing dependencies: {', '.join(missing)}")


def _load_entry_from_hubconf(module: Any, model: Any) -> Any:
    if not isinstance(model, str):
        raise ValueError("Invalid input: model should be a string of function name")
    _check_dependencies(module)
    entry = _load_attr_from_module(module, model)
    if entry is None or not callable(entry):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return entry


def _git_archive_link(owner: str, name: str, ref: str) -> str:
    return f"https://github.com/{owner}/{name}/zipball/{ref}"


def _read_url(request: Any) -> str:
    with urlopen(request) as response:
        return response.read().decode(response.headers.get_content_charset("utf-8"))


def _parse_repo_info(github: str) -> tuple[str, str, str]:
    """``"owner/name[:ref]"`` -> (owner, name, ref). Without a ref: ``main`` if the repository
    has that branch, else ``master``; offline, whichever of the two is cached."""
    repo_info, ref = github.split(":") if ":" in github else (github, None)
    owner, name = repo_info.split("/")
    if ref is not None:
        return owner, name, ref
    try:
        with urlopen(f"https://github.com/{owner}/{name}/tree/main/"):
            return owner, name, "main"
    except HTTPError as exc:
        if exc.code == 404:
            return owner, name, "master"
        raise
    except URLError as exc:
        for candidate in ("main", "master"):
            if os.path.exists(f"{get_dir()}/{owner}_{name}_{candidate}"):
                return owner, name, candidate
        raise RuntimeError("It looks like there is no internet connection and the repo could "
                           f"not be found in the cache ({get_dir()})") from exc


def _validate_not_a_forked_repo(owner: str, name: str, ref: str) -> None:
    """The ref must be a branch, a tag or a commit of ``owner/name`` itself (GitHub also serves
    a fork's commits under the original's name): asked of GitHub's API, page by page."""
    headers = {"Accept": "application/vnd.github.v3+json"}
    token = os.environ.get(ENV_GITHUB_TOKEN)
    if token is not None:
        headers["Authorization"] = f"token {token}"
    for kind in ("branches", "tags"):
        page = 0
        while True:
            page += 1
            url = f"https://api.github.com/repos/{owner}/{name}/{kind}?per_page=100&page={page}"
            try:
                answer = json.loads(_read_url(Request(url, headers=headers)))
            except HTTPError:  # the token may lack rights: once more without it
                del headers["Authorization"]
                answer = json.loads(_read_url(Request(url, headers=headers)))
            if not answer:
                break
            for entry in answer:
                if entry["name"] == ref or entry["commit"]["sha"].startswith(ref):
                    return
    raise ValueError(f"Cannot find {ref} in https://github.com/{owner}/{name}. If it's a commit "
                     "from a forked repo, please call hub.load() with forked repo directly.")


def _check_repo_is_trusted(owner: str, name: str, owner_name_branch: str,
                           trust_repo: Any) -> None:
    """Ask before running code from a repository not trusted yet; remember the answer."""
    hub_dir = get_dir()
    trusted_file = os.path.join(hub_dir, "trusted_list")
    if not os.path.exists(trusted_file):
        Path(trusted_file).touch()
    with open(trusted_file) as fh:
        trusted = tuple(line.strip() for line in fh)
    # a repository downloaded before the trust list existed counts as trusted
    already_downloaded = next(os.walk(hub_dir))[1]
    owner_name = f"{owner}_{name}"
    is_trusted = (owner_name in trusted or owner_name_branch in already_downloaded
                  or owner in _TRUSTED_REPO_OWNERS)
    if trust_repo is False or (trust_repo == "check" and not is_trusted):
        answer = input(
            f"The repository {owner_name} does not belong to the list of trusted repositories "
            "and as such cannot be downloaded. Do you trust this repository and wish to add it "
            "to the trusted list of repositories (y/N)?")
        if answer.lower() in ("y", "yes"):
            if is_trusted:
                print("The repository is already trusted.")
        elif answer.lower() in ("n", "no", ""):
            raise Exception("Untrusted repository.")
        else:
            raise ValueError(f"Unrecognized response {answer}.")
    if not is_trusted:
        with open(trusted_file, "a") as fh:
            fh.write(owner_name + "\n")


def _remove_if_exists(path: str) -> None:
    if os.path.isfile(path):
        os.remove(path)
    elif os.path.exists(path):
        shutil.rmtree(path)


def _get_cache_or_reload(github: str, force_reload: bool, trust_repo: Any, verbose: bool = True,
                         skip_validation: bool = False) -> str:
    """The local folder of GitHub repository ``github``, downloaded unless already cached."""
    hub_dir = get_dir()
    os.makedirs(hub_dir, exist_ok=True)
    owner, name, ref = _parse_repo_info(github)
    branch = ref.replace("/", "_")  # a branch may contain '/', a folder name may not
    owner_name_branch = f"{owner}_{name}_{branch}"
    repo_dir = os.path.join(hub_dir, owner_name_branch)
    _check_repo_is_trusted(owner, name, owner_name_branch, trust_repo=trust_repo)

    if not force_reload and os.path.exists(repo_dir):
        if verbose:
            sys.stderr.write(f"Using cache found in {repo_dir}\n")
        return repo_dir
    if not skip_validation:
        _validate_not_a_forked_repo(owner, name, ref)
    cached_zip = os.path.join(hub_dir, branch + ".zip")
    _remove_if_exists(cached_zip)
    url = _git_archive_link(owner, name, ref)
    sys.stdout.write(f'Downloading: "{url}" to {cached_zip}\n')
    try:
        download_url_to_file(url, cached_zip, progress=False)
    except HTTPError as exc:
        if exc.code != 300:
            raise
        # 300 Multiple Choices: the ref names both a tag and a branch; take the branch, as git does
        warnings.warn(
            f"The ref {ref} is ambiguous. Perhaps it is both a tag and a branch in the repo? "
            "Torchhub will now assume that it's a branch. You can disambiguate tags and "
            "branches by explicitly passing refs/heads/branch_name or refs/tags/tag_name as the "
            "ref. That might require using skip_validation=True.", stacklevel=3)
        download_url_to_file(_git_archive_link(owner, name, f"refs/heads/{ref}"), cached_zip,
                             progress=False)
    with zipfile.ZipFile(cached_zip) as archive:
        # GitHub names the archive's top folder itself (owner-name-<sha>): take it from the zip
        extracted = os.path.join(hub_dir, archive.infolist()[0].filename)
        _remove_if_exists(extracted)
        _safe_extract_zip(archive, hub_dir)
    _remove_if_exists(cached_zip)
    _remove_if_exists(repo_dir)
    shutil.move(extracted, repo_dir)
    return repo_dir


def list(github: str, force_reload: bool = False, skip_validation: bool = False,  # noqa: A001
         trust_repo: Any = "check", verbose: bool = True) -> builtins.list[str]:
    """The entry points (public callables) of GitHub repository ``github``'s ``hubconf.py``.

    ``github`` is ``"owner/name[:ref]"``; ``trust_repo`` is ``"check"`` (ask unless trusted),
    ``True`` (trust and remember) or ``False`` (always ask).
    """
    repo_dir = _get_cache_or_reload(github, force_reload, trust_repo, verbose=verbose,
                                    skip_validation=skip_validation)
    module = _import_hubconf(repo_dir)
    return [f for f in dir(module) if callable(getattr(module, f)) and not f.startswith("_")]


def help(github: str, model: str, force_reload: bool = False,  # noqa: A001
         skip_validation: bool = False, trust_repo: Any = "check") -> str | None:
    """The docstring of entry point ``model`` of GitHub repository ``github``'s hubconf.py."""
    repo_dir = _get_cache_or_reload(github, force_reload, trust_repo, verbose=True,
                                    skip_validation=skip_validation)
    return _load_entry_from_hubconf(_import_hubconf(repo_dir), model).__doc__


def load(repo_or_dir: str, model: str, *args: Any, source: str = "github",
         trust_repo: Any = "check", force_reload: bool = False, verbose: bool = True,
         skip_validation: bool = False, **kwargs: Any) -> Any:
    """Call entry point ``model`` of a ``hubconf.py`` with ``*args, **kwargs``.

    Args:
        repo_or_dir: ``"owner/name[:ref]"`` with ``source="github"`` (downloaded and cached),
            a folder holding ``hubconf.py`` with ``source="local"``.
        model: the entry point's name.
        source: ``"github"`` or ``"local"``.
        trust_repo, force_reload, verbose, skip_validation: GitHub sources only (see
            :func:`list`).

    Example:
        >>> net = torch.hub.load("path/to/repo", "resnet18", source="local")  # doctest: +SKIP
    """
    source = source.lower()
    if source not in ("github", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    if source == "github":
        repo_or_dir = _get_cache_or_reload(repo_or_dir, force_reload, trust_repo,
                                           verbose=verbose, skip_validation=skip_validation)
    return _load_local(repo_or_dir, model, *args, **kwargs)


def _load_local(hubconf_dir: str, model: str, *args: Any, **kwargs: Any) -> Any:
    """Call entry point ``model`` of ``hubconf_dir/hubconf.py`` (the folder stays on
    ``sys.path`` while it runs, so it may import the repository's modules)."""
    with _add_to_sys_path(hubconf_dir):
        module = _import_module(MODULE_HUBCONF, os.path.join(hubconf_dir, MODULE_HUBCONF))
        entry = _load_entry_from_hubconf(module, model)
        return entry(*args, **kwargs)
