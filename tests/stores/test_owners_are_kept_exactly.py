"""An owner is any string a caller chooses, colons included (the Redis store keeps a record as
``<state>:<lease>:<owner>``): every store reads it back whole and matches it exactly, so one
owner never starts, renews or releases another's claim because their names share a prefix.
Against memory, a SQLite file, a real Redis and a real PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable

from agui_chat.stores import ApprovalStore, ClaimRecord
from fake_clock import FakeClock

OWNER = "worker:7:resume-1"


async def test_an_owner_with_colons_is_read_back_whole_through_every_state(
    make_store: Callable[[], ApprovalStore], clock: FakeClock
) -> None:
    one, two = make_store(), make_store()
    assert await one.claim("k", expires_at=None, owner=OWNER, lease_until=clock.now + 30)
    assert await two.record("k") == ClaimRecord(OWNER, False, clock.now + 30)
    assert await one.mark_started("k", owner=OWNER, lease_until=clock.now + 40)
    assert await two.record("k") == ClaimRecord(OWNER, True, clock.now + 40)
    await two.renew(["k"], owner=OWNER, lease_until=None)
    assert await one.record("k") == ClaimRecord(OWNER, True, None)


async def test_an_owner_whose_name_is_a_prefix_of_the_claims_owner_is_another_owner(
    make_store: Callable[[], ApprovalStore], clock: FakeClock
) -> None:
    store = make_store()
    prefix = OWNER.rpartition(":")[0]  # "worker:7"
    assert await store.claim("k", expires_at=None, owner=OWNER, lease_until=clock.now + 30)
    assert await store.mark_started("k", owner=prefix) is False
    await store.renew(["k"], owner=prefix, lease_until=clock.now + 99)
    await store.release("k", owner=prefix)
    assert await store.record("k") == ClaimRecord(OWNER, False, clock.now + 30)
    await store.release("k", owner=OWNER)
    assert await store.record("k") is None
