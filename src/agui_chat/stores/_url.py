"""Opening an approval store from a URL: ``memory://``, ``sqlite:///path``, ``redis://...``,
``postgresql://...``."""

from __future__ import annotations

from urllib.parse import parse_qs, unquote, unquote_plus, urlsplit

from .._exceptions import ConfigurationError
from .._url_secrets import redact_url
from ._base import ApprovalStore
from ._memory import InMemoryApprovalStore

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
      :class:`RedisApprovalStore` (the ``[redis]`` extra); ``?strict=true`` refuses a Redis
      that may lose keys (``strict=True``: an ``AGUIServer`` on it fails its startup),
      ``?strict=false`` (the default) warns; the option is taken out before redis-py reads
      the URL;
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

        without, strict = _take_strict(url, parts.query, shown)
        return RedisApprovalStore(url if without is None else without, strict=strict)
    if scheme in ("postgresql", "postgres"):
        from ._postgres import PostgresApprovalStore

        return PostgresApprovalStore(url)
    raise ConfigurationError(f"cannot read the approval store URL {shown!r}; use {_FORMS}")


def _take_strict(url: str, query: str, shown: str) -> tuple[str | None, bool]:
    """A Redis URL's ``strict`` option (its name percent-decoded, as redis-py reads names)
    and the URL without it (``None``: it had none, the URL stays as given), since redis-py
    would pass an option it does not know on to the connection, which refuses it."""
    kept: list[str] = []
    found: list[str] = []
    for piece in query.split("&") if query else []:
        name, _, value = piece.partition("=")
        if unquote_plus(name) == "strict":
            found.append(unquote_plus(value).lower())
        else:
            kept.append(piece)
    if not found:
        return None, False
    if len(found) > 1 or found[0] not in ("true", "false"):
        raise ConfigurationError(
            f"cannot read the approval store URL {shown!r}: give strict once, as ?strict=true "
            "(refuse a Redis that may lose keys) or ?strict=false (warn)"
        )
    # The query starts at the URL's first "?" (neither the address nor the path holds one)
    # and ends at "#"; the rest of the URL stays as it was spelled.
    head, _, rest = url.partition("?")
    _, hash_mark, fragment = rest.partition("#")
    query = "?" + "&".join(kept) if kept else ""
    return head + query + hash_mark + fragment, found[0] == "true"
