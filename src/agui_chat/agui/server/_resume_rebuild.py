"""Rebuilding the history of a checked resume: each answered call turned into the request the
tool loop pairs its answer with, rebuilt from the verified token (never from call data the
client sent), kept results placed after their calls."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..._contents import AIContent, FunctionCallContent, FunctionResultContent
from ..._hitl_contents import (
    InterruptRequestContent,
    InterruptResponseContent,
    ToolApprovalRequestContent,
    ToolApprovalResponseContent,
)
from ..._messages import ChatMessage
from ..._role_and_finish_reason import ChatRole
from ..._telemetry import REQUESTED_AT, TRACEPARENT
from ._signing import InterruptClaims, canonical_json

__all__ = ["Answer", "HistoryIndex", "index_history", "rebuild_history"]


@dataclass
class Answer:
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


_Position = tuple[int, int, FunctionCallContent]


@dataclass
class HistoryIndex:
    """Where each call sits in the history (its first occurrence), which calls already have
    a result, and which call ids more than one different call uses (ambiguous)."""

    calls: dict[str, _Position] = field(default_factory=dict)
    answered: set[str] = field(default_factory=set)
    ambiguous: set[str] = field(default_factory=set)


def index_history(messages: Sequence[ChatMessage]) -> HistoryIndex:
    """Index every call and result of the history, in every message."""
    index = HistoryIndex()
    for m_index, message in enumerate(messages):
        for c_index, content in enumerate(message.contents):
            if isinstance(content, FunctionCallContent):
                first = index.calls.setdefault(content.call_id, (m_index, c_index, content))
                if first[2] is not content and not _same_call(first[2], content):
                    index.ambiguous.add(content.call_id)
            elif isinstance(content, FunctionResultContent):
                index.answered.add(content.call_id)
    return index


def _same_call(a: FunctionCallContent, b: FunctionCallContent) -> bool:
    return (
        a.name == b.name
        and canonical_json(a.arguments) == canonical_json(b.arguments)
        and a.raw_arguments == b.raw_arguments
    )


def rebuild_history(
    messages: Sequence[ChatMessage],
    calls: Mapping[str, _Position],
    fresh: Sequence[Answer],
    replayed: Sequence[tuple[Answer, str]],
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
    answer: Answer, call_id: str
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
    answer: Answer, call_id: str | None
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
