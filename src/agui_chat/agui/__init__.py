"""The AG-UI adapters: ``AGUIChatClient`` talks to any AG-UI agent; ``AGUIServer`` hosts any
chat client as an AG-UI endpoint.

This package is the one public home of every AG-UI name (its rooms ``client``, ``server`` and
``wire`` export nothing). The client needs only the base install. The server needs the
``[server]`` extra (Starlette and uvicorn); its names are imported on first use, so
``import agui_chat.agui`` works without it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .client._client import AGUIChatClient
from .client._reducer import AGUIStateTracker, AGUIThreadReducer

if TYPE_CHECKING:
    from .server._mount import bearer_token, fastapi_router, protect
    from .server._run_context import AGUIRunContext, current_run
    from .server._serve import serve
    from .server._server import AUDIENCE_ENV, SIGNING_KEY_ENV, AGUIServer, default_audience

__all__ = [
    "AUDIENCE_ENV",
    "SIGNING_KEY_ENV",
    "AGUIChatClient",
    "AGUIRunContext",
    "AGUIServer",
    "AGUIStateTracker",
    "AGUIThreadReducer",
    "bearer_token",
    "current_run",
    "default_audience",
    "fastapi_router",
    "protect",
    "serve",
]

#: The server's names, by the module (under ``server``) that defines each.
_SERVER_NAMES = {
    "AGUIServer": "_server",
    "AUDIENCE_ENV": "_server",
    "SIGNING_KEY_ENV": "_server",
    "default_audience": "_server",
    "AGUIRunContext": "_run_context",
    "current_run": "_run_context",
    "serve": "_serve",
    "bearer_token": "_mount",
    "fastapi_router": "_mount",
    "protect": "_mount",
}


def __getattr__(name: str) -> Any:
    module = _SERVER_NAMES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        return getattr(importlib.import_module(f".server.{module}", __name__), name)
    except ImportError as exc:
        raise ImportError(
            f"agui_chat.agui.{name} needs the server extra: pip install 'agui-chat[server]' ({exc})"
        ) from exc
