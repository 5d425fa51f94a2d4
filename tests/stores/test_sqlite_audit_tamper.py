"""The SQLite store's audit trail and grants against someone who can write the file: every
entry altered, deleted, re-sealed or inserted by hand is named by ``verify_audit()``; a
trail cut short is found through the head kept in its own row; grants are listed only where
they are scoped, and a revoked one is gone for every worker at once. A fault while a call
starts (the file locked by another process, read-only, an I/O error between the "started"
mark and its audit entry) is the store's typed error and leaves neither the mark nor the
entry. Against real SQLite files, opened raw beside the store as an attacker would."""

from __future__ import annotations

import dataclasses
import sqlite3
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from governance_support import chain_error, draft, grant

from agui_chat import (
    ApprovalStoreMisconfiguredError,
    ApprovalStoreUnavailableError,
    AuditChainError,
)
from agui_chat.consent._audit import entry_after, seal
from agui_chat.stores import SQLiteApprovalStore
from agui_chat.stores._base import HeadMoved
from fake_clock import FakeClock
from file_faults import read_only


@contextmanager
def raw(path: Path) -> Iterator[sqlite3.Connection]:
    """The file opened beside the store, as another process with write access would."""
    db = sqlite3.connect(path, isolation_level=None)
    try:
        yield db
    finally:
        db.close()


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "approvals.db"


@pytest.fixture
async def store(path: Path) -> AsyncIterator[SQLiteApprovalStore]:
    store = SQLiteApprovalStore(path, clock=FakeClock())
    yield store
    await store.aclose()


async def five_entries(store: SQLiteApprovalStore) -> None:
    """1: c1 approved and started with its claim, 2: its outcome with its result, 3: c2
    approved on its own, 4: c3 rejected with its kept result, 5: c2's outcome."""
    assert await store.claim("k1", expires_at=None, owner="a")
    assert await store.start_audited("k1", owner="a", audit=draft("c1")) == 1
    await store.record_result("k1", "wrote notes.txt", outcome=(1, "ran"))
    assert await store.append_audit(draft("c2", arguments={"path": "b.txt"})) == 3
    assert await store.claim("k3", expires_at=None, owner="a")
    await store.record_result("k3", "rejected", audit=draft("c3", decision="rejected"))
    await store.record_outcome(3, "failed", "boom")
    assert await store.verify_audit() == 3


def body_of(path: Path, seq: int) -> str:
    with raw(path) as db:
        body: str = db.execute("SELECT body FROM agui_chat_audit WHERE seq = ?", (seq,)).fetchone()[
            0
        ]
    return body


async def broken_by(
    store: SQLiteApprovalStore, path: Path, sql: str, *args: object
) -> AuditChainError:
    """The five entries written, then ``sql`` run on the file beside the store: what
    ``verify_audit()`` raises."""
    await five_entries(store)
    with raw(path) as db:
        db.execute(sql, args)
    return await chain_error(store)


def alter_and_seal_again(path: Path, seq: int, was: str, becomes: str) -> None:
    """Entry ``seq``'s body with ``was`` made ``becomes``, and its own hash computed anew on
    it (the sealing is public)."""
    with raw(path) as db:
        prev, body = db.execute(
            "SELECT prev_hash, body FROM agui_chat_audit WHERE seq = ?", (seq,)
        ).fetchone()
        forged = body.replace(was, becomes)
        assert forged != body
        db.execute(
            "UPDATE agui_chat_audit SET body = ?, hash = ? WHERE seq = ?",
            (forged, seal(seq, prev, forged), seq),
        )


# -- (a) an entry's body altered ------------------------------------------------------------


@pytest.mark.parametrize(
    ("seq", "was", "becomes"),
    [
        (1, '"approver":{"id":"alice"', '"approver":{"id":"mallory"'),  # who approved it
        (3, '"arguments":{"path":"b.txt"}', '"arguments":{"path":"/etc/passwd"}'),
        (2, '"outcome":"ran"', '"outcome":"failed"'),
        (4, '"decision":"rejected"', '"decision":"approved"'),
    ],
)
async def test_an_entry_whose_body_was_altered_is_named(
    store: SQLiteApprovalStore, path: Path, seq: int, was: str, becomes: str
) -> None:
    await five_entries(store)
    assert was in body_of(path, seq)
    with raw(path) as db:
        db.execute(
            "UPDATE agui_chat_audit SET body = replace(body, ?, ?) WHERE seq = ?",
            (was, becomes, seq),
        )
    assert becomes in body_of(path, seq)
    assert (await chain_error(store)).seq == seq
    # Another worker, opening the file afresh, finds it too.
    other = SQLiteApprovalStore(path)
    broken = await chain_error(other)
    await other.aclose()
    assert broken.seq == seq


