"""One trace per request (issue 28), with the real SDK's in-memory exporter: the tool loop's
``orchestrate_tools`` span holds the request's model calls, tool executions and the person's
events; a resumed request links to the paused one; none is opened under an ``invoke_agent``
span; the other builder order warns at ``build()`` and still keeps one trace; without
``capture_content`` no reason, edited argument or answer reaches a span."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF
from opentelemetry.trace import SpanKind, StatusCode
from otel_support import Recorded

from agui_chat import (
    ChatClientBuilder,
    ChatMessage,
    ChatOptions,
    ChatResponse,
    FunctionCallContent,
    InterruptRequestContent,
    ServiceUnavailableError,
    UsageDetails,
    ai_function,
    approval_required,
    request_input,
)
from agui_chat.testing import ScriptedChatClient

DOC = Path(__file__).resolve().parents[2] / "docs" / "observability.md"
RUNS: list[dict[str, Any]] = []


@approval_required
@ai_function
def deploy(target: str) -> str:
    "Deploy somewhere."
    RUNS.append({"target": target})
    return f"deployed {target}"


@ai_function
def choose() -> str:
    "Ask which build."
    answer = request_input("Which build?")
    return f"build {answer.payload}"


TOOLS = ChatOptions(tools=[deploy, choose])


def _model(*calls: FunctionCallContent) -> ScriptedChatClient:
    def handler(messages: list[ChatMessage], options: ChatOptions | None) -> Any:
        usage = UsageDetails(input_token_count=10, output_token_count=2)
        if messages[-1].role == "tool" or not calls:
            return ChatResponse(ChatMessage("assistant", "done"), usage=usage)
        return ChatResponse(ChatMessage("assistant", list(calls)), usage=usage)

    return ScriptedChatClient(handler)


def _documented(otel: Recorded, *calls: FunctionCallContent, **kw: Any) -> Any:
    return (
        ChatClientBuilder(_model(*calls))
        .use_function_invocation()
        .use_opentelemetry(**otel.providers, **kw)
        .build()
    )


async def _ask(client: Any, history: Any, streaming: bool) -> ChatResponse:
    if not streaming:
        return await client.get_response(history, TOOLS)  # type: ignore[no-any-return]
    return ChatResponse.from_updates(
        [u async for u in client.get_streaming_response(history, TOOLS)]
    )


def tree(spans: list[ReadableSpan]) -> list[str]:
    """The spans as indented lines (children under parents, in start order), each with its
    events and links: the shape docs/observability.md shows."""
    by_id = {s.context.span_id: s for s in spans}
    children: dict[int | None, list[ReadableSpan]] = {}
    for span in spans:
        parent = span.parent.span_id if span.parent is not None else None
        children.setdefault(parent if parent in by_id else None, []).append(span)
    lines: list[str] = []

    def walk(span: ReadableSpan, depth: int) -> None:
        pad = "  " * depth
        a = span.attributes or {}
        shown = " ".join(
            f"{k}={a[k]}"
            for k in ("gen_ai.tool.call.id", "agui_chat.tool.outcome", "gen_ai.usage.input_tokens")
            if k in a
        )
        kind = span.kind.name if span.kind is not None else "?"
        lines.append(f"{pad}{span.name} [{kind}]  {shown}".rstrip())
        for event in span.events:
            call = (event.attributes or {}).get("gen_ai.tool.call.id")
            lines.append(f"{pad}  · {event.name} gen_ai.tool.call.id={call}")
        for link in span.links:
            target = by_id.get(link.context.span_id)
            lines.append(f"{pad}  ↪ links to {target.name if target else '?'} (the paused request)")
        for child in sorted(children.get(span.context.span_id, []), key=lambda s: s.start_time):
            walk(child, depth + 1)

    for root in sorted(children.get(None, []), key=lambda s: s.start_time or 0):
        walk(root, 0)
    return lines


def _one_trace(spans: list[ReadableSpan]) -> None:
    assert len({s.context.trace_id for s in spans}) == 1, [s.name for s in spans]


@pytest.mark.parametrize("streaming", [False, True])
async def test_an_in_process_approval_round_trip_is_one_trace_per_request(
    otel: Recorded, streaming: bool
) -> None:
    """Each request is one trace under its ``orchestrate_tools`` span: the model calls, the
    tool execution and the person's events; the resumed request links to the paused one;
    the span carries the request's token usage. The tree is the one the docs show."""
    client = _documented(otel, FunctionCallContent("call_1", "deploy", {"target": "prod"}))
    before = len(RUNS)
    history = [ChatMessage("user", "deploy to prod")]
    paused = await _ask(client, history, streaming)
    first = otel.spans()
    _one_trace(first)
    [request] = paused.input_requests
    history += [*paused.messages, ChatMessage("user", [request.create_response(True)])]
    otel.exporter.clear()
    done = await _ask(client, history, streaming)
    assert done.text == "done"
    assert RUNS[before:] == [{"target": "prod"}]
    second = otel.spans()
    _one_trace(second)
    [paused_span] = [s for s in first if s.name == "orchestrate_tools"]
    [resumed_span] = [s for s in second if s.name == "orchestrate_tools"]
    assert paused_span.kind is SpanKind.INTERNAL and paused_span.parent is None
    [link] = resumed_span.links
    assert link.context.span_id == paused_span.context.span_id
    assert dict(link.attributes or {}) == {"agui.link": "paused_run"}
    assert (paused_span.attributes or {})["gen_ai.usage.input_tokens"] == 10
    assert (resumed_span.attributes or {})["gen_ai.usage.output_tokens"] == 2
    lines = tree(first + second)
    assert lines == [
        "orchestrate_tools [INTERNAL]  gen_ai.usage.input_tokens=10",
        "  · agui_chat.approval.requested gen_ai.tool.call.id=call_1",
        "  chat scripted [CLIENT]  gen_ai.usage.input_tokens=10",
        "orchestrate_tools [INTERNAL]  gen_ai.usage.input_tokens=10",
        "  · agui_chat.approval.approved gen_ai.tool.call.id=call_1",
        "  ↪ links to orchestrate_tools (the paused request)",
        "  execute_tool deploy [INTERNAL]  gen_ai.tool.call.id=call_1 agui_chat.tool.outcome=ran",
        "  chat scripted [CLIENT]  gen_ai.usage.input_tokens=10",
    ]
    assert "\n".join(lines) in DOC.read_text()


