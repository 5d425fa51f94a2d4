"""Serving an ASGI app with uvicorn on a free port of 127.0.0.1 for tests that need a real
HTTP server: in the running event loop (stopped by :func:`stop_all`), or in a thread of its
own for the duration of a ``with`` block (:func:`serve`, for tests that drive a browser)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
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


@contextmanager
def serve(app: Any, port: int = 0) -> Iterator[str]:
    """Serve ``app`` with uvicorn on ``port`` (default: a free one) of 127.0.0.1 in a thread;
    yields its URL (with a trailing slash)."""
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=port,
        log_level="warning",
        lifespan="off",
        timeout_graceful_shutdown=1,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="uvicorn-in-a-thread", daemon=True)
    thread.start()
    for _ in range(1000):
        if server.started or not thread.is_alive():
            break
        time.sleep(0.01)
    assert server.started, "uvicorn did not start"
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        server.should_exit = True
        thread.join(10)
        assert not thread.is_alive(), "uvicorn did not stop"
