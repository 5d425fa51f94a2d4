"""Human in the loop over AG-UI: interrupts become requests, answers become ``resume``."""

from __future__ import annotations

import json
from typing import Any

import pytest
from ag_ui.core import RunAgentInput
from agui_client_support import Agent, run, text, tool_call, tool_result

from agui_chat import (
    ChatFinishReason,
    ChatMessage,
    ChatOptions,
    ChatResponse,
    DuplicateResponseError,
    ExpiredRequestError,
    InterruptRequestContent,
    InterruptResponseContent,
    InvalidResponseError,
    ToolApprovalRequestContent,
    ToolApprovalResponseContent,
    UnansweredRequestError,
    UnknownResponseError,
)

PARAMS = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
PAST = "2001-01-01T00:00:00Z"


def approval(
    interrupt_id: str, call_id: str, *, edits: bool = True, **extra: Any
) -> dict[str, Any]:
    properties: dict[str, Any] = {"approved": {"type": "boolean"}, "reason": {"type": "string"}}
    if edits:
        properties["editedArgs"] = PARAMS
    return {
        "id": interrupt_id,
        "reason": "tool_call",
        "message": "Approve delete_file?",
        "toolCallId": call_id,
        "responseSchema": {"type": "object", "properties": properties, "required": ["approved"]},
        **extra,
    }


def question(interrupt_id: str, **extra: Any) -> dict[str, Any]:
    return {
        "id": interrupt_id,
        "reason": "input_required",
        "message": "Which build?",
        "responseSchema": {
            "type": "object",
            "properties": {"build": {"type": "integer"}},
            "required": ["build"],
        },
        "metadata": {"agui_chat": {"toolCallId": "c9", "key": "build"}},
        **extra,
    }


def paused(*interrupts: dict[str, Any], calls: tuple[str, ...] = ("c1",)) -> Any:
    def script(body: dict[str, Any]) -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = list(text("a1", "I will delete it."))
        for call_id in calls:
            events += tool_call(call_id, "delete_file", '{"path":"/tmp/x"}', parent="a1")
        return run(body, *events, outcome={"type": "interrupt", "interrupts": list(interrupts)})

    return script


def resumed(body: dict[str, Any]) -> list[dict[str, Any]]:
    return run(body, tool_result("t1", "c1", "deleted"), text("a2", "Done."))


USER = ChatMessage("user", "delete /tmp/x", message_id="u1")


async def pause(agent: Agent, **kwargs: Any) -> tuple[Any, ChatResponse]:
    client = agent.client(**kwargs)
    response = await client.get_response([USER])
    return client, response


# -------------------------------------------------------------------- interrupts -> requests


async def test_an_approval_interrupt_becomes_a_tool_approval_request() -> None:
    agent = Agent(paused(approval("tok-1", "c1")))
    client, response = await pause(agent)
    await client.aclose()

    assert response.finish_reason == ChatFinishReason.INPUT_REQUIRED
    (request,) = response.input_requests
    assert isinstance(request, ToolApprovalRequestContent)
    assert request.request_id == "tok-1"
    assert request.message == "Approve delete_file?"
    assert (request.tool_call.call_id, request.tool_call.name) == ("c1", "delete_file")
    assert request.tool_call.arguments == {"path": "/tmp/x"}
    assert request.allow_edits is True
    assert request.additional_properties["agui_interrupt"] == approval("tok-1", "c1")


async def test_an_approval_without_edited_args_in_its_schema_does_not_allow_edits() -> None:
    agent = Agent(paused(approval("tok-1", "c1", edits=False)))
    client, response = await pause(agent)
    await client.aclose()

    (request,) = response.input_requests
    assert request.allow_edits is False


async def test_an_approval_is_recognised_by_its_tool_call_whatever_the_reason() -> None:
    agent = Agent(paused({"id": "i1", "reason": "tool_approval", "toolCallId": "c1"}))
    client, response = await pause(agent)
    await client.aclose()

    (request,) = response.input_requests
    assert isinstance(request, ToolApprovalRequestContent)
    # No schema and no capabilities: nothing offers editing, so an edit would be ignored.
    assert request.allow_edits is False


async def test_an_interrupt_without_a_known_tool_call_becomes_a_question() -> None:
    agent = Agent(paused(question("q-1", expiresAt="2099-01-01T00:00:00Z"), calls=()))
    client, response = await pause(agent)
    await client.aclose()

    (request,) = response.input_requests
    assert isinstance(request, InterruptRequestContent)
    assert (request.request_id, request.reason, request.message) == (
        "q-1",
        "input_required",
        "Which build?",
    )
    # The asking call and the question's key come from an agui_chat server's own metadata
    # entry (a top-level toolCallId would make it an approval); the caller sees them as fields.
    assert (request.tool_call_id, request.key) == ("c9", "build")
    assert request.response_schema == question("q-1")["responseSchema"]
    assert request.metadata is None
    assert request.expires_at is not None and request.expires_at.year == 2099