async def test_under_the_callers_span_the_request_span_is_its_child(otel: Recorded) -> None:
    """Inside the caller's own span, the request's span is its child and the person's events
    are on the request's span, not the caller's."""
    client = _documented(otel, FunctionCallContent("q1", "choose", {}))
    tracer = otel.tracer_provider.get_tracer("test")
    with tracer.start_as_current_span("my turn") as turn:
        paused = await client.get_response("pick", TOOLS)
    [request] = otel.spans("orchestrate_tools")
    assert request.parent is not None
    assert request.parent.span_id == turn.get_span_context().span_id
    assert [e.name for e in request.events] == ["agui_chat.input.requested"]
    assert not otel.span("my turn").events
    _one_trace(otel.spans())
    [question] = paused.input_requests
    otel.exporter.clear()
    history = [ChatMessage("user", "pick"), *paused.messages]
    history.append(ChatMessage("user", [question.create_response(42)]))  # type: ignore[union-attr]
    assert (await client.get_response(history, TOOLS)).text == "done"
    [resumed] = otel.spans("orchestrate_tools")
    assert [e.name for e in resumed.events] == ["agui_chat.input.answered"]
    assert resumed.links[0].context.span_id == request.context.span_id


@pytest.mark.parametrize("name", ["invoke_agent", "invoke_agent Deployer"])
async def test_no_request_span_under_a_current_invoke_agent_span(otel: Recorded, name: str) -> None:
    """As MEAI: an ``invoke_agent`` span already stands for the request."""
    client = _documented(otel, FunctionCallContent("call_1", "deploy", {"target": "eu"}))
    tracer = otel.tracer_provider.get_tracer("test")
    with tracer.start_as_current_span(name):
        await client.get_response("deploy", TOOLS)
    assert otel.spans("orchestrate_tools") == []
    agent = otel.span(name)
    [chat] = otel.spans("chat")
    assert chat.parent is not None and chat.parent.span_id == agent.context.span_id
    assert [e.name for e in agent.events] == ["agui_chat.approval.requested"]


