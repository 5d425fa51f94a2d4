"""``AGUIChatClient`` answering a remote approval with a hand-built payload: the one approval
payload model reads it before anything is sent. An edit under a key the model does not know
(``edited_args``...) or a value of the wrong type raises ``InvalidResponseError`` and no HTTP
request goes out; a correct hand-built payload is sent as the model writes it and runs the
edited call once."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from agui_client_support import Agent, run, tool_call

from agui_chat import (
    ChatMessage,
    FunctionCallContent,
    InterruptResponseContent,
    InvalidResponseError,
    ToolApprovalRequestContent,
)
from agui_chat.agui import AGUIChatClient, AGUIServer
from agui_chat.stores import InMemoryApprovalStore
from agui_streams import SideEffects, scripted

MISPLACED_EDITS = ["edited_args", "editedArguments", "edited_action", "arguments", "EditedArgs"]
USER = ChatMessage("user", "delete a.txt")


class Remote:
    """A real ``AGUIServer`` in process, reached over httpx, recording every request."""

    def __init__(self) -> None:
        self.fx = SideEffects()
        self.server = AGUIServer(
            scripted([FunctionCallContent("c1", "delete_file", {"path": "a.txt"})], "Done."),
            tools=[self.fx.delete_file()],
            signing_key="k" * 32,
            approval_store=InMemoryApprovalStore(),
        )
        self.bodies: list[bytes] = []

    @asynccontextmanager
    async def client(self) -> AsyncIterator[AGUIChatClient]:
        async def record(request: httpx.Request) -> None:
            self.bodies.append(request.content)

        http = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=self.server), event_hooks={"request": [record]}
        )
        async with http, AGUIChatClient("http://localhost/", http_client=http) as client:
            yield client


async def paused_on(client: AGUIChatClient) -> tuple[list[ChatMessage], ToolApprovalRequestContent]:
    paused = await client.get_response([USER])
    (request,) = paused.input_requests
    assert isinstance(request, ToolApprovalRequestContent)
    return [USER, *paused.messages], request


def answered(history: list[ChatMessage], request_id: str, payload: Any) -> list[ChatMessage]:
    return [*history, ChatMessage("user", [InterruptResponseContent(request_id, payload)])]


@pytest.mark.parametrize("key", MISPLACED_EDITS)
async def test_an_edit_under_another_key_raises_before_anything_is_sent(key: str) -> None:
    remote = Remote()
    async with remote.client() as client:
        history, request = await paused_on(client)
        sent = len(remote.bodies)
        bad = answered(history, request.request_id, {"approved": True, key: {"path": "b.txt"}})
        with pytest.raises(InvalidResponseError) as caught:
            await client.get_response(bad)
        assert len(remote.bodies) == sent  # no HTTP request went out
        assert caught.value.request_ids == (request.request_id,)
        assert f"has unknown key {key!r}" in str(caught.value)
        assert remote.fx.count("delete_file") == 0
        # The same approval, answered correctly by hand, is sent as the model writes it.
        right = {"approved": True, "editedArgs": {"path": "b.txt"}}
        done = await client.get_response(answered(history, request.request_id, right))
    assert done.text == "Done."
    assert remote.fx.runs["delete_file"] == [{"path": "b.txt"}]
    assert b'"payload":{"approved":true,"editedArgs":{"path":"b.txt"}}' in remote.bodies[-1]


@pytest.mark.parametrize(
    ("payload", "wrong"),
    [
        ({"approved": "true"}, "approved must be a boolean"),
        ({"approved": 1}, "approved must be a boolean"),
        ({"approved": False, "reason": 3}, "reason must be a string"),
        ({"approved": True, "editedArgs": ["b.txt"]}, "editedArgs must be an object"),
        ({"approved": False, "editedArgs": {"path": "b.txt"}}, "only go with approved: true"),
        ("yes", "must be a JSON object"),
    ],
)
async def test_a_hand_built_payload_of_the_wrong_type_is_not_sent(payload: Any, wrong: str) -> None:
    remote = Remote()
    async with remote.client() as client:
        history, request = await paused_on(client)
        sent = len(remote.bodies)
        with pytest.raises(InvalidResponseError, match=wrong):
            await client.get_response(answered(history, request.request_id, payload))
    assert len(remote.bodies) == sent
    assert remote.fx.count("delete_file") == 0


def langchain_pause(body: dict[str, Any]) -> list[dict[str, Any]]:
    """A LangChain HumanInTheLoopMiddleware peer pausing one call for approval."""
    raw = {"type": "tool_approval", "tool_call_id": "c1", "name": "delete_file", "args": {}}
    interrupt = {
        "id": "lg-1",
        "reason": "langgraph:interrupt",
        "toolCallId": "c1",
        "metadata": {"langgraph": {"raw": raw}},
    }
    events = tool_call("c1", "delete_file", "{}", parent="a1")
    return run(body, events, outcome={"type": "interrupt", "interrupts": [interrupt]})


async def test_the_langchain_dialect_refuses_an_unknown_key_before_sending() -> None:
    """A LangChain peer's own word for the edit (``edited_action``) is not an AG-UI answer."""
    agent = Agent(langchain_pause)
    async with agent.client(on_warning=lambda _: None) as client:
        paused = await client.get_response([USER])
        (request,) = paused.input_requests
        bad = {"approved": True, "edited_action": {"name": "delete_file", "args": {}}}
        history = answered([USER, *paused.messages], request.request_id, bad)
        with pytest.raises(InvalidResponseError, match="unknown key 'edited_action'"):
            await client.get_response(history)
    assert len(agent.requests) == 1
