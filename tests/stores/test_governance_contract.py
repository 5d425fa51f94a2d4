"""Every approval store keeps the governance records the same way: a hash-chained, append-only
audit trail written in the same step as the claim's use (a decision with the "started" mark,
a rejection with its kept result, an outcome with the result), shared by every worker, never
forked by concurrent writers; and remembered approvals (grants), listed by thread or
principal, gone once expired or revoked, revoked for every worker at once. Run against
memory, a SQLite file, a real Redis and a real PostgreSQL."""

from __future__ import annotations

import asyncio
import hashlib
import itertools
from collections.abc import Callable
from datetime import datetime, timezone

import pytest
from governance_support import ALICE, BOB, draft, grant

from agui_chat.consent._audit import AuditDraft
from agui_chat.stores import ApprovalStore
from fake_clock import FakeClock


async def test_a_decision_started_with_its_claim_is_one_record_with_its_outcome(
    make_store: Callable[[], ApprovalStore], clock: FakeClock
) -> None:
    one, two = make_store(), make_store()
    assert await one.claim("k", expires_at=None, owner="a")
    seq = await one.start_audited("k", owner="a", audit=draft())
    assert seq == 1
    records = [r async for r in two.audit()]
    assert [(r.seq, r.decision, r.outcome) for r in records] == [(1, "approved", None)]
    await one.record_result("k", "wrote notes.txt", outcome=(seq, "ran"))
    [record] = [r async for r in two.audit()]
    assert record.outcome == "ran"
    assert record.result_sha256 == hashlib.sha256(b"wrote notes.txt").hexdigest()
    assert record.approver == ALICE and record.requester == BOB
    assert record.arguments == {"path": "notes.txt"}
    assert (record.audience, record.thread_id, record.run_id, record.call_id, record.tool) == (
        "aud",
        "t1",
        "r1",
        "c1",
        "write_file",
    )
    assert record.prev_hash == "0" * 64 and len(record.hash) == 64
    assert await two.verify_audit() == 1


async def test_a_claim_that_is_not_its_owners_starts_nothing_and_records_nothing(
    make_store: Callable[[], ApprovalStore],
) -> None:
    store = make_store()
    assert await store.claim("k", expires_at=None, owner="a")
    assert await store.start_audited("k", owner="someone-else", audit=draft()) is None
    assert [r async for r in store.audit()] == []
    assert await store.verify_audit() == 0
    held = await store.record("k")
    assert held is not None and not held.started


async def test_a_rejection_is_recorded_with_its_result_once(
    make_store: Callable[[], ApprovalStore],
) -> None:
    store = make_store()
    assert await store.claim("k", expires_at=None, owner="a")
    rejected = draft(decision="rejected")
    await store.record_result("k", "Tool call invocation rejected. not today", audit=rejected)
    await store.record_result("k", "Tool call invocation rejected. not today", audit=rejected)
    [record] = [r async for r in store.audit()]
    assert (record.decision, record.reason, record.outcome) == ("rejected", "not today", None)


async def test_no_record_for_a_key_never_claimed(make_store: Callable[[], ApprovalStore]) -> None:
    store = make_store()
    await store.record_result("never", "x", audit=draft(decision="rejected"))
    assert [r async for r in store.audit()] == []


async def test_concurrent_writers_on_several_workers_keep_one_unbroken_chain(
    make_store: Callable[[], ApprovalStore],
) -> None:
    stores = [make_store() for _ in range(3)]
    seqs = await asyncio.gather(*(s.append_audit(draft(f"c{i}")) for i, s in enumerate(stores * 5)))
    assert sorted(seqs) == list(range(1, 16))
    assert await stores[0].verify_audit() == 15
    records = [r async for r in stores[1].audit()]
    assert [r.seq for r in records] == list(range(1, 16))
    for before, after in itertools.pairwise(records):
        assert after.prev_hash == before.hash


async def test_outcomes_join_their_decisions_and_count_once(
    make_store: Callable[[], ApprovalStore],
) -> None:
    store = make_store()
    first = await store.append_audit(draft("c1"))
    second = await store.append_audit(draft("c2", thread="t2"))
    await store.record_outcome(second, "failed", "boom")
    await store.record_outcome(first, "lost", None)
    records = {r.call_id: r for r in [r async for r in store.audit()]}
    assert records["c1"].outcome == "lost" and records["c1"].result_sha256 is None
    assert records["c2"].outcome == "failed"
    assert await store.verify_audit() == 2  # decisions, each with its outcome checked


