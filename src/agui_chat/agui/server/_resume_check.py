"""Checking a ``resume`` and turning it into the answers the tool loop expects.

Every entry's ``interruptId`` must be a token this server signed, for this thread; the
payload must fit the approval convention or the question's schema; edits only where
offered. Then each entry becomes a request/answer pair built from the *verified* token
(never from call data the client sent), handed to the tool loop's pairing function as it
is: no history is rebuilt for the loop to find the answers in again (the loop puts the
calls the client did not re-send, as Agent Framework clients do, where the model sees
them). The consumed-approvals store is claimed before anything runs, so a replayed resume runs
nothing twice: it gets the result kept from the first time instead.

Every check that can refuse a resume runs *before* the claim (nothing refused consumes an
approval): the tokens, the payloads, the pause's coverage, ambiguous call ids anywhere in
the history, an approval and a question for the same call, and finally the tool loop's own
pairing function on the verified pairs. A claim is pending (with a lease) until its
tool starts; the server releases it if the tool never does.

An interrupt past its expiry can still be cancelled (an approval also rejected) for
``ANSWER_RETENTION``; after that every answer to it is refused (``APPROVAL_STALE`` /
``INTERRUPT_STALE``). The store keeps each consumed record until the same moment, so no
answer is ever accepted once its record may be gone.

Anything wrong raises :class:`ResumeRejected` with a code; nothing has run by then, and
nothing stays claimed.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from ag_ui.core import ResumeEntry, RunAgentInput

from ..._approval_payload import ApprovalPayloadError, read_approval_payload
from ..._contents import FunctionCallContent
from ..._exceptions import (
    ApprovalStoreError,
    DuplicateResponseError,
    ExpiredRequestError,
    HumanInTheLoopError,
    InvalidResponseError,
    ToolArgumentsError,
    UnansweredRequestError,
    UnknownResponseError,
)
from ..._hitl_contents import CANCELLED_REASON
from ..._messages import ChatMessage
from ..._schema import schema_errors
from ..._tools import AIFunction, AITool
from ...middleware._pairs import VerifiedPair
from ...middleware._resume import plan_resume
from ...stores import ApprovalStore
from ._signing import InterruptClaims, InterruptSigner, TokenError, canonical_json, pause_digest
from ._verified_pairs import Answer, HistoryIndex, index_history, pairs_of, run_history

__all__ = [
    "ANSWER_RETENTION",
    "CLAIM_LEASE",
    "RESUME_ERRORS",
    "CheckedResume",
    "ResumeRejected",
    "check_resume",
]

#: How long past its expiry an interrupt may still be cancelled (or an approval rejected).
#: After it every answer, a cancel too, is refused with ``APPROVAL_STALE`` or
#: ``INTERRUPT_STALE``; the consumed-approvals store is told to keep each record exactly
#: that long (``expires_at`` = expiry + retention), so a consumed answer can never be
#: accepted again. Interrupts without an expiry are never stale and their records are kept.
ANSWER_RETENTION = timedelta(hours=1)

#: How long a claim whose tool has not started yet holds. A process that dies between the
#: claim and the tool's start leaves a pending claim behind; past its lease another resume
#: may take it over, so the person's answer is not lost. It must exceed the time from the
#: claim to the tool's start (the tool loop runs a resumed call before calling the model).
CLAIM_LEASE = timedelta(seconds=30)

#: Where the check reads the time (epoch seconds); tests replace it with a fake clock.
_clock: Callable[[], float] = time.time


class ResumeRejected(Exception):
    """A resume the server will not act on; ``code`` and ``message`` go into ``RUN_ERROR``
    (both are safe to show: they name what is wrong, never internals)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


