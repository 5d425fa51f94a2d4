"""AGUIChatClient ↔ AGUIServer over real HTTP (uvicorn on 127.0.0.1): every human-in-the-loop
flow end to end, counting tool runs and checking what the server's model received."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from server_support import Tools, scripted

from agui_chat import (
    ChatFinishReason,
    ChatMessage,
    ChatOptions,
    ChatResponse,
    FunctionCallContent,
    FunctionResultContent,
    InterruptRequestContent,
    ToolApprovalRequestContent,
    ai_function,
    request_input,
)
from agui_chat.agui import AGUIChatClient, current_run
from agui_server import ServedAgent, agui_server
from meai_texts import FAILED

Connect = Callable[[ServedAgent], Awaitable[AGUIChatClient]]


@pytest.fixture
async def connect(live_server: Callable[[Any], Awaitable[str]]) -> AsyncIterator[Connect]:
    """Serve an AGUIServer with uvicorn and return an AGUIChatClient pointed at it."""
    clients: list[AGUIChatClient] = []

    async def make(agent: ServedAgent) -> AGUIChatClient:
        url = await live_server(agent.app)
        client = AGUIChatClient(url + "/", timeout=10, max_retries=0)
        clients.append(client)
        return client

    yield make
    for client in clients:
        await client.aclose()


class Conversation:
    """A caller's chat loop: the history grows with every response."""

    def __init__(self, client: AGUIChatClient, text: str) -> None:
        self.client = client
        self.history = [ChatMessage("user", text)]

    async def send(self, options: ChatOptions | None = None) -> ChatResponse:
        response = await self.client.get_response(self.history, options)
        self.history += response.messages
        return response

    async def answer(self, *answers: Any, options: ChatOptions | None = None) -> ChatResponse:
        self.history.append(ChatMessage("user", list(answers)))
        return await self.send(options)


def echo_result(messages: list[ChatMessage], options: ChatOptions | None) -> str:
    last = messages[-1]
    assert last.role == "tool", last
    return "Tool said: " + "; ".join(
        str(c.result) for c in last.contents if isinstance(c, FunctionResultContent)
    )


def results_seen(messages: list[ChatMessage]) -> dict[str, Any]:
    return {
        c.call_id: c.result
        for m in messages
        for c in m.contents
        if isinstance(c, FunctionResultContent)
    }


def calls_seen(messages: list[ChatMessage]) -> dict[str, Any]:
    return {
        c.call_id: c.arguments
        for m in messages
        for c in m.contents
        if isinstance(c, FunctionCallContent)
    }


def approval(response: ChatResponse) -> ToolApprovalRequestContent:
    assert response.finish_reason == ChatFinishReason.INPUT_REQUIRED
    (request,) = response.input_requests
    assert isinstance(request, ToolApprovalRequestContent)
    return request


def delete(call_id: str = "c1", path: str = "a.txt") -> FunctionCallContent:
    return FunctionCallContent(call_id, "delete_file", {"path": path})


async def test_approve(connect: Connect, tools: Tools) -> None:
    model = scripted([delete()], echo_result)
    chat = Conversation(
        await connect(agui_server(model, tools=[tools.delete_file()])),
        "delete a.txt",
    )
    request = approval(await chat.send())
    assert (request.tool_call.name, request.tool_call.arguments) == (
        "delete_file",
        {"path": "a.txt"},
    )
    assert tools.count("delete_file") == 0
    final = await chat.answer(request.create_response(True))
    assert final.text == "Tool said: deleted a.txt"
    assert final.finish_reason == ChatFinishReason.STOP
    assert tools.runs["delete_file"] == [{"path": "a.txt"}]
    assert results_seen(model.calls[-1][0]) == {"c1": "deleted a.txt"}


async def test_reject_with_a_reason(connect: Connect, tools: Tools) -> None:
    model = scripted([delete()], echo_result)
    chat = Conversation(
        await connect(agui_server(model, tools=[tools.delete_file()])),
        "delete a.txt",
    )
    request = approval(await chat.send())
    final = await chat.answer(request.create_response(False, "it is my thesis"))
    assert tools.count("delete_file") == 0
    assert results_seen(model.calls[-1][0]) == {
        "c1": "Tool call invocation rejected. it is my thesis"
    }
    assert final.text == "Tool said: Tool call invocation rejected. it is my thesis"


