"""Fixtures for the AGUIServer tests: counting tools and a uvicorn server on 127.0.0.1."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
import uvicorn
from server_support import Tools


@pytest.fixture
def tools() -> Tools:
    return Tools()


@pytest.fixture
async def live_server() -> AsyncIterator[Callable[[Any], Awaitable[str]]]:
    """Start an ASGI app with uvicorn on a free port of 127.0.0.1; returns its base URL.
    Every server started is stopped when the test ends."""
    started: list[tuple[uvicorn.Server, asyncio.Task[None]]] = []

    async def start(app: Any) -> str:
        config = uvicorn.Config(
            app,
            host="127.0.0.1",
            port=0,
            log_level="warning",
            lifespan="on",
            timeout_graceful_shutdown=2,
        )
        server = uvicorn.Server(config)
        task = asyncio.ensure_future(server.serve())
        for _ in range(500):
            if server.started or task.done():
                break
            await asyncio.sleep(0.01)
        assert server.started, "uvicorn did not start"
        started.append((server, task))
        port = server.servers[0].sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    yield start
    for server, task in started:
        server.should_exit = True
        await task
