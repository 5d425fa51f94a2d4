"""Checking a ``resume`` against the interrupt ids this server signed, and claiming it.

Each ``interruptId`` must be this server's token for this thread, not stale, its payload fit
the approval convention or the question's schema; the answers must cover their pause. The
pairs built from the tokens go through the tool loop's pairing function before the store is
claimed: nothing refused consumes an answer, and a replay gets the result kept the first
time. Anything wrong raises :class:`ResumeRejected`, and nothing stays claimed.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import secrets
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from ag_ui.core import ResumeEntry, RunAgentInput

from ..._approval_payload import ApprovalPayloadError, read_approval_payload
from ..._contents import FunctionCallContent
from ..._exceptions import (
    ApprovalStoreError,
    ApprovalStoreResetError,
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
from ...middleware._pairs import VerifiedPair, verified_pairs
from ...middleware._resume import plan_resume
from ...stores import ApprovalStore, ClaimRecord
from ._signing import InterruptClaims, InterruptSigner, TokenError, canonical_json, pause_digest
from ._verified_pairs import Answer, pairs_of, run_history, without_results

#: How long past its expiry an interrupt may still be cancelled (an approval rejected);
#: after it every answer is refused as stale, and the store keeps each consumed record
#: exactly that long. Interrupts without an expiry are never stale.
ANSWER_RETENTION = timedelta(hours=1)

#: How long a claim holds unless its run renews it (every third of it): past it, a claim
#: whose tool has not started may be taken over by another resume (a process that died
#: before starting the tool does not lose the person's answer), and a started one is lost.
CLAIM_LEASE = timedelta(seconds=15)

#: The wait (seconds) a refusal for a store out of reach asks for before the same answer.
STORE_RETRY_AFTER = 2.0

#: The result a replay gives a call whose tool started in a process that died before it
#: kept the result: the tool is never run again, and the model is told so.
LOST_RESULT = (
    "The tool was started for this call, but the server running it stopped before it "
    "reported a result; it may or may not have taken effect, and it was not run again."
)

#: Where the check reads the time (epoch seconds); tests replace it with a fake clock.
_clock: Callable[[], float] = time.time


class ResumeRejected(Exception):
    """A resume the server will not act on; ``code`` and ``message`` (safe to show) go into
    ``RUN_ERROR``, with ``retry_after`` (seconds) when the same answer may be sent again
    after a wait (``retryAfter`` and the ``Retry-After`` header)."""

    def __init__(self, code: str, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.retry_after = None if retry_after is None else max(1, math.ceil(retry_after))


@dataclass
class CheckedResume:
    """A resume that passed every check.

    ``pairs`` go to the tool loop (``resume_with``); ``messages`` is the client's history
    with the results kept for replayed answers; ``claimed`` maps a call id to its store key,
    claimed under ``owner`` (the keys in ``unbound``, answers to questions no tool call
    asked, stay claimed); ``replayed`` are kept results to emit again; ``calls`` and
    ``answers`` (by call id) bind a tool that asks again. Without ``needs_model`` the resume
    only replays. ``echoed``: the calls whose client-written results were dropped.
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
    echoed: list[str] = field(default_factory=list)