async def test_a_questions_own_metadata_reaches_the_caller_without_the_servers_entry() -> None:
    asked = question("q-1")
    asked["metadata"] = {"form": "build-picker", "agui_chat": {"toolCallId": "c9", "key": "b"}}
    agent = Agent(paused(asked, calls=()))
    client, response = await pause(agent)
    await client.aclose()

    (request,) = response.input_requests
    assert isinstance(request, InterruptRequestContent)
    assert request.metadata == {"form": "build-picker"}
    assert (request.tool_call_id, request.key) == ("c9", "b")


async def test_a_question_from_another_server_keeps_its_metadata_whole() -> None:
    asked = question("q-1")
    asked["metadata"] = {"agui_chat": "not ours"}
    agent = Agent(paused(asked, calls=()))
    client, response = await pause(agent)
    await client.aclose()

    (request,) = response.input_requests
    assert isinstance(request, InterruptRequestContent)
    assert request.metadata == {"agui_chat": "not ours"}
    assert (request.tool_call_id, request.key) == (None, None)


async def test_an_approval_may_name_a_call_from_an_earlier_turn() -> None:
    earlier = ChatMessage(
        "assistant",
        [ToolApprovalRequestContent("old", _call("c7"))],
        message_id="a0",
    )
    agent = Agent(paused(approval("tok-2", "c7"), calls=()))
    async with agent.client() as client:
        response = await client.get_response([USER, earlier])

    (request,) = response.input_requests
    assert isinstance(request, ToolApprovalRequestContent)
    assert request.tool_call.call_id == "c7"


def _call(call_id: str) -> Any:
    from agui_chat import FunctionCallContent

    return FunctionCallContent(call_id, "delete_file", {"path": "/tmp/x"})


# -------------------------------------------------------------------- answers -> resume


async def answer(agent: Agent, make_answers: Any, **kwargs: Any) -> dict[str, Any]:
    """Pause, answer with ``make_answers(requests)``, and return the resume request body."""
    async with agent.client(**kwargs) as client:
        response = await client.get_response([USER])
        answers = make_answers(response.input_requests)
        history = [USER, *response.messages, ChatMessage("user", answers, message_id="u2")]
        await client.get_response(history)
    RunAgentInput.model_validate(agent.last)
    return agent.last


async def test_an_approval_resumes_the_same_thread_with_a_new_run() -> None:
    agent = Agent(paused(approval("tok-1", "c1")), resumed)

    body = await answer(agent, lambda rs: [rs[0].create_response(True)])

    first = agent.bodies[0]
    assert body["threadId"] == first["threadId"]
    assert body["runId"] != first["runId"]
    assert body["resume"] == [
        {"interruptId": "tok-1", "status": "resolved", "payload": {"approved": True}}
    ]


async def test_the_resume_re_sends_the_assistant_message_with_the_paused_call() -> None:
    agent = Agent(paused(approval("tok-1", "c1")), resumed)

    body = await answer(agent, lambda rs: [rs[0].create_response(True)])

    assert body["messages"] == [
        {"id": "u1", "role": "user", "content": "delete /tmp/x"},
        {
            "id": "a1",
            "role": "assistant",
            "content": "I will delete it.",
            "toolCalls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "delete_file", "arguments": '{"path":"/tmp/x"}'},
                }
            ],
        },
    ]


async def test_a_rejection_travels_with_its_reason() -> None:
    agent = Agent(paused(approval("tok-1", "c1")), resumed)

    body = await answer(agent, lambda rs: [rs[0].create_response(False, "too risky")])

    assert body["resume"] == [
        {
            "interruptId": "tok-1",
            "status": "resolved",
            "payload": {"approved": False, "reason": "too risky"},
        }
    ]


async def test_edited_arguments_travel_as_edited_args() -> None:
    agent = Agent(paused(approval("tok-1", "c1")), resumed)

    body = await answer(
        agent, lambda rs: [rs[0].create_response(True, edited_arguments={"path": "/tmp/y"})]
    )

    assert body["resume"][0]["payload"] == {"approved": True, "editedArgs": {"path": "/tmp/y"}}


