"""OpenAIChatClient requests: the exact Chat Completions JSON the SDK sent for our messages
and options."""

from __future__ import annotations

import base64

import openai
import pydantic
import pytest
from openai_wire import Wire, legacy_http_client

from agui_chat import (
    AIFunctionDeclaration,
    AITool,
    ChatMessage,
    ChatOptions,
    ChatResponseFormat,
    ChatToolMode,
    DataContent,
    FunctionCallContent,
    FunctionResultContent,
    InterruptRequestContent,
    InterruptResponseContent,
    TextContent,
    TextReasoningContent,
    ToolApprovalRequestContent,
    ToolError,
    UriContent,
)
from agui_chat.openai import OpenAIChatClient

WEATHER = AIFunctionDeclaration(
    "get_weather",
    "Current weather for a city.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
WEATHER_JSON = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}


async def test_a_conversation_is_sent_as_chat_completions_messages(
    chat: OpenAIChatClient, wire: Wire
) -> None:
    route = wire.serve(wire.json("completion_text.json"))
    await chat.get_response(
        [
            ChatMessage("system", "Be brief."),
            ChatMessage("developer", "Answer in English."),
            ChatMessage("user", "Weather in Paris?", author_name="ann"),
            ChatMessage("assistant", "Which day?"),
            ChatMessage("user", [TextContent("Today"), TextContent(", please.")]),
        ]
    )
    assert wire.sent(route) == {
        "model": "gpt-4o-mini",
        "stream": False,
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "developer", "content": "Answer in English."},
            {"role": "user", "content": "Weather in Paris?", "name": "ann"},
            {"role": "assistant", "content": "Which day?"},
            {"role": "user", "content": "Today, please."},
        ],
    }


async def test_a_str_is_sent_as_one_user_message(chat: OpenAIChatClient, wire: Wire) -> None:
    route = wire.serve(wire.json("completion_text.json"))
    await chat.get_response("Hi")
    assert wire.sent(route)["messages"] == [{"role": "user", "content": "Hi"}]


async def test_instructions_become_a_leading_system_message(
    chat: OpenAIChatClient, wire: Wire
) -> None:
    route = wire.serve(wire.json("completion_text.json"))
    await chat.get_response(
        [ChatMessage("system", "Be brief."), ChatMessage("user", "Hi")],
        ChatOptions(instructions="You are a weather bot."),
    )
    assert wire.sent(route)["messages"] == [
        {"role": "system", "content": "You are a weather bot."},
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi"},
    ]


