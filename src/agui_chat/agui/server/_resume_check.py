"""Checking a ``resume`` and turning it into the answers the tool loop expects.

Every entry's ``interruptId`` must be a token this server signed, for this thread; the
payload must fit the approval convention or the question's schema; edits only where
offered. Then each entry becomes a request/answer pair rebuilt from the *verified* token
(never from call data the client sent): the request replaces the call in the history when
the client re-sent it, or is appended when it did not (as Agent Framework clients do). The
consumed-approvals store is claimed before anything runs, so a replayed resume runs
nothing twice: it gets the result kept from the first time instead.

An interrupt past its expiry can still be cancelled (an approval also rejected) for
``ANSWER_RETENTION``; after that every answer to it is refused (``APPROVAL_STALE`` /
``INTERRUPT_STALE``). The store keeps each consumed record until the same moment, so no
answer is ever accepted once its record may be gone.

Anything wrong raises :class:`ResumeRejected` with a code; nothing has run by then.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from ag_ui.core import ResumeEntry, RunAgentInput

from ..._contents import (
    AIContent,
    FunctionCallContent,
    FunctionResultContent,
)
from ..._exceptions import ToolArgumentsError
from ..._hitl_contents import (
    CANCELLED_REASON,
    InterruptRequestContent,
    InterruptResponseContent,
    ToolApprovalRequestContent,
    ToolApprovalResponseContent,
)
from ..._messages import ChatMessage
from ..._schema import schema_errors
from ..._telemetry import REQUESTED_AT, TRACEPARENT
from ..._tools import AIFunction, AITool
from ..._values import ChatRole
from ...stores import ApprovalStore
from ._signing import InterruptClaims, InterruptSigner, TokenError, canonical_json

__all__ = ["ANSWER_RETENTION", "CheckedResume", "ResumeRejected", "check_resume"]

#: How long past its expiry an interrupt may still be cancelled (or an approval rejected).
#: After it every answer, a cancel too, is refused with ``APPROVAL_STALE`` or
#: ``INTERRUPT_STALE``; the consumed-approvals store is told to keep each record exactly
#: that long (``expires_at`` = expiry + retention), so a consumed answer can never be
#: accepted again. Interrupts without an expiry are never stale and their records are kept.
ANSWER_RETENTION = timedelta(hours=1)

#: Where the check reads the time (epoch seconds); tests replace it with a fake clock.
_clock: Callable[[], float] = time.time

_APPROVAL_PAYLOAD = "{approved: boolean, reason?: string, editedArgs?: object}"


class ResumeRejected(Exception):
    """A resume the server will not act on; ``code`` and ``message`` go into ``RUN_ERROR``
    (both are safe to show: they name what is wrong, never internals)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


@dataclass
class _Answer:
    """One verified resume entry."""

    index: int
    token: str
    claims: InterruptClaims
    status: str
    payload: Any
    approved: bool = False
    reason: str | None = None
    edited_arguments: dict[str, Any] | None = None

    @property
    def prefix(self) -> str:
        return "APPROVAL" if self.claims.kind == "approval" else "INTERRUPT"

    @property
    def arguments(self) -> dict[str, Any]:
        """The arguments the call runs with (the person's edit, if any)."""
        if self.edited_arguments is not None:
            return self.edited_arguments
        return dict(self.claims.arguments or {})

    def trace_properties(self) -> dict[str, Any] | None:
        """What the request carried for tracing (see ``agui_chat._telemetry``), if anything."""
        if self.claims.traceparent is None:
            return None
        return {TRACEPARENT: self.claims.traceparent, REQUESTED_AT: self.claims.requested_at}

    def call(self, template: FunctionCallContent | None = None) -> FunctionCallContent:
        assert self.claims.call_id is not None and self.claims.tool_name is not None
        return FunctionCallContent(
            self.claims.call_id,
            self.claims.tool_name,
            dict(self.claims.arguments or {}),
            additional_properties=template.additional_properties if template else None,
        )