async def test_every_pending_interrupt_is_covered_in_one_resume() -> None:
    agent = Agent(
        paused(
            approval("tok-1", "c1"), approval("tok-2", "c2"), question("q-1"), calls=("c1", "c2")
        ),
        resumed,
    )

    body = await answer(
        agent,
        lambda rs: [
            rs[0].create_response(True),
            rs[1].create_response(False),
            rs[2].create_response({"build": 42}),
        ],
    )

    assert body["resume"] == [
        {"interruptId": "tok-1", "status": "resolved", "payload": {"approved": True}},
        {"interruptId": "tok-2", "status": "resolved", "payload": {"approved": False}},
        {"interruptId": "q-1", "status": "resolved", "payload": {"build": 42}},
    ]


async def test_a_cancelled_question_is_sent_as_cancelled_without_payload() -> None:
    agent = Agent(paused(question("q-1"), calls=()), resumed)

    body = await answer(agent, lambda rs: [rs[0].cancel()])

    assert body["resume"] == [{"interruptId": "q-1", "status": "cancelled"}]


async def test_the_answers_may_come_in_any_order() -> None:
    agent = Agent(paused(question("q-1"), question("q-2"), calls=()), resumed)

    body = await answer(agent, lambda rs: [rs[1].cancel(), rs[0].cancel()])

    assert [e["interruptId"] for e in body["resume"]] == ["q-1", "q-2"]


async def test_a_resume_works_after_a_json_round_trip_of_the_history() -> None:
    agent = Agent(paused(approval("tok-1", "c1")), resumed)
    async with agent.client() as client:
        response = await client.get_response([USER])
        history = [USER, *response.messages]
        history.append(ChatMessage("user", [response.input_requests[0].create_response(True)]))
        stored = json.dumps([m.to_dict() for m in history])
        restored = [ChatMessage.from_dict(m) for m in json.loads(stored)]
        await client.get_response(restored)

    assert agent.last["threadId"] == agent.bodies[0]["threadId"]
    assert agent.last["resume"][0]["interruptId"] == "tok-1"


async def test_a_finished_resume_is_not_sent_again_on_the_next_turn() -> None:
    agent = Agent(paused(approval("tok-1", "c1")), resumed, lambda b: run(b, text("a3", "hi")))
    async with agent.client() as client:
        history = [USER]
        first = await client.get_response(history)
        history += [
            *first.messages,
            ChatMessage("user", [first.input_requests[0].create_response(True)]),
        ]
        second = await client.get_response(history)
        history += [*second.messages, ChatMessage("user", "thanks")]
        await client.get_response(history)

    assert "resume" in agent.bodies[1]
    assert "resume" not in agent.bodies[2]


async def test_a_resume_the_server_failed_can_be_sent_again() -> None:
    failed = lambda b: [  # noqa: E731
        {"type": "RUN_STARTED", "threadId": b["threadId"], "runId": b["runId"]},
        {"type": "RUN_ERROR", "message": "payload rejected", "code": "APPROVAL_RESUME_INVALID"},
    ]
    agent = Agent(paused(approval("tok-1", "c1")), failed, resumed)
    async with agent.client(raise_on_run_error=False) as client:
        history = [USER]
        first = await client.get_response(history)
        history += [
            *first.messages,
            ChatMessage("user", [first.input_requests[0].create_response(True)]),
        ]
        second = await client.get_response(history)
        history += second.messages
        await client.get_response(history)

    assert agent.bodies[2]["resume"] == agent.bodies[1]["resume"]


# -------------------------------------------------------------------- refused locally


async def refused(agent: Agent, make_answers: Any, error: type[Exception]) -> Exception:
    """Pause, answer badly, and check the answer is refused with no request sent."""
    async with agent.client() as client:
        response = await client.get_response([USER])
        answers = make_answers(response.input_requests)
        history = [USER, *response.messages, ChatMessage("user", answers)]
        with pytest.raises(error) as caught:
            await client.get_response(history)
    assert len(agent.requests) == 1, "nothing may be sent for a refused answer"
    return caught.value


async def test_a_partial_answer_is_refused_naming_what_is_missing() -> None:
    agent = Agent(paused(approval("tok-1", "c1"), approval("tok-2", "c2"), calls=("c1", "c2")))

    error = await refused(agent, lambda rs: [rs[0].create_response(True)], UnansweredRequestError)

    assert error.request_ids == ("tok-2",)  # type: ignore[attr-defined]
    assert "tok-2" in str(error)


async def test_a_new_message_while_a_request_is_pending_is_refused() -> None:
    agent = Agent(paused(question("q-1"), calls=()))
    async with agent.client() as client:
        response = await client.get_response([USER])
        with pytest.raises(UnansweredRequestError, match="q-1"):
            await client.get_response([USER, *response.messages, ChatMessage("user", "ignore it")])

    assert len(agent.requests) == 1


