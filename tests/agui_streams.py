"""Test helpers shared by the AGUIServer and robustness suites: run-input bodies, reading
and validating the SSE our server writes, a recorder that validates every stream a test's
servers finish, and scripted models and tools that count how often they ran."""

from __future__ import annotations

import json
from collections.abc import Iterator, MutableMapping, Sequence
from contextlib import contextmanager
from typing import Any

import pytest
from ag_ui_validate import ValidatorOptions, create_validator

from agui_chat import ChatMessage, ChatOptions, ai_function, approval_required
from agui_chat.testing import ScriptedChatClient

# -- run inputs ------------------------------------------------------------------------------


def user(text: str, message_id: str = "u1") -> dict[str, Any]:
    return {"id": message_id, "role": "user", "content": text}


def assistant_calls(
    *calls: tuple[str, str, dict[str, Any]], message_id: str = "a1"
) -> dict[str, Any]:
    """An assistant message holding tool calls ``(call_id, name, arguments)``."""
    return {
        "id": message_id,
        "role": "assistant",
        "toolCalls": [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
            for call_id, name, arguments in calls
        ],
    }


def tool_result(call_id: str, content: str, message_id: str | None = None) -> dict[str, Any]:
    return {
        "id": message_id or f"t-{call_id}",
        "role": "tool",
        "toolCallId": call_id,
        "content": content,
    }


def run_input(
    *messages: dict[str, Any], thread: str = "t1", run: str = "r1", **extra: Any
) -> dict[str, Any]:
    return {
        "threadId": thread,
        "runId": run,
        "messages": list(messages) or [user("hello")],
        "tools": [],
        "context": [],
        "forwardedProps": {},
        "state": {},
        "protocolVersion": "1.0",
        **extra,
    }


def approve(interrupt: dict[str, Any], **payload: Any) -> dict[str, Any]:
    return {
        "interruptId": interrupt["id"],
        "status": "resolved",
        "payload": {"approved": True, **payload},
    }


def reject(interrupt: dict[str, Any], reason: str | None = None) -> dict[str, Any]:
    payload: dict[str, Any] = {"approved": False}
    if reason is not None:
        payload["reason"] = reason
    return {"interruptId": interrupt["id"], "status": "resolved", "payload": payload}


def answer(interrupt: dict[str, Any], payload: Any) -> dict[str, Any]:
    return {"interruptId": interrupt["id"], "status": "resolved", "payload": payload}


def cancel(interrupt: dict[str, Any]) -> dict[str, Any]:
    return {"interruptId": interrupt["id"], "status": "cancelled"}


# -- reading the stream ----------------------------------------------------------------------


def sse_events(body: bytes | str) -> list[dict[str, Any]]:
    """The events of an SSE body, checking the framing the server promises: LF only, every
    block a comment or exactly one ``data:`` line of JSON, the body ending on a blank line."""
    text = body.decode("utf-8") if isinstance(body, bytes) else body
    assert "\r" not in text, "the server must frame with LF only"
    blocks = text.split("\n\n")
    assert blocks[-1] == "", "the body must end with a blank line"
    events = []
    for block in blocks[:-1]:
        lines = block.split("\n")
        if all(line.startswith(":") for line in lines):
            continue
        assert len(lines) == 1 and lines[0].startswith("data: "), f"bad SSE block: {block!r}"
        events.append(json.loads(lines[0][len("data: ") :]))
    return events


def assert_valid_agui(events: Sequence[dict[str, Any]], *, resumed: bool = False) -> None:
    """The stream passes ag-ui-validate with no error or warning.

    The 1.0 false positives of ag-ui-validate 0.4 (agui-wire.md §8.4) are turned off one by
    one, only where they arise. One shape is checked here instead: a stream that is a single
    ``RUN_ERROR`` (how the server refuses a resume before any run exists; AG-UI 1.0 lets a
    stream open with ``RUN_ERROR``, agui-wire §5.1 and §5.4, but ag-ui-validate 0.4 reports
    AGUI001) must be a well-formed ``RUN_ERROR`` with a message and a code, and nothing else.
    """
    if len(events) == 1 and events[0].get("type") == "RUN_ERROR":
        assert lone_run_error_problems(events[0]) == [], events[0]
        return
    overrides: dict[str, str] = {}
    if resumed:
        # AGUI207: a resumed run emits TOOL_CALL_RESULT for a call started in the previous
        # run, as AG-UI 1.0 tool-approval resumes must (agui-wire.md §5.4); the validator's
        # run-scoped tracking flags it (§8.3). The workaround it accepts, a MESSAGES_SNAPSHOT
        # before the result, would make a 1.0 client drop every held message the snapshot
        # lacks (§5.2 reconcile), so the server does not emit one.
        overrides["AGUI207"] = "off"
    validator = create_validator(ValidatorOptions(severity_overrides=overrides))
    for event in events:
        validator.feed(event)
    validator.finalize()
    report = validator.report()
    problems = [
        f"{d.rule} {d.severity} at event {d.event_index}: {d.message}"
        for d in report.diagnostics
        if d.severity in ("error", "warning")
    ]
    assert not problems, "ag-ui-validate: " + "; ".join(problems)


