"""Atomic file writes: a checkpoint on disk is either the old file or the new one, never half.

For a regular file (or a new one) the writer fills a temporary file next to the destination,
flushes and fsyncs it, then ``os.replace``s it over the destination (one atomic rename) and
fsyncs the folder, so a crash or a full disk mid-save leaves the previous file whole.

* **Not a regular file.** A destination that exists and is something else (``/dev/null``, a
  FIFO, a character device) is written in place, as torch writes it: a rename would replace
  the device node with a regular file.
* **Temporary names.** ``.<name>.<8 random characters>.tapegrad-tmp``, with ``<name>`` cut
  short so that the whole stays within the file system's limit on a name (255 bytes on most):
  a valid 250-character file name saves.
* **Stale temporary files.** A save killed by SIGKILL (or a power cut) leaves its temporary
  file behind. Each save removes, from the destination's folder, the files of that naming
  pattern that are older than itself and that no live save holds: a writer keeps an exclusive
  ``flock`` on its temporary file until it is renamed, and the kernel drops the lock of a
  process that died, so a concurrent save's file is never taken.
* **Errors.** A destination that cannot be opened (a folder, a read-only folder) raises torch's
  ``RuntimeError`` ("open file failed with strerror: ..."), so that ``except RuntimeError``
  catches it where it catches torch's.
"""

from __future__ import annotations

import os
import re
import stat
import tempfile
import time
from collections.abc import Callable
from typing import IO, Any

try:
    import fcntl
except ImportError:  # (Windows: no locks; stale files are told by their age alone)
    fcntl = None  # type: ignore[assignment]

__all__ = ["atomic_write"]

SUFFIX = ".tapegrad-tmp"
_RANDOM = 8  # tempfile's random part: 8 characters of [a-z0-9_]
_TEMP_NAME = re.compile(r"^\..*\.[a-z0-9_]{" + str(_RANDOM) + "}" + re.escape(SUFFIX) + "$")


def _file_mode(path: str) -> int:
    """The mode a freshly created file would get (the destination's, if it exists)."""
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        pass
    umask = 0o022
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    umask = int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    return 0o666 & ~umask


def open_failed(err: OSError) -> RuntimeError:
    """torch's error when its checkpoint writer cannot open the file."""
    reason = os.strerror(err.errno) if err.errno else str(err)
    return RuntimeError("[enforce fail at inline_container.cc:747] . open file failed with "
                        f"strerror: {reason}")


def _name_max(folder: str) -> int:
    try:
        return os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):
        return 255


def _temp_prefix(folder: str, base: str) -> str:
    """``.<base>.``, ``base`` cut (on a character boundary) so that the temporary name fits."""
    room = _name_max(folder) - len(".." + SUFFIX) - _RANDOM
    while len(os.fsencode(base)) > room:
        base = base[:-1]
    return "." + base + "."


def remove_stale_temporaries(folder: str, started: float) -> None:
    """Remove the temporary files of this module's pattern in ``folder`` that were last
    written before ``started`` and that no live writer holds."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        if not _TEMP_NAME.match(entry.name):
            continue
        try:
            if not entry.is_file(follow_symlinks=False) or entry.stat(
                    follow_symlinks=False).st_mtime >= started:
                continue
            if fcntl is not None:
                fd = os.open(entry.path, os.O_RDONLY)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # held: a save in progress
                except OSError:
                    continue
                finally:
                    os.close(fd)
            os.unlink(entry.path)
        except OSError:
            continue


def _write_in_place(target: str, write: Callable[[IO[bytes]], None]) -> None:
    try:
        fh = open(target, "wb")
    except OSError as e:
        raise open_failed(e) from None
    with fh:
        write(fh)
        fh.flush()


def atomic_write(path: Any, write: Callable[[IO[bytes]], None]) -> None:
    """Call ``write(fh)`` on a temporary file next to ``path``, fsync it, then rename it over
    ``path``; on any error the temporary file is removed and ``path`` is untouched. A ``path``
    that exists and is not a regular file is written in place."""
    started = time.time()
    given = os.fspath(path)
    name = os.fsdecode(given)
    if name.endswith(os.sep) or (os.altsep and name.endswith(os.altsep)):
        raise RuntimeError(f"[enforce fail at inline_container.cc:720] . invalid file name: "
                           f"{name}")
    target = os.path.realpath(given)
    folder = os.path.dirname(target) or "."
    if not os.path.isdir(folder):
        raise RuntimeError(f"Parent directory {os.path.dirname(name)} does not exist.")
    try:
        mode = os.stat(target).st_mode
    except OSError:
        mode = None
    if mode is not None and stat.S_ISDIR(mode):
        raise open_failed(IsADirectoryError(21, os.strerror(21)))
    if mode is not None and not stat.S_ISREG(mode):  # a device, a FIFO, a socket
        _write_in_place(target, write)
        return
    remove_stale_temporaries(folder, started)
    prefix = _temp_prefix(folder, os.path.basename(target))
    try:
        fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=SUFFIX, dir=folder)
    except OSError as e:
        raise open_failed(e) from None
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)  # (kept until the file is closed: see the docstring)
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
            os.chmod(tmp, _file_mode(target))
            os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    try:  # make the rename itself durable
        dir_fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    except OSError:
        pass
    finally:
        os.close(dir_fd)
