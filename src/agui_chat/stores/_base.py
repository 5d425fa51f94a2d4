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
life), which says when it was made (:func:`new_epoch`). Tokens carry the epoch current when
they were issued, and a claim names it: a store whose epoch differs lost its records since
(Redis restarted without persistence, evicted keys, a recreated file) and raises
``ApprovalStoreResetError`` instead of taking a used approval for a new one. The check is
part of the atomic claim. A token issued while the store could not be reached carries the
time it was issued instead; its claim names the store's epoch if that was made before the
token (:func:`epoch_made_before`), so the answer runs once the store is back with its
records.

A store keeps every result exactly as given: one that cannot hold some strings (NUL, lone
surrogates) keeps them through :func:`result_to_text` / :func:`result_from_text`. Its errors
say what failed: ``ApprovalStoreUnavailableError`` (an outage: the same call may succeed
later), ``ApprovalStoreValueError`` (a value it cannot hold) or
``ApprovalStoreMisconfiguredError`` (it refuses this server: permissions, a read-only file).

An implementation defines ``_claim`` (with the ``epoch`` of its :class:`Claim`),
:meth:`~ApprovalStore.record`, :meth:`~ApprovalStore.record_result`,
:meth:`~ApprovalStore.release` and, with leases, ``mark_started`` and ``renew``; a store that
keeps an epoch defines :meth:`~ApprovalStore._epoch`. The shared contract tests
(``tests/stores/test_store_contract.py``) are parametrised over stores.
"""

from __future__ import annotations

import abc
import json
import math
import secrets
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass

__all__ = [
    "EPOCH_CLOCK_MARGIN",
    "ApprovalStore",
    "Claim",
    "ClaimRecord",
    "check_release",
    "epoch_made_before",
    "new_epoch",
    "result_from_text",
    "result_to_text",
]


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


def new_epoch(now: float) -> str:
    """A fresh store epoch made at ``now`` (epoch seconds): 48 random bits (8 characters of
    base64url), a dot and the whole second it was made, which :func:`epoch_made_before`
    reads."""
    return f"{secrets.token_urlsafe(6)}.{math.floor(now)}"


#: How far apart the clocks of the servers and of whoever made a store's epoch may be, in
#: seconds: a token issued without an epoch is bound only to an epoch made at least this long
#: before it (a wider margin only asks again more often, never runs twice).
EPOCH_CLOCK_MARGIN = 30.0


def epoch_made_before(epoch: str, moment: float) -> bool:
    """Whether the store's ``epoch`` was made before ``moment`` (epoch seconds, with
    :data:`EPOCH_CLOCK_MARGIN`): then its records hold every claim made since ``moment``.

    This is what lets an answer to a pause issued while the store could not be reached (its
    token carries the time it was issued instead of an epoch) run once the store is back: every
    use of that token came after ``moment``, so a store whose records go back further holds
    them all, and its claim is as safe as with the epoch in the token. An epoch made later may
    have replaced records that held a use (Redis restarted empty, a recreated file): ask again.
    An epoch from before epochs said when they were made counts as made later."""
    _, dot, made = epoch.rpartition(".")
    return bool(dot) and made.isdigit() and int(made) <= moment - EPOCH_CLOCK_MARGIN


#: The mark of a result kept escaped: a Unicode noncharacter, which no text a store holds
#: begins with unless this module put it there (a result that begins with it is escaped too).
_ESCAPED = "\ufdd0"


def result_to_text(result: str) -> str:
    """``result`` as text every store can hold (valid UTF-8 without NUL, which PostgreSQL's
    ``text``, SQLite's UTF-8 and Redis's encoder need): itself when it already is, else the mark
    and its JSON (ASCII escapes: NUL as ``\\u0000``, a lone surrogate as ``\\ud800``).
    :func:`result_from_text` gives the exact string back."""
    if result.startswith(_ESCAPED) or "\x00" in result or not _encodable(result):
        return _ESCAPED + json.dumps(result)
    return result


def result_from_text(text: str) -> str:
    """The result :func:`result_to_text` made ``text`` of, exactly."""
    if text.startswith(_ESCAPED):
        restored: str = json.loads(text[len(_ESCAPED) :])
        return restored
    return text


def _encodable(text: str) -> bool:
    """Whether ``text`` is valid Unicode text (no lone surrogate), so encodes as UTF-8."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


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

    async def epoch_for(self, issued_at: float) -> str:
        """The epoch a claim of a token issued at ``issued_at`` (epoch seconds) without one (the
        store could not be reached then) may name: the store's epoch, read now, if it was made
        before then (:func:`epoch_made_before`), so its records hold every use of the token;
        else ``""``, which a claim refuses as reset (``ApprovalStoreResetError``)."""
        epoch = await self.epoch()
        return epoch if epoch is not None and epoch_made_before(epoch, issued_at) else ""

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
