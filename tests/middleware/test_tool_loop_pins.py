"""FunctionInvokingChatClient pins: details of the tool loop a caller can observe that the
other loop tests leave open (batch edge cases, the error limit's exception group, what a
pause carries, the streaming hand-off protocol, and the tool loop's tracing hooks with the
real OpenTelemetry SDK)."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from loop_support import Ask, call, describe, results_for, resume, scripted, seen
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agui_chat import (
    BaseChatClient,
    ChatClient,
    ChatClientBuilder,
    ChatMessage,
    ChatOptions,
    ChatResponse,
    ChatResponseUpdate,
    ChatRole,
    DelegatingChatClient,
    ExpiredRequestError,
    FunctionCallContent,
    FunctionInvocationContext,
    FunctionInvokingChatClient,
    InputRequired,
    InterruptRequestContent,
    InterruptResponseContent,
    TextContent,
    ToolApprovalRequestContent,
    ai_function,
    approval_required,
    request_input,
)
from agui_chat._client import ChatMessages

if sys.version_info < (3, 11):  # pragma: no cover - the backport on Python 3.10
    from exceptiongroup import ExceptionGroup  # type: ignore[import-not-found,unused-ignore]


@ai_function
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@ai_function
def broken() -> str:
    """Always fails."""
    raise RuntimeError("boom")


@approval_required
@ai_function
def deploy(target: str) -> str:
    """Deploy somewhere."""
    return f"deployed {target}"


@ai_function
def choose() -> str:
    """Ask which build."""
    answer = request_input("Which build?")
    return f"build {answer.payload}"


TOOLS = ChatOptions(tools=[add, broken, deploy, choose])


# -- requests the loop refuses ------------------------------------------------------------


async def test_retries_without_a_response_format_is_refused_before_the_model_runs() -> None:
    """``retries=`` only repairs structured output: without a format it is a ValueError."""
    model = scripted()
    client = FunctionInvokingChatClient(model)
    with pytest.raises(ValueError) as info:
        await client.get_response("hi", retries=1)
    assert str(info.value) == "retries= repairs structured output: it needs response_format=Model"
    assert model.calls == []


# -- batches ------------------------------------------------------------------------------


async def test_a_call_after_a_duplicated_call_id_still_runs(ask: Ask) -> None:
    """Only the calls sharing an id are refused; the batch's other calls run."""
    model = scripted(
        [call("d", "add", a=1, b=1), call("d", "add", a=2, b=2), call("c2", "add", a=3, b=4)],
        "done",
    )
    response = await ask(FunctionInvokingChatClient(model), "go", TOOLS)
    assert response.text.endswith("done")
    assert results_for(model.calls[1][0], "c2") == [7]
    assert len(results_for(model.calls[1][0], "d")) == 2  # an error for each, neither ran
    assert 2 not in results_for(model.calls[1][0], "d")


async def test_at_the_error_limit_the_group_holds_the_batchs_earlier_failures(ask: Ask) -> None:
    """Serially, the failure that passes the limit is raised with the failures of the calls
    before it in the batch (here: arguments that cannot be parsed), as one group."""
    model = scripted(
        [FunctionCallContent.from_json_arguments("c1", "add", "{bad"), call("c2", "broken")]
    )
    client = FunctionInvokingChatClient(model, max_consecutive_errors=0)
    with pytest.raises(ExceptionGroup) as info:
        await ask(client, "go", TOOLS)
    assert info.value.message == "2 tool calls failed (1 round trips in a row)"
    first, second = info.value.exceptions
    assert isinstance(first, ValueError) and "Expecting property name" in str(first)
    assert isinstance(second, RuntimeError) and str(second) == "boom"
    assert len(model.calls) == 1


async def test_concurrent_calls_each_see_their_index_in_the_batch(ask: Ask) -> None:
    """With ``allow_concurrent_invocation``, each call's invocation context still numbers
    it within its batch."""
    seen_by_invoker: list[tuple[str, int, int]] = []

    def invoker(context: FunctionInvocationContext) -> Any:
        seen_by_invoker.append(
            (context.call.call_id, context.function_call_index, context.function_count)
        )
        return context.function.invoke(context.arguments)

    model = scripted([call("c1", "add", a=1, b=2), call("c2", "add", a=3, b=4)], "done")
    client = FunctionInvokingChatClient(
        model, allow_concurrent_invocation=True, function_invoker=invoker
    )
    await ask(client, "go", TOOLS)
    assert sorted(seen_by_invoker) == [("c1", 0, 2), ("c2", 1, 2)]
    assert results_for(model.calls[1][0], "c1") == [3]


# -- what a pause carries -------------------------------------------------------------------


async def test_a_question_after_a_call_that_did_not_ask_still_pauses_the_run(ask: Ask) -> None:
    """The first call of the batch answers, the second asks: the run pauses on the question
    (the model is not called again) and the first call's result is kept."""
    model = scripted([call("c1", "add", a=1, b=2), call("c2", "choose")])
    response = await ask(FunctionInvokingChatClient(model), "go", TOOLS)
    [question] = response.input_requests
    assert isinstance(question, InterruptRequestContent)
    assert (question.tool_call_id, question.message) == ("c2", "Which build?")
    assert results_for(response.messages, "c1") == [3]
    assert len(model.calls) == 1


