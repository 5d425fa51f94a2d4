"""Fixtures of the real-peer lane: the peer servers, started once per session on a free
port of 127.0.0.1 and stopped after, and our server in process (uvicorn on 127.0.0.1, in
the test's event loop) for the peer clients."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

import pytest
import uvicorn
from interop_support import PeerServer


def _server(name: str, script: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    server = PeerServer(name, script, tmp_path_factory.mktemp(name))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def langgraph_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PeerServer]:
    yield from _server("langgraph", "langgraph_server.py", tmp_path_factory)


@pytest.fixture(scope="session")
def agent_framework_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PeerServer]:
    yield from _server("agent_framework", "agent_framework_server.py", tmp_path_factory)


@pytest.fixture(scope="session")
def pydantic_ai_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PeerServer]:
    yield from _server("pydantic_ai", "pydantic_ai_server.py", tmp_path_factory)


@pytest.fixture
async def our_server() -> AsyncIterator[Callable[[Any], Awaitable[str]]]:
    """Serve an ASGI app with uvicorn on a free port of 127.0.0.1 (in this event loop) for a
    peer client; returns its URL. Stopped when the test ends."""
    started: list[tuple[uvicorn.Server, asyncio.Task[None]]] = []

    async def start(app: Any) -> str:
        config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning")
        server = uvicorn.Server(config)
        task = asyncio.ensure_future(server.serve())
        for _ in range(500):
            if server.started or task.done():
                break
            await asyncio.sleep(0.01)
        assert server.started, "uvicorn did not start"
        started.append((server, task))
        port = server.servers[0].sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}/"

    yield start
    for server, task in started:
        server.should_exit = True
        await task
