"""The tool loop's telemetry with the real SDK: an ``execute_tool`` span per call (ran,
failed, rejected, not found), the person's part as events on the current span, the approvals
counter and the time-to-decision histogram."""

from __future__ import annotations

import json
from typing import Any

import pytest
from otel_support import Recorded

from agui_chat import (
    ChatClientBuilder,
    ChatMessage,
    ChatOptions,
    FunctionCallContent,
    ai_function,
    approval_required,
    request_input,
)
from agui_chat.testing import ScriptedChatClient

RUNS: list[str] = []


@ai_function
def add(a: int, b: int) -> int:
    "Add two numbers."
    return a + b


@ai_function
def broken() -> str:
    "Always fails."
    raise RuntimeError("boom")


@approval_required
@ai_function
def deploy(target: str) -> str:
    "Deploy somewhere."
    RUNS.append(target)
    return f"deployed {target}"


@ai_function
def choose() -> str:
    "Ask which build."
    answer = request_input("Which build?")
    return "none" if answer.cancelled else f"build {answer.payload}"


def _model(calls: list[FunctionCallContent]) -> Any:
    def handler(messages: list[ChatMessage], options: ChatOptions | None) -> Any:
        if messages[-1].role == "tool":
            return "done"
        return list(calls)

    return handler


def _pipeline(otel: Recorded, calls: list[FunctionCallContent], **kw: Any) -> Any:
    return (
        ChatClientBuilder(ScriptedChatClient(_model(calls)))
        .use_function_invocation()
        .use_opentelemetry(**otel.providers, **kw)
        .build()
    )


TOOLS = ChatOptions(tools=[add, broken, deploy, choose])


@pytest.mark.parametrize("streaming", [False, True])
async def test_tool_spans_say_how_each_call_ended(otel: Recorded, streaming: bool) -> None:
    client = _pipeline(
        otel,
        [
            FunctionCallContent("c1", "add", {"a": 2, "b": 3}),
            FunctionCallContent("c2", "broken", {}),
            FunctionCallContent("c3", "nowhere", {}),
        ],
    )
    if streaming:
        [u async for u in client.get_streaming_response("go", TOOLS)]
    else:
        await client.get_response("go", TOOLS)
    outcomes = {}
    for span in otel.spans("execute_tool"):
        a = dict(span.attributes or {})
        assert a["gen_ai.operation.name"] == "execute_tool"
        assert a["gen_ai.tool.type"] == "function"
        assert span.name == f"execute_tool {a['gen_ai.tool.name']}"
        outcomes[a["gen_ai.tool.call.id"]] = (a["agui_chat.tool.outcome"], a.get("error.type"))
        assert "gen_ai.tool.call.arguments" not in a and "gen_ai.tool.call.result" not in a
    assert outcomes == {
        "c1": ("ran", None),
        "c2": ("failed", "RuntimeError"),
        "c3": ("not_found", "tool_not_found"),
    }
    assert len(otel.spans("chat")) == 2  # one per model call


async def test_tool_content_is_recorded_with_capture_content(otel: Recorded) -> None:
    client = _pipeline(
        otel, [FunctionCallContent("c1", "add", {"a": 2, "b": 3})], capture_content=True
    )
    await client.get_response("go", TOOLS)
    a = dict(otel.span("execute_tool add").attributes or {})
    assert json.loads(str(a["gen_ai.tool.call.arguments"])) == {"a": 2, "b": 3}
    assert json.loads(str(a["gen_ai.tool.call.result"])) == 5


def _events(otel: Recorded) -> list[tuple[str, dict[str, Any]]]:
    """The person's events, on each request's span (``orchestrate_tools``, under "turn N")."""
    turns = {s.context.span_id for s in otel.spans("turn")}
    requests = otel.spans("orchestrate_tools")
    assert requests and all(s.parent is not None and s.parent.span_id in turns for s in requests)
    assert all(not s.events for s in otel.spans("turn"))
    return [(e.name, dict(e.attributes or {})) for s in requests for e in s.events]


@pytest.mark.parametrize("capture", [False, True])
async def test_an_approval_round_trip_is_events_and_metrics(otel: Recorded, capture: bool) -> None:
    tracer = otel.tracer_provider.get_tracer("test")
    client = _pipeline(
        otel,
        [
            FunctionCallContent("d1", "deploy", {"target": "prod"}),
            FunctionCallContent("d2", "deploy", {"target": "staging"}),
        ],
        capture_content=capture,
    )
    with tracer.start_as_current_span("turn 1"):
        paused = await client.get_response("deploy", TOOLS)
    first, second = paused.input_requests
    history = [
        ChatMessage("user", "deploy"),
        *paused.messages,
        ChatMessage(
            "user",
            [
                first.create_response(False, "Not on a Friday"),
                second.create_response(True, edited_arguments={"target": "qa"}),
            ],
        ),
    ]
    with tracer.start_as_current_span("turn 2"):
        await client.get_response(history, TOOLS)
    assert RUNS[-1:] == ["qa"]
    events = _events(otel)
    names = [name for name, _ in events]
    assert names == [
        "agui_chat.approval.requested",
        "agui_chat.approval.requested",
        "agui_chat.approval.rejected",
        "agui_chat.approval.edited",
    ]
    requested, _, rejected, edited = (a for _, a in events)
    assert requested["agui_chat.request.id"] == first.request_id
    assert requested["gen_ai.tool.call.id"] == "d1"
    assert rejected["agui_chat.request.id"] == first.request_id
    assert rejected["agui_chat.approval.reason_given"] is True
    assert edited["agui_chat.approval.reason_given"] is False
    assert rejected["agui_chat.decision.seconds"] >= 0
    if capture:
        assert rejected["agui_chat.approval.reason"] == "Not on a Friday"
        assert json.loads(edited["agui_chat.approval.edited_arguments"]) == {"target": "qa"}
    else:
        assert "agui_chat.approval.reason" not in rejected
        assert "agui_chat.approval.edited_arguments" not in edited
        assert "gen_ai.tool.call.arguments" not in requested
    outcomes = {
        (s.attributes or {})["gen_ai.tool.call.id"]: (s.attributes or {})["agui_chat.tool.outcome"]
        for s in otel.spans("execute_tool")
    }
    assert outcomes == {"d1": "rejected", "d2": "ran"}
    counts = {
        p.attributes["agui_chat.decision"]: p.value for p in otel.points("agui_chat.approvals")
    }
    assert counts == {"rejected": 1, "edited": 1}
    decided = otel.points("agui_chat.decision.duration")
    assert sum(p.count for p in decided) == 2
    assert {p.attributes["agui_chat.request.kind"] for p in decided} == {"approval"}


@pytest.mark.parametrize("cancel", [False, True])
async def test_a_question_and_its_answer_are_events(otel: Recorded, cancel: bool) -> None:
    tracer = otel.tracer_provider.get_tracer("test")
    client = _pipeline(otel, [FunctionCallContent("q1", "choose", {})])
    with tracer.start_as_current_span("turn 1"):
        paused = await client.get_response("pick", TOOLS)
    [question] = paused.input_requests
    answer = question.cancel() if cancel else question.create_response(7)  # type: ignore[union-attr]
    history = [ChatMessage("user", "pick"), *paused.messages, ChatMessage("user", [answer])]
    with tracer.start_as_current_span("turn 2"):
        done = await client.get_response(history, TOOLS)
    assert done.text == "done"
    names = [name for name, _ in _events(otel)]
    assert names == [
        "agui_chat.input.requested",
        "agui_chat.input.cancelled" if cancel else "agui_chat.input.answered",
    ]
    assert all(a["gen_ai.tool.call.id"] == "q1" for _, a in _events(otel))
    assert all("agui_chat.input.payload" not in a for _, a in _events(otel))
    [point] = otel.points("agui_chat.decision.duration")
    assert point.attributes == {
        "agui_chat.request.kind": "input",
        "agui_chat.decision": "cancelled" if cancel else "answered",
    }
    outcomes = [(s.attributes or {})["agui_chat.tool.outcome"] for s in otel.spans("execute_tool")]
    assert outcomes == ["input_required", "ran"]


