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

The governance records live in three more tables beside it, in the same schema, created
(under the same advisory lock) the first time they are used, so a store opened on a 0.3
database makes what is missing and a deployment that keeps no audit trail never has them:
``<table>_log`` (the audit trail's entries: ``seq``, ``body``, ``prev_hash``, ``hash``, the
body kept as the ASCII text it was sealed as), ``<table>_head`` (one row: the chain's last
``seq`` and ``hash``, kept apart from the entries so a trail cut short is found) and
``<table>_perm`` (the remembered approvals, each a ``Grant``'s JSON with its scope, thread,
principal and expiry as indexed columns). The suffixes are short so that a 58-character
table name still gives names PostgreSQL keeps whole. The chain is never forked: every
append is one transaction that first locks the head row (``SELECT ... FOR UPDATE``, so the
writers of every worker queue there), checks that the entry follows it (else
``HeadMoved``, rolled back: nothing written), then writes the entry and moves the head; a
decision appended with the "started" mark, or with a kept result, is written in that same
transaction, after the claim's row is checked (and locked), so neither is kept without the
other. A role that may not create tables works once the five tables exist: an operator
creates them (a store run once by an owner does) and grants the role ``SELECT, INSERT,
UPDATE, DELETE`` on them and ``USAGE`` on their schema.

A resume costs three statements (claim, started, result), and one WAL flush: the started
mark's. The claim and the result commit without waiting for theirs (docs/stores.md,
"PostgreSQL"), and a pooled connection is checked with a query only when its socket says
the server closed it. A started mark or a result written with its audit record is one
transaction of a few statements (still one commit).

