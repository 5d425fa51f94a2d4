"""Fixtures for the AGUIServer tests: counting tools and a uvicorn server on 127.0.0.1."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from server_support import Tools

from live_uvicorn import Started, start_uvicorn, stop_all


@pytest.fixture
def tools() -> Tools:
    return Tools()


@pytest.fixture
async def live_server() -> AsyncIterator[Callable[[Any], Awaitable[str]]]:
    """Start an ASGI app with uvicorn on a free port of 127.0.0.1; returns its base URL.
    Every server started is stopped when the test ends."""
    started: Started = []

    async def start(app: Any) -> str:
        return await start_uvicorn(app, started, lifespan="on", timeout_graceful_shutdown=2)

    yield start
    await stop_all(started)
