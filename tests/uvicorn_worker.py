"""One worker of a multi-process deployment for the tests: ``uvicorn <module>:app`` in a child
process on its own free loopback port, importing the source under test (the tests' folders,
then the caller's ``PYTHONPATH``: without it a worker would import whichever ``agui_chat`` is
installed). Used by the robustness lane and the fault lane."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

#: Seconds a worker may take to start listening.
BOUND = 30.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class UvicornWorker:
    """``uvicorn app`` (``module:app`` in ``folder``) with ``env`` added to the environment;
    its stderr goes to ``log_dir / worker-<port>.log`` when given, else to the test's."""

    def __init__(
        self,
        app: str,
        folder: Path,
        env: dict[str, str],
        *,
        log_level: str = "warning",
        log_dir: Path | None = None,
    ) -> None:
        self.app, self.folder, self.env = app, folder, env
        self.log_level, self.log_dir = log_level, log_dir
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    def start(self) -> None:
        tests = Path(__file__).parent
        path = (str(self.folder), str(tests), os.environ.get("PYTHONPATH"))
        command = [
            sys.executable, "-m", "uvicorn", self.app,
            "--host", "127.0.0.1", "--port", str(self.port), "--log-level", self.log_level,
        ]  # fmt: skip
        env = {**os.environ, **self.env, "PYTHONPATH": os.pathsep.join(p for p in path if p)}
        if self.log_dir is None:
            self.process = subprocess.Popen(command, cwd=self.folder, env=env)
            return
        with (self.log_dir / f"worker-{self.port}.log").open("ab") as stderr:
            self.process = subprocess.Popen(command, cwd=self.folder, env=env, stderr=stderr)

    def wait_ready(self) -> None:
        deadline = time.monotonic() + BOUND
        while True:
            assert self.process is not None and self.process.poll() is None, "worker exited"
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                assert time.monotonic() < deadline, "the worker did not start listening"
                time.sleep(0.05)

    def kill(self) -> None:
        """``kill -9``."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=10)
        self.process = None

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()
        self.process = None

    def restart(self) -> None:
        self.stop()
        self.start()
        self.wait_ready()
