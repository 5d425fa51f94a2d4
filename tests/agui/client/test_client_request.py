"""What AGUIChatClient sends: the RunAgentInput, field by field, and the headers."""

from __future__ import annotations

from typing import Any

from ag_ui.core import RunAgentInput
from agui_client_support import Agent, run, text

from agui_chat import (
    AIFunctionDeclaration,
    ChatMessage,
    ChatOptions,
    DataContent,
    ErrorContent,
    FunctionCallContent,
    FunctionResultContent,
    InterruptRequestContent,
    InterruptResponseContent,
    TextContent,
    TextReasoningContent,
    ToolApprovalRequestContent,
    ToolApprovalResponseContent,
    UriContent,
)
from meai_texts import FAILED


def reply(body: dict[str, Any]) -> list[dict[str, Any]]:
    return run(body, text("a1", "ok"))


async def send(messages: Any, options: ChatOptions | None = None) -> dict[str, Any]:
    """The RunAgentInput the client sends for ``messages`` (validated by ag-ui 1.0)."""
    agent = Agent(reply)
    async with agent.client() as client:
        await client.get_response(messages, options)
    RunAgentInput.model_validate(agent.last)
    return agent.last


async def test_a_first_turn_sends_every_run_input_field_in_camel_case() -> None:
    body = await send(
        [ChatMessage("user", "hi", message_id="u1")], ChatOptions(conversation_id="t1")
    )

    run_id = body.pop("runId")
    assert run_id.startswith("run_")
    assert body == {
        "threadId": "t1",
        "state": {},
        "messages": [{"id": "u1", "role": "user", "content": "hi"}],
        "tools": [],
        "context": [],
        "forwardedProps": {},
        "protocolVersion": "1.0",
    }


async def test_headers_ask_for_server_sent_events_only_and_send_json() -> None:
    agent = Agent(reply)
    async with agent.client(headers={"Authorization": "Bearer k", "Accept": "*/*"}) as client:
        await client.get_response("hi")

    headers = agent.requests[0].headers
    assert headers["accept"] == "text/event-stream"
    assert headers["content-type"] == "application/json"
    assert headers["authorization"] == "Bearer k"
    assert agent.requests[0].method == "POST"
    assert str(agent.requests[0].url) == "http://agent.test/run"


async def test_every_run_gets_a_new_run_id() -> None:
    agent = Agent(reply, reply)
    async with agent.client() as client:
        await client.get_response("one", ChatOptions(conversation_id="t"))
        await client.get_response("two", ChatOptions(conversation_id="t"))

    assert agent.bodies[0]["runId"] != agent.bodies[1]["runId"]


async def test_user_text_data_and_uri_contents_become_content_parts() -> None:
    png = DataContent(b"\x89PNG", media_type="image/png", name="cat.png")
    body = await send(
        [
            ChatMessage(
                "user",
                [
                    TextContent("look"),
                    png,
                    UriContent("https://x.test/a.mp3", media_type="audio/mpeg"),
                    DataContent(b"%PDF", media_type="application/pdf"),
                ],
                message_id="u1",
                author_name="ana",
            )
        ]
    )

    assert body["messages"] == [
        {
            "id": "u1",
            "role": "user",
            "content": [
                {"type": "text", "text": "look"},
                {
                    "type": "image",
                    "source": {"type": "data", "value": "iVBORw==", "mimeType": "image/png"},
                    "metadata": {"filename": "cat.png"},
                },
                {
                    "type": "audio",
                    "source": {
                        "type": "url",
                        "value": "https://x.test/a.mp3",
                        "mimeType": "audio/mpeg",
                    },
                },
                {
                    "type": "document",
                    "source": {"type": "data", "value": "JVBERg==", "mimeType": "application/pdf"},
                },
            ],
            "name": "ana",
        }
    ]


