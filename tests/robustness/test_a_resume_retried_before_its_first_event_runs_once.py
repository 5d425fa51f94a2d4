"""Issue 8 item 2, for the faults the client retries: a resume (an approval) that meets a 503
from a gateway, or a refused connection while the server restarts, is retried before any
event has arrived and takes effect exactly once — the tool runs once and its result comes
back. Over real HTTP (uvicorn on 127.0.0.1)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from robustness_http import SideEffects, delete_call, free_port, scripted

from agui_chat import ChatMessage, FunctionResultContent, ToolApprovalRequestContent
from agui_chat.agui import AGUIChatClient
from agui_chat.stores import InMemoryApprovalStore
from agui_server import agui_server
from conftest import HTTP_TESTS, StartServer

pytestmark = HTTP_TESTS

BOUND = 10.0
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


def results(messages: list[ChatMessage]) -> dict[str, Any]:
    return {
        c.call_id: c.result
        for m in messages
        for c in m.contents
        if isinstance(c, FunctionResultContent)
    }


async def pause_and_approve(client: AGUIChatClient) -> list[ChatMessage]:
    history = [ChatMessage("user", "delete a.txt")]
    paused = await client.get_response(history)
    (request,) = paused.input_requests
    assert isinstance(request, ToolApprovalRequestContent)
    return [*history, *paused.messages, ChatMessage("user", [request.create_response(True)])]


class GatewayBusyOnTheFirstResume:
    """A gateway in front of the server: the first request carrying ``resume`` gets a 503
    without reaching the server; everything else is passed through."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.resumes_seen = 0

    async def __call__(self, scope: Any, receive: Receive, send: Send) -> None:
        body, more = b"", True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        if "resume" in json.loads(body):
            self.resumes_seen += 1
            if self.resumes_seen == 1:
                headers = [(b"content-type", b"text/plain")]
                await send({"type": "http.response.start", "status": 503, "headers": headers})
                await send({"type": "http.response.body", "body": b"busy"})
                return
        delivered = False

        async def replay() -> dict[str, Any]:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


async def test_a_resume_that_met_a_503_is_retried_and_runs_the_tool_once(
    live_server: StartServer,
) -> None:
    effects = SideEffects()
    server = agui_server(scripted(delete_call(), "Deleted it."), tools=[effects.delete_file()]).app
    gateway = GatewayBusyOnTheFirstResume(server)
    url = await live_server(gateway)
    async with AGUIChatClient(url, timeout=BOUND) as client:
        client._transport.retry_initial_delay = 0.01
        history = await pause_and_approve(client)
        final = await client.get_response(history)

    assert gateway.resumes_seen == 2
    assert effects.count("delete_file") == 1
    assert results(final.messages) == {"c1": "deleted a.txt"}
    assert final.text == "Deleted it."


async def test_a_resume_refused_while_the_server_restarts_is_retried_and_runs_once(
    live_server: StartServer,
) -> None:
    effects = SideEffects()
    # The store outlives the restart (a SQLite file, Redis): a new in-memory one would be a
    # store that lost its records, and is refused as APPROVAL_STORE_RESET (issue 26).
    store = InMemoryApprovalStore()
    before = agui_server(
        scripted(delete_call()), tools=[effects.delete_file()], approval_store=store
    ).app
    # The restarted server: a new process has a new model, the same key and store.
    after = agui_server(
        scripted("Deleted it."), tools=[effects.delete_file()], approval_store=store
    ).app
    async with AGUIChatClient(await live_server(before), timeout=BOUND) as client:
        history = await pause_and_approve(client)

    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    restarted: list[str] = []

    async def restart_during_the_backoff(delay: float) -> None:
        restarted.append(await live_server(after, port=port))

    async with AGUIChatClient(url, timeout=BOUND) as client:
        client._transport._sleep = restart_during_the_backoff
        final = await client.get_response(history)

    assert restarted == [url]  # the first attempt was refused, the retry reached it
    assert effects.count("delete_file") == 1
    assert results(final.messages) == {"c1": "deleted a.txt"}
    assert final.text == "Deleted it."
