"""Thread continuity, the http client's ownership, and an in-process ASGI agent."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
from agui_client_support import ENDPOINT, Agent, frame, run, text
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.routing import Route

from agui_chat import ChatMessage, ChatOptions
from agui_chat.agui import AGUIChatClient


def hello(body: dict[str, Any]) -> list[dict[str, Any]]:
    return run(body, text(f"a-{body['runId']}", "hello"))


async def test_a_conversation_stays_on_one_thread_without_options() -> None:
    agent = Agent(hello, hello, hello)
    async with agent.client() as client:
        history = [ChatMessage("user", "one")]
        for turn in ("two", "three"):
            response = await client.get_response(history)
            history += [*response.messages, ChatMessage("user", turn)]
        await client.get_response(history)

    threads = {b["threadId"] for b in agent.bodies}
    assert len(threads) == 1
    assert threads.pop().startswith("thread_")


async def test_the_thread_survives_a_json_round_trip_of_the_history() -> None:
    agent = Agent(hello, hello)
    async with agent.client() as client:
        history = [ChatMessage("user", "one")]
        response = await client.get_response(history)
        history += [*response.messages, ChatMessage("user", "two")]
        restored = [
            ChatMessage.from_dict(m) for m in json.loads(json.dumps([m.to_dict() for m in history]))
        ]
        await client.get_response(restored)

    assert agent.bodies[0]["threadId"] == agent.bodies[1]["threadId"]


async def test_a_new_conversation_gets_a_new_thread() -> None:
    agent = Agent(hello, hello)
    async with agent.client() as client:
        await client.get_response("one")
        await client.get_response("another")

    assert agent.bodies[0]["threadId"] != agent.bodies[1]["threadId"]


async def test_an_explicit_conversation_id_is_the_thread_and_is_never_reported() -> None:
    agent = Agent(hello)
    async with agent.client() as client:
        response = await client.get_response("hi", ChatOptions(conversation_id="t-mine"))
        assert client.thread_id == "t-mine"

    assert agent.last["threadId"] == "t-mine"
    assert response.conversation_id is None


async def test_the_callers_options_are_not_changed() -> None:
    agent = Agent(hello)
    options = ChatOptions(conversation_id="t-mine")
    async with agent.client() as client:
        await client.get_response("hi", options)

    assert options.conversation_id == "t-mine"
    assert options.additional_properties == {}


async def test_a_callers_http_client_is_left_open() -> None:
    agent = Agent(hello)
    http = agent.http_client()
    async with AGUIChatClient(ENDPOINT, http_client=http) as client:
        await client.get_response("hi")

    assert not http.is_closed
    await http.aclose()


async def test_an_http_client_the_client_made_is_closed_with_it() -> None:
    client = AGUIChatClient(ENDPOINT)
    async with client:
        pass

    assert client.http_client.is_closed


async def test_the_state_of_an_unknown_thread_is_none() -> None:
    async with AGUIChatClient(ENDPOINT) as client:
        assert client.state_of("never-seen") is None


def scripted_app() -> tuple[Starlette, list[dict[str, Any]]]:
    """A tiny Starlette AG-UI endpoint streaming a scripted reply, one frame per write."""
    received: list[dict[str, Any]] = []

    async def endpoint(request: Request) -> StreamingResponse:
        body = await request.json()
        received.append(body)

        async def frames() -> AsyncIterator[bytes]:
            for event in run(body, text("m1", "from ", "asgi")):
                yield frame(event)

        return StreamingResponse(frames(), media_type="text/event-stream")

    return Starlette(routes=[Route("/agent", endpoint, methods=["POST"])]), received


async def test_the_client_talks_to_an_in_process_asgi_agent() -> None:
    app, received = scripted_app()
    http = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://localhost")
    async with http, AGUIChatClient("/agent", http_client=http) as client:
        response = await client.get_response("hi")

    assert response.text == "from asgi"
    assert received[0]["messages"][0]["content"] == "hi"


async def test_the_timeout_applies_to_every_request() -> None:
    agent = Agent(hello)
    async with agent.client(timeout=5.0) as client:
        await client.get_response("hi")

    assert agent.requests[0].extensions["timeout"] == {
        "connect": 5.0,
        "read": 5.0,
        "write": 5.0,
        "pool": 5.0,
    }


async def test_the_latest_state_is_readable_on_the_client() -> None:
    agent = Agent(lambda b: run(b, {"type": "STATE_SNAPSHOT", "snapshot": ["only-this"]}))
    async with agent.client() as client:
        assert client.state is None
        await client.get_response("hi", ChatOptions(conversation_id="t-s"))
        assert client.state == ["only-this"]
        assert client.state_of("t-s") == ["only-this"]
