"""``SQLiteApprovalStore``: consumed approvals in a SQLite file (stdlib ``sqlite3``), shared
by every worker process of one host and kept across restarts.

One table, one row per claimed interrupt, its key the primary key. A claim is one
``INSERT ... ON CONFLICT DO NOTHING`` (the unique key makes it atomic across processes);
only when the row exists does a second statement take over a row that lapsed (past its
expiry, or a claim never started whose lease ran out). The file is in WAL mode, so readers
never block the writer, and every statement runs in one worker thread of the store's own,
off the event loop. ``busy_timeout`` lets concurrent writers of several processes queue
rather than fail. Rows past their expiry are swept at most once a minute. The store's
epoch is a row of ``agui_chat_meta``, made with the file: a recreated file has another.

The governance records are tables of the same file, made when it is opened (a file of an
older version gets them then): ``agui_chat_audit`` holds the audit entries (``seq`` the
primary key, ``body`` the canonical JSON text as sealed), ``agui_chat_audit_head`` the
chain's head in a single row of its own (so a trail cut short does not verify), and
``agui_chat_grants`` the remembered approvals as JSON, indexed by thread, principal and
expiry. Every write that appends to the chain is one ``BEGIN IMMEDIATE`` transaction, which
takes the file's write lock before it reads anything: it reads the head, and only if the
entry follows it writes the "started" mark or the result, the entry and the new head
together, or rolls back all of it (``HeadMoved``, or the claim no longer its owner's). Two
workers never both append after one head, and no mark or result is kept without its entry.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Collection
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal, TypeVar

from .._exceptions import (
    ApprovalStoreError,
    ApprovalStoreMisconfiguredError,
    ApprovalStoreResetError,
    ApprovalStoreUnavailableError,
    ApprovalStoreValueError,
    AuditChainError,
    ConfigurationError,
)
from ..consent._audit import GENESIS_HASH, AuditEntry
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

__all__ = ["SQLiteApprovalStore"]

_T = TypeVar("_T")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS agui_chat_approvals (
    key TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    lease_until REAL,
    expires_at REAL,
    started INTEGER NOT NULL DEFAULT 0,
    result TEXT
)
"""
_META = "CREATE TABLE IF NOT EXISTS agui_chat_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)"
_MAKE_EPOCH = "INSERT INTO agui_chat_meta (name, value) VALUES ('epoch', ?) ON CONFLICT DO NOTHING"
_EPOCH = "SELECT value FROM agui_chat_meta WHERE name = 'epoch'"
_CLAIM = (
    "INSERT INTO agui_chat_approvals (key, owner, lease_until, expires_at) VALUES (?, ?, ?, ?) "
    "ON CONFLICT (key) DO NOTHING"
)
# A row counts as absent past its expiry, or when it is a claim never started whose lease ran
# out: then it is taken over (in one statement, so of two takers exactly one changes it).
_TAKE_OVER = (
    "UPDATE agui_chat_approvals SET owner = ?, lease_until = ?, expires_at = ?, started = 0, "
    "result = NULL WHERE key = ? AND ((expires_at IS NOT NULL AND expires_at < ?) OR "
    "(started = 0 AND result IS NULL AND lease_until IS NOT NULL AND lease_until < ?))"
)
_START = (
    "UPDATE agui_chat_approvals SET started = 1, lease_until = coalesce(?, lease_until) "
    "WHERE key = ? AND owner = ? AND result IS NULL"
)
_RENEW = (
    "UPDATE agui_chat_approvals SET lease_until = ? WHERE owner = ? AND result IS NULL "
    "AND key IN (SELECT value FROM json_each(?))"
)
_RELEASE = "DELETE FROM agui_chat_approvals WHERE key = ? AND started = 0 AND result IS NULL"
# release(started=True): the owner's record without a result, started or not (its tool never
# began: the request was cancelled between the mark and the tool's first line).
_RELEASE_STARTED = "DELETE FROM agui_chat_approvals WHERE key = ? AND owner = ? AND result IS NULL"
_RECORD = "UPDATE agui_chat_approvals SET result = ? WHERE key = ?"
_GET = "SELECT owner, started, lease_until, result FROM agui_chat_approvals WHERE key = ?"
_HAS_RESULT = "SELECT result IS NOT NULL FROM agui_chat_approvals WHERE key = ?"
_SWEEP = "DELETE FROM agui_chat_approvals WHERE expires_at IS NOT NULL AND expires_at < ?"

