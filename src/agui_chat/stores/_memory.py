"""``InMemoryApprovalStore``: consumed approvals kept in this process's memory (one worker,
lost on restart)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from ._base import ApprovalStore

__all__ = ["InMemoryApprovalStore"]


@dataclass
class _Entry:
    expires_at: float | None
    result: str | None = None


class InMemoryApprovalStore(ApprovalStore):
    """A store in this process's memory: enough for one worker; lost on restart.

    Records past their ``expires_at`` are swept (at most once a minute) as new claims
    arrive. The methods never await, so each is atomic within the event loop. ``clock``
    gives the time in epoch seconds (default ``time.time``; tests pass a fake one).
    """

    _SWEEP_EVERY = 60.0

    def __init__(self, *, clock: Callable[[], float] = time.time) -> None:
        self._entries: dict[str, _Entry] = {}
        self._clock = clock
        self._last_sweep = float("-inf")

    def __len__(self) -> int:
        return len(self._entries)

    async def claim(self, key: str, *, expires_at: float | None) -> bool:
        self._sweep()
        if key in self._entries:
            return False
        self._entries[key] = _Entry(expires_at)
        return True

    async def release(self, key: str) -> None:
        self._entries.pop(key, None)

    async def record_result(self, key: str, result: str) -> None:
        entry = self._entries.get(key)
        if entry is not None:
            entry.result = result

    async def get_result(self, key: str) -> str | None:
        entry = self._entries.get(key)
        return entry.result if entry is not None else None

    def _sweep(self) -> None:
        now = self._clock()
        if now - self._last_sweep < self._SWEEP_EVERY:
            return
        self._last_sweep = now
        expired = [
            k for k, e in self._entries.items() if e.expires_at is not None and e.expires_at < now
        ]
        for k in expired:
            del self._entries[k]