async def test_calls_become_tool_calls_and_each_result_its_own_tool_message(
    chat: OpenAIChatClient, wire: Wire
) -> None:
    route = wire.serve(wire.json("completion_text.json"))
    await chat.get_response(
        [
            ChatMessage("user", "Weather and time in Paris?"),
            ChatMessage(
                "assistant",
                [
                    TextContent("Checking."),
                    FunctionCallContent("call_1", "get_weather", {"city": "Paris"}),
                    FunctionCallContent("call_2", "get_time", {}),
                ],
            ),
            ChatMessage(
                "tool",
                [
                    FunctionResultContent("call_1", "sunny"),
                    FunctionResultContent("call_2", {"hour": 9, "zone": "CET"}),
                ],
            ),
        ]
    )
    assert wire.sent(route)["messages"][1:] == [
        {
            "role": "assistant",
            "content": "Checking.",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
                },
                {
                    "id": "call_2",
                    "type": "function",
                    "function": {"name": "get_time", "arguments": "{}"},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
        {"role": "tool", "tool_call_id": "call_2", "content": '{"hour":9,"zone":"CET"}'},
    ]


async def test_an_assistant_message_of_only_calls_has_null_content(
    chat: OpenAIChatClient, wire: Wire
) -> None:
    route = wire.serve(wire.json("completion_text.json"))
    await chat.get_response(
        [ChatMessage("assistant", [FunctionCallContent("call_1", "get_time", {})])]
    )
    assert wire.sent(route)["messages"][0]["content"] is None


async def test_a_call_with_unparsable_arguments_is_sent_back_as_the_model_wrote_it(
    chat: OpenAIChatClient, wire: Wire
) -> None:
    route = wire.serve(wire.json("completion_text.json"))
    bad = FunctionCallContent.from_json_arguments("call_1", "get_weather", '{"city": "Par')
    await chat.get_response([ChatMessage("assistant", [bad])])
    sent_call = wire.sent(route)["messages"][0]["tool_calls"][0]
    assert sent_call["function"]["arguments"] == '{"city": "Par'


async def test_reasoning_approval_and_interrupt_contents_are_not_sent(
    chat: OpenAIChatClient, wire: Wire
) -> None:
    route = wire.serve(wire.json("completion_text.json"))
    call = FunctionCallContent("call_1", "delete_file", {"path": "a.txt"})
    approval = ToolApprovalRequestContent("req_1", call)
    question = InterruptRequestContent("int_1", message="Which build?")
    await chat.get_response(
        [
            ChatMessage("user", "Clean up"),
            ChatMessage("assistant", [TextReasoningContent("I should ask."), TextContent("Ok.")]),
            ChatMessage("assistant", [approval, question]),
            ChatMessage(
                "user", [approval.create_response(True), InterruptResponseContent("int_1", "b2")]
            ),
        ]
    )
    assert wire.sent(route)["messages"] == [
        {"role": "user", "content": "Clean up"},
        {"role": "assistant", "content": "Ok."},
    ]


async def test_image_data_is_sent_as_a_data_uri_image_part(
    chat: OpenAIChatClient, wire: Wire
) -> None:
    route = wire.serve(wire.json("completion_text.json"))
    png = b"\x89PNG\r\n\x1a\n"
    image = DataContent(png, "image/png", additional_properties={"detail": "low"})
    await chat.get_response([ChatMessage("user", [TextContent("What is this?"), image])])
    assert wire.sent(route)["messages"][0]["content"] == [
        {"type": "text", "text": "What is this?"},
        {
            "type": "image_url",
            "image_url": {
                "url": "data:image/png;base64," + base64.b64encode(png).decode(),
                "detail": "low",
            },
        },
    ]


async def test_an_image_uri_is_sent_as_an_image_url_part(
    chat: OpenAIChatClient, wire: Wire
) -> None:
    route = wire.serve(wire.json("completion_text.json"))
    await chat.get_response([ChatMessage("user", [UriContent("https://x.test/cat.jpg")])])
    assert wire.sent(route)["messages"][0]["content"] == [
        {"type": "image_url", "image_url": {"url": "https://x.test/cat.jpg"}}
    ]


async def test_wav_audio_is_sent_as_an_input_audio_part(chat: OpenAIChatClient, wire: Wire) -> None:
    route = wire.serve(wire.json("completion_text.json"))
    await chat.get_response([ChatMessage("user", [DataContent(b"RIFF", "audio/wav")])])
    assert wire.sent(route)["messages"][0]["content"] == [
        {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}}
    ]


async def test_a_pdf_is_sent_as_a_file_part(chat: OpenAIChatClient, wire: Wire) -> None:
    route = wire.serve(wire.json("completion_text.json"))
    pdf = DataContent(b"%PDF", "application/pdf", name="report.pdf")
    await chat.get_response([ChatMessage("user", [pdf])])
    assert wire.sent(route)["messages"][0]["content"] == [
        {
            "type": "file",
            "file": {"filename": "report.pdf", "file_data": "data:application/pdf;base64,JVBERg=="},
        }
    ]


async def test_data_chat_completions_cannot_take_is_refused_before_sending(
    chat: OpenAIChatClient, wire: Wire
) -> None:
    route = wire.serve(wire.json("completion_text.json"))
    video = DataContent(b"\x00\x00", "video/mp4")
    with pytest.raises(ValueError, match="cannot take 'video/mp4' data"):
        await chat.get_response([ChatMessage("user", [video])])
    assert not route.called


