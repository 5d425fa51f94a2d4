"""The Redis store's governance records against someone with write access to its Redis: an
audit entry altered (even re-sealed with a hash of its own), deleted from the middle or from
the end, or its head removed, is named by ``verify_audit()`` (``AuditChainError`` and the
seq that breaks the chain), and no append starts a second chain beside a damaged one; a
grant is listed only where it applies (an index entry put elsewhere lists nothing) and is
gone for every worker once revoked. A Redis stopped during ``start_audited`` writes neither
the "started" mark nor the record; an audit record over Redis's bulk limit is refused before
it is sent; a Redis without scripting refuses the governance calls as it refuses claims.
Against a real ``redis-server`` on 127.0.0.1, through the store's methods and raw commands
on its keys."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as redis_asyncio
from governance_support import chain_error, draft, grant

from agui_chat import (
    ApprovalStoreMisconfiguredError,
    ApprovalStoreUnavailableError,
    ApprovalStoreValueError,
    AuditChainError,
)
from agui_chat.consent._audit import seal
from agui_chat.stores import RedisApprovalStore
from fake_clock import FakeClock
from redis_server import RedisServer, redis_without

PREFIX = "agui_chat:approval:"  # the store's default
ENTRIES = PREFIX + "audit:entries"
HEAD = PREFIX + "audit:head"


@pytest.fixture
async def raw(redis_server: RedisServer) -> AsyncIterator[Any]:
    """The attacker's client: plain commands on the store's keys."""
    client = redis_asyncio.Redis.from_url(redis_server.url)
    yield client
    await client.aclose()


@pytest.fixture
async def store(redis_server: RedisServer) -> AsyncIterator[RedisApprovalStore]:
    made = RedisApprovalStore(redis_server.url, clock=FakeClock(), timeout=1.0)
    yield made
    await made.aclose()


async def three_decisions(store: RedisApprovalStore) -> None:
    for call_id in ("c1", "c2", "c3"):
        await store.append_audit(draft(call_id))
    assert await store.verify_audit() == 3


async def kept(raw: Any, seq: int) -> tuple[str, str, str]:
    """The prev_hash, hash and body kept for ``seq``, as the store wrote them."""
    (member,) = await raw.zrangebyscore(ENTRIES, seq, seq)
    prev_hash, sealed, body = member.decode().split(":", 2)
    return prev_hash, sealed, body


async def replace(raw: Any, seq: int, prev_hash: str, sealed: str, body: str) -> None:
    await raw.zremrangebyscore(ENTRIES, seq, seq)
    await raw.zadd(ENTRIES, {f"{prev_hash}:{sealed}:{body}": seq})


@pytest.mark.parametrize(
    "tamper",
    [
        lambda body: {**body, "approver": {**body["approver"], "id": "mallory"}},
        lambda body: {**body, "arguments": {"path": "/etc/passwd"}},
    ],
    ids=["approver", "arguments"],
)
async def test_an_altered_body_is_named_by_its_seq(
    store: RedisApprovalStore, raw: Any, tamper: Callable[[dict[str, Any]], dict[str, Any]]
) -> None:
    await three_decisions(store)
    prev_hash, sealed, body = await kept(raw, 2)
    altered = json.dumps(tamper(json.loads(body)), sort_keys=True, separators=(",", ":"))
    assert altered != body
    await replace(raw, 2, prev_hash, sealed, altered)
    assert (await chain_error(store)).seq == 2


async def test_an_entry_deleted_in_the_middle_is_named_as_missing(
    store: RedisApprovalStore, raw: Any
) -> None:
    await three_decisions(store)
    assert await raw.zremrangebyscore(ENTRIES, 2, 2) == 1
    assert (await chain_error(store)).seq == 2


async def test_the_last_entry_deleted_with_the_head_left_as_is_is_found(
    store: RedisApprovalStore, raw: Any
) -> None:
    await three_decisions(store)
    assert await raw.zremrangebyscore(ENTRIES, 3, 3) == 1
    assert (await chain_error(store)).seq == 3


async def test_a_resealed_entry_breaks_the_link_to_the_next(
    store: RedisApprovalStore, raw: Any
) -> None:
    await three_decisions(store)
    prev_hash, _, body = await kept(raw, 2)
    altered = body.replace('"id":"alice"', '"id":"mallory"')
    assert altered != body
    await replace(raw, 2, prev_hash, seal(2, prev_hash, altered), altered)
    assert (await chain_error(store)).seq == 3


async def test_a_head_moved_back_by_hand_refuses_appends_instead_of_forking(
    store: RedisApprovalStore, raw: Any
) -> None:
    """The head put back to entry 2 (to hide entry 3): a writer that follows that head
    cannot slip a second entry 3 in beside the first one; nothing is written."""
    await three_decisions(store)
    _, sealed_2, _ = await kept(raw, 2)
    await raw.set(HEAD, f"2:{sealed_2}")
    with pytest.raises(AuditChainError) as refused:
        await store.append_audit(draft("c4"))
    assert refused.value.seq == 3
    assert await raw.zcard(ENTRIES) == 3 and await raw.get(HEAD) == f"2:{sealed_2}".encode()


async def test_a_head_removed_while_entries_remain_refuses_every_append(
    redis_server: RedisServer, store: RedisApprovalStore, raw: Any
) -> None:
    await three_decisions(store)
    await raw.delete(HEAD)
    other = RedisApprovalStore(redis_server.url, clock=FakeClock())  # a worker that reads anew
    assert await other.claim("k", expires_at=None, owner="a")
    with pytest.raises(AuditChainError) as refused:
        await other.start_audited("k", owner="a", audit=draft("c4"))
    assert refused.value.seq == 1
    held = await other.record("k")
    assert held is not None and not held.started  # nothing written: no mark, no record
    with pytest.raises(AuditChainError):
        await other.append_audit(draft("c5"))
    assert await raw.zcard(ENTRIES) == 3 and await raw.get(HEAD) is None
    await other.aclose()


async def test_a_grant_is_listed_only_where_it_applies(redis_server: RedisServer, raw: Any) -> None:
    clock = FakeClock()
    one = RedisApprovalStore(redis_server.url, clock=clock)
    two = RedisApprovalStore(redis_server.url, clock=clock)
    await one.add_grant(grant(clock, "g-t1"))
    assert [g.id for g in await two.grants(thread_id="t1")] == ["g-t1"]
    assert await two.grants(thread_id="t2") == []
    assert await two.grants(principal_id="alice") == []
    assert await two.grants(principal_id="t1") == []  # a principal named like the thread
    assert await two.grants(thread_id="t2", principal_id="t1") == []
    # An attacker who files the grant under another thread's and a principal's index lists
    # nothing there: what is listed is checked against the grant itself.
    await raw.zadd(PREFIX + "grants:thread:t2", {"g-t1": clock.now + 600})
    await raw.zadd(PREFIX + "grants:principal:alice", {"g-t1": clock.now + 600})
    assert await two.grants(thread_id="t2") == []
    assert await two.grants(principal_id="alice") == []
    assert [g.id for g in await two.grants()] == ["g-t1"]
    await one.aclose()
    await two.aclose()


async def test_a_revoked_grant_is_not_listed_by_another_worker_right_after(
    redis_server: RedisServer, raw: Any
) -> None:
    clock = FakeClock()
    one = RedisApprovalStore(redis_server.url, clock=clock)
    two = RedisApprovalStore(redis_server.url, clock=clock)
    await one.add_grant(grant(clock, "g-t1"))
    await one.add_grant(grant(clock, "g-alice", principal="alice"))
    assert len(await two.grants()) == 2
    assert await one.revoke_grant("g-t1") is True
    assert await two.grants(thread_id="t1") == []
    assert [g.id for g in await two.grants()] == ["g-alice"]
    assert await raw.exists(PREFIX + "grant:g-t1") == 0
    assert await two.revoke_grant("g-t1") is False
    assert await two.revoke_grant("g-alice") is True
    assert await one.grants(principal_id="alice") == []
    await one.aclose()
    await two.aclose()


async def test_grants_expire_in_redis_and_audit_entries_never_do(
    store: RedisApprovalStore, raw: Any
) -> None:
    clock = FakeClock()
    await store.add_grant(grant(clock, "g-t1"))
    await store.append_audit(draft("c1"))
    assert 0 < await raw.pttl(PREFIX + "grant:g-t1") <= 600_000
    for index in ("grants:all", "grants:thread:t1"):
        assert 0 < await raw.pttl(PREFIX + index) <= 600_000
    assert await raw.ttl(ENTRIES) == -1 and await raw.ttl(HEAD) == -1


async def test_a_redis_stopped_during_start_audited_writes_neither_mark_nor_record(
    redis_server: RedisServer, store: RedisApprovalStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert await store.claim("k", expires_at=None, owner="a")
    read_head = store._audit_head

    async def head_then_outage() -> tuple[int, str] | None:
        head = await read_head()  # the entry is sealed on it; then Redis goes away
        redis_server.stop(keep_data=True)
        return head

    monkeypatch.setattr(store, "_audit_head", head_then_outage)
    with pytest.raises(ApprovalStoreUnavailableError, match="is unavailable"):
        await store.start_audited("k", owner="a", audit=draft("c1"))
    redis_server.start()
    monkeypatch.undo()
    held = await store.record("k")
    assert held is not None and held.owner == "a" and not held.started
    assert [r async for r in store.audit()] == []
    assert await store.verify_audit() == 0
    assert await store.start_audited("k", owner="a", audit=draft("c1")) == 1  # once it is back


@pytest.fixture
async def limited(raw: Any) -> AsyncIterator[int]:
    """The session's Redis with its smallest bulk limit, put back to the default after."""
    limit = 1024 * 1024
    await raw.config_set("proto-max-bulk-len", str(limit))
    yield limit
    await raw.config_set("proto-max-bulk-len", str(512 * 1024 * 1024))