Every call waits at most ``timeout`` seconds for a connection and for its statement: an
unreachable database is ``ApprovalStoreUnavailableError`` within seconds (not the pool's
default 30 s), and the pool's reconnection attempts are bounded by the same figure, so the
store answers again within seconds of the database coming back.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
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
    AuditChainError,
    ConfigurationError,
)
from .._extras import needs_extra
from .._url_secrets import UNREADABLE_URL, redact_url
from ..consent._audit import EMPTY_HEAD, AuditEntry
from ..consent._grants import Grant
from ._base import (
    ApprovalStore,
    Claim,
    ClaimRecord,
    HeadMoved,
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

# -- the governance records (made on first use; see the module's docstring) -----------------------
_GOVERNANCE_EXIST = (
    "SELECT to_regclass(%s) IS NOT NULL, to_regclass(%s) IS NOT NULL, to_regclass(%s) IS NOT NULL"
)
_LOG = (
    "CREATE TABLE IF NOT EXISTS {log} (seq BIGINT PRIMARY KEY, body TEXT NOT NULL, "
    "prev_hash TEXT NOT NULL, hash TEXT NOT NULL)"
)
# One row (``id`` is TRUE): the chain's head, kept apart from the entries.
_HEAD = (
    "CREATE TABLE IF NOT EXISTS {head} (id BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (id), "
    "seq BIGINT NOT NULL, hash TEXT NOT NULL)"
)
_PERM = (
    "CREATE TABLE IF NOT EXISTS {perm} (id TEXT PRIMARY KEY, scope TEXT NOT NULL, "
    "thread_id TEXT, principal_id TEXT, expires DOUBLE PRECISION NOT NULL, grant_json TEXT "
    "NOT NULL)"
)
# Unnamed: PostgreSQL names them within its 63 characters (made only with their table).
_PERM_BY_THREAD = "CREATE INDEX ON {perm} (thread_id) WHERE scope = 'thread'"
_PERM_BY_PRINCIPAL = "CREATE INDEX ON {perm} (principal_id) WHERE scope = 'principal'"
# The head row of an empty chain; never put back under entries (a head deleted under them
# stays missing: ``verify_audit`` names it, appends refuse).
_SEED_HEAD = (
    "INSERT INTO {head} (id, seq, hash) SELECT TRUE, 0, %s WHERE NOT EXISTS "
    "(SELECT 1 FROM {log}) ON CONFLICT (id) DO NOTHING"
)
_READ_HEAD = "SELECT seq, hash FROM {head} WHERE id"
# The first statement of every transaction that appends: the writers of every worker queue
# on this row lock, and each then sees the head the last one left.
_LOCK_HEAD = "SELECT seq, hash FROM {head} WHERE id FOR UPDATE"
# Written once the head is locked and known to be the one the entry follows.
_PUT_ENTRY = (
    "WITH logged AS (INSERT INTO {log} (seq, body, prev_hash, hash) VALUES (%s, %s, %s, %s)) "
    "UPDATE {head} SET seq = %s, hash = %s WHERE id"
)
# A record's row locked, and whether it holds no result yet.
_LOCK_RECORD = "SELECT result IS NULL FROM {table} WHERE key = %s FOR UPDATE"
_FIRST_SEQ = "SELECT min(seq) FROM {log}"
_ENTRIES = "SELECT seq, body, prev_hash, hash FROM {log} WHERE seq > %s ORDER BY seq LIMIT %s"
# Kept (the same id replaces it); grants past their expiry are swept on the way.
_PUT_GRANT = (
    "WITH swept AS (DELETE FROM {perm} WHERE expires < %s) "
    "INSERT INTO {perm} (id, scope, thread_id, principal_id, expires, grant_json) "
    "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (id) DO UPDATE SET scope = EXCLUDED.scope, "
    "thread_id = EXCLUDED.thread_id, principal_id = EXCLUDED.principal_id, "
    "expires = EXCLUDED.expires, grant_json = EXCLUDED.grant_json"
)
_ALL_GRANTS = "SELECT grant_json FROM {perm}"
_GRANTS = (
    "SELECT grant_json FROM {perm} WHERE (scope = 'thread' AND thread_id = %s) "
    "OR (scope = 'principal' AND principal_id = %s)"
)
_REVOKE = "DELETE FROM {perm} WHERE id = %s RETURNING expires"


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


#: The tables beside the store's own, by the suffix of their names: its epoch, then the
#: governance records (at most 5 characters, so a 58-character name gives them all whole).
_COMPANIONS = {"meta": "_meta", "log": "_log", "head": "_head", "perm": "_perm"}
_GOVERNANCE = ("log", "head", "perm")


def _table(name: str) -> dict[str, sql.Composable]:
    """``table`` or ``schema.table`` as a quoted identifier (``"table"``), with the tables
    beside it (the same schema, the name with a suffix of :data:`_COMPANIONS`); anything else
    is refused."""
    parts = name.split(".") if isinstance(name, str) else []
    if not 1 <= len(parts) <= 2 or not all(_NAME.fullmatch(p) for p in parts[:-1]):
        parts = []
    if not parts or not _NAME.fullmatch(parts[-1]) or len(parts[-1]) > 58:
        raise ConfigurationError(
            f"table must be a PostgreSQL name such as 'agui_chat_approvals' or "
            f"'myschema.approvals' (letters, digits, _; at most 58), got {name!r}"
        )
    named: dict[str, sql.Composable] = {"table": sql.Identifier(*parts)}
    for what, suffix in _COMPANIONS.items():
        named[what] = sql.Identifier(*parts[:-1], parts[-1] + suffix)
    return named


def _regclass(table: str, suffix: str = "") -> str:
    """``table`` (with ``suffix``) as ``to_regclass`` reads a name (quoted: the case is kept)."""
    return ".".join(f'"{part}"' for part in (table + suffix).split("."))


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
    replaced before use, not failed). Every write is its own commit (a write with its audit
    record one transaction). The "started" mark (and every write but two) is as durable as
    the database's ``synchronous_commit`` makes it; a claim and a result do not wait for their
    WAL (docs/stores.md says why that loses no approval; a result's audit record is lost with
    it or kept with it, never apart). ``clock`` gives the time in epoch seconds;
    ``audit_arguments=False`` keeps only a digest of each call's arguments in the audit trail.

    The audit trail and the grants are kept in ``<table>_log``, ``<table>_head`` and
    ``<table>_perm``, made on first use; a role that may not create tables needs them made
    beforehand (with ``<table>`` and ``<table>_meta``) and ``SELECT, INSERT, UPDATE, DELETE``
    on all five.
    """

    def __init__(
        self,
        url_or_pool: str | Any,
        *,
        table: str = "agui_chat_approvals",
        timeout: float = 2.0,
        max_connections: int = 10,
        clock: Callable[[], float] = time.time,
        audit_arguments: bool = True,
    ) -> None:
        super().__init__(clock=clock, audit_arguments=audit_arguments)
        if timeout <= 0 or max_connections < 1:
            raise ConfigurationError("timeout must be positive and max_connections at least 1")
        self.table = table
        names = _table(table)
        #: The claims' tables, then the governance tables, as ``to_regclass`` reads them.
        self._names = (_regclass(table), _regclass(table, "_meta"))
        self._governance_names = tuple(_regclass(table, _COMPANIONS[t]) for t in _GOVERNANCE)
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
        self._governance_ready = False
        self._lock = asyncio.Lock()
        # An advisory lock per table: concurrent CREATE TABLE IF NOT EXISTS can otherwise fail.
        digest = hashlib.sha256(f"agui_chat:{table}".encode()).digest()
        self._lock_id = int.from_bytes(digest[:8], "big", signed=True)
        self._sql = {
            what: sql.SQL(text).format(**names)
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
                "governance exist": _GOVERNANCE_EXIST,
                "log": _LOG,
                "head": _HEAD,
                "perm": _PERM,
                "perm by thread": _PERM_BY_THREAD,
                "perm by principal": _PERM_BY_PRINCIPAL,
                "seed head": _SEED_HEAD,
                "read head": _READ_HEAD,
                "lock head": _LOCK_HEAD,
                "put entry": _PUT_ENTRY,
                "lock record": _LOCK_RECORD,
                "entries": _ENTRIES,
                "first seq": _FIRST_SEQ,
                "put grant": _PUT_GRANT,
                "all grants": _ALL_GRANTS,
                "grants": _GRANTS,
                "revoke": _REVOKE,
            }.items()
        }

    def __repr__(self) -> str:
        return f"PostgresApprovalStore({self.url!r}, table={self.table!r})"

    async def _run(self, work: Callable[[Any], Awaitable[_T]], *, governance: bool = False) -> _T:
        """``work`` on a pooled connection, its tables made first (``governance``: the audit
        trail's and the grants' too), every failure the store's typed error."""

        async def ready() -> None:
            if not self._ready:
                await self._prepare()
            if governance and not self._governance_ready:
                await self._prepare_governance()

        async def job() -> _T:
            await ready()
            try:
                async with self._pool.connection(timeout=self._timeout) as connection:
                    return await work(connection)
            except psycopg.errors.UndefinedTable:
                # Dropped under us: made again, with a new epoch (older tokens: reset).
                self._ready = self._governance_ready = False
                await ready()
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

    async def _prepare_governance(self) -> None:
        """Create the audit trail's and the grants' tables that are missing, once (under the
        claims' advisory lock), and the head row of an empty chain."""
        async with self._lock:
            if self._governance_ready:
                return
            connect = self._pool.connection(timeout=self._timeout)
            async with connect as connection, connection.transaction():
                await connection.execute("SELECT pg_advisory_xact_lock(%s)", (self._lock_id,))
                # Checked first, as for the claims' tables: a role that may not create works
                # on tables an operator made.
                found = await connection.execute(
                    self._sql["governance exist"], self._governance_names
                )
                log, head, perm = await found.fetchone()
                if not log:
                    await connection.execute(self._sql["log"])
                if not head:
                    await connection.execute(self._sql["head"])
                if not perm:
                    await connection.execute(self._sql["perm"])
                    await connection.execute(self._sql["perm by thread"])
                    await connection.execute(self._sql["perm by principal"])
                await connection.execute(self._sql["seed head"], (EMPTY_HEAD[1],))
            self._governance_ready = True

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

    async def _mark_started(
        self, key: str, owner: str, lease_until: float | None, entry: AuditEntry | None
    ) -> bool:
        start = (lease_until, key, owner)
        if entry is None:

            async def mark(db: Any) -> bool:
                return bool((await db.execute(self._sql["start"], start)).rowcount == 1)

            return await self._run(mark)

        async def mark_and_append(db: Any) -> bool:
            async with db.transaction():
                _follows(await self._lock_head(db), entry)
                if (await db.execute(self._sql["start"], start)).rowcount != 1:
                    return False  # not owner's: nothing written
                await self._put_entry(db, entry)
                return True

        return await self._run(mark_and_append, governance=True)

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

    async def _record_result(self, key: str, result: str, entry: AuditEntry | None) -> None:
        kept = (result_to_text(result), key)
        if entry is None:

            async def record(db: Any) -> None:
                await db.execute(self._sql["record"], kept)

            await self._run(record)
            return

        async def record_and_append(db: Any) -> None:
            async with db.transaction():
                head = await self._lock_head(db)
                row = await (await db.execute(self._sql["lock record"], (key,))).fetchone()
                if row is None:
                    return  # no record: nothing kept, nothing recorded
                fresh = bool(row[0])  # no result yet: this one is the record's use
                if fresh:
                    _follows(head, entry)
                await db.execute(self._sql["record"], kept)
                if fresh:
                    await self._put_entry(db, entry)

        await self._run(record_and_append, governance=True)

    async def record(self, key: str) -> ClaimRecord | None:
        async def work(db: Any) -> ClaimRecord | None:
            row = await (await db.execute(self._sql["get"], (key,))).fetchone()
            if row is None:
                return None
            return ClaimRecord(row[0], bool(row[1]), row[2], result_from_text(row[3]))

        return await self._run(work)

    # -- the audit trail ------------------------------------------------------------------------
    async def _lock_head(self, db: Any) -> tuple[int, str]:
        """Lock the head row (in the caller's transaction) and read it: every appending
        worker waits here for the one before it. A missing row is made again only for an empty
        trail; under entries it was deleted, and nothing is appended after it."""
        for _ in range(2):
            row = await (await db.execute(self._sql["lock head"])).fetchone()
            if row is not None:
                return int(row[0]), str(row[1])
            await db.execute(self._sql["seed head"], (EMPTY_HEAD[1],))
        first = await (await db.execute(self._sql["first seq"])).fetchone()
        raise AuditChainError(
            f"audit record {first[0]} lies past the trail's head, which is missing from "
            f"{self.table}_head: it was deleted; nothing was appended",
            seq=int(first[0] or 1),
        )

    async def _put_entry(self, db: Any, entry: AuditEntry) -> None:
        """Append ``entry`` and make it the head (the head locked, and ``entry`` its next)."""
        await db.execute(
            self._sql["put entry"],
            (entry.seq, entry.body, entry.prev_hash, entry.hash, entry.seq, entry.hash),
        )

    async def _append(self, entry: AuditEntry) -> None:
        async def append(db: Any) -> None:
            async with db.transaction():
                _follows(await self._lock_head(db), entry)
                await self._put_entry(db, entry)

        await self._run(append, governance=True)

    async def _audit_head(self) -> tuple[int, str] | None:
        async def read(db: Any) -> tuple[int, str] | None:
            row = await (await db.execute(self._sql["read head"])).fetchone()
            head = None if row is None else (int(row[0]), str(row[1]))
            return None if head == EMPTY_HEAD else head

        return await self._run(read, governance=True)

    async def _audit_entries(self, after: int, limit: int) -> list[AuditEntry]:
        async def read(db: Any) -> list[AuditEntry]:
            found = await db.execute(self._sql["entries"], (after, limit))
            return [AuditEntry(int(r[0]), r[1], r[2], r[3]) for r in await found.fetchall()]

        return await self._run(read, governance=True)

    # -- remembered approvals -------------------------------------------------------------------
    async def _put_grant(self, grant: Grant) -> None:
        args = (
            self._clock(),
            grant.id,
            grant.scope,
            grant.thread_id,
            grant.principal_id,
            grant.expires.timestamp(),
            json.dumps(grant.to_dict()),
        )

        async def put(db: Any) -> None:
            await db.execute(self._sql["put grant"], args)

        await self._run(put, governance=True)

    async def _grants(self, thread_id: str | None, principal_id: str | None) -> list[Grant]:
        query: sql.Composable
        args: tuple[str | None, ...]
        if thread_id is None and principal_id is None:
            query, args = self._sql["all grants"], ()
        else:
            query, args = self._sql["grants"], (thread_id, principal_id)

        async def read(db: Any) -> list[Grant]:
            found = await (await db.execute(query, args)).fetchall()
            return [Grant.from_dict(json.loads(row[0])) for row in found]

        return await self._run(read, governance=True)

    async def revoke_grant(self, grant_id: str) -> bool:
        now = self._clock()

        async def revoke(db: Any) -> bool:
            row = await (await db.execute(self._sql["revoke"], (grant_id,))).fetchone()
            return row is not None and float(row[0]) > now

        return await self._run(revoke, governance=True)

    async def aclose(self) -> None:
        if self._owns_pool:
            await self._pool.close()
            self._ready = False


def _follows(head: tuple[int, str], entry: AuditEntry) -> None:
    """``HeadMoved`` (naming the head now) unless ``entry`` follows ``head``."""
    if (entry.seq - 1, entry.prev_hash) != head:
        raise HeadMoved(None if head == EMPTY_HEAD else head)
