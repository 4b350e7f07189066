"""The Store family: the key-value control plane that ranks meet through (torch's ``Store``).

A store holds byte strings under string keys. Ranks use one to find each other before any
collective exists: rank 0 publishes where to connect, the others wait for that key. Nothing
bulk goes through a store; tensors travel over MPI (``_mpi.py``).

* ``HashStore``: a dict in this process (threads meet through it).
* ``FileStore``: an append-only file of records on a shared file system; every process that
  opens the same path sees the same keys (``fcntl`` locks keep records whole).
* ``TCPStore``: a small server in the process that says ``is_master=True`` (a thread that
  answers one connection per client), and a client in every process.
* ``PrefixStore``: another store with a prefix added to every key.

``get`` and ``wait`` block until the keys exist, at most the store's timeout; then they raise
``DistStoreError`` as torch does.
"""

from __future__ import annotations

import os
import socket
import socketserver
import struct
import threading
import time
from datetime import timedelta
from typing import Any

from ._errors import DistNetworkError, DistStoreError

__all__ = ["FileStore", "HashStore", "PrefixStore", "Store", "TCPStore"]

DEFAULT_TIMEOUT = timedelta(seconds=300)


def _bytes(value: Any) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, list):  # torch accepts a list of byte values
        return bytes(value)
    raise TypeError(f"store values are str or bytes, not {type(value).__name__}")


