"""Approvals and questions across runs: the pause, and the resume that answers it."""

from __future__ import annotations

from typing import Any

from server_support import (
    Tools,
    answer,
    approve,
    cancel,
    interrupts,
    of_type,
    outcome,
    refused_before_the_run,
    reject,
    run_input,
    scripted,
    text_of,
    types,
    user,
)

from agui_chat import (
    ChatMessage,
    ChatOptions,
    FunctionCallContent,
    FunctionResultContent,
    ai_function,
    request_input,
)
from agui_server import agui_server
from meai_texts import REJECTED


def results_seen(messages: list[ChatMessage]) -> dict[str, Any]:
    """The tool results a model received, by call id."""
    return {
        c.call_id: c.result
        for m in messages
        for c in m.contents
        if isinstance(c, FunctionResultContent)
    }


def echo_result(messages: list[ChatMessage], options: ChatOptions | None) -> str:
    """A model turn that repeats the last tool result it got."""
    last = messages[-1]
    assert last.role == "tool", last
    return "Tool said: " + "; ".join(str(c.result) for c in last.contents)  # type: ignore[attr-defined]


def delete_call(call_id: str = "c1", path: str = "a.txt") -> list[FunctionCallContent]:
    return [FunctionCallContent(call_id, "delete_file", {"path": path})]


# -- approvals ------------------------------------------------------------------------------------


async def test_an_approval_required_call_pauses_the_run_with_an_approval_interrupt(
    tools: Tools,
) -> None:
    agent = agui_server(scripted(delete_call()), tools=[tools.delete_file()])
    events, _, (interrupt,) = await agent.pause(user("delete a.txt"))
    assert types(events) == [
        "RUN_STARTED",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "RUN_FINISHED",
    ]
    assert interrupt["reason"] == "tool_call"
    assert interrupt["toolCallId"] == "c1"
    assert interrupt["message"] == "Approve delete_file?"
    assert interrupt["responseSchema"] == {
        "type": "object",
        "properties": {
            "approved": {"type": "boolean"},
            "reason": {"type": "string"},
            "editedArgs": tools.delete_file().parameters,
        },
        "required": ["approved"],
    }
    assert interrupt["expiresAt"].endswith("Z")
    assert tools.count("delete_file") == 0


async def test_edited_args_are_not_in_the_schema_when_editing_is_not_offered(tools: Tools) -> None:
    agent = agui_server(scripted(delete_call()), tools=[tools.delete_file(allow_edits=False)])
    _, _, (interrupt,) = await agent.pause(user("delete a.txt"))
    assert set(interrupt["responseSchema"]["properties"]) == {"approved", "reason"}


async def test_no_expiry_is_set_without_a_ttl(tools: Tools) -> None:
    agent = agui_server(scripted(delete_call()), tools=[tools.delete_file()], approval_ttl=None)
    _, _, (interrupt,) = await agent.pause(user("delete a.txt"))
    assert "expiresAt" not in interrupt


async def test_an_approved_call_runs_once_and_only_its_result_is_emitted(tools: Tools) -> None:
    model = scripted(delete_call(), echo_result)
    agent = agui_server(model, tools=[tools.delete_file()])
    _, history, (interrupt,) = await agent.pause(user("delete a.txt"))
    events = await agent.resume(history, approve(interrupt))
    assert types(events)[:2] == ["RUN_STARTED", "TOOL_CALL_RESULT"]
    assert of_type(events, "TOOL_CALL_START") == []
    assert events[1]["toolCallId"] == "c1" and events[1]["content"] == "deleted a.txt"
    assert text_of(events) == "Tool said: deleted a.txt"
    assert outcome(events) == {"type": "success"}
    assert tools.runs["delete_file"] == [{"path": "a.txt"}]
    received, _ = model.calls[-1]
    assert [m.role.value for m in received] == ["user", "assistant", "tool"]


