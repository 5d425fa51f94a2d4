"""OpenAIResponsesChatClient against recorded Responses wire bodies (respx): what goes over
the wire, and how every output item and stream event comes back."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import openai
import pytest
import respx
from openai_wire import FIXTURES
from pydantic import BaseModel

from agui_chat import (
    AITool,
    AuthenticationError,
    ChatFinishReason,
    ChatMessage,
    ChatOptions,
    ChatResponse,
    ChatToolMode,
    DataContent,
    ErrorContent,
    FunctionCallContent,
    FunctionCallUpdateContent,
    FunctionInvokingChatClient,
    FunctionResultContent,
    RateLimitError,
    RefusalError,
    RunError,
    TextContent,
    TextReasoningContent,
    ToolError,
    TruncatedStreamError,
    ai_function,
)
from agui_chat.openai import OpenAIResponsesChatClient


def body(name: str, status: int = 200) -> httpx.Response:
    kind = "text/event-stream" if name.endswith(".sse") else "application/json"
    return httpx.Response(
        status, content=(FIXTURES / name).read_bytes(), headers={"content-type": kind}
    )


def serve(router: respx.MockRouter, *names: str) -> respx.Route:
    return router.post("/responses").mock(side_effect=[body(n) for n in names])


def sent(route: respx.Route, index: int = -1) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(route.calls[index].request.content)
    return data


@pytest.fixture
async def responses(sdk: openai.AsyncOpenAI) -> AsyncIterator[OpenAIResponsesChatClient]:
    yield OpenAIResponsesChatClient("gpt-5-mini", client=sdk)


async def stream(client: Any, messages: Any, options: ChatOptions | None = None) -> list[Any]:
    return [u async for u in client.get_streaming_response(messages, options)]


async def test_text_and_reasoning_whole(
    router: respx.MockRouter, responses: OpenAIResponsesChatClient
) -> None:
    route = serve(router, "responses_text.json")
    response = await responses.get_response("Hi", ChatOptions(instructions="Be brief."))
    request = sent(route)
    assert request["model"] == "gpt-5-mini" and request["store"] is False
    assert request["instructions"] == "Be brief."
    assert request["input"] == [{"type": "message", "role": "user", "content": "Hi"}]
    assert "previous_response_id" not in request and request["stream"] is False
    [message] = response.messages
    reasoning, text = message.contents
    assert isinstance(reasoning, TextReasoningContent)
    assert reasoning.text.startswith("**Answering briefly**")
    assert reasoning.protected_data == "gAAAAABoENCRYPTED=="
    assert isinstance(text, TextContent) and text.text == "Hello! How can I help?"
    assert response.finish_reason == ChatFinishReason.STOP
    assert response.conversation_id is None  # nothing stored: no conversation to continue
    assert response.usage is not None
    assert (response.usage.input_token_count, response.usage.output_token_count) == (21, 84)
    assert response.usage.reasoning_token_count == 64
    assert response.usage.cached_input_token_count == 4


async def test_text_and_reasoning_streamed_fold_into_the_same_response(
    router: respx.MockRouter, responses: OpenAIResponsesChatClient
) -> None:
    route = serve(router, "responses_stream_text.sse")
    updates = await stream(responses, "Hi")
    assert sent(route)["stream"] is True
    deltas = [c for u in updates for c in u.contents if isinstance(c, TextContent)]
    assert [d.text for d in deltas] == ["Hello", "!", " How", " can", " I", " help", "?"]
    thoughts = [c for u in updates for c in u.contents if isinstance(c, TextReasoningContent)]
    assert len(thoughts) == 4  # three summary deltas and the encrypted item at its end
    response = ChatResponse.from_updates(updates)
    [message] = response.messages
    reasoning, text = message.contents
    assert isinstance(reasoning, TextReasoningContent)
    assert reasoning.text == "**Answering briefly**\n\nThe user wants a greeting."
    assert reasoning.protected_data == "gAAAAABoENCRYPTED=="
    assert text.text == "Hello! How can I help?"  # type: ignore[attr-defined]
    assert response.response_id == "resp_68c1f0a2stream01"
    assert response.finish_reason == ChatFinishReason.STOP
    assert response.usage is not None and response.usage.total_token_count == 105


@pytest.mark.parametrize("streaming", [False, True], ids=["whole", "streamed"])
async def test_parallel_function_calls(
    router: respx.MockRouter, responses: OpenAIResponsesChatClient, streaming: bool
) -> None:
    @ai_function
    def get_weather(city: str) -> str:
        """The weather in a city."""
        return "sunny"

    options = ChatOptions(tools=[get_weather], allow_multiple_tool_calls=True)
    if streaming:
        route = serve(router, "responses_stream_tool_calls.sse")
        updates = await stream(responses, "Weather?", options)
        pieces = [
            c for u in updates for c in u.contents if isinstance(c, FunctionCallUpdateContent)
        ]
        assert "".join(p.arguments_delta for p in pieces if p.call_id == "call_Pq2") == (
            '{"city":"Lyon"}'
        )
        response = ChatResponse.from_updates(updates)
    else:
        route = serve(router, "responses_tool_calls.json")
        response = await responses.get_response("Weather?", options)
    request = sent(route)
    assert request["tools"] == [
        {
            "type": "function",
            "name": "get_weather",
            "description": "The weather in a city.",
            "parameters": get_weather.parameters,
            "strict": False,
        }
    ]
    assert request["parallel_tool_calls"] is True
    calls = [c for c in response.messages[0].contents if isinstance(c, FunctionCallContent)]
    assert [(c.call_id, c.arguments) for c in calls] == [
        ("call_Pq1", {"city": "Paris"}),
        ("call_Pq2", {"city": "Lyon"}),
    ]
    assert response.finish_reason == ChatFinishReason.TOOL_CALLS


@ai_function
def get_weather(city: str) -> str:
    """The weather in a city."""
    return "sunny"


@pytest.mark.parametrize(
    ("mode", "tool_choice"),
    [
        (ChatToolMode.AUTO, "auto"),
        (ChatToolMode.NONE, "none"),
        (ChatToolMode.REQUIRE_ANY, "required"),
        (ChatToolMode.require_specific("get_weather"), {"type": "function", "name": "get_weather"}),
    ],
    ids=["auto", "none", "required", "specific"],
)
async def test_tool_mode_goes_as_the_flat_responses_tool_choice(
    router: respx.MockRouter,
    responses: OpenAIResponsesChatClient,
    mode: ChatToolMode,
    tool_choice: object,
) -> None:
    route = serve(router, "responses_text.json")
    options = ChatOptions(tools=[get_weather], tool_mode=mode, allow_multiple_tool_calls=False)
    await responses.get_response("Weather?", options)
    request = sent(route)
    assert request["tool_choice"] == tool_choice
    assert request["parallel_tool_calls"] is False
    assert [t["name"] for t in request["tools"]] == ["get_weather"]


async def test_without_tools_no_tool_field_is_sent(
    router: respx.MockRouter, responses: OpenAIResponsesChatClient
) -> None:
    route = serve(router, "responses_text.json")
    options = ChatOptions(tool_mode=ChatToolMode.REQUIRE_ANY, allow_multiple_tool_calls=True)
    await responses.get_response("Hi", options)
    request = sent(route)
    assert not {"tools", "tool_choice", "parallel_tool_calls"} & request.keys()


@pytest.mark.parametrize("streaming", [False, True], ids=["whole", "streamed"])
async def test_a_tool_that_is_not_a_function_is_refused_before_anything_is_sent(
    router: respx.MockRouter, responses: OpenAIResponsesChatClient, streaming: bool
) -> None:
    class WebSearch(AITool):
        def __init__(self) -> None:
            self.name = "web_search"
            self.description = ""
            self.additional_properties = {}

    route = serve(router, "responses_text.json")
    options = ChatOptions(tools=[get_weather, WebSearch()])
    with pytest.raises(ToolError, match=r"'web_search' \(WebSearch\) cannot be sent to the Resp"):
        if streaming:
            await stream(responses, "Hi", options)
        else:
            await responses.get_response("Hi", options)
    assert not route.called


async def test_history_becomes_input_items(
    router: respx.MockRouter, responses: OpenAIResponsesChatClient
) -> None:
    route = serve(router, "responses_text.json")
    history = [
        ChatMessage("system", "Rules."),
        ChatMessage(
            "user", [TextContent("Look:"), DataContent(b"\x89PNG", media_type="image/png")]
        ),
        ChatMessage(
            "assistant",
            [TextContent("Checking."), FunctionCallContent("call_1", "look", {"at": "it"})],
        ),
        ChatMessage("tool", [FunctionResultContent("call_1", {"seen": True})]),
        ChatMessage("assistant", [TextReasoningContent("thinking")]),  # not replayable: left out
    ]
    await responses.get_response(history)
    items = sent(route)["input"]
    assert items[0] == {"type": "message", "role": "system", "content": "Rules."}
    assert items[1]["content"][0] == {"type": "input_text", "text": "Look:"}
    assert items[1]["content"][1]["type"] == "input_image"
    assert items[1]["content"][1]["image_url"].startswith("data:image/png;base64,")
    assert items[2] == {"type": "message", "role": "assistant", "content": "Checking."}
    assert items[3] == {
        "type": "function_call",
        "call_id": "call_1",
        "name": "look",
        "arguments": '{"at":"it"}',
    }
    assert items[4] == {
        "type": "function_call_output",
        "call_id": "call_1",
        "output": '{"seen":true}',
    }
    assert len(items) == 5


async def test_store_gives_a_conversation_and_the_tool_loop_then_sends_only_new_items(
    router: respx.MockRouter, sdk: openai.AsyncOpenAI
) -> None:
    ran: list[str] = []

    @ai_function
    def get_weather(city: str) -> str:
        """The weather in a city."""
        ran.append(city)
        return f"sunny in {city}"

    route = serve(router, "responses_tool_calls.json", "responses_text.json")
    client = FunctionInvokingChatClient(
        OpenAIResponsesChatClient("gpt-5-mini", client=sdk, store=True)
    )
    response = await client.get_response("Weather?", ChatOptions(tools=[get_weather]))
    assert ran == ["Paris", "Lyon"]
    first, second = sent(route, 0), sent(route, 1)
    assert first["store"] is True and "previous_response_id" not in first
    assert second["previous_response_id"] == "resp_68c1f0a2tools"
    # Only what is new goes: the two results, not the question or the calls again.
    assert [i["type"] for i in second["input"]] == ["function_call_output"] * 2
    assert response.conversation_id == "resp_68c1f0a2b3d4e5f60718293a4b5c6d7e"


async def test_reasoning_handed_back_when_it_can_be(
    router: respx.MockRouter, responses: OpenAIResponsesChatClient
) -> None:
    route = serve(router, "responses_text.json", "responses_text.json")
    first = await responses.get_response("Hi")
    await responses.get_response([ChatMessage("user", "Hi"), *first.messages])
    items = sent(route, 1)["input"]
    assert items[1] == {
        "type": "reasoning",
        "id": "rs_68c1f0a2reasoning01",
        "summary": [{"type": "summary_text", "text": first.messages[0].contents[0].text}],  # type: ignore[attr-defined]
        "encrypted_content": "gAAAAABoENCRYPTED==",
    }


class City(BaseModel):
    name: str
    population: int
    country: str | None = None


async def test_structured_output_goes_as_text_format(
    router: respx.MockRouter, responses: OpenAIResponsesChatClient
) -> None:
    route = serve(router, "responses_structured.json")
    response = await responses.get_response("Biggest?", response_format=City)
    assert response.value == City(name="Paris", population=2100000)
    fmt = sent(route)["text"]["format"]
    assert fmt["type"] == "json_schema" and fmt["name"] == "City" and fmt["strict"] is True
    assert fmt["schema"]["additionalProperties"] is False
    assert fmt["schema"]["required"] == ["name", "population", "country"]


async def test_a_refusal_is_an_error_content_and_a_refusal_error_for_structured_output(
    router: respx.MockRouter, responses: OpenAIResponsesChatClient
) -> None:
    serve(
        router, "responses_refusal.json", "responses_stream_refusal.sse", "responses_refusal.json"
    )
    whole = await responses.get_response("Bad thing")
    streamed = ChatResponse.from_updates(await stream(responses, "Bad thing"))
    for response in (whole, streamed):
        [refusal] = response.messages[0].contents
        assert isinstance(refusal, ErrorContent) and refusal.error_code == "refusal"
        assert refusal.message == "I can't help with that."
    with pytest.raises(RefusalError, match="refused"):
        await responses.get_response("Bad thing", response_format=City, retries=2)


async def test_incomplete_says_why_in_the_finish_reason(
    router: respx.MockRouter, responses: OpenAIResponsesChatClient
) -> None:
    serve(router, "responses_incomplete.json", "responses_stream_incomplete.sse")
    whole = await responses.get_response("Long", ChatOptions(max_output_tokens=16))
    assert whole.finish_reason == ChatFinishReason.LENGTH
    assert whole.additional_properties == {"incomplete_reason": "max_output_tokens"}
    assert whole.text == "The answer starts"
    streamed = ChatResponse.from_updates(await stream(responses, "Long"))
    assert streamed.finish_reason == ChatFinishReason.CONTENT_FILTER
    assert streamed.additional_properties == {"incomplete_reason": "content_filter"}
    assert streamed.text == "Here is the start"


@pytest.mark.parametrize(
    ("name", "code", "error"),
    [
        ("responses_failed.json", "server_error", RunError),
        ("responses_stream_failed.sse", "rate_limit_exceeded", RunError),
        ("responses_stream_error.sse", "server_error", RunError),
        ("responses_stream_truncated.sse", None, TruncatedStreamError),
    ],
    ids=["failed", "stream-failed", "stream-error-event", "stream-truncated"],
)
async def test_failures_are_typed(
    router: respx.MockRouter,
    responses: OpenAIResponsesChatClient,
    name: str,
    code: str | None,
    error: type[Exception],
) -> None:
    serve(router, name)
    with pytest.raises(error) as caught:
        if name.endswith(".json"):
            await responses.get_response("Hi")
        else:
            await stream(responses, "Hi")
    if code is not None:
        assert caught.value.code == code  # type: ignore[attr-defined]


async def test_http_errors_map_as_for_chat_completions(
    router: respx.MockRouter, responses: OpenAIResponsesChatClient
) -> None:
    router.post("/responses").mock(
        side_effect=[body("error_rate_limit.json", 429), body("error_invalid_api_key.json", 401)]
    )
    with pytest.raises(RateLimitError, match="Responses API"):
        await responses.get_response("Hi")
    with pytest.raises(AuthenticationError):
        await stream(responses, "Hi")


def test_bad_settings(sdk: openai.AsyncOpenAI) -> None:
    with pytest.raises(TypeError, match="store must be a bool"):
        OpenAIResponsesChatClient("m", client=sdk, store="yes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="model"):
        OpenAIResponsesChatClient(" ", client=sdk)
    assert "store=False" in repr(OpenAIResponsesChatClient("m", client=sdk))
