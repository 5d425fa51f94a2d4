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

Every store also keeps the **governance** records: the audit trail (an append-only hash
chain of :class:`AuditRecord` s, see ``consent/_audit.py``) and the remembered approvals
(:class:`Grant` s). A decision's record is written in the same atomic step as the claim's
use it belongs to: with the "started" mark for a call that runs
(:meth:`~ApprovalStore.start_audited`), with the kept result for a rejection, its outcome
with the result (:meth:`~ApprovalStore.record_result`), so no tool runs without its record
and no record says a call ran that never started. Sealing happens here, once; a store only
appends an entry if the chain's head is still the one it follows (else ``HeadMoved``, and
this class seals again on the new head), so workers never fork the chain.

An implementation defines ``_claim`` (with the ``epoch`` of its :class:`Claim`),
:meth:`~ApprovalStore.record`, ``_record_result``, :meth:`~ApprovalStore.release` and, with
leases, ``_mark_started`` and ``renew``; a store that keeps an epoch defines
:meth:`~ApprovalStore._epoch`; for the governance records ``_append``, ``_audit_head``,
``_audit_entries``, ``_put_grant``, ``_grants`` and :meth:`~ApprovalStore.revoke_grant`. The
shared contract tests (``tests/stores/test_store_contract.py``,
``tests/stores/test_governance_contract.py``) are parametrised over stores.
"""

from __future__ import annotations

import abc
import json
import math
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Collection
from dataclasses import dataclass
from datetime import datetime, timezone

from .._exceptions import AuditChainError
from ..consent._audit import (
    EMPTY_HEAD,
    AuditDraft,
    AuditEntry,
    AuditRecord,
    Outcome,
    entry_after,
    outcome_body,
    records,
    verify,
    withdrawn_body,
)
from ..consent._grants import Grant

__all__ = [
    "EPOCH_CLOCK_MARGIN",
    "ApprovalStore",
    "AuditEntry",
    "Claim",
    "ClaimRecord",
    "HeadMoved",
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


def result_from_text(text: str | None) -> str | None:
    """The result :func:`result_to_text` made ``text`` of, exactly (``None``: none kept)."""
    if text is None or not text.startswith(_ESCAPED):
        return text
    restored: str = json.loads(text[len(_ESCAPED) :])
    return restored


def _encodable(text: str) -> bool:
    """Whether ``text`` is valid Unicode text (no lone surrogate), so encodes as UTF-8."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class HeadMoved(Exception):
    """An audit entry was not appended: the chain's head is no longer the one it follows
    (another worker appended first). ``head`` is the head now (``None``: an empty chain)."""

    def __init__(self, head: tuple[int, str] | None) -> None:
        super().__init__("the audit chain's head moved")
        self.head = head


