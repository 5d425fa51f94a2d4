"""The approval store's contract: what makes a replayed resume run nothing twice.

Before a resumed call runs, the server *claims* its interrupt; a second claim of the same
interrupt fails, and the server re-emits the result it kept instead of running the tool
again. Every store implements :class:`ApprovalStore` with an atomic claim.

Claims are **per call**: each interrupt of a pause has its own record, so one call whose
tool started and was lost never strands its siblings. A record goes through three states::

    claimed (pending) --mark_started--> started --record_result--> done
         |                                 |
         |                                 +-- its lease runs out --> lost (never run again)
         +-- release, or its lease runs out --> gone (the answer may be sent again)

    started --release(started=True) by its owner, tool never began--> gone

A claim whose tool never started is not a use of the approval: the server releases it when
the run ends without starting the tool (a later refusal, the client gone), and a claim left
behind by a process that died before starting the tool lapses when its ``lease_until``
passes. Once started, a record is never released: a tool that may have run is never run
again, whatever happened to the process that ran it. The one exception is its own owner's
``release(started=True)``: a request cancelled while its "started" mark was being written
(the mark committed, the tool's first line never ran) is known to that owner not to have
run the tool, so the approval was not used and its answer may run once later. While a run
lasts, the server ``renew``\\ s the leases of its records (pending and started), so a lease
that ran out means the process holding it died: a pending record then counts as absent, a
started one as *lost* (``ClaimRecord.lost``: its tool may have run, its result is gone).

Every store has an **epoch** (:meth:`ApprovalStore.epoch`): an id made when the store's
records were created and kept with them (a Redis key, a SQLite row, the memory store's
life). Tokens carry the epoch current when they were issued, and a claim names it: a store
whose epoch differs lost its records since (Redis restarted without persistence, evicted
keys, a recreated file) and raises ``ApprovalStoreResetError`` instead of taking a used
approval for a new one. The check is part of the atomic claim.

The contract changed with issue 26 (an implementation written before it must add): the
``epoch`` of ``_claim``'s :class:`Claim`, :meth:`~ApprovalStore.record` (in place of
``get_result``, now derived from it), ``lease_until`` on ``mark_started``,
:meth:`~ApprovalStore.renew` and :meth:`~ApprovalStore._epoch`. The shared contract tests
(``tests/stores/test_store_contract.py``) are parametrised over stores.
"""

from __future__ import annotations

import abc
import secrets
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass

__all__ = ["ApprovalStore", "Claim", "ClaimRecord", "check_release", "new_epoch"]


@dataclass(frozen=True, slots=True)
class Claim:
    """One claim asked of a store (:meth:`ApprovalStore.claim`), as of ``now``: what an
    implementation's ``_claim`` gets."""

    key: str
    expires_at: float | None
    owner: str
    lease_until: float | None
    now: float
    epoch: str | None


@dataclass(frozen=True)
class ClaimRecord:
    """What a store holds for a key: whose claim, whether its tool started, until when its
    holder's lease runs (epoch seconds; ``None``: for good, until ``expires_at``: the answer
    was used) and the kept result."""

    owner: str
    started: bool
    lease_until: float | None
    result: str | None = None

    def lost(self, now: float) -> bool:
        """Whether the tool started and its process died before keeping a result."""
        return (
            self.started
            and self.result is None
            and self.lease_until is not None
            and self.lease_until < now
        )


def check_release(owner: str, started: bool) -> None:
    """``ValueError`` for ``release(started=True)`` without an owner: a started record is
    released only by the owner that knows its tool never began."""
    if started and not owner:
        raise ValueError("release(started=True) needs the owner whose started record it is")


def new_epoch() -> str:
    """A fresh store epoch: 48 random bits, 8 characters of base64url."""
    return secrets.token_urlsafe(6)


