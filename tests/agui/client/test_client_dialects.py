"""Client dialects (DESIGN §7): ag-ui-langgraph's default pause and LangChain's
HumanInTheLoopMiddleware decisions, read as typed requests and answered as those peers
expect; AG-UI 1.0 stays the default and wins when a peer speaks both."""

from __future__ import annotations

import json
from typing import Any

import pytest
from agui_client_support import Agent, run, text, tool_call

from agui_chat import (
    ChatFinishReason,
    ChatMessage,
    InterruptRequestContent,
    ProtocolError,
    RunError,
    ToolApprovalRequestContent,
)

USER = ChatMessage("user", "delete a.txt", message_id="u1")


def on_interrupt(value: Any, interrupt_id: str | None = None) -> dict[str, Any]:
    """ag-ui-langgraph's CUSTOM event: the value as a JSON string, the LangGraph interrupt
    (with its id) as rawEvent when raw events are on."""
    event: dict[str, Any] = {"type": "CUSTOM", "name": "on_interrupt", "value": json.dumps(value)}
    if interrupt_id is not None:
        event["rawEvent"] = {"value": value, "id": interrupt_id, "response_schema": None}
    return event


def legacy_pause(*customs: dict[str, Any], calls: tuple[str, ...] = ("c1",)) -> Any:
    def script(body: dict[str, Any]) -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = []
        for call_id in calls:
            events += tool_call(call_id, "delete_file", '{"path": "a.txt"}', parent="a1")
        return run(body, *events, *customs)  # RUN_FINISHED without outcome

    return script


def done(body: dict[str, Any]) -> list[dict[str, Any]]:
    return run(body, text("a2", "Done."))


async def pause_and_answer(
    agent: Agent, make_answers: Any, **kwargs: Any
) -> tuple[list[Any], list[str], Any]:
    warnings: list[str] = []
    async with agent.client(on_warning=warnings.append, **kwargs) as client:
        paused = await client.get_response([USER])
        requests = list(paused.input_requests)
        history = [USER, *paused.messages, ChatMessage("user", make_answers(requests))]
        final = await client.get_response(history)
    return requests, warnings, final


def approve_all(requests: list[Any]) -> list[Any]:
    return [r.create_response(True) for r in requests]


# -- LangGraph's default pause ---------------------------------------------------------------


async def test_an_on_interrupt_naming_a_streamed_call_is_an_approval_answered_on_the_command() -> (
    None
):
    value = {"message": "Approve delete_file?", "toolCallId": "c1"}
    agent = Agent(legacy_pause(on_interrupt(value, "lg-1")), done)
    requests, warnings, final = await pause_and_answer(agent, approve_all)

    (request,) = requests
    assert isinstance(request, ToolApprovalRequestContent)
    assert request.request_id == "lg-1" and request.message == "Approve delete_file?"
    assert (request.tool_call.call_id, request.tool_call.arguments) == ("c1", {"path": "a.txt"})
    resumed = agent.bodies[1]
    assert "resume" not in resumed
    assert resumed["forwardedProps"] == {"command": {"resume": {"approved": True}}}
    assert resumed["threadId"] == agent.bodies[0]["threadId"]
    assert final.text == "Done."
    (warning,) = [w for w in warnings if "dialect 'langgraph'" in w]
    assert "CUSTOM on_interrupt" in warning and agent.bodies[0]["threadId"] in warning


async def test_the_pause_finishes_input_required_and_a_question_keeps_message_and_schema() -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    agent = Agent(legacy_pause(on_interrupt({"message": "Which city?", "responseSchema": schema})))
    async with agent.client() as client:
        paused = await client.get_response([USER])
    assert paused.finish_reason == ChatFinishReason.INPUT_REQUIRED
    (request,) = paused.input_requests
    assert isinstance(request, InterruptRequestContent)
    assert (request.message, request.response_schema) == ("Which city?", schema)
    assert request.metadata == {
        "langgraph": {"raw": {"message": "Which city?", "responseSchema": schema}}
    }


async def test_a_plain_string_value_is_the_questions_message_and_its_answer_the_payload() -> None:
    agent = Agent(legacy_pause(on_interrupt("Which city?")), done)
    requests, _, _ = await pause_and_answer(agent, lambda rs: [rs[0].create_response("Rome")])
    assert isinstance(requests[0], InterruptRequestContent)
    assert requests[0].message == "Which city?"
    assert agent.bodies[1]["forwardedProps"]["command"] == {"resume": "Rome"}


