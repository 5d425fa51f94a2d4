"""``ToolApprovalRequestContent.cancel()``: withdraw an approval undecided. In process it is a
rejection with the reason "cancelled"; over AG-UI it is a ``cancelled`` resume entry; against
our server the call never runs either."""

from __future__ import annotations

import copy
from datetime import datetime, timedelta, timezone
from typing import Any

import httpx
import pytest

from agui_chat import (
    AIContent,
    ChatFinishReason,
    ChatMessage,
    ChatOptions,
    FunctionCallContent,
    FunctionInvokingChatClient,
    FunctionResultContent,
    ToolApprovalRequestContent,
    ToolApprovalResponseContent,
    ai_function,
    approval_required,
)
from agui_chat.agui import AGUIChatClient
from agui_chat.testing import ScriptedChatClient
from agui_server import agui_server
from meai_texts import REJECTED

CALL = FunctionCallContent("c1", "delete_file", {"path": "a.txt"})


def test_cancel_is_an_undecided_rejection_that_round_trips() -> None:
    request = ToolApprovalRequestContent("r1", CALL)
    answer = request.cancel()
    assert isinstance(answer, ToolApprovalResponseContent)
    assert (answer.request_id, answer.approved, answer.cancelled) == ("r1", False, True)
    assert answer.reason == "cancelled"
    again = AIContent.from_dict(answer.to_dict())
    assert isinstance(again, ToolApprovalResponseContent) and again.cancelled
    assert request.create_response(False).cancelled is False


def test_cancel_works_past_expiry_and_never_approves() -> None:
    past = datetime.now(timezone.utc) - timedelta(minutes=1)
    assert ToolApprovalRequestContent("r1", CALL, expires_at=past).cancel().cancelled
    with pytest.raises(ValueError, match="cancelled approval approves nothing"):
        ToolApprovalResponseContent("r1", True, CALL, cancelled=True)


class Deletes:
    def __init__(self) -> None:
        self.deleted: list[str] = []

        @approval_required
        @ai_function
        def delete_file(path: str) -> str:
            """Delete a file."""
            self.deleted.append(path)
            return f"deleted {path}"

        self.tool = delete_file


def model(seen: list[list[ChatMessage]]) -> ScriptedChatClient:
    # A fresh call each time: the tool loop marks a handled call informational in place.
    replies: list[Any] = [[copy.deepcopy(CALL)], "ok"]

    def handler(messages: list[ChatMessage], options: ChatOptions | None) -> Any:
        seen.append(list(messages))
        return replies.pop(0)

    return ScriptedChatClient(handler)


def results(messages: list[ChatMessage]) -> dict[str, Any]:
    return {
        c.call_id: c.result
        for m in messages
        for c in m.contents
        if isinstance(c, FunctionResultContent)
    }


async def test_the_tool_loop_treats_a_cancel_as_a_rejection_with_reason_cancelled() -> None:
    tools, seen = Deletes(), []
    client = FunctionInvokingChatClient(model(seen))
    options = ChatOptions(tools=[tools.tool])
    history = [ChatMessage("user", "delete a.txt")]
    paused = await client.get_response(history, options)
    assert paused.finish_reason == ChatFinishReason.INPUT_REQUIRED
    (request,) = paused.input_requests
    assert isinstance(request, ToolApprovalRequestContent)
    history += [*paused.messages, ChatMessage("user", [request.cancel()])]
    done = await client.get_response(history, options)
    assert done.text == "ok"
    assert tools.deleted == []
    rejection = results(seen[-1])["c1"]
    assert rejection.startswith(REJECTED) and "ancelled" in rejection


async def test_over_agui_a_cancel_is_a_cancelled_entry_and_the_server_runs_nothing() -> None:
    tools, seen = Deletes(), []
    server = agui_server(model(seen), tools=[tools.tool]).app
    bodies: list[bytes] = []

    async def record(request: httpx.Request) -> None:
        bodies.append(request.content)

    http = httpx.AsyncClient(
        transport=httpx.ASGITransport(app=server), event_hooks={"request": [record]}
    )
    async with AGUIChatClient("http://localhost/", http_client=http) as client:
        history = [ChatMessage("user", "delete a.txt")]
        paused = await client.get_response(history)
        (request,) = paused.input_requests
        assert isinstance(request, ToolApprovalRequestContent)
        history += [*paused.messages, ChatMessage("user", [request.cancel()])]
        done = await client.get_response(history)
    await http.aclose()
    assert b'"status":"cancelled"' in bodies[-1].replace(b" ", b"")
    assert b'"payload"' not in bodies[-1]
    assert done.text == "ok"
    assert tools.deleted == []
    assert "ancelled" in results(seen[-1])["c1"]
