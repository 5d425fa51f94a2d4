"""The consent engine's pairing function (DESIGN §3), :func:`plan_resume`: from the history
a caller sends back, work out before anything runs which calls run (with which answers),
which are answered as rejected, and what history the model sees. A bad answer raises a
typed error and nothing is half applied. Steps: collect (``_pairs.py``), check, schedule.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from .._contents import AIContent, FunctionCallContent, FunctionResultContent
from .._exceptions import (
    DuplicateResponseError,
    ExpiredRequestError,
    InvalidResponseError,
    UnansweredRequestError,
    UnknownResponseError,
)
from .._hitl_contents import (
    InputResponseContent,
    InterruptRequestContent,
    InterruptResponseContent,
    ToolApprovalRequestContent,
    ToolApprovalResponseContent,
)
from .._input import question_digest
from .._messages import ChatMessage
from .._role_and_finish_reason import ChatRole
from .._tools import AIFunction, AITool, ApprovalRequiredAIFunction
from ._invocation import rejected_text
from ._pairs import (
    ApprovalPair,
    CallRecord,
    Pairs,
    QuestionPair,
    VerifiedPair,
    collect_pairs,
    verified_pairs,
)


def approval_request_id(call_id: str) -> str:
    """The id of the approval request for a call (stable, so replays pair up)."""
    return f"approval_{call_id}"


def input_request_id(call_id: str, key: str) -> str:
    """The id of the question ``key`` asked by a call (stable, so replays pair up)."""
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:12]
    return f"input_{call_id}_{digest}"


@dataclass
class ScheduledCall:
    """A call to run now: an approved call, or a tool asked again with its answers."""

    call: FunctionCallContent
    function: AIFunction
    answers: dict[str, InterruptResponseContent] = field(default_factory=dict)


@dataclass
class ResumePlan:
    """What to do with the answers found in a history. ``rebuilt``: the assistant messages
    holding the answered calls again, as MEAI rebuilds them (one per message that held their
    requests, keeping its id and metadata), for the model's history at ``anchor`` unless the
    service keeps the history. ``handled``: each call id's call objects to mark once it has
    its result."""

    model_history: list[ChatMessage]
    to_run: list[ScheduledCall] = field(default_factory=list)
    rejected: list[FunctionResultContent] = field(default_factory=list)
    anchor: int = 0
    rebuilt: list[ChatMessage] = field(default_factory=list)
    handled: dict[str, list[FunctionCallContent]] = field(default_factory=dict)

    def mark_handled(self, call_ids: Sequence[str]) -> None:
        """Mark ``call_ids``' calls ``informational_only`` (MEAI: a replay then skips them)."""
        for call_id in call_ids:
            for call in self.handled.get(call_id, ()):
                call.informational_only = True


def _local_function(tools: Mapping[str, AITool], name: str) -> AIFunction | None:
    tool = tools.get(name)
    return tool if isinstance(tool, AIFunction) else None


def plan_resume(
    history: Sequence[ChatMessage],
    tools: Mapping[str, AITool],
    verified: Sequence[VerifiedPair] | None = None,
) -> ResumePlan:
    """Pair the answers in ``history`` (or the ``verified`` pairs) with their requests and
    plan what runs. Only requests for tools in ``tools`` are handled; others (a remote
    agent's) are left for the inner client. Answers count only in user messages. A question
    resumes a call only if its tool could have asked it: one parseable, not
    ``informational_only`` call of a local tool, approved before the question if it was
    gated. Ids shared by different calls or requests are refused (``InvalidResponseError``)
    and nothing runs."""
    pairs = collect_pairs(history) if verified is None else verified_pairs(history, verified)
    return schedule(pairs, check_pairs(pairs, tools), tools, history)


@dataclass
class Pending:
    """The requests a resume answers now, each with exactly one answer; the ``local_``
    ones also hold those of calls answered before (they leave the model's history too)."""

    approvals: dict[str, ApprovalPair]
    questions: dict[str, QuestionPair]
    local_approvals: dict[str, ApprovalPair]
    local_questions: dict[str, QuestionPair]