class ApprovalStore(abc.ABC):
    """Records which interrupts were consumed, and the tool result each one produced.

    ``key`` identifies one issued interrupt (a digest of its decoded signature, so every
    spelling of one id gives the same key). ``expires_at`` is when the interrupt stops being
    answerable at all (epoch seconds, or ``None`` for never): its expiry plus
    ``ANSWER_RETENTION`` (see ``_resume_check``), after which every answer to it, even a
    cancel, is refused. Keep the record at least until then; dropping it earlier would let
    the same answer be accepted again.

    ``owner`` names one claimant (a random id per resume); ``lease_until`` (epoch seconds)
    is how long its claim holds unless renewed: past it, a pending claim may be taken over
    and a started one is lost. Both are optional: without them a claim holds until
    ``expires_at``.

    ``clock`` gives the time in epoch seconds (tests pass a fake one). An implementation
    defines ``_claim``, which ``claim`` calls with the clock's time, and ``_epoch``.
    """

    #: Stores that sweep expired records do it at most this often (seconds).
    _SWEEP_EVERY = 60.0
    _last_sweep = float("-inf")
    #: The epoch read last (``epoch()``), what the server signs into new tokens.
    known_epoch: str | None = None

    def __init__(self, *, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock

    async def claim(
        self,
        key: str,
        *,
        expires_at: float | None,
        owner: str = "",
        lease_until: float | None = None,
        epoch: str | None = None,
    ) -> bool:
        """Mark ``key`` consumed. True if this call claimed it; False if it already was.

        Must be atomic: of two concurrent claims of one key, exactly one returns True. A
        record that is still pending (never started) past its ``lease_until``, or past its
        ``expires_at``, counts as absent. With an ``epoch`` (``""``: a token issued without
        one) that is not the store's, nothing is claimed: ``ApprovalStoreResetError``.
        """
        return await self._claim(Claim(key, expires_at, owner, lease_until, self._clock(), epoch))

    @abc.abstractmethod
    async def _claim(self, claim: Claim) -> bool:
        """``claim`` as of ``claim.now``."""

    async def epoch(self) -> str | None:
        """The store's epoch, made and kept in the store on first use (``None``: this store
        keeps none, and claims are not checked against one); also kept in ``known_epoch``."""
        self.known_epoch = await self._epoch()
        return self.known_epoch

    async def _epoch(self) -> str | None:
        """Read the store's epoch, making it (atomically: of two makers one wins) if the
        store has none. The default keeps none."""
        return None

    def _sweep_due(self, now: float) -> bool:
        """Whether to sweep expired records now (at most once every ``_SWEEP_EVERY``)."""
        if now - self._last_sweep < self._SWEEP_EVERY:
            return False
        self._last_sweep = now
        return True

    async def mark_started(
        self, key: str, *, owner: str = "", lease_until: float | None = None
    ) -> bool:
        """Record that the tool of ``owner``'s claim is starting now (its lease renewed to
        ``lease_until``); False if the claim is no longer ``owner``'s (its lease ran out and
        another claim took it): then the tool must not start. Stores without leases keep
        this default."""
        return True

    async def renew(  # noqa: B027 - optional hook: stores without leases renew nothing
        self, keys: Collection[str], *, owner: str, lease_until: float | None
    ) -> None:
        """Extend to ``lease_until`` the leases of ``owner``'s records among ``keys`` that
        have no result yet (pending or started); others' records are left as they are.
        ``None`` makes them hold for good (until ``expires_at``): the answer was used."""

    @abc.abstractmethod
    async def release(self, key: str, *, owner: str = "", started: bool = False) -> None:
        """Undo a claim whose tool never started (so the answer can be sent again). With an
        ``owner``, only that owner's claim is released. A record marked started is kept (its tool
        may have run) unless ``started=True``: the caller knows the tool never began (the request
        was cancelled between the mark and the tool's first line), and then only ``owner``'s
        started record without a result is released. A record with a result is never released.

        ``started=True`` needs an ``owner`` (``ValueError`` without one): another owner's
        started record is never released. Atomic where the store allows it."""

    @abc.abstractmethod
    async def record_result(self, key: str, result: str) -> None:
        """Keep the tool result (the ``TOOL_CALL_RESULT`` content) of a claimed interrupt."""

    @abc.abstractmethod
    async def record(self, key: str) -> ClaimRecord | None:
        """What the store holds for ``key`` (``None``: nothing), as it is now."""

    async def get_result(self, key: str) -> str | None:
        """The result kept for ``key``, or ``None`` if there is none (yet)."""
        held = await self.record(key)
        return None if held is None else held.result

    async def aclose(self) -> None:  # noqa: B027 - optional hook, nothing to close by default
        """Close connections the store holds (the server calls it at shutdown)."""