class Store:
    """The interface every store implements (torch's ``torch.distributed.Store``)."""

    def __init__(self) -> None:
        self._timeout = DEFAULT_TIMEOUT

    # The primitive operations each store defines.
    def set(self, key: str, value: Any) -> None:
        raise NotImplementedError

    def _try_get(self, key: str) -> bytes | None:
        raise NotImplementedError

    def add(self, key: str, value: int) -> int:
        raise NotImplementedError

    def compare_set(self, key: str, expected_value: Any, desired_value: Any) -> bytes:
        raise NotImplementedError

    def delete_key(self, key: str) -> bool:
        raise NotImplementedError

    def num_keys(self) -> int:
        raise NotImplementedError

    def _timeout_error(self, keys: list[str], timeout: float) -> Exception:
        """What a wait that ran out of time raises (each store words it as torch's does)."""
        return DistStoreError("Wait timeout")

    def _wait_for(self, keys: list[str], timeout: float) -> bool:
        """True once every key exists; False after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        delay = 0.001
        while not self.check(keys):
            if time.monotonic() >= deadline:
                return False
            time.sleep(delay)
            delay = min(delay * 2, 0.05)
        return True

    # What is built on them.
    @property
    def timeout(self) -> timedelta:
        return self._timeout

    def set_timeout(self, timeout: timedelta) -> None:
        self._timeout = timeout

    def get(self, key: str) -> bytes:
        """The value of ``key``, waiting (up to the timeout) until some process sets it."""
        self.wait([key])
        value = self._try_get(key)
        if value is None:  # deleted between the wait and the read
            raise self._timeout_error([key], self._timeout.total_seconds())
        return value

    def check(self, keys: list[str]) -> bool:
        return all(self._try_get(k) is not None for k in keys)

    def wait(self, keys: list[str], timeout: timedelta | None = None) -> None:
        seconds = (timeout or self._timeout).total_seconds()
        if not self._wait_for(list(keys), seconds):
            raise self._timeout_error(list(keys), seconds)

    def multi_get(self, keys: list[str]) -> list[bytes]:
        return [self.get(k) for k in keys]

    def multi_set(self, keys: list[str], values: list[Any]) -> None:
        for k, v in zip(keys, values, strict=True):
            self.set(k, v)

    def append(self, key: str, value: Any) -> None:
        old = self._try_get(key) or b""
        self.set(key, old + _bytes(value))

    def has_extended_api(self) -> bool:
        return True


class HashStore(Store):
    """Keys in a dict of this process, shared by its threads."""

    def __init__(self) -> None:
        super().__init__()
        self._data: dict[str, bytes] = {}
        self._cond = threading.Condition()

    def set(self, key: str, value: Any) -> None:
        with self._cond:
            self._data[key] = _bytes(value)
            self._cond.notify_all()

    def _try_get(self, key: str) -> bytes | None:
        with self._cond:
            return self._data.get(key)

    def add(self, key: str, value: int) -> int:
        with self._cond:
            new = int(self._data.get(key, b"0")) + int(value)
            self._data[key] = str(new).encode()
            self._cond.notify_all()
            return new

    def compare_set(self, key: str, expected_value: Any, desired_value: Any) -> bytes:
        with self._cond:
            current = self._data.get(key)
            expected = _bytes(expected_value)
            if (current is None and expected == b"") or current == expected:
                self._data[key] = _bytes(desired_value)
                self._cond.notify_all()
                return self._data[key]
            return current if current is not None else expected

    def delete_key(self, key: str) -> bool:
        with self._cond:
            return self._data.pop(key, None) is not None

    def num_keys(self) -> int:
        with self._cond:
            return len(self._data)

    def _wait_for(self, keys: list[str], timeout: float) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: all(k in self._data for k in keys), timeout)


class PrefixStore(Store):
    """``store`` with ``prefix + "/"`` in front of every key."""

    def __init__(self, prefix: str, store: Store) -> None:
        super().__init__()
        self._prefix = prefix
        self.underlying_store = store
        self._timeout = store.timeout

    def _k(self, key: str) -> str:
        return f"{self._prefix}/{key}"

    def set(self, key: str, value: Any) -> None:
        self.underlying_store.set(self._k(key), value)

    def _try_get(self, key: str) -> bytes | None:
        return self.underlying_store._try_get(self._k(key))

    def add(self, key: str, value: int) -> int:
        return self.underlying_store.add(self._k(key), value)

    def compare_set(self, key: str, expected_value: Any, desired_value: Any) -> bytes:
        return self.underlying_store.compare_set(self._k(key), expected_value, desired_value)

    def delete_key(self, key: str) -> bool:
        return self.underlying_store.delete_key(self._k(key))

    def num_keys(self) -> int:
        return self.underlying_store.num_keys()

    def check(self, keys: list[str]) -> bool:
        return self.underlying_store.check([self._k(k) for k in keys])

    def _wait_for(self, keys: list[str], timeout: float) -> bool:
        return self.underlying_store._wait_for([self._k(k) for k in keys], timeout)


# ---------------------------------------------------------------------------------------------
# FileStore: records appended to one file


class FileStore(Store):
    """Keys kept in the file ``file_name``, shared by every process that opens it.

    The file is a log: each record is ``key length, key, value length, value`` (a value length
    of ``0xFFFFFFFF`` deletes the key). A writer appends under an exclusive ``flock``; a reader
    replays what was appended since it last looked. With ``world_size`` set, the last of that
    many stores to be closed removes the file, as torch's does.
    """

    _DELETED = 0xFFFFFFFF

    def __init__(self, file_name: str, world_size: int = -1) -> None:
        super().__init__()
        import fcntl  # fcntl: POSIX only, loaded on first use

        self._fcntl = fcntl
        self.path = file_name
        self.world_size = world_size
        self._fd = os.open(file_name, os.O_RDWR | os.O_CREAT, 0o644)
        self._offset = 0
        self._cache: dict[str, bytes] = {}
        self._closed = False
        if world_size > 0:
            self.add("__filestore_users__", 1)

    def _timeout_error(self, keys: list[str], timeout: float) -> Exception:
        missing = [k for k in keys if self._try_get(k) is None] or keys
        return RuntimeError(f"Timeout waiting for key: {missing[0]} after "
                            f"{int(timeout * 1000)} ms")

    def _locked(self, exclusive: bool) -> Any:
        store = self

        class _Lock:
            def __enter__(self) -> None:
                store._fcntl.flock(store._fd, store._fcntl.LOCK_EX if exclusive
                                   else store._fcntl.LOCK_SH)

            def __exit__(self, *exc: Any) -> None:
                store._fcntl.flock(store._fd, store._fcntl.LOCK_UN)

        return _Lock()

    def _refresh(self) -> None:
        size = os.fstat(self._fd).st_size
        if size <= self._offset:
            return
        data = os.pread(self._fd, size - self._offset, self._offset)
        pos = 0
        while pos + 4 <= len(data):
            (klen,) = struct.unpack_from("<I", data, pos)
            key = data[pos + 4:pos + 4 + klen].decode()
            pos += 4 + klen
            (vlen,) = struct.unpack_from("<I", data, pos)
            pos += 4
            if vlen == self._DELETED:
                self._cache.pop(key, None)
            else:
                self._cache[key] = data[pos:pos + vlen]
                pos += vlen
        self._offset += pos

    def _append(self, key: str, value: bytes | None) -> None:
        k = key.encode()
        record = struct.pack("<I", len(k)) + k
        if value is None:
            record += struct.pack("<I", self._DELETED)
        else:
            record += struct.pack("<I", len(value)) + value
        os.lseek(self._fd, 0, os.SEEK_END)
        os.write(self._fd, record)

    def set(self, key: str, value: Any) -> None:
        with self._locked(True):
            self._append(key, _bytes(value))

    def _try_get(self, key: str) -> bytes | None:
        with self._locked(False):
            self._refresh()
            return self._cache.get(key)

    def add(self, key: str, value: int) -> int:
        with self._locked(True):
            self._refresh()
            new = int(self._cache.get(key, b"0")) + int(value)
            self._append(key, str(new).encode())
            return new

    def compare_set(self, key: str, expected_value: Any, desired_value: Any) -> bytes:
        with self._locked(True):
            self._refresh()
            current = self._cache.get(key)
            expected = _bytes(expected_value)
            if (current is None and expected == b"") or current == expected:
                desired = _bytes(desired_value)
                self._append(key, desired)
                return desired
            return current if current is not None else expected

    def delete_key(self, key: str) -> bool:
        # torch's FileStore answers True whether or not the key was there
        with self._locked(True):
            self._refresh()
            if key in self._cache:
                self._append(key, None)
            return True

    def num_keys(self) -> int:
        with self._locked(False):
            self._refresh()
            return len([k for k in self._cache if k != "__filestore_users__"])

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        last = False
        if self.world_size > 0:
            last = self.add("__filestore_users__", -1) <= 0 and \
                int(self._try_get("__filestore_users__") or b"0") <= 0
        os.close(self._fd)
        if last:
            try:
                os.unlink(self.path)
            except OSError:
                pass

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


# ---------------------------------------------------------------------------------------------
# TCPStore: a key-value server and its clients
#
# A message is a 4-byte length and then fields, each a 4-byte length and its bytes. The first
# field of a request names the command; the server answers each request with one message.


def _pack(*fields: bytes) -> bytes:
    body = b"".join(struct.pack("<I", len(f)) + f for f in fields)
    return struct.pack("<I", len(body)) + body


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    chunks = []
    while n:
        chunk = sock.recv(n)
        if not chunk:
            raise ConnectionError("connection closed by the store's peer")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def _read_message(sock: socket.socket) -> list[bytes]:
    (length,) = struct.unpack("<I", _recv_exact(sock, 4))
    body = _recv_exact(sock, length)
    fields, pos = [], 0
    while pos < len(body):
        (n,) = struct.unpack_from("<I", body, pos)
        fields.append(body[pos + 4:pos + 4 + n])
        pos += 4 + n
    return fields


class _Handler(socketserver.BaseRequestHandler):
    """One client's connection: read a request, answer it, until the client hangs up."""

    def handle(self) -> None:
        store: HashStore = self.server.store  # type: ignore[attr-defined]
        sock = self.request
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        while True:
            try:
                fields = _read_message(sock)
            except (ConnectionError, OSError):
                return
            cmd, args = fields[0], fields[1:]
            keys = [a.decode() for a in args]
            if cmd == b"set":
                store.set(keys[0], args[1])
                reply = _pack(b"ok")
            elif cmd == b"get":
                value = store._try_get(keys[0])
                reply = _pack(b"none") if value is None else _pack(b"ok", value)
            elif cmd == b"add":
                reply = _pack(str(store.add(keys[0], int(args[1]))).encode())
            elif cmd == b"cas":
                reply = _pack(store.compare_set(keys[0], args[1], args[2]))
            elif cmd == b"del":
                reply = _pack(b"1" if store.delete_key(keys[0]) else b"0")
            elif cmd == b"num":
                reply = _pack(str(store.num_keys()).encode())
            elif cmd == b"check":
                reply = _pack(b"1" if store.check(keys) else b"0")
            elif cmd == b"wait":  # wait(timeout_ms, keys...)
                ok = store._wait_for(keys[1:], int(args[0]) / 1000)
                reply = _pack(b"1" if ok else b"0")
            elif cmd == b"append":
                store.append(keys[0], args[1])
                reply = _pack(b"ok")
            else:
                reply = _pack(b"error", b"unknown command")
            sock.sendall(reply)


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