async def test_a_uri_that_is_not_an_image_is_refused(chat: OpenAIChatClient, wire: Wire) -> None:
    wire.serve(wire.json("completion_text.json"))
    with pytest.raises(ValueError, match="only images by URL"):
        await chat.get_response([ChatMessage("user", [UriContent("https://x.test/a.mp3")])])


async def test_a_role_chat_completions_lacks_is_refused(chat: OpenAIChatClient, wire: Wire) -> None:
    wire.serve(wire.json("completion_text.json"))
    with pytest.raises(ValueError, match="role 'critic' has no Chat Completions equivalent"):
        await chat.get_response([ChatMessage("critic", "Too long.")])


async def test_every_sampling_option_is_sent(chat: OpenAIChatClient, wire: Wire) -> None:
    route = wire.serve(wire.json("completion_text.json"))
    await chat.get_response(
        "Hi",
        ChatOptions(
            model_id="gpt-4o",
            temperature=0.2,
            top_p=0.9,
            top_k=40,
            frequency_penalty=0.5,
            presence_penalty=-0.5,
            seed=7,
            max_output_tokens=256,
            stop_sequences=["END", "STOP"],
            conversation_id="ignored-by-chat-completions",
            additional_properties={"user": "u-1", "reasoning_effort": "low"},
        ),
    )
    sent = wire.sent(route)
    del sent["messages"]
    assert sent == {
        "model": "gpt-4o",
        "stream": False,
        "temperature": 0.2,
        "top_p": 0.9,
        "frequency_penalty": 0.5,
        "presence_penalty": -0.5,
        "seed": 7,
        "max_completion_tokens": 256,
        "stop": ["END", "STOP"],
        "top_k": 40,
        "user": "u-1",
        "reasoning_effort": "low",
    }


async def test_agui_chat_own_additional_properties_are_not_sent(
    chat: OpenAIChatClient, wire: Wire
) -> None:
    route = wire.serve(wire.json("completion_text.json"))
    options = ChatOptions(additional_properties={"agui_input": object(), "user": "u-1"})
    await chat.get_response("Hi", options)
    sent = wire.sent(route)
    assert sent["user"] == "u-1"
    assert "agui_input" not in sent


async def test_max_output_tokens_is_sent_as_max_tokens_to_a_compatible_server(
    wire: Wire,
) -> None:
    route = wire.router.post("http://localhost:11434/v1/chat/completions").mock(
        return_value=wire.json("completion_text.json")
    )
    sdk = openai.AsyncOpenAI(
        api_key="ollama", base_url="http://localhost:11434/v1", http_client=legacy_http_client()
    )
    async with sdk:
        chat = OpenAIChatClient("llama3.1", client=sdk)
        await chat.get_response("Hi", ChatOptions(max_output_tokens=64))
    sent = wire.sent(route)
    assert sent["max_tokens"] == 64
    assert "max_completion_tokens" not in sent


async def test_max_tokens_parameter_chooses_the_field(sdk: openai.AsyncOpenAI, wire: Wire) -> None:
    route = wire.serve(wire.json("completion_text.json"))
    chat = OpenAIChatClient("gpt-4o-mini", client=sdk, max_tokens_parameter="max_tokens")
    await chat.get_response("Hi", ChatOptions(max_output_tokens=64))
    assert wire.sent(route)["max_tokens"] == 64


class Answer(pydantic.BaseModel):
    city: str


@pytest.mark.parametrize(
    ("response_format", "expected"),
    [
        (ChatResponseFormat.TEXT, {"type": "text"}),
        (ChatResponseFormat.JSON, {"type": "json_object"}),
        (
            ChatResponseFormat.for_json_schema(Answer, description="A city."),
            {
                "type": "json_schema",
                "json_schema": {
                    "name": "Answer",
                    "description": "A city.",
                    "schema": {
                        "type": "object",
                        "title": "Answer",
                        "properties": {"city": {"type": "string", "title": "City"}},
                        "required": ["city"],
                    },
                },
            },
        ),
        (
            ChatResponseFormat.for_json_schema({"type": "object"}),
            {
                "type": "json_schema",
                "json_schema": {"name": "response", "schema": {"type": "object"}},
            },
        ),
    ],
    ids=["text", "json", "schema-from-model", "schema-without-name"],
)
async def test_response_format_is_sent(
    chat: OpenAIChatClient,
    wire: Wire,
    response_format: ChatResponseFormat,
    expected: dict[str, object],
) -> None:
    route = wire.serve(wire.json("completion_text.json"))
    await chat.get_response("Hi", ChatOptions(response_format=response_format))
    assert wire.sent(route)["response_format"] == expected


