"""Fixtures of the real-peer lane: the peer servers, started once per session on a free
port of 127.0.0.1 and stopped after, and our server in process (uvicorn on 127.0.0.1, in
the test's event loop) for the peer clients."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

import pytest
from interop_support import PeerServer

from live_uvicorn import Started, start_uvicorn, stop_all


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


@pytest.fixture(scope="session")
def adk_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PeerServer]:
    yield from _server("adk", "adk_server.py", tmp_path_factory)


@pytest.fixture
async def our_server() -> AsyncIterator[Callable[[Any], Awaitable[str]]]:
    """Serve an ASGI app with uvicorn on a free port of 127.0.0.1 (in this event loop) for a
    peer client; returns its URL. Stopped when the test ends."""
    started: Started = []

    async def start(app: Any) -> str:
        return await start_uvicorn(app, started) + "/"

    yield start
    await stop_all(started)
