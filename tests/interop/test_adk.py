"""Google ADK behind ag-ui-adk 0.11 (google-adk 2.15), the real thing from its own virtualenv
(``servers/adk_server.py``: a scripted google-adk model, ``delete_file`` wrapped in ADK's tool
confirmation), against our client, in ag-ui-adk's default configuration (``/adk``: the pause
is a plain success with a pending ``adk_request_confirmation`` call, read in dialect ``adk``
and answered with ADK's tool message) and with ``emit_interrupt_outcome=True``
(``/adk-outcome``: an AG-UI 1.0 interrupt naming the wrapper, answered through ``resume``).
Every test counts the tool's runs and reads what went over the wire."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from interop_support import PeerServer

from agui_chat import (
    ChatFinishReason,
    ChatMessage,
    ChatOptions,
    InvalidResponseError,
    ToolApprovalRequestContent,
    ai_function,
)
from agui_chat.agui import AGUIChatClient

PATHS = ["/adk", "/adk-outcome"]
REJECTED = 'Tool said: {"error": "This tool call is rejected."}'


class Conversation:
    """Our client on one thread of an ADK endpoint; ``bodies`` are the requests it sent."""

    def __init__(self, server: PeerServer, path: str, **options: Any) -> None:
        self.warnings: list[str] = []
        self.bodies: list[dict[str, Any]] = []

        async def record(request: httpx.Request) -> None:
            self.bodies.append(json.loads(request.content))

        self.http = httpx.AsyncClient(event_hooks={"request": [record]})
        self.client = AGUIChatClient(
            server.url(path), http_client=self.http, on_warning=self.warnings.append, **options
        )
        self.history: list[ChatMessage] = []

    async def say(self, *contents: Any, options: ChatOptions | None = None) -> Any:
        if len(contents) == 1 and isinstance(contents[0], str):
            self.history.append(ChatMessage("user", contents[0]))
        else:
            self.history.append(ChatMessage("user", list(contents)))
        response = await self.client.get_response(self.history, options)
        self.history += response.messages
        return response

    def adk_warnings(self) -> list[str]:
        return [w for w in self.warnings if "dialect 'adk'" in w]

    async def close(self) -> None:
        await self.client.aclose()
        await self.http.aclose()


async def paused_on(server: PeerServer, path: str, file: str) -> tuple[Conversation, Any]:
    talk = Conversation(server, path)
    paused = await talk.say(f"please delete {file}")
    assert paused.finish_reason == ChatFinishReason.INPUT_REQUIRED
    return talk, paused


def answer_sent(talk: Conversation) -> Any:
    """What the last request answered the pause with: its ``resume``, or (ADK's default
    configuration) the content of the tool message for the confirmation call."""
    body = talk.bodies[-1]
    if "resume" in body:
        return body["resume"]
    confirmations = {
        c["id"]
        for m in body["messages"]
        for c in m.get("toolCalls") or ()
        if c["function"]["name"] == "adk_request_confirmation"
    }
    (message,) = [
        m for m in body["messages"] if m["role"] == "tool" and m["toolCallId"] in confirmations
    ]
    return json.loads(message["content"])


# -- no pause ---------------------------------------------------------------------------------


@pytest.mark.parametrize("path", PATHS)
async def test_text(adk_server: PeerServer, path: str) -> None:
    talk = Conversation(adk_server, path)
    try:
        response = await talk.say("hello")
    finally:
        await talk.close()
    assert response.text == "Hello from ADK."
    assert response.finish_reason == ChatFinishReason.STOP
    assert response.input_requests == []


@pytest.mark.parametrize("path", PATHS)
async def test_a_server_tool_runs_once_on_the_server(adk_server: PeerServer, path: str) -> None:
    city = f"Rome{path.replace('/', '_').replace('-', '_')}"
    talk = Conversation(adk_server, path)
    try:
        response = await talk.say(f"what is the weather in {city}")
    finally:
        await talk.close()
    assert response.text.endswith(f"Tool said: sunny in {city}")
    assert adk_server.runs("get_weather", city=city) == 1
    assert len(talk.bodies) == 1


@pytest.mark.parametrize("path", PATHS)
async def test_a_client_tool_runs_once_here_and_its_result_reaches_the_model(
    adk_server: PeerServer, path: str
) -> None:
    picked: list[str] = []

    @ai_function
    def pick_color(hint: str) -> str:
        """Pick a colour."""
        picked.append(hint)
        return "teal"

    talk = Conversation(adk_server, path)
    try:
        response = await talk.say("pick a colour", options=ChatOptions(tools=[pick_color]))
    finally:
        await talk.close()
    assert picked == ["warm"]
    assert response.text.endswith("Tool said: teal")
    (sent,) = [m for m in talk.bodies[-1]["messages"] if m["role"] == "tool"]
    assert (sent["toolCallId"], sent["content"]) == ("call_pick_color_1", "teal")


# -- ADK's tool confirmation ------------------------------------------------------------------


@pytest.mark.parametrize("path", PATHS)
async def test_approve_shows_the_call_that_runs_and_runs_it_once(
    adk_server: PeerServer, path: str
) -> None:
    file = f"adk{path.replace('/', '-')}-approve.txt"
    talk, paused = await paused_on(adk_server, path, file)
    try:
        (request,) = paused.input_requests
        assert isinstance(request, ToolApprovalRequestContent)
        # The call that runs, not ADK's adk_request_confirmation wrapper around it.
        assert (request.tool_call.name, request.tool_call.arguments) == (
            "delete_file",
            {"path": file},
        )
        assert request.allow_edits is False  # ADK offers no edits
        final = await talk.say(request.create_response(True))
    finally:
        await talk.close()
    assert final.text == f"Tool said: deleted {file}"
    assert final.finish_reason == ChatFinishReason.STOP
    assert adk_server.runs("delete_file", path=file) == 1
    if path == "/adk":  # ADK's own convention, said once on the thread
        assert answer_sent(talk) == {"confirmed": True}
    else:
        (entry,) = answer_sent(talk)
        assert (entry["status"], entry["payload"]) == ("resolved", {"approved": True})
    assert len(talk.adk_warnings()) == 1


@pytest.mark.parametrize("path", PATHS)
async def test_reject_never_runs(adk_server: PeerServer, path: str) -> None:
    file = f"adk{path.replace('/', '-')}-reject.txt"
    talk, paused = await paused_on(adk_server, path, file)
    try:
        final = await talk.say(paused.input_requests[0].create_response(False, "keep it"))
    finally:
        await talk.close()
    assert final.text == REJECTED
    assert adk_server.runs("delete_file", path=file) == 0
    if path == "/adk":
        assert answer_sent(talk) == {"confirmed": False, "payload": {"reason": "keep it"}}
    else:
        (entry,) = answer_sent(talk)
        assert entry["payload"] == {"approved": False, "reason": "keep it"}


@pytest.mark.parametrize("path", PATHS)
async def test_cancel_never_runs(adk_server: PeerServer, path: str) -> None:
    file = f"adk{path.replace('/', '-')}-cancel.txt"
    talk, paused = await paused_on(adk_server, path, file)
    try:
        final = await talk.say(paused.input_requests[0].cancel())
    finally:
        await talk.close()
    assert final.text == REJECTED
    assert adk_server.runs("delete_file", path=file) == 0
    if path == "/adk":
        assert answer_sent(talk) == {"confirmed": False}
    else:
        (entry,) = answer_sent(talk)
        assert entry["status"] == "cancelled" and "payload" not in entry


@pytest.mark.parametrize("path", PATHS)
async def test_an_edit_adk_never_offered_is_refused_here_and_never_sent(
    adk_server: PeerServer, path: str
) -> None:
    # ADK would ignore editedArgs and delete the original file: the edit must not leave.
    file = f"adk{path.replace('/', '-')}-edit.txt"
    talk, paused = await paused_on(adk_server, path, file)
    try:
        (request,) = paused.input_requests
        with pytest.raises(InvalidResponseError):
            request.create_response(True, edited_arguments={"path": "elsewhere.txt"})
        assert len(talk.bodies) == 1  # nothing was sent
        final = await talk.say(request.create_response(False, "wrong file"))
    finally:
        await talk.close()
    assert final.text == REJECTED
    assert adk_server.runs("delete_file", path=file) == 0
    assert adk_server.runs("delete_file", path="elsewhere.txt") == 0


async def test_in_plain_agui_the_default_pause_is_not_seen(adk_server: PeerServer) -> None:
    talk = Conversation(adk_server, "/adk", dialect="agui")
    try:
        response = await talk.say("please delete adk-agui-only.txt")
    finally:
        await talk.close()
    assert response.finish_reason == ChatFinishReason.STOP
    assert response.input_requests == []
    assert talk.adk_warnings() == []
    assert adk_server.runs("delete_file", path="adk-agui-only.txt") == 0