async def test_the_tool_loop_traces_through_the_global_api_on_its_own(
    global_otel: Recorded,
) -> None:
    """Without ``use_opentelemetry()`` the loop opens its ``execute_tool`` spans and records
    the person's events and metrics with the global providers (content not captured); tracing
    changes nothing of what runs: the gated call runs once, only after the approval, and a
    replay of the answered history runs it no more."""
    client = (
        ChatClientBuilder(
            ScriptedChatClient(_model([FunctionCallContent("g1", "deploy", {"target": "eu"})]))
        )
        .use_function_invocation()
        .build()
    )
    tracer = global_otel.tracer_provider.get_tracer("test")
    before = len(RUNS)
    with tracer.start_as_current_span("turn 1"):
        paused = await client.get_response("deploy", TOOLS)
    assert RUNS[before:] == []
    [request] = paused.input_requests
    assert request.additional_properties is not None  # stamped: something records
    history = [
        ChatMessage("user", "deploy"),
        *paused.messages,
        ChatMessage("user", [request.create_response(True)]),  # type: ignore[attr-defined]
    ]
    with tracer.start_as_current_span("turn 2"):
        done = await client.get_response(history, TOOLS)
    assert done.text == "done"
    with tracer.start_as_current_span("turn 3"):
        await client.get_response(history, TOOLS)
    assert RUNS[before:] == ["eu"]
    events = _events(global_otel)
    assert [name for name, _ in events] == [
        "agui_chat.approval.requested",
        "agui_chat.approval.approved",
    ]
    assert all(a["gen_ai.tool.call.id"] == "g1" for _, a in events)
    assert "gen_ai.tool.call.arguments" not in events[0][1]
    [span] = global_otel.spans("execute_tool")
    attributes = dict(span.attributes or {})
    assert (span.name, attributes["agui_chat.tool.outcome"]) == ("execute_tool deploy", "ran")
    assert "gen_ai.tool.call.result" not in attributes
    assert global_otel.spans("chat") == []  # no chat client: no model-call spans
    [point] = global_otel.points("agui_chat.approvals")
    assert (point.attributes, point.value) == ({"agui_chat.decision": "approved"}, 1)


async def test_without_an_sdk_a_pause_is_not_stamped() -> None:
    """The API's no-op providers (no SDK configured): the loop records nothing and leaves the
    request as it was made (an AG-UI server then signs no tracing claims into its id)."""
    client = (
        ChatClientBuilder(
            ScriptedChatClient(_model([FunctionCallContent("n1", "deploy", {"target": "eu"})]))
        )
        .use_function_invocation()
        .use_opentelemetry(capture_content=True)
        .build()
    )
    paused = await client.get_response("deploy", TOOLS)
    [request] = paused.input_requests
    assert request.additional_properties is None


async def test_content_json_cannot_hold_never_fails_the_call(otel: Recorded) -> None:
    """With ``capture_content``, a tool whose result holds itself: the tool runs once, the
    run ends with the model's answer, and the span records the result as text."""
    ran: list[int] = []

    @ai_function
    def loop() -> dict[str, Any]:
        "Return a value that holds itself."
        ran.append(1)
        value: dict[str, Any] = {"ok": True}
        value["self"] = value
        return value

    client = _pipeline(otel, [FunctionCallContent("r1", "loop", {})], capture_content=True)
    done = await client.get_response("go", ChatOptions(tools=[loop]))
    assert done.text == "done"
    assert ran == [1]
    a = dict(otel.span("execute_tool loop").attributes or {})
    assert a["agui_chat.tool.outcome"] == "ran"
    assert a["gen_ai.tool.call.result"] == "{'ok': True, 'self': {...}}"


@ai_function
def two_questions() -> str:
    "Ask which build, then where."
    build = request_input("Which build?", key="build")
    where = request_input("Where to?", key="where")
    return f"build {build.payload} to {where.payload}"


async def test_an_answer_carried_along_is_not_a_decision_again(otel: Recorded) -> None:
    """A tool asks a second question once the first is answered: on the resume answering the
    second, the first answer goes to the tool again but is not a person's decision again."""
    tracer = otel.tracer_provider.get_tracer("test")
    client = _pipeline(otel, [FunctionCallContent("q1", "two_questions", {})])
    tools = ChatOptions(tools=[two_questions])
    history: list[ChatMessage] = [ChatMessage("user", "ship")]
    for turn, payload in enumerate((7, "prod"), start=1):
        with tracer.start_as_current_span(f"turn {turn}"):
            paused = await client.get_response(history, tools)
        [question] = paused.input_requests
        history += [*paused.messages, ChatMessage("user", [question.create_response(payload)])]
    with tracer.start_as_current_span("turn 3"):
        done = await client.get_response(history, tools)
    assert done.text == "done"
    decided = [name for name, _ in _events(otel) if name == "agui_chat.input.answered"]
    assert len(decided) == 2  # one per answer the person gave
    [point] = otel.points("agui_chat.decision.duration")
    assert point.count == 2
