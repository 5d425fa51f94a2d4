"""The AG-UI adapters: ``AGUIChatClient`` talks to any AG-UI agent; ``AGUIServer`` hosts any
chat client as an AG-UI endpoint.

The client needs only the base install. The server needs the ``[server]`` extra (Starlette and
uvicorn); its names are imported on first use, so ``import agui_chat.agui`` works without it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._reducer import AGUIStateTracker, AGUIThreadReducer
from .client import AGUIChatClient

if TYPE_CHECKING:
    from ._run_context import AGUIRunContext, current_run
    from ._serve import serve
    from ._store import ApprovalStore, InMemoryApprovalStore
    from .server import AGUIServer

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

_SERVER_NAMES = {
    "AGUIServer": ".server",
    "AGUIRunContext": "._run_context",
    "current_run": "._run_context",
    "serve": "._serve",
    "ApprovalStore": "._store",
    "InMemoryApprovalStore": "._store",
}


def __getattr__(name: str) -> Any:
    module = _SERVER_NAMES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        return getattr(importlib.import_module(module, __name__), name)
    except ImportError as exc:
        raise ImportError(
            f"agui_chat.agui.{name} needs the server extra: pip install 'agui-chat[server]' ({exc})"
        ) from exc
