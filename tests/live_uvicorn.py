"""Serving an ASGI app with uvicorn on a free port of 127.0.0.1, in the running event loop,
for tests that need a real HTTP server (stopped by :func:`stop_all`)."""

from __future__ import annotations

import asyncio
from typing import Any

import uvicorn

Started = list[tuple[uvicorn.Server, "asyncio.Task[None]"]]


async def start_uvicorn(app: Any, started: Started, **config: Any) -> str:
    """Start ``app``; record it in ``started``; return its base URL (no trailing slash)."""
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", **config)
    )
    task = asyncio.ensure_future(server.serve())
    for _ in range(500):
        if server.started or task.done():
            break
        await asyncio.sleep(0.01)
    assert server.started, "uvicorn did not start"
    started.append((server, task))
    port = server.servers[0].sockets[0].getsockname()[1]
    return f"http://127.0.0.1:{port}"


async def stop_all(started: Started) -> None:
    """Stop every server in ``started`` and wait for each to end."""
    for server, task in started:
        server.should_exit = True
        await task
