"""``OpenTelemetryChatClient`` with the real SDK: a ``chat {model}`` span per model call with
the GenAI attributes, the duration and token metrics, errors, content only on request."""

from __future__ import annotations

import json

import pytest
from opentelemetry.trace import SpanKind, StatusCode
from otel_support import Recorded

from agui_chat import (
    ChatClientBuilder,
    ChatMessage,
    ChatOptions,
    ChatResponse,
    RateLimitError,
    UsageDetails,
)
from agui_chat.otel import OpenTelemetryChatClient
from agui_chat.testing import ScriptedChatClient


def _answer(messages: list[ChatMessage], options: ChatOptions | None) -> ChatResponse:
    return ChatResponse(
        ChatMessage("assistant", "Hello there friend"),
        response_id="resp-1",
        model_id="model-2024",
        finish_reason="stop",
        usage=UsageDetails(input_token_count=7, output_token_count=3),
    )


OPTIONS = ChatOptions(
    model_id="gpt-test",
    temperature=0.5,
    top_p=0.9,
    max_output_tokens=64,
    stop_sequences=["END"],
    seed=42,
    instructions="Be brief.",
)


def _client(otel: Recorded, **kw: object) -> OpenTelemetryChatClient:
    return OpenTelemetryChatClient(ScriptedChatClient(_answer), **otel.providers, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize("streaming", [False, True])
async def test_a_chat_span_per_call_with_the_genai_attributes(
    otel: Recorded, streaming: bool
) -> None:
    client = _client(otel, server_address="models.example", server_port=8443)
    if streaming:
        updates = [u async for u in client.get_streaming_response("Hi", OPTIONS)]
        assert "".join(u.text for u in updates) == "Hello there friend"
    else:
        assert (await client.get_response("Hi", OPTIONS)).text == "Hello there friend"
    span = otel.span("chat gpt-test")
    assert span.kind is SpanKind.CLIENT
    a = dict(span.attributes or {})
    assert a["gen_ai.operation.name"] == "chat"
    assert a["gen_ai.provider.name"] == "agui_chat.scripted"
    assert a["gen_ai.request.model"] == "gpt-test"
    assert a["gen_ai.request.temperature"] == 0.5
    assert a["gen_ai.request.top_p"] == 0.9
    assert a["gen_ai.request.max_tokens"] == 64
    assert a["gen_ai.request.stop_sequences"] == ("END",)
    assert a["gen_ai.request.seed"] == 42
    assert "gen_ai.request.frequency_penalty" not in a  # not set, not sent
    assert a["gen_ai.response.id"] == "resp-1"
    assert a["gen_ai.response.model"] == "model-2024"
    assert a["gen_ai.response.finish_reasons"] == ("stop",)
    assert a["gen_ai.usage.input_tokens"] == 7
    assert a["gen_ai.usage.output_tokens"] == 3
    assert a["server.address"] == "models.example"
    assert a["server.port"] == 8443
    if streaming:
        assert a["gen_ai.request.stream"] is True
        assert a["agui_chat.stream.end"] == "completed"
    # content is never recorded by default
    assert not any(k in a for k in ("gen_ai.input.messages", "gen_ai.output.messages"))
    assert "gen_ai.system_instructions" not in a

    [duration] = otel.points("gen_ai.client.operation.duration")
    assert duration.count == 1
    assert duration.attributes["gen_ai.request.model"] == "gpt-test"
    assert duration.attributes["gen_ai.response.model"] == "model-2024"
    tokens = {
        p.attributes["gen_ai.token.type"]: p.sum for p in otel.points("gen_ai.client.token.usage")
    }
    assert tokens == {"input": 7, "output": 3}


async def test_content_is_recorded_only_with_capture_content(otel: Recorded) -> None:
    client = _client(otel, capture_content=True)
    await client.get_response("Hi", OPTIONS)
    a = dict(otel.span("chat gpt-test").attributes or {})
    assert json.loads(str(a["gen_ai.input.messages"])) == [
        {"role": "user", "parts": [{"type": "text", "content": "Hi"}]}
    ]
    [out] = json.loads(str(a["gen_ai.output.messages"]))
    assert out["parts"] == [{"type": "text", "content": "Hello there friend"}]
    assert out["finish_reason"] == "stop"
    assert json.loads(str(a["gen_ai.system_instructions"])) == [
        {"type": "text", "content": "Be brief."}
    ]


async def test_a_failure_sets_error_type_and_the_status(otel: Recorded) -> None:
    def fail(messages: object, options: object) -> str:
        raise RateLimitError("slow down", status_code=429)

    client = OpenTelemetryChatClient(ScriptedChatClient(fail), **otel.providers)  # type: ignore[arg-type]
    with pytest.raises(RateLimitError):
        await client.get_response("Hi", ChatOptions(model_id="m"))
    with pytest.raises(RateLimitError):
        [u async for u in client.get_streaming_response("Hi", ChatOptions(model_id="m"))]
    spans = otel.spans("chat m")
    assert len(spans) == 2
    for span in spans:
        assert span.status.status_code is StatusCode.ERROR
        assert (span.attributes or {})["error.type"] == "RateLimitError"
    errors = [p for p in otel.points("gen_ai.client.operation.duration")]
    assert errors and all(p.attributes["error.type"] == "RateLimitError" for p in errors)


async def test_a_stream_the_caller_stops_early_ends_its_span_as_stopped(otel: Recorded) -> None:
    client = _client(otel)
    stream = client.get_streaming_response("Hi", OPTIONS)
    first = await anext(stream)  # type: ignore[call-overload]
    assert first.text
    assert otel.spans("chat") == []  # still open
    await stream.aclose()  # type: ignore[attr-defined]
    span = otel.span("chat gpt-test")
    assert (span.attributes or {})["agui_chat.stream.end"] == "stopped"


async def test_without_an_sdk_the_stream_passes_through_untouched() -> None:
    inner = ScriptedChatClient(_answer)
    client = ChatClientBuilder(inner).use_opentelemetry().build()  # global no-op providers
    stream = client.get_streaming_response("Hi", OPTIONS)
    assert type(stream) is type(inner.get_streaming_response("Hi", OPTIONS))
    assert "".join([u.text async for u in stream]) == "Hello there friend"


async def test_the_span_is_current_for_the_inner_client(otel: Recorded) -> None:
    from opentelemetry import trace

    seen: list[str] = []

    def inner(messages: object, options: object) -> str:
        seen.append(trace.get_current_span().name)  # type: ignore[attr-defined]
        return "ok"

    client = OpenTelemetryChatClient(ScriptedChatClient(inner), **otel.providers)  # type: ignore[arg-type]
    await client.get_response("Hi")
    [u async for u in client.get_streaming_response("Hi")]
    assert seen == ["chat scripted", "chat scripted"]
