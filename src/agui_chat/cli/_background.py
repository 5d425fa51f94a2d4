"""Running an ASGI app with uvicorn inside the current event loop (for the demo)."""

from __future__ import annotations

import asyncio
from typing import Any

__all__ = ["BackgroundServer"]


class BackgroundServer:
    """``async with BackgroundServer(app, host, port):`` serves ``app`` until the block ends."""

    def __init__(self, app: Any, host: str, port: int) -> None:
        import uvicorn

        config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="off")
        self._server = uvicorn.Server(config)
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> BackgroundServer:
        self._task = asyncio.create_task(self._server.serve())
        while not self._server.started:
            if self._task.done():
                self._task.result()
                raise OSError("the server stopped before it started")
            await asyncio.sleep(0.01)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        """Stop serving, whether the block ended or raised (an exception goes on up)."""
        self._server.should_exit = True
        if self._task is not None:
            await self._task
