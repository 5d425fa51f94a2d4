"""Microsoft Agent Framework (agent-framework-ag-ui 1.7.0, agent-framework-core 1.23.0), the
real thing from its own virtualenv: its ``AGUIChatClient`` against our server (snake_case
ids, a resume without the assistant tool-call message: compatibility rule
``agent-framework-snake-case``), and our client against its server."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from interop_support import PeerServer, our_app, peer_python, run_peer

from agui_chat import ChatFinishReason, ChatMessage, ToolApprovalRequestContent
from agui_chat.agui import AGUIChatClient
from agui_streams import SideEffects
from meai_texts import REJECTED

CLIENT = Path(__file__).parent / "clients" / "agent_framework_client.py"
Serve = Callable[[Any], Awaitable[str]]


async def af_client(url: str, scenario: str) -> dict[str, Any]:
    return await run_peer([str(peer_python("agent_framework")), str(CLIENT), url, scenario])


# -- its client, our server -------------------------------------------------------------------


async def test_its_client_chats_with_our_server(our_server: Serve) -> None:
    effects = SideEffects()
    out = await af_client(await our_server(our_app(effects)), "plain")
    assert out["texts"] == ["Hello from agui_chat."]
    assert out["interrupts"] == []


async def test_its_client_approves_and_our_server_runs_the_call_exactly_once(
    our_server: Serve,
) -> None:
    effects = SideEffects()
    out = await af_client(await our_server(our_app(effects)), "approve")
    (interrupt,) = out["interrupts"]
    assert interrupt["reason"] == "tool_call" and interrupt["toolCallId"] == "call_del_1"
    assert out["texts"][-1] == "Tool said: deleted report.txt"
    assert effects.runs["delete_file"] == [{"path": "report.txt"}]


@pytest.mark.parametrize("answer", ["approve", "reject"])
async def test_its_client_goes_on_after_an_answer_though_it_drops_the_results_seals(
    our_server: Serve, answer: str
) -> None:
    # Its client keeps no TOOL_CALL_RESULT messageId (our seal), so the result it sends back on
    # a later turn carries none: our server remembered issuing it (rule
    # agent-framework-unsealed-results) and takes it; the turn is answered and nothing reruns.
    effects = SideEffects()
    out = await af_client(await our_server(our_app(effects)), f"{answer}-then-continue")
    assert "error" not in out
    if answer == "approve":
        assert out["texts"][1:] == ["Tool said: deleted report.txt", "Hello from agui_chat."]
        assert effects.runs["delete_file"] == [{"path": "report.txt"}]
    else:
        assert out["texts"][1].startswith("Tool said: " + REJECTED)
        assert out["texts"][2] == "Hello from agui_chat."
        assert effects.count("delete_file") == 0


async def test_its_client_rejects_and_our_server_runs_nothing(our_server: Serve) -> None:
    effects = SideEffects()
    out = await af_client(await our_server(our_app(effects)), "reject")
    assert len(out["interrupts"]) == 1
    assert out["texts"][-1].startswith("Tool said: " + REJECTED)
    assert effects.count("delete_file") == 0


# -- our client, its server -------------------------------------------------------------------


async def ask(server: PeerServer, prompt: str, answer: Any) -> tuple[Any, Any]:
    async with AGUIChatClient(server.url()) as client:
        history = [ChatMessage("user", prompt)]
        paused = await client.get_response(history)
        if answer is None:
            return paused, None
        history += [
            *paused.messages,
            ChatMessage("user", [answer(r) for r in paused.input_requests]),
        ]
        return paused, await client.get_response(history)


async def test_our_client_chats_with_its_server(agent_framework_server: PeerServer) -> None:
    response, _ = await ask(agent_framework_server, "hello", None)
    assert response.text == "Hello from Agent Framework."
    assert response.finish_reason == ChatFinishReason.STOP


async def test_our_client_approves_a_call_its_server_runs_once(
    agent_framework_server: PeerServer,
) -> None:
    paused, final = await ask(
        agent_framework_server, "please delete af-approve.txt", lambda r: r.create_response(True)
    )
    assert paused.finish_reason == ChatFinishReason.INPUT_REQUIRED
    (request,) = paused.input_requests
    assert isinstance(request, ToolApprovalRequestContent)
    assert request.request_id.startswith("af-call-")
    assert (request.tool_call.name, request.tool_call.arguments) == (
        "delete_file",
        {"path": "af-approve.txt"},
    )
    assert final.text == "Tool said: deleted af-approve.txt"
    assert agent_framework_server.runs("delete_file", path="af-approve.txt") == 1


@pytest.mark.parametrize("answer", ["reject", "cancel"])
async def test_our_client_rejects_or_cancels_and_its_server_runs_nothing(
    agent_framework_server: PeerServer, answer: str
) -> None:
    path = f"af-{answer}.txt"
    _, final = await ask(
        agent_framework_server,
        f"please delete {path}",
        (lambda r: r.create_response(False, "keep it"))
        if answer == "reject"
        else (lambda r: r.cancel()),
    )
    assert agent_framework_server.runs("delete_file", path=path) == 0
    if answer == "reject":
        assert final.text == "Tool said: Error: Tool call invocation was rejected by user."