def check_pairs(pairs: Pairs, tools: Mapping[str, AITool]) -> Pending:
    """Refuse an answer without a request (``UnknownResponseError``), ambiguous ids
    (``InvalidResponseError``), and a pending request not answered exactly once
    (:func:`check_answered_once`)."""

    def answered(question: QuestionPair) -> bool:
        return pairs.calls[question.request.tool_call_id or ""].answered

    local_approvals = {
        rid: a
        for rid, a in pairs.approvals.items()
        if _local_function(tools, a.call.name) is not None
    }
    _check_unknown(pairs.unknown_approvals, "approval")
    _check_unknown(pairs.unknown_questions, "question", approvals=pairs.approvals)
    approvals = {
        rid: a
        for rid, a in local_approvals.items()
        if not (pairs.calls[a.call.call_id].answered or pairs.calls[a.call.call_id].flagged)
    }
    local_questions = {
        rid: q
        for rid, q in pairs.questions.items()
        if any(
            _local_function(tools, c.name) is not None
            for c in pairs.calls.get(q.request.tool_call_id or "", CallRecord()).variants
        )
    }
    candidates = {rid: q for rid, q in local_questions.items() if not answered(q)}
    _check_ambiguous(
        [(rid, a.call.call_id, a.ambiguous) for rid, a in approvals.items()]
        + [(rid, q.request.tool_call_id or "", q.ambiguous) for rid, q in candidates.items()],
        pairs.calls,
    )
    questions = {rid: q for rid, q in candidates.items() if _asked_by_its_tool(pairs, q)}
    local_questions = {
        rid: q for rid, q in local_questions.items() if rid in questions or answered(q)
    }
    given: dict[str, list[InputResponseContent]] = {
        rid: [*a.answers] for rid, a in approvals.items()
    }
    for rid, q in questions.items():
        given.setdefault(rid, []).extend(q.answers)
    check_answered_once(given)
    return Pending(approvals, questions, local_approvals, local_questions)


def _asked_by_its_tool(pairs: Pairs, question: QuestionPair) -> bool:
    """Whether the loop ran ``question``'s call and its tool asked (gated: after approval)."""
    call_id = question.request.tool_call_id
    assert call_id is not None
    record = pairs.calls[call_id]
    [call] = record.variants
    if record.informational or call.unparseable:
        return False
    gated = [a for a in pairs.approvals.values() if a.call.call_id == call_id]
    return not gated or any(
        a.approved_at is not None and a.approved_at < question.asked_at for a in gated
    )


def check_answered_once(answers: Mapping[str, Sequence[InputResponseContent]]) -> None:
    """Each request of ``answers`` (request id -> its answers) is answered
    (``UnansweredRequestError``: a pause is answered in one go), and once
    (``DuplicateResponseError``)."""
    missing = [rid for rid, given in answers.items() if not given]
    if missing:
        raise UnansweredRequestError(
            f"{_ids(missing)} {'has' if len(missing) == 1 else 'have'} no answer; a paused run "
            "must be answered in one go (approve or reject every approval request, answer or "
            "cancel every question)",
            request_ids=missing,
        )
    duplicates = [rid for rid, given in answers.items() if len(given) > 1]
    if duplicates:
        raise DuplicateResponseError(
            f"{_ids(duplicates)} answered more than once; answer each request exactly once",
            request_ids=duplicates,
        )


def schedule(
    pairs: Pairs, pending: Pending, tools: Mapping[str, AITool], history: Sequence[ChatMessage]
) -> ResumePlan:
    """What runs, what is answered as rejected, and the history the model sees. Refuses an
    approved expired request (``ExpiredRequestError``) and an edit the request did not offer
    (``InvalidResponseError``)."""
    plan = ResumePlan(
        model_history=[], handled={cid: r.handled for cid, r in pairs.calls.items() if r.handled}
    )
    to_run = _approved_calls(pending.approvals, tools, plan.rejected)
    rejected = {r.call_id for r in plan.rejected}
    for call_id, answers in _answers_by_call(pending.questions).items():
        if call_id in rejected:
            continue  # a rejected call never runs, whatever else was answered for it
        scheduled = to_run.get(call_id)
        if scheduled is None:
            [call] = pairs.calls[call_id].variants
            function = _local_function(tools, call.name)
            assert function is not None
            edits = (  # an approved edit an earlier approval made
                answer.edited_arguments
                for approval in pairs.approvals.values()
                if approval.call.call_id == call_id
                for answer in approval.answers
                if answer.approved and answer.edited_arguments is not None
            )
            arguments = next(edits, call.arguments)
            scheduled = ScheduledCall(FunctionCallContent(call_id, call.name, arguments), function)
            to_run[call_id] = scheduled
        scheduled.answers = answers
    plan.to_run = list(to_run.values())

    shown = {s.call.call_id: s.call for s in plan.to_run}
    for result in plan.rejected:
        [call] = pairs.calls[result.call_id].variants
        shown[result.call_id] = FunctionCallContent(call.call_id, call.name, call.arguments)
    if pairs.verified:
        history = _with_verified_calls(history, pairs)
    plan.model_history, plan.anchor, plan.rebuilt = _model_history(
        history,
        {rid: a.request for rid, a in pending.local_approvals.items()},
        {rid: q.request for rid, q in pending.local_questions.items()},
        shown,
        at_end=bool(pairs.verified),
    )
    for message in plan.rebuilt:
        for c in message.contents:
            assert isinstance(c, FunctionCallContent)
            plan.handled.setdefault(c.call_id, []).append(c)
    return plan


