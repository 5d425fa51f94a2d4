"""Which ``Host`` (and ``Origin``) names a server answers: the guard against DNS rebinding
(DESIGN §4), where a page of ``evil.example`` re-points its name at 127.0.0.1 and talks to
the agent as if it were its own origin. A request with two ``Host`` (or two ``Origin``)
headers is malformed: servers and proxies read different ones, so it is refused outright."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from starlette.responses import PlainTextResponse
from starlette.types import Receive, Scope, Send

from ..._exceptions import ConfigurationError

#: The names a server answers by default: this machine's loopback names, on any port.
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")


#: The headers a request may carry once at most (their names as ASGI gives them, lowercase).
_ONE_EACH = {b"host": "Host", b"origin": "Origin"}


@dataclass(frozen=True)
class Refusal:
    """Why a request is refused (``str()`` of it), and with which status."""

    status: int
    why: str

    def __str__(self) -> str:
        return self.why


class HostGuard:
    """``allowed`` names, each ``name`` (any port) or ``name:port``; ``"*"`` answers any."""

    def __init__(self, allowed: Iterable[str] | None) -> None:
        if isinstance(allowed, str):
            raise ConfigurationError("allowed_hosts must be a list of names, not one string")
        names = list(LOOPBACK_HOSTS if allowed is None else allowed)
        self.any = "*" in names
        self.names: set[tuple[str, int | None]] = set()
        for name in names:
            bare_v6 = isinstance(name, str) and name.count(":") > 1 and name[:1] != "["
            parsed = _split(f"[{name}]" if bare_v6 else name)
            if name != "*" and parsed is None:
                raise ConfigurationError(
                    f"allowed_hosts: {name!r} is not a host name (such as 'agent.example.com' "
                    "or 'agent.example.com:8443')"
                )
            if parsed is not None:
                self.names.add(parsed)

    def allows(self, authority: str) -> bool:
        """Whether a ``Host`` value (``name``, ``name:port``, ``[v6]:port``) is answered."""
        parsed = _split(authority)
        return parsed is not None and (
            self.any or (parsed[0], None) in self.names or parsed in self.names
        )

    def refusal(self, scope: Scope) -> Refusal | None:
        """Why the request is refused, or ``None`` when it has at most one ``Host`` and one
        ``Origin``, each allowed when present."""
        headers: dict[bytes, bytes] = {}
        for key, value in scope.get("headers") or []:
            name = key.lower()
            if name in _ONE_EACH:
                # The check would read one, the router, the app or a proxy another (Starlette
                # and most proxies the first): a second one is refused, never chosen between.
                if name in headers:
                    return Refusal(400, f"the request has more than one {_ONE_EACH[name]} header")
                headers[name] = value
        host = headers.get(b"host")  # absent only outside browsers (HTTP/1.0, raw ASGI)
        if host is not None and not self.allows(host.decode("latin-1")):
            why = f"this server does not answer the host name {host.decode('latin-1')!r}"
            return Refusal(403, why)
        origin = headers.get(b"origin")
        if origin is not None and not self.any:
            text = origin.decode("latin-1")
            scheme, _, authority = text.partition("://")
            if scheme not in ("http", "https") or not self.allows(authority):
                return Refusal(403, f"this server does not answer pages of the origin {text!r}")
        return None

    async def refuse(self, refused: Refusal, scope: Scope, receive: Receive, send: Send) -> None:
        """The refusal's status with a body that says what to change; nothing was run."""
        if refused.status == 400:
            body = f"400 Bad Request: {refused}. Nothing was run. Send one of each.\n"
            await PlainTextResponse(body, status_code=400)(scope, receive, send)
            return
        body = (
            f"403 Forbidden: {refused}. Nothing was run. The server answers only the host names "
            "it was given (AGUIServer(allowed_hosts=[...]), agui-chat serve --allowed-host "
            "NAME); by default only this machine's loopback names (localhost, 127.0.0.1, "
            "[::1]), which guards against DNS rebinding.\n"
        )
        await PlainTextResponse(body, status_code=403)(scope, receive, send)


def _split(authority: object) -> tuple[str, int | None] | None:
    """``(name, port)`` of a ``Host`` value, or ``None`` when it is not one."""
    if not isinstance(authority, str) or not authority or any(c in authority for c in "/?#@ "):
        return None
    try:
        parts = urlsplit(f"//{authority}")
        host, port = (parts.hostname or "").rstrip("."), parts.port
    except ValueError:
        return None
    return (host, port) if host else None
