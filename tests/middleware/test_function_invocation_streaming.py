"""FunctionInvokingChatClient streaming: updates pass through as they arrive, and a pause
ends the stream with its requests and the INPUT_REQUIRED finish reason."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from loop_support import call, scripted

from agui_chat import (
    AIContent,
    BaseChatClient,
    ChatFinishReason,
    ChatMessage,
    ChatOptions,
    ChatResponse,
    ChatResponseUpdate,
    ChatRole,
    FunctionInvokingChatClient,
    FunctionResultContent,
    InterruptRequestContent,
    TextContent,
    ToolApprovalRequestContent,
    ai_function,
    approval_required,
    request_input,
)
from agui_chat._client import ChatMessages

GUARD = 5.0  # seconds; only a guard against a hang, never a timing assertion


def _contents(piece: str | AIContent) -> list[AIContent]:
    return [TextContent(piece) if isinstance(piece, str) else piece]


class Gated(BaseChatClient):
    """A model whose stream sends its first piece, then waits until the test lets it go on.

    If the middleware buffered the stream, the test would never see the first piece before
    opening the gate, and would time out instead.
    """

    def __init__(self, turns: list[list[Any]]) -> None:
        self.turns = turns
        self.gates = [asyncio.Event() for _ in turns]
        self.finished = [False for _ in turns]
        self.calls = 0

    async def get_streaming_response(
        self, messages: ChatMessages, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        turn = self.calls
        self.calls += 1
        first, *rest = self.turns[turn]
        yield ChatResponseUpdate("assistant", _contents(first), message_id=f"m{turn}")
        await self.gates[turn].wait()
        for piece in rest:
            yield ChatResponseUpdate("assistant", _contents(piece), message_id=f"m{turn}")
        yield ChatResponseUpdate(finish_reason="stop")
        self.finished[turn] = True


@ai_function
def lookup(q: str) -> str:
    """Look up."""
    return f"found {q}"


async def _collect_opening_gates(
    stream: AsyncIterator[ChatResponseUpdate], model: Gated
) -> list[tuple[ChatResponseUpdate, bool]]:
    """Read the stream; at each turn's first piece, note whether the turn had finished,
    then open its gate."""
    seen: list[tuple[ChatResponseUpdate, bool]] = []
    async for update in stream:
        turn = model.calls - 1
        seen.append((update, model.finished[turn]))
        model.gates[turn].set()
    return seen


async def test_updates_arrive_before_the_model_finishes_its_turn() -> None:
    model = Gated([["Hel", "lo", " world"]])
    client = FunctionInvokingChatClient(model)
    stream = client.get_streaming_response("hi", ChatOptions(tools=[lookup]))

    seen = await asyncio.wait_for(_collect_opening_gates(stream, model), GUARD)

    first, finished_then = seen[0]
    assert first.text == "Hel"
    assert finished_then is False
    assert ChatResponse.from_updates([u for u, _ in seen]).text == "Hello world"


async def test_updates_of_a_later_round_trip_also_pass_through_as_they_arrive() -> None:
    model = Gated([[call("c1", "lookup", q="x")], ["The ", "answer"]])
    client = FunctionInvokingChatClient(model)
    stream = client.get_streaming_response("hi", ChatOptions(tools=[lookup]))

    seen = await asyncio.wait_for(_collect_opening_gates(stream, model), GUARD)

    texts = [(u.text, finished) for u, finished in seen if u.text]
    assert texts[0] == ("The ", False)
    assert model.calls == 2


async def test_updates_pass_through_while_an_approval_tool_is_offered() -> None:
    @approval_required
    def delete_file(path: str) -> str:
        """Delete."""
        return path

    model = Gated([["Thinking", " about it"]])
    client = FunctionInvokingChatClient(model)
    stream = client.get_streaming_response("hi", ChatOptions(tools=[delete_file]))
    seen = await asyncio.wait_for(_collect_opening_gates(stream, model), GUARD)
    assert seen[0][0].text == "Thinking"
    assert seen[0][1] is False


async def test_tool_results_are_streamed_as_tool_updates() -> None:
    model = scripted([call("c1", "lookup", q="x")], "done")
    client = FunctionInvokingChatClient(model)
    updates = [u async for u in client.get_streaming_response("hi", ChatOptions(tools=[lookup]))]
    tool_updates = [u for u in updates if u.role == ChatRole.TOOL]
    assert len(tool_updates) == 1
    [result] = tool_updates[0].contents
    assert isinstance(result, FunctionResultContent)
    assert (result.call_id, result.result) == ("c1", "found x")
    assert updates.index(tool_updates[0]) < next(i for i, u in enumerate(updates) if u.text)


async def test_an_approval_pause_ends_the_stream_with_input_required() -> None:
    @approval_required
    def delete_file(path: str) -> str:
        """Delete."""
        return path

    model = scripted([call("c1", "delete_file", path="/tmp/a")])
    client = FunctionInvokingChatClient(model)
    updates = [
        u async for u in client.get_streaming_response("hi", ChatOptions(tools=[delete_file]))
    ]
    assert updates[-1].finish_reason == ChatFinishReason.INPUT_REQUIRED
    requests = [c for u in updates for c in u.contents if isinstance(c, ToolApprovalRequestContent)]
    assert [r.tool_call.call_id for r in requests] == ["c1"]
    reasons = [u.finish_reason for u in updates if u.finish_reason is not None]
    assert reasons[-1] == ChatFinishReason.INPUT_REQUIRED


async def test_a_question_pause_ends_the_stream_with_input_required() -> None:
    @ai_function
    def deploy(env: str) -> str:
        """Deploy."""
        return str(request_input("Which build?").payload)

    model = scripted([call("c1", "deploy", env="prod")])
    client = FunctionInvokingChatClient(model)
    updates = [u async for u in client.get_streaming_response("hi", ChatOptions(tools=[deploy]))]
    assert updates[-1].finish_reason == ChatFinishReason.INPUT_REQUIRED
    questions = [c for u in updates for c in u.contents if isinstance(c, InterruptRequestContent)]
    assert [q.tool_call_id for q in questions] == ["c1"]
    assert len(model.calls) == 1


async def test_a_resumed_stream_sends_the_rebuilt_call_then_its_result_first() -> None:
    @approval_required
    def delete_file(path: str) -> str:
        """Delete."""
        return f"deleted {path}"

    model = scripted([call("c1", "delete_file", path="/tmp/a")], "Done.")
    client = FunctionInvokingChatClient(model)
    options = ChatOptions(tools=[delete_file])
    history = [ChatMessage("user", "hi")]
    paused = ChatResponse.from_updates(
        [u async for u in client.get_streaming_response(history, options)]
    )
    [request] = paused.input_requests
    history += [*paused.messages, ChatMessage("user", [request.create_response(True)])]  # type: ignore[attr-defined]

    updates = [u async for u in client.get_streaming_response(history, options)]
    # MEAI's shape: the rebuilt call (keeping the request message's id), then its result.
    assert updates[0].role == ChatRole.ASSISTANT
    assert updates[0].contents[0].call_id == "c1"  # type: ignore[attr-defined]
    assert updates[0].message_id == paused.messages[0].message_id
    assert updates[1].role == ChatRole.TOOL
    assert updates[1].contents[0].result == "deleted /tmp/a"  # type: ignore[attr-defined]
    assert ChatResponse.from_updates(updates).finish_reason == ChatFinishReason.STOP
