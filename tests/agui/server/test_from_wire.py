"""RunAgentInput messages and tools, posted to an ``AGUIServer``, as the model receives them:
ChatMessages and declaration-only tools."""

from __future__ import annotations

from typing import Any

import pytest

from agui_chat import (
    AIFunctionDeclaration,
    ChatMessage,
    ChatOptions,
    DataContent,
    FunctionCallContent,
    FunctionResultContent,
    TextContent,
    TextReasoningContent,
    UriContent,
)
from agui_server import agui_server
from agui_streams import SideEffects, run_input, scripted


async def received(body: dict[str, Any]) -> tuple[list[ChatMessage], ChatOptions | None]:
    """What the model got for one run of ``body`` posted to a server."""
    model = scripted("ok")
    await agui_server(model, tools=[SideEffects().delete_file()]).post(body)
    ((messages, options),) = model.calls
    return messages, options


async def convert(*messages: dict[str, Any]) -> list[ChatMessage]:
    return (await received(run_input(*messages)))[0]


async def refusal(body: dict[str, Any]) -> dict[str, Any]:
    """The 422 body the server answers ``body`` with."""
    async with agui_server(scripted()).client() as client:
        response = await client.post("/", json=body)
    assert response.status_code == 422, response.text
    refused: dict[str, Any] = response.json()
    return refused


def call(call_id: str, name: str = "f", arguments: str = "{}") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


async def test_user_text_becomes_a_user_message_with_its_id_and_name() -> None:
    (message,) = await convert({"id": "u1", "role": "user", "content": "hi", "name": "ana"})
    assert (message.role.value, message.text, message.message_id, message.author_name) == (
        "user",
        "hi",
        "u1",
        "ana",
    )


async def test_system_and_developer_messages_keep_their_roles() -> None:
    messages = await convert(
        {"id": "s", "role": "system", "content": "be brief"},
        {"id": "d", "role": "developer", "content": "x"},
    )
    assert [m.role.value for m in messages] == ["system", "developer"]


async def test_assistant_tool_calls_become_function_calls_with_parsed_arguments() -> None:
    (message,) = await convert(
        {
            "id": "a1",
            "role": "assistant",
            "content": "Let me look.",
            "toolCalls": [call("c1", "lookup", '{"city":"Rome"}')],
        }
    )
    text, function_call = message.contents
    assert isinstance(text, TextContent) and text.text == "Let me look."
    assert isinstance(function_call, FunctionCallContent)
    assert (function_call.call_id, function_call.name, function_call.arguments) == (
        "c1",
        "lookup",
        {"city": "Rome"},
    )


async def test_arguments_that_are_not_json_are_kept_as_text() -> None:
    (message,) = await convert(
        {"id": "a1", "role": "assistant", "toolCalls": [call("c1", "f", "{oops")]}
    )
    (function_call,) = message.contents
    assert function_call.arguments is None and function_call.raw_arguments == "{oops"


async def test_consecutive_assistant_tool_call_messages_are_merged() -> None:
    messages = await convert(
        {"id": "u", "role": "user", "content": "both"},
        {"id": "a1", "role": "assistant", "toolCalls": [call("c1")]},
        {"id": "a2", "role": "assistant", "toolCalls": [call("c2")]},
        {"id": "t1", "role": "tool", "toolCallId": "c1", "content": "one"},
        {"id": "t2", "role": "tool", "toolCallId": "c2", "content": "two"},
    )
    assert [m.role.value for m in messages] == ["user", "assistant", "tool", "tool"]
    assert [c.call_id for c in messages[1].contents] == ["c1", "c2"]


async def test_assistant_messages_without_calls_are_not_merged() -> None:
    messages = await convert(
        {"id": "a1", "role": "assistant", "content": "one"},
        {"id": "a2", "role": "assistant", "content": "two"},
    )
    assert [m.text for m in messages] == ["one", "two"]


async def test_tool_messages_become_function_results_and_keep_their_error() -> None:
    ok, failed = await convert(
        {
            "id": "t1",
            "role": "tool",
            "toolCallId": "c1",
            "content": [{"type": "text", "text": "fine"}],
        },
        {"id": "t2", "role": "tool", "toolCallId": "c2", "content": "", "error": "timed out"},
    )
    (result,) = ok.contents
    assert isinstance(result, FunctionResultContent) and (result.call_id, result.result) == (
        "c1",
        "fine",
    )
    assert failed.contents[0].result == "timed out"
    assert failed.additional_properties == {"agui_error": "timed out"}


async def test_a_reasoning_message_becomes_reasoning_with_its_encrypted_value() -> None:
    (reasoning,) = await convert(
        {"id": "r1", "role": "reasoning", "content": "thinking", "encryptedValue": "enc-r"}
    )
    (thought,) = reasoning.contents
    assert isinstance(thought, TextReasoningContent)
    assert (reasoning.role.value, thought.text, thought.protected_data) == (
        "assistant",
        "thinking",
        "enc-r",
    )