@dataclass
class CheckedResume:
    """A resume that passed every check.

    ``messages`` is the history with the rebuilt requests and answers; ``claimed`` maps a
    call id to its store key (record its result there); ``replayed`` are results kept from
    an earlier use of the same answers, to emit again; ``calls`` and ``answers`` are what a
    tool asking again needs to be bound to (by call id). ``needs_model`` is false when the
    resume only replays: then nothing runs and the model is not called.
    """

    messages: list[ChatMessage]
    claimed: dict[str, str] = field(default_factory=dict)
    replayed: list[tuple[str, str]] = field(default_factory=list)
    calls: dict[str, FunctionCallContent] = field(default_factory=dict)
    answers: dict[str, list[list[Any]]] = field(default_factory=dict)
    needs_model: bool = True


async def check_resume(
    run_input: RunAgentInput,
    messages: Sequence[ChatMessage],
    *,
    signer: InterruptSigner,
    store: ApprovalStore,
    functions: Mapping[str, AITool],
) -> CheckedResume:
    """Verify ``run_input.resume`` and rebuild the answers into ``messages``."""
    now = _clock()
    answers = [
        _verify(i, entry, run_input.thread_id, signer, functions, now)
        for i, entry in enumerate(run_input.resume or [])
    ]
    _check_distinct(answers)
    calls, answered = _index(messages)
    _check_coverage(answers, answered)
    for answer in answers:
        existing = calls.get(answer.claims.call_id or "")
        if existing is not None:
            _check_matches(answer, existing[2])
    active = [a for a in answers if a.claims.call_id not in answered]
    fresh, replayed = await _claim_to_the_end(active, signer, store)

    plan = CheckedResume(messages=[])
    for answer in active:
        if answer.claims.call_id is not None and answer.claims.tool_name is not None:
            call_id = answer.claims.call_id
            plan.calls[call_id] = FunctionCallContent(
                call_id, answer.claims.tool_name, answer.arguments
            )
            if answer.claims.kind == "question":
                key = (answer.claims.question or {}).get("key")
                payload = answer.payload if answer.status == "resolved" else None
                plan.answers[call_id] = [*answer.claims.answers, [key, answer.status, payload]]
    for answer, key in fresh:
        plan.claimed[answer.claims.call_id or str(answer.claims.slot)] = key
    plan.replayed = [(a.claims.call_id, result) for a, result in replayed if a.claims.call_id]
    plan.needs_model = bool(fresh) or not replayed
    plan.messages = _rebuild(messages, calls, [a for a, _ in fresh], replayed)
    return plan


# -- verification ----------------------------------------------------------------------------


def _verify(
    index: int,
    entry: ResumeEntry,
    thread_id: str,
    signer: InterruptSigner,
    functions: Mapping[str, AITool],
    now: float,
) -> _Answer:
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
        raise ResumeRejected(
            f"{prefix}_FORGED",
            f"{where}.interruptId was altered or not issued by this server",
        ) from None
    answer = _Answer(index, entry.interrupt_id, claims, entry.status, entry.payload)
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


def _check_not_stale(answer: _Answer, now: float) -> None:
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


def _read_approval(answer: _Answer, where: str, function: AIFunction | None, now: datetime) -> None:
    if answer.status == "cancelled":
        # A cancelled approval is a rejection, as ToolApprovalRequestContent.cancel() is
        # in process.
        answer.reason = CANCELLED_REASON
        return
    payload = answer.payload
    if (
        not isinstance(payload, dict)
        or not isinstance(payload.get("approved"), bool)
        or not isinstance(payload.get("reason", ""), str)
        or not isinstance(payload.get("editedArgs", {}), dict)
    ):
        raise ResumeRejected(
            "RESUME_INVALID_PAYLOAD", f"{where}.payload must be {_APPROVAL_PAYLOAD}"
        )
    answer.approved = payload["approved"]
    answer.reason = payload.get("reason")
    edited = payload.get("editedArgs")
    if answer.approved and answer.claims.is_expired(now):
        raise ResumeRejected(
            "APPROVAL_EXPIRED",
            f"{where} approves a request that has expired; it can only be rejected or cancelled",
        )
    if edited is None:
        return
    if not answer.approved:
        raise ResumeRejected(
            "RESUME_INVALID_PAYLOAD", f"{where}.payload.editedArgs only go with approved: true"
        )
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