@dataclass
class CheckedResume:
    """A resume that passed every check.

    ``pairs`` are the verified answers the tool loop resumes with (hand them over with
    ``resume_with``); ``messages`` is the client's history with the results kept for
    replayed answers after their calls; ``claimed`` maps a
    call id to its store key (record its result there), claimed in the store under
    ``owner`` (``unbound``: the keys of answers to questions no tool call asked, which stay
    claimed whatever happens); ``replayed`` are results kept from an earlier use of the same
    answers, to emit again; ``calls`` and ``answers`` are what a tool asking again needs to
    be bound to (by call id). ``needs_model`` is false when the resume only replays: then
    nothing runs and the model is not called.
    """

    messages: list[ChatMessage]
    owner: str = ""
    claimed: dict[str, str] = field(default_factory=dict)
    unbound: set[str] = field(default_factory=set)
    replayed: list[tuple[str, str]] = field(default_factory=list)
    calls: dict[str, FunctionCallContent] = field(default_factory=dict)
    answers: dict[str, list[list[Any]]] = field(default_factory=dict)
    needs_model: bool = True
    pairs: list[VerifiedPair] = field(default_factory=list)


async def check_resume(
    run_input: RunAgentInput,
    messages: Sequence[ChatMessage],
    *,
    signer: InterruptSigner,
    store: ApprovalStore,
    functions: Mapping[str, AITool],
    lease: timedelta = CLAIM_LEASE,
) -> CheckedResume:
    """Verify ``run_input.resume``, claim its answers and rebuild them into ``messages``.

    Every refusal happens before the claim; a claim that fails half way is undone."""
    now = _clock()
    answers = [
        _verify(i, entry, run_input.thread_id, signer, functions, now)
        for i, entry in enumerate(run_input.resume or [])
    ]
    _check_distinct(answers)
    _check_coverage(answers)
    index = index_history(messages)
    for answer in answers:
        call_id = answer.claims.call_id
        existing = index.calls.get(call_id) if call_id is not None else None
        if existing is not None:
            _check_matches(answer, existing[2])
    active = [a for a in answers if a.claims.call_id not in index.answered]
    _check_unambiguous(active, index)
    _check_pairs(messages, pairs_of(active, index.calls), functions)
    owner = secrets.token_hex(8)
    lease_until = _clock() + lease.total_seconds()
    fresh, replayed = await _claim_to_the_end(active, signer, store, owner, lease_until)

    plan = CheckedResume(messages=[], owner=owner)
    for answer in active:
        if answer.claims.call_id is not None and answer.claims.tool_name is not None:
            call_id = answer.claims.call_id
            plan.calls[call_id] = FunctionCallContent(
                call_id, answer.claims.tool_name, answer.arguments
            )
            if answer.claims.kind == "question":
                question = answer.claims.question or {}
                # (a cancelled answer's payload is None: _read_question dropped it); the
                # question's message and schema go with it: the answer is bound to them
                entry = [
                    question.get("key"),
                    answer.status,
                    answer.payload,
                    question.get("message"),
                    question.get("schema"),
                ]
                plan.answers[call_id] = [*answer.claims.answers, entry]
    for answer, key in fresh:
        if answer.claims.call_id is None:
            plan.unbound.add(key)  # a question no tool asked: no tool start to wait for
        plan.claimed[answer.claims.call_id or str(answer.claims.slot)] = key
    plan.replayed = [(a.claims.call_id, result) for a, result in replayed if a.claims.call_id]
    plan.needs_model = bool(fresh) or not replayed
    plan.pairs = pairs_of([a for a, _ in fresh], index.calls)
    plan.messages = run_history(messages, index.calls, [a for a, _ in fresh], replayed)
    return plan


# -- verification ----------------------------------------------------------------------------


