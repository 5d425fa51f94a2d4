"""A store of your own implements only what ``ApprovalStore`` asks (``_claim``, ``record``,
``record_result``, ``release``) and inherits the rest: without leases every claim of its owner
may start and renewing changes nothing; without an epoch ``epoch()`` is ``None`` and a token
issued while no store answered binds to nothing; ``get_result`` reads ``record``. Also the
edges every store shares: a started record is lost only once its lease is strictly past, and
an epoch's making time is what follows its last dot."""

from __future__ import annotations

from agui_chat.stores import ApprovalStore, Claim, ClaimRecord
from agui_chat.stores._base import EPOCH_CLOCK_MARGIN, epoch_made_before
from fake_clock import FakeClock


class DictStore(ApprovalStore):
    """The least a store must define: claims in a dict, no leases, no epoch."""

    def __init__(self, clock: FakeClock) -> None:
        super().__init__(clock=clock)
        self.records: dict[str, ClaimRecord] = {}
        self.claims: list[Claim] = []

    async def _claim(self, claim: Claim) -> bool:
        self.claims.append(claim)
        if claim.key in self.records:
            return False
        self.records[claim.key] = ClaimRecord(claim.owner, False, claim.lease_until)
        return True

    async def record(self, key: str) -> ClaimRecord | None:
        return self.records.get(key)

    async def record_result(self, key: str, result: str) -> None:
        held = self.records[key]
        self.records[key] = ClaimRecord(held.owner, held.started, held.lease_until, result)

    async def release(self, key: str, *, owner: str = "", started: bool = False) -> None:
        self.records.pop(key, None)


async def test_a_store_without_leases_lets_its_claims_start_and_renews_nothing() -> None:
    clock = FakeClock()
    store = DictStore(clock)
    assert await store.claim("k", expires_at=clock.now + 60, owner="a", lease_until=clock.now)
    assert await store.mark_started("k", owner="a", lease_until=clock.now + 30) is True
    await store.renew(["k"], owner="a", lease_until=clock.now + 99)
    assert await store.record("k") == ClaimRecord("a", False, clock.now)
    await store.record_result("k", "done")
    assert await store.get_result("k") == "done"
    assert await store.get_result("never") is None
    await store.aclose()


async def test_a_claim_is_asked_of_the_store_as_of_its_clock() -> None:
    clock = FakeClock()
    store = DictStore(clock)
    await store.claim("k", expires_at=5.0, owner="a", lease_until=3.0, epoch="e.1")
    clock.advance(2.5)
    await store.claim("k", expires_at=None)
    assert store.claims == [
        Claim("k", 5.0, "a", 3.0, clock.now - 2.5, "e.1"),
        Claim("k", None, "", None, clock.now, None),
    ]


async def test_a_store_without_an_epoch_has_none_and_binds_no_token_to_one() -> None:
    store = DictStore(FakeClock())
    assert await store.epoch() is None
    assert store.known_epoch is None
    assert await store.epoch_for(10**12) == ""


def test_a_started_record_is_lost_only_once_its_lease_is_past() -> None:
    started = ClaimRecord("a", True, 100.0)
    assert not started.lost(99.0)
    assert not started.lost(100.0)  # at the instant its lease ends, it still holds
    assert started.lost(100.5)
    assert not ClaimRecord("a", True, 100.0, "kept").lost(200.0)  # its result is kept
    assert not ClaimRecord("a", False, 100.0).lost(200.0)  # never started: it lapses instead
    assert not ClaimRecord("a", True, None).lost(10**12)  # held for good


def test_an_epochs_making_time_is_what_follows_its_last_dot() -> None:
    made = 1_900_000_000
    assert epoch_made_before(f"Ab.Cd.{made}", made + EPOCH_CLOCK_MARGIN)
    assert not epoch_made_before(f"Ab.{made}.x", made + EPOCH_CLOCK_MARGIN)