@pytest.mark.parametrize("column", ["hash", "prev_hash"])
async def test_an_entry_whose_hashes_were_altered_is_named(
    store: SQLiteApprovalStore, path: Path, column: str
) -> None:
    sql = f"UPDATE agui_chat_audit SET {column} = ? WHERE seq = 2"
    assert (await broken_by(store, path, sql, "f" * 64)).seq == 2


async def test_the_body_is_kept_as_it_was_sealed_byte_for_byte(
    store: SQLiteApprovalStore, path: Path
) -> None:
    odd = {"path": "a\x00b\u202e.txt", "é": [1.5, None, True]}
    await store.append_audit(draft("c1", arguments=odd))
    with raw(path) as db:
        seq, body, prev, digest = db.execute("SELECT * FROM agui_chat_audit").fetchone()
    assert body.isascii() and "\\u0000" in body
    assert seal(seq, prev, body) == digest
    [record] = [r async for r in store.audit()]
    assert record.arguments == odd


# -- (b), (c) entries deleted -----------------------------------------------------------------


@pytest.mark.parametrize("seq", [1, 3, 4])
async def test_an_entry_deleted_before_the_end_is_named(
    store: SQLiteApprovalStore, path: Path, seq: int
) -> None:
    broken = await broken_by(store, path, "DELETE FROM agui_chat_audit WHERE seq = ?", seq)
    assert broken.seq == seq


async def test_the_last_entry_deleted_is_found_through_the_head_kept_apart(
    store: SQLiteApprovalStore, path: Path
) -> None:
    await five_entries(store)
    with raw(path) as db:
        db.execute("DELETE FROM agui_chat_audit WHERE seq = 5")
        assert db.execute("SELECT seq FROM agui_chat_audit_head").fetchall() == [(5,)]
    assert (await chain_error(store)).seq == 5


async def test_the_last_entries_deleted_are_found(store: SQLiteApprovalStore, path: Path) -> None:
    assert (await broken_by(store, path, "DELETE FROM agui_chat_audit WHERE seq >= 3")).seq == 3


async def test_the_whole_trail_deleted_is_found(store: SQLiteApprovalStore, path: Path) -> None:
    assert (await broken_by(store, path, "DELETE FROM agui_chat_audit")).seq == 1


async def test_the_head_deleted_is_found(store: SQLiteApprovalStore, path: Path) -> None:
    await broken_by(store, path, "DELETE FROM agui_chat_audit_head")


# -- (d) an altered entry sealed again --------------------------------------------------------


async def test_an_altered_entry_sealed_again_is_found_at_the_next_one(
    store: SQLiteApprovalStore, path: Path
) -> None:
    await five_entries(store)
    alter_and_seal_again(path, 3, '"path":"b.txt"', '"path":"/etc/passwd"')
    assert (await chain_error(store)).seq == 4


async def test_the_last_entry_altered_and_sealed_again_is_found_through_the_head(
    store: SQLiteApprovalStore, path: Path
) -> None:
    await five_entries(store)
    alter_and_seal_again(path, 5, '"outcome":"failed"', '"outcome":"ran"')
    assert (await chain_error(store)).seq == 6  # the chain ends where its head does not


# -- entries inserted by hand -----------------------------------------------------------------


async def test_an_entry_inserted_past_the_head_is_found_and_never_written_over(
    store: SQLiteApprovalStore, path: Path
) -> None:
    await five_entries(store)
    head = await store._audit_head()
    assert head is not None and head[0] == 5
    forged = entry_after(head, draft("c9").body(now=0.0, keep_arguments=True))
    with raw(path) as db:
        db.execute(
            "INSERT INTO agui_chat_audit VALUES (?, ?, ?, ?)",
            (forged.seq, forged.body, forged.prev_hash, forged.hash),
        )
    with pytest.raises(AuditChainError):
        await store.verify_audit()
    other = SQLiteApprovalStore(path)  # a worker that appends next: refused, nothing written
    with pytest.raises(AuditChainError) as refused:
        await other.append_audit(draft("c6"))
    await other.aclose()
    assert refused.value.seq == 6
    assert body_of(path, 6) == forged.body
    assert await store._audit_head() == head


