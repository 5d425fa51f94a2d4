"""A claim's whole life, in one object: the server's side of the approval store.

:class:`Claims` holds the claims of one resumed run, per call: :meth:`Claims.take` claims
every answer (or finds the result a first run kept), :meth:`~Claims.starting` marks a call's
claim started just before its tool's first line, a timer renews the leases while the run
lasts, :meth:`~Claims.keep_result` keeps each result for a replay, and :meth:`~Claims.settle`
leaves each claim as a re-sent answer must find it. What a cancelled request does at each
step:

- while claiming: the claim is finished, then released (the answer may be sent again);
- claimed, tool not started: released;
- while its started mark is being written: the mark is finished, then released all the same
  (``release(..., started=True)``): the tool's first line never ran, so the answer runs once
  later instead of being lost;
- tool started, no result: ``LOST_RESULT`` is kept (its effect is unknown; never run again);
- while its result is being kept: the result is kept all the same.

With a store that keeps governance records, each decision's audit record is written in the
same atomic step as its use: a call's with its "started" mark (``start_audited``), a
rejection's with its kept result; the outcome (``ran``, ``failed``, ``lost``) with the result.
So no tool starts without its record, and a claim released unused leaves none (a cancel
that lands while the mark is being written withdraws the record the mark brought, before
the claim is released: the answer may then run once later, under a record of its own).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import secrets
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import replace
from datetime import timedelta

from ..._contents import FunctionCallContent
from ..._exceptions import (
    ApprovalStoreError,
    ApprovalStoreResetError,
    ApprovalStoreValueError,
    ConfigurationError,
)
from ...consent import _rules
from ...consent._audit import AuditDraft, Outcome, Verdict
from ...consent._oversight import Oversight
from ...middleware._tool_tracing import ToolTracing
from ...stores import ApprovalStore, ClaimRecord, InMemoryApprovalStore, store_from_url
from ._resume_check import (
    Answer,
    ResumeRejected,
    check_not_stale,
    store_refusal,
)

_log = logging.getLogger("agui_chat.server")

#: How long a claim holds unless its run renews it (every third of it): past it, a claim
#: whose tool has not started may be taken over by another resume (a process that died
#: before starting the tool does not lose the person's answer), and a started one is lost.
CLAIM_LEASE = timedelta(seconds=15)

#: The result a replay gives a call whose tool started in a process that died before it
#: kept the result: the tool is never run again, and the model is told so.
LOST_RESULT = (
    "The tool was started for this call, but the server running it stopped before it "
    "reported a result; it may or may not have taken effect, and it was not run again."
)

#: The result a replay gives a call whose tool ran but whose result the store could not hold
#: (over its size limit): the tool is never run again, and the model is told so.
UNKEPT_RESULT = (
    "The tool ran for this call, but its result could not be kept by the approval store "
    "(too large), so it cannot be given again; the tool was not run again."
)

_FIXED_KEY_NEEDS_A_STORE = (
    "AGUIServer has a fixed signing key (signing_key or AGUI_CHAT_SIGNING_KEY) but no shared "
    "approval store: an in-memory one is neither shared by other workers nor kept across a "
    "restart, so an approval could run its tool twice. Pass approval_store='sqlite:///"
    "approvals.db' (one host), 'redis://host:6379/0' (several machines), or "
    "InMemoryApprovalStore() for one process that never restarts (tests)."
)


def open_store(store: ApprovalStore | str | None, *, fixed_key: bool) -> tuple[ApprovalStore, bool]:
    """The store to use and whether the server owns it (so closes it). ``None`` with a fixed
    key is refused (``ConfigurationError``): every process holding the key must share the store."""
    if store is None:
        if fixed_key:
            raise ConfigurationError(_FIXED_KEY_NEEDS_A_STORE)
        return InMemoryApprovalStore(), True
    if isinstance(store, str):
        return store_from_url(store), True
    return store, False


async def keep_result(
    store: ApprovalStore,
    key: str,
    result: str,
    *,
    audit: AuditDraft | None = None,
    outcome: tuple[int | str, Outcome] | None = None,
) -> None:
    """Keep ``result`` under ``key`` (with the record ``audit`` or ``outcome`` it brings,
    :meth:`ApprovalStore.record_result`); one the store cannot hold (too large) is kept as
    :data:`UNKEPT_RESULT`, so a replay says the tool ran instead of waiting out a lease and
    calling it lost."""
    try:
        await store.record_result(key, result, audit=audit, outcome=outcome)
    except ApprovalStoreValueError:
        _log.exception("the approval store cannot hold the result kept under %s", key)
        await store.record_result(key, UNKEPT_RESULT, audit=audit, outcome=outcome)


class Claims:
    """The claims of one resumed run (``claimed``: call id -> store key, under ``owner``;
    an answer to a question no tool asked under its slot, in ``unbound``: used once), the
    answers claimed now (``fresh``) and the results a first run kept for the others
    (``replayed``)."""

    def __init__(self, store: ApprovalStore, lease: timedelta) -> None:
        self.store = store
        self.owner = secrets.token_hex(8)
        self.lease = lease.total_seconds()
        self.claimed: dict[str, str] = {}
        self.unbound: set[str] = set()
        self.replayed: list[tuple[Answer, str]] = []
        self.fresh: list[Answer] = []
        self._starting: dict[str, asyncio.Future[bool]] = {}  # the marks asked for, once each
        self._running: set[str] = set()  # the calls whose tool may have started
        self._resulted: set[str] = set()  # the calls whose result is kept (or being kept)
        # A timer, not a sleeping task: most runs end before the first renewal is due.
        self._timer: asyncio.TimerHandle | None = None
        self._renewal: asyncio.Future[None] | None = None
        self._settled = False
        # What was decided about each call (its audit record), where, and each record's seq.
        self._oversight: Oversight | None = None
        self._verdicts: dict[str, Verdict] = {}
        self._seqs: dict[str, int] = {}
        self._telemetry: ToolTracing | None = None

    def oversee(
        self, oversight: Oversight, verdicts: Mapping[str, Verdict], telemetry: ToolTracing
    ) -> None:
        """Record the ``verdicts`` of the claimed calls (call id -> verdict) in the store's
        audit trail, each in the same step as its claim's use."""
        self._oversight, self._verdicts, self._telemetry = oversight, dict(verdicts), telemetry

    def _lease_until(self) -> float:
        return _rules.clock() + self.lease

    # -- claim ---------------------------------------------------------------------------------

    @classmethod
    async def take(
        cls, store: ApprovalStore, answers: Sequence[Answer], lease: timedelta
    ) -> Claims:
        """Claim every answer, each on its own; a refusal (``ResumeRejected``: an answer held
        by a live claim, a store out of reach or one that lost its records) releases what
        was claimed. A request cancelled meanwhile finishes the claims, then releases them."""
        claims = cls(store, lease)
        if store.known_epoch is None:
            with contextlib.suppress(ApprovalStoreError):  # the claim below says it is down
                await store.epoch()
        claiming = asyncio.ensure_future(claims._claim_all(answers))
        try:
            await asyncio.shield(claiming)
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                await claiming
            await claims._release(list(claims.claimed.values()))
            raise
        except ResumeRejected:
            await claims._release(list(claims.claimed.values()))
            raise
        if claims.claimed:
            claims._renew_later()
        return claims

    async def _claim_all(self, answers: Sequence[Answer]) -> None:
        store, lease_until = self.store, self._lease_until()
        keeps_epoch = store.known_epoch is not None
        try:
            for answer in answers:
                key = answer.key
                epoch = await self._epoch_of(answer) if keeps_epoch else None
                slot = answer.claims.call_id or str(answer.claims.slot)
                if await store.claim(
                    key,
                    expires_at=answer.until,
                    owner=self.owner,
                    lease_until=lease_until,
                    epoch=epoch,
                ):
                    self.claimed[slot] = key
                    self.fresh.append(answer)
                    if answer.claims.call_id is None:
                        self.unbound.add(key)
                    continue
                held = await store.record(key)
                if held is not None and held.result is not None:
                    self.replayed.append((answer, held.result))
                elif held is not None and held.lost(_rules.clock()):
                    # Its worker died mid-tool: say so once, for every later replay and in
                    # the record of the decision (whichever worker finds it first).
                    if store.keeps_governance:
                        await store.record_result(key, LOST_RESULT, outcome=(key, "lost"))
                    self.replayed.append((answer, LOST_RESULT))
                else:
                    raise _held(answer, held, lease_until - _rules.clock())
            # Again, now the claims are made: a record the store dropped meanwhile, its time
            # run out, must not pass for a fresh one.
            now = _rules.clock()
            for answer in answers:
                check_not_stale(answer, now)
        except ApprovalStoreResetError as exc:
            with contextlib.suppress(ApprovalStoreError):
                await store.epoch()  # the interrupts issued from now on carry the new one
            raise ResumeRejected(
                "APPROVAL_STORE_RESET",
                "the approval store lost its records since these interrupts were issued (it "
                "has another epoch), so it cannot tell whether they were used; nothing was "
                "run: ask the person again",
            ) from exc
        except ApprovalStoreError as exc:
            raise store_refusal(exc, "nothing was run and the answer was not used") from exc

    async def _epoch_of(self, answer: Answer) -> str:
        """The epoch a claim of ``answer`` names: its token's; for a token issued while the
        store could not be reached, the one :meth:`ApprovalStore.epoch_for` gives."""
        claims = answer.claims
        if claims.store_epoch is not None:
            return claims.store_epoch
        return "" if claims.issued_at is None else await self.store.epoch_for(claims.issued_at)

    # -- start -----------------------------------------------------------------------------------

    async def starting(self, call: FunctionCallContent) -> None:
        """Mark a claimed call started in the store, just before its tool's first line;
        ``ResumeRejected`` (the tool does not start) if its claim lapsed and another resume
        took it, or the store is out of reach. Cancelled meanwhile, the tool never starts and
        :meth:`settle` releases the claim whatever the store wrote."""
        key = self.claimed.get(call.call_id)
        if key is None or call.call_id in self._starting:
            return
        verdict = self._verdicts.get(call.call_id)
        if self._oversight is None or verdict is None:
            mark = self.store.mark_started(key, owner=self.owner, lease_until=self._lease_until())
        else:
            mark = self._start_audited(call.call_id, key, verdict, self._oversight)
        marking = asyncio.ensure_future(mark)
        self._starting[call.call_id] = marking
        try:
            started = await asyncio.shield(marking)
        except ApprovalStoreError as exc:
            raise store_refusal(exc, "the tool was not started") from exc
        if not started:
            raise ResumeRejected(
                "RESUME_IN_PROGRESS",
                f"the claim on tool call {call.call_id!r} lapsed before its tool started and "
                "another resume took it; the tool was not started here",
                retry_after=self.lease,
            )
        # From here on the tool's first line runs without a suspension point between.
        self._running.add(call.call_id)

    async def _start_audited(
        self, call_id: str, key: str, verdict: Verdict, oversight: Oversight
    ) -> bool:
        """Mark the claim started with its decision's record; then keep the grant the approval
        asked for (a grant that cannot be kept is logged: the person is asked again later)."""
        if verdict.approver is None and verdict.decision in ("answered", "cancelled"):
            verdict = replace(verdict, approver=oversight.principal)  # who answered the question
        draft = oversight.draft(verdict, claim=key)
        seq = await self.store.start_audited(
            key, owner=self.owner, lease_until=self._lease_until(), audit=draft
        )
        if seq is None:
            return False
        self._seqs[call_id] = seq
        grant = oversight.grant_for(verdict)
        if grant is not None:
            try:
                await self.store.add_grant(grant)
            except ApprovalStoreError:
                _log.exception("could not keep the grant call %s's approval asked for", call_id)
                grant = None
        if self._telemetry is not None:
            self._telemetry.audited(verdict, grant)
        return True

    # -- renew -----------------------------------------------------------------------------------

    def _renew_later(self) -> None:
        self._timer = asyncio.get_running_loop().call_later(self.lease / 3, self._renew_now)

    def _renew_now(self) -> None:
        self._renewal = asyncio.ensure_future(self._renew())

    async def _renew(self) -> None:
        keys = list(self.claimed.values())
        try:
            await self.store.renew(keys, owner=self.owner, lease_until=self._lease_until())
        except ApprovalStoreError:  # the next renewal may reach it; a lost lease is safe
            _log.warning("could not renew the claims of resume %s", self.owner)
        if not self._settled:
            self._renew_later()

    # -- result ----------------------------------------------------------------------------------

    async def keep_result(
        self, call_id: str, result: str, *also: Awaitable[object], failed: bool = False
    ) -> None:
        """Keep the result of a claimed call for a replay, with its audit record's outcome
        (``failed``: the tool raised) or, for a rejection, the record itself; finished even if
        the request is cancelled meanwhile (``also``: awaitables to finish with it). A store
        error is logged: the claim stays, only the replay is lost."""
        key = self.claimed.get(call_id)
        if key is None or call_id in self._resulted:
            return
        self._resulted.add(call_id)
        seq, verdict = self._seqs.pop(call_id, None), self._verdicts.get(call_id)
        audit = None
        rejected = verdict is not None and verdict.decision == "rejected"
        if seq is None and rejected and self._oversight is not None:
            assert verdict is not None
            audit = self._oversight.draft(verdict, claim=key)  # a rejection: with its result
        outcome: tuple[int | str, Outcome] | None = None
        if seq is not None:
            outcome = (seq, "failed" if failed else "ran")
        kept = keep_result(self.store, key, result, audit=audit, outcome=outcome)
        keeping = asyncio.gather(kept, *also)
        try:
            await asyncio.shield(keeping)
        except ApprovalStoreError:
            _log.exception("could not keep the result of call %s", call_id)
            return
        if audit is not None and verdict is not None and self._telemetry is not None:
            self._telemetry.audited(verdict, None)

    # -- settle ----------------------------------------------------------------------------------

    async def settle(self, *, finished: bool) -> None:
        """At the end of the run: release the claims whose tool never began (the answer may be
        sent again), a mark cancelled half way included; a started call without a result
        keeps ``LOST_RESULT`` if the run broke off (its outcome is unknown), or holds for good
        if the run ``finished`` (its tool asked again: the answer was used); so do the
        ``unbound`` answers."""
        self._settled = True
        if self._timer is not None:
            self._timer.cancel()
        if self._renewal is not None:
            self._renewal.cancel()
        with contextlib.suppress(ApprovalStoreError, asyncio.CancelledError):
            await asyncio.shield(self._settle(finished))

    async def _settle(self, finished: bool) -> None:
        used = [key for key in self.claimed.values() if key in self.unbound]
        for call_id, key in self.claimed.items():
            if key in self.unbound or call_id in self._resulted:
                continue
            if call_id in self._running:
                seq = self._seqs.pop(call_id, None)
                if finished:  # its tool asked again: the answer was used, the tool ran
                    used.append(key)
                    if seq is not None:
                        await self.store.record_outcome(seq, "ran", None)
                else:
                    lost: tuple[int | str, Outcome] | None = None if seq is None else (seq, "lost")
                    await self.store.record_result(key, LOST_RESULT, outcome=lost)
                continue
            # The tool never began: release the claim whatever a mark under way wrote, once
            # that mark has landed (only this owner's record without a result is released).
            marking = self._starting.get(call_id)
            if marking is not None:
                with contextlib.suppress(Exception):
                    await marking
            seq = self._seqs.pop(call_id, None)
            if seq is not None:  # the mark and its record landed: the record is withdrawn
                await self.store.record_withdrawn(seq)
            await self.store.release(key, owner=self.owner, started=True)
        if used:
            await self.store.renew(used, owner=self.owner, lease_until=None)

    async def _release(self, keys: list[str]) -> None:
        with contextlib.suppress(ApprovalStoreError):
            for key in keys:
                await self.store.release(key, owner=self.owner)


