"""The AG-UI adapters: ``AGUIChatClient`` talks to any AG-UI agent; ``AGUIServer`` hosts any
chat client as an AG-UI endpoint.

The one public home of every AG-UI name. The server's names need the ``[server]`` extra
(Starlette and uvicorn) and are imported on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .._extras import needs_extra
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
    name: module
    for module, names in {
        "_server": ("AGUIServer", "AUDIENCE_ENV", "SIGNING_KEY_ENV", "default_audience"),
        "_run_context": ("AGUIRunContext", "current_run"),
        "_serve": ("serve",),
        "_mount": ("bearer_token", "fastapi_router", "protect"),
    }.items()
    for name in names
}


def __getattr__(name: str) -> Any:
    module = _SERVER_NAMES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    with needs_extra(
        "server", by=f"agui_chat.agui.{name}", module="starlette", package="Starlette"
    ):
        return getattr(importlib.import_module(f".server.{module}", __name__), name)
