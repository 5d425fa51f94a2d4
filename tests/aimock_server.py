"""``@copilotkit/aimock`` for the tests: where mk/aimock.mk installed it, a running instance
on 127.0.0.1 serving a fixture folder, and a recording proxy in front of it.

aimock's journal keeps its own OpenAI-style translation of each request; what an SDK really
sent (a structured-output setting, how parallel results are grouped) is only seen on the
wire, so ``RecordingProxy`` keeps every request's path and JSON body as it arrived.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from real_components import CACHE, require, require_path

AIMOCK_PIN = Path(__file__).parent / "openai" / "aimock" / "package.json"

_HOP_BY_HOP = frozenset({"connection", "transfer-encoding", "content-length", "keep-alive"})


def aimock_cli() -> Path:
    """aimock's cli.js, or a skip saying how to install it."""
    digest = hashlib.sha256(AIMOCK_PIN.read_bytes()).hexdigest()[:12]
    install = CACHE / "npm" / f"aimock-{digest}"
    marker = require_path(
        install / ".installed",
        "@copilotkit/aimock",
        f"run `make test-deps` (npm installs it into {install})",
    )
    return marker.parent / "node_modules" / "@copilotkit" / "aimock" / "dist" / "cli.js"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def running_aimock(fixtures: Path) -> Iterator[str]:
    """aimock on 127.0.0.1 serving ``fixtures``; yields its base URL (no path)."""
    node = require("node", "install Node.js 20 or later (mk/aimock.mk does, as root)")
    cli = aimock_cli()
    port = _free_port()
    process = subprocess.Popen(
        [node, str(cli), "-h", "127.0.0.1", "-p", str(port), "-f", str(fixtures), "-c", "8",
         "--log-level", "warn"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            if process.poll() is not None:
                raise RuntimeError(f"aimock exited: {process.stderr.read().decode()}")  # type: ignore[union-attr]
            try:
                if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.05)
        else:
            raise RuntimeError("aimock did not start within 10 seconds")
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class RecordingProxy:
    """An HTTP proxy on 127.0.0.1 in front of ``upstream`` that keeps each request (method,
    path, headers and JSON body) in ``requests``; answers pass through whole."""

    def __init__(self, upstream: str) -> None:
        self.requests: list[dict[str, Any]] = []
        target = urlsplit(upstream)
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _forward(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                proxy.requests.append(
                    {"method": self.command, "path": self.path, "headers": dict(self.headers),
                     "body": body}
                )  # fmt: skip
                conn = http.client.HTTPConnection(target.hostname, target.port, timeout=30)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_BY_HOP}
                conn.request(self.command, self.path, body=raw, headers=headers)
                answer = conn.getresponse()
                data = answer.read()
                self.send_response(answer.status)
                for key, value in answer.getheaders():
                    if key.lower() not in _HOP_BY_HOP:
                        self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                conn.close()

            do_GET = do_POST = _forward

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def bodies(self) -> list[Any]:
        """The JSON bodies of the requests that reached a model endpoint, in order."""
        return [r["body"] for r in self.requests if not r["path"].startswith("/__aimock")]

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
