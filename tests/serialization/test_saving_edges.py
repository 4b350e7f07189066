"""Saving to unusual destinations (serialization/_atomic.py), against torch where it has a say.

* a destination that exists and is not a regular file (``/dev/null``, a FIFO) is written in
  place: it stays what it was, and the bytes arrive;
* a valid 250-character file name saves (the temporary name stays within the name limit);
* temporary files of tapegrad's pattern left by a killed save are removed by the next save in
  that folder, unless a live save holds them or they are newer than the save;
* a folder, a trailing slash, a read-only folder, a missing parent: torch's RuntimeError, type
  and message;
* a regular file is still replaced atomically (a new inode, the old one whole until then).
"""

from __future__ import annotations

import fcntl
import io
import os
import signal
import stat
import subprocess
import sys
import textwrap
import threading
import time

SUFFIX = ".tapegrad-tmp"


def _save_error(L, path):
    try:
        L.save({"w": L.ones(2)}, path)
    except RuntimeError as e:  # (``except RuntimeError`` must catch it, as it catches torch's)
        return str(e).replace("tapegrad", "torch")
    return None


def test_dev_null_stays_a_device(lib):
    before = os.stat("/dev/null")
    lib.save({"w": lib.ones(3)}, "/dev/null")
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and after.st_ino == before.st_ino


def test_fifo_is_written_in_place(lib, tmp_path):
    fifo = tmp_path / "pipe.pt"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    lib.save({"w": lib.arange(4.0)}, fifo)
    reader.join(timeout=60)
    assert not reader.is_alive() and stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert lib.equal(lib.load(io.BytesIO(received[0]))["w"], lib.arange(4.0))
    assert sorted(os.listdir(tmp_path)) == ["pipe.pt"]


def test_a_250_character_name_saves(lib, oracle, tmp_path):
    for L, letter in ((oracle, "t"), (lib, "g")):
        path = tmp_path / (letter * 247 + ".pt")
        L.save({"w": L.ones(2)}, path)
        assert L.equal(L.load(path)["w"], L.ones(2))
    assert sorted(len(n) for n in os.listdir(tmp_path)) == [250, 250]


def _temp(folder, name, age: float = 0.0):
    path = folder / name
    path.write_bytes(b"half a checkpoint")
    stamp = time.time() - age
    os.utime(path, (stamp, stamp))
    return path


def test_stale_temporary_files_are_removed(lib, tmp_path):
    stale = _temp(tmp_path, f".model.pt.abcd1234{SUFFIX}", age=60)
    other_target = _temp(tmp_path, f".other.pt.zz_99x0y{SUFFIX}", age=60)
    newer = _temp(tmp_path, f".model.pt.newer000{SUFFIX}", age=-60)  # newer than the save
    held = _temp(tmp_path, f".model.pt.held0000{SUFFIX}", age=60)
    foreign = [_temp(tmp_path, n, age=60) for n in (".model.pt.abcd1234.tmp",
                                                     f"model.pt.abcd1234{SUFFIX}",
                                                     f".model.pt.toolongname{SUFFIX}")]
    lock = os.open(held, os.O_RDONLY)
    fcntl.flock(lock, fcntl.LOCK_EX)  # a save in progress in another process
    try:
        lib.save({"w": lib.ones(2)}, tmp_path / "model.pt")
    finally:
        os.close(lock)
    assert not stale.exists() and not other_target.exists()
    assert newer.exists() and held.exists() and all(f.exists() for f in foreign)


def test_a_killed_save_leaves_nothing_for_long(lib, tmp_path):
    """SIGKILL in the middle of a save: its temporary file stays until the next save there."""
    path = tmp_path / "model.pt"
    code = textwrap.dedent(f"""
        import time, tapegrad
        from tapegrad.serialization import _zip
        real = _zip.ZipWriter.write_record
        def slow(self, name, data):
            if name.startswith("data/"):
                print("writing", flush=True)
                time.sleep(600)
            return real(self, name, data)
        _zip.ZipWriter.write_record = slow
        tapegrad.save({{"w": tapegrad.ones(1000)}}, {str(path)!r})
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "writing"
        left = [n for n in os.listdir(tmp_path) if n.endswith(SUFFIX)]
        assert len(left) == 1
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=60)
    assert [n for n in os.listdir(tmp_path) if n.endswith(SUFFIX)] == left  # still there
    time.sleep(0.05)  # (a save that starts later than the file was written)
    lib.save({"w": lib.zeros(2)}, path)
    assert sorted(os.listdir(tmp_path)) == ["model.pt"]
    assert lib.equal(lib.load(path)["w"], lib.zeros(2))


def test_regular_files_are_still_replaced_atomically(lib, tmp_path):
    path = tmp_path / "model.pt"
    lib.save({"v": 1}, path)
    first = os.stat(path).st_ino
    lib.save({"v": 2}, path)
    assert os.stat(path).st_ino != first and lib.load(path) == {"v": 2}
    assert sorted(os.listdir(tmp_path)) == ["model.pt"]


def _read_only_folder(tmp_path):
    """A folder where this process cannot create a file (a chmod 555 folder, or, for root, who
    ignores modes, sysfs), or None."""
    folder = tmp_path / "locked"
    folder.mkdir()
    folder.chmod(0o555)
    for candidate in (folder, "/sys/kernel"):
        probe = os.path.join(candidate, "probe.pt")
        try:
            with open(probe, "wb"):
                pass
        except PermissionError:
            return str(candidate)
        except OSError:
            continue
        os.unlink(probe)
    return None


def test_errors_are_torchs(lib, oracle, tmp_path):
    folder = tmp_path / "a_folder"
    folder.mkdir()
    cases = [str(folder), str(folder) + os.sep, str(tmp_path / "missing" / "x.pt"),
             str(tmp_path / ".pt")]
    locked = _read_only_folder(tmp_path)
    if locked is not None:
        cases.append(os.path.join(locked, "x.pt"))
    for path in cases:
        expected = _save_error(oracle, path)
        assert expected is not None, path
        assert _save_error(lib, path) == expected, path
    (tmp_path / "locked").chmod(0o755)
    assert sorted(os.listdir(folder)) == []
