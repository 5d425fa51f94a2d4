"""OpenAIChatClient.get_response: a Chat Completions body becomes a ChatResponse."""

from __future__ import annotations

from datetime import datetime, timezone

from openai_wire import Wire

from agui_chat import (
    ChatFinishReason,
    ChatRole,
    ErrorContent,
    FunctionCallContent,
    TextContent,
    TextReasoningContent,
    UsageDetails,
)
from agui_chat.openai import OpenAIChatClient


async def test_text_comes_back_as_one_assistant_message(chat: OpenAIChatClient, wire: Wire) -> None:
    wire.serve(wire.json("completion_text.json"))
    response = await chat.get_response("Weather in Paris?")
    assert len(response.messages) == 1
    message = response.messages[0]
    assert message.role == ChatRole.ASSISTANT
    assert message.contents == [TextContent("It is sunny in Paris.")]
    assert message.message_id == "chatcmpl-9xQk2VbZ7tG1sN4mW8pR3cYd"


async def test_ids_model_time_and_finish_reason_are_reported(
    chat: OpenAIChatClient, wire: Wire
) -> None:
    wire.serve(wire.json("completion_text.json"))
    response = await chat.get_response("Weather in Paris?")
    assert response.response_id == "chatcmpl-9xQk2VbZ7tG1sN4mW8pR3cYd"
    assert response.model_id == "gpt-4o-mini-2024-07-18"
    assert response.created_at == datetime(2024, 9, 22, 10, 13, 20, tzinfo=timezone.utc)
    assert response.finish_reason == ChatFinishReason.STOP
    assert response.conversation_id is None
    assert response.additional_properties == {"system_fingerprint": "fp_0ba0d124f1"}


async def test_usage_includes_cached_and_reasoning_tokens(
    chat: OpenAIChatClient, wire: Wire
) -> None:
    wire.serve(wire.json("completion_text.json"))
    response = await chat.get_response("Weather in Paris?")
    assert response.usage == UsageDetails(
        input_token_count=52,
        output_token_count=18,
        total_token_count=70,
        cached_input_token_count=32,
        reasoning_token_count=6,
        additional_counts={
            "input_audio_token_count": 0,
            "output_audio_token_count": 0,
            "accepted_prediction_token_count": 0,
            "rejected_prediction_token_count": 0,
        },
    )


async def test_usage_without_details_leaves_the_details_unreported(
    chat: OpenAIChatClient, wire: Wire
) -> None:
    wire.serve(wire.json("completion_tool_calls.json"))
    response = await chat.get_response("Hi")
    assert response.usage == UsageDetails(
        input_token_count=80, output_token_count=40, total_token_count=120
    )


async def test_parallel_tool_calls_become_function_calls(
    chat: OpenAIChatClient, wire: Wire
) -> None:
    wire.serve(wire.json("completion_tool_calls.json"))
    response = await chat.get_response("Weather and time in Paris?")
    weather, time = response.messages[0].contents
    assert weather == FunctionCallContent("call_Wz1", "get_weather", {"city": "Paris"})
    assert isinstance(time, FunctionCallContent)
    assert (time.call_id, time.name) == ("call_Tm2", "get_time")
    assert response.finish_reason == ChatFinishReason.TOOL_CALLS


async def test_arguments_that_are_not_json_are_kept_on_the_call(
    chat: OpenAIChatClient, wire: Wire
) -> None:
    wire.serve(wire.json("completion_tool_calls.json"))
    response = await chat.get_response("Weather and time in Paris?")
    time = response.messages[0].contents[1]
    assert isinstance(time, FunctionCallContent)
    assert time.arguments is None
    assert time.raw_arguments == '{"zone": "Europe/Paris"'
    assert isinstance(time.exception, ValueError)


async def test_reasoning_beside_the_content_becomes_reasoning_content(
    chat: OpenAIChatClient, wire: Wire
) -> None:
    wire.serve(wire.json("completion_reasoning.json"))
    response = await chat.get_response("Is 17 prime?")
    assert response.messages[0].contents == [
        TextReasoningContent("17 has no divisors between 2 and 4."),
        TextContent("17 is prime."),
    ]
    assert response.text == "17 is prime."


async def test_length_finish_reason_is_mapped(chat: OpenAIChatClient, wire: Wire) -> None:
    wire.serve(wire.json("completion_length.json"))
    response = await chat.get_response("Tell me a story")
    assert response.finish_reason == ChatFinishReason.LENGTH


async def test_a_refusal_becomes_error_content(chat: OpenAIChatClient, wire: Wire) -> None:
    wire.serve(wire.json("completion_refusal.json"))
    response = await chat.get_response("Something bad")
    assert response.messages[0].contents == [
        ErrorContent("I can't help with that.", error_code="refusal")
    ]
    assert response.text == ""


async def test_the_sdk_object_is_kept_as_raw_representation(
    chat: OpenAIChatClient, wire: Wire
) -> None:
    wire.serve(wire.json("completion_text.json"))
    response = await chat.get_response("Hi")
    assert type(response.raw_representation).__name__ == "ChatCompletion"
    assert response.raw_representation.id == response.response_id