async def test_tools_are_sent_as_function_tools(chat: OpenAIChatClient, wire: Wire) -> None:
    route = wire.serve(wire.json("completion_text.json"))
    bare = AIFunctionDeclaration("get_time")
    await chat.get_response("Hi", ChatOptions(tools=[WEATHER, bare]))
    assert wire.sent(route)["tools"] == [
        WEATHER_JSON,
        {
            "type": "function",
            "function": {"name": "get_time", "parameters": {"type": "object", "properties": {}}},
        },
    ]


@pytest.mark.parametrize(
    ("mode", "tool_choice"),
    [
        (ChatToolMode.AUTO, "auto"),
        (ChatToolMode.NONE, "none"),
        (ChatToolMode.REQUIRE_ANY, "required"),
        (
            ChatToolMode.require_specific("get_weather"),
            {"type": "function", "function": {"name": "get_weather"}},
        ),
    ],
    ids=["auto", "none", "required", "specific"],
)
async def test_tool_mode_is_sent_as_tool_choice(
    chat: OpenAIChatClient, wire: Wire, mode: ChatToolMode, tool_choice: object
) -> None:
    route = wire.serve(wire.json("completion_text.json"))
    await chat.get_response("Hi", ChatOptions(tools=[WEATHER], tool_mode=mode))
    assert wire.sent(route)["tool_choice"] == tool_choice


async def test_allow_multiple_tool_calls_is_sent_as_parallel_tool_calls(
    chat: OpenAIChatClient, wire: Wire
) -> None:
    route = wire.serve(wire.json("completion_text.json"))
    await chat.get_response("Hi", ChatOptions(tools=[WEATHER], allow_multiple_tool_calls=False))
    assert wire.sent(route)["parallel_tool_calls"] is False


async def test_tool_choice_and_parallel_tool_calls_are_left_out_without_tools(
    chat: OpenAIChatClient, wire: Wire
) -> None:
    route = wire.serve(wire.json("completion_text.json"))
    await chat.get_response(
        "Hi", ChatOptions(tool_mode=ChatToolMode.REQUIRE_ANY, allow_multiple_tool_calls=True)
    )
    sent = wire.sent(route)
    assert "tool_choice" not in sent
    assert "parallel_tool_calls" not in sent
    assert "tools" not in sent


async def test_a_tool_that_is_not_a_function_is_refused(chat: OpenAIChatClient, wire: Wire) -> None:
    class WebSearch(AITool):
        def __init__(self) -> None:
            self.name = "web_search"
            self.description = ""
            self.additional_properties = {}

    route = wire.serve(wire.json("completion_text.json"))
    with pytest.raises(ToolError, match="'web_search' \\(WebSearch\\) cannot be sent"):
        await chat.get_response("Hi", ChatOptions(tools=[WebSearch()]))
    assert not route.called


async def test_a_stream_asks_for_usage(chat: OpenAIChatClient, wire: Wire) -> None:
    route = wire.serve(wire.sse("stream_text.sse"))
    async for _ in chat.get_streaming_response("Hi"):
        pass
    sent = wire.sent(route)
    assert sent["stream"] is True
    assert sent["stream_options"] == {"include_usage": True}


async def test_stream_usage_false_leaves_out_stream_options(
    sdk: openai.AsyncOpenAI, wire: Wire
) -> None:
    route = wire.serve(wire.sse("stream_text.sse"))
    chat = OpenAIChatClient("gpt-4o-mini", client=sdk, stream_usage=False)
    async for _ in chat.get_streaming_response("Hi"):
        pass
    assert "stream_options" not in wire.sent(route)
