"""Re-pairing a person's answers with the requests of a paused run.

Given the history a caller sends back, work out — before anything runs — which approved
calls to run, which rejected calls to answer, which tools to invoke again with their
answers, and what history the model should see (requests turned back into calls, answers
removed). Every rule of DESIGN §3 that can be checked up front is checked here, so a bad
answer raises a typed error and nothing is half applied.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._contents import (
    AIContent,
    FunctionCallContent,
    FunctionResultContent,
)
from .._exceptions import (
    DuplicateResponseError,
    ExpiredRequestError,
    InvalidResponseError,
    UnansweredRequestError,
    UnknownResponseError,
)
from .._hitl_contents import (
    InterruptRequestContent,
    InterruptResponseContent,
    ToolApprovalRequestContent,
    ToolApprovalResponseContent,
)
from .._input import InputAnswer
from .._messages import ChatMessage
from .._role_and_finish_reason import ChatRole
from .._tools import AIFunction, AITool, ApprovalRequiredAIFunction
from ._invocation import rejected_text

__all__ = ["ResumePlan", "ScheduledCall", "approval_request_id", "input_request_id", "plan_resume"]


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
    answers: dict[str, InputAnswer] = field(default_factory=dict)


@dataclass
class ResumePlan:
    """What to do with the answers found in a history.

    ``rebuilt`` are the assistant messages that hold the approved and rejected calls again
    (one per message that held their requests, keeping its id and metadata), as MEAI
    rebuilds them; they open the resumed transcript and go into the model's history at
    ``anchor`` (before the tool results), unless the service keeps the history.
    ``handled`` maps each call id to the call objects of its request and answer, which are
    marked ``informational_only`` once the call has its result.
    """

    model_history: list[ChatMessage]
    to_run: list[ScheduledCall] = field(default_factory=list)
    rejected: list[FunctionResultContent] = field(default_factory=list)
    anchor: int = 0
    rebuilt: list[ChatMessage] = field(default_factory=list)
    handled: dict[str, list[FunctionCallContent]] = field(default_factory=dict)

    @property
    def has_work(self) -> bool:
        return bool(self.to_run or self.rejected)

    def mark_handled(self, call_ids: Sequence[str]) -> None:
        """Mark the request's and the answer's calls of each of ``call_ids`` (which now have
        a result) ``informational_only``, in place, as MEAI does: a stacked loop or a replay
        then skips them by flag."""
        for call_id in call_ids:
            for call in self.handled.get(call_id, ()):
                call.informational_only = True


def _local_function(tools: Mapping[str, AITool], name: str) -> AIFunction | None:
    tool = tools.get(name)
    return tool if isinstance(tool, AIFunction) else None


def plan_resume(history: Sequence[ChatMessage], tools: Mapping[str, AITool]) -> ResumePlan:
    """Pair the answers in ``history`` with their requests and plan what runs.

    Only requests for tools this pipeline can run are handled here; requests that came from
    elsewhere (a remote agent's approvals) are left in the history for the inner client.

    Answers count only in user messages (a model cannot answer its own requests). A question
    resumes a call only if its tool could have asked it: one call of a local tool, not
    ``informational_only``, with arguments, and, if the call was gated, approved (by an
    answer given before the question). Any other question is left for the inner client.
    Requests of a pending call that share an id with a different call or request are
    ambiguous: the resume is refused (``InvalidResponseError``) and nothing runs.
    """
    answered: set[str] = set()
    flagged: set[str] = set()  # calls whose request or answer says it was handled
    handled: dict[str, list[FunctionCallContent]] = {}
    calls: dict[str, list[FunctionCallContent]] = {}
    informational: set[str] = set()
    approvals: dict[str, ToolApprovalRequestContent] = {}
    interrupts: dict[str, InterruptRequestContent] = {}
    asked_at: dict[str, int] = {}
    ambiguous_requests: set[str] = set()
    approval_answers: dict[str, list[ToolApprovalResponseContent]] = {}
    approved_at: dict[str, int] = {}
    interrupt_answers: dict[str, list[InterruptResponseContent]] = {}
    for index, message in enumerate(history):
        from_person = message.role == ChatRole.USER
        for c in message.contents:
            if isinstance(c, FunctionResultContent):
                answered.add(c.call_id)
            elif isinstance(c, FunctionCallContent):
                _add_call(calls, informational, c)
            elif isinstance(c, ToolApprovalRequestContent):
                if not isinstance(c.tool_call, FunctionCallContent):
                    continue  # a call the service runs: its approval passes through
                handled.setdefault(c.tool_call.call_id, []).append(c.tool_call)
                if c.tool_call.informational_only:
                    flagged.add(c.tool_call.call_id)
                first = approvals.setdefault(c.request_id, c)
                assert isinstance(first.tool_call, FunctionCallContent)
                if not _same_call(first.tool_call, c.tool_call):
                    ambiguous_requests.add(c.request_id)
                _add_call(calls, informational, c.tool_call)
            elif isinstance(c, InterruptRequestContent):
                asked = interrupts.setdefault(c.request_id, c)
                asked_at.setdefault(c.request_id, index)
                if not _same_question(asked, c):
                    ambiguous_requests.add(c.request_id)
            elif not from_person:
                continue  # an answer only a person gives: never one in a model's message
            elif isinstance(c, ToolApprovalResponseContent):
                if not isinstance(c.tool_call, FunctionCallContent):
                    continue  # an answer for the service: passed through
                handled.setdefault(c.tool_call.call_id, []).append(c.tool_call)
                if c.tool_call.informational_only:
                    flagged.add(c.tool_call.call_id)
                approval_answers.setdefault(c.request_id, []).append(c)
                if c.approved:
                    approved_at.setdefault(c.request_id, index)
            elif isinstance(c, InterruptResponseContent):
                interrupt_answers.setdefault(c.request_id, []).append(c)

    _forget_edited_copies(calls, approvals, approval_answers)

    def local_call(call_id: str | None) -> bool:
        return call_id is not None and any(
            _local_function(tools, c.name) is not None for c in calls.get(call_id, ())
        )

    def asked_by_its_tool(rid: str, question: InterruptRequestContent) -> bool:
        """Whether ``question`` may resume its call: the loop ran that call and its tool
        asked (never for a call that was not approved, or that no invoker runs)."""
        call_id = question.tool_call_id
        assert call_id is not None
        [call] = calls[call_id]
        if call_id in informational or call.unparseable:
            return False
        gated = [r for r in approvals.values() if r.tool_call.call_id == call_id]
        return not gated or any(
            approved_at.get(r.request_id, len(history)) < asked_at[rid] for r in gated
        )

    local_approvals = {
        rid: r
        for rid, r in approvals.items()
        if _local_function(tools, r.tool_call.name) is not None
    }
    _check_unknown(approval_answers, approvals, "approval")
    _check_unknown(interrupt_answers, interrupts, "question")

    pending_approvals = {
        rid: r
        for rid, r in local_approvals.items()
        if r.tool_call.call_id not in answered and r.tool_call.call_id not in flagged
    }
    candidates = {
        rid: r
        for rid, r in interrupts.items()
        if local_call(r.tool_call_id) and r.tool_call_id not in answered
    }
    _check_ambiguous(
        [(rid, r.tool_call.call_id) for rid, r in pending_approvals.items()]
        + [(rid, r.tool_call_id or "") for rid, r in candidates.items()],
        calls,
        ambiguous_requests,
    )
    pending_interrupts = {rid: r for rid, r in candidates.items() if asked_by_its_tool(rid, r)}
    local_interrupts = {
        rid: r
        for rid, r in interrupts.items()
        if rid in pending_interrupts or (local_call(r.tool_call_id) and r.tool_call_id in answered)
    }
    missing = [rid for rid in pending_approvals if rid not in approval_answers] + [
        rid for rid in pending_interrupts if rid not in interrupt_answers
    ]
    if missing:
        raise UnansweredRequestError(
            f"{_ids(missing)} {'has' if len(missing) == 1 else 'have'} no answer; a paused run "
            "must be answered in one go (approve or reject every approval request, answer or "
            "cancel every question)",
            request_ids=missing,
        )
    duplicates = [
        rid
        for rid in [*pending_approvals, *pending_interrupts]
        if len(approval_answers.get(rid, ())) + len(interrupt_answers.get(rid, ())) > 1
    ]
    if duplicates:
        raise DuplicateResponseError(
            f"{_ids(duplicates)} answered more than once; answer each request exactly once",
            request_ids=duplicates,
        )

    plan = ResumePlan(model_history=[], handled=handled)
    approved_calls: dict[str, ScheduledCall] = {}
    for rid, request in pending_approvals.items():
        answer = approval_answers[rid][0]
        call = request.tool_call
        function = _local_function(tools, call.name)
        assert function is not None
        if not answer.approved:
            plan.rejected.append(FunctionResultContent(call.call_id, rejected_text(answer.reason)))
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
        approved_calls[call.call_id] = ScheduledCall(
            FunctionCallContent(call.call_id, call.name, arguments), function
        )

    per_call_answers: dict[str, dict[str, InputAnswer]] = {}
    for rid, question in pending_interrupts.items():
        reply = interrupt_answers[rid][0]
        if reply.status == "resolved":
            if question.is_expired():
                raise ExpiredRequestError(
                    f"question {rid!r} expired; it can only be cancelled", request_ids=[rid]
                )
            question.validate_payload(reply.payload)
        assert question.tool_call_id is not None
        key = question.key or question.message or rid
        per_call_answers.setdefault(question.tool_call_id, {})[key] = InputAnswer(
            reply.status, reply.payload
        )

    rejected = {r.call_id for r in plan.rejected}
    for call_id, answers in per_call_answers.items():
        if call_id in rejected:
            continue  # a rejected call never runs, whatever else was answered for it
        scheduled = approved_calls.get(call_id)
        if scheduled is None:
            [call] = calls[call_id]
            function = _local_function(tools, call.name)
            assert function is not None
            arguments = _approved_arguments(call_id, approvals, approval_answers, call)
            scheduled = ScheduledCall(FunctionCallContent(call_id, call.name, arguments), function)
            approved_calls[call_id] = scheduled
        scheduled.answers = answers
    plan.to_run = list(approved_calls.values())

    shown = {s.call.call_id: s.call for s in plan.to_run}
    for result in plan.rejected:
        [call] = calls[result.call_id]
        shown[result.call_id] = FunctionCallContent(call.call_id, call.name, call.arguments)
    plan.model_history, plan.anchor, plan.rebuilt = _model_history(
        history, local_approvals, local_interrupts, shown
    )
    for message in plan.rebuilt:
        for c in message.contents:
            assert isinstance(c, FunctionCallContent)
            handled.setdefault(c.call_id, []).append(c)
    return plan


def _same_call(a: FunctionCallContent, b: FunctionCallContent) -> bool:
    return (
        a.call_id == b.call_id
        and a.name == b.name
        and a.arguments == b.arguments
        and a.raw_arguments == b.raw_arguments
    )


def _forget_edited_copies(
    calls: dict[str, list[FunctionCallContent]],
    approvals: Mapping[str, ToolApprovalRequestContent],
    answers: Mapping[str, list[ToolApprovalResponseContent]],
) -> None:
    """Drop the rebuilt copy of an approved, edited call (the loop returned it with the
    edited arguments): it is that call, not another call with the same id."""
    for rid, given in answers.items():
        request = approvals.get(rid)
        if request is None:
            continue
        for answer in given:
            if not (answer.approved and answer.edited_arguments is not None):
                continue
            variants = calls.get(request.tool_call.call_id, [])
            calls[request.tool_call.call_id] = [
                c
                for c in variants
                if _same_call(c, request.tool_call)  # type: ignore[arg-type]
                or not (c.name == request.tool_call.name and c.arguments == answer.edited_arguments)
            ]


def _same_question(a: InterruptRequestContent, b: InterruptRequestContent) -> bool:
    return a.to_dict() == b.to_dict()


def _add_call(
    calls: dict[str, list[FunctionCallContent]], informational: set[str], call: FunctionCallContent
) -> None:
    """Record ``call`` under its id, once per different call that uses the id."""
    seen = calls.setdefault(call.call_id, [])
    if not any(_same_call(call, c) for c in seen):
        seen.append(call)
    if call.informational_only:
        informational.add(call.call_id)


def _check_ambiguous(
    pending: Sequence[tuple[str, str]],
    calls: Mapping[str, Sequence[FunctionCallContent]],
    ambiguous_requests: set[str],
) -> None:
    """Refuse a resume whose pending requests cannot be told apart: a request id used by two
    different requests, or a call id used by two different calls (a model may send the same
    id twice); an answer could then run a call the person never saw."""
    call_ids = sorted(
        {cid for rid, cid in pending if rid in ambiguous_requests or len(calls.get(cid, ())) > 1}
    )
    if not call_ids:
        return
    request_ids = [rid for rid, cid in pending if cid in call_ids]
    raise InvalidResponseError(
        f"tool call id{'s' if len(call_ids) > 1 else ''} {', '.join(map(repr, call_ids))} "
        f"{'are' if len(call_ids) > 1 else 'is'} used by more than one call or request, so "
        f"the answers to {_ids(list(dict.fromkeys(request_ids)))} are ambiguous; nothing was "
        "run (each tool call needs its own id)",
        request_ids=dict.fromkeys(request_ids),
    )


def _approved_arguments(
    call_id: str,
    approvals: Mapping[str, ToolApprovalRequestContent],
    answers: Mapping[str, list[ToolApprovalResponseContent]],
    call: FunctionCallContent,
) -> dict[str, Any] | None:
    """The arguments a call runs with: its approved edit, if an earlier approval made one."""
    for rid, request in approvals.items():
        if request.tool_call.call_id == call_id:
            for answer in answers.get(rid, ()):
                if answer.approved and answer.edited_arguments is not None:
                    return answer.edited_arguments
    return call.arguments


def _check_unknown(
    answers: Mapping[str, Sequence[AIContent]], requests: Mapping[str, Any], what: str
) -> None:
    unknown = [rid for rid in answers if rid not in requests]
    if unknown:
        raise UnknownResponseError(
            f"{_ids(unknown)} answer{'s' if len(unknown) == 1 else ''} no {what} request in "
            "the history; send the assistant message holding the request along with the answer",
            request_ids=unknown,
        )


def _ids(ids: Sequence[str]) -> str:
    quoted = ", ".join(repr(i) for i in ids)
    return f"request {quoted}" if len(ids) == 1 else f"requests {quoted}"


def _model_history(
    history: Sequence[ChatMessage],
    approvals: Mapping[str, ToolApprovalRequestContent],
    interrupts: Mapping[str, InterruptRequestContent],
    shown: Mapping[str, FunctionCallContent],
) -> tuple[list[ChatMessage], int, list[ChatMessage]]:
    """The history as the model must see it, where the resumed block goes, and the
    rebuilt call messages (MEAI's placement, ``ProcessFunctionApprovalResponses``).

    Local approval requests and their answers, and local questions and theirs, are removed
    (a message left empty goes). The calls of the requests handled now (``shown``, by call
    id) are rebuilt as assistant messages, one per message that held the requests (its
    id, author and metadata kept); a call the history already holds as a plain call is not
    rebuilt. A request whose call was answered before is turned back into its call in place
    (so its result follows a call). The block is anchored just before the last message that
    held such content if something of it survives, else where it stood: tool results stay
    next to their calls, ahead of anything the caller sent after the answers. A call that
    appears twice is kept once.
    """
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
                        _rebuilt_message(rebuilt, message).contents.append(shown[call_id])
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
    return out, (anchor if anchor >= 0 else len(out)), list(rebuilt.values())


def _copy_message(message: ChatMessage, contents: list[AIContent]) -> ChatMessage:
    return ChatMessage(
        message.role,
        contents,
        author_name=message.author_name,
        message_id=message.message_id,
        additional_properties=message.additional_properties,
        raw_representation=message.raw_representation,
    )


def _rebuilt_message(rebuilt: dict[str | None, ChatMessage], source: ChatMessage) -> ChatMessage:
    """The rebuilt call message for the requests of ``source``: one per message id (one in
    all for requests whose message had none), with ``source``'s metadata."""
    key = source.message_id
    if key not in rebuilt:
        rebuilt[key] = _copy_message(source, [])
    return rebuilt[key]
