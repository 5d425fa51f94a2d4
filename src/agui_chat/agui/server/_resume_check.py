"""Checking a ``resume`` against the interrupt ids this server signed, each verified once, and
its answers as the consent engine takes them (one ``VerifiedPair`` per request, built from
the signed token) with the history the pipeline gets.

Each ``interruptId`` must be this server's token for this thread, not stale, for a tool the
server runs, its payload readable; the answers must cover their pause. The answers then go,
as pairs the tokens vouch for (with the expiry and edits they carry), through the consent
engine's pairing and checks: every refusal happens here, before anything is claimed, and
raises :class:`ResumeRejected`. Claiming is the claim's own business (``_claims.py``).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Awaitable, Callable, Mapping, Sequence, Set
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from ag_ui.core import ResumeEntry, RunAgentInput

from ..._contents import AIContent, FunctionCallContent, FunctionResultContent
from ..._exceptions import (
    ApprovalStoreError,
    ApprovalStoreMisconfiguredError,
    ApprovalStoreValueError,
    DuplicateResponseError,
    ExpiredRequestError,
    HumanInTheLoopError,
    InvalidResponseError,
    UnansweredRequestError,
    UnknownResponseError,
)
from ..._hitl_contents import (
    CANCELLED_REASON,
    InterruptRequestContent,
    InterruptResponseContent,
    InterruptStatus,
    ToolApprovalRequestContent,
    ToolApprovalResponseContent,
)
from ..._input import question_digest
from ..._messages import ChatMessage
from ..._principal import Principal
from ..._role_and_finish_reason import ChatRole
from ..._tools import AITool
from ...consent import _rules
from ...consent._approvers import check_identified
from ...consent._plan import Pairs, Pending, VerifiedPair, check, pair
from ...consent._rules import (
    ApprovalPayloadError,
    Remember,
    approval_request_id,
    question_request_id,
    read_approval_payload,
)
from ...middleware._tool_tracing import REQUESTED_AT, TRACEPARENT
from ._signing import InterruptClaims, InterruptSigner, TokenError, canonical_json, pause_digest

#: How long past its expiry an interrupt may still be cancelled (an approval rejected);
#: after it every answer is refused as stale, and the store keeps each consumed record
#: exactly that long. Interrupts without an expiry are never stale.
ANSWER_RETENTION = timedelta(hours=1)

#: The wait (seconds) a refusal for a store out of reach asks for before the same answer.
STORE_RETRY_AFTER = 2.0

_log = logging.getLogger("agui_chat.server")


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
    """A resume whose answers passed every check: ``answers`` as verified, ``messages`` the
    client's history without the results it wrote for answered calls (``echoed``: their texts
    by call id, which rule ``copilotkit-resume-echo`` has the store keep the result under), the
    history's ``calls`` by id, and the consent engine's ``pairs`` and ``pending`` requests,
    which the plan is scheduled from once the answers are claimed."""

    answers: list[Answer]
    messages: Sequence[ChatMessage]
    calls: dict[str, FunctionCallContent]
    pairs: Pairs
    pending: Pending
    echoed: dict[str, list[str]] = field(default_factory=dict)


def verify_resume(run_input: RunAgentInput, signer: InterruptSigner) -> list[Answer]:
    """Each ``resume`` entry verified (its token, once), read and checked against its pause
    (``ResumeRejected``)."""
    now = _rules.clock()
    answers = [
        _verify(i, entry, run_input.thread_id, signer, now)
        for i, entry in enumerate(run_input.resume or [])
    ]
    return answers


@dataclass(frozen=True)
class Answerer:
    """Who sent a resume (``principal``, from the request's authentication), where (the
    ``thread_id``) and what the server asks of them: ``identity_required`` (nobody may not
    answer) and whether a ``remember`` can be kept (``keeps_grants``)."""

    principal: Principal | None
    thread_id: str
    identity_required: bool = False
    keeps_grants: bool = False


async def check_resume(
    answers: list[Answer],
    messages: Sequence[ChatMessage],
    functions: Mapping[str, AITool],
    check_results: Callable[[Sequence[ChatMessage], set[str]], Awaitable[Sequence[ChatMessage]]],
    answerer: Answerer,
) -> CheckedResume:
    """The verified ``answers`` checked against the history and by the consent engine,
    before anything is claimed (``ResumeRejected``): who answered (``answerer``) among it;
    ``check_results`` (given the history and the call ids answered) checks its other results
    and gives the history the model sees."""
    calls, reused, answered = _history_calls(messages)
    for answer in answers:
        if (call_id := answer.claims.call_id) in calls:
            _check_matches(answer, calls[call_id], call_id in reused or call_id in answered)
    # A result the client wrote for a call an entry answers is never that call's result
    # (compatibility rule ``copilotkit-resume-echo``): the server's own answer replaces it.
    echoed = _texts_of(messages, {c for a in answers if (c := a.claims.call_id) in answered})
    if echoed:
        messages = without_results(messages, echoed.keys())
    _check_one_kind_per_call(answers)
    try:
        if unbound := [a for a in answers if a.claims.call_id is None]:
            # Questions no tool asked are not the engine's pairs: each answered once here.
            entries: dict[tuple[str, str | None], list[int]] = {}
            for answer in unbound:
                entries.setdefault(answer.claims.slot, []).append(answer.index)
            _rules.check_answered_once({f"resume[{i[0]}]": i for i in entries.values()})
        check_identified([f"resume[{a.index}]" for a in answers], answerer)
        pairs = pair(messages, pairs_of(answers, calls, answerer.principal))
        pending = check(
            pairs,
            functions,
            thread_id=answerer.thread_id,
            identity_required=answerer.identity_required,
            keeps_grants=answerer.keeps_grants,
        )
        for answer in answers:
            if answer.claims.call_id is None:  # a question no tool asked: its answer alone
                request, _ = question_pair(answer, None)
                _rules.check_question(
                    request.request_id,
                    resolved=answer.status == "resolved",
                    payload=answer.payload,
                    response_schema=request.response_schema,
                    expires_at=request.expires_at,
                )
    except HumanInTheLoopError as exc:
        raise _refusal(exc, answers) from None
    _check_coverage(answers)
    if answered - echoed.keys():  # results the resume does not answer: were they this server's?
        resumed = {a.claims.call_id for a in answers if a.claims.call_id is not None}
        messages = await check_results(messages, resumed)
    return CheckedResume(answers, messages, calls, pairs, pending, echoed)


def _texts_of(messages: Sequence[ChatMessage], call_ids: Set[str]) -> dict[str, list[str]]:
    """The texts of the results ``messages`` hold for ``call_ids``, by call id."""
    texts: dict[str, list[str]] = {}
    for message in messages:
        for c in message.contents:
            if isinstance(c, FunctionResultContent) and c.call_id in call_ids:
                text = c.result if isinstance(c.result, str) else str(c.result)
                texts.setdefault(c.call_id, []).append(text)
    return texts


def _history_calls(
    messages: Sequence[ChatMessage],
) -> tuple[dict[str, FunctionCallContent], set[str], set[str]]:
    """The history's first call under each id, the ids two different calls use, and the
    ids that have a result."""
    calls: dict[str, FunctionCallContent] = {}
    reused: set[str] = set()
    answered: set[str] = set()
    for message in messages:
        for c in message.contents:
            if isinstance(c, FunctionResultContent):
                answered.add(c.call_id)
            elif c.__class__ is FunctionCallContent:
                assert isinstance(c, FunctionCallContent)
                first = calls.setdefault(c.call_id, c)
                if first is not c and (first.name, first.arguments) != (c.name, c.arguments):
                    reused.add(c.call_id)
    return calls, reused, answered


def _verify(
    index: int,
    entry: ResumeEntry,
    thread_id: str,
    signer: InterruptSigner,
    now: float,
) -> Answer:
    where = f"resume[{index}]"
    try:
        claims, key = signer.open(entry.interrupt_id)
    except TokenError as exc:
        raise _token_refusal(exc, f"{where}.interruptId") from None
    answer = Answer(index, entry.interrupt_id, claims, key, entry.status, entry.payload)
    if claims.thread_id != thread_id:
        raise ResumeRejected(
            f"{answer.prefix}_THREAD_MISMATCH", f"{where} answers an interrupt of another thread"
        )
    check_not_stale(answer, now)
    if claims.kind == "approval":
        _read_approval(answer, where)
    elif answer.status == "cancelled":
        answer.payload = None
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


def check_not_stale(answer: Answer, now: float) -> None:
    until = answer.until
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


def _read_approval(answer: Answer, where: str) -> None:
    """The approval payload, read by the one strict model (whether it may be used is the
    consent engine's to say)."""
    if answer.status == "cancelled":
        answer.reason = CANCELLED_REASON  # a cancelled approval is a rejection
        return
    try:
        payload = read_approval_payload(answer.payload, where=f"{where}.payload")
    except ApprovalPayloadError as exc:
        if exc.unknown_keys:  # an edit under a key it does not know must not go unseen
            raise ResumeRejected("RESUME_UNKNOWN_PAYLOAD_KEY", str(exc)) from None
        raise ResumeRejected("RESUME_INVALID_PAYLOAD", str(exc)) from None
    answer.approved, answer.reason = payload.approved, payload.reason
    answer.edited_arguments, answer.remember = payload.edited_args, payload.remember


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


def _check_one_kind_per_call(answers: Sequence[Answer]) -> None:
    """Refuse a call id that an approval and a question of this resume both name: the
    tokens of two pauses (answer the latest only)."""
    kinds: dict[str, set[str]] = {}
    for answer in answers:
        if answer.claims.call_id is not None:
            kinds.setdefault(answer.claims.call_id, set()).add(answer.claims.kind)
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
    """The code and message of a consent-engine refusal of a resume (``None``: not one)."""
    found = next(((c, m) for kind, c, m in RESUME_ERRORS if isinstance(exc, kind)), None)
    if found is not None and isinstance(exc, HumanInTheLoopError) and exc.code is not None:
        return exc.code, found[1]
    return found


def _refusal(exc: HumanInTheLoopError, answers: Sequence[Answer]) -> ResumeRejected:
    """The consent engine's refusal, naming the resume entries it is about (a refusal of a
    kind the server has no row for says only that the answer is invalid)."""
    found = resume_error(exc)
    if found is None:
        return ResumeRejected(*RESUME_ERRORS[-1][1:])
    code = found[0]
    entries = [
        f"resume[{a.index}]"
        for a in answers
        if any(_rules.is_about(rid, a.claims.call_id or "") for rid in exc.request_ids)
    ]
    return ResumeRejected(code, f"{', '.join(entries)}: {exc}" if entries else str(exc))


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


# -- the verified answers as the consent engine takes them ------------------------------------


@dataclass
class Answer:
    """One verified resume entry."""

    index: int
    token: str
    claims: InterruptClaims
    key: str  # what the store records the answer under (the token's fingerprint)
    status: InterruptStatus
    payload: Any
    approved: bool = False
    reason: str | None = None
    edited_arguments: dict[str, Any] | None = None
    remember: Remember | None = None
    #: Read off the claims once: the expiry, when answers start being refused (its expiry
    #: plus ``ANSWER_RETENTION``; ``None``: never) and the request's trace stamps.
    expires_at: datetime | None = field(init=False)
    until: float | None = field(init=False)
    trace: dict[str, Any] | None = field(init=False)

    def __post_init__(self) -> None:
        at, claims = self.claims.expires_at, self.claims
        self.expires_at = None if at is None else datetime.fromtimestamp(at, tz=timezone.utc)
        self.until = None if at is None else at + ANSWER_RETENTION.total_seconds()
        self.trace = (
            None
            if claims.traceparent is None
            else {TRACEPARENT: claims.traceparent, REQUESTED_AT: claims.requested_at}
        )

    @property
    def prefix(self) -> str:
        return "APPROVAL" if self.claims.kind == "approval" else "INTERRUPT"

    def call(self, template: FunctionCallContent | None = None) -> FunctionCallContent:
        assert self.claims.call_id is not None and self.claims.tool_name is not None
        return FunctionCallContent(
            self.claims.call_id,
            self.claims.tool_name,
            dict(self.claims.arguments or {}),
            additional_properties=template.additional_properties if template else None,
        )


def pairs_of(
    answers: Sequence[Answer],
    calls: Mapping[str, FunctionCallContent],
    approver: Principal | None = None,
) -> list[VerifiedPair]:
    """The pairs the consent engine plans with, for the answers about a call: the call as the
    token vouches for it (with the history copy's metadata), the request with the expiry,
    edits and requester the token carries, the answer from ``approver`` (the principal of the
    request that carries it, never the payload's word); a question after the earlier answers
    of the same call, so ``request_input`` finds them all."""
    pairs: list[VerifiedPair] = []
    for answer in answers:
        call_id = answer.claims.call_id
        if call_id is None or answer.claims.tool_name is None:
            continue  # a question no tool call asked: not the tool loop's
        call = answer.call(calls.get(call_id))
        if answer.claims.kind != "approval":
            pairs += [VerifiedPair(call, q, a) for q, a in _question_pairs(answer, call_id)]
            continue
        request_id = approval_request_id(call_id)
        requester = answer.claims.requester
        request = ToolApprovalRequestContent(
            request_id,
            call,
            allow_edits=answer.claims.allow_edits,
            expires_at=answer.expires_at,
            additional_properties=answer.trace,
            requester=None if requester is None else Principal.from_dict(requester),
        )
        remember = answer.remember
        response = ToolApprovalResponseContent(
            request_id,
            answer.approved,
            call,
            reason=answer.reason,
            edited_arguments=answer.edited_arguments,
            approver=approver,
            remember=None if remember is None else remember.scope,
            remember_for=None if remember is None else remember.seconds,  # seconds are read
            remember_match="arguments" if remember is None else remember.match,
        )
        pairs.append(VerifiedPair(call, request, response))
    return pairs


def answers_so_far(answers: Sequence[Answer]) -> dict[str, list[list[Any]]]:
    """For each question's call, the answers it got so far, each bound to the question's
    key, message and schema (``InterruptClaims.answers``): what a tool that asks again
    carries forward."""
    given: dict[str, list[list[Any]]] = {}
    for answer in answers:
        claims = answer.claims
        if claims.kind == "question" and claims.call_id is not None and claims.tool_name:
            q = claims.question or {}  # a cancel's payload is None
            entry = [q.get("key"), answer.status, answer.payload, q.get("message"), q.get("schema")]
            given[claims.call_id] = [*claims.answers, entry]
    return given


def run_history(
    messages: Sequence[ChatMessage],
    calls: Mapping[str, FunctionCallContent],
    fresh: Sequence[Answer],
    replayed: Sequence[tuple[Answer, str]],
) -> list[ChatMessage]:
    """The client's history, each replayed call followed by its kept result (the call
    appended if the client did not send it), and the questions no tool call asked with
    their answers at the end (for the inner client)."""
    position = {id(c): i for i, m in enumerate(messages) for c in m.contents}
    results_after: dict[int, list[AIContent]] = {}
    appended: list[AIContent] = []
    appended_results: list[AIContent] = []
    for answer, result in replayed:
        call_id = answer.claims.call_id
        if call_id is None or answer.claims.tool_name is None:
            continue
        kept = FunctionResultContent(call_id, result)
        if call_id in calls:
            results_after.setdefault(position[id(calls[call_id])], []).append(kept)
        else:
            appended.append(answer.call())
            appended_results.append(kept)
    unbound = [question_pair(a, None) for a in fresh if a.claims.call_id is None]
    appended += [request for request, _ in unbound]
    out: list[ChatMessage] = []
    for m_index, message in enumerate(messages):
        out.append(message)
        if m_index in results_after:
            out.append(ChatMessage(ChatRole.TOOL, results_after[m_index]))
    if appended:
        out.append(ChatMessage(ChatRole.ASSISTANT, appended))
    if appended_results:
        out.append(ChatMessage(ChatRole.TOOL, appended_results))
    if unbound:
        out.append(ChatMessage(ChatRole.USER, [response for _, response in unbound]))
    return out


def without_results(messages: Sequence[ChatMessage], call_ids: Set[str]) -> list[ChatMessage]:
    """``messages`` without the tool results of ``call_ids`` (a tool message left empty goes;
    every other message is the same object)."""
    if not call_ids:
        return list(messages)
    out: list[ChatMessage] = []
    for message in messages:
        kept = [
            c
            for c in message.contents
            if not (isinstance(c, FunctionResultContent) and c.call_id in call_ids)
        ]
        if len(kept) == len(message.contents):
            out.append(message)
        elif kept:
            out.append(message.clone(kept))
    return out


def _question_pairs(
    answer: Answer, call_id: str
) -> list[tuple[InterruptRequestContent, InterruptResponseContent]]:
    """The earlier questions of the same call with their answers (each bound to the message
    and schema it answered), then this question and its answer."""
    key = (answer.claims.question or {}).get("key")
    pairs = []
    for prior_key, status, payload, *question in answer.claims.answers:
        message, schema = [*question, None, None][:2]
        if prior_key == key:
            continue
        request_id = question_request_id(call_id, question_digest(prior_key, message, schema))
        request = InterruptRequestContent(
            request_id, message=message, tool_call_id=call_id, response_schema=schema, key=prior_key
        )
        pairs.append((request, InterruptResponseContent(request_id, payload, status)))
    pairs.append(question_pair(answer, call_id))
    return pairs


def question_pair(
    answer: Answer, call_id: str | None
) -> tuple[InterruptRequestContent, InterruptResponseContent]:
    question = answer.claims.question or {}
    key, message, schema = question.get("key"), question.get("message"), question.get("schema")
    request_id = question_request_id(call_id, question_digest(str(key), message, schema))
    request = InterruptRequestContent(
        request_id,
        reason=question.get("reason"),
        message=question.get("message"),
        tool_call_id=call_id,
        response_schema=question.get("schema"),
        key=question.get("key"),
        expires_at=answer.expires_at,
        additional_properties=answer.trace,
    )
    return request, InterruptResponseContent(request_id, answer.payload, answer.status)


def store_refusal(exc: ApprovalStoreError, what: str) -> ResumeRejected:
    """The refusal of a resume the store failed (``what``: what was not done), by what the
    failure means: only an outage is worth the same answer again after a wait. The client is
    not told the store's own words (they may name hosts and tables); the log is."""
    _log.warning("refused a resume: %s", exc)
    if isinstance(exc, ApprovalStoreMisconfiguredError):
        return ResumeRejected(
            "APPROVAL_STORE_MISCONFIGURED",
            f"the approval store refuses this server (its log says why); {what}: send the "
            "same answer again once an operator has fixed the store",
        )
    if isinstance(exc, ApprovalStoreValueError):
        return ResumeRejected(
            "APPROVAL_STORE_VALUE_REJECTED",
            f"the approval store cannot hold a value of this resume (its log says which); {what}",
        )
    return ResumeRejected(
        "APPROVAL_STORE_UNAVAILABLE",
        f"the approval store cannot be reached; {what}: send the same answer again once the "
        "store is back",
        retry_after=STORE_RETRY_AFTER,
    )
