"""``PostgresApprovalStore``: consumed approvals in a PostgreSQL table, shared by every server
that holds the signing key, on any machine. Needs the ``[postgres]`` extra (``psycopg`` 3 with
its asyncio connections, and ``psycopg-pool``).

One table, one row per claimed interrupt, its key the primary key (the same columns as the
SQLite store's). A claim is one ``INSERT ... ON CONFLICT DO UPDATE ... WHERE``: it inserts a
new row, or takes over one that lapsed (past its expiry, or a claim never started whose lease
ran out), and the row lock PostgreSQL takes makes it atomic: of two claims exactly one
changes the row. The table is created on first use under an advisory lock, so workers that
start at once do not race ``CREATE TABLE``. The store's epoch (docs/stores.md) is a row of
the table beside it (``<table>_meta``), made with it: a claim checks it in the same statement,
so a recreated table (or database) refuses the tokens issued before with
``ApprovalStoreResetError``. Rows past their expiry are swept at most once a minute.

A resume costs three statements (claim, started, result), and one WAL flush: the started
mark's. The claim and the result commit without waiting for theirs (docs/stores.md,
"PostgreSQL"), and a pooled connection is checked with a query only when its socket says
the server closed it.

Every call waits at most ``timeout`` seconds for a connection and for its statement: an
unreachable database is ``ApprovalStoreUnavailableError`` within seconds (not the pool's
default 30 s), and the pool's reconnection attempts are bounded by the same figure, so the
store answers again within seconds of the database coming back.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import re
import select
import time
from collections.abc import Awaitable, Callable, Collection
from typing import Any, TypeVar

from .._exceptions import (
    ApprovalStoreError,
    ApprovalStoreMisconfiguredError,
    ApprovalStoreResetError,
    ApprovalStoreUnavailableError,
    ApprovalStoreValueError,
    ConfigurationError,
)
from .._extras import needs_extra
from .._url_secrets import UNREADABLE_URL, redact_url
from ._base import (
    ApprovalStore,
    Claim,
    ClaimRecord,
    check_release,
    new_epoch,
    result_from_text,
    result_to_text,
)

with needs_extra("postgres", by="PostgresApprovalStore", module="psycopg", package="psycopg 3"):
    import psycopg
    from psycopg import sql
    from psycopg.conninfo import conninfo_to_dict
with needs_extra(
    "postgres", by="PostgresApprovalStore", module="psycopg_pool", package="psycopg-pool"
):
    from psycopg_pool import AsyncConnectionPool, PoolTimeout

__all__ = ["PostgresApprovalStore"]

_T = TypeVar("_T")
_timeout = getattr(asyncio, "timeout", None)  # Python 3.11+

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS {table} (
    key TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    lease_until DOUBLE PRECISION,
    expires_at DOUBLE PRECISION,
    started BOOLEAN NOT NULL DEFAULT FALSE,
    result TEXT
)
"""
_TABLES_EXIST = "SELECT to_regclass(%s) IS NOT NULL AND to_regclass(%s) IS NOT NULL"
# The store's epoch (docs/stores.md) in a table beside it, made once, kept with the records.
_META = "CREATE TABLE IF NOT EXISTS {meta} (name TEXT PRIMARY KEY, value TEXT NOT NULL)"
_MAKE_EPOCH = "INSERT INTO {meta} (name, value) VALUES ('epoch', %s) ON CONFLICT DO NOTHING"
_EPOCH = "SELECT value FROM {meta} WHERE name = 'epoch'"
# Inserted, or taken over when the row counts as absent: past its expiry, or a claim never
# started whose lease ran out; only while the store's epoch is the token's. A row that holds
# is left alone and nothing is returned.
#
# The claim's commit does not wait for its WAL to reach the disk (``synchronous_commit`` off
# for this one transaction, set inside the statement: no extra round trip). That cannot lose
# an approval: a claim only stops a second run once its tool started, and ``mark_started``
# commits synchronously after it; WAL is flushed in order, so a durable "started" implies a
# durable claim. A claim lost to a crash before it was marked started is one whose tool never
# started (``mark_started`` then finds no row of its owner and the tool does not start): the
# answer is usable again, as after a release (docs/stores.md).
_CLAIM = (
    "INSERT INTO {table} AS t (key, owner, lease_until, expires_at) "
    "SELECT %s, %s, %s::double precision, %s::double precision "
    "FROM (SELECT set_config('synchronous_commit', 'off', true)) AS relaxed "
    "WHERE %s::text IS NULL OR EXISTS "
    "(SELECT 1 FROM {meta} WHERE name = 'epoch' AND value = %s::text) "
    "ON CONFLICT (key) DO UPDATE SET owner = EXCLUDED.owner, lease_until = "
    "EXCLUDED.lease_until, expires_at = EXCLUDED.expires_at, started = FALSE, result = NULL "
    "WHERE (t.expires_at IS NOT NULL AND t.expires_at < %s) OR (NOT t.started AND "
    "t.result IS NULL AND t.lease_until IS NOT NULL AND t.lease_until < %s) RETURNING 1"
)
# Committed as the database's ``synchronous_commit`` says (``on`` by default): durable
# before the tool starts, and with it the claim made before.
_START = (
    "UPDATE {table} SET started = TRUE, lease_until = coalesce(%s::double precision, "
    "lease_until) WHERE key = %s AND owner = %s AND result IS NULL"
)
_RENEW = (
    "UPDATE {table} SET lease_until = %s::double precision "
    "WHERE owner = %s AND result IS NULL AND key = ANY(%s)"
)
_RELEASE = "DELETE FROM {table} WHERE key = %s AND NOT started AND result IS NULL"
# release(started=True): the owner's row without a result, started or not (its tool never
# began: the request was cancelled between the mark and the tool's first line).
_RELEASE_STARTED = "DELETE FROM {table} WHERE key = %s AND owner = %s AND result IS NULL"
# A result's commit does not wait for its WAL either: a crash that loses it leaves the record
# started without a result, which replays as lost once its lease runs out (never run again).
_RECORD = (
    "UPDATE {table} SET result = %s FROM (SELECT set_config('synchronous_commit', 'off', "
    "true)) AS relaxed WHERE key = %s"
)
_GET = "SELECT owner, started, lease_until, result FROM {table} WHERE key = %s"
_SWEEP = "DELETE FROM {table} WHERE expires_at IS NOT NULL AND expires_at < %s"


