"""``InMemoryApprovalStore``: consumed approvals kept in this process's memory (one worker,
lost on restart)."""

from __future__ import annotations

import time
from collections.abc import Callable, Collection
from dataclasses import dataclass

from .._exceptions import ApprovalStoreResetError
from ..consent._audit import AuditEntry
from ..consent._grants import Grant
from ._base import ApprovalStore, Claim, ClaimRecord, HeadMoved, check_release, new_epoch

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

    def __init__(
        self, *, clock: Callable[[], float] = time.time, audit_arguments: bool = True
    ) -> None:
        super().__init__(clock=clock, audit_arguments=audit_arguments)
        self._entries: dict[str, _Entry] = {}
        self._own_epoch = new_epoch(self._clock())
        self._trail: list[AuditEntry] = []
        self._trail_head: tuple[int, str] | None = None
        self._grant_table: dict[str, Grant] = {}

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

    async def _mark_started(
        self, key: str, owner: str, lease_until: float | None, audit: AuditEntry | None
    ) -> bool:
        entry = self._entries.get(key)
        if entry is None or entry.owner != owner or entry.result is not None:
            return False
        if audit is not None:
            self._put_entry(audit)
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

    async def _record_result(self, key: str, result: str, audit: AuditEntry | None) -> bool:
        entry = self._entries.get(key)
        if entry is None:
            return False
        appended = audit is not None and entry.result is None
        if appended:
            assert audit is not None
            self._put_entry(audit)
        entry.result = result
        return appended

    def _put_entry(self, entry: AuditEntry) -> None:
        head = self._trail_head or (0, "0" * 64)
        if (entry.seq - 1, entry.prev_hash) != head:
            raise HeadMoved(self._trail_head)
        self._trail.append(entry)
        self._trail_head = (entry.seq, entry.hash)

    async def _append(self, entry: AuditEntry) -> None:
        self._put_entry(entry)

    async def _audit_head(self) -> tuple[int, str] | None:
        return self._trail_head

    async def _audit_entries(self, after: int, limit: int) -> list[AuditEntry]:
        return [e for e in self._trail if e.seq > after][:limit]

    async def _put_grant(self, grant: Grant) -> None:
        self._grant_table[grant.id] = grant

    async def _grants(self, thread_id: str | None, principal_id: str | None) -> list[Grant]:
        everything = thread_id is None and principal_id is None
        return [
            g
            for g in self._grant_table.values()
            if everything
            or (thread_id is not None and g.scope == "thread" and g.thread_id == thread_id)
            or (
                principal_id is not None
                and g.scope == "principal"
                and g.principal_id == principal_id
            )
        ]

    async def revoke_grant(self, grant_id: str) -> bool:
        grant = self._grant_table.pop(grant_id, None)
        return grant is not None and grant.expires.timestamp() > self._clock()

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
