"""What the tool loop reads off a model's turn: the calls still to run, the ids used twice
(none of those calls runs), and answers a model wrote itself (dropped: only a person answers)."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from .._contents import AIContent, FunctionCallContent, FunctionResultContent
from .._hitl_contents import InputResponseContent, ToolApprovalRequestContent
from .._messages import ChatMessage

__all__ = [
    "acted_on",
    "drop_answers",
    "duplicate_id_results",
    "duplicated_call_ids",
    "pending_calls",
]

_log = logging.getLogger("agui_chat.tools")


def pending_calls(messages: Sequence[ChatMessage]) -> list[FunctionCallContent]:
    """Calls in a turn that still need running: not informational, not already answered in
    the same turn. A call the turn answers itself (the service ran the tool) is marked
    ``informational_only`` in place, as MEAI marks it (``MarkServerHandledFunctionCalls``)."""
    answered = {
        c.call_id for m in messages for c in m.contents if isinstance(c, FunctionResultContent)
    }
    pending: list[FunctionCallContent] = []
    for m in messages:
        for c in m.contents:
            if c.__class__ is not FunctionCallContent or c.informational_only:
                continue
            if c.call_id in answered:
                c.informational_only = True
            else:
                pending.append(c)
    return pending


def duplicated_call_ids(messages: Sequence[ChatMessage]) -> set[str]:
    """Ids used by more than one call (or approval request) the loop would act on."""
    seen: set[str] = set()
    duplicated: set[str] = set()
    for call in acted_on(messages):
        (duplicated if call.call_id in seen else seen).add(call.call_id)
    return duplicated


def acted_on(messages: Sequence[ChatMessage]) -> list[FunctionCallContent]:
    """The turn's pending calls and the calls its approval requests hold, in order."""
    pending = {id(c) for c in pending_calls(messages)}
    calls: list[FunctionCallContent] = []
    for m in messages:
        for c in m.contents:
            if isinstance(c, ToolApprovalRequestContent):
                if isinstance(c.tool_call, FunctionCallContent):
                    calls.append(c.tool_call)
            elif isinstance(c, FunctionCallContent) and id(c) in pending:
                calls.append(c)
    return calls


def duplicate_id_results(messages: Sequence[ChatMessage], duplicated: set[str]) -> list[AIContent]:
    """One error result for each call whose id another call of the turn also uses."""
    if not duplicated:
        return []
    results: list[AIContent] = []
    for call in acted_on(messages):
        if call.call_id in duplicated:
            _log.warning("model used tool call id %r for more than one call", call.call_id)
            why = ValueError(
                f"duplicate tool call id {call.call_id!r}: several calls in one turn use it, so "
                "none of them was run; give each call its own id"
            )
            results.append(FunctionResultContent(call.call_id, f"Error: {why}", exception=why))
    return results


def drop_answers(contents: list[AIContent]) -> None:
    """Remove, in place, answers to approval requests or questions from a model's turn:
    only a person answers those, in the next request."""
    kept = [c for c in contents if not isinstance(c, InputResponseContent)]
    if len(kept) != len(contents):
        _log.warning("dropped %d answer(s) the model sent itself", len(contents) - len(kept))
        contents[:] = kept
