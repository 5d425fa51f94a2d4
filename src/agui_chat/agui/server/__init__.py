"""``AGUIServer``: any ``ChatClient`` hosted as an AG-UI endpoint (an ASGI application), with
signed interrupts for approvals and questions and checked resumes. Needs the ``[server]``
extra."""

from __future__ import annotations

from ...stores import ApprovalStore, InMemoryApprovalStore
from ._mount import bearer_token, fastapi_router, protect
from ._run_context import AGUIRunContext, current_run
from ._serve import serve
from ._server import AUDIENCE_ENV, SIGNING_KEY_ENV, AGUIServer, default_audience

__all__ = [
    "AUDIENCE_ENV",
    "SIGNING_KEY_ENV",
    "AGUIRunContext",
    "AGUIServer",
    "ApprovalStore",
    "InMemoryApprovalStore",
    "bearer_token",
    "current_run",
    "default_audience",
    "fastapi_router",
    "protect",
    "serve",
]
