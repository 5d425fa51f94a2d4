"""The consumed-approvals store: what makes a replayed resume run nothing twice.

Before a resumed call runs, the server *claims* its interrupt; a second claim of the same
interrupt fails, and the server re-emits the result it kept instead of running the tool
again. Implement :class:`ApprovalStore` over Redis (``SET NX`` with an expiry) or SQL (a
unique key) to share it between workers; :class:`InMemoryApprovalStore` serves one process.
"""

from __future__ import annotations

import abc
import time
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["ApprovalStore", "InMemoryApprovalStore"]


class ApprovalStore(abc.ABC):
    """Records which interrupts were consumed, and the tool result each one produced.

    ``key`` identifies one issued interrupt (a digest of its decoded signature, so every
    spelling of one id gives the same key). ``expires_at`` is when the interrupt stops being
    answerable at all (epoch seconds, or ``None`` for never): its expiry plus
    ``ANSWER_RETENTION`` (see ``_resume_check``), after which every answer to it, even a
    cancel, is refused. Keep the record at least until then; dropping it earlier would let
    the same answer be accepted again.
    """

    @abc.abstractmethod
    async def claim(self, key: str, *, expires_at: float | None) -> bool:
        """Mark ``key`` consumed. True if this call claimed it; False if it already was.

        Must be atomic: of two concurrent claims of one key, exactly one returns True.
        """

    @abc.abstractmethod
    async def release(self, key: str) -> None:
        """Undo a claim whose run never started (so the answer can be sent again)."""

    @abc.abstractmethod
    async def record_result(self, key: str, result: str) -> None:
        """Keep the tool result (the ``TOOL_CALL_RESULT`` content) of a claimed interrupt."""

    @abc.abstractmethod
    async def get_result(self, key: str) -> str | None:
        """The result kept for ``key``, or ``None`` if there is none (yet)."""


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