def _verify(
    index: int,
    entry: ResumeEntry,
    thread_id: str,
    signer: InterruptSigner,
    functions: Mapping[str, AITool],
    now: float,
) -> Answer:
    where = f"resume[{index}]"
    try:
        claims = signer.verify(entry.interrupt_id)
    except TokenError as exc:
        if exc.reason == "unknown":
            raise ResumeRejected(
                "RESUME_UNKNOWN_INTERRUPT",
                f"{where}.interruptId names no interrupt this server issued",
            ) from None
        prefix = "APPROVAL" if exc.kind == "approval" else "INTERRUPT"
        if exc.reason == "audience":
            raise ResumeRejected(
                f"{prefix}_AUDIENCE_MISMATCH",
                f"{where}.interruptId was issued by another server (another audience) that "
                "shares this server's signing key; only the server that asked can take the "
                "answer",
            ) from None
        if exc.reason == "other_key":
            raise ResumeRejected(
                f"{prefix}_KEY_CHANGED",
                f"{where}.interruptId was issued under another signing key (the server was "
                "restarted with a new key, or its key changed); ask the person again",
            ) from None
        raise ResumeRejected(
            f"{prefix}_FORGED",
            f"{where}.interruptId was altered or not issued by this server",
        ) from None
    answer = Answer(index, entry.interrupt_id, claims, entry.status, entry.payload)
    if claims.thread_id != thread_id:
        raise ResumeRejected(
            f"{answer.prefix}_THREAD_MISMATCH",
            f"{where} answers an interrupt of another thread",
        )
    _check_not_stale(answer, now)
    moment = datetime.fromtimestamp(now, timezone.utc)
    function: AIFunction | None = None
    if claims.tool_name is not None:
        tool = functions.get(claims.tool_name)
        if not isinstance(tool, AIFunction):
            raise ResumeRejected(
                "RESUME_UNKNOWN_TOOL",
                f"{where} answers a call to tool {claims.tool_name!r}, which this server "
                "does not run",
            )
        function = tool
    if claims.kind == "approval":
        _read_approval(answer, where, function, moment)
    else:
        _read_question(answer, where, moment)
    return answer


def _answerable_until(claims: InterruptClaims) -> float | None:
    """When every answer to the interrupt starts being refused (and its consumed record
    may be dropped): its expiry plus ``ANSWER_RETENTION``; ``None`` if it never expires."""
    if claims.expires_at is None:
        return None
    return float(claims.expires_at) + ANSWER_RETENTION.total_seconds()


def _check_not_stale(answer: Answer, now: float) -> None:
    until = _answerable_until(answer.claims)
    if until is not None and now >= until:
        what = "an approval request" if answer.claims.kind == "approval" else "a question"
        raise ResumeRejected(
            f"{answer.prefix}_STALE",
            f"resume[{answer.index}] answers {what} that expired more than "
            f"{_describe(ANSWER_RETENTION)} ago; it can no longer be answered, not even "
            "cancelled",
        )


def _describe(span: timedelta) -> str:
    seconds = int(span.total_seconds())
    if seconds % 3600 == 0:
        return f"{seconds // 3600} hour(s)"
    if seconds % 60 == 0:
        return f"{seconds // 60} minute(s)"
    return f"{seconds} second(s)"


def _read_approval(answer: Answer, where: str, function: AIFunction | None, now: datetime) -> None:
    if answer.status == "cancelled":
        # A cancelled approval is a rejection, as ToolApprovalRequestContent.cancel() is
        # in process.
        answer.reason = CANCELLED_REASON
        return
    # The one approval payload model reads it in full, or the resume is refused: a key it
    # does not know (an edit under ``edited_args``) must never leave the call unedited.
    try:
        payload = read_approval_payload(answer.payload, where=f"{where}.payload")
    except ApprovalPayloadError as exc:
        if exc.unknown_keys:
            raise ResumeRejected("RESUME_UNKNOWN_PAYLOAD_KEY", str(exc)) from None
        raise ResumeRejected("RESUME_INVALID_PAYLOAD", str(exc)) from None
    answer.approved = payload.approved
    answer.reason = payload.reason
    edited = payload.edited_args
    if answer.approved and answer.claims.is_expired(now):
        raise ResumeRejected(
            "APPROVAL_EXPIRED",
            f"{where} approves a request that has expired; it can only be rejected or cancelled",
        )
    if edited is None:
        return
    if not answer.claims.allow_edits:
        raise ResumeRejected(
            "APPROVAL_EDIT_NOT_ALLOWED",
            f"{where} edits the arguments of a call whose approval did not offer editing",
        )
    assert function is not None
    try:
        function.validate_arguments(edited)
    except ToolArgumentsError as exc:
        raise ResumeRejected(
            "RESUME_INVALID_PAYLOAD", f"{where}.payload.editedArgs: {exc}"
        ) from None
    answer.edited_arguments = dict(edited)