def _approved_calls(
    approvals: Mapping[str, ApprovalPair],
    tools: Mapping[str, AITool],
    rejected: list[FunctionResultContent],
) -> dict[str, ScheduledCall]:
    """The approved calls by call id (with the edit if allowed); rejections go to ``rejected``."""
    approved: dict[str, ScheduledCall] = {}
    for rid, pair in approvals.items():
        answer, request, call = pair.answers[0], pair.request, pair.call
        function = _local_function(tools, call.name)
        assert function is not None
        if not answer.approved:
            rejected.append(FunctionResultContent(call.call_id, rejected_text(answer.reason)))
            continue
        if request.is_expired():
            raise ExpiredRequestError(
                f"approval request {rid!r} expired; it can only be rejected", request_ids=[rid]
            )
        arguments = call.arguments
        if answer.edited_arguments is not None:
            wrapper = function.get_service(ApprovalRequiredAIFunction)
            if not request.allow_edits or (wrapper is not None and not wrapper.allow_edits):
                raise InvalidResponseError(
                    f"approval request {rid!r} does not allow editing the arguments",
                    request_ids=[rid],
                )
            arguments = answer.edited_arguments
        # Run the call the request recorded, never one a response carries.
        approved[call.call_id] = ScheduledCall(
            FunctionCallContent(call.call_id, call.name, arguments), function
        )
    return approved


def _answers_by_call(
    questions: Mapping[str, QuestionPair],
) -> dict[str, dict[str, InterruptResponseContent]]:
    """The answers each call's tool finds when it runs again, keyed by the question's key,
    message and schema (another question under the same key is asked again). A resolved
    answer must fit its schema and its question must not have expired."""
    per_call: dict[str, dict[str, InterruptResponseContent]] = {}
    for rid, pair in questions.items():
        question, reply = pair.request, pair.answers[0]
        if reply.status == "resolved":
            if question.is_expired():
                raise ExpiredRequestError(
                    f"question {rid!r} expired; it can only be cancelled", request_ids=[rid]
                )
            question.validate_payload(reply.payload)
        assert question.tool_call_id is not None
        key = question_digest(
            question.key or question.message or rid, question.message, question.response_schema
        )
        per_call.setdefault(question.tool_call_id, {})[key] = InterruptResponseContent(
            rid, reply.payload, reply.status
        )
    return per_call


def _check_ambiguous(
    pending: Sequence[tuple[str, str, bool]], calls: Mapping[str, CallRecord]
) -> None:
    """Refuse pending requests that cannot be told apart (a request id or a call id used
    twice): an answer could then run a call the person never saw."""
    call_ids = sorted(
        {cid for _, cid, amb in pending if amb or (cid in calls and len(calls[cid].variants) > 1)}
    )
    if not call_ids:
        return
    request_ids = [rid for rid, cid, _ in pending if cid in call_ids]
    raise InvalidResponseError(
        f"tool call id{'s' if len(call_ids) > 1 else ''} {', '.join(map(repr, call_ids))} "
        f"{'are' if len(call_ids) > 1 else 'is'} used by more than one call or request, so "
        f"the answers to {_ids(list(dict.fromkeys(request_ids)))} are ambiguous; nothing was "
        "run (each tool call needs its own id)",
        request_ids=dict.fromkeys(request_ids),
    )


def _check_unknown(
    unknown: Sequence[str], what: str, approvals: Mapping[str, object] | None = None
) -> None:
    if not unknown:
        return
    hint = "send the assistant message holding the request along with the answer"
    if approvals is not None and any(rid in approvals for rid in unknown):
        hint = (
            "it names an approval request: answer that with request.create_response(approved, "
            "reason) (an InterruptResponseContent answers a question); nothing was sent or run"
        )
    raise UnknownResponseError(
        f"{_ids(unknown)} answer{'s' if len(unknown) == 1 else ''} no {what} request in "
        f"the history; {hint}",
        request_ids=list(unknown),
    )