async def check_resume(
    run_input: RunAgentInput,
    messages: Sequence[ChatMessage],
    *,
    signer: InterruptSigner,
    store: ApprovalStore,
    functions: Mapping[str, AITool],
    lease: timedelta,
    check_results: Callable[[set[str]], Awaitable[None]],
) -> CheckedResume:
    """Verify ``run_input.resume``, then claim its answers (``ResumeRejected`` before);
    ``check_results`` (given the call ids answered) checks the history's other results."""
    now = _clock()
    answers = [
        _verify(i, entry, run_input.thread_id, signer, functions, now)
        for i, entry in enumerate(run_input.resume or [])
    ]
    _check_distinct(answers)
    _check_coverage(answers)
    records = verified_pairs(messages, ()).calls  # the history's calls and results, by id
    calls = {call_id: r.variants[0] for call_id, r in records.items() if r.variants}
    for answer in answers:
        if (call_id := answer.claims.call_id) in calls:
            record = records[call_id]  # an earlier call under its id: the id was reused
            _check_matches(answer, calls[call_id], len(record.variants) > 1 or record.answered)
    # A result the client wrote for a call an entry answers is never that call's result
    # (compatibility rule ``copilotkit-resume-echo``): the server's own answer replaces it.
    echoed = {c for a in answers if (c := a.claims.call_id) in records and records[c].answered}
    messages = without_results(messages, echoed)
    _check_unambiguous(answers, {c for c, r in records.items() if len(r.variants) > 1})
    _check_pairs(messages, pairs_of(answers, calls), functions)
    await check_results({a.claims.call_id for a in answers if a.claims.call_id is not None})
    if store.known_epoch is None:
        with contextlib.suppress(ApprovalStoreError):  # the claim below says it is down
            await store.epoch()
    owner = secrets.token_hex(8)
    lease_until = _clock() + lease.total_seconds()
    claiming = asyncio.ensure_future(_claim(answers, signer, store, owner, lease_until))
    try:
        fresh, replayed = await asyncio.shield(claiming)
    except asyncio.CancelledError:
        # The client left: finish the claim (a networked store may have written it), then
        # release it, so the same answers can be sent again.
        with contextlib.suppress(Exception):
            for _, key in (await claiming)[0]:
                await store.release(key, owner=owner)
        raise
    fresh_answers = [a for a, _ in fresh]
    plan = CheckedResume(
        messages=run_history(messages, calls, fresh_answers, replayed),
        owner=owner,
        # a question no tool asked is unbound: no tool start to wait for
        claimed={a.claims.call_id or str(a.claims.slot): key for a, key in fresh},
        unbound={key for a, key in fresh if a.claims.call_id is None},
        replayed=[(a.claims.call_id, kept) for a, kept in replayed if a.claims.call_id],
        needs_model=bool(fresh) or not replayed,
        pairs=pairs_of(fresh_answers, calls),
        echoed=sorted(echoed),
    )
    for answer in answers:
        claims = answer.claims
        if claims.call_id is None or claims.tool_name is None:
            continue
        plan.calls[claims.call_id] = FunctionCallContent(
            claims.call_id, claims.tool_name, answer.arguments
        )
        if claims.kind == "question":
            # bound to the question's message and schema (a cancel's payload is None)
            q = claims.question or {}
            entry = [q.get("key"), answer.status, answer.payload, q.get("message"), q.get("schema")]
            plan.answers[claims.call_id] = [*claims.answers, entry]
    return plan


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
        raise _token_refusal(exc, f"{where}.interruptId") from None
    answer = Answer(index, entry.interrupt_id, claims, entry.status, entry.payload)
    if claims.thread_id != thread_id:
        raise ResumeRejected(
            f"{answer.prefix}_THREAD_MISMATCH", f"{where} answers an interrupt of another thread"
        )
    _check_not_stale(answer, now)
    function = functions.get(claims.tool_name) if claims.tool_name is not None else None
    if claims.tool_name is not None and not isinstance(function, AIFunction):
        raise ResumeRejected(
            "RESUME_UNKNOWN_TOOL",
            f"{where} answers a call to tool {claims.tool_name!r}, which this server does not run",
        )
    if claims.kind == "approval":
        _read_approval(answer, where, function, now)
    else:
        _read_question(answer, where, now)
    return answer


