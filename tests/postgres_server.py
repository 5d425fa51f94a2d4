"""A real PostgreSQL for the tests: a cluster made by ``initdb`` in a temporary directory,
served by ``postgres`` on 127.0.0.1 at a free port (its unix socket in that directory too),
run as a non-root user (``initdb`` refuses root: as root it runs as the ``postgres`` user
Debian's package creates), stopped after the session. Tests that stop it (the outage tests)
start it again on the same port, with the same data, before they end.

Missing PostgreSQL skips the tests with the install hint (and fails them under ``CI``, where
``make test`` installs it: see ``mk/postgres.mk``)."""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from real_components import missing

__all__ = ["PostgresServer", "find_postgres", "postgres_server"]

HOW = "apt-get install postgresql (make test does it when run as root)"
PASSWORD = "pg-s3cret-pw"


def find_postgres() -> Path | None:
    """The ``bin`` directory of the newest installed PostgreSQL (Debian's layout first)."""
    for found in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if Path(found, "initdb").exists() and Path(found, "postgres").exists():
            return Path(found)
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (from ``/proc``)."""
    found = []
    for stat in glob.glob("/proc/[0-9]*/stat"):
        with contextlib.suppress(OSError):
            fields = Path(stat).read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid:
                found.append(int(stat.split("/")[2]))
    return found


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class PostgresServer:
    """One PostgreSQL cluster: ``url`` (with a password) while it runs; :meth:`stop` and
    :meth:`start` for outages (the same port and data both times)."""

    def __init__(self, bin_dir: Path, directory: Path, settings: Sequence[str] = ()) -> None:
        self.bin_dir = bin_dir
        self.settings = list(settings)  # more ``name=value`` for ``postgres -c``
        self.directory = directory
        self.data = directory / "data"
        self.port = _free_port()
        self.url = f"postgresql://agui:{PASSWORD}@127.0.0.1:{self.port}/postgres"
        self._process: subprocess.Popen[bytes] | None = None
        self._user = "postgres" if os.geteuid() == 0 else None
        if self._user is not None:
            entry = pwd.getpwnam(self._user)
            os.chown(directory, entry.pw_uid, entry.pw_gid)
        password_file = directory / "pw"
        password_file.write_text(PASSWORD + "\n")
        if self._user is not None:
            os.chown(password_file, entry.pw_uid, entry.pw_gid)
        self._run(
            str(bin_dir / "initdb"), "-D", str(self.data), "-U", "agui", "-A", "scram-sha-256",
            f"--pwfile={password_file}", "--no-sync", "-E", "UTF8",
        )  # fmt: skip

    def _command(self, *argv: str) -> list[str]:
        return ["runuser", "-u", self._user, "--", *argv] if self._user else list(argv)

    def _run(self, *argv: str) -> None:
        done = subprocess.run(self._command(*argv), capture_output=True, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr

    def start(self) -> None:
        assert self._process is None
        self._process = subprocess.Popen(
            self._command(
                str(self.bin_dir / "postgres"), "-D", str(self.data),
                "-c", "listen_addresses=127.0.0.1", "-p", str(self.port),
                "-c", f"unix_socket_directories={self.directory}",
                "-c", "fsync=off", "-c", "max_connections=200",
                *(arg for setting in self.settings for arg in ("-c", setting)),
            ),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 30
        while not self._ready():
            assert self._process.poll() is None, "postgres exited at start"
            assert time.monotonic() < deadline, "postgres did not start listening"
            time.sleep(0.05)

    def _ready(self) -> bool:
        check = subprocess.run(
            [str(self.bin_dir / "pg_isready"), "-h", "127.0.0.1", "-p", str(self.port), "-q"],
            capture_output=True,
        )
        return check.returncode == 0

    def stop(self) -> None:
        """A fast shutdown (``SIGINT`` to the postmaster, whose pid ``postmaster.pid`` holds:
        ``runuser`` does not pass signals on): the server ends every session and stops."""
        process, self._process = self._process, None
        if process is None:
            return
        try:
            pid = int((self.data / "postmaster.pid").read_text().split()[0])
            os.kill(pid, signal.SIGINT)
        except (OSError, ValueError, IndexError):
            process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def kill(self) -> None:
        """``kill -9`` of the postmaster and every process it started, at once (a crash of
        the whole server: WAL not yet written out is lost); :meth:`start` then recovers."""
        process, self._process = self._process, None
        if process is None:
            return
        pid = int((self.data / "postmaster.pid").read_text().split()[0])
        victims = [pid, *_children(pid)]
        for victim in victims:
            with contextlib.suppress(ProcessLookupError):
                os.kill(victim, signal.SIGKILL)
        process.wait(timeout=20)
        deadline = time.monotonic() + 20
        while any(Path(f"/proc/{victim}").exists() for victim in victims):
            assert time.monotonic() < deadline, "postgres processes outlived kill -9"
            time.sleep(0.02)

    def stop_wal_writer(self) -> None:
        """``SIGSTOP`` the WAL writer until the next :meth:`kill`: a commit that does not wait
        for its WAL (``synchronous_commit`` off) then stays in shared memory, written out
        only by a later commit that waits, and a crash loses it, as a power loss would."""
        pid = int((self.data / "postmaster.pid").read_text().split()[0])
        for child in _children(pid):
            with contextlib.suppress(OSError):
                if b"walwriter" in Path(f"/proc/{child}/cmdline").read_bytes():
                    os.kill(child, signal.SIGSTOP)
                    return
        raise AssertionError("no walwriter process found")

    @property
    def running(self) -> bool:
        return self._process is not None


@pytest.fixture(scope="session")
def postgres_server_process() -> Iterator[PostgresServer]:
    bin_dir = find_postgres()
    if bin_dir is None:
        missing("PostgreSQL", HOW)
    assert bin_dir is not None
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        missing("runuser (to run PostgreSQL as a non-root user)", "apt-get install util-linux")
    with tempfile.TemporaryDirectory(prefix="agui-postgres-") as directory:
        server = PostgresServer(bin_dir, Path(directory))
        server.start()
        try:
            yield server
        finally:
            server.stop()


@pytest.fixture
def postgres_server(postgres_server_process: PostgresServer) -> Iterator[PostgresServer]:
    """The session's PostgreSQL, running when the test starts and when it ends."""
    server = postgres_server_process
    if not server.running:
        server.start()
    yield server
    if not server.running:
        server.start()