async def test_an_agent_framework_style_resume_without_the_call_in_history_works(
    tools: Tools,
) -> None:
    model = scripted(delete_call(), echo_result)
    agent = agui_server(model, tools=[tools.delete_file()])
    _, _, (interrupt,) = await agent.pause(user("delete a.txt"))
    # Only the user message and the resume entry (interruptId, status, payload).
    resume = [{"interruptId": interrupt["id"], "status": "resolved", "payload": {"approved": True}}]
    events = await agent.post(run_input(user("delete a.txt"), run="r2", resume=resume))
    assert events[1]["type"] == "TOOL_CALL_RESULT" and events[1]["content"] == "deleted a.txt"
    assert tools.count("delete_file") == 1
    received, _ = model.calls[-1]
    call = received[1].contents[0]
    assert isinstance(call, FunctionCallContent) and call.arguments == {"path": "a.txt"}
    assert results_seen(received) == {"c1": "deleted a.txt"}


async def test_a_rejection_runs_nothing_and_its_reason_reaches_the_model(tools: Tools) -> None:
    model = scripted(delete_call(), echo_result)
    agent = agui_server(model, tools=[tools.delete_file()])
    _, history, (interrupt,) = await agent.pause(user("delete a.txt"))
    events = await agent.resume(history, reject(interrupt, "keep it"))
    assert tools.count("delete_file") == 0
    received, _ = model.calls[-1]
    assert results_seen(received) == {"c1": "Tool call invocation rejected. keep it"}
    assert (
        of_type(events, "TOOL_CALL_RESULT")[0]["content"]
        == "Tool call invocation rejected. keep it"
    )


async def test_a_cancelled_approval_is_a_rejection(tools: Tools) -> None:
    model = scripted(delete_call(), echo_result)
    agent = agui_server(model, tools=[tools.delete_file()])
    _, history, (interrupt,) = await agent.pause(user("delete a.txt"))
    await agent.resume(history, cancel(interrupt))
    assert tools.count("delete_file") == 0
    # As ToolApprovalRequestContent.cancel() in process: a rejection with reason "cancelled".
    result = results_seen(model.calls[-1][0])["c1"]
    assert result.startswith(REJECTED) and "ancelled" in result


async def test_an_approval_with_edited_args_runs_with_the_edits(tools: Tools) -> None:
    model = scripted(delete_call(), echo_result)
    agent = agui_server(model, tools=[tools.delete_file()])
    _, history, (interrupt,) = await agent.pause(user("delete a.txt"))
    resume = [approve(interrupt, editedArgs={"path": "b.txt"})]
    events = await agent.resume(history, *resume)
    assert tools.runs["delete_file"] == [{"path": "b.txt"}]
    assert events[1]["content"] == "deleted b.txt"
    received, _ = model.calls[-1]
    call = received[1].contents[0]
    assert isinstance(call, FunctionCallContent) and call.arguments == {"path": "b.txt"}


async def test_a_mixed_batch_runs_the_free_call_at_once_and_the_approved_one_on_resume(
    tools: Tools,
) -> None:
    batch = [FunctionCallContent("c1", "lookup", {"city": "Rome"}), *delete_call("c2")]
    model = scripted(batch, echo_result)
    agent = agui_server(model, tools=[tools.lookup(), tools.delete_file()])
    first, history, (interrupt,) = await agent.pause(user("do both"))
    assert interrupt["toolCallId"] == "c2"
    assert [e["toolCallId"] for e in of_type(first, "TOOL_CALL_RESULT")] == ["c1"]
    assert (tools.count("lookup"), tools.count("delete_file")) == (1, 0)
    events = await agent.resume(history, approve(interrupt))
    assert (tools.count("lookup"), tools.count("delete_file")) == (1, 1)
    assert [e["toolCallId"] for e in of_type(events, "TOOL_CALL_RESULT")] == ["c2"]
    assert results_seen(model.calls[-1][0]) == {"c1": "sunny in Rome", "c2": "deleted a.txt"}


