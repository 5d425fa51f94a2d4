"""LoggingChatClient: counts and timings at INFO, message text only at DEBUG."""

from __future__ import annotations

import logging

import pytest

from agui_chat import ChatClientBuilder, ChatMessage, LoggingChatClient, RateLimitError
from agui_chat.testing import ScriptedChatClient

SECRET_IN = "my password is hunter2"
SECRET_OUT = "your card number is 4111"


def _client() -> LoggingChatClient:
    return LoggingChatClient(ScriptedChatClient(lambda m, o: SECRET_OUT))


def _logged(caplog: pytest.LogCaptureFixture) -> str:
    return "\n".join(r.getMessage() for r in caplog.records)


async def test_info_logs_the_call_without_message_text(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="agui_chat")
    await _client().get_response([ChatMessage("user", SECRET_IN)])
    text = _logged(caplog)
    assert "get_response" in text
    assert "1 message(s)" in text
    assert "hunter2" not in text
    assert "4111" not in text


async def test_info_streaming_logs_counts_without_message_text(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="agui_chat")
    _ = [u async for u in _client().get_streaming_response(SECRET_IN)]
    text = _logged(caplog)
    assert "get_streaming_response completed" in text
    assert "finish reason stop" in text
    assert "hunter2" not in text
    assert "4111" not in text


async def test_debug_logs_the_message_text(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="agui_chat")
    await _client().get_response(SECRET_IN)
    text = _logged(caplog)
    assert "hunter2" in text
    assert "4111" in text


async def test_debug_streaming_logs_the_request_text(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="agui_chat")
    _ = [u async for u in _client().get_streaming_response(SECRET_IN)]
    assert "hunter2" in _logged(caplog)


async def test_a_failure_is_logged_by_type_and_raised(caplog: pytest.LogCaptureFixture) -> None:
    def fail(messages: list[ChatMessage], options: object) -> str:
        raise RateLimitError(f"slow down: {SECRET_IN}", status_code=429)

    caplog.set_level(logging.INFO, logger="agui_chat")
    with pytest.raises(RateLimitError):
        await LoggingChatClient(ScriptedChatClient(fail)).get_response(SECRET_IN)  # type: ignore[arg-type]
    failures = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(failures) == 1
    assert "RateLimitError" in failures[0].getMessage()
    assert "hunter2" not in _logged(caplog)


async def test_use_logging_takes_a_custom_logger(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="my.app")
    client = (
        ChatClientBuilder(ScriptedChatClient(lambda m, o: "x"))
        .use_logging(logging.getLogger("my.app"))
        .build()
    )
    await client.get_response("hi")
    assert any(r.name == "my.app" for r in caplog.records)
