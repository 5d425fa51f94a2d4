"""Who a request comes from: the application's authentication, read once per request. By
default Starlette's (``AuthenticationMiddleware`` puts ``scope["user"]`` and
``scope["auth"]``; FastAPI apps use the same), or the server's ``identify(request)``. The
principal of the request that made a call is the requester bound into its signed interrupt
id; the principal of the request that carries an answer is who answered. Never read from a
payload."""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

from starlette.requests import Request

from ..._exceptions import ConfigurationError
from ..._principal import Principal
from ._from_wire import InputError

_log = logging.getLogger("agui_chat.server")

#: ``identify(request) -> Principal | None``, sync or async.
Identify = Callable[[Request], "Principal | Awaitable[Principal | None] | None"]


def from_starlette(request: Request) -> Principal | None:
    """The principal Starlette's authentication found: ``scope["user"]`` when
    ``is_authenticated`` (``identity`` is the id, ``display_name`` the name) with the scopes
    of ``scope["auth"]`` as roles; ``None`` for nobody (no middleware, or an anonymous user)."""
    scope = request.scope
    user = scope.get("user")
    if user is None or getattr(user, "is_authenticated", False) is not True:
        return None
    name = _read(user, "display_name")
    # A user class from before Starlette's ``identity`` (or one that leaves it out) raises
    # NotImplementedError: its display name is then the only id it has.
    identity = _read(user, "identity") or name
    if not isinstance(identity, str) or not identity:
        return None
    auth = scope.get("auth")
    scopes = getattr(auth, "scopes", None) or ()
    roles = frozenset(s for s in scopes if isinstance(s, str))
    return Principal(identity, name=name if isinstance(name, str) and name else None, roles=roles)


def check_governance(
    identify: Identify | None, max_remember: timedelta
) -> tuple[Identify | None, timedelta]:
    """Both settings as given; ``ConfigurationError`` for an ``identify`` that is not a
    function or a ``max_remember`` that is not positive."""
    if identify is not None and not callable(identify):
        raise ConfigurationError("identify must be a function of the request")
    if max_remember.total_seconds() <= 0:
        raise ConfigurationError("max_remember must be positive")
    return identify, max_remember


def _read(user: object, name: str) -> object:
    try:
        return getattr(user, name, None)
    except Exception:  # a BaseUser property left unimplemented
        return None


async def identify(request: Request, identify: Identify | None) -> Principal | None:
    """The principal of ``request``: ``identify``'s, else Starlette's. An ``identify`` that
    raises or returns something else refuses the request (401 ``IDENTIFY_FAILED``): who
    answered must never be guessed."""
    if identify is None:
        return from_starlette(request)
    try:
        found: Any = identify(request)
        if inspect.isawaitable(found):
            found = await found
    except Exception:
        _log.exception("identify() failed; the request is refused")
        raise InputError(401, "IDENTIFY_FAILED", "could not tell who sent this request") from None
    if found is not None and not isinstance(found, Principal):
        _log.error("identify() returned %s, not a Principal or None", type(found).__name__)
        raise InputError(401, "IDENTIFY_FAILED", "could not tell who sent this request")
    return found