class TCPStore(Store):
    """A store served over TCP by the process created with ``is_master=True``.

    ``TCPStore(host_name, port, world_size=None, is_master=False, timeout=timedelta(seconds=300),
    wait_for_workers=True)``. The master starts the server (a daemon thread; ``port=0`` picks a
    free port, read back as ``.port``), and every instance, the master's included, is a client
    of it. A client retries connecting until the timeout, so workers may start first. With
    ``wait_for_workers`` and a ``world_size``, the master's constructor returns once that many
    clients have connected.
    """

    def __init__(self, host_name: str, port: int, world_size: int | None = None,
                 is_master: bool = False, timeout: timedelta = DEFAULT_TIMEOUT,
                 wait_for_workers: bool = True, multi_tenant: bool = False,
                 master_listen_fd: int | None = None, use_libuv: bool = True) -> None:
        super().__init__()
        self._timeout = timeout
        self.host = host_name
        self.libuvBackend = False
        self._server: _Server | None = None
        if is_master:
            try:
                self._server = _Server((host_name, port), _Handler)
            except OSError as exc:
                raise DistNetworkError(
                    f"The server socket has failed to listen on any local network address. "
                    f"port: {port}, useIpv6: false, code: {-exc.errno}, name: "
                    f"{os.strerror(exc.errno or 0)}, message: address already in use"
                    if exc.errno == 98 else f"The server socket has failed to listen on "
                    f"{host_name}:{port}: {exc}") from None
            self._server.store = HashStore()  # type: ignore[attr-defined]
            port = self._server.server_address[1]
            threading.Thread(target=self._server.serve_forever, name="TCPStore server",
                             daemon=True).start()
        self.port = port
        self._lock = threading.Lock()
        self._sock = self._connect(timeout.total_seconds())
        self.add("__tcpstore_clients__", 1)
        if is_master and wait_for_workers and world_size:
            if not self._wait_for_count(world_size, timeout.total_seconds()):
                raise DistStoreError(
                    f"Timed out after {int(timeout.total_seconds())} seconds waiting for "
                    f"clients. {int(self._request(b'get', b'__tcpstore_clients__')[1])}/"
                    f"{world_size} clients joined.")

    def _connect(self, timeout: float) -> socket.socket:
        deadline = time.monotonic() + timeout
        delay = 0.01
        while True:
            try:
                sock = socket.create_connection((self.host, self.port), timeout=max(
                    0.1, deadline - time.monotonic()))
                sock.settimeout(None)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                return sock
            except OSError as exc:
                if time.monotonic() >= deadline:
                    raise DistNetworkError(
                        f"The client socket has timed out after {int(timeout * 1000)}ms while "
                        f"trying to connect to ({self.host}, {self.port}).") from exc
                time.sleep(delay)
                delay = min(delay * 2, 0.5)

    def _timeout_error(self, keys: list[str], timeout: float) -> Exception:
        return DistStoreError(f"wait timeout after {int(timeout * 1000)}ms, keys: "
                              + ", ".join("/" + k for k in keys))

    def _wait_for_count(self, n: int, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while int(self._request(b"get", b"__tcpstore_clients__")[1]) < n:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)
        return True

    def _request(self, *fields: bytes) -> list[bytes]:
        with self._lock:
            try:
                self._sock.sendall(_pack(*fields))
                return _read_message(self._sock)
            except (ConnectionError, OSError) as exc:
                raise DistNetworkError(
                    f"Connection to the store at {self.host}:{self.port} was lost "
                    f"({exc}); the process that hosts it (rank 0) has probably exited."
                ) from None

    def set(self, key: str, value: Any) -> None:
        self._request(b"set", key.encode(), _bytes(value))

    def _try_get(self, key: str) -> bytes | None:
        reply = self._request(b"get", key.encode())
        return reply[1] if reply[0] == b"ok" else None

    def add(self, key: str, value: int) -> int:
        return int(self._request(b"add", key.encode(), str(int(value)).encode())[0])

    def compare_set(self, key: str, expected_value: Any, desired_value: Any) -> bytes:
        return self._request(b"cas", key.encode(), _bytes(expected_value),
                             _bytes(desired_value))[0]

    def delete_key(self, key: str) -> bool:
        return self._request(b"del", key.encode())[0] == b"1"

    def num_keys(self) -> int:
        # torch counts its own bookkeeping key too; ours is hidden
        return int(self._request(b"num")[0]) - 1

    def check(self, keys: list[str]) -> bool:
        return self._request(b"check", *(k.encode() for k in keys))[0] == b"1"

    def _wait_for(self, keys: list[str], timeout: float) -> bool:
        ms = str(int(timeout * 1000)).encode()
        return self._request(b"wait", ms, *(k.encode() for k in keys))[0] == b"1"

    def append(self, key: str, value: Any) -> None:
        self._request(b"append", key.encode(), _bytes(value))

    def __del__(self) -> None:
        try:
            self._sock.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass
