"""The checks every server stream goes through in these tests can fail."""

from __future__ import annotations

import pytest
from server_support import assert_valid_agui, sse_events


def test_a_stream_that_breaks_the_protocol_fails_validation() -> None:
    events = [
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "orphan"},
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
    ]
    with pytest.raises(AssertionError, match="AGUI101"):
        assert_valid_agui(events)


def test_a_result_for_an_unknown_call_fails_unless_the_run_is_a_resume() -> None:
    events = [
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
        {"type": "TOOL_CALL_RESULT", "messageId": "m", "toolCallId": "c1", "content": "x"},
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
    ]
    with pytest.raises(AssertionError, match="AGUI207"):
        assert_valid_agui(events)
    assert_valid_agui(events, resumed=True)


@pytest.mark.parametrize(
    "body",
    [b'data: {"a":1}\r\n\r\n', b'data: {"a":1}\ndata: {"b":2}\n\n', b'data: {"a":1}\n', b"{}\n\n"],
)
def test_bad_sse_framing_is_caught(body: bytes) -> None:
    with pytest.raises(AssertionError):
        sse_events(body)


def test_comments_are_skipped() -> None:
    assert sse_events(b': keepalive\n\ndata: {"a":1}\n\n') == [{"a": 1}]