def _ids(ids: Sequence[str]) -> str:
    quoted = ", ".join(repr(i) for i in ids)
    return f"request {quoted}" if len(ids) == 1 else f"requests {quoted}"


def _model_history(
    history: Sequence[ChatMessage],
    approvals: Mapping[str, ToolApprovalRequestContent],
    interrupts: Mapping[str, InterruptRequestContent],
    shown: Mapping[str, FunctionCallContent],
    *,
    at_end: bool = False,
) -> tuple[list[ChatMessage], int, list[ChatMessage]]:
    """The history as the model sees it, where the resumed block goes, and the rebuilt call
    messages (MEAI's ``ProcessFunctionApprovalResponses``). Local requests and their answers
    are removed (a message left empty goes). The calls handled now (``shown``) are rebuilt,
    one message per message that held their requests, unless the history holds them as plain
    calls; a request whose call was answered before becomes its call in place. The block is
    anchored just before the last message that held such content if something of it
    survives, else where it stood, so results stay next to their calls; with ``at_end``
    (verified answers) it goes at the end. A call is kept once."""
    plain = {c.call_id for m in history for c in m.contents if c.__class__ is FunctionCallContent}
    out: list[ChatMessage] = []
    rebuilt: dict[str | None, ChatMessage] = {}
    seen_calls: set[str] = set()
    anchor = -1
    for message in history:
        contents: list[AIContent] = []
        changed = relevant = holds_shown = False
        for c in message.contents:
            if isinstance(c, ToolApprovalRequestContent) and c.request_id in approvals:
                changed = relevant = True
                call_id = c.tool_call.call_id
                if call_id in shown and call_id not in plain:
                    if call_id not in seen_calls:
                        # One rebuilt message per message id (one for those without).
                        if message.message_id not in rebuilt:
                            rebuilt[message.message_id] = _copy_message(message, [])
                        rebuilt[message.message_id].contents.append(shown[call_id])
                        seen_calls.add(call_id)
                    continue
                assert isinstance(c.tool_call, FunctionCallContent)
                c = shown.get(call_id, c.tool_call)  # with the approved edit, if any
            elif (isinstance(c, ToolApprovalResponseContent) and c.request_id in approvals) or (
                isinstance(c, (InterruptRequestContent, InterruptResponseContent))
                and c.request_id in interrupts
            ):
                changed = relevant = True
                continue
            if isinstance(c, FunctionCallContent):
                if c.call_id in seen_calls:
                    changed = True
                    continue
                seen_calls.add(c.call_id)
                holds_shown = holds_shown or c.call_id in shown
            contents.append(c)
        if relevant:
            anchor = max(anchor, len(out))
        if not contents:
            continue
        if changed:
            message = _copy_message(message, contents)
        out.append(message)
        if holds_shown:
            anchor = max(anchor, len(out))
        elif not relevant and anchor == len(out) - 1 and message.role == ChatRole.TOOL:
            anchor = len(out)  # after the results of the same batch
    if at_end or anchor < 0:
        anchor = len(out)
    return out, anchor, list(rebuilt.values())


def _with_verified_calls(history: Sequence[ChatMessage], pairs: Pairs) -> list[ChatMessage]:
    """``history`` with each verified call in place of the client's copy: an approval's as
    its request (so it is rebuilt like any answered request), a question's as the call; the
    calls the client did not send back (Agent Framework's does not) in a message at the end."""
    stand_in: dict[str, AIContent] = {**pairs.verified}
    stand_in.update({a.call.call_id: a.request for a in pairs.approvals.values()})
    missing = dict(pairs.verified)
    out: list[ChatMessage] = []
    for message in history:
        contents = list(message.contents)
        for i, c in enumerate(contents):
            if c.__class__ is FunctionCallContent and missing.pop(c.call_id, None) is not None:
                assert isinstance(c, FunctionCallContent)
                contents[i] = stand_in[c.call_id]
        changed = any(a is not b for a, b in zip(contents, message.contents, strict=True))
        out.append(_copy_message(message, contents) if changed else message)
    if missing:
        out.append(ChatMessage(ChatRole.ASSISTANT, [stand_in[cid] for cid in missing]))
    return out


def _copy_message(message: ChatMessage, contents: list[AIContent]) -> ChatMessage:
    copy = message.clone()
    copy.contents = contents
    return copy
