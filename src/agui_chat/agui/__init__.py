"""The AG-UI adapters: ``AGUIChatClient`` talks to any AG-UI agent; ``AGUIServer`` hosts any
chat client as an AG-UI endpoint.

The client needs only the base install. The server needs the ``[server]`` extra (Starlette and
uvicorn); its names are imported on first use, so ``import agui_chat.agui`` works without it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ..stores import ApprovalStore, InMemoryApprovalStore
from .client import AGUIChatClient, AGUIStateTracker, AGUIThreadReducer

if TYPE_CHECKING:
    from .server import AGUIRunContext, AGUIServer, current_run, serve

__all__ = [
    "AGUIChatClient",
    "AGUIRunContext",
    "AGUIServer",
    "AGUIStateTracker",
    "AGUIThreadReducer",
    "ApprovalStore",
    "InMemoryApprovalStore",
    "current_run",
    "serve",
]

_SERVER_NAMES = {"AGUIServer", "AGUIRunContext", "current_run", "serve"}


def __getattr__(name: str) -> Any:
    if name not in _SERVER_NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        return getattr(importlib.import_module(".server", __name__), name)
    except ImportError as exc:
        raise ImportError(
            f"agui_chat.agui.{name} needs the server extra: pip install 'agui-chat[server]' ({exc})"
        ) from exc