def lone_run_error_problems(event: dict[str, Any]) -> list[str]:
    """What is wrong with a ``RUN_ERROR`` that opens (and is) a stream."""
    known = ("type", "message", "code", "retryAfter")
    problems = [f"unexpected key {k!r}" for k in event if k not in known]
    wait = event.get("retryAfter", 1)
    if not isinstance(wait, int) or isinstance(wait, bool) or wait < 1:
        problems.append("retryAfter must be a whole number of seconds, at least 1")
    if not isinstance(event.get("message"), str) or not event["message"]:
        problems.append("message must be a non-empty string")
    if not isinstance(event.get("code"), str) or not event["code"]:
        problems.append("code must be a non-empty string")
    return problems


@contextmanager
def validated_server_streams(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Record every SSE body an ``AGUIServer`` finishes while the block runs, and check each
    with ag-ui-validate at its end. A stream the client cut off is not the server's to
    finish, so it is not checked."""
    from agui_chat.agui import AGUIServer

    streams: list[tuple[bytes, bool]] = []
    original = AGUIServer._stream

    async def recording(self: AGUIServer, run: Any, receive: Any, send: Any) -> None:
        body = bytearray()
        complete = False

        async def spy(message: MutableMapping[str, Any]) -> None:
            nonlocal complete
            if message["type"] == "http.response.body":
                body.extend(message.get("body", b""))
                complete = not message.get("more_body", False)
            await send(message)

        try:
            await original(self, run, receive, spy)
        finally:
            if complete:
                streams.append((bytes(body), bool(run.input.resume)))

    monkeypatch.setattr(AGUIServer, "_stream", recording)
    yield
    for body, resumed in streams:
        assert_valid_agui(sse_events(body), resumed=resumed)


# -- what a client holds ---------------------------------------------------------------------


def history_from(events: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The wire messages a client holds after a run: text, tool calls and results."""
    messages: dict[str, dict[str, Any]] = {}
    calls: dict[str, dict[str, Any]] = {}
    for event in events:
        kind = event["type"]
        if kind == "TEXT_MESSAGE_START":
            messages.setdefault(event["messageId"], {"id": event["messageId"], "role": "assistant"})
        elif kind == "TEXT_MESSAGE_CONTENT":
            message = messages[event["messageId"]]
            message["content"] = message.get("content", "") + event["delta"]
        elif kind == "TOOL_CALL_START":
            parent = event.get("parentMessageId") or f"calls-{event['toolCallId']}"
            message = messages.setdefault(parent, {"id": parent, "role": "assistant"})
            call = {
                "id": event["toolCallId"],
                "type": "function",
                "function": {"name": event["toolCallName"], "arguments": ""},
            }
            message.setdefault("toolCalls", []).append(call)
            calls[event["toolCallId"]] = call
        elif kind == "TOOL_CALL_ARGS":
            calls[event["toolCallId"]]["function"]["arguments"] += event["delta"]
        elif kind == "TOOL_CALL_RESULT":
            messages[event["messageId"]] = {
                "id": event["messageId"],
                "role": "tool",
                "toolCallId": event["toolCallId"],
                "content": event["content"],
            }
    return list(messages.values())


# -- models and tools ------------------------------------------------------------------------


def scripted(*replies: Any) -> ScriptedChatClient:
    """A model answering with ``replies`` in order (a callable reply is called with the
    messages and options). Calling it more often than scripted fails the test."""
    queue = list(replies)

    def handler(messages: list[ChatMessage], options: ChatOptions | None) -> Any:
        if not queue:
            raise AssertionError("the model was called more often than scripted")
        reply = queue.pop(0)
        return reply(messages, options) if callable(reply) else reply

    return ScriptedChatClient(handler)


class SideEffects:
    """The tools the tests use, each recording the arguments of every run."""

    def __init__(self) -> None:
        self.runs: dict[str, list[dict[str, Any]]] = {}

    def count(self, name: str) -> int:
        return len(self.runs.get(name, []))

    def record(self, name: str, **arguments: Any) -> None:
        self.runs.setdefault(name, []).append(arguments)

    def delete_file(self, *, allow_edits: bool = True, allow_remember: bool = False) -> Any:
        @approval_required(allow_edits=allow_edits, allow_remember=allow_remember)
        @ai_function
        def delete_file(path: str) -> str:
            """Delete a file."""
            self.record("delete_file", path=path)
            return f"deleted {path}"

        return delete_file

    def lookup(self) -> Any:
        @ai_function
        def lookup(city: str) -> str:
            """Look up the weather of a city."""
            self.record("lookup", city=city)
            return f"sunny in {city}"

        return lookup
