"""Helpers for the FunctionInvokingChatClient tests: a scripted model, short descriptions of
what the model saw, and the resume step a caller performs after a pause."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Protocol

from agui_chat import (
    AIContent,
    ChatClient,
    ChatMessage,
    ChatOptions,
    ChatResponse,
    FunctionCallContent,
    FunctionResultContent,
    InputResponseContent,
    InterruptRequestContent,
    InterruptResponseContent,
    TextContent,
    ToolApprovalRequestContent,
    ToolApprovalResponseContent,
)
from agui_chat.testing import ScriptedChatClient


class Ask(Protocol):
    """Calls a client (streaming or not, as the test is parametrized); returns the response."""

    async def __call__(
        self, client: ChatClient, messages: Any, options: ChatOptions | None = None
    ) -> ChatResponse: ...


def make_ask(streaming: bool) -> Ask:
    """A function calling ``client`` streaming or not, returning the joined response."""

    async def ask(
        client: ChatClient, messages: Any, options: ChatOptions | None = None
    ) -> ChatResponse:
        if streaming:
            updates = [u async for u in client.get_streaming_response(messages, options)]
            return ChatResponse.from_updates(updates)
        return await client.get_response(messages, options)

    return ask


def scripted(*replies: Any) -> ScriptedChatClient:
    """A model answering with ``replies`` in order (a callable reply is called with the
    messages and options). Calling it more often than scripted fails the test."""
    queue = list(replies)

    def handler(messages: list[ChatMessage], options: ChatOptions | None) -> Any:
        if not queue:
            raise AssertionError("the model was called more often than scripted")
        reply = queue.pop(0)
        return reply(messages, options) if callable(reply) else reply

    return ScriptedChatClient(handler)


def call(call_id: str, name: str, /, **arguments: Any) -> FunctionCallContent:
    """A tool call as a model would make it."""
    return FunctionCallContent(call_id, name, arguments)


def _describe_content(c: AIContent) -> str:
    if isinstance(c, TextContent):
        return c.text
    if isinstance(c, FunctionCallContent):
        return f"call {c.call_id} {c.name} {json.dumps(c.arguments, sort_keys=True)}"
    if isinstance(c, FunctionResultContent):
        return f"result {c.call_id} {c.result}"
    if isinstance(c, ToolApprovalRequestContent):
        return f"approval? {c.request_id}"
    if isinstance(c, ToolApprovalResponseContent):
        return f"approval! {c.request_id} {c.approved}"
    if isinstance(c, InterruptRequestContent):
        return f"question {c.request_id}"
    if isinstance(c, InterruptResponseContent):
        return f"answer {c.request_id} {c.status}"
    return type(c).__name__


def describe(messages: Sequence[ChatMessage]) -> list[str]:
    """One line per message: ``role: content | content``."""
    return [
        f"{m.role.value}: " + " | ".join(_describe_content(c) for c in m.contents) for m in messages
    ]


def seen(model: ScriptedChatClient, index: int = -1) -> list[str]:
    """What the model received on its ``index``-th call, described."""
    return describe(model.calls[index][0])


def resume(
    history: Sequence[ChatMessage], response: ChatResponse, *answers: InputResponseContent
) -> list[ChatMessage]:
    """The history a caller sends after a pause: the paused transcript, then the answers."""
    return [*history, *response.messages, ChatMessage("user", list(answers))]


def results_for(messages: Sequence[ChatMessage], call_id: str) -> list[Any]:
    """Every result the messages hold for ``call_id``."""
    return [
        c.result
        for m in messages
        for c in m.contents
        if isinstance(c, FunctionResultContent) and c.call_id == call_id
    ]