async def test_a_question_keeps_everything_the_tool_said_about_it(ask: Ask) -> None:
    """A tool raising ``InputRequired`` itself: reason, expiry, key and metadata all reach
    the caller's ``InterruptRequestContent``."""
    expires = datetime.now(timezone.utc) + timedelta(hours=1)

    @ai_function
    def confirm() -> str:
        """Confirm."""
        raise InputRequired(
            "Really?",
            reason="confirmation",
            expires_at=expires,
            key="really",
            metadata={"ui": "yes-no", "severity": 2},
        )

    model = scripted([call("c1", "confirm")])
    response = await ask(FunctionInvokingChatClient(model), "go", ChatOptions(tools=[confirm]))
    [question] = response.input_requests
    assert isinstance(question, InterruptRequestContent)
    assert question.reason == "confirmation"
    assert question.expires_at == expires
    assert question.key == "really"
    assert question.metadata == {"ui": "yes-no", "severity": 2}


async def test_the_message_holding_the_questions_has_its_own_id(ask: Ask) -> None:
    """The assistant message with the questions has a message id (a UI keys on it),
    distinct from the tool message before it."""
    model = scripted([call("c1", "add", a=1, b=2), call("c2", "choose")])
    response = await ask(FunctionInvokingChatClient(model), "go", TOOLS)
    *_, results, questions = response.messages
    [question] = response.input_requests
    assert describe([results, questions]) == [
        "tool: result c1 3",
        f"assistant: question {question.request_id}",
    ]
    assert questions.message_id
    assert questions.message_id != results.message_id


async def test_an_approval_request_names_the_tool_in_its_message(ask: Ask) -> None:
    """The text a person sees when asked to approve a call."""
    model = scripted([call("c1", "deploy", target="prod")])
    response = await ask(FunctionInvokingChatClient(model), "go", TOOLS)
    [request] = response.input_requests
    assert isinstance(request, ToolApprovalRequestContent)
    assert request.message == "Approve deploy?"


# -- streaming ------------------------------------------------------------------------------


