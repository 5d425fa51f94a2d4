"""Opening an approval store from a URL: ``memory://``, ``sqlite:///path``, ``redis://...``,
``postgresql://...``."""

from __future__ import annotations

from urllib.parse import parse_qs, unquote, urlsplit

from .._exceptions import ConfigurationError
from ._base import ApprovalStore
from ._memory import InMemoryApprovalStore
from ._url_redaction import redact_url

__all__ = ["store_from_url"]

_FORMS = (
    "memory://, sqlite:///relative/path.db, sqlite:////absolute/path.db, redis://host:port/db "
    "or postgresql://user:password@host:port/dbname"
)


def store_from_url(url: str) -> ApprovalStore:
    """The store a URL names:

    - ``memory://`` — :class:`InMemoryApprovalStore` (one process that never restarts);
    - ``sqlite:///approvals.db`` (relative to the working directory) or
      ``sqlite:////var/lib/agent/approvals.db`` (absolute; SQLAlchemy's spelling) —
      :class:`SQLiteApprovalStore`; ``?synchronous=FULL`` makes claims survive a power loss;
    - ``redis://[:password@]host:port/db``, ``rediss://...``, ``unix://...`` —
      :class:`RedisApprovalStore` (the ``[redis]`` extra);
    - ``postgresql://[user[:password]@]host[:port]/dbname[?options]`` or ``postgres://...``
      — :class:`PostgresApprovalStore` (the ``[postgres]`` extra), its default table.

    A URL that does not parse raises ``ConfigurationError`` naming it (never its password); one that
    parses but cannot be reached fails on first use with ``ApprovalStoreUnavailableError``.
    """
    if not isinstance(url, str):
        raise TypeError(f"an approval store URL must be a str, got {type(url).__name__}")
    shown = redact_url(url)
    try:
        parts = urlsplit(url)
    except ValueError:
        raise ConfigurationError(
            f"cannot read the approval store URL {shown!r}; use {_FORMS}"
        ) from None
    scheme = parts.scheme.lower()
    if scheme == "memory" and not (parts.netloc or parts.path or parts.query):
        return InMemoryApprovalStore()
    if scheme == "sqlite" and not parts.netloc and len(parts.path) > 1:
        from ._sqlite import SQLiteApprovalStore

        options = parse_qs(parts.query)
        synchronous = options.pop("synchronous", ["NORMAL"])[-1].upper()
        if options or synchronous not in ("NORMAL", "FULL"):
            raise ConfigurationError(
                f"cannot read the approval store URL {shown!r}: the only SQLite option is "
                "?synchronous=NORMAL or ?synchronous=FULL"
            )
        return SQLiteApprovalStore(
            unquote(parts.path[1:]), synchronous="FULL" if synchronous == "FULL" else "NORMAL"
        )
    if scheme in ("redis", "rediss", "unix"):
        from ._redis import RedisApprovalStore

        return RedisApprovalStore(url)
    if scheme in ("postgresql", "postgres"):
        from ._postgres import PostgresApprovalStore

        return PostgresApprovalStore(url)
    raise ConfigurationError(f"cannot read the approval store URL {shown!r}; use {_FORMS}")
