"""A model's turn as the tool loop reads it: recording a streamed turn, screening its calls
(gated for approval, or marked never to run), the calls still to run, ids used twice, and
each round trip's tools and options."""

from __future__ import annotations

import copy
import logging
import uuid
from collections import Counter
from collections.abc import Callable, Mapping, Sequence

from .._contents import AIContent, FunctionCallContent, FunctionResultContent
from .._hitl_contents import InputResponseContent, ToolApprovalRequestContent
from .._messages import ChatMessage
from .._options import ChatOptions, ChatToolMode
from .._responses import ChatResponse, ChatResponseUpdate
from .._role_and_finish_reason import ChatRole
from .._tools import AIFunction, AIFunctionDeclaration, AITool
from ..consent._grants import may_remember
from ..consent._rules import approval_request_id, find_tool, gate
from ._tool_tracing import ToolTracing

_log = logging.getLogger("agui_chat.tools")


class TurnRecorder:
    """Remembers a streamed turn cheaply, in case it ends with tool calls: the loop appends
    to ``deltas`` each ``TextContent`` continuing the last recorded update's message (kept
    as they came: reading their strings costs ~5% of a stream), other updates go through
    :meth:`add`; :meth:`build` folds them as ``ChatResponse.from_updates`` would."""

    __slots__ = ("deltas", "updates")

    def __init__(self) -> None:
        self.updates: list[ChatResponseUpdate] = []
        self.deltas: list[AIContent] = []

    def add(self, update: ChatResponseUpdate, gate: Callable[[list[AIContent]], bool]) -> bool:
        """Keep ``update`` after ``gate`` screens it; whether it holds a tool call."""
        self._flush()
        self.updates.append(update)
        return bool(update.contents) and gate(update.contents)

    def _flush(self) -> None:
        if self.deltas:
            last = self.updates[-1]
            self.updates.append(
                ChatResponseUpdate(last.role, list(self.deltas), message_id=last.message_id)
            )
            self.deltas.clear()  # in place: the loop holds this list

    def build(self) -> ChatResponse:
        self._flush()
        return ChatResponse.from_updates(self.updates)


def bad_arguments(call: FunctionCallContent) -> FunctionResultContent:
    why = call.exception or ValueError("arguments are not a JSON object")
    text = f"Error: invalid arguments for {call.name!r}: {why}"
    return FunctionResultContent(call.call_id, text, exception=why)


def tool_message(results: list[AIContent]) -> ChatMessage:
    return ChatMessage(ChatRole.TOOL, results, message_id=new_id())


def new_id() -> str:
    return uuid.uuid4().hex


def without_functions(options: ChatOptions | None) -> ChatOptions | None:
    """Options for the last round trip: no function tools, so the model must answer."""
    if options is None or not options.tools:
        return options
    trimmed = options.clone()
    trimmed.tools = [t for t in options.tools if not isinstance(t, AIFunctionDeclaration)]
    if not trimmed.tools:
        trimmed.tools = None
        trimmed.tool_mode = None
    return trimmed


def next_options(options: ChatOptions | None, turn: ChatResponse) -> ChatOptions | None:
    """Options for the next round trip: a required tool mode is relaxed (or the model would
    call tools forever) and a conversation id the service reported is kept."""
    tool_mode = options.tool_mode if options is not None else None
    needs_mode_reset = tool_mode is not None and tool_mode.mode == "required"
    new_conversation = turn.conversation_id and (
        options is None or options.conversation_id != turn.conversation_id
    )
    if not needs_mode_reset and not new_conversation:
        return options
    updated = options.clone() if options is not None else ChatOptions()
    if needs_mode_reset:
        updated.tool_mode = ChatToolMode.AUTO
    if new_conversation:
        updated.conversation_id = turn.conversation_id
    return updated


def pending_calls(messages: Sequence[ChatMessage]) -> list[FunctionCallContent]:
    """Calls in a turn that still need running. A call the turn answers itself (the service
    ran it) is marked ``informational_only`` in place, as MEAI's
    ``MarkServerHandledFunctionCalls`` does."""
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


def duplicate_ids(messages: Sequence[ChatMessage]) -> tuple[set[str], list[AIContent]]:
    """The ids several calls (or approval requests) of the turn use, and an error per call:
    the turn's pending calls and the calls its approval requests hold count, in order."""
    pending = {id(c) for c in pending_calls(messages)}
    acted: list[FunctionCallContent] = []
    for m in messages:
        for c in m.contents:
            if isinstance(c, ToolApprovalRequestContent):
                if isinstance(c.tool_call, FunctionCallContent):
                    acted.append(c.tool_call)
            elif isinstance(c, FunctionCallContent) and id(c) in pending:
                acted.append(c)
    counts = Counter(call.call_id for call in acted)
    duplicated = {call_id for call_id, count in counts.items() if count > 1}
    results: list[AIContent] = []
    for call in acted:
        if call.call_id in duplicated:
            _log.warning("model used tool call id %r for more than one call", call.call_id)
            why = ValueError(
                f"duplicate tool call id {call.call_id!r}: several calls in one turn use it, so "
                "none of them was run; give each call its own id"
            )
            results.append(FunctionResultContent(call.call_id, f"Error: {why}", exception=why))
    return duplicated, results


def _drop_answers(contents: list[AIContent]) -> None:
    """Remove, in place, answers a model sent itself: only a person answers."""
    kept = [c for c in contents if not isinstance(c, InputResponseContent)]
    if len(kept) != len(contents):
        _log.warning("dropped %d answer(s) the model sent itself", len(contents) - len(kept))
        contents[:] = kept


def gate_approvals(
    contents: list[AIContent],
    tools: dict[str, AITool],
    telemetry: ToolTracing,
    covered: Mapping[str, tuple[FunctionCallContent, object]] | None = None,
) -> bool:
    """Replace, in place, each call that needs a person's approval with a request (unless a
    remembered approval covers that very call: ``covered``, the call objects a grant was
    found for, by call id), and drop answers the model sent itself; whether ``contents``
    holds any tool call."""
    saw_call = answers = False
    for i, c in enumerate(contents):
        if c.__class__ is not FunctionCallContent:
            answers = answers or isinstance(c, InputResponseContent)
            continue
        saw_call = True
        call: FunctionCallContent = c
        if call.informational_only or call.unparseable:
            continue
        tool = find_tool(tools, call.name)
        asks = gate(tool, call.arguments) if tool is not None else None
        grant = covered.get(call.call_id) if covered else None
        if asks is not None and (grant is None or grant[0] is not call):
            contents[i] = request = ToolApprovalRequestContent(
                approval_request_id(call.call_id),
                call,
                message=asks.message,
                allow_edits=asks.allow_edits,
                allow_remember=may_remember(tool),
            )
            telemetry.requested(request)
    if answers:
        _drop_answers(contents)
    return saw_call


def hold_unrun(contents: list[AIContent], tools: dict[str, AITool]) -> bool:
    """The last round trip's screen: each call of a local tool is marked
    ``informational_only`` (in place), so no later answer can run it. Returns ``False``: the
    loop ends after this round trip."""
    _drop_answers(contents)
    for i, c in enumerate(contents):
        if (
            c.__class__ is FunctionCallContent
            and not c.informational_only
            and isinstance(find_tool(tools, c.name), AIFunction)
        ):
            contents[i] = held = copy.copy(c)
            held.informational_only = True
    return False