async def test_the_dialect_warns_once_per_thread() -> None:
    value = {"message": "Approve?", "toolCallId": "c1"}
    agent = Agent(
        legacy_pause(on_interrupt(value, "lg-1")), legacy_pause(on_interrupt(value, "lg-2"))
    )
    warnings: list[str] = []
    async with agent.client(on_warning=warnings.append) as client:
        first = await client.get_response([USER])
        history = [USER, *first.messages, ChatMessage("user", approve_all(first.input_requests))]
        second = await client.get_response(history)
    assert second.finish_reason == ChatFinishReason.INPUT_REQUIRED
    assert len([w for w in warnings if "dialect 'langgraph'" in w]) == 1


async def test_several_interrupts_are_keyed_by_their_langgraph_ids() -> None:
    pause = legacy_pause(
        on_interrupt({"message": "Approve?", "toolCallId": "c1"}, "lg-1"),
        on_interrupt({"message": "Approve?", "toolCallId": "c2"}, "lg-2"),
        calls=("c1", "c2"),
    )
    agent = Agent(pause, done)
    await pause_and_answer(
        agent, lambda rs: [rs[0].create_response(True), rs[1].create_response(False, "no")]
    )
    assert agent.bodies[1]["forwardedProps"]["command"]["resume"] == {
        "lg-1": {"approved": True},
        "lg-2": {"approved": False, "reason": "no"},
    }


async def test_several_interrupts_without_ids_are_refused_before_sending() -> None:
    pause = legacy_pause(
        on_interrupt({"message": "Approve?", "toolCallId": "c1"}),
        on_interrupt({"message": "Approve?", "toolCallId": "c2"}),
        calls=("c1", "c2"),
    )
    agent = Agent(pause)
    with pytest.raises(ProtocolError, match="carry no LangGraph interrupt ids"):
        await pause_and_answer(agent, approve_all)
    assert len(agent.bodies) == 1


async def test_a_cancelled_question_is_langgraphs_cancel_sentinel() -> None:
    agent = Agent(legacy_pause(on_interrupt({"message": "Which city?"}, "lg-1")), done)
    await pause_and_answer(agent, lambda rs: [rs[0].cancel()])
    assert agent.bodies[1]["forwardedProps"]["command"]["resume"] == {
        "__agui_cancelled__": True,
        "interrupt_id": "lg-1",
    }


async def test_a_peer_mixing_conventions_is_read_once_and_the_outcome_wins() -> None:
    interrupt = {
        "id": "lg-1",
        "reason": "langgraph:interrupt",
        "message": "Approve?",
        "toolCallId": "c1",
        "metadata": {"langgraph": {"raw": {"message": "Approve?", "toolCallId": "c1"}}},
    }

    def both(body: dict[str, Any]) -> list[dict[str, Any]]:
        events = tool_call("c1", "delete_file", '{"path": "a.txt"}')
        custom = on_interrupt({"message": "Approve?", "toolCallId": "c1"}, "lg-1")
        return run(body, events, custom, outcome={"type": "interrupt", "interrupts": [interrupt]})

    agent = Agent(both, done)
    requests, warnings, _ = await pause_and_answer(agent, approve_all)
    assert [r.request_id for r in requests] == ["lg-1"]
    assert agent.bodies[1]["resume"] == [
        {"interruptId": "lg-1", "status": "resolved", "payload": {"approved": True}}
    ]
    assert "command" not in agent.bodies[1]["forwardedProps"]
    assert not [w for w in warnings if "dialect" in w]


async def test_dialect_agui_reads_the_legacy_pause_as_an_ordinary_finish() -> None:
    agent = Agent(legacy_pause(on_interrupt({"message": "Approve?", "toolCallId": "c1"}, "lg-1")))
    async with agent.client(dialect="agui") as client:
        response = await client.get_response([USER])
    assert response.finish_reason == ChatFinishReason.STOP
    assert response.input_requests == []


def test_an_unknown_dialect_is_refused() -> None:
    with pytest.raises(ValueError, match="dialect must be None"):
        Agent().client(dialect="langchian")


# -- LangChain's HumanInTheLoopMiddleware ------------------------------------------------------


