"""The official AG-UI client conformance corpus, run through ``AGUIChatClient``.

Each fixture's stream is served as real SSE bytes — by an in-process ASGI app (one body,
LF framing), and by an ``httpx.MockTransport`` body in CRLF framing with comments and
3-byte chunks — to an ``AGUIChatClient`` asked to continue the fixture's ``input``
(messages as ``ChatMessage``s, on the thread of the fixture's first ``RUN_STARTED``, given
as ``ChatOptions(conversation_id=...)``). The ``expect`` block is asserted on what the
client's surface shows: the updates' events (``raw_representation``), our typed errors,
``ErrorContent`` / ``RunError``, ``on_warning``, the thread's state, and the
``RunAgentInput`` the client sent. ``messages`` are folded from the delivered events by
``AGUIThreadReducer``. ``README.md`` beside this file lists what this lane cannot observe.
"""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
import test_corpus as corpus

from agui_chat import (
    AIContent,
    ChatMessage,
    ChatOptions,
    DataContent,
    ErrorContent,
    FunctionCallContent,
    ProtocolError,
    RunError,
    TextContent,
    UriContent,
)
from agui_chat.agui import AGUIChatClient
from agui_chat.agui.client._reducer import AGUIThreadReducer
from agui_chat.agui.wire._messages import SUBAGENT_KEY

ENDPOINT = "http://conformance.test/agent"
FRAMINGS = ("asgi-lf", "crlf-3-bytes")

#: Fixtures whose expectation for a key we do not meet on purpose, and why.
DIFFERS: dict[str, dict[str, str]] = {
    "current-peer-declares-protocol-version": {
        "request": "we are a 1.0 client and declare protocolVersion '1.0', not '1.1'",
    },
}


# ------------------------------------------------------------------- fixture input


def chat_messages(wire_messages: list[dict[str, Any]]) -> list[ChatMessage]:
    """A fixture's AG-UI ``input.messages`` as the ``ChatMessage``s a caller would hold."""
    out = []
    for wire in wire_messages:
        contents: list[AIContent] = []
        content = wire.get("content")
        if isinstance(content, str):
            contents.append(TextContent(content))
        elif isinstance(content, list):
            contents += [c for c in (_part(p) for p in content) if c is not None]
        for call in wire.get("toolCalls") or ():
            function = call["function"]
            contents.append(
                FunctionCallContent.from_json_arguments(
                    call["id"], function["name"], function["arguments"]
                )
            )
        props = {SUBAGENT_KEY: wire["subagentRunId"]} if "subagentRunId" in wire else None
        out.append(
            ChatMessage(
                wire["role"],
                contents,
                message_id=wire["id"],
                author_name=wire.get("name"),
                additional_properties=props,
            )
        )
    return out


def _part(part: dict[str, Any]) -> AIContent | None:
    kind = part.get("type")
    if kind == "text":
        return TextContent(part["text"])
    if kind == "binary":  # the legacy 0.x part: a caller holds it as data or a URI
        source = {"type": "url", "value": part["url"]} if "url" in part else None
        if source is None and "data" in part:
            source = {"type": "data", "value": part["data"]}
        if source is None:
            return None
        source["mimeType"] = part.get("mimeType")
    else:
        source = part.get("source")
    if not isinstance(source, dict):
        return None
    if source["type"] == "url":
        return UriContent(source["value"], media_type=source.get("mimeType"))
    if source["type"] == "data":
        return DataContent(base64.b64decode(source["value"]), media_type=source["mimeType"])
    return None


def first_thread(stream: list[Any]) -> str | None:
    for event in stream:
        if isinstance(event, dict) and event.get("type") == "RUN_STARTED":
            thread_id = event.get("threadId")
            return thread_id if isinstance(thread_id, str) else None
    return None


# ------------------------------------------------------------------- serving the stream


def _frames(stream: list[Any]) -> list[bytes]:
    return [b"data: " + json.dumps(e, ensure_ascii=False).encode() + b"\n\n" for e in stream]


