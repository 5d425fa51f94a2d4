"""OpenAIChatClient.get_streaming_response: SSE chunks become updates as they arrive."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx
from openai_wire import FIXTURES, Wire

from agui_chat import (
    AIContent,
    ChatFinishReason,
    ChatResponse,
    ChatResponseUpdate,
    FunctionCallContent,
    FunctionCallUpdateContent,
    TextContent,
    TextReasoningContent,
    UsageContent,
    UsageDetails,
)
from agui_chat.openai import OpenAIChatClient


async def collect(chat: OpenAIChatClient, prompt: str = "Hi") -> list[ChatResponseUpdate]:
    return [u async for u in chat.get_streaming_response(prompt)]


def contents_of(updates: list[ChatResponseUpdate], kind: type[AIContent]) -> list[AIContent]:
    return [c for u in updates for c in u.contents if isinstance(c, kind)]


def gated_sse(name: str, events_before_gate: int, gate: asyncio.Event) -> httpx.Response:
    """A streaming answer that sends the first events of a fixture, then waits for ``gate``
    before sending the rest, so a test can see what the client yields in between."""
    events = [e + b"\n\n" for e in (FIXTURES / name).read_bytes().split(b"\n\n") if e.strip()]

    async def body() -> AsyncIterator[bytes]:
        yield b"".join(events[:events_before_gate])
        await gate.wait()
        for event in events[events_before_gate:]:
            yield event

    return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body())


# -- text ----------------------------------------------------------------------------------


async def test_text_deltas_become_text_updates_in_order(chat: OpenAIChatClient, wire: Wire) -> None:
    wire.serve(wire.sse("stream_text.sse"))
    updates = await collect(chat)
    assert [u.text for u in updates if u.text] == ["It is", " sunny", " in Paris."]


async def test_text_is_yielded_before_the_rest_of_the_stream_arrives(
    chat: OpenAIChatClient, wire: Wire
) -> None:
    gate = asyncio.Event()
    wire.serve(gated_sse("stream_text.sse", 2, gate))
    stream = chat.get_streaming_response("Hi")
    # wait_for only turns a hang (a client that buffers the whole body) into a failure.
    first = await asyncio.wait_for(stream.__anext__(), 10)
    assert first.text == "It is"
    gate.set()
    rest = [u async for u in stream]
    assert "".join(u.text for u in rest) == " sunny in Paris."


async def test_only_the_last_update_carries_the_finish_reason_and_usage(
    chat: OpenAIChatClient, wire: Wire
) -> None:
    wire.serve(wire.sse("stream_text.sse"))
    *body, last = await collect(chat)
    assert all(u.finish_reason is None for u in body)
    assert not contents_of(body, UsageContent)
    assert last.finish_reason == ChatFinishReason.STOP
    assert last.contents == [
        UsageContent(
            UsageDetails(
                input_token_count=52,
                output_token_count=5,
                total_token_count=57,
                cached_input_token_count=0,
                reasoning_token_count=0,
                additional_counts={
                    "input_audio_token_count": 0,
                    "output_audio_token_count": 0,
                    "accepted_prediction_token_count": 0,
                    "rejected_prediction_token_count": 0,
                },
            )
        )
    ]


async def test_updates_carry_the_response_id_model_and_message_id(
    chat: OpenAIChatClient, wire: Wire
) -> None:
    wire.serve(wire.sse("stream_text.sse"))
    updates = await collect(chat)
    assert {u.response_id for u in updates} == {"chatcmpl-9xQk2VbZ7tG1sN4mW8pR3cYd"}
    assert {u.message_id for u in updates} == {"chatcmpl-9xQk2VbZ7tG1sN4mW8pR3cYd"}
    assert {u.model_id for u in updates} == {"gpt-4o-mini-2024-07-18"}


async def test_streamed_updates_join_into_one_message_with_usage(
    chat: OpenAIChatClient, wire: Wire
) -> None:
    wire.serve(wire.sse("stream_text.sse"))
    response = ChatResponse.from_updates(await collect(chat))
    assert [m.contents for m in response.messages] == [[TextContent("It is sunny in Paris.")]]
    assert response.finish_reason == ChatFinishReason.STOP
    assert response.usage is not None
    assert response.usage.total_token_count == 57


async def test_get_response_of_a_stream_and_of_a_body_agree_on_text(
    chat: OpenAIChatClient, wire: Wire
) -> None:
    wire.serve(wire.sse("stream_text.sse"), wire.json("completion_text.json"))
    streamed = ChatResponse.from_updates(await collect(chat))
    whole = await chat.get_response("Hi")
    assert streamed.text == whole.text == "It is sunny in Paris."


# -- tool calls ----------------------------------------------------------------------------


async def test_parallel_tool_calls_are_assembled_into_function_calls(
    chat: OpenAIChatClient, wire: Wire
) -> None:
    wire.serve(wire.sse("stream_parallel_tool_calls.sse"))
    updates = await collect(chat)
    assert contents_of(updates, FunctionCallContent) == [
        FunctionCallContent("call_Wz1", "get_weather", {"city": "Paris"}),
        FunctionCallContent("call_Tm2", "get_time", {"zone": "Europe/Paris"}),
    ]


async def test_argument_deltas_are_shown_as_function_call_updates(
    chat: OpenAIChatClient, wire: Wire
) -> None:
    wire.serve(wire.sse("stream_parallel_tool_calls.sse"))
    updates = await collect(chat)
    pieces = [
        (c.call_id, c.name, c.arguments_delta)
        for c in contents_of(updates, FunctionCallUpdateContent)
        if isinstance(c, FunctionCallUpdateContent)
    ]
    assert pieces == [
        ("call_Wz1", "get_weather", ""),
        ("call_Wz1", "get_weather", '{"ci'),
        ("call_Wz1", "get_weather", 'ty": "Par'),
        ("call_Wz1", "get_weather", 'is"}'),
        ("call_Tm2", "get_time", ""),
        ("call_Tm2", "get_time", '{"zone": '),
        ("call_Tm2", "get_time", '"Europe/Paris"}'),
    ]


async def test_an_argument_delta_is_yielded_before_the_call_is_complete(
    chat: OpenAIChatClient, wire: Wire
) -> None:
    gate = asyncio.Event()
    wire.serve(gated_sse("stream_parallel_tool_calls.sse", 2, gate))
    stream = chat.get_streaming_response("Hi")
    started = await asyncio.wait_for(stream.__anext__(), 10)
    piece = await asyncio.wait_for(stream.__anext__(), 10)
    assert started.contents == [FunctionCallUpdateContent("call_Wz1", "get_weather", "")]
    assert piece.contents == [FunctionCallUpdateContent("call_Wz1", "get_weather", '{"ci')]
    gate.set()
    rest = [u async for u in stream]
    assert len(contents_of(rest, FunctionCallContent)) == 2


async def test_complete_calls_come_with_the_finish_chunk_and_usage_after_them(
    chat: OpenAIChatClient, wire: Wire
) -> None:
    wire.serve(wire.sse("stream_parallel_tool_calls.sse"))
    *_, calls, last = await collect(chat)
    assert [type(c) for c in calls.contents] == [FunctionCallContent, FunctionCallContent]
    assert [type(c) for c in last.contents] == [UsageContent]
    assert last.finish_reason == ChatFinishReason.TOOL_CALLS


async def test_interleaved_argument_pieces_are_assembled_per_index(
    chat: OpenAIChatClient, wire: Wire
) -> None:
    wire.serve(wire.sse("stream_interleaved_tool_calls.sse"))
    updates = await collect(chat)
    assert contents_of(updates, FunctionCallContent) == [
        FunctionCallContent("call_A", "get_weather", {"city": "Oslo"}),
        FunctionCallContent("call_B", "get_time", {"zone": "UTC"}),
    ]


async def test_calls_sent_whole_at_one_index_are_told_apart_by_their_ids(
    chat: OpenAIChatClient, wire: Wire
) -> None:
    wire.serve(wire.sse("stream_same_index_tool_calls.sse"))
    updates = await collect(chat)
    assert contents_of(updates, FunctionCallContent) == [
        FunctionCallContent("call_1", "get_weather", {"city": "Rome"}),
        FunctionCallContent("call_2", "get_weather", {"city": "Oslo"}),
    ]


async def test_a_call_cut_off_by_length_keeps_its_partial_arguments(
    chat: OpenAIChatClient, wire: Wire
) -> None:
    wire.serve(wire.sse("stream_bad_arguments.sse"))
    updates = await collect(chat)
    (call,) = contents_of(updates, FunctionCallContent)
    assert isinstance(call, FunctionCallContent)
    assert call.arguments is None
    assert call.raw_arguments == '{"city": '
    assert updates[-1].finish_reason == ChatFinishReason.LENGTH


async def test_a_streamed_tool_call_response_joins_without_the_argument_pieces(
    chat: OpenAIChatClient, wire: Wire
) -> None:
    wire.serve(wire.sse("stream_parallel_tool_calls.sse"))
    response = ChatResponse.from_updates(await collect(chat))
    assert len(response.messages) == 1
    assert [c.call_id for c in response.messages[0].contents] == ["call_Wz1", "call_Tm2"]  # type: ignore[attr-defined]
    assert response.usage is not None
    assert response.usage.cached_input_token_count == 64


# -- reasoning -----------------------------------------------------------------------------


async def test_streamed_reasoning_content_becomes_reasoning_updates(
    chat: OpenAIChatClient, wire: Wire
) -> None:
    wire.serve(wire.sse("stream_reasoning.sse"))
    updates = await collect(chat)
    assert contents_of(updates, TextReasoningContent) == [
        TextReasoningContent("17 is odd;"),
        TextReasoningContent(" no divisor up to 4."),
    ]
    response = ChatResponse.from_updates(updates)
    assert response.messages[0].contents == [
        TextReasoningContent("17 is odd; no divisor up to 4."),
        TextContent("17 is prime."),
    ]
    assert response.usage is not None
    assert response.usage.reasoning_token_count == 31