# The governance records: the audit entries, the chain's head (one row, apart from them) and
# the grants, made beside the approvals (a file of an older version gets them when opened).
_GOVERNANCE = (
    "CREATE TABLE IF NOT EXISTS agui_chat_audit (seq INTEGER PRIMARY KEY, body TEXT NOT NULL, "
    "prev_hash TEXT NOT NULL, hash TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS agui_chat_audit_head (one INTEGER PRIMARY KEY CHECK (one = 1), "
    "seq INTEGER NOT NULL, hash TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS agui_chat_grants (id TEXT PRIMARY KEY, scope TEXT NOT NULL, "
    "thread_id TEXT, principal_id TEXT, expires_at REAL NOT NULL, grant_json TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS agui_chat_grants_by_thread ON agui_chat_grants (thread_id) "
    "WHERE scope = 'thread'",
    "CREATE INDEX IF NOT EXISTS agui_chat_grants_by_principal ON agui_chat_grants "
    "(principal_id) WHERE scope = 'principal'",
    "CREATE INDEX IF NOT EXISTS agui_chat_grants_by_expiry ON agui_chat_grants (expires_at)",
)
_HEAD = "SELECT seq, hash FROM agui_chat_audit_head WHERE one = 1"
_SET_HEAD = (
    "INSERT INTO agui_chat_audit_head (one, seq, hash) VALUES (1, ?, ?) "
    "ON CONFLICT (one) DO UPDATE SET seq = excluded.seq, hash = excluded.hash"
)
_APPEND = "INSERT INTO agui_chat_audit (seq, body, prev_hash, hash) VALUES (?, ?, ?, ?)"
_HOLDS_SEQ = "SELECT 1 FROM agui_chat_audit WHERE seq = ?"
_ENTRIES = (
    "SELECT seq, body, prev_hash, hash FROM agui_chat_audit WHERE seq > ? ORDER BY seq LIMIT ?"
)
_PUT_GRANT = (
    "INSERT INTO agui_chat_grants (id, scope, thread_id, principal_id, expires_at, grant_json) "
    "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET scope = excluded.scope, "
    "thread_id = excluded.thread_id, principal_id = excluded.principal_id, "
    "expires_at = excluded.expires_at, grant_json = excluded.grant_json"
)
_SWEEP_GRANTS = "DELETE FROM agui_chat_grants WHERE expires_at <= ?"
_ALL_GRANTS = "SELECT grant_json FROM agui_chat_grants"
_GRANTS = (
    "SELECT grant_json FROM agui_chat_grants WHERE (scope = 'thread' AND thread_id = ?) "
    "OR (scope = 'principal' AND principal_id = ?)"
)
_REVOKE_LIVE = "DELETE FROM agui_chat_grants WHERE id = ? AND expires_at > ?"
_REVOKE = "DELETE FROM agui_chat_grants WHERE id = ?"

Synchronous = Literal["FULL", "NORMAL"]


