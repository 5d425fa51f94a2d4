"""Running an AG-UI server with uvicorn (what ``agui-chat serve`` calls)."""

from __future__ import annotations

from typing import Any

from ..._client import ChatClient
from ._server import AGUIServer


def serve(
    app_or_server: Any,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    log_level: str = "info",
) -> None:
    """Serve an ASGI app (or a chat client, wrapped in an ``AGUIServer``) with uvicorn until
    interrupted; on 127.0.0.1 unless told otherwise. ``TypeError`` for anything else."""
    import uvicorn

    app = AGUIServer(app_or_server) if isinstance(app_or_server, ChatClient) else app_or_server
    if not callable(app):
        raise TypeError(
            f"serve() needs an ASGI app or a chat client, got {type(app_or_server).__name__}"
        )
    uvicorn.run(app, host=host, port=port, log_level=log_level)