def _read_question(answer: _Answer, where: str, now: datetime) -> None:
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


def _check_distinct(answers: Sequence[_Answer]) -> None:
    seen: set[tuple[str, str | None]] = set()
    for answer in answers:
        if answer.claims.slot in seen:
            raise ResumeRejected(
                "RESUME_DUPLICATE_ANSWER",
                f"resume[{answer.index}] answers an interrupt that an earlier entry answers",
            )
        seen.add(answer.claims.slot)


def _check_coverage(answers: Sequence[_Answer], answered_calls: set[str]) -> None:
    """Every interrupt of the paused run must be answered (or its call already have a
    result): acting on part of a pause is what the spec forbids."""
    slots = {a.claims.slot for a in answers}
    missing = {
        (str(sibling[0]), sibling[1])
        for a in answers
        for sibling in a.claims.siblings
        if (sibling[0], sibling[1]) not in slots and sibling[0] not in answered_calls
    }
    if missing:
        raise ResumeRejected(
            "RESUME_INCOMPLETE",
            f"the resume leaves {len(missing)} interrupt(s) of the paused run unanswered; "
            "answer every interrupt in one go",
        )


def _check_matches(answer: _Answer, existing: FunctionCallContent) -> None:
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
    answers: Sequence[_Answer], signer: InterruptSigner, store: ApprovalStore
) -> tuple[list[tuple[_Answer, str]], list[tuple[_Answer, str]]]:
    """``_claim``, carried to its end even if the run is cancelled meanwhile (the client
    left): a networked store may already have written a claim whose reply is still on its
    way. The claims made are then released, since nothing will run them, so the same
    answers can be sent again instead of being refused as already used."""
    claiming = asyncio.ensure_future(_claim(answers, signer, store))
    try:
        return await asyncio.shield(claiming)
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):
            fresh, _ = await claiming
            for _, key in fresh:
                await store.release(key)
        raise


async def _claim(
    answers: Sequence[_Answer], signer: InterruptSigner, store: ApprovalStore
) -> tuple[list[tuple[_Answer, str]], list[tuple[_Answer, str]]]:
    """Claim every answer in the store: (fresh answers with their keys, replays with the
    result kept for them). An answer already claimed without a kept result refuses the
    whole resume, and the claims made here are released."""
    fresh: list[tuple[_Answer, str]] = []
    replayed: list[tuple[_Answer, str]] = []
    try:
        for answer in answers:
            key = signer.fingerprint(answer.token)
            if await store.claim(key, expires_at=_answerable_until(answer.claims)):
                fresh.append((answer, key))
                continue
            kept = await store.get_result(key)
            if kept is None:
                raise ResumeRejected(
                    "RESUME_ALREADY_CONSUMED",
                    f"resume[{answer.index}] was already used, and that run left no result",
                )
            replayed.append((answer, kept))
        # Checked again now that the claims are made: a record the store dropped because
        # its time ran out while this check was under way must not pass for a fresh one.
        now = _clock()
        for answer in answers:
            _check_not_stale(answer, now)
    except ResumeRejected:
        for _, claimed in fresh:
            await store.release(claimed)
        raise
    return fresh, replayed


# -- rebuilding the history -------------------------------------------------------------------

_Position = tuple[int, int, FunctionCallContent]


def _index(messages: Sequence[ChatMessage]) -> tuple[dict[str, _Position], set[str]]:
    """Where each call sits in the history, and which calls already have a result."""
    calls: dict[str, _Position] = {}
    answered: set[str] = set()
    for m_index, message in enumerate(messages):
        for c_index, content in enumerate(message.contents):
            if isinstance(content, FunctionCallContent):
                calls.setdefault(content.call_id, (m_index, c_index, content))
            elif isinstance(content, FunctionResultContent):
                answered.add(content.call_id)
    return calls, answered


