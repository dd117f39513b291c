"""Key-value stores for rendezvous (``TCPStore``, ``FileStore``, ``HashStore``, ``PrefixStore``).

The MPI backend needs none (MPI knows its ranks); NCCL exchanges its unique id through one, and users
may share small values through them as with PyTorch's. Values are bytes; ``get`` and ``wait`` block
until the keys are set or the store's timeout passes (``DistStoreError``).
"""
from __future__ import annotations

import fcntl
import os
import pickle
import socket
import socketserver
import struct
import threading
import time
from datetime import timedelta

from ._types import DistNetworkError, DistStoreError, default_pg_timeout


def _as_bytes(value: str | bytes) -> bytes:
    return value.encode() if isinstance(value, str) else bytes(value)


class Store:
    """The interface every store implements (``torch.distributed.Store``)."""

    def __init__(self, timeout: timedelta = default_pg_timeout) -> None:
        self.timeout = timeout

    def set_timeout(self, timeout: timedelta) -> None:
        self.timeout = timeout

    def set(self, key: str, value: str | bytes) -> None:
        raise NotImplementedError

    def get(self, key: str) -> bytes:
        raise NotImplementedError

    def add(self, key: str, amount: int) -> int:
        raise NotImplementedError

    def check(self, keys: list[str]) -> bool:
        raise NotImplementedError

    def delete_key(self, key: str) -> bool:
        raise NotImplementedError

    def num_keys(self) -> int:
        raise NotImplementedError

    def wait(self, keys: list[str], timeout: timedelta | None = None) -> None:
        deadline = time.monotonic() + (timeout or self.timeout).total_seconds()
        delay = 0.001
        while not self.check(keys):
            if time.monotonic() > deadline:
                raise DistStoreError(f"Timed out after {(timeout or self.timeout).total_seconds():g} s waiting "
                                     f"for the keys {keys} in the store")
            time.sleep(delay)
            delay = min(delay * 2, 0.05)


class HashStore(Store):
    """A store in this process's memory (threads share it)."""

    def __init__(self) -> None:
        super().__init__()
        self._data: dict[str, bytes] = {}
        self._lock = threading.Lock()

    def set(self, key: str, value: str | bytes) -> None:
        with self._lock:
            self._data[key] = _as_bytes(value)

    def get(self, key: str) -> bytes:
        self.wait([key])
        with self._lock:
            return self._data[key]

    def add(self, key: str, amount: int) -> int:
        with self._lock:
            value = int(self._data.get(key, b"0")) + int(amount)
            self._data[key] = str(value).encode()
            return value

    def check(self, keys: list[str]) -> bool:
        with self._lock:
            return all(k in self._data for k in keys)

    def delete_key(self, key: str) -> bool:
        with self._lock:
            return self._data.pop(key, None) is not None

    def num_keys(self) -> int:
        with self._lock:
            return len(self._data)


class PrefixStore(Store):
    """Every key of ``store`` seen under ``prefix/``."""

    def __init__(self, prefix: str, store: Store) -> None:
        super().__init__(store.timeout)
        self.prefix, self.underlying_store = prefix, store

    def _k(self, key: str) -> str:
        return f"{self.prefix}/{key}"

    def set(self, key: str, value: str | bytes) -> None:
        self.underlying_store.set(self._k(key), value)

    def get(self, key: str) -> bytes:
        return self.underlying_store.get(self._k(key))

    def add(self, key: str, amount: int) -> int:
        return self.underlying_store.add(self._k(key), amount)

    def check(self, keys: list[str]) -> bool:
        return self.underlying_store.check([self._k(k) for k in keys])

    def delete_key(self, key: str) -> bool:
        return self.underlying_store.delete_key(self._k(key))

    def num_keys(self) -> int:
        return self.underlying_store.num_keys()