async def test_assistant_text_and_calls_become_one_message_with_tool_calls() -> None:
    body = await send(
        [
            ChatMessage("user", "weather?", message_id="u1"),
            ChatMessage(
                "assistant",
                [
                    TextContent("Checking."),
                    FunctionCallContent("c1", "weather", {"city": "Oslo"}),
                    FunctionCallContent("c2", "time", {}),
                ],
                message_id="a1",
            ),
        ]
    )

    assert body["messages"][1] == {
        "id": "a1",
        "role": "assistant",
        "content": "Checking.",
        "toolCalls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "weather", "arguments": '{"city":"Oslo"}'},
            },
            {"id": "c2", "type": "function", "function": {"name": "time", "arguments": "{}"}},
        ],
    }


async def test_each_function_result_becomes_its_own_tool_message() -> None:
    body = await send(
        [
            ChatMessage("user", "go", message_id="u1"),
            ChatMessage(
                "assistant",
                [FunctionCallContent("c1", "a", {}), FunctionCallContent("c2", "b", {})],
                message_id="a1",
            ),
            ChatMessage(
                "tool",
                [
                    FunctionResultContent("c1", "sunny"),
                    FunctionResultContent("c2", {"n": 1, "ok": True}),
                ],
                message_id="t1",
            ),
        ]
    )

    assert body["messages"][2:] == [
        {"id": "t1-c1", "role": "tool", "toolCallId": "c1", "content": "sunny"},
        {"id": "t1-c2", "role": "tool", "toolCallId": "c2", "content": '{"n":1,"ok":true}'},
    ]


async def test_a_failed_tool_result_carries_its_error() -> None:
    body = await send(
        [
            ChatMessage("assistant", [FunctionCallContent("c1", "a", {})], message_id="a1"),
            ChatMessage(
                "tool",
                [FunctionResultContent("c1", FAILED, exception=KeyError("x"))],
                message_id="t1",
            ),
        ]
    )

    assert body["messages"][1] == {
        "id": "t1",
        "role": "tool",
        "toolCallId": "c1",
        "content": FAILED,
        "error": "'x'",
    }


async def test_reasoning_is_sent_as_a_reasoning_message_with_its_encrypted_value() -> None:
    body = await send(
        [
            ChatMessage(
                "assistant",
                [TextReasoningContent("thinking", protected_data="opaque==")],
                message_id="r1",
            ),
            ChatMessage("assistant", "answer", message_id="a1"),
        ]
    )

    assert body["messages"] == [
        {"id": "r1", "role": "reasoning", "content": "thinking", "encryptedValue": "opaque=="},
        {"id": "a1", "role": "assistant", "content": "answer"},
    ]


async def test_system_and_developer_messages_keep_their_roles() -> None:
    body = await send(
        [
            ChatMessage("system", "be brief", message_id="s1"),
            ChatMessage("developer", "use metric", message_id="d1"),
        ]
    )

    assert body["messages"] == [
        {"id": "s1", "role": "system", "content": "be brief"},
        {"id": "d1", "role": "developer", "content": "use metric"},
    ]


async def test_instructions_become_a_leading_system_message() -> None:
    body = await send(
        [ChatMessage("user", "hi", message_id="u1")], ChatOptions(instructions="Be kind.")
    )

    first = body["messages"][0]
    assert first["role"] == "system"
    assert first["content"] == "Be kind."
    assert body["messages"][1]["id"] == "u1"


async def test_messages_without_ids_get_the_same_id_every_time_they_are_sent() -> None:
    history = [ChatMessage("user", "hi"), ChatMessage("assistant", "hello")]

    first = await send(history)
    second = await send(history)

    ids = [m["id"] for m in first["messages"]]
    assert ids == [m["id"] for m in second["messages"]]
    assert len(set(ids)) == 2