#: How a token that is not this server's is refused, by ``TokenError.reason``: the code
#: (``{kind}``: ``APPROVAL`` or ``INTERRUPT``) and what the message says of the token.
TOKEN_REFUSALS: dict[str, tuple[str, str]] = {
    "audience": (
        "{kind}_AUDIENCE_MISMATCH",
        "was issued by another server (another audience) that shares this server's signing "
        "key; only the server that asked can take the answer",
    ),
    "other_key": (
        "{kind}_KEY_CHANGED",
        "was issued under another signing key (the server was restarted with a new key, or "
        "its key changed); ask the person again",
    ),
    "forged": ("{kind}_FORGED", "was altered or not issued by this server"),
    "unknown": ("RESUME_UNKNOWN_INTERRUPT", "names no interrupt this server issued"),
}


def _token_refusal(exc: TokenError, what: str) -> ResumeRejected:
    code, problem = TOKEN_REFUSALS[exc.reason]
    kind = "APPROVAL" if exc.kind == "approval" else "INTERRUPT"
    return ResumeRejected(code.format(kind=kind), f"{what} {problem}")


def _answerable_until(claims: InterruptClaims) -> float | None:
    """When every answer to the interrupt starts being refused (and its consumed record
    may go): its expiry plus ``ANSWER_RETENTION``; ``None`` if it never expires."""
    retention = ANSWER_RETENTION.total_seconds()
    return None if claims.expires_at is None else claims.expires_at + retention


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


def _read_approval(answer: Answer, where: str, function: AITool | None, now: float) -> None:
    if answer.status == "cancelled":
        answer.reason = CANCELLED_REASON  # a cancelled approval is a rejection
        return
    try:
        payload = read_approval_payload(answer.payload, where=f"{where}.payload")
    except ApprovalPayloadError as exc:
        if exc.unknown_keys:  # an edit under a key it does not know must not go unseen
            raise ResumeRejected("RESUME_UNKNOWN_PAYLOAD_KEY", str(exc)) from None
        raise ResumeRejected("RESUME_INVALID_PAYLOAD", str(exc)) from None
    answer.approved, answer.reason, edited = payload.approved, payload.reason, payload.edited_args
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
    assert isinstance(function, AIFunction)
    try:
        function.validate_arguments(edited)
    except ToolArgumentsError as exc:
        raise ResumeRejected(
            "RESUME_INVALID_PAYLOAD", f"{where}.payload.editedArgs: {exc}"
        ) from None
    answer.edited_arguments = dict(edited)


def _read_question(answer: Answer, where: str, now: float) -> None:
    if answer.status == "cancelled":
        answer.payload = None
        return
    if answer.claims.is_expired(now):
        raise ResumeRejected(
            "INTERRUPT_EXPIRED",
            f"{where} answers a question that has expired; it can only be cancelled",
        )
    schema = (answer.claims.question or {}).get("schema")
    errors = schema_errors(answer.payload, schema) if isinstance(schema, Mapping) else []
    if errors:
        raise ResumeRejected(
            "RESUME_INVALID_PAYLOAD",
            f"{where}.payload does not match the question's response schema: "
            + "; ".join(errors)[:300],
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
    """The answers naming one pause must be exactly its slots (by number, and by the digest
    the tokens carry): acting on part of a pause is what the spec forbids."""
    pauses: dict[str, tuple[int, list[tuple[str, str | None]]]] = {}
    for answer in answers:
        if answer.claims.pause is not None:
            pause = pauses.setdefault(answer.claims.pause, (answer.claims.pause_size, []))
            pause[1].append(answer.claims.slot)
    missing = sum(
        max(size - len(slots), 1)
        for digest, (size, slots) in pauses.items()
        if len(slots) != size or pause_digest(slots) != digest
    )
    if missing:
        raise ResumeRejected(
            "RESUME_INCOMPLETE",
            f"the resume leaves {missing} interrupt(s) of the paused run unanswered; "
            "answer every interrupt in one go",
        )


def _check_unambiguous(answers: Sequence[Answer], ambiguous: set[str]) -> None:
    """Refuse a call id that two different calls of the history use, or that an approval
    and a question of this resume both name (the verified pairs stand for the history's
    calls, so the tool loop cannot see either)."""
    kinds: dict[str, set[str]] = {}
    for answer in answers:
        call_id = answer.claims.call_id
        if call_id is None:
            continue
        kinds.setdefault(call_id, set()).add(answer.claims.kind)
        if call_id in ambiguous:
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


def resume_error(exc: Exception) -> tuple[str, str] | None:
    """The code and message of a tool-loop refusal of a resume (``None``: not one)."""
    return next(((c, m) for kind, c, m in RESUME_ERRORS if isinstance(exc, kind)), None)


def _check_pairs(
    messages: Sequence[ChatMessage],
    pairs: Sequence[VerifiedPair],
    functions: Mapping[str, AITool],
) -> None:
    """Whatever the tool loop's pairing function would refuse is refused here, before the
    claim (any other refusal of it as an invalid payload)."""
    try:
        plan_resume(messages, functions, pairs)
    except HumanInTheLoopError as exc:
        raise ResumeRejected(*(resume_error(exc) or RESUME_ERRORS[-1][1:])) from None


def _check_matches(answer: Answer, existing: FunctionCallContent, reused: bool) -> None:
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
            "the call that was approved"
            + (": an earlier call has that id (a call id reused across turns)" if reused else ""),
        )