class SQLiteApprovalStore(ApprovalStore):
    """Consumed approvals in the SQLite file at ``path`` (created if missing).

    Every worker process of one host may open the same file: claims are atomic across
    them, and the records survive restarts. For several machines use
    ``RedisApprovalStore``. With ``synchronous="NORMAL"`` (the default; WAL mode) a claim is
    durable once made against any process crash, a ``kill -9`` included: only a power loss
    or an OS crash may roll back the last writes. ``synchronous="FULL"`` makes every write
    but two durable against those too, the "started" mark before the tool starts among them
    (its commit syncs the WAL file whole, the claim before it included): one ``fsync`` per
    resume (a few hundred microseconds to a millisecond on an idle disk, several on a busy
    one; see bench/README.md). The claim and the result do not wait for the disk, as in
    ``PostgresApprovalStore``: a claim rolled back by a power loss was never started (its
    answer is usable again), a result rolled back leaves its call lost (never run again;
    docs/stores.md).
    ``clock`` gives the time in epoch seconds (tests pass a fake one); ``audit_arguments=False``
    keeps only a digest of each call's arguments in the audit trail. The file is opened on
    first use. Errors name the file: ``ApprovalStoreMisconfiguredError`` when this process may
    not use it (permissions, a missing directory, a corrupt file), ``ApprovalStoreUnavailableError``
    for an outage (busy past ``busy_timeout``, a full disk, an I/O error, a file system gone
    read-only), ``ApprovalStoreValueError`` for a value SQLite cannot hold.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        synchronous: Synchronous = "NORMAL",
        busy_timeout: float = 10.0,
        clock: Callable[[], float] = time.time,
        audit_arguments: bool = True,
    ) -> None:
        if synchronous not in ("FULL", "NORMAL"):
            raise ConfigurationError(f"synchronous must be 'FULL' or 'NORMAL', got {synchronous!r}")
        self.path = os.fspath(path)
        if not self.path or self.path == ":memory:":
            raise ConfigurationError(
                "SQLiteApprovalStore needs a file path that every worker can open, not "
                f"{self.path!r}; use InMemoryApprovalStore() for a single process"
            )
        super().__init__(clock=clock, audit_arguments=audit_arguments)
        self.synchronous = synchronous
        self._busy_timeout = busy_timeout
        # One thread owns the connection: sqlite3 objects stay in the thread that made them.
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="agui-sqlite")
        self._local = threading.local()

    def __repr__(self) -> str:
        return f"SQLiteApprovalStore({self.path!r})"

    # -- the worker thread --------------------------------------------------------------------
    def _connection(self) -> sqlite3.Connection:
        connection: sqlite3.Connection | None = getattr(self._local, "connection", None)
        if connection is None:
            try:
                connection = sqlite3.connect(
                    self.path, timeout=self._busy_timeout, isolation_level=None
                )
                _use_wal(connection, time.monotonic() + self._busy_timeout)
                connection.execute(f"PRAGMA synchronous={self.synchronous}")
                connection.execute(_SCHEMA)
                connection.execute(_META)
                for statement in _GOVERNANCE:
                    connection.execute(statement)
                connection.execute(_MAKE_EPOCH, (new_epoch(self._clock()),))
                self._local.epoch = connection.execute(_EPOCH).fetchone()[0]
            except sqlite3.Error as exc:
                if connection is not None:
                    connection.close()
                raise _failure(exc, self.path, "cannot open the approval store") from exc
            self._local.connection = connection
        return connection

    async def _run(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        def job() -> _T:
            connection = self._connection()
            try:
                return work(connection)
            except sqlite3.Error as exc:
                if not _busy(exc):
                    # A connection that met a read-only file or an I/O error stays that way
                    # (SQLite opened the file read-only, or gave up on it): the next call
                    # opens the file again, so the store recovers once the file does.
                    connection.close()
                    self._local.connection = None
                raise _failure(exc, self.path, "the approval store", "failed") from exc

        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, job)

    # -- the contract ---------------------------------------------------------------------------
    async def _epoch(self) -> str:
        return await self._run(lambda _: str(self._local.epoch))

    async def _claim(self, claim: Claim) -> bool:
        now, sweep = claim.now, self._sweep_due(claim.now)
        held = (claim.owner, claim.lease_until, claim.expires_at)

        def work(db: sqlite3.Connection) -> bool:
            # The epoch cannot change under an open connection: a recreated file is another.
            if claim.epoch is not None and claim.epoch != self._local.epoch:
                raise ApprovalStoreResetError(
                    f"the approval store sqlite:///{self.path} was recreated since the "
                    "interrupt was issued (another epoch)"
                )
            if sweep:
                db.execute(_SWEEP, (now,))
            if db.execute(_CLAIM, (claim.key, *held)).rowcount == 1:
                return True
            return db.execute(_TAKE_OVER, (*held, claim.key, now, now)).rowcount == 1

        return await self._run(self._unsynced(work))

    async def _mark_started(
        self, key: str, owner: str, lease_until: float | None, entry: AuditEntry | None
    ) -> bool:
        args = (lease_until, key, owner)
        if entry is None:
            # One statement, atomic on its own.
            return await self._run(lambda db: db.execute(_START, args).rowcount == 1)

        def work(db: sqlite3.Connection) -> bool:
            if db.execute(_START, args).rowcount != 1:
                return False  # not the owner's claim: rolled back, though nothing changed
            _put_entry(db, entry)
            return True

        # As synchronous as the store: with FULL, this commit syncs the WAL file, and with it
        # every write before it (the claim).
        return await self._run(_transaction(work, keep=lambda started: started))

    async def renew(self, keys: Collection[str], *, owner: str, lease_until: float | None) -> None:
        args = (lease_until, owner, json.dumps(list(keys)))
        await self._run(lambda db: db.execute(_RENEW, args))

    async def release(self, key: str, *, owner: str = "", started: bool = False) -> None:
        check_release(owner, started)
        query, args = _RELEASE, [key]
        if started:
            query, args = _RELEASE_STARTED, [key, owner]
        elif owner:
            query, args = f"{_RELEASE} AND owner = ?", [key, owner]
        await self._run(lambda db: db.execute(query, args))

    async def _record_result(self, key: str, result: str, entry: AuditEntry | None) -> None:
        args = (result_to_text(result), key)
        if entry is None:
            await self._run(self._unsynced(lambda db: db.execute(_RECORD, args)))
            return

        def work(db: sqlite3.Connection) -> None:
            held = db.execute(_HAS_RESULT, (key,)).fetchone()
            if held is None:
                return  # no record: nothing kept, nothing recorded
            if not held[0]:
                _put_entry(db, entry)  # the first result only
            db.execute(_RECORD, args)

        await self._run(self._unsynced(_transaction(work)))

    # -- the audit trail ------------------------------------------------------------------------
    async def _append(self, entry: AuditEntry) -> None:
        await self._run(_transaction(lambda db: _put_entry(db, entry)))

    async def _audit_head(self) -> tuple[int, str] | None:
        return await self._run(_head)

    async def _audit_entries(self, after: int, limit: int) -> list[AuditEntry]:
        def work(db: sqlite3.Connection) -> list[AuditEntry]:
            rows = db.execute(_ENTRIES, (after, limit)).fetchall()
            return [AuditEntry(int(r[0]), r[1], r[2], r[3]) for r in rows]

        return await self._run(work)

    # -- remembered approvals -------------------------------------------------------------------
    async def _put_grant(self, grant: Grant) -> None:
        row = (
            grant.id,
            grant.scope,
            grant.thread_id,
            grant.principal_id,
            grant.expires.timestamp(),
            json.dumps(grant.to_dict()),
        )
        now = self._clock()

        def work(db: sqlite3.Connection) -> None:
            db.execute(_SWEEP_GRANTS, (now,))  # expired ones go as new ones come
            db.execute(_PUT_GRANT, row)

        await self._run(_transaction(work))

    async def _grants(self, thread_id: str | None, principal_id: str | None) -> list[Grant]:
        def work(db: sqlite3.Connection) -> list[Grant]:
            if thread_id is None and principal_id is None:
                rows = db.execute(_ALL_GRANTS).fetchall()
            else:
                rows = db.execute(_GRANTS, (thread_id, principal_id)).fetchall()
            return [Grant.from_dict(json.loads(r[0])) for r in rows]

        return await self._run(work)

    async def revoke_grant(self, grant_id: str) -> bool:
        now = self._clock()

        def work(db: sqlite3.Connection) -> bool:
            live = db.execute(_REVOKE_LIVE, (grant_id, now)).rowcount == 1
            if not live:
                db.execute(_REVOKE, (grant_id,))  # an expired one goes too, as not live
            return live

        return await self._run(_transaction(work))

    def _unsynced(
        self, work: Callable[[sqlite3.Connection], _T]
    ) -> Callable[[sqlite3.Connection], _T]:
        """``work`` committed without waiting for the disk (``synchronous=NORMAL``) whatever
        the store's setting: for the claim and the result, which need not (as in
        ``PostgresApprovalStore``, docs/stores.md); every other write is as the store says."""
        if self.synchronous == "NORMAL":
            return work

        def unsynced(db: sqlite3.Connection) -> _T:
            db.execute("PRAGMA synchronous=NORMAL")
            try:
                return work(db)
            finally:
                db.execute("PRAGMA synchronous=FULL")

        return unsynced

    async def record(self, key: str) -> ClaimRecord | None:
        def work(db: sqlite3.Connection) -> ClaimRecord | None:
            row: Any = db.execute(_GET, (key,)).fetchone()
            if row is None:
                return None
            return ClaimRecord(row[0], bool(row[1]), row[2], result_from_text(row[3]))

        return await self._run(work)

    async def aclose(self) -> None:
        def close() -> None:
            connection = getattr(self._local, "connection", None)
            if connection is not None:
                connection.close()
                self._local.connection = None

        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._executor, close)


def _transaction(
    work: Callable[[sqlite3.Connection], _T], keep: Callable[[_T], bool] = lambda _: True
) -> Callable[[sqlite3.Connection], _T]:
    """``work`` in one ``BEGIN IMMEDIATE`` transaction (the write lock taken before anything
    is read), committed if ``keep`` says so of what it gave, else rolled back, and rolled back
    whatever it raised (``HeadMoved``, an I/O error): all of its writes or none."""

    def transaction(db: sqlite3.Connection) -> _T:
        db.execute("BEGIN IMMEDIATE")
        try:
            done = work(db)
            if keep(done):
                db.execute("COMMIT")
            else:
                _roll_back(db)
        except BaseException:
            _roll_back(db)  # a COMMIT that failed left the transaction open too
            raise
        return done

    return transaction


def _roll_back(db: sqlite3.Connection) -> None:
    """Roll back the open transaction, if SQLite has not already (an error that broke the
    connection is the caller's to report, not this one)."""
    if db.in_transaction:
        with contextlib.suppress(sqlite3.Error):  # _run closes a connection that broke
            db.execute("ROLLBACK")


def _head(db: sqlite3.Connection) -> tuple[int, str] | None:
    row = db.execute(_HEAD).fetchone()
    return None if row is None else (int(row[0]), str(row[1]))


def _put_entry(db: sqlite3.Connection, entry: AuditEntry) -> None:
    """Append ``entry`` and make it the head, inside the caller's transaction, if it follows
    the head (else ``HeadMoved``, which rolls the transaction back). An entry already kept at
    that seq with the head behind it is a trail someone wrote to by hand: ``AuditChainError``,
    never overwritten."""
    head = _head(db)
    if (entry.seq - 1, entry.prev_hash) != (head or (0, GENESIS_HASH)):
        raise HeadMoved(head)
    if db.execute(_HOLDS_SEQ, (entry.seq,)).fetchone() is not None:
        raise AuditChainError(
            f"audit record {entry.seq} is already kept though the chain's head is record "
            f"{entry.seq - 1}: it was inserted out of turn; nothing was written",
            seq=entry.seq,
        )
    db.execute(_APPEND, (entry.seq, entry.body, entry.prev_hash, entry.hash))
    db.execute(_SET_HEAD, (entry.seq, entry.hash))


def _use_wal(connection: sqlite3.Connection, deadline: float) -> None:
    """Switch the file to WAL. SQLite answers "database is locked" at once, without waiting
    for the busy timeout, while another connection is opening the same file: try again until
    ``deadline`` (monotonic seconds)."""
    while True:
        try:
            connection.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            # Only "locked" is worth waiting for: a file or directory that cannot be written
            # (WAL needs its -wal and -shm files beside it) is refused at once.
            if not _busy(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(0.005)


def _busy(exc: sqlite3.Error) -> bool:
    """Whether ``exc`` is SQLite's "database is locked" / "busy" (another writer holds it)."""
    code = getattr(exc, "sqlite_errorcode", None)  # Python 3.11+
    if code is not None:
        return code & 0xFF in (5, 6)  # SQLITE_BUSY, SQLITE_LOCKED and their extended codes
    return "locked" in str(exc) or "busy" in str(exc)


#: SQLite's primary result codes by what they mean for a caller.
_CANNOT_HOLD = frozenset({18})  # SQLITE_TOOBIG
_REFUSES = frozenset({3, 8, 14, 23})  # SQLITE_PERM, SQLITE_READONLY, SQLITE_CANTOPEN, SQLITE_AUTH
_BROKEN = frozenset({1, 11, 19, 26})  # SQLITE_ERROR (schema), CORRUPT, CONSTRAINT, NOTADB


def _error(exc: sqlite3.Error, path: str) -> type[ApprovalStoreError]:
    """What ``exc`` means: a value the file cannot hold; a file this process may not use
    (permissions, a corrupt or foreign file: an operator must fix it); or an outage (busy, a
    full disk, an I/O error, a file system the kernel made read-only): the same call may
    succeed later. A read-only file on a writable file system is a permission, not an outage."""
    code = getattr(exc, "sqlite_errorcode", None)  # Python 3.11+
    if code is None:
        return ApprovalStoreUnavailableError
    primary = code & 0xFF
    if primary in _CANNOT_HOLD:
        return ApprovalStoreValueError
    if primary in _REFUSES and not _read_only_file_system(path):
        return ApprovalStoreMisconfiguredError
    if primary in _BROKEN:
        return ApprovalStoreMisconfiguredError
    return ApprovalStoreUnavailableError


def _read_only_file_system(path: str) -> bool:
    """Whether the file system holding ``path`` is read-only (as the kernel makes one whose
    disk failed): the disk's fault, not the file's permissions. The mount's flags can lag
    behind, so a write-open of the file that fails with ``EROFS`` says it too."""
    folder = os.path.dirname(os.path.abspath(path))
    try:
        if os.statvfs(folder).f_flag & os.ST_RDONLY:
            return True
        os.close(os.open(path, os.O_WRONLY))
    except OSError as exc:
        return exc.errno == errno.EROFS
    return False


def _failure(exc: sqlite3.Error, path: str, what: str, done: str = "") -> ApprovalStoreError:
    """The store's error for ``exc``: ``what``, the file, ``done``, SQLite's words and what
    to check, of the class :func:`_error` gives."""
    where = f"{what} sqlite:///{path}" + (f" {done}" if done else "")
    return _error(exc, path)(f"{where}: {exc}{_hint(exc)}")


def _hint(exc: sqlite3.Error) -> str:
    """What to check when SQLite cannot write the file (read-only or cannot open it)."""
    text = str(exc)
    if "readonly" in text or "unable to open" in text:
        return (
            " (the file and its directory must be writable by this process: SQLite writes a "
            "-wal and a -shm file beside it)"
        )
    return ""
