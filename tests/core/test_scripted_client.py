"""ScriptedChatClient: the offline model users and our own tests script."""

from __future__ import annotations

import pytest

from agui_chat import (
    ChatClient,
    ChatFinishReason,
    ChatMessage,
    ChatOptions,
    ChatResponse,
    ChatRole,
    FunctionCallContent,
    TextContent,
    UsageContent,
    UsageDetails,
)
from agui_chat.testing import ScriptedChatClient


def test_it_is_a_chat_client() -> None:
    assert isinstance(ScriptedChatClient(lambda m, o: "x"), ChatClient)


async def test_sync_handler_str_reply_becomes_an_assistant_message() -> None:
    client = ScriptedChatClient(lambda messages, options: "Hi there")
    response = await client.get_response("Hello")
    assert len(response.messages) == 1
    assert response.messages[0].role == ChatRole.ASSISTANT
    assert response.text == "Hi there"
    assert response.finish_reason == ChatFinishReason.STOP
    assert response.model_id == "scripted"
    assert response.response_id


async def test_async_handler_is_awaited() -> None:
    async def handler(messages: list[ChatMessage], options: ChatOptions | None) -> str:
        return f"echo {messages[-1].text}"

    assert (await ScriptedChatClient(handler).get_response("ping")).text == "echo ping"


async def test_list_of_contents_reply_becomes_one_message() -> None:
    call = FunctionCallContent("c1", "lookup", {"q": "x"})
    response = await ScriptedChatClient(
        lambda m, o: [TextContent("Let me check."), call]
    ).get_response("q")
    assert response.messages[0].contents == [TextContent("Let me check."), call]


async def test_chat_message_reply_is_kept_with_its_author() -> None:
    reply = ChatMessage("assistant", "signed", author_name="bot", message_id="m7")
    response = await ScriptedChatClient(lambda m, o: reply).get_response("q")
    assert response.messages[0].author_name == "bot"
    assert response.messages[0].message_id == "m7"


async def test_chat_response_reply_keeps_its_fields() -> None:
    reply = ChatResponse(
        [ChatMessage("assistant", "cut")],
        response_id="r9",
        finish_reason=ChatFinishReason.LENGTH,
        usage=UsageDetails(output_token_count=5),
    )
    response = await ScriptedChatClient(lambda m, o: reply).get_response("q")
    assert response.response_id == "r9"
    assert response.finish_reason == ChatFinishReason.LENGTH
    assert response.usage == UsageDetails(output_token_count=5)


async def test_an_unsupported_reply_is_a_type_error_naming_it() -> None:
    with pytest.raises(TypeError, match="got int"):
        await ScriptedChatClient(lambda m, o: 42).get_response("q")  # type: ignore[arg-type,return-value]


def test_handler_must_be_callable() -> None:
    with pytest.raises(TypeError, match="handler must be a callable"):
        ScriptedChatClient("hello")  # type: ignore[arg-type]


async def test_streaming_splits_text_into_several_updates_of_one_message() -> None:
    client = ScriptedChatClient(lambda m, o: "one two three four")
    updates = [u async for u in client.get_streaming_response("q")]
    text_updates = [u for u in updates if u.text]
    assert len(text_updates) == 4
    assert "".join(u.text for u in text_updates) == "one two three four"
    assert len({u.message_id for u in text_updates}) == 1
    assert updates[-1].finish_reason == ChatFinishReason.STOP


async def test_streaming_sends_other_contents_whole() -> None:
    call = FunctionCallContent("c1", "lookup", {"q": "x"})
    updates = [u async for u in ScriptedChatClient(lambda m, o: [call]).get_streaming_response("q")]
    calls = [c for u in updates for c in u.contents if isinstance(c, FunctionCallContent)]
    assert calls == [call]


async def test_streaming_joined_equals_the_whole_response() -> None:
    reply = ChatResponse(
        [ChatMessage("assistant", "a b c")], usage=UsageDetails(input_token_count=2)
    )
    client = ScriptedChatClient(lambda m, o: reply)
    updates = [u async for u in client.get_streaming_response("q")]
    joined = ChatResponse.from_updates(updates)
    assert joined.text == "a b c"
    assert joined.usage == UsageDetails(input_token_count=2)
    assert any(isinstance(c, UsageContent) for u in updates for c in u.contents)


async def test_calls_records_what_each_call_received() -> None:
    client = ScriptedChatClient(lambda m, o: "ok")
    options = ChatOptions(temperature=0.1)
    await client.get_response("first")
    _ = [u async for u in client.get_streaming_response([ChatMessage("user", "second")], options)]
    assert len(client.calls) == 2
    assert [m.text for m in client.calls[0][0]] == ["first"]
    assert client.calls[0][1] is None
    assert [m.text for m in client.calls[1][0]] == ["second"]
    assert client.calls[1][1] is options


async def test_the_handler_sees_the_history_as_messages() -> None:
    seen: list[list[ChatMessage]] = []

    def handler(messages: list[ChatMessage], options: ChatOptions | None) -> str:
        seen.append(messages)
        return "ok"

    history = [ChatMessage("system", "be kind"), ChatMessage("user", "hi")]
    await ScriptedChatClient(handler).get_response(history)
    assert [(m.role, m.text) for m in seen[0]] == [("system", "be kind"), ("user", "hi")]