async def test_approve_with_edits(connect: Connect, tools: Tools) -> None:
    model = scripted([delete()], echo_result)
    chat = Conversation(
        await connect(agui_server(model, tools=[tools.delete_file()])),
        "delete a.txt",
    )
    request = approval(await chat.send())
    assert request.allow_edits
    final = await chat.answer(request.create_response(True, edited_arguments={"path": "b.txt"}))
    assert tools.runs["delete_file"] == [{"path": "b.txt"}]
    assert calls_seen(model.calls[-1][0]) == {"c1": {"path": "b.txt"}}
    assert final.text == "Tool said: deleted b.txt"


async def test_a_mixed_batch(connect: Connect, tools: Tools) -> None:
    batch = [FunctionCallContent("c1", "lookup", {"city": "Rome"}), delete("c2")]
    model = scripted(batch, echo_result)
    agent = agui_server(model, tools=[tools.lookup(), tools.delete_file()])
    chat = Conversation(await connect(agent), "weather, then delete")
    paused = await chat.send()
    request = approval(paused)
    assert request.tool_call.call_id == "c2"
    assert (tools.count("lookup"), tools.count("delete_file")) == (1, 0)
    await chat.answer(request.create_response(True))
    assert (tools.count("lookup"), tools.count("delete_file")) == (1, 1)
    assert results_seen(model.calls[-1][0]) == {"c1": "sunny in Rome", "c2": "deleted a.txt"}


async def test_two_approvals_answered_together(connect: Connect, tools: Tools) -> None:
    model = scripted([delete("c1", "a.txt"), delete("c2", "b.txt")], echo_result)
    chat = Conversation(
        await connect(agui_server(model, tools=[tools.delete_file()])),
        "delete both",
    )
    paused = await chat.send()
    first, second = paused.input_requests
    assert isinstance(first, ToolApprovalRequestContent) and isinstance(
        second, ToolApprovalRequestContent
    )
    await chat.answer(first.create_response(True), second.create_response(True))
    assert sorted(r["path"] for r in tools.runs["delete_file"]) == ["a.txt", "b.txt"]
    assert results_seen(model.calls[-1][0]) == {"c1": "deleted a.txt", "c2": "deleted b.txt"}


def deploy_tool(tools: Tools) -> Any:
    @ai_function
    def deploy(service: str) -> str:
        """Deploy a service."""
        choice = request_input(
            "Which build?",
            response_schema={
                "type": "object",
                "properties": {"build": {"type": "integer"}},
                "required": ["build"],
            },
            key="build",
        )
        tools.record("deploy", service=service, cancelled=choice.cancelled, payload=choice.payload)
        return (
            "deploy cancelled"
            if choice.cancelled
            else f"deployed {service} build {choice.payload['build']}"
        )

    return deploy


async def test_an_interrupt_with_a_schema(connect: Connect, tools: Tools) -> None:
    model = scripted([FunctionCallContent("c1", "deploy", {"service": "api"})], echo_result)
    chat = Conversation(
        await connect(agui_server(model, tools=[deploy_tool(tools)])),
        "deploy api",
    )
    paused = await chat.send()
    (question,) = paused.input_requests
    assert isinstance(question, InterruptRequestContent)
    assert question.message == "Which build?" and question.reason == "input_required"
    assert question.response_schema is not None and question.response_schema["required"] == [
        "build"
    ]
    # As DESIGN §3 says: the question carries the asking call's id (and its key).
    assert (question.tool_call_id, question.key) == ("c1", "build")
    final = await chat.answer(question.create_response({"build": 7}))
    assert tools.runs["deploy"] == [{"service": "api", "cancelled": False, "payload": {"build": 7}}]
    assert results_seen(model.calls[-1][0]) == {"c1": "deployed api build 7"}
    assert final.text == "Tool said: deployed api build 7"


