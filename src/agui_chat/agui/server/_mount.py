"""Putting an ``AGUIServer`` inside an application with authentication in front (the server
authenticates nobody): :func:`protect` with a header check such as :func:`bearer_token` for
any ASGI host, :func:`fastapi_router` for FastAPI dependencies. Both leave the body unread,
so the server reads (and limits) it itself.
"""

from __future__ import annotations

import inspect
import secrets
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from starlette.datastructures import Headers
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from ..._exceptions import ConfigurationError

#: A check of a request's headers: true lets the request through (may be async).
HeaderCheck = Callable[[Headers], "bool | Awaitable[bool]"]


def bearer_token(*tokens: str) -> Callable[[Headers], bool]:
    """A check that passes requests carrying ``Authorization: Bearer <one of tokens>``
    (compared in constant time); ``ConfigurationError`` without a non-empty token."""
    if not tokens or not all(tokens):
        raise ConfigurationError("bearer_token needs at least one non-empty token string")
    wanted = [t.encode() for t in tokens]

    def check(headers: Headers) -> bool:
        scheme, _, given = headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not given:
            return False
        presented = given.strip().encode()
        return any(secrets.compare_digest(presented, token) for token in wanted)

    return check


def protect(app: ASGIApp, check: HeaderCheck, *, scheme: str = "Bearer") -> ASGIApp:
    """``app`` behind ``check``: an HTTP request that fails it gets ``401`` with a JSON body
    ``{"code": "UNAUTHORIZED", "message": ...}`` and a ``WWW-Authenticate`` challenge, and
    never reaches ``app``."""
    return _Protected(app, check, scheme)


class _Protected:
    """What :func:`protect` returns (an object: Starlette's ``Route`` takes a function for a
    request handler)."""

    def __init__(self, app: ASGIApp, check: HeaderCheck, scheme: str) -> None:
        self.app, self.check, self.scheme = app, check, scheme

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            passed = self.check(Headers(scope=scope))
            if inspect.isawaitable(passed):
                passed = await passed
            if not passed:
                refused = JSONResponse(
                    {"code": "UNAUTHORIZED", "message": "valid credentials are required"},
                    status_code=401,
                    headers={"WWW-Authenticate": self.scheme},
                )
                await refused(scope, receive, send)
                return
        await self.app(scope, receive, send)


class _ASGIHandOff(Response):
    """A response that lets an ASGI app answer the request itself (its body unread)."""

    def __init__(self, app: ASGIApp) -> None:
        super().__init__()
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app(scope, receive, send)


def fastapi_router(
    server: ASGIApp,
    path: str = "/",
    *,
    dependencies: Sequence[Any] | None = None,
    **router_options: Any,
) -> Any:
    """A ``fastapi.APIRouter`` serving ``server`` at ``path`` (``POST``, and ``GET`` for the
    web page when the server has ``ui=True``), after ``dependencies`` ran. Needs FastAPI."""
    try:
        from fastapi import APIRouter, Request
    except ImportError:  # pragma: no cover - the error is the message
        raise ImportError(
            "fastapi_router needs FastAPI: pip install fastapi (or use protect() with Starlette)"
        ) from None
    router = APIRouter(dependencies=list(dependencies or ()), **router_options)
    methods = ["POST", "GET"] if getattr(server, "ui", False) else ["POST"]

    async def agui_endpoint(request: Request) -> Response:
        return _ASGIHandOff(server)

    # FastAPI reads the annotations; postponed, they would name a local import
    agui_endpoint.__annotations__ = {"request": Request, "return": Response}

    router.add_api_route(path, agui_endpoint, methods=methods, include_in_schema=True, name="agui")
    return router
