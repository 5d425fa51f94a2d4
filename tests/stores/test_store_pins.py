"""Pins of approval-store details a user meets: a claim made without an owner can be started
and released by the same owner-less caller, the address a lent Redis client is named by, who
closes the Redis client, the lifetime sent to Redis, results read through a client that
decodes replies, the exact boundaries of expiry, leases and sweeps, and how a SQLite store
holds its file (one connection, on one worker thread, closed with the store) and names its
errors. Against memory, a real SQLite file and a real ``redis-server``."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import uuid
from collections.abc import AsyncIterator, Awaitable
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as redis_asyncio

from agui_chat import ApprovalStoreUnavailableError
from agui_chat.stores import (
    ApprovalStore,
    InMemoryApprovalStore,
    PostgresApprovalStore,
    RedisApprovalStore,
    SQLiteApprovalStore,
)
from fake_clock import FakeClock
from postgres_server import PostgresServer
from redis_server import RedisServer

NOW = 1_900_000_000.0


@pytest.fixture(params=["memory", "sqlite", "redis", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[ApprovalStore]:
    made: ApprovalStore
    if request.param == "memory":
        made = InMemoryApprovalStore(clock=FakeClock())
    elif request.param == "sqlite":
        made = SQLiteApprovalStore(tmp_path / "approvals.db", clock=FakeClock())
    elif request.param == "postgres":
        postgres: PostgresServer = request.getfixturevalue("postgres_server")
        table = f"pins_{uuid.uuid4().hex[:12]}"
        made = PostgresApprovalStore(postgres.url, table=table, clock=FakeClock())
    else:
        redis: RedisServer = request.getfixturevalue("redis_server")
        made = RedisApprovalStore(redis.url, clock=FakeClock())
    yield made
    await made.aclose()


# -- every store --------------------------------------------------------------------------


async def test_a_caller_without_owners_can_release_and_start_its_own_claims(
    store: ApprovalStore,
) -> None:
    """Owners are optional: an owner-less claim is released, and started, by an owner-less call."""
    assert await store.claim("k", expires_at=None)
    await store.release("k")
    assert await store.claim("k", expires_at=None)  # released: the answer may come again
    assert await store.mark_started("k")
    await store.release("k")  # started: never released
    assert await store.claim("k", expires_at=None) is False


# -- Redis ----------------------------------------------------------------------------------


async def test_a_lent_client_is_named_by_the_address_it_connects_to() -> None:
    """A lent client's URL names its host, port and db, its socket, or a cluster's first node;
    '?' stands for what a client does not say."""
    unix = redis_asyncio.Redis(unix_socket_path="/tmp/agui-no-such.sock", db=2)
    assert RedisApprovalStore(unix).url == "unix:///tmp/agui-no-such.sock?db=2"
    cluster = redis_asyncio.RedisCluster(host="127.0.0.1", port=1)
    assert RedisApprovalStore(cluster).url == "redis://127.0.0.1:1"
    bare = redis_asyncio.Redis(host="127.0.0.1", port=1)
    bare.connection_pool.connection_kwargs.clear()  # a client that names no address
    assert RedisApprovalStore(bare).url == "redis://?:?/0"
    await unix.aclose()
    await cluster.aclose()
    await bare.aclose()


async def test_an_unreachable_lent_cluster_client_is_unavailable_not_an_uncaught_error() -> None:
    """redis-py's cluster errors are not RedisErrors: they still refuse as store unavailable."""
    cluster = redis_asyncio.RedisCluster(host="127.0.0.1", port=1)
    store = RedisApprovalStore(cluster)
    with pytest.raises(ApprovalStoreUnavailableError) as failed:
        await store.claim("k", expires_at=None)
    # redis-py names the failure RedisClusterException (5.x) or RedisClusterUnreachableError
    message = str(failed.value)
    assert message.startswith("the approval store redis://127.0.0.1:1 is unavailable: RedisCluster")
    assert "Error 111 connecting to 127.0.0.1:1" in message or "RedisClusterException" in message
    await cluster.aclose()


async def test_an_unreachable_lent_client_is_unavailable_naming_its_address_and_the_error() -> None:
    """The error names the lent client's address (db included) and the kind of failure."""
    client = redis_asyncio.Redis(host="127.0.0.1", port=1, db=3, socket_connect_timeout=0.5)
    store = RedisApprovalStore(client)
    with pytest.raises(ApprovalStoreUnavailableError) as failed:
        await store.claim("k", expires_at=None)
    assert str(failed.value).startswith(
        "the approval store redis://127.0.0.1:1/3 is unavailable: ConnectionError: "
    )
    await client.aclose()


