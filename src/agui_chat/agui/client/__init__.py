"""``AGUIChatClient``: any AG-UI agent as a ``ChatClient`` (transport, request building,
events to updates, resume, and the thread reducer)."""

from __future__ import annotations

from ._client import AGUIChatClient
from ._reducer import AGUIStateTracker, AGUIThreadReducer

__all__ = ["AGUIChatClient", "AGUIStateTracker", "AGUIThreadReducer"]