async def _check_if_dropped(connection: Any) -> None:
    """The pool's check before handing out a connection, without a round trip while it is
    sound: an idle connection has nothing to read, so a readable socket means the server
    closed it or said why it will (a restart, ``pg_terminate_backend``); only then is it
    checked with a query, and replaced if that fails. A server gone without a word (no
    FIN) is met by the statement's own bounded wait instead."""
    if connection.closed or connection.broken:
        raise psycopg.OperationalError("the connection is closed")
    try:
        readable, _, _ = select.select([connection.fileno()], [], [], 0)
    except (OSError, ValueError) as exc:
        raise psycopg.OperationalError("the connection's socket is gone") from exc
    if readable:
        await AsyncConnectionPool.check_connection(connection)


def _pool_address(pool: Any) -> str:
    """How a lent pool is named in errors: the URL it connects to (never a password)."""
    try:
        params = conninfo_to_dict(pool.conninfo)
    except (psycopg.Error, AttributeError, TypeError):
        return "postgresql://?"
    host, port = params.get("host", ""), params.get("port", "")
    return f"postgresql://{host}{':' if port else ''}{port}/{params.get('dbname', '')}"


#: SQLSTATE classes by what they mean for a caller (PostgreSQL's appendix A): a value the
#: table cannot hold; a refusal of this server that an operator must fix (no right on the
#: table, a wrong password, a missing database, a read-only standby, a table altered under
#: it). Everything else (08 connection, 53 resources, 57 operator intervention, 40 rollback,
#: no SQLSTATE at all: the network, the pool's wait) is an outage.
_CANNOT_HOLD = ("22", "54")
_REFUSES = ("28", "3D", "42", "23", "25", "0L", "0P")


def _error(exc: BaseException) -> type[ApprovalStoreError]:
    """What ``exc`` means for a caller, read from its SQLSTATE."""
    state = getattr(exc, "sqlstate", None) or ""
    if state.startswith(_CANNOT_HOLD):
        return ApprovalStoreValueError
    if state.startswith(_REFUSES):
        return ApprovalStoreMisconfiguredError
    return ApprovalStoreUnavailableError


def _table(name: str) -> tuple[sql.Composable, sql.Composable]:
    """``table`` or ``schema.table`` as a quoted identifier, and its epoch table's (the same
    name with ``_meta``); anything else is refused."""
    parts = name.split(".") if isinstance(name, str) else []
    if not 1 <= len(parts) <= 2 or not all(_NAME.fullmatch(p) for p in parts[:-1]):
        parts = []
    if not parts or not _NAME.fullmatch(parts[-1]) or len(parts[-1]) > 58:
        raise ConfigurationError(
            f"table must be a PostgreSQL name such as 'agui_chat_approvals' or "
            f"'myschema.approvals' (letters, digits, _; at most 58), got {name!r}"
        )
    return sql.Identifier(*parts), sql.Identifier(*parts[:-1], f"{parts[-1]}_meta")


