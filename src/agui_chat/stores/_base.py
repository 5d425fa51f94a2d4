"""The approval store's contract: what makes a replayed resume run nothing twice.

Before a resumed call runs, the server *claims* its interrupt; a second claim of the same
interrupt fails, and the server re-emits the result it kept instead of running the tool
again. Every store implements :class:`ApprovalStore` with an atomic claim.

A record goes through three states::

    claimed (pending) --mark_started--> started --record_result--> done
         |
         +-- release, or its lease runs out --> gone (the answer may be sent again)

A claim whose tool never started is not a use of the approval: the server releases it when
the run ends without starting the tool (a later refusal, the client gone), and a claim left
behind by a process that died before starting the tool lapses when its ``lease_until``
passes. Once started, a record is never released: a tool that may have run is never run
again, whatever happened to the process that ran it.
"""

from __future__ import annotations

import abc
import time
from collections.abc import Callable

__all__ = ["ApprovalStore"]


class ApprovalStore(abc.ABC):
    """Records which interrupts were consumed, and the tool result each one produced.

    ``key`` identifies one issued interrupt (a digest of its decoded signature, so every
    spelling of one id gives the same key). ``expires_at`` is when the interrupt stops being
    answerable at all (epoch seconds, or ``None`` for never): its expiry plus
    ``ANSWER_RETENTION`` (see ``_resume_check``), after which every answer to it, even a
    cancel, is refused. Keep the record at least until then; dropping it earlier would let
    the same answer be accepted again.

    ``owner`` names one claimant (a random id per resume); ``lease_until`` (epoch seconds)
    is how long a claim that was not started yet holds: past it, a new claim may take the
    record over. Both are optional: without them a claim holds until ``expires_at``.

    ``clock`` gives the time in epoch seconds (tests pass a fake one). An implementation
    defines ``_claim``, which ``claim`` calls with the clock's time.
    """

    #: Stores that sweep expired records do it at most this often (seconds).
    _SWEEP_EVERY = 60.0
    _last_sweep = float("-inf")

    def __init__(self, *, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock

    async def claim(
        self,
        key: str,
        *,
        expires_at: float | None,
        owner: str = "",
        lease_until: float | None = None,
    ) -> bool:
        """Mark ``key`` consumed. True if this call claimed it; False if it already was.

        Must be atomic: of two concurrent claims of one key, exactly one returns True. A
        record that is still pending (never started) past its ``lease_until``, or past its
        ``expires_at``, counts as absent.
        """
        return await self._claim(key, expires_at, owner, lease_until, self._clock())

    @abc.abstractmethod
    async def _claim(
        self, key: str, expires_at: float | None, owner: str, lease_until: float | None, now: float
    ) -> bool:
        """``claim`` as of ``now``."""

    def _sweep_due(self, now: float) -> bool:
        """Whether to sweep expired records now (at most once every ``_SWEEP_EVERY``)."""
        if now - self._last_sweep < self._SWEEP_EVERY:
            return False
        self._last_sweep = now
        return True

    async def mark_started(self, key: str, *, owner: str = "") -> bool:
        """Record that the tool of ``owner``'s claim is starting now; False if the claim is
        no longer ``owner``'s (its lease ran out and another claim took it): then the tool
        must not start. Stores without leases keep this default."""
        return True

    @abc.abstractmethod
    async def release(self, key: str, *, owner: str = "") -> None:
        """Undo a claim whose tool never started (so the answer can be sent again). With an
        ``owner``, only that owner's pending claim is released; a started record never is."""

    @abc.abstractmethod
    async def record_result(self, key: str, result: str) -> None:
        """Keep the tool result (the ``TOOL_CALL_RESULT`` content) of a claimed interrupt."""

    @abc.abstractmethod
    async def get_result(self, key: str) -> str | None:
        """The result kept for ``key``, or ``None`` if there is none (yet)."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook, nothing to close by default
        """Close connections the store holds (the server calls it at shutdown)."""
