"""A token issued while the store could not be reached carries the second it was issued; its
claim binds to the store's epoch only if that epoch was made before the token (with a margin
for clocks that disagree), so an answer runs once a store with its records is back, and never
when the store may have lost a use of it. Every store, the same cases."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from agui_chat import ApprovalStoreResetError
from agui_chat.stores import ApprovalStore
from agui_chat.stores._base import EPOCH_CLOCK_MARGIN, epoch_made_before
from fake_clock import FakeClock


async def test_an_epoch_says_when_it_was_made(
    make_store: Callable[[], ApprovalStore], clock: FakeClock
) -> None:
    epoch = await make_store().epoch()
    assert epoch is not None
    made = int(epoch.rpartition(".")[2])
    assert made == int(clock.now)


async def test_a_token_issued_after_the_epoch_was_made_binds_to_it_and_claims_once(
    make_store: Callable[[], ApprovalStore], clock: FakeClock
) -> None:
    one, two = make_store(), make_store()
    epoch = await one.epoch()
    issued_at = clock.now + EPOCH_CLOCK_MARGIN  # the pause, the store out of reach
    assert await two.epoch_for(issued_at) == epoch
    assert await two.claim("k", expires_at=None, owner="a", epoch=await two.epoch_for(issued_at))
    assert not await one.claim("k", expires_at=None, owner="b", epoch=epoch)


@pytest.mark.parametrize("late", [0.0, 1.0, EPOCH_CLOCK_MARGIN - 1])
async def test_a_token_issued_before_or_about_when_the_epoch_was_made_is_not_bound(
    make_store: Callable[[], ApprovalStore], clock: FakeClock, late: float
) -> None:
    store = make_store()
    await store.epoch()
    bound = await store.epoch_for(clock.now + late)
    assert bound == ""
    with pytest.raises(ApprovalStoreResetError):
        await store.claim("k", expires_at=None, owner="a", epoch=bound)
    assert await store.record("k") is None


def test_an_epoch_without_its_making_time_is_never_bound() -> None:
    assert not epoch_made_before("AbCdEfGh", 10**12)  # made before epochs said when
    assert not epoch_made_before("AbCdEfGh.", 10**12)
    assert not epoch_made_before("AbCdEfGh.12x", 10**12)
    assert not epoch_made_before("AbC.dEf.-5", 10**12)
    assert epoch_made_before("AbCdEfGh.100", 100 + EPOCH_CLOCK_MARGIN)
    assert not epoch_made_before("AbCdEfGh.100", 100 + EPOCH_CLOCK_MARGIN - 0.5)