def _read_question(answer: Answer, where: str, now: datetime) -> None:
    if answer.status == "cancelled":
        answer.payload = None
        return
    if answer.claims.is_expired(now):
        raise ResumeRejected(
            "INTERRUPT_EXPIRED",
            f"{where} answers a question that has expired; it can only be cancelled",
        )
    schema = (answer.claims.question or {}).get("schema")
    if isinstance(schema, Mapping):
        errors = schema_errors(answer.payload, schema)
        if errors:
            detail = "; ".join(errors)[:300]
            raise ResumeRejected(
                "RESUME_INVALID_PAYLOAD",
                f"{where}.payload does not match the question's response schema: {detail}",
            )


def _check_distinct(answers: Sequence[Answer]) -> None:
    seen: set[tuple[str, str | None]] = set()
    for answer in answers:
        if answer.claims.slot in seen:
            raise ResumeRejected(
                "RESUME_DUPLICATE_ANSWER",
                f"resume[{answer.index}] answers an interrupt that an earlier entry answers",
            )
        seen.add(answer.claims.slot)


def _check_coverage(answers: Sequence[Answer]) -> None:
    """Every interrupt of a paused run must be answered in one go: the answers naming one
    pause must be exactly its slots (by number, and by their digest, which the tokens carry
    in place of a list). Acting on part of a pause is what the spec forbids."""
    pauses: dict[str, tuple[int, list[tuple[str, str | None]]]] = {}
    for answer in answers:
        if answer.claims.pause is not None:
            size, slots = pauses.setdefault(answer.claims.pause, (answer.claims.pause_size, []))
            slots.append(answer.claims.slot)
    missing = 0
    for digest, (size, slots) in pauses.items():
        if len(slots) != size or pause_digest(slots) != digest:
            missing += max(size - len(slots), 1)
    if missing:
        raise ResumeRejected(
            "RESUME_INCOMPLETE",
            f"the resume leaves {missing} interrupt(s) of the paused run unanswered; "
            "answer every interrupt in one go",
        )


def _check_unambiguous(answers: Sequence[Answer], index: HistoryIndex) -> None:
    """Refuse what the tool loop could not pair safely, before anything is claimed: a call id
    that two different calls use anywhere in the history, or that an approval and a
    question of this resume both name."""
    kinds: dict[str, set[str]] = {}
    for answer in answers:
        call_id = answer.claims.call_id
        if call_id is None:
            continue
        kinds.setdefault(call_id, set()).add(answer.claims.kind)
        if call_id in index.ambiguous:
            raise ResumeRejected(
                "RESUME_INVALID_PAYLOAD",
                f"resume[{answer.index}]: the history holds more than one different call with "
                f"id {call_id!r}, so the answer is ambiguous; nothing was run (each tool call "
                "needs its own id)",
            )
    shared = sorted(c for c, k in kinds.items() if len(k) > 1)
    if shared:
        raise ResumeRejected(
            "RESUME_INVALID_PAYLOAD",
            f"the resume answers both an approval and a question for tool call {shared[0]!r}; "
            "answer the interrupts of the latest pause only",
        )


#: How the tool loop's refusals of a resume read on the wire (``RUN_ERROR`` code, message).
RESUME_ERRORS: tuple[tuple[type[HumanInTheLoopError], str, str], ...] = (
    (UnansweredRequestError, "RESUME_INCOMPLETE", "The resume leaves a request unanswered."),
    (DuplicateResponseError, "RESUME_DUPLICATE_ANSWER", "The resume answers a request twice."),
    (UnknownResponseError, "RESUME_UNKNOWN_INTERRUPT", "The resume answers an unknown request."),
    (ExpiredRequestError, "RESUME_EXPIRED", "The resume answers a request that has expired."),
    (InvalidResponseError, "RESUME_INVALID_PAYLOAD", "The resume carries an invalid answer."),
)