async def test_encrypted_values_of_assistant_messages_and_calls_become_protected_reasoning() -> (
    None
):
    (answer,) = await convert(
        {
            "id": "a1",
            "role": "assistant",
            "content": "hi",
            "encryptedValue": "enc-a",
            "toolCalls": [{**call("c1"), "encryptedValue": "enc-c"}],
        }
    )
    on_message, text, on_call, function_call = answer.contents
    assert isinstance(text, TextContent) and isinstance(function_call, FunctionCallContent)
    assert isinstance(on_message, TextReasoningContent) and on_message.protected_data == "enc-a"
    assert on_message.additional_properties == {
        "agui_encrypted_for": {"subtype": "message", "entityId": "a1"}
    }
    assert isinstance(on_call, TextReasoningContent) and on_call.protected_data == "enc-c"
    assert on_call.additional_properties == {
        "agui_encrypted_for": {"subtype": "tool-call", "entityId": "c1"}
    }


async def test_the_encrypted_value_of_a_user_message_is_kept_on_the_message() -> None:
    (message,) = await convert(
        {"id": "u1", "role": "user", "content": "hi", "encryptedValue": "enc-u"}
    )
    assert message.additional_properties == {"agui_encrypted_value": "enc-u"}


async def test_media_parts_become_data_and_uri_contents() -> None:
    (message,) = await convert(
        {
            "id": "u1",
            "role": "user",
            "content": [
                {
                    "type": "image",
                    "source": {"type": "data", "value": "aGk=", "mimeType": "image/png"},
                },
                {
                    "type": "document",
                    "source": {
                        "type": "url",
                        "value": "https://x.test/a.pdf",
                        "mimeType": "application/pdf",
                    },
                },
                {
                    "type": "audio",
                    "source": {"type": "file", "value": "file-123", "provider": "openai"},
                },
            ],
        }
    )
    data, url, file = message.contents
    assert isinstance(data, DataContent) and (data.data, data.media_type) == (b"hi", "image/png")
    assert isinstance(url, UriContent) and (url.uri, url.media_type) == (
        "https://x.test/a.pdf",
        "application/pdf",
    )
    assert isinstance(file, UriContent) and file.uri == "file-123"
    assert file.additional_properties == {"agui_source": "file", "agui_provider": "openai"}


async def test_activity_messages_are_dropped() -> None:
    messages = await convert(
        {"id": "x", "role": "activity", "activityType": "progress", "content": {}},
        {"id": "u", "role": "user", "content": "hi"},
    )
    assert [m.message_id for m in messages] == ["u"]


async def test_a_message_that_cannot_be_converted_is_an_input_error_naming_it() -> None:
    refused = await refusal(
        run_input(
            {"id": "u", "role": "user", "content": "hi"},
            {"id": "a", "role": "assistant", "toolCalls": [call("")]},
        )
    )
    assert refused["code"] == "INVALID_INPUT"
    assert refused["errors"][0]["field"] == "messages[1]"


async def test_client_tools_are_declarations_and_server_names_win() -> None:
    tools = [
        {
            "name": "local_time",
            "description": "Time here.",
            "parameters": {"type": "object", "properties": {"tz": {"type": "string"}}},
        },
        {"name": "delete_file", "description": "Pretend.", "parameters": {}},
    ]
    _, options = await received(run_input(tools=tools))
    assert options is not None and options.tools is not None
    server_tool, declared = options.tools
    assert server_tool.name == "delete_file" and type(server_tool) is not AIFunctionDeclaration
    assert type(declared) is AIFunctionDeclaration
    assert declared.name == "local_time" and declared.description == "Time here."
    assert declared.parameters["properties"] == {"tz": {"type": "string"}}


async def test_unknown_members_of_the_input_are_stripped_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # agui-wire §2 and §5.3: unknown members are stripped with a warning, not refused.
    body = {
        "threadId": "t",
        "runId": "r",
        "futureField": {"x": 1},
        "messages": [
            {"id": "u1", "role": "user", "content": "hi"},
            {"id": "n1", "role": "narrator", "content": "meanwhile"},
            {
                "id": "u2",
                "role": "user",
                "content": [
                    {"type": "text", "text": "look"},
                    {"type": "hologram", "source": {"type": "url", "value": "http://x/"}},
                    {"type": "image", "source": {"type": "ipfs", "value": "Qm"}},
                ],
            },
        ],
    }
    messages, _ = await received(body)
    assert [(m.message_id, m.text) for m in messages] == [("u1", "hi"), ("u2", "look")]
    warnings = " ".join(r.getMessage() for r in caplog.records if r.levelname == "WARNING")
    for named in ("/futureField", "'narrator'", "'hologram'", "'ipfs'"):
        assert named in warnings


async def test_a_malformed_role_is_still_refused_naming_the_message() -> None:
    refused = await refusal(
        {"threadId": "t", "runId": "r", "messages": [{"id": "u1", "role": 7, "content": "x"}]}
    )
    assert "messages[0]" in refused["message"]


async def test_unknown_members_of_a_message_are_stripped_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    message = {"id": "u1", "role": "user", "content": "hi", "mood": "sunny"}
    messages, _ = await received({"threadId": "t", "runId": "r", "messages": [message]})
    assert [(m.message_id, m.text) for m in messages] == [("u1", "hi")]
    assert "stripped unknown property /messages/0/mood" in caplog.text