async def test_two_approvals_answered_together_each_run_once(tools: Tools) -> None:
    model = scripted(delete_call("c1", "a.txt") + delete_call("c2", "b.txt"), echo_result)
    agent = agui_server(model, tools=[tools.delete_file()])
    _, history, (one, two) = await agent.pause(user("delete both"))
    assert {one["toolCallId"], two["toolCallId"]} == {"c1", "c2"}
    events = await agent.resume(history, approve(one), reject(two, "not b"))
    assert tools.runs["delete_file"] == [{"path": "a.txt"}]
    assert results_seen(model.calls[-1][0]) == {
        "c1": "deleted a.txt",
        "c2": "Tool call invocation rejected. not b",
    }
    assert outcome(events) == {"type": "success"}


async def test_answering_only_one_of_two_approvals_runs_nothing(tools: Tools) -> None:
    model = scripted(delete_call("c1", "a.txt") + delete_call("c2", "b.txt"))
    agent = agui_server(model, tools=[tools.delete_file()])
    _, history, (one, _) = await agent.pause(user("delete both"))
    events = await agent.resume(history, approve(one))
    refused_before_the_run(events, "RESUME_INCOMPLETE")
    assert tools.count("delete_file") == 0


async def test_a_result_the_client_wrote_beside_a_fresh_approval_is_not_the_tools_result(
    tools: Tools,
) -> None:
    # The client's "result" for a call its own resume answers is dropped (rule
    # copilotkit-resume-echo): the approved call runs once and the model gets its real result.
    model = scripted(delete_call(), echo_result)
    agent = agui_server(model, tools=[tools.delete_file()])
    _, history, (interrupt,) = await agent.pause(user("delete a.txt"))
    result = {"id": "t9", "role": "tool", "toolCallId": "c1", "content": "deleted a.txt"}
    events = await agent.resume([*history, result], approve(interrupt))
    assert tools.count("delete_file") == 1
    assert [e["content"] for e in of_type(events, "TOOL_CALL_RESULT")] == ["deleted a.txt"]
    received, _ = model.calls[1]
    assert [m.message_id for m in received if m.message_id == "t9"] == []


# -- questions ------------------------------------------------------------------------------------


def build_tool(tools: Tools) -> Any:
    @ai_function
    def deploy(service: str) -> str:
        """Deploy a service."""
        choice = request_input(
            "Which build?",
            response_schema={
                "type": "object",
                "properties": {"build": {"type": "integer"}},
                "required": ["build"],
            },
            key="build",
        )
        tools.record("deploy", service=service, answer=choice.payload, cancelled=choice.cancelled)
        if choice.cancelled:
            return "deploy cancelled"
        return f"deployed {service} build {choice.payload['build']}"

    return deploy


async def test_a_question_pauses_the_run_with_an_interrupt_without_tool_call_id(
    tools: Tools,
) -> None:
    model = scripted([FunctionCallContent("c1", "deploy", {"service": "api"})])
    agent = agui_server(model, tools=[build_tool(tools)])
    events, _, (question,) = await agent.pause(user("deploy api"))
    assert "toolCallId" not in question
    assert question["reason"] == "input_required"
    assert question["message"] == "Which build?"
    assert question["responseSchema"]["required"] == ["build"]
    assert question["metadata"] == {"agui_chat": {"toolCallId": "c1", "key": "build"}}
    assert types(events)[1:4] == ["TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END"]
    assert tools.count("deploy") == 0


async def test_an_answered_question_runs_the_tool_with_the_answer(tools: Tools) -> None:
    model = scripted([FunctionCallContent("c1", "deploy", {"service": "api"})], echo_result)
    agent = agui_server(model, tools=[build_tool(tools)])
    _, history, (question,) = await agent.pause(user("deploy api"))
    events = await agent.resume(history, answer(question, {"build": 42}))
    assert tools.runs["deploy"] == [{"service": "api", "answer": {"build": 42}, "cancelled": False}]
    assert (
        events[1]["type"] == "TOOL_CALL_RESULT" and events[1]["content"] == "deployed api build 42"
    )
    assert outcome(events) == {"type": "success"}