def _rebuild(
    messages: Sequence[ChatMessage],
    calls: Mapping[str, _Position],
    fresh: Sequence[_Answer],
    replayed: Sequence[tuple[_Answer, str]],
) -> list[ChatMessage]:
    """The history with each answered call turned into its request (in place, or in an
    assistant message appended when the client did not send the call), kept results after
    their calls, and every answer in one user message at the end."""
    replaced: dict[tuple[int, int], AIContent] = {}
    appended: list[AIContent] = []
    responses: list[AIContent] = []
    results_after: dict[int, list[AIContent]] = {}
    appended_results: list[AIContent] = []

    def place(call_id: str, content: AIContent) -> int | None:
        position = calls.get(call_id)
        if position is None:
            appended.append(content)
            return None
        replaced[(position[0], position[1])] = content
        return position[0]

    for answer in fresh:
        if answer.claims.call_id is None:
            request, response = _question_pair(answer, None)
            appended.append(request)
            responses.append(response)
            continue
        template = calls.get(answer.claims.call_id)
        call = answer.call(template[2] if template else None)
        if answer.claims.kind == "approval":
            request_id = f"approval:{call.call_id}"
            approval = ToolApprovalRequestContent(
                request_id, call, allow_edits=True, additional_properties=answer.trace_properties()
            )
            place(call.call_id, approval)
            responses.append(
                ToolApprovalResponseContent(
                    request_id,
                    answer.approved,
                    call,
                    reason=answer.reason,
                    edited_arguments=answer.edited_arguments,
                )
            )
        else:
            place(call.call_id, call)
            for request, response in _question_pairs(answer, call.call_id):
                appended.append(request)
                responses.append(response)

    for answer, result in replayed:
        call_id = answer.claims.call_id or ""
        kept = FunctionResultContent(call_id, result)
        if answer.claims.tool_name is None:
            continue
        at = place(call_id, answer.call(calls[call_id][2] if call_id in calls else None))
        if at is None:
            appended_results.append(kept)
        else:
            results_after.setdefault(at, []).append(kept)

    out: list[ChatMessage] = []
    for m_index, message in enumerate(messages):
        edits = {c: v for (m, c), v in replaced.items() if m == m_index}
        if edits:
            message = message.clone()
            message.contents = [edits.get(i, c) for i, c in enumerate(message.contents)]
        out.append(message)
        if m_index in results_after:
            out.append(ChatMessage(ChatRole.TOOL, results_after[m_index]))
    if appended:
        out.append(ChatMessage(ChatRole.ASSISTANT, appended))
    if appended_results:
        out.append(ChatMessage(ChatRole.TOOL, appended_results))
    if responses:
        out.append(ChatMessage(ChatRole.USER, responses))
    return out


def _question_pairs(
    answer: _Answer, call_id: str
) -> list[tuple[InterruptRequestContent, InterruptResponseContent]]:
    """This question and its answer, after the earlier questions of the same call and the
    answers they got (so ``request_input`` finds every answer when the tool runs again)."""
    key = (answer.claims.question or {}).get("key")
    pairs = []
    for position, prior in enumerate(answer.claims.answers):
        prior_key, status, payload = prior
        if prior_key == key:
            continue
        request_id = f"question:{call_id}:earlier-{position}"
        pairs.append(
            (
                InterruptRequestContent(request_id, tool_call_id=call_id, key=prior_key),
                InterruptResponseContent(request_id, payload, status),
            )
        )
    pairs.append(_question_pair(answer, call_id))
    return pairs


def _question_pair(
    answer: _Answer, call_id: str | None
) -> tuple[InterruptRequestContent, InterruptResponseContent]:
    question = answer.claims.question or {}
    request_id = f"question:{call_id or ''}:{question.get('key')}"
    request = InterruptRequestContent(
        request_id,
        reason=question.get("reason"),
        message=question.get("message"),
        tool_call_id=call_id,
        key=question.get("key"),
        additional_properties=answer.trace_properties(),
    )
    if answer.status == "cancelled":
        return request, InterruptResponseContent(request_id, None, "cancelled")
    return request, InterruptResponseContent(request_id, answer.payload, "resolved")
