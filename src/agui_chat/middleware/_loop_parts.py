"""Pieces of the tool loop that are not the loop itself: the recorder of a streamed turn,
the options of the next and of the last round trip, and small content builders."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence

from .._contents import AIContent, FunctionCallContent, FunctionResultContent
from .._messages import ChatMessage
from .._options import ChatOptions, ChatToolMode
from .._responses import ChatResponse, ChatResponseUpdate
from .._role_and_finish_reason import ChatRole
from .._tool_registry import ToolRegistry, ToolSource
from .._tools import AIFunctionDeclaration, AITool

__all__ = [
    "ADDITIONAL_TOOLS",
    "TurnRecorder",
    "bad_arguments",
    "informational",
    "is_error",
    "new_id",
    "next_options",
    "tool_map",
    "tool_message",
    "without_functions",
]


class TurnRecorder:
    """Remembers a streamed turn cheaply, in case it ends with tool calls.

    The loop appends to ``deltas`` each text delta (the ``TextContent``) that continues the
    last recorded update's message (same id, role and author, or none given); every other
    update goes through :meth:`add` and is kept whole. :meth:`build` folds them into the
    turn's messages exactly as ``ChatResponse.from_updates`` would; the turn's response-level
    fields (response and conversation ids, finish reason) come from the updates kept whole.

    The deltas are kept as the contents that arrived, not as their strings: reaching into
    each one for its string touches memory the caller may never touch, and costs about 5%
    of a stream (bench/README.md).
    """

    __slots__ = ("deltas", "updates")

    def __init__(self) -> None:
        self.updates: list[ChatResponseUpdate] = []
        self.deltas: list[AIContent] = []

    def add(
        self,
        update: ChatResponseUpdate,
        gate: Callable[[list[AIContent]], bool] | None,
    ) -> bool:
        """Keep ``update`` whole, after ``gate`` (if any) turned its approval-needing calls
        into requests. Returns whether the update holds a tool call."""
        self._flush()
        self.updates.append(update)
        return gate is not None and bool(update.contents) and gate(update.contents)

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


#: How a clash names the tool loop's own tools.
ADDITIONAL_TOOLS = "FunctionInvokingChatClient(additional_tools=...)"


def tool_map(
    additional: Sequence[AITool | ToolSource], options: ChatOptions | None
) -> dict[str, AITool]:
    """The round trip's tools by name: ``additional`` (each source's current tools) and
    ``options.tools``; ``DuplicateToolError`` when two different tools share a name."""
    registry = ToolRegistry()
    registry.add(additional, ADDITIONAL_TOOLS)
    if options is not None and options.tools:
        registry.add(options.tools, "ChatOptions.tools")
    return registry.by_name


def informational(call: FunctionCallContent) -> FunctionCallContent:
    return FunctionCallContent(
        call.call_id,
        call.name,
        call.arguments,
        raw_arguments=call.raw_arguments,
        informational_only=True,
        exception=call.exception,
        additional_properties=call.additional_properties,
        raw_representation=call.raw_representation,
    )


def bad_arguments(call: FunctionCallContent) -> FunctionResultContent:
    why = call.exception or ValueError("arguments are not a JSON object")
    return FunctionResultContent(
        call.call_id,
        f"Error: invalid arguments for {call.name!r}: {why}",
        exception=why,
    )


def is_error(result: AIContent) -> bool:
    return isinstance(result, FunctionResultContent) and result.exception is not None


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
    needs_mode_reset = (
        options is not None
        and options.tool_mode is not None
        and (options.tool_mode.mode == "required")
    )
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
