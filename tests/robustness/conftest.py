"""Fixtures for the robustness tests: uvicorn on 127.0.0.1, in this process or in a child
process that can be measured and killed. Everything started is stopped when the test ends."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio
import uvicorn
from robustness_http import free_port

HERE = Path(__file__).parent

StartServer = Callable[..., Awaitable[str]]

#: Put ``pytestmark = HTTP_TESTS`` in a module that uses ``live_server``: its tests share one
#: event loop, so one uvicorn serves the whole module (starting and stopping one per test
#: would cost about 0.2 s each).
HTTP_TESTS = pytest.mark.asyncio(loop_scope="module")


class _Router:
    """The ASGI app of the shared server: passes each request to the current test's app."""

    app: Any = None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        app = self.app
        assert app is not None, "no app is being served"
        await app(scope, receive, send)


async def _serve(app: Any, port: int) -> tuple[uvicorn.Server, asyncio.Task[None], str]:
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=port,
        log_level="warning",
        lifespan="off",
        timeout_graceful_shutdown=1,
    )
    server = uvicorn.Server(config)
    task = asyncio.ensure_future(server.serve())
    for _ in range(500):
        if server.started or task.done():
            break
        await asyncio.sleep(0.01)
    assert server.started, "uvicorn did not start"
    bound = server.servers[0].sockets[0].getsockname()[1]
    return server, task, f"http://127.0.0.1:{bound}/"


async def _stop(servers: list[tuple[uvicorn.Server, asyncio.Task[None], str]]) -> None:
    for server, _, _ in servers:
        server.should_exit = server.force_exit = True
    for _, task, _ in servers:
        await asyncio.wait_for(task, timeout=10)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def _shared_server() -> AsyncIterator[tuple[_Router, str]]:
    router = _Router()
    running = await _serve(router, 0)
    yield router, running[2]
    await _stop([running])


@pytest_asyncio.fixture(loop_scope="module")
async def live_server(_shared_server: tuple[_Router, str]) -> AsyncIterator[StartServer]:
    """``await start(app)`` serves ``app`` with uvicorn on 127.0.0.1 and returns its base
    URL (the module's shared server); ``start(app, port=...)`` starts a server of its own on
    that port, stopped when the test ends."""
    router, url = _shared_server
    own: list[tuple[uvicorn.Server, asyncio.Task[None], str]] = []

    async def start(app: Any, port: int = 0) -> str:
        if port == 0:
            router.app = app
            return url
        own.append(await _serve(app, port))
        return own[-1][2]

    yield start
    router.app = None
    await _stop(own)


class ServerProcess:
    """uvicorn serving one of ``robustness_apps``' apps in a child process."""

    def __init__(self, app_name: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        code = (
            "import sys, os; sys.path[:0] = [sys.argv[1], os.path.dirname(sys.argv[1])]; "
            "import robustness_apps; "
            "robustness_apps.main(sys.argv[2], int(sys.argv[3]))"
        )
        self.process = subprocess.Popen(
            [sys.executable, "-c", code, str(HERE), app_name, str(self.port)],
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )

    @property
    def pid(self) -> int:
        return self.process.pid

    async def wait_ready(self, timeout: float = 20.0) -> None:
        """Poll ``/stats`` until the child answers (bounded)."""
        async with httpx.AsyncClient() as client:
            for _ in range(int(timeout / 0.05)):
                assert self.process.poll() is None, "the server process exited"
                try:
                    await client.get(self.url + "stats", timeout=1)
                    return
                except httpx.TransportError:
                    await asyncio.sleep(0.05)
        raise AssertionError(f"the server process did not answer within {timeout}s")

    async def stats(self) -> dict[str, Any]:
        """What the child reports about itself: RSS, Python heap, live tasks."""
        async with httpx.AsyncClient() as client:
            response = await client.get(self.url + "stats", timeout=10)
        result: dict[str, Any] = response.json()
        return result

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.kill()


@pytest.fixture
def server_process() -> Iterator[Callable[[str], ServerProcess]]:
    """``spawn(app_name)`` starts ``robustness_apps.<app_name>`` under uvicorn in a child
    process (call ``await proc.wait_ready()``); every child is stopped afterwards."""
    children: list[ServerProcess] = []

    def spawn(app_name: str) -> ServerProcess:
        child = ServerProcess(app_name)
        children.append(child)
        return child

    yield spawn
    for child in children:
        child.stop()
