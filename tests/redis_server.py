"""A real ``redis-server`` for the tests: started on 127.0.0.1 at a free port, with no
persistence and its files in a temporary directory, stopped after the session. Tests that
stop it (the outage tests) start it again on the same port before they end.

Missing ``redis-server`` skips the Redis tests with the install hint (and fails them under
``CI``, where ``make test`` installs it: see ``mk/redis.mk``)."""

from __future__ import annotations

import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest

from real_components import require

__all__ = ["RedisServer", "redis_server", "redis_without"]

HOW = "apt-get install redis-server (make test does it when run as root)"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class RedisServer:
    """One ``redis-server`` process: ``url`` while it runs; :meth:`stop` and :meth:`start`
    for outages (the same port both times)."""

    def __init__(
        self,
        executable: str,
        directory: Path,
        *,
        persist: bool = False,
        turned_off: Sequence[str] = (),
    ) -> None:
        self.executable = executable
        self.directory = directory
        #: ``appendonly yes`` with ``appendfsync always`` (every write on disk before its
        #: reply): a ``kill -9`` then loses nothing, and :meth:`stop` keeps the data.
        self.persist = persist
        #: Commands renamed away (``rename-command NAME ""``), as an operator turns them off.
        self.turned_off = tuple(turned_off)
        self.port = _free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        assert self._process is None
        self._process = subprocess.Popen(
            [
                self.executable,
                "--bind", "127.0.0.1",
                "--port", str(self.port),
                "--save", "",
                "--appendonly", "yes" if self.persist else "no",
                "--appendfsync", "always",
                "--dir", str(self.directory),
                "--protected-mode", "yes",
                *(arg for name in self.turned_off for arg in ("--rename-command", name, "")),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 15
        while not self._answers_ping():
            assert self._process.poll() is None, "redis-server exited at start"
            assert time.monotonic() < deadline, "redis-server did not start listening"
            time.sleep(0.02)

    def stop(self, *, keep_data: bool = False, kill: bool = False) -> None:
        """Stop the server (``kill``: ``kill -9``). With ``keep_data`` its keys are saved
        first and loaded again by the next :meth:`start` (a Redis that persists); without,
        the next start is empty (a Redis without persistence), unless it was started with
        ``persist``: then its append-only file keeps everything, a ``kill -9`` too."""
        process, self._process = self._process, None
        if process is None:
            return
        if keep_data:
            with socket.create_connection(("127.0.0.1", self.port), timeout=5) as sock:
                sock.sendall(b"*1\r\n$4\r\nSAVE\r\n")
                assert sock.recv(64).startswith(b"+OK")
        if kill:
            process.kill()
            process.wait()
        else:
            self._terminate(process)
        if not keep_data and not self.persist:
            (self.directory / "dump.rdb").unlink(missing_ok=True)

    @staticmethod
    def _terminate(process: subprocess.Popen[bytes]) -> None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def flush(self) -> None:
        """Empty every database (each test starts from nothing)."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=5) as sock:
            sock.sendall(b"*1\r\n$8\r\nFLUSHALL\r\n")
            assert sock.recv(64).startswith(b"+OK")

    def _answers_ping(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as sock:
                sock.sendall(b"*1\r\n$4\r\nPING\r\n")
                return sock.recv(64).startswith(b"+PONG")
        except OSError:
            return False


@contextmanager
def redis_without(directory: Path, *commands: str) -> Iterator[str]:
    """A ``redis-server`` of its own whose operator turned ``commands`` off (as some hosted
    services do with scripting and ``CONFIG``), its files in ``directory``: its URL while it
    runs."""
    server = RedisServer(require("redis-server", HOW), directory, turned_off=commands)
    server.start()
    try:
        yield server.url
    finally:
        server.stop()


@pytest.fixture(scope="session")
def redis_server_process() -> Iterator[RedisServer]:
    executable = require("redis-server", HOW)
    with tempfile.TemporaryDirectory(prefix="agui-redis-") as directory:
        server = RedisServer(executable, Path(directory))
        server.start()
        try:
            yield server
        finally:
            server.stop()


@pytest.fixture
def redis_server(redis_server_process: RedisServer) -> Iterator[RedisServer]:
    """The session's Redis, emptied, running when the test starts and when it ends."""
    server = redis_server_process
    if server._process is None:
        server.start()
    server.flush()
    yield server
    if server._process is None:
        server.start()
