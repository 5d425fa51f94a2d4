"""Google ADK's tool confirmation as ag-ui-adk 0.11 sends it (recorded against google-adk
2.15; the real peer is the interop lane's, ``interop/test_adk.py``), and approvals that offer
no edit: what the person is shown, and what goes over the wire (or does not)."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from agui_client_support import Agent, run, text, tool_call, tool_result

from agui_chat import (
    ChatFinishReason,
    ChatMessage,
    ChatOptions,
    FunctionCallContent,
    InterruptResponseContent,
    InvalidResponseError,
    ToolApprovalRequestContent,
    ToolCallContent,
    ai_function,
)

HINT = (
    "Please approve or reject the tool call delete_file() by responding with a "
    "FunctionResponse with an expected ToolConfirmation payload."
)
USER = ChatMessage("user", "please delete reports/q3.txt", message_id="u1")
CONFIRMATION = "adk-0316e140"


def confirmation_args(path: str = "reports/q3.txt") -> dict[str, Any]:
    return {
        "originalFunctionCall": {
            "id": "call_delete_file_1",
            "args": {"path": path},
            "name": "delete_file",
        },
        "toolConfirmation": {"hint": HINT, "confirmed": False},
    }


def adk_pause(*, outcome: bool, confirmed_path: str = "reports/q3.txt") -> Any:
    """ag-ui-adk's pause: the model's call, then ADK's ``adk_request_confirmation`` around it;
    an interrupt outcome naming the wrapper (``emit_interrupt_outcome=True``) or none."""

    def script(body: dict[str, Any]) -> list[dict[str, Any]]:
        events = [
            *tool_call("call_delete_file_1", "delete_file", '{"path":"reports/q3.txt"}'),
            *tool_call(
                CONFIRMATION,
                "adk_request_confirmation",
                json.dumps(confirmation_args(confirmed_path), separators=(",", ":")),
            ),
        ]
        interrupt = {
            "id": CONFIRMATION,
            "reason": "confirmation",
            "message": HINT,
            "toolCallId": CONFIRMATION,
            "metadata": {"adk": confirmation_args(confirmed_path)},
        }
        finish = {"type": "interrupt", "interrupts": [interrupt]} if outcome else None
        return run(body, *events, outcome=finish)

    return script


def adk_resumed(body: dict[str, Any]) -> list[dict[str, Any]]:
    return run(
        body,
        tool_result("r1", "call_delete_file_1", '{"result": "deleted reports/q3.txt"}'),
        text("a2", "Tool said: deleted reports/q3.txt"),
    )


async def pause_and_answer(agent: Agent, make_answer: Any, **options: Any) -> Any:
    warnings: list[str] = []
    async with agent.client(on_warning=warnings.append, **options) as client:
        paused = await client.get_response([USER])
        (request,) = paused.input_requests
        history = [USER, *paused.messages, ChatMessage("user", [make_answer(request)])]
        final = await client.get_response(history)
    return request, final, warnings


@pytest.mark.parametrize("outcome", [False, True], ids=["default", "interrupt-outcome"])
async def test_the_person_is_shown_the_call_that_runs_not_adks_wrapper(outcome: bool) -> None:
    agent = Agent(adk_pause(outcome=outcome), adk_resumed)
    request, final, _ = await pause_and_answer(agent, lambda r: r.create_response(True))
    assert isinstance(request, ToolApprovalRequestContent)
    assert request.request_id == CONFIRMATION
    assert (request.tool_call.call_id, request.tool_call.name, request.tool_call.arguments) == (
        "call_delete_file_1",
        "delete_file",
        {"path": "reports/q3.txt"},
    )
    assert request.message == HINT
    assert final.text == "Tool said: deleted reports/q3.txt"


async def test_the_default_pause_is_answered_with_adks_tool_message_after_its_call() -> None:
    agent = Agent(adk_pause(outcome=False), adk_resumed)
    _, _, warnings = await pause_and_answer(agent, lambda r: r.create_response(True))
    body = agent.last
    assert "resume" not in body
    messages = body["messages"]
    (asked,) = [
        i
        for i, m in enumerate(messages)
        if any(c["id"] == CONFIRMATION for c in m.get("toolCalls") or ())
    ]
    answer = messages[asked + 1]  # ADK's answer right after the call it answers
    assert (answer["role"], answer["toolCallId"]) == ("tool", CONFIRMATION)
    assert json.loads(answer["content"]) == {"confirmed": True}
    assert len([w for w in warnings if "dialect 'adk'" in w]) == 1


@pytest.mark.parametrize(
    ("how", "sent"),
    [
        (
            lambda r: r.create_response(False, "keep it"),
            {"confirmed": False, "payload": {"reason": "keep it"}},
        ),
        (lambda r: r.create_response(False), {"confirmed": False}),
        (lambda r: r.cancel(), {"confirmed": False}),
    ],
    ids=["reject-with-reason", "reject", "cancel"],
)
async def test_a_refusal_in_the_default_pause_is_confirmed_false(how: Any, sent: Any) -> None:
    agent = Agent(adk_pause(outcome=False), adk_resumed)
    await pause_and_answer(agent, how)
    (answer,) = [m for m in agent.last["messages"] if m.get("toolCallId") == CONFIRMATION]
    assert json.loads(answer["content"]) == sent


async def test_the_interrupt_outcome_is_answered_through_resume() -> None:
    agent = Agent(adk_pause(outcome=True), adk_resumed)
    await pause_and_answer(agent, lambda r: r.create_response(True))
    assert agent.last["resume"] == [
        {"interruptId": CONFIRMATION, "status": "resolved", "payload": {"approved": True}}
    ]
    assert not [m for m in agent.last["messages"] if m["role"] == "tool"]


async def test_a_confirmation_of_another_call_than_the_stream_showed_shows_adks_call() -> None:
    # ADK runs the call its confirmation holds: that is what the person must see.
    agent = Agent(adk_pause(outcome=True, confirmed_path="/etc/passwd"))
    async with agent.client() as client:
        paused = await client.get_response([USER])
    (request,) = paused.input_requests
    assert isinstance(request, ToolApprovalRequestContent)
    assert not isinstance(request.tool_call, FunctionCallContent)  # the peer's, run by no loop
    assert isinstance(request.tool_call, ToolCallContent)
    assert (request.tool_call.name, request.tool_call.arguments) == (
        "delete_file",
        {"path": "/etc/passwd"},
    )


async def test_in_plain_agui_the_default_pause_is_a_plain_success() -> None:
    agent = Agent(adk_pause(outcome=False))
    async with agent.client(dialect="agui") as client:
        response = await client.get_response([USER])
    assert response.finish_reason == ChatFinishReason.STOP
    assert response.input_requests == []


# -- an edit the peer never offered is never sent ---------------------------------------------


@pytest.mark.parametrize("outcome", [False, True], ids=["default", "interrupt-outcome"])
async def test_an_edit_adk_never_offered_is_refused_before_anything_is_sent(
    outcome: bool,
) -> None:
    agent = Agent(adk_pause(outcome=outcome))
    async with agent.client() as client:
        paused = await client.get_response([USER])
        (request,) = paused.input_requests
        assert request.allow_edits is False
        with pytest.raises(InvalidResponseError):
            request.create_response(True, edited_arguments={"path": "notes.txt"})
        hand_built = InterruptResponseContent(
            request.request_id, {"approved": True, "editedArgs": {"path": "notes.txt"}}
        )
        history = [USER, *paused.messages, ChatMessage("user", [hand_built])]
        with pytest.raises(InvalidResponseError):
            await client.get_response(history)
    assert len(agent.bodies) == 1


def schemaless_approval(body: dict[str, Any]) -> list[dict[str, Any]]:
    interrupt = {"id": "i1", "reason": "tool_approval", "toolCallId": "c1"}
    return run(
        body,
        tool_call("c1", "delete_file", '{"path":"/tmp/x"}'),
        outcome={"type": "interrupt", "interrupts": [interrupt]},
    )


async def test_an_edit_is_offered_by_the_peers_advertised_capabilities() -> None:
    agent = Agent(schemaless_approval, lambda body: run(body, text("a2", "done")))
    capabilities = {"humanInTheLoop": {"approvals": True, "approveWithEdits": True}}
    request, _, _ = await pause_and_answer(
        agent,
        lambda r: r.create_response(True, edited_arguments={"path": "/tmp/y"}),
        peer_capabilities=capabilities,
    )
    assert request.allow_edits is True
    (entry,) = agent.last["resume"]
    assert entry["payload"] == {"approved": True, "editedArgs": {"path": "/tmp/y"}}


async def test_without_a_schema_or_capabilities_an_edit_is_refused_and_nothing_sent() -> None:
    agent = Agent(schemaless_approval)
    async with agent.client(peer_capabilities={"humanInTheLoop": {"approvals": True}}) as client:
        paused = await client.get_response([USER])
    (request,) = paused.input_requests
    with pytest.raises(InvalidResponseError, match="does not allow editing"):
        request.create_response(True, edited_arguments={"path": "/tmp/y"})
    assert len(agent.bodies) == 1


async def test_the_adk_dialect_is_logged_on_the_agui_logger(
    caplog: pytest.LogCaptureFixture,
) -> None:
    agent = Agent(adk_pause(outcome=False))
    with caplog.at_level(logging.WARNING, logger="agui_chat.agui"):
        async with agent.client() as client:
            await client.get_response([USER])
    assert [r.getMessage() for r in caplog.records if "dialect 'adk'" in r.getMessage()]


async def test_a_call_to_the_callers_own_tool_of_that_name_is_the_callers_to_run() -> None:
    ran: list[str] = []

    @ai_function(name="adk_request_confirmation")
    def own(note: str) -> str:
        """The caller's own tool, which happens to bear ADK's name."""
        ran.append(note)
        return "done"

    def calls_it(body: dict[str, Any]) -> list[dict[str, Any]]:
        return run(body, tool_call("c1", "adk_request_confirmation", '{"note":"mine"}'))

    agent = Agent(calls_it, lambda body: run(body, text("a2", "thanks")))
    async with agent.client() as client:
        response = await client.get_response([USER], ChatOptions(tools=[own]))
    assert ran == ["mine"]
    assert response.input_requests == []
    assert response.text == "thanks"