class _Streams(BaseChatClient):
    """A model whose streams are given update by update, one list per call."""

    def __init__(self, *turns: list[ChatResponseUpdate]) -> None:
        self.turns = list(turns)
        self.calls: list[list[ChatMessage]] = []

    async def get_streaming_response(
        self, messages: ChatMessages, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        self.calls.append(list(messages))  # type: ignore[arg-type]
        for update in self.turns.pop(0):
            yield update


async def test_a_model_stream_with_no_updates_ends_the_stream_quietly() -> None:
    """A model that streams nothing: the caller's stream is empty too, not an error."""
    client = FunctionInvokingChatClient(_Streams([]))
    assert [u async for u in client.get_streaming_response("hi", TOOLS)] == []


async def test_a_streamed_text_under_another_role_is_a_message_of_its_own() -> None:
    """The history sent back after a streamed turn is the turn as ``from_updates`` joins
    it: a text piece under another role starts a new message."""
    turn = [
        ChatResponseUpdate(ChatRole.ASSISTANT, [TextContent("Let me ")]),
        ChatResponseUpdate(None, [TextContent("check.")]),
        ChatResponseUpdate(ChatRole.SYSTEM, [TextContent("note")]),
        ChatResponseUpdate(
            ChatRole.ASSISTANT, [FunctionCallContent("c1", "add", {"a": 1, "b": 2})]
        ),
    ]
    expected = describe(ChatResponse.from_updates(turn).messages)
    model = _Streams(list(turn), [ChatResponseUpdate(ChatRole.ASSISTANT, [TextContent("3")])])
    client = FunctionInvokingChatClient(model)
    [u async for u in client.get_streaming_response("sum", TOOLS)]
    assert expected == [
        "assistant: Let me check.",
        "system: note",
        'assistant: call c1 add {"a": 1, "b": 2}',
    ]
    assert describe(model.calls[1]) == ["user: sum", *expected, "tool: result c1 3"]


class _HandOff:
    """A stream following the hand-off protocol (``middleware/_retry.py``): after its
    first update, ``handed_over`` is the stream to read directly. Counts its own reads."""

    def __init__(self, inner: AsyncIterator[ChatResponseUpdate]) -> None:
        self.inner = inner
        self.handed_over: AsyncIterator[ChatResponseUpdate] | None = None
        self.reads = 0

    def __aiter__(self) -> _HandOff:
        return self

    async def __anext__(self) -> ChatResponseUpdate:
        self.reads += 1
        update = await anext(self.inner)
        self.handed_over = self.inner
        return update


class _HandingOff(DelegatingChatClient):
    """A middleware whose streams hand off after the first update (as the retry one does)."""

    def __init__(self, inner: ChatClient) -> None:
        super().__init__(inner)
        self.streams: list[_HandOff] = []

    def get_streaming_response(
        self, messages: ChatMessages, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        stream = _HandOff(aiter(self.inner_client.get_streaming_response(messages, options)))
        self.streams.append(stream)
        return stream


async def test_the_loop_reads_a_hand_off_streams_inner_stream_after_the_first_update() -> None:
    """The middleware that hands off costs one read per turn, not one per update, and every
    update still reaches the caller."""
    model = scripted([call("c1", "add", a=1, b=2)], "one two three")
    handing = _HandingOff(model)
    client = FunctionInvokingChatClient(handing)
    updates = [u async for u in client.get_streaming_response("go", TOOLS)]
    assert ChatResponse.from_updates(updates).text == "one two three"
    assert [s.reads for s in handing.streams] == [1, 1]
    assert seen(model, 1)[-1] == "tool: result c1 3"


# -- tracing hooks (the real OpenTelemetry SDK) ---------------------------------------------


@pytest.fixture
def spans() -> Iterator[tuple[InMemorySpanExporter, dict[str, Any]]]:
    """An in-memory span exporter and the providers to pass to ``use_opentelemetry``."""
    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    meter_provider = MeterProvider()
    yield exporter, {"tracer_provider": tracer_provider, "meter_provider": meter_provider}
    tracer_provider.shutdown()
    meter_provider.shutdown()


def _traced(model: ChatClient, providers: dict[str, Any]) -> Any:
    return ChatClientBuilder(model).use_function_invocation().use_opentelemetry(**providers).build()


def _events(exporter: InMemorySpanExporter) -> list[tuple[str, dict[str, Any]]]:
    """The person's events, on each request's ``orchestrate_tools`` span."""
    finished: tuple[ReadableSpan, ...] = exporter.get_finished_spans()
    return [
        (e.name, dict(e.attributes or {}))
        for s in finished
        if s.name == "orchestrate_tools"
        for e in s.events
    ]


async def test_tool_spans_name_the_call_and_describe_the_tool(
    ask: Ask, spans: tuple[InMemorySpanExporter, dict[str, Any]]
) -> None:
    """A span per call: the call id, the tool's description; an unknown tool's span too."""
    exporter, providers = spans
    model = scripted([call("c1", "add", a=1, b=2), call("c2", "nowhere")], "done")
    await ask(_traced(model, providers), "go", TOOLS)
    tools = {
        (s.attributes or {})["gen_ai.tool.call.id"]: dict(s.attributes or {})
        for s in exporter.get_finished_spans()
        if s.name.startswith("execute_tool")
    }
    assert tools["c1"]["gen_ai.tool.description"] == "Add two numbers."
    assert tools["c1"]["agui_chat.tool.outcome"] == "ran"
    assert tools["c2"]["agui_chat.tool.outcome"] == "not_found"
    assert tools["c2"]["gen_ai.tool.name"] == "nowhere"


async def test_requests_and_answers_are_traced_as_events(
    ask: Ask, spans: tuple[InMemorySpanExporter, dict[str, Any]]
) -> None:
    """An approval and a question are events when requested, and when answered."""
    exporter, providers = spans
    tracer = providers["tracer_provider"].get_tracer("test")
    model = scripted([call("d1", "deploy", target="prod"), call("q1", "choose")], "done")
    client = _traced(model, providers)
    history = [ChatMessage("user", "go")]
    with tracer.start_as_current_span("turn"):
        paused = await ask(client, history, TOOLS)
    approval, question = paused.input_requests
    answers = [approval.create_response(True), question.create_response(7)]  # type: ignore[attr-defined]
    with tracer.start_as_current_span("turn"):
        done = await ask(client, resume(history, paused, *answers), TOOLS)
    assert done.text.endswith("done")
    names = [(name, a.get("gen_ai.tool.call.id")) for name, a in _events(exporter)]
    assert names == [
        ("agui_chat.approval.requested", "d1"),
        ("agui_chat.input.requested", "q1"),
        ("agui_chat.approval.approved", "d1"),
        ("agui_chat.input.answered", "q1"),
    ]


async def test_an_expired_answer_is_refused_and_traced(
    ask: Ask, spans: tuple[InMemorySpanExporter, dict[str, Any]]
) -> None:
    """An answer past its request's expiry: ``ExpiredRequestError``, and an event naming it."""
    exporter, providers = spans
    tracer = providers["tracer_provider"].get_tracer("test")

    @ai_function
    def soon() -> str:
        """Ask with a deadline already past."""
        request_input("Now?", expires_at=datetime(2000, 1, 1, tzinfo=timezone.utc))
        return "late"

    model = scripted([call("c1", "soon")])
    client = _traced(model, providers)
    history = [ChatMessage("user", "go")]
    with tracer.start_as_current_span("turn"):
        paused = await ask(client, history, ChatOptions(tools=[soon]))
    [question] = paused.input_requests
    answer = InterruptResponseContent(question.request_id, "yes")
    with tracer.start_as_current_span("turn"), pytest.raises(ExpiredRequestError):
        await ask(client, resume(history, paused, answer), ChatOptions(tools=[soon]))
    assert _events(exporter)[-1] == (
        "agui_chat.request.expired",
        {"agui_chat.request.id": question.request_id},
    )