class FileStore(Store):
    """A store in a file that every rank can reach (a shared file system): records appended under a lock."""

    def __init__(self, file_name: str, world_size: int = -1, timeout: timedelta = default_pg_timeout) -> None:
        super().__init__(timeout)
        self.path, self.world_size = os.fspath(file_name), world_size
        open(self.path, "ab").close()

    def _read(self) -> dict[str, bytes]:
        with open(self.path, "rb") as f:
            fcntl.flock(f, fcntl.LOCK_SH)
            return FileStore._parse(f.read())

    def _append(self, key: str, value: bytes | None) -> None:
        k = key.encode()
        with open(self.path, "ab") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            f.write(struct.pack("<ii", len(k), -1 if value is None else len(value)) + k + (value or b""))
            f.flush()

    def set(self, key: str, value: str | bytes) -> None:
        self._append(key, _as_bytes(value))

    def get(self, key: str) -> bytes:
        self.wait([key])
        return self._read()[key]

    def add(self, key: str, amount: int) -> int:
        with open(self.path, "ab") as lock:  # read-modify-write under one exclusive lock
            fcntl.flock(lock, fcntl.LOCK_EX)
            with open(self.path, "rb") as f:
                current = FileStore._parse(f.read()).get(key, b"0")
            value = int(current) + int(amount)
            k, v = key.encode(), str(value).encode()
            lock.write(struct.pack("<ii", len(k), len(v)) + k + v)
            lock.flush()
        return value

    @staticmethod
    def _parse(blob: bytes) -> dict[str, bytes]:
        data: dict[str, bytes] = {}
        pos = 0
        while pos + 8 <= len(blob):
            klen, vlen = struct.unpack_from("<ii", blob, pos)
            pos += 8
            key = blob[pos:pos + klen].decode()
            pos += klen
            if vlen < 0:
                data.pop(key, None)
            else:
                data[key] = blob[pos:pos + vlen]
                pos += vlen
        return data

    def check(self, keys: list[str]) -> bool:
        data = self._read()
        return all(k in data for k in keys)

    def delete_key(self, key: str) -> bool:
        present = key in self._read()
        self._append(key, None)
        return present

    def num_keys(self) -> int:
        return len(self._read())


class _Handler(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        store: HashStore = self.server.store  # type: ignore[attr-defined]
        while True:
            try:
                request = _recv(self.request)
            except (ConnectionError, OSError):
                return
            if request is None:
                return
            cmd, args = request
            try:
                reply = ("ok", getattr(store, cmd)(*args))
            except Exception as e:  # sent back to the client, which raises it
                reply = ("error", repr(e))
            _send(self.request, reply)


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


def _send(sock: socket.socket, obj: object) -> None:
    blob = pickle.dumps(obj)
    sock.sendall(struct.pack("<Q", len(blob)) + blob)


def _recv(sock: socket.socket) -> object:
    head = _recv_exact(sock, 8)
    if head is None:
        return None
    (n,) = struct.unpack("<Q", head)
    body = _recv_exact(sock, n)
    return None if body is None else pickle.loads(body)


def _recv_exact(sock: socket.socket, n: int) -> bytes | None:
    chunks, got = [], 0
    while got < n:
        chunk = sock.recv(n - got)
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


class TCPStore(Store):
    """A store served by one process (``is_master=True``) on ``host_name:port``; the others connect.

    Only flambeau processes of one job should reach the port: like PyTorch's, the protocol trusts its
    peers (run it on a private network).
    """

    def __init__(self, host_name: str, port: int, world_size: int | None = None, is_master: bool = False,
                 timeout: timedelta = default_pg_timeout, wait_for_workers: bool = True) -> None:
        super().__init__(timeout)
        self.host, self.world_size = host_name, world_size
        self._server = None
        if is_master:
            self._server = _Server((host_name, port), _Handler)
            self._server.store = HashStore()  # type: ignore[attr-defined]
            port = self._server.server_address[1]
            threading.Thread(target=self._server.serve_forever, daemon=True).start()
        self.port = port
        self._lock = threading.Lock()
        self._sock = self._connect(timeout)

    def _connect(self, timeout: timedelta) -> socket.socket:
        deadline = time.monotonic() + timeout.total_seconds()
        while True:
            try:
                return socket.create_connection((self.host, self.port), timeout=timeout.total_seconds())
            except OSError as e:
                if time.monotonic() > deadline:
                    raise DistNetworkError(f"could not reach the TCPStore at {self.host}:{self.port} within "
                                           f"{timeout.total_seconds():g} s: {e}") from e
                time.sleep(0.05)

    def _call(self, cmd: str, *args: object) -> object:
        with self._lock:
            _send(self._sock, (cmd, args))
            reply = _recv(self._sock)
        if reply is None:
            raise DistNetworkError(f"the TCPStore at {self.host}:{self.port} closed the connection")
        status, value = reply  # type: ignore[misc]
        if status != "ok":
            raise DistStoreError(f"TCPStore {cmd} failed: {value}")
        return value

    def set(self, key: str, value: str | bytes) -> None:
        self._call("set", key, _as_bytes(value))

    def get(self, key: str) -> bytes:
        self.wait([key])
        return self._call("get", key)  # type: ignore[return-value]

    def add(self, key: str, amount: int) -> int:
        return self._call("add", key, int(amount))  # type: ignore[return-value]

    def check(self, keys: list[str]) -> bool:
        return self._call("check", list(keys))  # type: ignore[return-value]

    def delete_key(self, key: str) -> bool:
        return self._call("delete_key", key)  # type: ignore[return-value]

    def num_keys(self) -> int:
        return self._call("num_keys")  # type: ignore[return-value]