async def test_a_cancelled_interrupt(connect: Connect, tools: Tools) -> None:
    model = scripted([FunctionCallContent("c1", "deploy", {"service": "api"})], echo_result)
    chat = Conversation(
        await connect(agui_server(model, tools=[deploy_tool(tools)])),
        "deploy api",
    )
    (question,) = (await chat.send()).input_requests
    assert isinstance(question, InterruptRequestContent)
    final = await chat.answer(question.cancel())
    assert tools.runs["deploy"] == [{"service": "api", "cancelled": True, "payload": None}]
    assert final.finish_reason == ChatFinishReason.STOP
    assert results_seen(model.calls[-1][0]) == {"c1": "deploy cancelled"}


async def test_a_client_side_tool(connect: Connect) -> None:
    client_runs: list[str] = []

    @ai_function
    def local_time(city: str) -> str:
        """The time where the user is."""
        client_runs.append(city)
        return f"09:41 in {city}"

    def call_local_time(messages: list[ChatMessage], options: ChatOptions | None) -> Any:
        assert options is not None and [t.name for t in options.tools or []] == ["local_time"]
        return [FunctionCallContent("c1", "local_time", {"city": "Lisbon"})]

    model = scripted(call_local_time, echo_result)
    chat = Conversation(
        await connect(agui_server(model)),
        "what time is it?",
    )
    final = await chat.send(ChatOptions(tools=[local_time]))
    assert client_runs == ["Lisbon"]
    assert results_seen(model.calls[-1][0]) == {"c1": "09:41 in Lisbon"}
    assert final.text == "Tool said: 09:41 in Lisbon"


async def test_state_snapshot_and_delta(connect: Connect) -> None:
    @ai_function
    def add_item(item: str) -> str:
        """Add to the shopping list."""
        run = current_run()
        assert run is not None
        run.emit_state_snapshot({"items": ["bread"]})
        run.emit_state_delta([{"op": "add", "path": "/items/-", "value": item}])
        return "added"

    def check_state(messages: list[ChatMessage], options: ChatOptions | None) -> str:
        assert options is not None
        return f"state was {options.additional_properties['agui_input'].state}"

    model = scripted(
        [FunctionCallContent("c1", "add_item", {"item": "milk"})], "Added.", check_state
    )
    client = await connect(agui_server(model, tools=[add_item]))
    chat = Conversation(client, "add milk")
    await chat.send()
    assert client.state == {"items": ["bread", "milk"]}
    chat.history.append(ChatMessage("user", "what is on the list?"))
    final = await chat.send()
    assert final.text == "state was {'items': ['bread', 'milk']}"


async def test_a_tool_that_raises(connect: Connect) -> None:
    runs: list[str] = []

    @ai_function
    def charge(amount: int) -> str:
        """Charge the card."""
        runs.append("charge")
        raise RuntimeError("card 4111-1111-1111-1111 declined by gateway")

    model = scripted([FunctionCallContent("c1", "charge", {"amount": 5})], echo_result)
    chat = Conversation(
        await connect(agui_server(model, tools=[charge])),
        "charge 5",
    )
    final = await chat.send()
    assert runs == ["charge"]
    assert results_seen(model.calls[-1][0]) == {"c1": FAILED}
    assert final.text == "Tool said: " + FAILED
    assert "4111" not in repr([m.to_dict() for m in final.messages])


async def test_a_client_that_disconnects_mid_run(connect: Connect, tools: Tools) -> None:
    started, cancelled = asyncio.Event(), asyncio.Event()

    @ai_function
    async def long_export() -> str:
        """Export everything (slow)."""
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "exported"

    batch = [
        FunctionCallContent("c1", "long_export", {}),
        FunctionCallContent("c2", "lookup", {"city": "Rome"}),
    ]
    model = scripted(batch, "never said")
    client = await connect(agui_server(model, tools=[long_export, tools.lookup()]))
    stream = client.get_streaming_response([ChatMessage("user", "export")])
    async for update in stream:
        if any(isinstance(c, FunctionCallContent) and c.call_id == "c2" for c in update.contents):
            break
    await asyncio.wait_for(started.wait(), timeout=10)
    await stream.aclose()  # type: ignore[attr-defined]
    await asyncio.wait_for(cancelled.wait(), timeout=10)
    for _ in range(5):
        await asyncio.sleep(0)
    assert tools.count("lookup") == 0
    assert len(model.calls) == 1
