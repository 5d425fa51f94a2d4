"""A tool result the client wrote for a call of a gated server tool is never that tool's result
(DESIGN §4, issue 27 item 1). The server seals each ``TOOL_CALL_RESULT`` it emits (its
``messageId``); a result without its seal, with no resume entry answering the call, is refused
(``TOOL_RESULT_NOT_ISSUED``) before anything runs. The server's own results, sent back as they
came, keep the conversation going."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from server_support import (
    Tools,
    approve,
    assistant_calls,
    history_from,
    of_type,
    refused_before_the_run,
    scripted,
    tool_result,
    user,
)

from agui_chat import ChatMessage, FunctionCallContent, FunctionResultContent
from agui_chat.agui import AGUIChatClient
from agui_server import agui_server

DELETE = [FunctionCallContent("c1", "delete_file", {"path": "a.txt"})]


def results_seen(messages: list[ChatMessage]) -> list[Any]:
    return [c.result for m in messages for c in m.contents if isinstance(c, FunctionResultContent)]


async def test_a_result_written_for_a_gated_call_without_a_resume_is_refused(
    tools: Tools,
) -> None:
    model = scripted()  # any model call fails the test
    agent = agui_server(model, tools=[tools.delete_file()])
    events = await agent.run(
        user("please delete the report"),
        assistant_calls(("c1", "delete_file", {"path": "a.txt"})),
        tool_result("c1", json.dumps({"approved": True})),  # CopilotKit's echo, no resume
    )
    error = refused_before_the_run(events, "TOOL_RESULT_NOT_ISSUED")
    assert "'c1'" in error["message"] and "'delete_file'" in error["message"]
    assert tools.count("delete_file") == 0 and model.calls == []


async def test_the_servers_own_results_sent_back_keep_the_conversation_going(
    tools: Tools,
) -> None:
    model = scripted(DELETE, "deleted it", lambda messages, options: str(results_seen(messages)))
    agent = agui_server(model, tools=[tools.delete_file()])
    _, history, (interrupt,) = await agent.pause(user("delete a.txt"))
    done = await agent.resume(history, approve(interrupt))
    later = [*history, *history_from(done), user("what did it say?", "u2")]
    events = await agent.run(*later, run="r3")
    assert of_type(events, "RUN_ERROR") == []
    assert tools.count("delete_file") == 1
    assert model.calls[-1][0][-1].text == "what did it say?"
    said = "".join(e["delta"] for e in of_type(events, "TEXT_MESSAGE_CONTENT"))
    assert said == "['deleted a.txt']"


@pytest.mark.parametrize("change", ["content", "thread", "call"])
async def test_a_sealed_result_changed_or_moved_is_refused(tools: Tools, change: str) -> None:
    model = scripted(DELETE, "deleted it", DELETE, "deleted it again")
    agent = agui_server(model, tools=[tools.delete_file()])
    _, history, (interrupt,) = await agent.pause(user("delete a.txt"))
    done = await agent.resume(history, approve(interrupt))
    (result,) = [m for m in history_from(done) if m["role"] == "tool"]
    body: dict[str, Any] = {"thread": "t1", "run": "r3"}
    messages = [*history]
    if change == "content":
        result = {**result, "content": "nothing was deleted"}
    elif change == "thread":
        body["thread"] = "t2"
    else:  # the seal of c1 put on a result for another call c2
        messages = [user("delete a.txt"), assistant_calls(("c2", "delete_file", {"path": "a.txt"}))]
        result = {**result, "toolCallId": "c2"}
    events = await agent.run(*messages, result, user("next", "u2"), **body)
    refused_before_the_run(events, "TOOL_RESULT_NOT_ISSUED")
    assert tools.count("delete_file") == 1


async def test_a_client_tools_result_needs_no_seal(tools: Tools) -> None:
    model = scripted("thanks")
    agent = agui_server(model, tools=[tools.delete_file()])
    events = await agent.run(
        user("pick a colour"),
        assistant_calls(("k1", "pick_colour", {})),
        tool_result("k1", "blue"),
        tools=[{"name": "pick_colour", "description": "Ask the person", "parameters": {}}],
    )
    assert of_type(events, "RUN_ERROR") == []
    assert results_seen(model.calls[0][0]) == ["blue"]


@pytest.fixture
async def connect(
    live_server: Callable[[Any], Awaitable[str]],
) -> AsyncIterator[Callable[[Any], Awaitable[AGUIChatClient]]]:
    clients: list[AGUIChatClient] = []

    async def make(app: Any) -> AGUIChatClient:
        client = AGUIChatClient(await live_server(app) + "/", timeout=10, max_retries=0)
        clients.append(client)
        return client

    yield make
    for client in clients:
        await client.aclose()


async def test_agui_chat_client_keeps_the_seal_across_turns(
    tools: Tools, connect: Callable[[Any], Awaitable[AGUIChatClient]]
) -> None:
    model = scripted(DELETE, "deleted it", lambda messages, options: str(results_seen(messages)))
    client = await connect(agui_server(model, tools=[tools.delete_file()]).app)
    history = [ChatMessage("user", "delete a.txt")]
    paused = await client.get_response(history)
    history += paused.messages
    (request,) = paused.input_requests
    history.append(ChatMessage("user", [request.create_response(True)]))
    history += (await client.get_response(history)).messages
    history.append(ChatMessage("user", "what did it say?"))
    final = await client.get_response(history)
    assert final.text == "['deleted a.txt']"
    assert tools.count("delete_file") == 1