async def _claim(
    answers: Sequence[Answer],
    signer: InterruptSigner,
    store: ApprovalStore,
    owner: str,
    lease_until: float,
) -> tuple[list[tuple[Answer, str]], list[tuple[Answer, str]]]:
    """Claim every answer, each on its own: (fresh answers with their keys, replays with
    their kept result, or ``LOST_RESULT`` for a call whose tool started in a process that
    died). An answer held by a live claim, a store out of reach or one that lost its records
    refuses the whole resume, and the claims made are released."""
    fresh: list[tuple[Answer, str]] = []
    replayed: list[tuple[Answer, str]] = []
    keeps_epoch = store.known_epoch is not None
    try:
        for answer in answers:
            key = signer.fingerprint(answer.token)
            expires_at = _answerable_until(answer.claims)
            epoch = (answer.claims.store_epoch or "") if keeps_epoch else None
            claiming = store.claim(
                key, expires_at=expires_at, owner=owner, lease_until=lease_until, epoch=epoch
            )
            if await claiming:
                fresh.append((answer, key))
                continue
            held = await store.record(key)
            if held is not None and held.result is not None:
                replayed.append((answer, held.result))
            elif held is not None and held.lost(_clock()):
                replayed.append((answer, LOST_RESULT))
            else:
                raise _held(answer, held, lease_until - _clock())
        # Again, now the claims are made: a record the store dropped meanwhile, its time
        # run out, must not pass for a fresh one.
        now = _clock()
        for answer in answers:
            _check_not_stale(answer, now)
    except (ResumeRejected, ApprovalStoreError) as exc:
        with contextlib.suppress(ApprovalStoreError):
            for _, claimed in fresh:
                await store.release(claimed, owner=owner)
        if isinstance(exc, ApprovalStoreResetError):
            with contextlib.suppress(ApprovalStoreError):
                await store.epoch()  # the interrupts issued from now on carry the new one
            raise ResumeRejected(
                "APPROVAL_STORE_RESET",
                "the approval store lost its records since these interrupts were issued (it "
                "has another epoch), so it cannot tell whether they were used; nothing was "
                "run: ask the person again",
            ) from exc
        if isinstance(exc, ApprovalStoreError):
            raise ResumeRejected(
                "APPROVAL_STORE_UNAVAILABLE",
                "the approval store cannot be reached; nothing was run and the answer was not "
                "used: send the same answer again once the store is back",
                retry_after=STORE_RETRY_AFTER,
            ) from exc
        raise
    return fresh, replayed


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
    left = lease if held is None or held.lease_until is None else held.lease_until - _clock()
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