async def test_a_cancelled_question_takes_the_tools_other_branch_and_the_run_succeeds(
    tools: Tools,
) -> None:
    model = scripted([FunctionCallContent("c1", "deploy", {"service": "api"})], echo_result)
    agent = agui_server(model, tools=[build_tool(tools)])
    _, history, (question,) = await agent.pause(user("deploy api"))
    events = await agent.resume(history, cancel(question))
    assert tools.runs["deploy"] == [{"service": "api", "answer": None, "cancelled": True}]
    assert text_of(events) == "Tool said: deploy cancelled"
    assert outcome(events) == {"type": "success"}


async def test_an_answer_that_fails_the_schema_runs_nothing(tools: Tools) -> None:
    model = scripted([FunctionCallContent("c1", "deploy", {"service": "api"})])
    agent = agui_server(model, tools=[build_tool(tools)])
    _, history, (question,) = await agent.pause(user("deploy api"))
    events = await agent.resume(history, answer(question, {"build": "latest"}))
    error = refused_before_the_run(events, "RESUME_INVALID_PAYLOAD")
    assert "build" in error["message"]
    assert tools.count("deploy") == 0


async def test_a_tool_asking_twice_gets_both_answers_from_a_stateless_client(tools: Tools) -> None:
    @ai_function
    def transfer(amount: int) -> str:
        """Move money."""
        account = request_input("Which account?", key="account")
        confirm = request_input(f"Send {amount} to {account.payload}?", key="confirm")
        tools.record("transfer", account=account.payload, confirm=confirm.payload)
        return f"sent {amount} to {account.payload}" if confirm.payload == "yes" else "not sent"

    model = scripted([FunctionCallContent("c1", "transfer", {"amount": 5})], echo_result)
    agent = agui_server(model, tools=[transfer])
    _, history, (ask_account,) = await agent.pause(user("send 5"))
    second = await agent.resume(history, answer(ask_account, "savings"))
    (ask_confirm,) = interrupts(second)
    assert ask_confirm["message"] == "Send 5 to savings?"
    assert ask_confirm["metadata"]["agui_chat"] == {"toolCallId": "c1", "key": "confirm"}
    # The client sends the same history again: no record of the first answer on its side.
    third = await agent.resume(history, answer(ask_confirm, "yes"), run="r3")
    assert tools.runs["transfer"] == [{"account": "savings", "confirm": "yes"}]
    assert third[1]["type"] == "TOOL_CALL_RESULT" and third[1]["content"] == "sent 5 to savings"


async def test_a_question_from_an_approved_call_is_bound_to_the_edited_arguments(
    tools: Tools,
) -> None:
    from agui_chat import approval_required

    @approval_required
    @ai_function
    def wipe(disk: str) -> str:
        """Wipe a disk."""
        sure = request_input(f"Really wipe {disk}?", key="sure")
        tools.record("wipe", disk=disk, sure=sure.payload)
        return f"wiped {disk}"

    model = scripted([FunctionCallContent("c1", "wipe", {"disk": "sda"})], echo_result)
    agent = agui_server(model, tools=[wipe])
    _, history, (approval,) = await agent.pause(user("wipe sda"))
    second = await agent.resume(history, approve(approval, editedArgs={"disk": "sdb"}))
    (question,) = interrupts(second)
    assert question["message"] == "Really wipe sdb?"
    third = await agent.resume(history, answer(question, True), run="r3")
    assert tools.runs["wipe"] == [{"disk": "sdb", "sure": True}]
    assert third[1]["content"] == "wiped sdb"