async def test_human_in_the_loop_contents_are_not_messages_on_the_wire() -> None:
    call = FunctionCallContent("c1", "delete", {"path": "a"})
    question = InterruptRequestContent("q1", message="Which?")
    body = await send(
        [
            ChatMessage("user", "go", message_id="u1"),
            ChatMessage(
                "assistant",
                [ToolApprovalRequestContent("ficc_c1", call), question],
                message_id="a1",
            ),
            ChatMessage(
                "user",
                [
                    ToolApprovalResponseContent("ficc_c1", True, call),
                    InterruptResponseContent("q1", "blue"),
                ],
                message_id="u2",
            ),
            ChatMessage("assistant", [ErrorContent("boom")], message_id="e1"),
        ]
    )

    assert body["messages"] == [
        {"id": "u1", "role": "user", "content": "go"},
        {
            "id": "a1",
            "role": "assistant",
            "toolCalls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "delete", "arguments": '{"path":"a"}'},
                }
            ],
        },
    ]


async def test_a_tool_call_that_appears_twice_is_sent_once() -> None:
    call = FunctionCallContent("c1", "delete", {"path": "a"})
    body = await send(
        [
            ChatMessage("assistant", [call], message_id="a1"),
            ChatMessage("assistant", [ToolApprovalRequestContent("i1", call)], message_id="a2"),
        ]
    )

    assert body["messages"] == [
        {
            "id": "a1",
            "role": "assistant",
            "toolCalls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "delete", "arguments": '{"path":"a"}'},
                }
            ],
        }
    ]


async def test_activity_messages_are_never_sent() -> None:
    body = await send(
        [
            ChatMessage("user", "hi", message_id="u1"),
            ChatMessage("activity", "progress", message_id="act1"),
        ]
    )

    assert [m["id"] for m in body["messages"]] == ["u1"]


async def test_function_declarations_are_advertised_as_tools() -> None:
    lookup = AIFunctionDeclaration(
        "lookup",
        "Look a word up.",
        {"type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"]},
    )
    body = await send("hi", ChatOptions(tools=[lookup]))

    assert body["tools"] == [
        {
            "name": "lookup",
            "description": "Look a word up.",
            "parameters": {
                "type": "object",
                "properties": {"word": {"type": "string"}},
                "required": ["word"],
            },
        }
    ]


async def test_options_set_context_forwarded_props_state_and_parent_run() -> None:
    options = ChatOptions(
        additional_properties={
            "agui_context": [{"description": "user tz", "value": "Europe/Oslo"}],
            "agui_forwarded_props": {"mode": "fast"},
            "agui_state": {"cart": [1]},
            "agui_parent_run_id": "run_parent",
        }
    )
    body = await send("hi", options)

    assert body["context"] == [{"description": "user tz", "value": "Europe/Oslo"}]
    assert body["forwardedProps"] == {"mode": "fast"}
    assert body["state"] == {"cart": [1]}
    assert body["parentRunId"] == "run_parent"


async def test_a_pinned_old_peer_is_not_sent_a_protocol_version() -> None:
    agent = Agent(reply)
    async with agent.client(peer_max_version="0.0.45") as client:
        await client.get_response("hi")

    assert "protocolVersion" not in agent.last


async def test_pieces_of_one_message_are_joined_when_sent_back() -> None:
    interleaved = [
        {"type": "TEXT_MESSAGE_START", "messageId": "m1"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "a"},
        {"type": "TEXT_MESSAGE_START", "messageId": "m2"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m2", "delta": "x"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "b"},
        {"type": "TEXT_MESSAGE_END", "messageId": "m1"},
        {"type": "TEXT_MESSAGE_END", "messageId": "m2"},
    ]
    agent = Agent(lambda b: run(b, interleaved), reply)
    async with agent.client() as client:
        response = await client.get_response("hi")
        assert [m.message_id for m in response.messages] == ["m1", "m2", "m1"]
        await client.get_response(response.messages)

    assert agent.last["messages"] == [
        {"id": "m1", "role": "assistant", "content": "ab"},
        {"id": "m2", "role": "assistant", "content": "x"},
    ]