#: How many audit entries a store reads at a time.
AUDIT_PAGE = 500


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

    ``audit_arguments=False`` keeps only a digest of each call's arguments in the audit
    trail (``AuditRecord.arguments`` is ``None``; ``arguments_sha256`` stays).
    """

    #: Stores that sweep expired records do it at most this often (seconds).
    _SWEEP_EVERY = 60.0
    _last_sweep = float("-inf")
    #: The epoch read last (``epoch()``), what the server signs into new tokens.
    known_epoch: str | None = None

    def __init__(
        self, *, clock: Callable[[], float] = time.time, audit_arguments: bool = True
    ) -> None:
        self._clock = clock
        self.audit_arguments = audit_arguments
        #: The chain's head as last seen (``None``: not read yet); a stale one only costs a
        #: retry, since the store appends only after the head it names.
        self._head: tuple[int, str] | None = None

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
        another claim took it): then the tool must not start."""
        return await self._mark_started(key, owner, lease_until, None)

    async def start_audited(
        self, key: str, *, owner: str = "", lease_until: float | None = None, audit: AuditDraft
    ) -> int | None:
        """:meth:`mark_started` and the decision's audit record in one atomic step: the seq of
        the record (what :meth:`record_result`'s ``outcome`` names), or ``None`` (nothing
        written) if the claim is no longer ``owner``'s."""
        body = audit.body(now=self._clock(), keep_arguments=self.audit_arguments)
        entry = await self._chained(body, lambda e: self._mark_started(key, owner, lease_until, e))
        return None if entry is None else entry.seq

    async def _mark_started(
        self, key: str, owner: str, lease_until: float | None, entry: AuditEntry | None
    ) -> bool:
        """Mark ``owner``'s claim of ``key`` started and, if it is, append ``entry`` (after
        the head it names: ``HeadMoved`` and nothing written otherwise), atomically. Stores
        without leases only append."""
        if entry is not None:
            await self._append(entry)
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

    async def record_result(
        self,
        key: str,
        result: str,
        *,
        audit: AuditDraft | None = None,
        outcome: tuple[int | str, Outcome] | None = None,
    ) -> None:
        """Keep the tool result (the ``TOOL_CALL_RESULT`` content) of a claimed interrupt. In
        the same atomic step, if the record holds no result yet: ``audit``, the record of a
        decision whose use this result is (a rejection), or ``outcome`` (the seq
        :meth:`start_audited` gave, or ``key`` itself for the decision recorded with this
        claim, and ``ran``, ``failed`` or ``lost``) of the call that produced it: kept once,
        however many workers keep it."""
        if audit is not None:
            body = audit.body(now=self._clock(), keep_arguments=self.audit_arguments)
        elif outcome is not None:
            body = outcome_body(outcome[0], outcome[1], result, now=self._clock())
        else:
            await self._record_result(key, result, None)
            return
        await self._chained(body, lambda e: self._record_result(key, result, e))

    async def _record_result(self, key: str, result: str, entry: AuditEntry | None) -> object:
        """Keep ``result`` under ``key`` and, if the record held none yet, append ``entry``
        (after the head it names: ``HeadMoved`` and nothing written otherwise), atomically."""
        raise NotImplementedError(f"{type(self).__name__} must define record_result")

    @abc.abstractmethod
    async def record(self, key: str) -> ClaimRecord | None:
        """What the store holds for ``key`` (``None``: nothing), as it is now."""

    async def get_result(self, key: str) -> str | None:
        """The result kept for ``key``, or ``None`` if there is none (yet)."""
        held = await self.record(key)
        return None if held is None else held.result

    async def aclose(self) -> None:  # noqa: B027 - optional hook, nothing to close by default
        """Close connections the store holds (the server calls it at shutdown)."""

    # -- the audit trail -------------------------------------------------------------------------

    async def append_audit(self, audit: AuditDraft) -> int:
        """Append a decision's record on its own (the in-process tool loop, a call a grant let
        run); its seq, for :meth:`record_outcome`."""
        body = audit.body(now=self._clock(), keep_arguments=self.audit_arguments)
        entry = await self._chained(body, self._append)
        assert entry is not None
        return entry.seq

    async def record_outcome(self, seq: int, outcome: Outcome, result: str | None) -> None:
        """Append what became of decision ``seq``: ``ran`` or ``failed`` (with the result's
        digest) or ``lost``."""
        await self._chained(outcome_body(seq, outcome, result, now=self._clock()), self._append)

    async def record_withdrawn(self, seq: int) -> None:
        """Withdraw decision ``seq``: its tool never started after all (a request cancelled
        while the "started" mark was being written); ``audit()`` no longer shows it."""
        await self._chained(withdrawn_body(seq, now=self._clock()), self._append)

    async def _chained(
        self, body: dict[str, object], put: Callable[[AuditEntry], Awaitable[object]]
    ) -> AuditEntry | None:
        """Seal ``body`` after the head as last seen and ``put`` it; on ``HeadMoved``, again
        after the head the store names. The entry (``None``: ``put`` declined, writing
        nothing: ``False`` for a claim no longer its owner's)."""
        for _ in range(_CHAIN_ATTEMPTS):
            head = self._head if self._head is not None else await self._audit_head()
            entry = entry_after(head or EMPTY_HEAD, body)
            try:
                done = await put(entry)
            except HeadMoved as moved:
                self._head = moved.head or EMPTY_HEAD
                continue
            if done is False:
                return None
            self._head = (entry.seq, entry.hash)
            return entry
        raise AuditChainError(
            f"could not append to the audit trail after {_CHAIN_ATTEMPTS} attempts (its head "
            "keeps moving); nothing was written",
            seq=(self._head or EMPTY_HEAD)[0] + 1,
        )

    async def audit(
        self, *, thread_id: str | None = None, since: datetime | int | None = None
    ) -> AsyncIterator[AuditRecord]:
        """The audit records, oldest first, each decision with its outcome: of one thread
        (``thread_id``), from a moment on (``since``: a ``datetime``) or after a seq (an
        ``int``)."""
        entries = [e async for e in self._all_entries()]
        for record in records(entries):
            if thread_id is not None and record.thread_id != thread_id:
                continue
            if isinstance(since, datetime) and record.time < _aware(since):
                continue
            if isinstance(since, int) and record.seq <= since:
                continue
            yield record

    async def audit_head(self) -> tuple[int, str] | None:
        """The chain's head: the seq and hash of its last entry (``None``: nothing recorded).
        Copy it somewhere the store's writers cannot reach: a later :meth:`verify_audit` that
        passes, with the entry of that seq still of that hash, shows nothing up to it changed
        (a writer able to rewrite every entry and the head could re-seal the chain)."""
        return await self._audit_head()

    async def verify_audit(self) -> int:
        """Check the whole chain: the number of records checked; ``AuditChainError`` naming
        the first record altered, deleted or inserted, a trail cut short, or records past a
        head that was moved back or deleted."""
        for _ in range(_CHAIN_ATTEMPTS):
            head = await self._audit_head()
            entries = [e async for e in self._all_entries()]
            if await self._audit_head() != head:
                continue  # another worker appended meanwhile: read again
            last = 0 if head is None else head[0]
            beyond = [e for e in entries if e.seq > last]
            if beyond:
                raise AuditChainError(
                    f"audit record {beyond[0].seq} lies past the trail's head (record {last}): "
                    "the head was moved back or deleted",
                    seq=beyond[0].seq,
                )
            return verify(entries, head)
        raise AuditChainError(
            "the audit trail kept growing while it was read; verify it again when it is quieter",
            seq=0,
        )

    async def _all_entries(self) -> AsyncIterator[AuditEntry]:
        after = 0
        while True:
            page = await self._audit_entries(after, AUDIT_PAGE)
            for entry in page:
                yield entry
            if len(page) < AUDIT_PAGE:
                return
            after = page[-1].seq

    @property
    def keeps_governance(self) -> bool:
        """Whether this store keeps an audit trail and grants (a store of your own written
        before them does not: the server then keeps neither, and refuses ``remember``)."""
        return type(self)._append is not ApprovalStore._append

    async def _append(self, entry: AuditEntry) -> None:
        """Append ``entry`` if the chain's head is the one it follows (``entry.seq - 1`` and
        ``entry.prev_hash``), and make it the head; else ``HeadMoved``, nothing written."""
        raise self._no_governance()

    async def _audit_head(self) -> tuple[int, str] | None:
        """The chain's head (its last seq and hash), as the store keeps it apart from the
        entries; ``None`` for an empty chain."""
        raise self._no_governance()

    async def _audit_entries(self, after: int, limit: int) -> list[AuditEntry]:
        """Up to ``limit`` entries with a seq above ``after``, in seq order."""
        raise self._no_governance()

    def _no_governance(self) -> NotImplementedError:
        return NotImplementedError(
            f"{type(self).__name__} keeps no audit trail or grants (it defines no _append, "
            "_audit_head, _audit_entries, _put_grant, _grants and revoke_grant)"
        )

    # -- remembered approvals --------------------------------------------------------------------

    async def add_grant(self, grant: Grant) -> None:
        """Keep a remembered approval until it expires or is revoked."""
        await self._put_grant(grant)

    async def grants(
        self, *, thread_id: str | None = None, principal_id: str | None = None
    ) -> list[Grant]:
        """The live grants (not expired, not revoked), oldest first: those scoped to
        ``thread_id`` or to ``principal_id`` (either given: the grants that apply there; none:
        all)."""
        now = datetime.fromtimestamp(self._clock(), tz=timezone.utc)
        found = await self._grants(thread_id, principal_id)
        return sorted((g for g in found if g.expires > now), key=lambda g: (g.created, g.id))

    async def revoke_grant(self, grant_id: str) -> bool:
        """Revoke a grant at once, for every worker: ``True`` for a live grant, ``False`` for
        an unknown or already revoked one."""
        raise self._no_governance()

    async def _put_grant(self, grant: Grant) -> None:
        """Keep ``grant`` (a store may drop it once it has expired)."""
        raise self._no_governance()

    async def _grants(self, thread_id: str | None, principal_id: str | None) -> list[Grant]:
        """The unrevoked grants scoped to ``thread_id`` or to ``principal_id`` (neither: all);
        expired ones may be among them."""
        raise self._no_governance()


#: How many times an append is sealed again on a moved head before giving up.
_CHAIN_ATTEMPTS = 50


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)