def hitl_per_call(body: dict[str, Any]) -> list[dict[str, Any]]:
    raw = {
        "type": "tool_approval",
        "tool_call_id": "c1",
        "name": "delete_file",
        "args": {"path": "a.txt"},
        "description": "Tool execution requires approval",
    }
    interrupt = {
        "id": "lg-9",
        "reason": "langgraph:interrupt",
        "toolCallId": "c1",
        "metadata": {"langgraph": {"raw": raw, "ns": None}},
    }
    events = tool_call("c1", "delete_file", '{"path": "a.txt"}', parent="a1")
    return run(body, events, outcome={"type": "interrupt", "interrupts": [interrupt]})


@pytest.mark.parametrize(
    ("answer", "decision"),
    [
        (lambda r: r.create_response(True), {"type": "approve"}),
        (lambda r: r.create_response(False, "keep it"), {"type": "reject", "message": "keep it"}),
        (lambda r: r.create_response(False), {"type": "reject"}),
        (lambda r: r.cancel(), {"type": "reject", "message": "cancelled"}),
        (
            lambda r: r.create_response(True, edited_arguments={"path": "b.txt"}),
            {"type": "edit", "edited_action": {"name": "delete_file", "args": {"path": "b.txt"}}},
        ),
    ],
)
async def test_a_tool_approval_interrupt_is_answered_with_langchains_decisions(
    answer: Any, decision: dict[str, Any]
) -> None:
    agent = Agent(hitl_per_call, done)
    requests, warnings, _ = await pause_and_answer(agent, lambda rs: [answer(rs[0])])
    (request,) = requests
    assert isinstance(request, ToolApprovalRequestContent)
    assert (request.tool_call.name, request.tool_call.arguments) == (
        "delete_file",
        {"path": "a.txt"},
    )
    assert request.message == "Tool execution requires approval"
    assert agent.bodies[1]["resume"] == [
        {"interruptId": "lg-9", "status": "resolved", "payload": decision}
    ]
    assert len([w for w in warnings if "dialect 'langchain-hitl'" in w]) == 1


async def test_a_batched_review_becomes_one_approval_per_call_answered_by_position() -> None:
    value = {
        "action_requests": [
            {"name": "delete_file", "args": {"path": "a.txt"}, "description": "first"},
            {"name": "delete_file", "args": {"path": "b.txt"}, "description": "second"},
        ],
        "review_configs": [
            {"action_name": "delete_file", "allowed_decisions": ["approve", "reject"]}
        ],
    }

    def pause(body: dict[str, Any]) -> list[dict[str, Any]]:
        events = tool_call("c1", "delete_file", '{"path": "a.txt"}', parent="a1")
        events += tool_call("c2", "delete_file", '{"path": "b.txt"}', parent="a1")
        return run(body, events, on_interrupt(value, "lg-5"))

    agent = Agent(pause, done)
    requests, _, _ = await pause_and_answer(
        agent, lambda rs: [rs[1].create_response(False, "keep b"), rs[0].create_response(True)]
    )
    assert [r.tool_call.call_id for r in requests] == ["c1", "c2"]
    assert [r.message for r in requests] == ["first", "second"]
    assert not any(r.allow_edits for r in requests)
    assert agent.bodies[1]["forwardedProps"]["command"]["resume"] == {
        "decisions": [{"type": "approve"}, {"type": "reject", "message": "keep b"}]
    }


async def test_a_refused_dialect_answer_is_the_peers_run_error_and_nothing_is_retried() -> None:
    def refuses(body: dict[str, Any]) -> list[dict[str, Any]]:
        return [
            {"type": "RUN_STARTED", "threadId": body["threadId"], "runId": body["runId"]},
            {"type": "RUN_ERROR", "message": "union_tag_not_found", "code": "ValidationError"},
        ]

    agent = Agent(hitl_per_call, refuses)
    with pytest.raises(RunError, match="union_tag_not_found"):
        await pause_and_answer(agent, approve_all)
    assert len(agent.bodies) == 2


async def test_a_decision_schema_on_the_interrupt_does_not_hold_the_persons_answer() -> None:
    decision_schema = {
        "type": "object",
        "properties": {"type": {"enum": ["approve", "reject"]}},
        "required": ["type"],
    }

    def pause(body: dict[str, Any]) -> list[dict[str, Any]]:
        events = hitl_per_call(body)
        events[-1]["outcome"]["interrupts"][0]["responseSchema"] = decision_schema
        return events

    agent = Agent(pause, done)
    await pause_and_answer(agent, approve_all)
    assert agent.bodies[1]["resume"][0]["payload"] == {"type": "approve"}