async def test_an_audit_record_over_the_bulk_limit_is_refused_and_writes_nothing(
    store: RedisApprovalStore, limited: int
) -> None:
    await store.epoch()  # reads the limit
    assert await store.claim("k", expires_at=None, owner="a")
    huge = draft("c1", arguments={"text": "x" * limited})
    with pytest.raises(ApprovalStoreValueError, match="cannot hold an audit record of"):
        await store.start_audited("k", owner="a", audit=huge)
    held = await store.record("k")
    assert held is not None and not held.started
    assert await store.verify_audit() == 0
    store.audit_arguments = False  # a digest of the arguments fits
    assert await store.start_audited("k", owner="a", audit=huge) == 1


@pytest.fixture
def url_of_a_redis_without_scripts(tmp_path: Path) -> Iterator[str]:
    with redis_without(tmp_path, "EVAL", "EVALSHA") as url:
        yield url


async def test_a_redis_without_scripting_refuses_the_governance_calls(
    url_of_a_redis_without_scripts: str,
) -> None:
    clock = FakeClock()
    store = RedisApprovalStore(url_of_a_redis_without_scripts, clock=clock)
    calls: dict[str, Callable[[], Awaitable[object]]] = {
        "append_audit": lambda: store.append_audit(draft("c1")),
        "start_audited": lambda: store.start_audited("k", owner="a", audit=draft("c1")),
        "add_grant": lambda: store.add_grant(grant(clock, "g1")),
        "revoke_grant": lambda: store.revoke_grant("g1"),
    }
    for call in calls.values():  # every one refused, none taken for an outage
        with pytest.raises(ApprovalStoreMisconfiguredError, match="unknown command 'EVALSHA'"):
            await call()
    assert await store.verify_audit() == 0  # plain reads still work
    assert await store.grants() == []
    await store.aclose()