@pytest.mark.parametrize("streaming", [False, True])
async def test_the_other_builder_order_warns_once_and_keeps_one_trace(
    global_otel: Recorded, streaming: bool
) -> None:
    """``.use_opentelemetry().use_function_invocation()``: ``build()`` warns with one line
    naming the order to use; the request is still one trace (one chat span around the loop,
    the loop's span and its tool execution inside it)."""
    builder = (
        ChatClientBuilder(_model(FunctionCallContent("c1", "choose", {})))
        .use_opentelemetry(**global_otel.providers)
        .use_function_invocation()
    )
    with pytest.warns(UserWarning) as caught:
        client = builder.build()
    [warning] = caught
    text = str(warning.message)
    assert "\n" not in text and ".use_function_invocation().use_opentelemetry()" in text
    assert warning.filename == __file__
    await _ask(client, "pick", streaming)
    spans = global_otel.spans()
    _one_trace(spans)
    [chat] = global_otel.spans("chat")
    assert chat.parent is None
    request = global_otel.span("orchestrate_tools")
    assert request.parent is not None and request.parent.span_id == chat.context.span_id
    tool = global_otel.span("execute_tool choose")
    assert tool.parent is not None and tool.parent.span_id == request.context.span_id
    assert [e.name for e in request.events] == ["agui_chat.input.requested"]


def test_the_documented_order_and_a_lone_chat_client_build_without_a_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ChatClientBuilder(_model()).use_function_invocation().use_opentelemetry().build()
        ChatClientBuilder(_model()).use_opentelemetry().use_logging().build()
        ChatClientBuilder(_model()).use_function_invocation().use_logging().build()


@pytest.mark.parametrize("streaming", [False, True])
async def test_a_failed_request_ends_its_span_as_an_error(otel: Recorded, streaming: bool) -> None:
    def down(messages: list[ChatMessage], options: ChatOptions | None) -> str:
        raise ServiceUnavailableError("model down", status_code=503)

    client = (
        ChatClientBuilder(ScriptedChatClient(down))
        .use_function_invocation()
        .use_opentelemetry(**otel.providers)
        .build()
    )
    with pytest.raises(ServiceUnavailableError):
        await _ask(client, "hi", streaming)
    request = otel.span("orchestrate_tools")
    assert (request.attributes or {})["error.type"] == "ServiceUnavailableError"
    assert request.status.status_code is StatusCode.ERROR
    [chat] = otel.spans("chat")
    assert chat.parent is not None and chat.parent.span_id == request.context.span_id


async def test_a_stream_stopped_early_still_ends_the_request_span(otel: Recorded) -> None:
    client = _documented(otel)
    stream = client.get_streaming_response("hi", TOOLS)
    await anext(stream)
    await stream.aclose()
    request = otel.span("orchestrate_tools")
    assert request.status.status_code is StatusCode.UNSET
    [chat] = otel.spans("chat")
    assert (chat.attributes or {})["agui_chat.stream.end"] == "stopped"


async def test_sampled_out_requests_record_nothing_and_still_run_once() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider(sampler=ALWAYS_OFF)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    client = (
        ChatClientBuilder(_model(FunctionCallContent("s1", "deploy", {"target": "sampled"})))
        .use_function_invocation()
        .use_opentelemetry(tracer_provider=provider)
        .build()
    )
    paused = await client.get_response("deploy", TOOLS)
    [request] = paused.input_requests
    history = [ChatMessage("user", "deploy"), *paused.messages]
    history.append(ChatMessage("user", [request.create_response(True)]))  # type: ignore[attr-defined]
    await client.get_response(history, TOOLS)
    assert [r for r in RUNS if r == {"target": "sampled"}] == [{"target": "sampled"}]
    assert exporter.get_finished_spans() == ()
    provider.shutdown()


