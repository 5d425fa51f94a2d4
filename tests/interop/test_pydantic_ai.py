"""pydantic-ai's AG-UI server (pydantic-ai-slim 2.68.0, ``AGUIAdapter``, stateless default)
over its own ``FunctionModel``, the real thing from its own virtualenv, against our client:
approvals (``int-<toolCallId>`` interrupts, answered in AG-UI 1.0 with the assistant
tool-call message re-sent) and deferred calls to the client's own tools."""

from __future__ import annotations

from typing import Any

import pytest
from interop_support import PeerServer

from agui_chat import (
    ChatFinishReason,
    ChatMessage,
    ChatOptions,
    ToolApprovalRequestContent,
    ai_function,
)
from agui_chat.agui import AGUIChatClient


async def ask(server: PeerServer, prompt: str, answer: Any) -> tuple[Any, Any]:
    async with AGUIChatClient(server.url()) as client:
        history = [ChatMessage("user", prompt)]
        paused = await client.get_response(history)
        assert paused.finish_reason == ChatFinishReason.INPUT_REQUIRED
        answers = [answer(r) for r in paused.input_requests]
        history += [*paused.messages, ChatMessage("user", answers)]
        return paused, await client.get_response(history)


async def test_an_approved_call_runs_once(pydantic_ai_server: PeerServer) -> None:
    paused, final = await ask(
        pydantic_ai_server, "please delete pa-approve.txt", lambda r: r.create_response(True)
    )
    (request,) = paused.input_requests
    assert isinstance(request, ToolApprovalRequestContent)
    assert request.request_id == "int-call_del_1"
    assert request.tool_call.arguments == {"path": "pa-approve.txt"}
    assert final.text == "Tool said: deleted pa-approve.txt"
    assert final.finish_reason == ChatFinishReason.STOP
    assert pydantic_ai_server.runs("delete_file", path="pa-approve.txt") == 1


async def test_edited_arguments_run_instead(pydantic_ai_server: PeerServer) -> None:
    _, final = await ask(
        pydantic_ai_server,
        "please delete pa-edit.txt",
        lambda r: r.create_response(True, edited_arguments={"path": "pa-edited.txt"}),
    )
    assert final.text == "Tool said: deleted pa-edited.txt"
    assert pydantic_ai_server.runs("delete_file", path="pa-edit.txt") == 0
    assert pydantic_ai_server.runs("delete_file", path="pa-edited.txt") == 1


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        (lambda r: r.create_response(False, "keep it"), "Tool said: keep it"),
        (lambda r: r.cancel(), "Tool said: Cancelled by user."),
    ],
    ids=["reject", "cancel"],
)
async def test_a_rejected_or_cancelled_call_never_runs(
    pydantic_ai_server: PeerServer, answer: Any, said: str
) -> None:
    path = f"pa-no-{said[-6:-1].strip()}.txt"
    _, final = await ask(pydantic_ai_server, f"please delete {path}", answer)
    assert final.text == said
    assert pydantic_ai_server.runs("delete_file", path=path) == 0


async def test_a_deferred_call_to_the_clients_own_tool_runs_here_once(
    pydantic_ai_server: PeerServer,
) -> None:
    runs: list[str] = []

    @ai_function
    def local_time() -> str:
        """The local time."""
        runs.append("ran")
        return "12:00"

    async with AGUIChatClient(pydantic_ai_server.url()) as client:
        response = await client.get_response(
            [ChatMessage("user", "what time is it?")], ChatOptions(tools=[local_time])
        )
    assert response.text == "Tool said: 12:00"
    assert runs == ["ran"]
