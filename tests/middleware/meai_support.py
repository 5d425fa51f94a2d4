"""A port of the harness of MEAI's FunctionInvokingChatClient tests (``InvokeAndAssertAsync``
and ``InvokeAndAssertStreamingAsync`` in dotnet/extensions,
test/Libraries/Microsoft.Extensions.AI.Tests/ChatCompletion/): a test model that checks what
it receives on each round trip and answers with queued messages (fresh message ids, as
MEAI's does), and a comparison of message lists that, like MEAI's ``EqualMessageLists``,
looks at roles and contents but not at message ids or ``informational_only``."""

from __future__ import annotations

import copy
import uuid
from collections.abc import AsyncIterator, Sequence
from typing import Any

from agui_chat import (
    AIContent,
    AITool,
    BaseChatClient,
    ChatMessage,
    ChatOptions,
    ChatResponse,
    ChatResponseUpdate,
    FunctionInvokingChatClient,
    UsageDetails,
    ai_function,
)
from agui_chat._client import ChatMessages


class _Answering(BaseChatClient):
    """A test client whose round trips are answered by ``_next``, streamed or not."""

    def _next(self, messages: ChatMessages, options: ChatOptions | None) -> ChatResponse:
        raise NotImplementedError

    async def get_response(
        self, messages: ChatMessages, options: ChatOptions | None = None
    ) -> ChatResponse:
        return self._next(messages, options)

    async def get_streaming_response(
        self, messages: ChatMessages, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        for update in self._next(messages, options).to_updates():
            yield update


class MEAITestClient(_Answering):
    """Answers each round trip with the next of ``outputs``; records (a deep copy of) what it
    received, and checks it against ``expected_inputs`` when given."""

    def __init__(
        self,
        outputs: Sequence[Sequence[ChatMessage]],
        expected_inputs: Sequence[Sequence[ChatMessage]] | None = None,
    ) -> None:
        self.outputs = [list(o) for o in outputs]
        self.expected_inputs = [list(i) for i in expected_inputs] if expected_inputs else None
        self.received: list[list[ChatMessage]] = []
        self.options: list[ChatOptions | None] = []
        self.usage_total = 0

    def _next(self, messages: ChatMessages, options: ChatOptions | None) -> ChatResponse:
        assert isinstance(messages, list)
        self.received.append(copy.deepcopy(messages))
        self.options.append(options)
        if self.expected_inputs is not None:
            assert shape(messages) == shape(self.expected_inputs.pop(0))
        assert self.outputs, "the inner client was called more often than expected"
        output = [copy.deepcopy(m) for m in self.outputs.pop(0)]
        for m in output:
            m.message_id = uuid.uuid4().hex
        self.usage_total += 7
        usage = UsageDetails(input_token_count=7, output_token_count=7, total_token_count=7)
        return ChatResponse(output, usage=usage)


def _content(c: AIContent) -> Any:
    data = c.to_dict()
    _strip(data)
    return data


def _strip(data: Any) -> None:
    if isinstance(data, dict):
        data.pop("informational_only", None)
        if data.get("type") == "tool_approval_request":
            data.pop("message", None)  # ours says "Approve <name>?"; MEAI's has no text
        if data.get("type") == "function_call" and data.get("arguments") == {}:
            data["arguments"] = None  # MEAI: no arguments either way
        for value in data.values():
            _strip(value)
    elif isinstance(data, list):
        for value in data:
            _strip(value)


def shape(messages: Sequence[ChatMessage]) -> list[tuple[str, list[Any]]]:
    """Roles and contents of ``messages``, as MEAI's ``EqualMessageLists`` compares them."""
    return [(m.role.value, [_content(c) for c in m.contents]) for m in messages]


async def invoke(
    options: ChatOptions | None,
    messages: Sequence[ChatMessage],
    outputs: Sequence[Sequence[ChatMessage]],
    *,
    streaming: bool,
    expected_inputs: Sequence[Sequence[ChatMessage]] | None = None,
    additional_tools: Sequence[AITool] = (),
    **settings: Any,
) -> tuple[ChatResponse, MEAITestClient]:
    """One request through a ``FunctionInvokingChatClient`` over a fresh test client; the
    input is deep-copied first (as MEAI's ``CloneInput``)."""
    inner = MEAITestClient(outputs, expected_inputs)
    client = FunctionInvokingChatClient(inner, additional_tools=additional_tools, **settings)
    history = copy.deepcopy(list(messages))
    if streaming:
        updates = [u async for u in client.get_streaming_response(history, options)]
        response = ChatResponse.from_updates(updates)
    else:
        response = await client.get_response(history, options)
    if expected_inputs is not None:
        assert inner.expected_inputs == [], "the inner client was called less often than expected"
    return response, inner


class Funcs:
    """MEAI's ``Func1`` (``() => "Result 1"``) and ``Func2`` (``(int i) => $"Result 2: {i}"``),
    counting their runs."""

    def __init__(self) -> None:
        self.runs: list[str] = []

        @ai_function(name="Func1")
        def func1() -> str:
            """Func1."""
            self.runs.append("Func1")
            return "Result 1"

        @ai_function(name="Func2")
        def func2(i: int) -> str:
            """Func2."""
            self.runs.append(f"Func2({i})")
            return f"Result 2: {i}"

        self.func1 = func1
        self.func2 = func2


class PlanClient(_Answering):
    """MEAI's plan-driven test client: on each round trip it answers with the plan's message
    at the index of the number of messages it received (so the plan alternates the model's
    turns and the tool results the loop must add), and records what it received."""

    def __init__(self, plan: Sequence[ChatMessage]) -> None:
        self.plan = list(plan)
        self.received: list[list[ChatMessage]] = []
        self.options: list[ChatOptions | None] = []

    def _next(self, messages: ChatMessages, options: ChatOptions | None) -> ChatResponse:
        assert isinstance(messages, list)
        self.received.append(copy.deepcopy(messages))
        self.options.append(options.clone() if options is not None else None)
        assert shape(messages) == shape(self.plan[: len(messages)])
        turn = copy.deepcopy(self.plan[len(messages)])
        turn.message_id = uuid.uuid4().hex
        usage = UsageDetails(input_token_count=3, output_token_count=3, total_token_count=3)
        return ChatResponse([turn], usage=usage)


async def invoke_plan(
    options: ChatOptions | None,
    plan: Sequence[ChatMessage],
    *,
    streaming: bool,
    expected: Sequence[ChatMessage] | None = None,
    **settings: Any,
) -> tuple[list[ChatMessage], PlanClient]:
    """MEAI's ``InvokeAndAssertAsync(options, plan, expected)``: sends the plan's first
    message and checks that the transcript (it plus the response) is ``expected`` (by
    default the whole plan)."""
    inner = PlanClient(plan)
    client = FunctionInvokingChatClient(inner, **settings)
    chat = [copy.deepcopy(plan[0])]
    if streaming:
        updates = [u async for u in client.get_streaming_response(list(chat), options)]
        response = ChatResponse.from_updates(updates)
    else:
        response = await client.get_response(list(chat), options)
    chat += response.messages
    assert shape(chat) == shape(expected if expected is not None else plan)
    if response.usage is not None:
        assert response.usage.input_token_count == 3 * len(inner.received)
    return chat, inner
