"""Every approval store keeps the same contract (``agui_chat.stores.ApprovalStore``): an atomic
claim, leases that lapse only for claims never started, releases that never undo a finished
record nor a started one (unless its owner says the tool never began), results kept as long
as the claim, and records swept after their retention. Run against memory, a SQLite file, a
real Redis and a real PostgreSQL."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from agui_chat import ApprovalStoreResetError
from agui_chat.stores import (
    ApprovalStore,
    ClaimRecord,
    InMemoryApprovalStore,
    RedisApprovalStore,
    SQLiteApprovalStore,
)
from fake_clock import FakeClock
from redis_server import RedisServer


async def test_of_many_concurrent_claims_from_several_stores_exactly_one_wins(
    make_store: Callable[[], ApprovalStore],
) -> None:
    stores = [make_store() for _ in range(3)]
    claims = [s.claim("k", expires_at=None, owner=f"o{i}") for i, s in enumerate(stores * 10)]
    won = await asyncio.gather(*claims)
    assert won.count(True) == 1


async def test_a_result_is_kept_and_read_from_another_store(
    make_store: Callable[[], ApprovalStore], clock: FakeClock
) -> None:
    one, two = make_store(), make_store()
    assert await one.claim("k", expires_at=clock.now + 60, owner="a")
    assert await two.get_result("k") is None
    assert await one.mark_started("k", owner="a")
    await one.record_result("k", "deleted a.txt")
    assert await two.get_result("k") == "deleted a.txt"
    assert await two.claim("k", expires_at=clock.now + 60, owner="b") is False
    assert await two.get_result("unknown") is None


async def test_a_released_pending_claim_can_be_claimed_again(
    make_store: Callable[[], ApprovalStore],
) -> None:
    store = make_store()
    assert await store.claim("k", expires_at=None, owner="a")
    await store.release("k", owner="someone-else")  # not theirs to release
    assert await store.claim("k", expires_at=None, owner="b") is False
    await store.release("k", owner="a")
    assert await store.claim("k", expires_at=None, owner="b") is True


async def test_a_started_or_finished_record_is_never_released(
    make_store: Callable[[], ApprovalStore],
) -> None:
    store = make_store()
    await store.claim("started", expires_at=None, owner="a")
    assert await store.mark_started("started", owner="a")
    await store.release("started", owner="a")
    await store.release("started")
    assert await store.claim("started", expires_at=None, owner="b") is False

    await store.claim("done", expires_at=None, owner="a")
    await store.record_result("done", "rejected")
    await store.release("done", owner="a")
    assert await store.claim("done", expires_at=None, owner="b") is False
    assert await store.get_result("done") == "rejected"


async def test_its_owner_releases_a_started_record_whose_tool_never_began(
    make_store: Callable[[], ApprovalStore], clock: FakeClock
) -> None:
    """A request cancelled between the "started" mark and the tool's first line: the
    server knows the tool never ran, releases the record, and the answer can run later."""
    one, two = make_store(), make_store()
    assert await one.claim("k", expires_at=clock.now + 3600, owner="a", lease_until=clock.now + 30)
    assert await one.mark_started("k", owner="a", lease_until=clock.now + 30)
    await one.release("k", owner="a", started=True)
    assert await two.record("k") is None
    assert await two.claim("k", expires_at=clock.now + 3600, owner="b") is True
    # A pending claim of its owner goes too (the mark never committed).
    await one.claim("p", expires_at=None, owner="a")
    await one.release("p", owner="a", started=True)
    assert await two.record("p") is None


async def test_another_owner_never_releases_a_started_record(
    make_store: Callable[[], ApprovalStore],
) -> None:
    one, two = make_store(), make_store()
    await one.claim("k", expires_at=None, owner="a")
    assert await one.mark_started("k", owner="a")
    await two.release("k", owner="b", started=True)
    assert await two.record("k") == ClaimRecord("a", True, None)
    assert await two.claim("k", expires_at=None, owner="b") is False
    await one.claim("p", expires_at=None, owner="a")  # nor another's pending claim
    await two.release("p", owner="b", started=True)
    assert await two.record("p") == ClaimRecord("a", False, None)


async def test_a_record_with_a_result_is_never_released_even_as_started(
    make_store: Callable[[], ApprovalStore],
) -> None:
    store = make_store()
    await store.claim("k", expires_at=None, owner="a")
    assert await store.mark_started("k", owner="a")
    await store.record_result("k", "deleted a.txt")
    await store.release("k", owner="a", started=True)
    assert await store.get_result("k") == "deleted a.txt"
    assert await store.claim("k", expires_at=None, owner="b") is False
    await store.claim("unstarted", expires_at=None, owner="a")  # a result without the mark
    await store.record_result("unstarted", "rejected")
    await store.release("unstarted", owner="a", started=True)
    assert await store.get_result("unstarted") == "rejected"


async def test_releasing_a_started_record_needs_its_owner(
    make_store: Callable[[], ApprovalStore],
) -> None:
    store = make_store()
    await store.claim("k", expires_at=None, owner="a")
    assert await store.mark_started("k", owner="a")
    with pytest.raises(ValueError, match="owner"):
        await store.release("k", started=True)
    with pytest.raises(ValueError, match="owner"):
        await store.release("k", owner="", started=True)
    assert await store.record("k") == ClaimRecord("a", True, None)


async def test_without_started_a_started_record_is_kept_even_by_its_owner(
    make_store: Callable[[], ApprovalStore],
) -> None:
    store = make_store()
    await store.claim("k", expires_at=None, owner="a")
    assert await store.mark_started("k", owner="a")
    await store.release("k", owner="a", started=False)
    await store.release("k", owner="a")
    await store.release("k")
    assert await store.record("k") == ClaimRecord("a", True, None)
    assert await store.claim("k", expires_at=None, owner="b") is False


async def test_a_claim_never_started_lapses_with_its_lease_and_its_old_owner_cannot_start(
    make_store: Callable[[], ApprovalStore], clock: FakeClock
) -> None:
    one, two = make_store(), make_store()
    assert await one.claim("k", expires_at=clock.now + 3600, owner="a", lease_until=clock.now + 30)
    assert await two.claim("k", expires_at=clock.now + 3600, owner="b") is False
    clock.now += 31  # the process that claimed died before starting the tool
    assert await two.claim("k", expires_at=clock.now + 3600, owner="b", lease_until=clock.now + 30)
    assert await one.mark_started("k", owner="a") is False  # a late "a" must not run it
    assert await two.mark_started("k", owner="b") is True


async def test_a_started_claim_never_lapses(
    make_store: Callable[[], ApprovalStore], clock: FakeClock
) -> None:
    store = make_store()
    await store.claim("k", expires_at=clock.now + 3600, owner="a", lease_until=clock.now + 30)
    assert await store.mark_started("k", owner="a")
    clock.now += 600  # the process died while the tool ran
    assert await store.claim("k", expires_at=clock.now + 3600, owner="b") is False


async def test_records_go_after_their_retention(
    make_store: Callable[[], ApprovalStore], clock: FakeClock, request: pytest.FixtureRequest
) -> None:
    store = make_store()
    await store.claim("k", expires_at=clock.now + 2, owner="a")
    await store.record_result("k", "kept")
    assert await store.claim("k", expires_at=None, owner="b") is False
    if isinstance(store, RedisApprovalStore):
        await asyncio.sleep(2.1)  # Redis expires keys on its own clock
    clock.now += 3
    assert await store.claim("k", expires_at=None, owner="b") is True
    assert await store.get_result("k") is None


# -- issue 26: records, renewed leases, lost calls and epochs (every store) ------------------


async def test_a_record_says_whose_it_is_whether_it_started_its_lease_and_its_result(
    make_store: Callable[[], ApprovalStore], clock: FakeClock
) -> None:
    one, two = make_store(), make_store()
    assert await two.record("k") is None
    await one.claim("k", expires_at=clock.now + 3600, owner="a", lease_until=clock.now + 30)
    assert await two.record("k") == ClaimRecord("a", False, clock.now + 30)
    assert await one.mark_started("k", owner="a", lease_until=clock.now + 40)
    assert await two.record("k") == ClaimRecord("a", True, clock.now + 40)
    await one.record_result("k", "deleted a.txt")
    held = await two.record("k")
    assert held is not None and held.result == "deleted a.txt" and held.started


async def test_renewing_extends_only_the_owners_unfinished_records(
    make_store: Callable[[], ApprovalStore], clock: FakeClock
) -> None:
    one, two = make_store(), make_store()
    for key in ("pending", "started", "done", "others"):
        owner = "b" if key == "others" else "a"
        await one.claim(key, expires_at=None, owner=owner, lease_until=clock.now + 10)
    await one.mark_started("started", owner="a")
    await one.mark_started("done", owner="a")
    await one.record_result("done", "r")
    await two.renew(["pending", "started", "done", "others"], owner="a", lease_until=clock.now + 99)
    assert (await one.record("pending")) == ClaimRecord("a", False, clock.now + 99)
    assert (await one.record("started")) == ClaimRecord("a", True, clock.now + 99)
    assert (await one.record("others")) == ClaimRecord("b", False, clock.now + 10)
    clock.now += 50  # past the old leases: the renewed ones still hold
    assert await two.claim("pending", expires_at=None, owner="c") is False
    assert await two.claim("others", expires_at=None, owner="c") is True


async def test_a_started_record_whose_lease_ran_out_is_lost_never_claimable(
    make_store: Callable[[], ApprovalStore], clock: FakeClock
) -> None:
    store = make_store()
    await store.claim("k", expires_at=None, owner="a", lease_until=clock.now + 10)
    await store.mark_started("k", owner="a", lease_until=clock.now + 10)
    held = await store.record("k")
    assert held is not None and not held.lost(clock.now)
    clock.now += 11  # its worker died mid-tool
    held = await store.record("k")
    assert held is not None and held.lost(clock.now)
    assert await store.claim("k", expires_at=None, owner="b") is False


async def test_renewing_with_no_lease_holds_the_record_for_good(
    make_store: Callable[[], ApprovalStore], clock: FakeClock
) -> None:
    """The server settles an answer that was used without a result (a tool that asked
    again, an answer the model got) this way: never claimable, never lost."""
    store = make_store()
    for key in ("pending", "started"):
        await store.claim(key, expires_at=None, owner="a", lease_until=clock.now + 10)
    await store.mark_started("started", owner="a")
    await store.renew(["pending", "started"], owner="a", lease_until=None)
    clock.now += 1000
    for key in ("pending", "started"):
        held = await store.record(key)
        assert held is not None and held.lease_until is None and not held.lost(clock.now)
        assert await store.claim(key, expires_at=None, owner="b") is False


async def test_the_epoch_is_one_for_every_store_of_a_deployment_and_kept(
    make_store: Callable[[], ApprovalStore],
) -> None:
    one, two = make_store(), make_store()
    epoch = await one.epoch()
    assert isinstance(epoch, str) and len(epoch.partition(".")[0]) == 8
    assert await two.epoch() == epoch == one.known_epoch == await one.epoch()


async def test_a_claim_naming_another_epoch_is_refused_and_claims_nothing(
    make_store: Callable[[], ApprovalStore],
) -> None:
    store = make_store()
    epoch = await store.epoch()
    assert epoch is not None
    for wrong in ("AAAAAAAA", "", epoch + "x"):
        with pytest.raises(ApprovalStoreResetError):
            await store.claim("k", expires_at=None, owner="a", epoch=wrong)
    assert await store.record("k") is None
    assert await store.claim("k", expires_at=None, owner="a", epoch=epoch) is True
    assert await store.claim("k2", expires_at=None, owner="a") is True  # no epoch: no check


async def test_a_store_recreated_empty_has_another_epoch(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """A new in-memory store, a recreated SQLite file, a Redis that lost its keys: each
    is a new epoch, so the tokens of the old one are refused."""
    old_memory, new_memory = InMemoryApprovalStore(), InMemoryApprovalStore()
    assert await old_memory.epoch() != await new_memory.epoch()

    path = tmp_path / "approvals.db"
    first = SQLiteApprovalStore(path)
    old = await first.epoch()
    await first.aclose()
    path.unlink()
    second = SQLiteApprovalStore(path)
    assert await second.epoch() != old
    with pytest.raises(ApprovalStoreResetError):
        await second.claim("k", expires_at=None, epoch=old)
    await second.aclose()
    reopened = SQLiteApprovalStore(path)  # the same file again: the same epoch
    assert await reopened.epoch() == await SQLiteApprovalStore(path).epoch()
    await reopened.aclose()


async def test_a_redis_whose_epoch_key_was_evicted_refuses_older_tokens(
    redis_server: RedisServer,
) -> None:
    import redis.asyncio

    raw = redis.asyncio.Redis.from_url(redis_server.url)
    store = RedisApprovalStore(redis_server.url, prefix="ev:")
    try:
        old = await store.epoch()
        assert old is not None
        await raw.delete("ev:epoch")  # evicted, or the server restarted empty
        with pytest.raises(ApprovalStoreResetError):
            await store.claim("k", expires_at=None, epoch=old)
        assert await raw.exists("ev:k") == 0
        new = await store.epoch()
        assert new != old and await raw.ttl("ev:epoch") == -1  # made again, never expiring
        assert await store.claim("k", expires_at=None, epoch=new)
    finally:
        await raw.aclose()
        await store.aclose()


async def test_sqlite_sweeps_expired_rows(tmp_path: Path, clock: FakeClock) -> None:
    store = SQLiteApprovalStore(tmp_path / "a.db", clock=clock)
    for i in range(5):
        await store.claim(f"old{i}", expires_at=clock.now + 1, owner="a")
    await store.claim("forever", expires_at=None, owner="a")
    clock.now += 2 + SQLiteApprovalStore._SWEEP_EVERY
    await store.claim("new", expires_at=clock.now + 60, owner="a")
    import sqlite3

    with sqlite3.connect(tmp_path / "a.db") as db:
        rows = {r[0] for r in db.execute("SELECT key FROM agui_chat_approvals")}
    assert rows == {"forever", "new"}
    await store.aclose()


async def test_sqlite_uses_wal_and_survives_reopening(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    store = SQLiteApprovalStore(path)
    await store.claim("k", expires_at=None, owner="a")
    await store.record_result("k", "done")
    await store.aclose()
    import sqlite3

    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    again = SQLiteApprovalStore(path)
    assert await again.get_result("k") == "done"
    assert await again.claim("k", expires_at=None, owner="b") is False
    await again.aclose()


async def test_a_redis_store_takes_a_client_it_does_not_close(redis_server: RedisServer) -> None:
    import redis.asyncio

    client = redis.asyncio.Redis.from_url(redis_server.url)
    store = RedisApprovalStore(client, prefix="mine:")
    assert store.url == f"redis://127.0.0.1:{redis_server.port}/0"
    assert await store.claim("k", expires_at=None, owner="a")
    assert await client.exists("mine:k") == 1
    await store.aclose()
    assert await client.ping()  # still the caller's to use, and to close
    await client.aclose()