def _check_pairs(
    messages: Sequence[ChatMessage],
    pairs: Sequence[VerifiedPair],
    functions: Mapping[str, AITool],
) -> None:
    """Put the verified pairs through the tool loop's pairing function before anything is
    claimed: whatever it would refuse is refused here, with the code the server gives that
    refusal."""
    try:
        plan_resume(messages, functions, pairs)
    except HumanInTheLoopError as exc:
        for kind, code, message in RESUME_ERRORS:
            if isinstance(exc, kind):
                raise ResumeRejected(code, message) from None
        raise ResumeRejected(
            "RESUME_INVALID_PAYLOAD", "The resume carries an invalid answer."
        ) from None


def _check_matches(answer: Answer, existing: FunctionCallContent) -> None:
    """A call the client re-sent must be the call the token vouches for."""
    claims = answer.claims
    if existing.name != claims.tool_name or (
        claims.kind == "approval"
        and (
            existing.arguments is None
            or canonical_json(existing.arguments) != canonical_json(claims.arguments or {})
        )
    ):
        raise ResumeRejected(
            f"{answer.prefix}_CALL_MISMATCH",
            f"resume[{answer.index}]: the history's tool call {claims.call_id!r} differs from "
            "the call that was approved",
        )


async def _claim_to_the_end(
    answers: Sequence[Answer],
    signer: InterruptSigner,
    store: ApprovalStore,
    owner: str,
    lease_until: float,
) -> tuple[list[tuple[Answer, str]], list[tuple[Answer, str]]]:
    """``_claim``, carried to its end even if the run is cancelled meanwhile (the client
    left): a networked store may already have written a claim whose reply is still on its
    way. The claims made are then released, since nothing will run them, so the same
    answers can be sent again instead of being refused as already used."""
    claiming = asyncio.ensure_future(_claim(answers, signer, store, owner, lease_until))
    try:
        return await asyncio.shield(claiming)
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):
            fresh, _ = await claiming
            for _, key in fresh:
                await store.release(key, owner=owner)
        raise


async def _claim(
    answers: Sequence[Answer],
    signer: InterruptSigner,
    store: ApprovalStore,
    owner: str,
    lease_until: float,
) -> tuple[list[tuple[Answer, str]], list[tuple[Answer, str]]]:
    """Claim every answer in the store: (fresh answers with their keys, replays with the
    result kept for them). An answer already claimed without a kept result refuses the
    whole resume, and the claims made here are released; so does a store that cannot be
    reached (``APPROVAL_STORE_UNAVAILABLE``)."""
    fresh: list[tuple[Answer, str]] = []
    replayed: list[tuple[Answer, str]] = []
    try:
        for answer in answers:
            key = signer.fingerprint(answer.token)
            expires_at = _answerable_until(answer.claims)
            if await store.claim(key, expires_at=expires_at, owner=owner, lease_until=lease_until):
                fresh.append((answer, key))
                continue
            kept = await store.get_result(key)
            if kept is None:
                raise ResumeRejected(
                    "RESUME_ALREADY_CONSUMED",
                    f"resume[{answer.index}] was already used, and that run left no result "
                    "(it may still be running, or it stopped while the tool ran)",
                )
            replayed.append((answer, kept))
        # Checked again now that the claims are made: a record the store dropped because
        # its time ran out while this check was under way must not pass for a fresh one.
        now = _clock()
        for answer in answers:
            _check_not_stale(answer, now)
    except (ResumeRejected, ApprovalStoreError) as exc:
        with contextlib.suppress(ApprovalStoreError):
            for _, claimed in fresh:
                await store.release(claimed, owner=owner)
        if isinstance(exc, ApprovalStoreError):
            raise ResumeRejected(
                "APPROVAL_STORE_UNAVAILABLE",
                "the approval store cannot be reached; nothing was run and the answer was not "
                "used: send the same answer again once the store is back",
            ) from exc
        raise
    return fresh, replayed