async def test_an_entry_that_does_not_follow_the_head_is_refused_by_every_primitive(
    store: SQLiteApprovalStore, path: Path
) -> None:
    """A writer that skips the head check (a stale head) writes nothing: not the entry, not
    the "started" mark, not the result."""
    await store.append_audit(draft("c1"))
    stale = entry_after((0, "0" * 64), draft("c2").body(now=0.0, keep_arguments=True))
    assert await store.claim("k", expires_at=None, owner="a")
    with pytest.raises(HeadMoved) as moved:
        await store._append(stale)
    assert moved.value.head == await store._audit_head()
    with pytest.raises(HeadMoved):
        await store._mark_started("k", "a", None, stale)
    held = await store.record("k")
    assert held is not None and not held.started
    with pytest.raises(HeadMoved):
        await store._record_result("k", "done", stale)
    assert await store.get_result("k") is None
    with raw(path) as db:
        assert db.execute("SELECT count(*) FROM agui_chat_audit").fetchone()[0] == 1
    assert await store.verify_audit() == 1


# -- (e) grants -------------------------------------------------------------------------------


async def test_a_grant_is_listed_only_where_it_is_scoped(store: SQLiteApprovalStore) -> None:
    # A thread grant that also names who made it, and a principal grant that also names the
    # thread it was made in: each is listed by its own scope only, even where an id of the
    # other scope is spelled the same.
    clock = FakeClock()
    await store.add_grant(dataclasses.replace(grant(clock, "g-thread"), principal_id="alice"))
    await store.add_grant(
        dataclasses.replace(grant(clock, "g-alice", principal="alice"), thread_id="t9")
    )
    await store.add_grant(grant(clock, "g-t1-as-principal", principal="t1"))
    assert [g.id for g in await store.grants(thread_id="t1")] == ["g-thread"]
    assert await store.grants(thread_id="t2") == []
    assert await store.grants(thread_id="t9") == []
    assert await store.grants(thread_id="alice") == []
    assert [g.id for g in await store.grants(principal_id="alice")] == ["g-alice"]
    assert await store.grants(principal_id="bob") == []
    assert [g.id for g in await store.grants(principal_id="t1")] == ["g-t1-as-principal"]
    assert [g.id for g in await store.grants(thread_id="t2", principal_id="bob")] == []
    assert sorted(g.id for g in await store.grants(thread_id="t1", principal_id="alice")) == [
        "g-alice",
        "g-thread",
    ]
    assert len(await store.grants()) == 3


async def test_a_grant_revoked_by_one_worker_is_gone_for_another_at_once(
    store: SQLiteApprovalStore, path: Path
) -> None:
    other = SQLiteApprovalStore(path, clock=FakeClock())
    await store.add_grant(grant(FakeClock(), "g1"))
    assert [g.id for g in await other.grants(thread_id="t1")] == ["g1"]  # seen, then revoked
    assert await store.revoke_grant("g1") is True
    assert await other.grants(thread_id="t1") == []
    assert await other.grants() == []
    assert await other.revoke_grant("g1") is False
    await other.aclose()
    with raw(path) as db:
        assert db.execute("SELECT count(*) FROM agui_chat_grants").fetchone()[0] == 0


async def test_a_grant_whose_scope_was_rewritten_by_hand_follows_its_row(
    store: SQLiteApprovalStore, path: Path
) -> None:
    """The listing filters on the indexed columns: a row moved to another thread by hand is
    listed there (what the file says), never in both."""
    await store.add_grant(grant(FakeClock(), "g1"))
    with raw(path) as db:
        db.execute("UPDATE agui_chat_grants SET thread_id = 't2' WHERE id = 'g1'")
    assert await store.grants(thread_id="t1") == []
    assert [g.id for g in await store.grants(thread_id="t2")] == ["g1"]


# -- (f) faults while a call starts -----------------------------------------------------------


class FailingOn:
    """The store's connection, but the statement beginning ``marker`` fails with an I/O
    error, as a failing disk answers between two statements of one transaction."""

    def __init__(self, db: sqlite3.Connection, marker: str) -> None:
        self.db = db
        self.marker = marker

    def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:
        if sql.startswith(self.marker):
            raise sqlite3.OperationalError("disk I/O error")
        return self.db.execute(sql, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.db, name)