async def _connected_names(raw: Any) -> list[str]:
    return [c.get("name", "") for c in await raw.client_list()]


async def test_a_store_made_from_a_url_closes_its_connection_and_a_lent_one_stays_open(
    redis_server: RedisServer,
) -> None:
    """aclose closes the client the store made from a URL; a lent client's connection stays."""
    raw = redis_asyncio.Redis.from_url(redis_server.url)
    try:
        owned = RedisApprovalStore(f"{redis_server.url}?client_name=agui-owned")
        assert await owned.claim("k", expires_at=None)
        assert "agui-owned" in await _connected_names(raw)
        await owned.aclose()
        deadline = asyncio.get_running_loop().time() + 10
        while "agui-owned" in await _connected_names(raw):
            assert asyncio.get_running_loop().time() < deadline, "the store's connection stayed"
            await asyncio.sleep(0.01)

        lent = redis_asyncio.Redis.from_url(redis_server.url)
        before = await lent.client_id()
        store = RedisApprovalStore(lent)
        assert await store.claim("lent", expires_at=None)
        await store.aclose()
        assert await lent.client_id() == before  # the same connection: never closed
        await lent.aclose()
    finally:
        await raw.aclose()


async def test_a_claim_sends_redis_its_lifetime_rounded_up_to_at_least_one_millisecond(
    redis_server: RedisServer,
) -> None:
    """The PX sent is the time left, rounded up, and never less than 1 ms (the claim script
    passes it on as it is)."""
    raw = redis_asyncio.Redis.from_url(redis_server.url)
    store = RedisApprovalStore(redis_server.url, prefix="px:", clock=lambda: NOW)
    await raw.config_set("slowlog-log-slower-than", 0)  # log every command
    try:
        await raw.slowlog_reset()
        assert await store.claim("soon", expires_at=NOW + 0.0004, owner="a")
        assert await store.claim("past", expires_at=NOW - 5, owner="a")
        sent = [e["command"] for e in await raw.slowlog_get(128)]
    finally:
        await raw.config_set("slowlog-log-slower-than", 10_000)
        await raw.slowlog_reset()
        await raw.aclose()
        await store.aclose()
    assert b"SET px:soon p::a PX 1" in sent  # inside the claim script
    assert b"SET px:past p::a PX 1" in sent


async def test_a_redis_claim_taking_over_a_lapsed_lease_keeps_the_new_claims_lifetime(
    redis_server: RedisServer,
) -> None:
    """A take-over sets the new claim's expiry: none for expires_at=None, else the time left."""
    clock = FakeClock()
    store = RedisApprovalStore(redis_server.url, prefix="to:", clock=clock)
    raw = redis_asyncio.Redis.from_url(redis_server.url)
    try:
        for key in ("forever", "timed"):
            assert await store.claim(key, expires_at=None, owner="a", lease_until=NOW + 5)
        clock.now += 6  # both leases ran out
        assert await store.claim("forever", expires_at=None, owner="b")
        assert await raw.get("to:forever") == b"p::b"
        assert await raw.pttl("to:forever") == -1
        assert await store.claim("timed", expires_at=clock.now + 60, owner="b")
        assert 55_000 < await raw.pttl("to:timed") <= 60_000
    finally:
        await raw.aclose()
        await store.aclose()


async def test_a_result_is_read_through_a_lent_client_that_decodes_replies(
    redis_server: RedisServer,
) -> None:
    """A client made with decode_responses=True (replies are str) still reads results back."""
    client = redis_asyncio.Redis.from_url(redis_server.url, decode_responses=True)
    store = RedisApprovalStore(client, clock=lambda: NOW)
    try:
        assert await store.claim("k", expires_at=None, owner="a")
        assert await store.get_result("k") is None
        assert await store.mark_started("k", owner="a")
        await store.record_result("k", "deleted ä.txt")
        assert await store.get_result("k") == "deleted ä.txt"
    finally:
        await store.aclose()
        await client.aclose()


# -- memory ---------------------------------------------------------------------------------


async def test_a_memory_record_holds_until_just_past_its_expiry_and_its_lease() -> None:
    """A record still holds at the very instant of its expiry, and of its lease's end."""
    clock = FakeClock()
    store = InMemoryApprovalStore(clock=clock)
    assert await store.claim("expiring", expires_at=NOW + 10, owner="a")
    assert await store.claim("leased", expires_at=None, owner="a", lease_until=NOW + 10)
    clock.now = NOW + 10
    assert await store.claim("expiring", expires_at=None, owner="b") is False
    assert await store.claim("leased", expires_at=None, owner="b") is False
    clock.now = NOW + 10.5
    assert await store.claim("expiring", expires_at=None, owner="b")
    assert await store.claim("leased", expires_at=None, owner="b")