class PostgresApprovalStore(ApprovalStore):
    """Consumed approvals in the PostgreSQL table ``table`` (created if missing):
    ``url_or_pool`` is a ``postgresql://`` / ``postgres://`` URL or a
    ``psycopg_pool.AsyncConnectionPool`` (yours to open and close).

    Every server that holds the signing key must use the same database and table (``table``
    may be ``schema.table``). Each call waits at most ``timeout`` seconds for a connection
    (and twice that in all); an unreachable database makes it raise
    ``ApprovalStoreUnavailableError`` naming the URL (never its password): the server then
    refuses the resume with ``APPROVAL_STORE_UNAVAILABLE`` and runs nothing, and the same
    answer succeeds once the database is back. A database that answers but refuses this
    server (no right on the table, a read-only standby) raises
    ``ApprovalStoreMisconfiguredError``, a value it cannot hold ``ApprovalStoreValueError``
    (neither is worth retrying; every result is kept exactly, NUL characters and lone
    surrogates included). A URL's pool holds up to ``max_connections``
    connections (autocommit; one the server closed, as a restart of the database does, is
    replaced before use, not failed). Every write is its own commit. The "started" mark
    (and every write but two) is as durable as the database's ``synchronous_commit`` makes
    it; a claim and a result do not wait for their WAL (docs/stores.md says why that loses
    no approval). ``clock`` gives the time in epoch seconds.
    """

    def __init__(
        self,
        url_or_pool: str | Any,
        *,
        table: str = "agui_chat_approvals",
        timeout: float = 2.0,
        max_connections: int = 10,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(clock=clock)
        if timeout <= 0 or max_connections < 1:
            raise ConfigurationError("timeout must be positive and max_connections at least 1")
        self.table = table
        name, meta = _table(table)
        #: Both tables as ``to_regclass`` reads a name (quoted: the case is kept).
        self._names = tuple(
            ".".join(f'"{part}"' for part in n.split(".")) for n in (table, f"{table}_meta")
        )
        self._timeout = timeout
        self._owns_pool = isinstance(url_or_pool, str)  # a pool lent is yours to close
        if isinstance(url_or_pool, str):
            self.url = redact_url(url_or_pool)
            try:  # libpq's messages quote the URL, password and all: never shown
                readable = url_or_pool.startswith(("postgresql://", "postgres://")) and bool(
                    conninfo_to_dict(url_or_pool)
                )
            except psycopg.Error:
                readable = False
            if not readable or self.url == UNREADABLE_URL:  # libpq would quote it
                raise ConfigurationError(
                    f"cannot read the approval store URL {self.url!r}: give "
                    "postgresql://user:password@host:port/dbname with libpq's ?options only"
                )
            pool: Any = AsyncConnectionPool(
                url_or_pool,
                min_size=1,
                max_size=max_connections,
                open=False,
                timeout=timeout,
                reconnect_timeout=timeout,
                check=_check_if_dropped,
                name=f"agui_chat approvals {self.url}",
                kwargs={"autocommit": True, "connect_timeout": max(2, math.ceil(timeout))},
            )
        else:
            pool = url_or_pool
            self.url = _pool_address(pool)
        self._pool = pool
        self._ready = False
        self._lock = asyncio.Lock()
        # An advisory lock per table: concurrent CREATE TABLE IF NOT EXISTS can otherwise fail.
        digest = hashlib.sha256(f"agui_chat:{table}".encode()).digest()
        self._lock_id = int.from_bytes(digest[:8], "big", signed=True)
        self._sql = {
            what: sql.SQL(text).format(table=name, meta=meta)
            for what, text in {
                "schema": _SCHEMA,
                "tables exist": _TABLES_EXIST,
                "meta": _META,
                "make epoch": _MAKE_EPOCH,
                "epoch": _EPOCH,
                "claim": _CLAIM,
                "start": _START,
                "renew": _RENEW,
                "release": _RELEASE,
                "release started": _RELEASE_STARTED,
                "record": _RECORD,
                "get": _GET,
                "sweep": _SWEEP,
            }.items()
        }

    def __repr__(self) -> str:
        return f"PostgresApprovalStore({self.url!r}, table={self.table!r})"

    async def _run(self, work: Callable[[Any], Awaitable[_T]]) -> _T:
        async def job() -> _T:
            if not self._ready:
                await self._prepare()
            try:
                async with self._pool.connection(timeout=self._timeout) as connection:
                    return await work(connection)
            except psycopg.errors.UndefinedTable:
                # Dropped under us: made again, with a new epoch (older tokens: reset).
                self._ready = False
                await self._prepare()
                async with self._pool.connection(timeout=self._timeout) as connection:
                    return await work(connection)

        try:
            if _timeout is None:  # Python 3.10
                return await asyncio.wait_for(job(), self._timeout * 2)
            async with _timeout(self._timeout * 2):  # no task of its own, unlike wait_for
                return await job()
        except (psycopg.Error, PoolTimeout, OSError, asyncio.TimeoutError) as exc:
            reason = str(exc) or f"no answer within {self._timeout * 2:g} seconds"
            kind = _error(exc)
            what = "is unavailable" if kind is ApprovalStoreUnavailableError else "refused"
            raise kind(
                f"the approval store {self.url} {what}: {type(exc).__name__}: {reason}"
            ) from exc

    async def _prepare(self) -> None:
        """Open the pool (a URL's) and create the table, once."""
        async with self._lock:
            if self._ready:
                return
            if self._owns_pool:
                await self._pool.open(wait=False)
            connect = self._pool.connection(timeout=self._timeout)
            async with connect as connection, connection.transaction():
                await connection.execute("SELECT pg_advisory_xact_lock(%s)", (self._lock_id,))
                # CREATE TABLE IF NOT EXISTS needs the right to create in the schema even when
                # the table exists: a role an administrator granted only what it uses on
                # tables made for it must not need it.
                found = await connection.execute(self._sql["tables exist"], self._names)
                if not (await found.fetchone())[0]:
                    await connection.execute(self._sql["schema"])
                    await connection.execute(self._sql["meta"])
                await connection.execute(self._sql["make epoch"], (new_epoch(self._clock()),))
            self._ready = True

    # -- the contract ---------------------------------------------------------------------------
    async def _epoch(self) -> str:
        async def work(db: Any) -> str:
            row = await (await db.execute(self._sql["epoch"])).fetchone()
            return str(row[0])

        return await self._run(work)

    async def _claim(self, claim: Claim) -> bool:
        now, epoch, sweep = claim.now, claim.epoch, self._sweep_due(claim.now)
        args = (claim.key, claim.owner, claim.lease_until, claim.expires_at, epoch, epoch, now, now)

        async def work(db: Any) -> bool:
            if sweep:
                await db.execute(self._sql["sweep"], (now,))
            if (await db.execute(self._sql["claim"], args)).rowcount == 1:
                return True
            if epoch is not None:  # not claimed: held, or the store is not the token's any more
                row = await (await db.execute(self._sql["epoch"])).fetchone()
                if row is None or row[0] != epoch:
                    raise ApprovalStoreResetError(
                        f"the approval store {self.url} (table {self.table}) lost its records "
                        "since the interrupt was issued (another epoch)"
                    )
            return False

        return await self._run(work)

    async def mark_started(
        self, key: str, *, owner: str = "", lease_until: float | None = None
    ) -> bool:
        async def work(db: Any) -> bool:
            done = await db.execute(self._sql["start"], (lease_until, key, owner))
            return bool(done.rowcount == 1)

        return await self._run(work)

    async def renew(self, keys: Collection[str], *, owner: str, lease_until: float | None) -> None:
        async def work(db: Any) -> None:
            await db.execute(self._sql["renew"], (lease_until, owner, list(keys)))

        await self._run(work)

    async def release(self, key: str, *, owner: str = "", started: bool = False) -> None:
        check_release(owner, started)
        query, args = self._sql["release"], [key]
        if started:
            query, args = self._sql["release started"], [key, owner]
        elif owner:
            query, args = sql.SQL("{} AND owner = %s").format(query), [key, owner]

        async def work(db: Any) -> None:
            await db.execute(query, args)

        await self._run(work)

    async def record_result(self, key: str, result: str) -> None:
        async def work(db: Any) -> None:
            await db.execute(self._sql["record"], (result_to_text(result), key))

        await self._run(work)

    async def record(self, key: str) -> ClaimRecord | None:
        async def work(db: Any) -> ClaimRecord | None:
            row = await (await db.execute(self._sql["get"], (key,))).fetchone()
            if row is None:
                return None
            result = None if row[3] is None else result_from_text(row[3])
            return ClaimRecord(row[0], bool(row[1]), row[2], result)

        return await self._run(work)

    async def aclose(self) -> None:
        if self._owns_pool:
            await self._pool.close()
            self._ready = False
