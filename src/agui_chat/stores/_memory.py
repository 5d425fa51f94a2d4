"""``InMemoryApprovalStore``: consumed approvals kept in this process's memory (one worker,
lost on restart)."""

from __future__ import annotations

import time
from collections.abc import Callable, Collection
from dataclasses import dataclass

from .._exceptions import ApprovalStoreResetError
from ._base import ApprovalStore, Claim, ClaimRecord, check_release, new_epoch

__all__ = ["InMemoryApprovalStore"]


@dataclass
class _Entry:
    expires_at: float | None
    owner: str = ""
    lease_until: float | None = None
    started: bool = False
    result: str | None = None


class InMemoryApprovalStore(ApprovalStore):
    """A store in this process's memory: enough for one worker; lost on restart.

    Only safe for one process that never restarts (tests, the ephemeral-key case): a server
    with a fixed signing key refuses it unless it is passed explicitly.

    Records past their ``expires_at`` are swept (at most once a minute) as new claims
    arrive. The methods never await, so each is atomic within the event loop. ``clock``
    gives the time in epoch seconds (default ``time.time``; tests pass a fake one). Its
    epoch is made with it: a restarted process's store refuses the tokens of the last one.
    """

    def __init__(self, *, clock: Callable[[], float] = time.time) -> None:
        super().__init__(clock=clock)
        self._entries: dict[str, _Entry] = {}
        self._own_epoch = new_epoch(self._clock())

    def __len__(self) -> int:
        return len(self._entries)

    async def _epoch(self) -> str:
        return self._own_epoch

    async def _claim(self, claim: Claim) -> bool:
        if claim.epoch is not None and claim.epoch != self._own_epoch:
            raise ApprovalStoreResetError(
                "this in-memory approval store is not the one that issued the token"
            )
        now = claim.now
        if self._sweep_due(now):
            for k in [k for k, e in self._entries.items() if _expired(e, now)]:
                del self._entries[k]
        entry = self._entries.get(claim.key)
        if entry is not None and not _lapsed(entry, now):
            return False
        self._entries[claim.key] = _Entry(claim.expires_at, claim.owner, claim.lease_until)
        return True

    async def mark_started(
        self, key: str, *, owner: str = "", lease_until: float | None = None
    ) -> bool:
        entry = self._entries.get(key)
        if entry is None or entry.owner != owner or entry.result is not None:
            return False
        entry.started = True
        if lease_until is not None:
            entry.lease_until = lease_until
        return True

    async def renew(self, keys: Collection[str], *, owner: str, lease_until: float | None) -> None:
        for key in keys:
            entry = self._entries.get(key)
            if entry is not None and entry.owner == owner and entry.result is None:
                entry.lease_until = lease_until

    async def release(self, key: str, *, owner: str = "", started: bool = False) -> None:
        check_release(owner, started)
        entry = self._entries.get(key)
        if entry is None or entry.result is not None or (entry.started and not started):
            return
        if not owner or entry.owner == owner:  # started=True always names an owner
            del self._entries[key]

    async def record_result(self, key: str, result: str) -> None:
        entry = self._entries.get(key)
        if entry is not None:
            entry.result = result

    async def record(self, key: str) -> ClaimRecord | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        return ClaimRecord(entry.owner, entry.started, entry.lease_until, entry.result)


def _lapsed(entry: _Entry, now: float) -> bool:
    """Whether a record counts as absent: past its expiry, or a claim never started whose
    lease ran out (its process died before starting the tool)."""
    return _expired(entry, now) or (
        not entry.started
        and entry.result is None
        and entry.lease_until is not None
        and entry.lease_until < now
    )


def _expired(entry: _Entry, now: float) -> bool:
    return entry.expires_at is not None and entry.expires_at < now