async def test_a_memory_store_sweeps_once_a_minute_only_records_past_their_expiry() -> None:
    """Sixty seconds after the last sweep a claim sweeps again; a record expiring now stays."""
    clock = FakeClock()
    store = InMemoryApprovalStore(clock=clock)
    assert await store.claim("old", expires_at=NOW + 1, owner="a")  # sweeps (nothing) at NOW
    assert await store.claim("edge", expires_at=NOW + 60, owner="a")
    clock.now = NOW + InMemoryApprovalStore._SWEEP_EVERY
    assert await store.claim("new", expires_at=None, owner="a")
    assert len(store) == 2  # "old" swept; "edge" expires only now; "new"
    assert await store.claim("edge", expires_at=None, owner="b") is False


# -- SQLite ---------------------------------------------------------------------------------


def test_a_sqlite_store_without_a_file_says_what_to_use_instead() -> None:
    """The whole message: a file path is needed, and InMemoryApprovalStore for one process."""
    with pytest.raises(ValueError) as refused:
        SQLiteApprovalStore(":memory:")
    assert str(refused.value) == (
        "SQLiteApprovalStore needs a file path that every worker can open, not ':memory:'; "
        "use InMemoryApprovalStore() for a single process"
    )


async def test_a_failing_sqlite_operation_is_unavailable_naming_the_file_and_the_error(
    tmp_path: Path,
) -> None:
    """A write the file refuses (another process holds its lock) names the store and why."""
    path = tmp_path / "a.db"
    store = SQLiteApprovalStore(path, busy_timeout=0.05)
    assert await store.claim("first", expires_at=None)
    locker = sqlite3.connect(path, isolation_level=None)
    locker.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(ApprovalStoreUnavailableError) as failed:
            await store.claim("second", expires_at=None)
    finally:
        locker.execute("ROLLBACK")
        locker.close()
    assert str(failed.value) == f"the approval store sqlite:///{path} failed: database is locked"
    await store.aclose()


async def test_a_sqlite_store_sweeps_again_exactly_sixty_seconds_after_its_last_sweep(
    tmp_path: Path,
) -> None:
    """At the sweep interval to the second, a claim deletes the rows past their expiry."""
    clock = FakeClock()
    store = SQLiteApprovalStore(tmp_path / "a.db", clock=clock)
    await store.claim("old", expires_at=NOW + 1, owner="a")  # sweeps (nothing) at NOW
    clock.now = NOW + SQLiteApprovalStore._SWEEP_EVERY
    await store.claim("new", expires_at=None, owner="a")
    await store.aclose()
    with sqlite3.connect(tmp_path / "a.db") as db:
        rows = {r[0] for r in db.execute("SELECT key FROM agui_chat_approvals")}
    assert rows == {"new"}


async def test_a_sqlite_store_opens_its_file_once_on_one_thread_off_the_event_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Many concurrent calls share one connection, made on one worker thread, not the loop's."""
    opened: list[int] = []
    connect = sqlite3.connect

    def counting_connect(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        opened.append(threading.get_ident())
        connection: sqlite3.Connection = connect(*args, **kwargs)
        return connection

    monkeypatch.setattr(sqlite3, "connect", counting_connect)
    store = SQLiteApprovalStore(tmp_path / "a.db", clock=lambda: NOW)
    calls: list[Awaitable[object]] = [
        store.claim(f"k{i}", expires_at=None, owner="a") for i in range(20)
    ]
    calls += [store.get_result(f"k{i}") for i in range(20)]
    await asyncio.gather(*calls)
    assert await store.mark_started("k0", owner="a")
    await store.release("k1", owner="a")
    await store.aclose()
    assert len(opened) == 1
    assert opened[0] != threading.get_ident()


async def test_closing_a_sqlite_store_closes_its_file_even_after_concurrent_calls(
    tmp_path: Path,
) -> None:
    """aclose closes the store's connection: SQLite then folds the WAL back and removes it."""
    path = tmp_path / "a.db"
    store = SQLiteApprovalStore(path, clock=lambda: NOW)
    await asyncio.gather(*(store.claim(f"k{i}", expires_at=None) for i in range(20)))
    assert Path(f"{path}-wal").exists()  # open, in WAL mode
    await store.aclose()
    assert not Path(f"{path}-wal").exists()
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT count(*) FROM agui_chat_approvals").fetchone()[0] == 20
