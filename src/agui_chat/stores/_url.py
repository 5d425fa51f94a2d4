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

    Every one takes ``?audit_arguments=false``: the audit trail keeps only a digest of each
    call's arguments (taken out of the URL before a driver reads it).

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
    url, audit = _take_flag(
        url,
        parts.query,
        "audit_arguments",
        shown,
        ("keep each call's arguments", "keep only a digest"),
    )
    keep_arguments = audit is not False
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme == "memory" and not (parts.netloc or parts.path or parts.query):
        return InMemoryApprovalStore(audit_arguments=keep_arguments)
    if scheme == "sqlite" and not parts.netloc and len(parts.path) > 1:
        from ._sqlite import SQLiteApprovalStore

        options = parse_qs(parts.query)
        synchronous = options.pop("synchronous", ["NORMAL"])[-1].upper()
        if options or synchronous not in ("NORMAL", "FULL"):
            raise ConfigurationError(
                f"cannot read the approval store URL {shown!r}: the only SQLite options are "
                "?synchronous=NORMAL or ?synchronous=FULL, and ?audit_arguments=false"
            )
        return SQLiteApprovalStore(
            unquote(parts.path[1:]),
            synchronous="FULL" if synchronous == "FULL" else "NORMAL",
            audit_arguments=keep_arguments,
        )
    if scheme in ("redis", "rediss", "unix"):
        from ._redis import RedisApprovalStore

        without, strict = _take_flag(
            url, parts.query, "strict", shown, ("refuse a Redis that may lose keys", "warn")
        )
        return RedisApprovalStore(without, strict=strict is True, audit_arguments=keep_arguments)
    if scheme in ("postgresql", "postgres"):
        from ._postgres import PostgresApprovalStore

        return PostgresApprovalStore(url, audit_arguments=keep_arguments)
    raise ConfigurationError(f"cannot read the approval store URL {shown!r}; use {_FORMS}")


def _take_flag(
    url: str, query: str, name: str, shown: str, means: tuple[str, str]
) -> tuple[str, bool | None]:
    """A boolean option of our own in a URL's query (its name percent-decoded, as the
    drivers read names; ``None`` when absent) and the URL without it (as given when it has
    none), since a driver would pass an option it does not know on to the connection, which
    refuses it."""
    kept: list[str] = []
    found: list[str] = []
    for piece in query.split("&") if query else []:
        key, _, value = piece.partition("=")
        if unquote_plus(key) == name:
            found.append(unquote_plus(value).lower())
        else:
            kept.append(piece)
    if not found:
        return url, None
    if len(found) > 1 or found[0] not in ("true", "false"):
        raise ConfigurationError(
            f"cannot read the approval store URL {shown!r}: give {name} once, as "
            f"?{name}=true ({means[0]}) or ?{name}=false ({means[1]})"
        )
    # The query starts at the URL's first "?" (neither the address nor the path holds one)
    # and ends at "#"; the rest of the URL stays as it was spelled.
    head, _, rest = url.partition("?")
    _, hash_mark, fragment = rest.partition("#")
    rebuilt = "?" + "&".join(kept) if kept else ""
    return head + rebuilt + hash_mark + fragment, found[0] == "true"
