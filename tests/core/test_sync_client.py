"""SyncChatClient: any chat client from plain synchronous code."""

from __future__ import annotations

import pytest

from agui_chat import ChatMessage, ChatOptions, SyncChatClient
from agui_chat.testing import ScriptedChatClient


def _echo(messages: list[ChatMessage], options: ChatOptions | None) -> str:
    return f"you said {messages[-1].text}"


def test_get_response_blocks_and_returns_the_response() -> None:
    with SyncChatClient(ScriptedChatClient(_echo)) as chat:
        assert chat.get_response("hello").text == "you said hello"


def test_streaming_response_is_a_plain_iterator_of_updates() -> None:
    with SyncChatClient(ScriptedChatClient(_echo)) as chat:
        updates = list(chat.get_streaming_response("a b"))
    texts = [u.text for u in updates if u.text]
    assert len(texts) > 1
    assert "".join(texts) == "you said a b"


def test_a_sync_chat_loop_keeps_the_history() -> None:
    model = ScriptedChatClient(lambda messages, options: f"{len(messages)} message(s)")
    history: list[ChatMessage] = []
    with SyncChatClient(model) as chat:
        for line in ["hi", "again"]:
            history.append(ChatMessage("user", line))
            history += chat.get_response(history).messages
    assert [m.text for m in history] == ["hi", "1 message(s)", "again", "3 message(s)"]


def test_leaving_a_stream_early_closes_it() -> None:
    with SyncChatClient(ScriptedChatClient(lambda m, o: "one two three")) as chat:
        stream = chat.get_streaming_response("q")
        first = next(stream)
        stream.close()  # type: ignore[attr-defined]
        assert first.text == "one "
        assert chat.get_response("again").text == "one two three"


async def test_it_works_while_another_event_loop_is_running() -> None:
    with SyncChatClient(ScriptedChatClient(_echo)) as chat:
        assert chat.get_response("inside").text == "you said inside"


def test_close_closes_the_wrapped_client_and_refuses_further_calls() -> None:
    closed: list[bool] = []

    class Closable(ScriptedChatClient):
        async def aclose(self) -> None:
            closed.append(True)

    chat = SyncChatClient(Closable(_echo))
    chat.close()
    assert closed == [True]
    with pytest.raises(RuntimeError, match="closed"):
        chat.get_response("x")