@contextmanager
def locked_by_another_process(path: Path) -> Iterator[None]:
    locker = sqlite3.connect(path, isolation_level=None)
    locker.execute("BEGIN EXCLUSIVE")
    try:
        yield
    finally:
        locker.execute("ROLLBACK")
        locker.close()


@pytest.mark.parametrize("fault", ["locked", "read-only", "io-error-after-the-mark"])
async def test_a_fault_while_a_call_starts_writes_neither_the_mark_nor_the_record(
    path: Path, fault: str
) -> None:
    store = SQLiteApprovalStore(path, busy_timeout=0.05, clock=FakeClock())
    assert await store.claim("k", expires_at=None, owner="a")
    assert await store._audit_head() is None  # read before the fault: only the mark is left
    expected: type[Exception] = ApprovalStoreUnavailableError
    if fault == "locked":
        with locked_by_another_process(path), pytest.raises(expected) as failed:
            await store.start_audited("k", owner="a", audit=draft("c1"))
        assert "database is locked" in str(failed.value)
    elif fault == "read-only":
        expected = ApprovalStoreMisconfiguredError  # how this store says a read-only file
        await store.aclose()  # the WAL folded back: the file holds every write
        with read_only(path), pytest.raises(expected, match="readonly"):
            await store.start_audited("k", owner="a", audit=draft("c1"))
    else:
        await store._run(
            lambda db: setattr(
                store._local, "connection", FailingOn(db, "INSERT INTO agui_chat_audit ")
            )
        )
        with pytest.raises(expected, match="disk I/O error"):
            await store.start_audited("k", owner="a", audit=draft("c1"))
    # Recovered: the claim is not started, the trail is empty and whole, in the file too.
    held = await store.record("k")
    assert held is not None and held.owner == "a" and not held.started
    assert [r async for r in store.audit()] == []
    assert await store._audit_head() is None
    assert await store.verify_audit() == 0
    with raw(path) as db:
        assert db.execute("SELECT started FROM agui_chat_approvals").fetchall() == [(0,)]
        assert db.execute("SELECT count(*) FROM agui_chat_audit").fetchone()[0] == 0
        assert db.execute("SELECT count(*) FROM agui_chat_audit_head").fetchone()[0] == 0
    # And the same start goes through once the file does.
    assert await store.start_audited("k", owner="a", audit=draft("c1")) == 1
    assert await store.verify_audit() == 1
    await store.aclose()


async def test_a_fault_while_a_rejection_is_kept_writes_neither_the_result_nor_the_record(
    path: Path,
) -> None:
    store = SQLiteApprovalStore(path, clock=FakeClock())
    assert await store.claim("k", expires_at=None, owner="a")
    await store._audit_head()
    await store._run(
        lambda db: setattr(store._local, "connection", FailingOn(db, "UPDATE agui_chat_approvals"))
    )
    with pytest.raises(ApprovalStoreUnavailableError, match="disk I/O error"):
        await store.record_result("k", "rejected", audit=draft("c1", decision="rejected"))
    assert await store.get_result("k") is None
    assert await store.verify_audit() == 0
    await store.record_result("k", "rejected", audit=draft("c1", decision="rejected"))
    assert [r.decision async for r in store.audit()] == ["rejected"]
    await store.aclose()


# -- a file of the version before the trail ---------------------------------------------------


async def test_a_file_made_before_the_trail_gets_its_tables_and_keeps_its_claims(
    path: Path,
) -> None:
    with raw(path) as db:
        db.execute(
            "CREATE TABLE agui_chat_approvals (key TEXT PRIMARY KEY, owner TEXT NOT NULL, "
            "lease_until REAL, expires_at REAL, started INTEGER NOT NULL DEFAULT 0, result TEXT)"
        )
        db.execute("CREATE TABLE agui_chat_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)")
        db.execute("INSERT INTO agui_chat_meta VALUES ('epoch', 'old.1')")
        db.execute("INSERT INTO agui_chat_approvals (key, owner) VALUES ('k', 'a')")
    store = SQLiteApprovalStore(path, clock=FakeClock())
    assert await store.epoch() == "old.1"
    assert not await store.claim("k", expires_at=None, owner="b")
    assert await store.start_audited("k", owner="a", audit=draft("c1")) == 1
    assert await store.verify_audit() == 1
    await store.add_grant(grant(FakeClock(), "g1"))
    assert [g.id for g in await store.grants(thread_id="t1")] == ["g1"]
    await store.aclose()
