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


def test_a_stream_that_is_one_run_error_passes_and_nothing_more_is_exempt() -> None:
    """A refused resume is a stream that opens with RUN_ERROR (agui-wire §5.1, §5.4); only
    that one-event shape is exempt from ag-ui-validate's AGUI001 (§8.4), and it is still
    checked for a message and a code."""
    assert_valid_agui([{"type": "RUN_ERROR", "message": "no", "code": "RESUME_INCOMPLETE"}])
    for bad in (
        {"type": "RUN_ERROR", "message": "no"},
        {"type": "RUN_ERROR", "message": "", "code": "X"},
        {"type": "RUN_ERROR", "message": "no", "code": "X", "threadId": "t"},
    ):
        with pytest.raises(AssertionError):
            assert_valid_agui([bad])
    with pytest.raises(AssertionError, match="AGUI001"):
        assert_valid_agui(
            [
                {"type": "RUN_ERROR", "message": "no", "code": "X"},
                {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"},
            ]
        )