def test_without_an_sdk_the_stream_is_the_loops_own_generator() -> None:
    """No SDK (the API's no-op providers): the loop opens no span and adds no step per
    streamed update: the caller reads the loop's own generator."""
    client = ChatClientBuilder(_model()).use_function_invocation().use_opentelemetry().build()
    stream = client.get_streaming_response("hi", TOOLS)
    assert stream.ag_code.co_name == "_steps"  # type: ignore[attr-defined]


# -- hostile: content stays out of spans unless capture_content=True --------------------------

SECRETS = ("SECRET-REASON-7f3", "SECRET-EDIT-91c", "SECRET-ANSWER-4d2")


def _everything(spans: list[ReadableSpan]) -> str:
    return "\n".join(s.to_json() for s in spans)


@pytest.mark.parametrize("streaming", [False, True])
@pytest.mark.parametrize("capture", [False, True])
async def test_reasons_edits_and_answers_reach_spans_only_with_capture_content(
    otel: Recorded, streaming: bool, capture: bool
) -> None:
    """A rejection with a reason, an approval with edited arguments and an answered question
    in one in-process round trip: with ``capture_content=False`` none of the person's words
    is in any span's attributes, events, links or status; with it, each is (so the scan
    sees them). What ran is what was approved."""
    client = _documented(
        otel,
        FunctionCallContent("r1", "deploy", {"target": "rejected-target"}),
        FunctionCallContent("e1", "deploy", {"target": "as-asked"}),
        FunctionCallContent("q1", "choose", {}),
        capture_content=capture,
    )
    before = len(RUNS)
    history: list[ChatMessage] = [ChatMessage("user", "go")]
    response = await _ask(client, history, streaming)
    asked = 0
    while response.input_requests:
        answers: list[Any] = []
        for request in response.input_requests:
            if isinstance(request, InterruptRequestContent):
                answers.append(request.create_response(SECRETS[2]))
                asked += 1
            elif request.tool_call.call_id == "r1":
                answers.append(request.create_response(False, SECRETS[0]))
            else:
                edit = {"target": SECRETS[1]}
                answers.append(request.create_response(True, edited_arguments=edit))
        history += [*response.messages, ChatMessage("user", answers)]
        response = await _ask(client, history, streaming)
    assert response.text == "done" and asked == 1
    assert RUNS[before:] == [{"target": SECRETS[1]}]  # the edit ran, once; the rejection never
    dumped = _everything(otel.spans())
    names = [e.name for s in otel.spans("orchestrate_tools") for e in s.events]
    assert "agui_chat.approval.rejected" in names and "agui_chat.approval.edited" in names
    assert "agui_chat.input.answered" in names
    for secret in SECRETS:
        assert (secret in dumped) is capture, secret


async def test_a_request_stamped_with_a_malformed_traceparent_links_nothing(
    otel: Recorded,
) -> None:
    """In process the caller sends the request back; a traceparent in it that does not
    parse (or is not a string) links nothing, fails nothing, and the call runs once."""
    bad_values: list[Any] = ["00-garbage", 12, "00-" + "0" * 32 + "-" + "0" * 16 + "-01"]
    for i, bad in enumerate(bad_values):
        call = FunctionCallContent(f"m{i}", "deploy", {"target": f"malformed {i}"})
        client = _documented(otel, call)
        paused = await client.get_response("deploy", TOOLS)
        [request] = paused.input_requests
        assert request.additional_properties is not None
        request.additional_properties["agui_chat.traceparent"] = bad
        otel.exporter.clear()
        history = [ChatMessage("user", "deploy"), *paused.messages]
        history.append(ChatMessage("user", [request.create_response(True)]))  # type: ignore[attr-defined]
        assert (await client.get_response(history, TOOLS)).text == "done"
        assert otel.span("orchestrate_tools").links == ()
        assert otel.span("execute_tool deploy").attributes["agui_chat.tool.outcome"] == "ran"  # type: ignore[index]
    assert [r["target"] for r in RUNS if r["target"].startswith("malformed")] == [
        "malformed 0",
        "malformed 1",
        "malformed 2",
    ]