async def test_the_trail_is_read_by_thread_and_from_a_moment_or_a_seq(
    make_store: Callable[[], ApprovalStore], clock: FakeClock
) -> None:
    store = make_store()
    await store.append_audit(draft("c1", thread="t1"))
    clock.advance(60)
    later = datetime.fromtimestamp(clock.now, tz=timezone.utc)
    await store.append_audit(draft("c2", thread="t2"))
    await store.append_audit(draft("c3", thread="t1"))
    assert [r.call_id async for r in store.audit(thread_id="t1")] == ["c1", "c3"]
    assert [r.call_id async for r in store.audit(since=later)] == ["c2", "c3"]
    assert [r.call_id async for r in store.audit(since=2)] == ["c3"]


async def test_arguments_kept_only_as_a_digest_when_the_store_says_so(
    make_store: Callable[[], ApprovalStore],
) -> None:
    store = make_store()
    store.audit_arguments = False
    edited = AuditDraft(
        "edited",
        "aud",
        "t1",
        "r1",
        "c1",
        "write_file",
        {"path": "b.txt"},
        edited_arguments={"path": "b.txt"},
    )
    await store.append_audit(edited)
    [record] = [r async for r in store.audit()]
    assert record.arguments is None and record.edited_arguments is None
    assert record.arguments_sha256 == hashlib.sha256(b'{"path":"b.txt"}').hexdigest()


async def test_arguments_and_reasons_are_kept_exactly(
    make_store: Callable[[], ApprovalStore],
) -> None:
    store = make_store()
    odd = {"path": "a\x00b\u202e.txt", "n": 1.5, "nested": {"é": [1, None, True]}}
    await store.append_audit(draft("c1", arguments=odd))
    [record] = [r async for r in store.audit()]
    assert record.arguments == odd
    assert await store.verify_audit() == 1


async def test_grants_are_listed_by_thread_or_principal_until_they_expire(
    make_store: Callable[[], ApprovalStore], clock: FakeClock
) -> None:
    one, two = make_store(), make_store()
    await one.add_grant(grant(clock, "g-thread"))
    await one.add_grant(grant(clock, "g-other-thread", thread="t2"))
    await one.add_grant(grant(clock, "g-alice", principal="alice"))
    assert [g.id for g in await two.grants(thread_id="t1")] == ["g-thread"]
    assert [g.id for g in await two.grants(principal_id="alice")] == ["g-alice"]
    both = await two.grants(thread_id="t1", principal_id="alice")
    assert sorted(g.id for g in both) == ["g-alice", "g-thread"]
    assert len(await two.grants()) == 3
    [kept] = await two.grants(thread_id="t2")
    assert kept == grant(clock, "g-other-thread", thread="t2")
    clock.advance(601)
    assert await two.grants() == []


async def test_a_revoked_grant_is_gone_for_every_worker_at_once(
    make_store: Callable[[], ApprovalStore], clock: FakeClock
) -> None:
    one, two = make_store(), make_store()
    await one.add_grant(grant(clock, "g1"))
    assert await two.revoke_grant("g1") is True
    assert await one.grants(thread_id="t1") == []
    assert await one.revoke_grant("g1") is False
    assert await one.revoke_grant("never") is False


async def test_revoking_an_expired_grant_says_it_was_not_live(
    make_store: Callable[[], ApprovalStore], clock: FakeClock
) -> None:
    store = make_store()
    await store.add_grant(grant(clock, "g1"))
    clock.advance(601)
    assert await store.revoke_grant("g1") is False


@pytest.mark.parametrize("kind", ["decision", "outcome"])
async def test_verify_names_a_record_inserted_out_of_turn(
    make_store: Callable[[], ApprovalStore], kind: str
) -> None:
    """A writer that skips the head check cannot append: the store refuses an entry that does
    not follow its head."""
    from agui_chat.consent._audit import entry_after
    from agui_chat.stores._base import HeadMoved

    store = make_store()
    await store.append_audit(draft("c1"))
    stale = entry_after((0, "0" * 64), {"kind": kind, "time": 0.0, "of": 1, "outcome": "ran"})
    with pytest.raises(HeadMoved):
        await store._append(stale)
    assert await store.verify_audit() == 1


async def test_the_head_names_the_last_entry_outcomes_included(
    make_store: Callable[[], ApprovalStore],
) -> None:
    store = make_store()
    assert await store.audit_head() is None
    seq = await store.append_audit(draft("c1"))
    [record] = [r async for r in store.audit()]
    assert await store.audit_head() == (seq, record.hash)
    await store.record_outcome(seq, "ran", "ok")
    head = await store.audit_head()
    assert head is not None and head[0] == seq + 1 and head[1] != record.hash
