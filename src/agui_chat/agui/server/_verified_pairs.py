"""The verified answers of a resume as the consent engine takes them (one ``VerifiedPair``
per request, built from the signed token), and the history the pipeline gets."""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass
from typing import Any

from ..._contents import AIContent, FunctionCallContent, FunctionResultContent
from ..._hitl_contents import (
    InterruptRequestContent,
    InterruptResponseContent,
    InterruptStatus,
    ToolApprovalRequestContent,
    ToolApprovalResponseContent,
)
from ..._messages import ChatMessage
from ..._role_and_finish_reason import ChatRole
from ...middleware._pairs import VerifiedPair
from ...middleware._tool_tracing import REQUESTED_AT, TRACEPARENT
from ._signing import InterruptClaims


@dataclass
class Answer:
    """One verified resume entry."""

    index: int
    token: str
    claims: InterruptClaims
    status: InterruptStatus
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


def pairs_of(
    answers: Sequence[Answer], calls: Mapping[str, FunctionCallContent]
) -> list[VerifiedPair]:
    """The pairs the tool loop resumes with, for the answers about a call: the call as the
    token vouches for it (with the history copy's metadata); a question after the earlier
    answers of the same call, so ``request_input`` finds them all."""
    pairs: list[VerifiedPair] = []
    for answer in answers:
        call_id = answer.claims.call_id
        if call_id is None or answer.claims.tool_name is None:
            continue  # a question no tool call asked: not the tool loop's
        call = answer.call(calls.get(call_id))
        if answer.claims.kind != "approval":
            pairs += [VerifiedPair(call, q, a) for q, a in _question_pairs(answer, call_id)]
            continue
        request_id = f"approval:{call_id}"
        request = ToolApprovalRequestContent(
            request_id, call, allow_edits=True, additional_properties=answer.trace_properties()
        )
        response = ToolApprovalResponseContent(
            request_id,
            answer.approved,
            call,
            reason=answer.reason,
            edited_arguments=answer.edited_arguments,
        )
        pairs.append(VerifiedPair(call, request, response))
    return pairs


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
    unbound = [_question_pair(a, None) for a in fresh if a.claims.call_id is None]
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
            out.append(message.clone())
            out[-1].contents = kept
    return out


def _question_pairs(
    answer: Answer, call_id: str
) -> list[tuple[InterruptRequestContent, InterruptResponseContent]]:
    """The earlier questions of the same call with their answers (each bound to the message
    and schema it answered), then this question and its answer."""
    key = (answer.claims.question or {}).get("key")
    pairs = []
    for position, (prior_key, status, payload, *question) in enumerate(answer.claims.answers):
        message, schema = [*question, None, None][:2]
        if prior_key == key:
            continue
        request_id = f"question:{call_id}:earlier-{position}"
        request = InterruptRequestContent(
            request_id, message=message, tool_call_id=call_id, response_schema=schema, key=prior_key
        )
        pairs.append((request, InterruptResponseContent(request_id, payload, status)))
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
        response_schema=question.get("schema"),
        key=question.get("key"),
        additional_properties=answer.trace_properties(),
    )
    return request, InterruptResponseContent(request_id, answer.payload, answer.status)