def _held(answer: Answer, held: ClaimRecord | None, lease: float) -> ResumeRejected:
    """The refusal of an answer another claim holds: its tool running (the same answer
    sent twice), or a claim not started yet (a run about to start it, or a dead worker's
    waiting out its lease); either way, send the same answer again after the wait."""
    if held is not None and held.lease_until is None:
        return ResumeRejected(
            "RESUME_ALREADY_CONSUMED",
            f"resume[{answer.index}] was already used, and that run left no result to replay "
            "(its tool asked again, or the answer went to the model); nothing ran twice: ask "
            "the person again",
        )
    left = lease if held is None or held.lease_until is None else held.lease_until - _rules.clock()
    wait = math.floor(left) + 1  # the first whole second past the lease
    if held is not None and held.started:
        return ResumeRejected(
            "RESUME_IN_PROGRESS",
            f"resume[{answer.index}] is being run by another request now; nothing was run "
            "here: send the same answer again to get its result",
            retry_after=wait,
        )
    return ResumeRejected(
        "RESUME_CLAIM_HELD",
        f"resume[{answer.index}] is held by a claim whose tool has not started (a run "
        "starting it, or a worker that stopped, whose claim lapses with its lease); nothing "
        "was used: send the same answer again after the wait",
        retry_after=wait if held is not None else 1,
    )
