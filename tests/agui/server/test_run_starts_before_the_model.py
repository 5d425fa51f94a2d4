"""A new run's response head and ``RUN_STARTED`` go out before the pipeline does any work:
a client sees its run start while the model is still thinking, or while a slow approval store
is read for its epoch (the first byte is the run's, not the model's nor the store's). A resume
still waits for its check (a refusal's ``Retry-After`` goes in the head, and a refused resume
is a stream of ``RUN_ERROR`` alone)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from agui_chat import ChatMessage, ChatOptions
from agui_chat.stores import InMemoryApprovalStore
from agui_chat.testing import ScriptedChatClient
from agui_server import agui_server
from agui_streams import run_input, user

SCOPE: dict[str, Any] = {
    "type": "http",
    "asgi": {"version": "3.0"},
    "http_version": "1.1",
    "method": "POST",
    "scheme": "http",
    "path": "/",
    "root_path": "",
    "query_string": b"",
    "headers": [(b"host", b"localhost"), (b"content-type", b"application/json")],
    "server": ("127.0.0.1", 80),
    "client": ("127.0.0.1", 1),
}


async def serve_one(app: Any, body: dict[str, Any], seen: list[dict[str, Any]]) -> None:
    """Call ``app`` with one request; each message it sends is appended to ``seen``."""
    sent = False
    done = asyncio.Event()

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": json.dumps(body).encode()}
        await done.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        seen.append(message)
        if message["type"] == "http.response.body" and not message.get("more_body", False):
            done.set()

    await app(dict(SCOPE), receive, send)


def events_in(seen: list[dict[str, Any]]) -> list[str]:
    data = b"".join(m.get("body", b"") for m in seen if m["type"] == "http.response.body")
    return [
        json.loads(line[6:])["type"]
        for line in data.decode().splitlines()
        if line.startswith("data: ")
    ]


async def test_the_client_sees_run_started_while_the_model_has_not_answered() -> None:
    seen: list[dict[str, Any]] = []
    model_called = asyncio.Event()
    let_model_answer = asyncio.Event()

    async def reply(messages: list[ChatMessage], options: ChatOptions | None) -> str:
        model_called.set()
        await let_model_answer.wait()
        return "Hello."

    server = agui_server(ScriptedChatClient(reply))
    task = asyncio.ensure_future(serve_one(server.app, run_input(user("hi")), seen))
    await asyncio.wait_for(model_called.wait(), 5)
    # The model has been called and has not answered: the run has started all the same.
    assert seen[0]["type"] == "http.response.start" and seen[0]["status"] == 200
    assert events_in(seen) == ["RUN_STARTED"]
    let_model_answer.set()
    await asyncio.wait_for(task, 5)
    assert events_in(seen) == [
        "RUN_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "RUN_FINISHED",
    ]


class SlowEpochStore(InMemoryApprovalStore):
    """A store whose epoch takes as long as the test says (a store being reconnected)."""

    def __init__(self) -> None:
        super().__init__()
        self.asked = asyncio.Event()
        self.answer = asyncio.Event()

    async def _epoch(self) -> str | None:
        self.asked.set()
        await self.answer.wait()
        return "epoch-1"


async def test_a_slow_store_does_not_hold_back_a_new_runs_start() -> None:
    seen: list[dict[str, Any]] = []
    store = SlowEpochStore()
    server = agui_server(ScriptedChatClient(lambda m, o: "Hello."), approval_store=store)
    task = asyncio.ensure_future(serve_one(server.app, run_input(user("hi")), seen))
    await asyncio.wait_for(store.asked.wait(), 5)
    assert events_in(seen) == ["RUN_STARTED"]
    store.answer.set()
    await asyncio.wait_for(task, 5)
    assert events_in(seen)[-1] == "RUN_FINISHED"


async def test_a_refused_resume_is_run_error_alone_and_its_head_waits_for_the_check() -> None:
    seen: list[dict[str, Any]] = []
    server = agui_server(ScriptedChatClient(lambda m, o: "never"))
    body = run_input(user("hi"))
    body["resume"] = [{"interruptId": "forged", "status": "resolved", "payload": {}}]
    await asyncio.wait_for(serve_one(server.app, body, seen), 5)
    assert events_in(seen) == ["RUN_ERROR"]
    assert server.model.calls == []
