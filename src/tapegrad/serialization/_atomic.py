"""Atomic file writes: a checkpoint on disk is either the old file or the new one, never half.

The writer fills a temporary file next to the destination, flushes and fsyncs it, then
``os.replace``s it over the destination (one atomic rename) and fsyncs the folder, so a crash
or a full disk mid-save leaves the previous file whole.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from typing import IO, Any

__all__ = ["atomic_write"]


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


def atomic_write(path: Any, write: Callable[[IO[bytes]], None]) -> None:
    """Call ``write(fh)`` on a temporary file next to ``path``, fsync it, then rename it over
    ``path``; on any error the temporary file is removed and ``path`` is untouched."""
    target = os.path.realpath(os.fspath(path))
    folder = os.path.dirname(target) or "."
    if not os.path.isdir(folder):
        raise RuntimeError(f"Parent directory {os.path.dirname(os.fspath(path))} does not exist.")
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(target) + ".", suffix=".tmp",
                               dir=folder)
    try:
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