async def test_an_answer_to_an_unknown_request_is_refused() -> None:
    agent = Agent(paused(question("q-1"), calls=()))

    error = await refused(
        agent,
        lambda rs: [rs[0].cancel(), InterruptResponseContent("nope", status="cancelled")],
        UnknownResponseError,
    )

    assert error.request_ids == ("nope",)  # type: ignore[attr-defined]


async def test_an_answer_when_nothing_is_pending_is_refused() -> None:
    agent = Agent(lambda b: run(b, text("a1", "hello")))
    async with agent.client() as client:
        response = await client.get_response([USER])
        history = [USER, *response.messages, ChatMessage("user", [InterruptResponseContent("x")])]
        with pytest.raises(UnknownResponseError, match="'x'"):
            await client.get_response(history)

    assert len(agent.requests) == 1


async def test_answering_a_request_twice_is_refused() -> None:
    agent = Agent(paused(question("q-1"), calls=()))

    error = await refused(
        agent, lambda rs: [rs[0].cancel(), rs[0].cancel()], DuplicateResponseError
    )

    assert error.request_ids == ("q-1",)  # type: ignore[attr-defined]


async def test_approving_an_expired_request_is_refused() -> None:
    agent = Agent(paused(approval("tok-1", "c1", expiresAt=PAST)))

    await refused(
        agent,
        lambda rs: [ToolApprovalResponseContent("tok-1", True, rs[0].tool_call)],
        ExpiredRequestError,
    )


async def test_rejecting_an_expired_request_is_sent_as_cancelled() -> None:
    agent = Agent(paused(approval("tok-1", "c1", expiresAt=PAST)), resumed)

    body = await answer(agent, lambda rs: [rs[0].create_response(False, "late")])

    assert body["resume"] == [{"interruptId": "tok-1", "status": "cancelled"}]


async def test_answering_an_expired_question_is_refused() -> None:
    agent = Agent(paused(question("q-1", expiresAt=PAST), calls=()))

    await refused(
        agent, lambda rs: [InterruptResponseContent("q-1", {"build": 1})], ExpiredRequestError
    )


async def test_cancelling_an_expired_question_is_sent() -> None:
    agent = Agent(paused(question("q-1", expiresAt=PAST), calls=()), resumed)

    body = await answer(agent, lambda rs: [rs[0].cancel()])

    assert body["resume"] == [{"interruptId": "q-1", "status": "cancelled"}]


async def test_a_payload_that_fails_the_response_schema_is_refused() -> None:
    agent = Agent(paused(question("q-1"), calls=()))

    error = await refused(
        agent,
        lambda rs: [InterruptResponseContent("q-1", {"build": "latest"})],
        InvalidResponseError,
    )

    assert "build" in str(error)


async def test_edited_arguments_that_fail_the_tool_schema_are_refused() -> None:
    agent = Agent(paused(approval("tok-1", "c1")))

    await refused(
        agent,
        lambda rs: [rs[0].create_response(True, edited_arguments={"path": 3})],
        InvalidResponseError,
    )


async def test_edited_arguments_where_editing_was_not_offered_are_refused() -> None:
    agent = Agent(paused(approval("tok-1", "c1", edits=False)))

    await refused(
        agent,
        lambda rs: [
            ToolApprovalResponseContent(
                "tok-1", True, rs[0].tool_call, edited_arguments={"path": "/y"}
            )
        ],
        InvalidResponseError,
    )


async def test_a_reason_the_servers_schema_has_no_room_for_is_left_out() -> None:
    strict = {
        "id": "tok-1",
        "reason": "tool_call",
        "toolCallId": "c1",
        "responseSchema": {
            "type": "object",
            "properties": {"approved": {"type": "boolean"}},
            "required": ["approved"],
            "additionalProperties": False,
        },
    }
    agent = Agent(paused(strict), resumed)

    body = await answer(agent, lambda rs: [rs[0].create_response(False, "no")])

    assert body["resume"][0]["payload"] == {"approved": False}


async def test_an_explicit_thread_is_used_for_the_pause_and_the_resume() -> None:
    agent = Agent(paused(question("q-1"), calls=()), resumed)
    options = ChatOptions(conversation_id="t-explicit")
    async with agent.client() as client:
        response = await client.get_response([USER], options)
        history = [
            USER,
            *response.messages,
            ChatMessage("user", [response.input_requests[0].cancel()]),
        ]
        await client.get_response(history)

    assert [b["threadId"] for b in agent.bodies] == ["t-explicit", "t-explicit"]
