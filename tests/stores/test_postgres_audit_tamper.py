"""``PostgresApprovalStore``'s governance records against someone with write access to the
database: an entry altered (even re-sealed with a hash of its own), deleted from the middle or
the end, or the head row deleted, is named by ``verify_audit()`` (and a trail whose head was
deleted takes no more entries); a grant is listed only where it applies and a revoked one is
gone for every worker at once; the database stopped while a decision is being started with
its record leaves neither the mark nor the record; a role granted only reads and writes on
the five tables an operator made works. Against a real PostgreSQL on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

import psycopg
import pytest
from governance_support import chain_error, draft, grant

from agui_chat import ApprovalStoreUnavailableError, AuditChainError
from agui_chat.consent._audit import seal
from agui_chat.stores import PostgresApprovalStore
from fake_clock import FakeClock
from postgres_server import PostgresServer


@pytest.fixture
def table() -> str:
    return f"tamper_{uuid.uuid4().hex[:12]}"


@pytest.fixture
async def make_store(
    postgres_server: PostgresServer, table: str, clock: FakeClock
) -> AsyncIterator[Callable[..., PostgresApprovalStore]]:
    """Stores (workers) over the same tables."""
    made: list[PostgresApprovalStore] = []

    def make(**options: Any) -> PostgresApprovalStore:
        store = PostgresApprovalStore(postgres_server.url, table=table, clock=clock, **options)
        made.append(store)
        return store

    yield make
    for store in made:
        await store.aclose()


async def raw(server: PostgresServer, query: str, *args: object) -> list[tuple[Any, ...]]:
    """What an attacker with write access to the database runs."""
    async with await psycopg.AsyncConnection.connect(server.url, autocommit=True) as db:
        cursor = await db.execute(query, args or None)
        return await cursor.fetchall() if cursor.description else []


async def trail_of(store: PostgresApprovalStore, decisions: int) -> None:
    for i in range(1, decisions + 1):
        assert await store.append_audit(draft(f"c{i}", arguments={"path": f"c{i}.txt"})) == i
    assert await store.verify_audit() == decisions


# -- the audit trail ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "forged"),
    [("approver", {"id": "mallory", "name": None, "roles": []}), ("arguments", {"path": "/etc"})],
)
async def test_an_entry_altered_in_place_is_named(
    postgres_server: PostgresServer,
    make_store: Callable[..., PostgresApprovalStore],
    table: str,
    field: str,
    forged: object,
) -> None:
    store = make_store()
    await trail_of(store, 4)
    [(body,)] = await raw(postgres_server, f"SELECT body FROM {table}_log WHERE seq = 3")
    altered = json.loads(body)
    assert altered[field] != forged
    altered[field] = forged
    await raw(
        postgres_server,
        f"UPDATE {table}_log SET body = %s WHERE seq = 3",
        json.dumps(altered, sort_keys=True, separators=(",", ":")),
    )
    assert (await chain_error(make_store())).seq == 3  # another worker checks it


async def test_an_entry_deleted_from_the_middle_is_named(
    postgres_server: PostgresServer, make_store: Callable[..., PostgresApprovalStore], table: str
) -> None:
    store = make_store()
    await trail_of(store, 5)
    await raw(postgres_server, f"DELETE FROM {table}_log WHERE seq = 2")
    broken = await chain_error(store)
    assert broken.seq == 2 and "missing" in str(broken)


async def test_the_last_entry_deleted_with_the_head_left_as_it_is_is_found(
    postgres_server: PostgresServer, make_store: Callable[..., PostgresApprovalStore], table: str
) -> None:
    store = make_store()
    await trail_of(store, 3)
    await raw(postgres_server, f"DELETE FROM {table}_log WHERE seq = 3")
    assert (await chain_error(store)).seq == 3


async def test_an_altered_entry_resealed_with_a_hash_of_its_own_is_named_by_the_next(
    postgres_server: PostgresServer, make_store: Callable[..., PostgresApprovalStore], table: str
) -> None:
    """The attacker recomputes the altered entry's own hash (the sealing is public), but the
    next entry still names the old one."""
    store = make_store()
    await trail_of(store, 4)
    [(body, prev)] = await raw(
        postgres_server, f"SELECT body, prev_hash FROM {table}_log WHERE seq = 2"
    )
    forged = body.replace('"alice"', '"mallory"')
    assert forged != body
    await raw(
        postgres_server,
        f"UPDATE {table}_log SET body = %s, hash = %s WHERE seq = 2",
        forged,
        seal(2, prev, forged),
    )
    assert (await chain_error(store)).seq == 3


async def test_the_whole_chain_resealed_without_the_head_is_found_at_its_end(
    postgres_server: PostgresServer, make_store: Callable[..., PostgresApprovalStore], table: str
) -> None:
    """Every entry from the altered one on resealed: the head, kept apart, still says where
    the trail ended."""
    store = make_store()
    await trail_of(store, 3)
    rows = await raw(postgres_server, f"SELECT seq, body, prev_hash FROM {table}_log ORDER BY seq")
    prev = rows[0][2]
    for seq, body, _ in rows:
        forged = body.replace('"alice"', '"mallory"') if seq == 2 else body
        forged_hash = seal(seq, prev, forged)
        await raw(
            postgres_server,
            f"UPDATE {table}_log SET body = %s, prev_hash = %s, hash = %s WHERE seq = %s",
            forged,
            prev,
            forged_hash,
            seq,
        )
        prev = forged_hash
    assert (await chain_error(store)).seq == 4


async def test_a_head_deleted_under_its_entries_is_found_and_nothing_is_appended_after_it(
    postgres_server: PostgresServer, make_store: Callable[..., PostgresApprovalStore], table: str
) -> None:
    store = make_store()
    await trail_of(store, 2)
    await raw(postgres_server, f"DELETE FROM {table}_head")
    await chain_error(store)
    other = make_store()  # a worker that starts now: the head is not made again
    assert await other.claim("k", expires_at=None, owner="a")
    with pytest.raises(AuditChainError) as refused:
        await other.start_audited("k", owner="a", audit=draft("c3"))
    assert refused.value.seq == 1  # the first record past the head that is gone
    held = await other.record("k")
    assert held is not None and not held.started
    assert [(r[0],) for r in await raw(postgres_server, f"SELECT seq FROM {table}_log")] == [
        (1,),
        (2,),
    ]


async def test_an_entry_inserted_at_the_end_without_moving_the_head_is_found(
    postgres_server: PostgresServer, make_store: Callable[..., PostgresApprovalStore], table: str
) -> None:
    store = make_store()
    await trail_of(store, 2)
    [(prev,)] = await raw(postgres_server, f"SELECT hash FROM {table}_log WHERE seq = 2")
    body = json.dumps({"kind": "outcome", "of": 1, "outcome": "ran", "time": 0.0})
    await raw(
        postgres_server,
        f"INSERT INTO {table}_log VALUES (3, %s, %s, %s)",
        body,
        prev,
        seal(3, prev, body),
    )
    with pytest.raises(AuditChainError):
        await store.verify_audit()


# -- remembered approvals ---------------------------------------------------------------------


async def test_a_grant_is_listed_only_where_it_applies(
    make_store: Callable[..., PostgresApprovalStore], clock: FakeClock
) -> None:
    one, two = make_store(), make_store()
    await one.add_grant(grant(clock, "g-t1", thread="t1"))
    await one.add_grant(grant(clock, "g-alice", principal="alice"))
    assert [g.id for g in await two.grants(thread_id="t1")] == ["g-t1"]
    assert await two.grants(thread_id="t2") == []
    assert await two.grants(principal_id="bob") == []
    assert [g.id for g in await two.grants(principal_id="alice")] == ["g-alice"]
    # a thread id that is some principal's id, and the other way round: scopes do not cross
    assert await two.grants(principal_id="t1") == []
    assert await two.grants(thread_id="alice") == []
    assert [g.id for g in await two.grants(thread_id="t2", principal_id="alice")] == ["g-alice"]
    assert [g.id for g in await two.grants(thread_id="t1", principal_id="bob")] == ["g-t1"]


async def test_a_revoked_grant_is_gone_for_another_worker_right_after(
    postgres_server: PostgresServer,
    make_store: Callable[..., PostgresApprovalStore],
    clock: FakeClock,
    table: str,
) -> None:
    one, two = make_store(), make_store()
    await one.add_grant(grant(clock, "g1", thread="t1"))
    await one.add_grant(grant(clock, "g2", thread="t1"))
    assert [g.id for g in await two.grants(thread_id="t1")] == ["g1", "g2"]
    assert await one.revoke_grant("g1") is True
    assert [g.id for g in await two.grants(thread_id="t1")] == ["g2"]
    assert [g.id for g in await two.grants()] == ["g2"]
    assert await two.revoke_grant("g1") is False
    assert await raw(postgres_server, f"SELECT id FROM {table}_perm WHERE id = 'g1'") == []


# -- faults -------------------------------------------------------------------------------------


async def test_a_database_down_when_a_decision_starts_writes_neither_mark_nor_record(
    postgres_server: PostgresServer, make_store: Callable[..., PostgresApprovalStore]
) -> None:
    store = make_store(timeout=0.5)
    assert await store.claim("k", expires_at=None, owner="a")
    assert await store.verify_audit() == 0
    postgres_server.stop()
    with pytest.raises(ApprovalStoreUnavailableError):
        await store.start_audited("k", owner="a", audit=draft("c1"))
    postgres_server.start()
    held = await store.record("k")
    assert held is not None and not held.started
    assert [r async for r in store.audit()] == []
    assert await store.verify_audit() == 0
    assert await store.start_audited("k", owner="a", audit=draft("c1")) == 1  # and now it can


async def test_a_database_lost_in_the_middle_of_a_start_with_its_record_keeps_neither(
    postgres_server: PostgresServer, make_store: Callable[..., PostgresApprovalStore], table: str
) -> None:
    """The store's transaction has locked the head and marked the claim started, and waits
    to write the record (another session holds the trail's table locked): the database
    crashes then. Nothing of that transaction survives."""
    store = make_store(timeout=10.0)
    assert await store.claim("k", expires_at=None, owner="a")
    assert await store.verify_audit() == 0  # the tables exist before they are locked
    holder = await psycopg.AsyncConnection.connect(postgres_server.url)
    try:
        await holder.execute(f"LOCK TABLE {table}_log IN ACCESS EXCLUSIVE MODE")
        starting = asyncio.create_task(store.start_audited("k", owner="a", audit=draft("c1")))
        async with await psycopg.AsyncConnection.connect(
            postgres_server.url, autocommit=True
        ) as watcher:
            # the store's INSERT into the trail waits on the lock, its mark already made
            while not starting.done():
                waiting = await watcher.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                    "AND query LIKE %s",
                    (f'%INSERT INTO "{table}_log"%',),
                )
                row = await waiting.fetchone()
                if row is not None and row[0] == 1:
                    break
            assert not starting.done()
        # Every process of the server at once (a stop would end the lock's holder first,
        # and the store's transaction could then commit before its own end).
        await asyncio.to_thread(postgres_server.kill)
        with pytest.raises(ApprovalStoreUnavailableError):
            await starting
    finally:
        await holder.close()
    postgres_server.start()
    held = await store.record("k")
    assert held is not None and not held.started
    assert [r async for r in store.audit()] == []
    assert await store.verify_audit() == 0


# -- what an operator makes --------------------------------------------------------------------


async def test_a_role_granted_only_reads_and_writes_on_the_five_tables_keeps_the_records(
    postgres_server: PostgresServer, clock: FakeClock
) -> None:
    """The tables made beforehand (a store run once by their owner makes them all), the
    server's role granted the schema's use and the rows' reads and writes on the five tables,
    never the right to create: the audit trail and the grants work."""
    schema, name = f"s_{uuid.uuid4().hex[:8]}", f"t_{uuid.uuid4().hex[:8]}"
    role, password = f"r_{uuid.uuid4().hex[:8]}", uuid.uuid4().hex
    qualified = f"{schema}.{name}"
    async with await psycopg.AsyncConnection.connect(postgres_server.url, autocommit=True) as db:
        await db.execute(f"CREATE SCHEMA {schema}")
        made = PostgresApprovalStore(postgres_server.url, table=qualified)
        await made.epoch()
        await made.verify_audit()  # the governance tables too
        await made.aclose()
        found = await db.execute("SELECT tablename FROM pg_tables WHERE schemaname = %s", (schema,))
        tables = sorted(row[0] for row in await found.fetchall())
        assert tables == [name, f"{name}_head", f"{name}_log", f"{name}_meta", f"{name}_perm"]
        await db.execute(f"CREATE ROLE {role} LOGIN PASSWORD '{password}'")
        await db.execute(f"GRANT USAGE ON SCHEMA {schema} TO {role}")
        on = ", ".join(f"{schema}.{t}" for t in tables)
        await db.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON {on} TO {role}")
    url = f"postgresql://{role}:{password}@127.0.0.1:{postgres_server.port}/postgres"
    store = PostgresApprovalStore(url, table=qualified, clock=clock)
    try:
        assert await store.claim("k", expires_at=None, owner="a")
        seq = await store.start_audited("k", owner="a", audit=draft("c1"))
        assert seq == 1
        await store.record_result("k", "done", outcome=(seq, "ran"))
        [record] = [r async for r in store.audit()]
        assert record.outcome == "ran"
        assert await store.verify_audit() == 1
        await store.add_grant(grant(clock, "g1", thread="t1"))
        assert [g.id for g in await store.grants(thread_id="t1")] == ["g1"]
        assert await store.revoke_grant("g1") is True
    finally:
        await store.aclose()


async def test_a_database_of_the_last_version_gets_its_governance_tables_named_whole(
    postgres_server: PostgresServer,
) -> None:
    """A 0.3 database (the claims' two tables only) used by this version: the three tables
    of the governance records are made on first use, beside them, even for the longest name
    a table may have (their suffixes keep them within PostgreSQL's 63 characters)."""
    name = f"t{uuid.uuid4().hex}".ljust(58, "x")
    query = "SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename LIKE %s"
    old = PostgresApprovalStore(postgres_server.url, table=name)
    try:
        assert await old.claim("k", expires_at=None, owner="a")
        assert await old.mark_started("k", owner="a")  # no record asked: none made
    finally:
        await old.aclose()
    assert {row[0] for row in await raw(postgres_server, query, name + "%")} == {
        name,
        f"{name}_meta",
    }
    store = PostgresApprovalStore(postgres_server.url, table=name)
    try:
        await store.record_result("k", "done", audit=draft("c1"))
        assert await store.verify_audit() == 1
        assert await store.get_result("k") == "done"
    finally:
        await store.aclose()
    assert {row[0] for row in await raw(postgres_server, query, name + "%")} == {
        name,
        f"{name}_meta",
        f"{name}_log",
        f"{name}_head",
        f"{name}_perm",
    }