class Endpoint:
    """Serves one fixture's stream and records the ``RunAgentInput`` it receives."""

    def __init__(self, stream: list[Any]) -> None:
        self.stream = stream
        self.received: list[dict[str, Any]] = []

    async def asgi(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        self.received.append(json.loads(body))
        headers = [(b"content-type", b"text/event-stream")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        for frame in _frames(self.stream):
            await send({"type": "http.response.body", "body": frame, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def mock(self, request: httpx.Request) -> httpx.Response:
        self.received.append(json.loads(request.content))
        chunks = corpus.CHUNKINGS["crlf-3-bytes"](self.stream)
        return httpx.Response(
            200, headers={"content-type": "text/event-stream"}, stream=_Chunks(chunks)
        )

    def http_client(self, framing: str) -> httpx.AsyncClient:
        if framing == "asgi-lf":
            return httpx.AsyncClient(transport=httpx.ASGITransport(app=self.asgi))
        return httpx.AsyncClient(transport=httpx.MockTransport(self.mock))


class _Chunks(httpx.AsyncByteStream):
    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            yield chunk


# ------------------------------------------------------------------- running a fixture


@dataclass
class Seen:
    """What the client's surface showed for one fixture."""

    events: list[dict[str, Any]] = field(default_factory=list)
    errors: list[ErrorContent] = field(default_factory=list)
    rejection: ProtocolError | None = None
    run_error: RunError | None = None
    warnings: list[str] = field(default_factory=list)
    request: dict[str, Any] = field(default_factory=dict)
    messages: list[dict[str, Any]] = field(default_factory=list)
    state: Any = None


async def run_through_client(fixture: dict[str, Any], framing: str) -> Seen:
    stream: list[Any] = fixture["stream"]
    run_input: dict[str, Any] = fixture.get("input", {})
    endpoint = Endpoint(stream)
    seen = Seen()
    thread_id = first_thread(stream)
    extra = {"agui_state": run_input["state"]} if "state" in run_input else {}
    options = ChatOptions(conversation_id=thread_id, additional_properties=extra)
    client = AGUIChatClient(
        ENDPOINT,
        http_client=endpoint.http_client(framing),
        on_warning=seen.warnings.append,
        peer_max_version=fixture.get("client", {}).get("maxProtocolVersion"),
    )
    async with client.http_client, client:
        try:
            async for update in client.get_streaming_response(
                chat_messages(run_input.get("messages", [])), options
            ):
                seen.events.append(update.raw_representation)
                seen.errors += [c for c in update.contents if isinstance(c, ErrorContent)]
        except ProtocolError as exc:
            seen.rejection = exc
        except RunError as exc:
            seen.run_error = exc
        seen.state = client.state_of(thread_id or client.thread_id or "")
    assert len(endpoint.received) == 1, "one fixture, one request"
    seen.request = endpoint.received[0]
    reducer = AGUIThreadReducer(run_input.get("messages", []), run_input.get("state"))
    reducer.apply_all(seen.events)
    seen.messages = reducer.messages
    return seen


def absent(document: dict[str, Any], dotted: str) -> bool:
    node: Any = document
    for part in dotted.split("."):
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return True
    return False


# ------------------------------------------------------------------- the tests


def _cases() -> list[Any]:
    return [
        pytest.param(name, framing, id=f"{name.removesuffix('.json')}[{framing}]")
        for name in corpus.FIXTURES
        for framing in FRAMINGS
    ]


@pytest.mark.parametrize(("name", "framing"), _cases())
async def test_fixture_through_the_client(name: str, framing: str) -> None:
    fixture = corpus.load(name)
    expect: dict[str, Any] = fixture["expect"]
    differs = DIFFERS.get(fixture["name"], {})
    seen = await run_through_client(fixture, framing)

    if corpus.is_admitted_gap(fixture):
        # We follow the spec: the stream is accepted, the unknown value stripped with a
        # warning naming it (NOTES.md: assert the opposite of the reference outcome).
        assert expect["outcome"] == "failed"
        assert seen.rejection is None, f"expected the stream to be accepted: {seen.rejection!r}"
        if expect.get("errorContains"):
            assert any(corpus.names(w, expect["errorContains"]) for w in seen.warnings)
        return

    if expect["outcome"] == "completed":
        assert seen.rejection is None, f"expected completion, got {seen.rejection!r}"
    else:
        assert isinstance(seen.rejection, ProtocolError), "expected the stream to be rejected"
        for needle in corpus.OUR_ERROR_NAMES[fixture["name"]]:
            assert corpus.names(str(seen.rejection), needle), (needle, str(seen.rejection))

    types = [event["type"] for event in seen.events]
    if "eventTypes" in expect:
        assert types == expect["eventTypes"]
    for missing in expect.get("eventTypesAbsent", []):
        assert missing not in types
    for path, value in expect.get("eventPaths", {}).items():
        found = corpus.lookup(seen.events, path)
        assert found == value and type(found) is type(value), f"{path}: {found!r} != {value!r}"
    for path in expect.get("eventAbsentPaths", []):
        assert corpus.lookup(seen.events, path) is corpus._MISSING, f"{path} was not removed"

    if "runError" in expect:
        assert seen.errors, "expected the run's RUN_ERROR to reach the caller as ErrorContent"
        wanted = expect["runError"]
        if isinstance(wanted, str):
            assert any(wanted in e.message for e in seen.errors), seen.errors
    last_run_failed = bool(seen.events) and seen.events[-1]["type"] == "RUN_ERROR"
    if seen.rejection is None:
        assert (seen.run_error is not None) == last_run_failed, "RunError iff the last run failed"

    for warning in expect.get("warnings", []):
        assert any(corpus.names(w, warning) for w in seen.warnings), (warning, seen.warnings)
    if expect.get("noWarnings"):
        assert seen.warnings == []

    if "messageCount" in expect:
        assert len(seen.messages) == expect["messageCount"], seen.messages
    if "messages" in expect:
        assert corpus.is_subset(expect["messages"], seen.messages), seen.messages
    if "state" in expect:
        assert corpus.is_subset(expect["state"], seen.state), seen.state

    if "request" in expect:
        if "request" in differs:
            assert seen.request["protocolVersion"] == "1.0"
        else:
            assert corpus.is_subset(expect["request"], seen.request), seen.request
    for path in expect.get("requestAbsentPaths", []):
        assert absent(seen.request, path), f"{path} should be absent from {seen.request}"
