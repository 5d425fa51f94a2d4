"""How the SQLite and Redis stores are configured and what they write: key prefixes, record
values and lifetimes, timeouts, URLs named without passwords, the client a caller lends, and
errors that name the store. Against a real SQLite file and a real ``redis-server``."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
import redis.asyncio as redis_asyncio

from agui_chat import (
    ApprovalStoreMisconfiguredError,
    ApprovalStoreUnavailableError,
    ConfigurationError,
)
from agui_chat.stores import ClaimRecord, RedisApprovalStore, SQLiteApprovalStore, store_from_url
from redis_server import RedisServer

NOW = 1_900_000_000.0


def clock() -> float:
    return NOW


# -- Redis --------------------------------------------------------------------------------


async def test_a_redis_claim_is_one_key_under_the_default_prefix_with_its_lifetime(
    redis_server: RedisServer,
) -> None:
    store = RedisApprovalStore(redis_server.url, clock=clock)
    raw = redis_asyncio.Redis.from_url(redis_server.url)
    try:
        assert await store.claim("k1", expires_at=NOW + 60, owner="w1")
        assert await raw.get("agui_chat:approval:k1") == b"p::w1"
        ttl = await raw.pttl("agui_chat:approval:k1")
        assert 55_000 < ttl <= 60_000
        assert await store.claim("k2", expires_at=None, owner="w1", lease_until=NOW + 5)
        assert await raw.get("agui_chat:approval:k2") == f"p:{NOW + 5!r}:w1".encode()
        assert await raw.pttl("agui_chat:approval:k2") == -1  # never expires
    finally:
        await raw.aclose()
        await store.aclose()


async def test_a_redis_record_moves_from_claimed_to_started_to_done_keeping_its_lifetime(
    redis_server: RedisServer,
) -> None:
    store = RedisApprovalStore(redis_server.url, prefix="t:", clock=clock)
    raw = redis_asyncio.Redis.from_url(redis_server.url)
    try:
        assert await store.claim("k", expires_at=NOW + 60, owner="w1")
        assert await store.get_result("k") is None  # claimed, no result yet
        assert not await store.mark_started("k", owner="w2")  # not the claim's owner
        assert await store.mark_started("k", owner="w1")
        assert await raw.get("t:k") == b"s::w1"  # started, under no lease
        await store.record_result("k", "deleted a.txt")
        assert await raw.get("t:k") == b"d:deleted a.txt"
        assert await store.get_result("k") == "deleted a.txt"
        assert 55_000 < await raw.pttl("t:k") <= 60_000
        await store.record_result("absent", "x")  # XX: never creates a record
        assert await raw.exists("t:absent") == 0
    finally:
        await raw.aclose()
        await store.aclose()


async def test_a_redis_release_deletes_only_the_owners_unstarted_claim(
    redis_server: RedisServer,
) -> None:
    store = RedisApprovalStore(redis_server.url, prefix="r:", clock=clock)
    raw = redis_asyncio.Redis.from_url(redis_server.url)
    try:
        await store.claim("k", expires_at=NOW + 60, owner="w1")
        await store.release("k", owner="w2")
        assert await raw.exists("r:k") == 1
        await store.release("k", owner="w1")
        assert await raw.exists("r:k") == 0
        await store.release("never-claimed")  # releasing an unknown key does nothing
        assert await raw.exists("r:never-claimed") == 0
    finally:
        await raw.aclose()
        await store.aclose()


async def test_a_redis_url_is_named_without_its_password_and_timeouts_reach_the_client() -> None:
    store = RedisApprovalStore("redis://user:s3cret@127.0.0.1:1/2", timeout=0.25)
    assert store.url == "redis://user:***@127.0.0.1:1/2"
    assert "s3cret" not in repr(store)
    kwargs = store._client.connection_pool.connection_kwargs
    assert (kwargs["socket_timeout"], kwargs["socket_connect_timeout"]) == (0.25, 0.25)
    default = RedisApprovalStore("redis://127.0.0.1:1/0")
    assert default._client.connection_pool.connection_kwargs["socket_timeout"] == 2.0
    await store.aclose()
    await default.aclose()


async def test_an_unreachable_redis_is_unavailable_naming_the_url_not_the_password() -> None:
    store = RedisApprovalStore("redis://:s3cret@127.0.0.1:1/0", timeout=0.5)
    with pytest.raises(ApprovalStoreUnavailableError) as failed:
        await store.claim("k", expires_at=None)
    message = str(failed.value)
    assert "redis://:***@127.0.0.1:1/0" in message
    assert "s3cret" not in message
    assert message.startswith("the approval store redis://:***@127.0.0.1:1/0 is unavailable: ")
    await store.aclose()


def test_a_redis_url_that_does_not_parse_names_it_without_the_password() -> None:
    with pytest.raises(ValueError, match=r"cannot read the Redis URL ftp://u:\*\*\*@h"):
        RedisApprovalStore("ftp://u:pw@h/0")


async def test_a_lent_redis_client_is_named_by_its_address_and_never_closed(
    redis_server: RedisServer,
) -> None:
    client = redis_asyncio.Redis(host="127.0.0.1", port=redis_server.port, db=0)
    store = RedisApprovalStore(client)
    assert store.url == f"redis://127.0.0.1:{redis_server.port}/0"
    assert await store.claim("lent", expires_at=None)
    await store.aclose()
    assert await client.ping()  # still the caller's, still open
    await client.aclose()


# -- SQLite -------------------------------------------------------------------------------


async def test_a_sqlite_store_uses_wal_and_normal_sync_by_default(tmp_path: Path) -> None:
    store = SQLiteApprovalStore(tmp_path / "a.db", clock=clock)
    await store.claim("k", expires_at=NOW + 60, owner="w1", lease_until=NOW + 5)
    mode = await store._run(lambda db: db.execute("PRAGMA journal_mode").fetchone()[0])
    sync = await store._run(lambda db: db.execute("PRAGMA synchronous").fetchone()[0])
    timeout = await store._run(lambda db: db.execute("PRAGMA busy_timeout").fetchone()[0])
    assert (mode, sync, timeout) == ("wal", 1, 10_000)  # 1 is NORMAL
    await store.aclose()
    with sqlite3.connect(tmp_path / "a.db") as db:
        row = db.execute(
            "SELECT key, owner, lease_until, expires_at, started, result FROM agui_chat_approvals"
        ).fetchone()
    assert row == ("k", "w1", NOW + 5, NOW + 60, 0, None)


async def _statements_of_a_resume(store: SQLiteApprovalStore) -> list[str]:
    """What the store told SQLite, in order, for one claim, start and result."""
    await store.claim("k", expires_at=None, owner="w1")  # opens the connection
    said: list[str] = []
    await store._run(lambda db: db.set_trace_callback(said.append))
    await store.claim("k2", expires_at=None, owner="w1")
    assert not await store.mark_started("k2", owner="w2")  # not its claim: refused
    assert await store.mark_started("k2", owner="w1")
    await store.record_result("k2", "done")
    return [" ".join(s.split()[:3]) for s in said]


async def test_a_full_sqlite_store_waits_for_the_disk_for_all_but_the_claim_and_the_result(
    tmp_path: Path,
) -> None:
    # The store is FULL (the started mark's commit syncs the WAL file, claim included, before
    # the tool starts; so do renewals and releases); the claim and the result alone do not
    # wait for the disk (docs/stores.md, "SQLite"), as in PostgresApprovalStore.
    store = SQLiteApprovalStore(tmp_path / "a.db", synchronous="FULL", busy_timeout=0.5)
    unsynced = ["PRAGMA synchronous=NORMAL", "PRAGMA synchronous=FULL"]
    assert await _statements_of_a_resume(store) == [
        unsynced[0],
        "INSERT INTO agui_chat_approvals",
        unsynced[1],
        "UPDATE agui_chat_approvals SET",
        "UPDATE agui_chat_approvals SET",
        unsynced[0],
        "UPDATE agui_chat_approvals SET",
        unsynced[1],
    ]
    sync = await store._run(lambda db: db.execute("PRAGMA synchronous").fetchone()[0])
    timeout = await store._run(lambda db: db.execute("PRAGMA busy_timeout").fetchone()[0])
    assert (sync, timeout) == (2, 500)  # FULL (2) for every other write
    assert await store.record("k2") == ClaimRecord("w1", True, None, "done")
    await store.aclose()
    normal = SQLiteApprovalStore(tmp_path / "b.db")
    assert not [s for s in await _statements_of_a_resume(normal) if s.startswith("PRAGMA")]
    await normal.aclose()
    with pytest.raises(ValueError, match="synchronous must be 'FULL' or 'NORMAL', got 'OFF'"):
        SQLiteApprovalStore(tmp_path / "b.db", synchronous="OFF")  # type: ignore[arg-type]


@pytest.mark.parametrize("path", ["", ":memory:"])
def test_a_sqlite_store_needs_a_file_every_worker_can_open(path: str) -> None:
    with pytest.raises(ValueError, match="needs a file path that every worker can open"):
        SQLiteApprovalStore(path)


async def test_a_sqlite_file_that_cannot_be_opened_is_misconfigured_naming_it(
    tmp_path: Path,
) -> None:
    where = tmp_path / "missing-dir" / "a.db"
    store = SQLiteApprovalStore(where)
    assert repr(store) == f"SQLiteApprovalStore({str(where)!r})"
    with pytest.raises(ApprovalStoreMisconfiguredError, match=f"sqlite:///{where}"):
        await store.claim("k", expires_at=None)
    await store.aclose()


async def test_a_sqlite_release_with_an_owner_deletes_only_that_owners_claim(
    tmp_path: Path,
) -> None:
    store = SQLiteApprovalStore(tmp_path / "a.db", clock=clock)
    await store.claim("k", expires_at=None, owner="w1")
    await store.release("k", owner="w2")
    assert not await store.claim("k", expires_at=None, owner="w3")
    await store.release("k", owner="w1")
    assert await store.claim("k", expires_at=None, owner="w3")
    await store.aclose()


async def test_a_closed_sqlite_store_reopens_its_file_on_next_use(tmp_path: Path) -> None:
    store = SQLiteApprovalStore(tmp_path / "a.db", clock=clock)
    await store.claim("k", expires_at=None)
    await store.aclose()
    await store.aclose()  # closing twice is harmless
    assert not await store.claim("k", expires_at=None)
    await store.aclose()


async def test_a_redis_record_written_before_leases_on_started_reads_as_held_for_good(
    redis_server: RedisServer,
) -> None:
    """``s:<owner>`` (a started record of an older version): started, no lease, so never
    lost and never claimable; a renewal moves it to ``s:<lease>:<owner>``."""
    from agui_chat.stores import ClaimRecord

    store = RedisApprovalStore(redis_server.url, prefix="old:", clock=clock)
    raw = redis_asyncio.Redis.from_url(redis_server.url)
    try:
        await raw.set("old:k", "s:w1")
        assert await store.record("k") == ClaimRecord("w1", True, None)
        assert await store.claim("k", expires_at=None, owner="w2") is False
        await raw.set("old:p", "p:12.5:w1")
        await store.renew(["p"], owner="w1", lease_until=99.0)
        assert await raw.get("old:p") == b"p:99.0:w1"
        await store.renew(["p"], owner="w1", lease_until=None)
        assert await raw.get("old:p") == b"p::w1"
    finally:
        await raw.aclose()
        await store.aclose()


@pytest.mark.parametrize(
    "url",
    [
        "memory://?audit_arguments=false",
        "sqlite:///{tmp}/a.db?audit_arguments=false&synchronous=FULL",
        "redis://127.0.0.1:1/0?audit_arguments=false&strict=true",
        "postgresql://agent@127.0.0.1:1/agents?audit_arguments=false",
    ],
)
def test_every_store_url_takes_audit_arguments_and_no_driver_sees_it(
    url: str, tmp_path: Path
) -> None:
    """``?audit_arguments=false`` keeps only digests in the audit trail, whatever the store;
    the option is ours, taken out before a driver reads the URL (which would refuse it)."""
    store = store_from_url(url.format(tmp=tmp_path))
    assert store.audit_arguments is False
    seen_by_the_driver = str(getattr(store, "url", getattr(store, "path", "")))
    assert "audit_arguments" not in seen_by_the_driver
    if isinstance(store, RedisApprovalStore):
        assert store.strict is True


@pytest.mark.parametrize("value", ["no", "", "true&audit_arguments=false"])
def test_a_wrong_audit_arguments_option_is_refused_by_name(value: str) -> None:
    with pytest.raises(ConfigurationError, match="audit_arguments"):
        store_from_url(f"memory://?audit_arguments={value}")
