"""The checks every server stream goes through in these tests can fail, the server factory
sends what it says, and the MEAI texts the tests expect follow MEAI's rule."""

from __future__ import annotations

import pytest
from server_support import (
    Tools,
    approve,
    assert_valid_agui,
    history_from,
    scripted,
    sse_events,
    user,
)

from agui_chat import FunctionCallContent
from agui_chat.stores import InMemoryApprovalStore
from agui_server import agui_server
from meai_texts import rejected


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


# -- the server factory and MEAI's texts ---------------------------------------------------------


async def test_pause_fails_a_run_that_did_not_pause() -> None:
    agent = agui_server(scripted("Nothing to approve."))
    with pytest.raises(AssertionError, match="success"):
        await agent.pause(user("hi"))


async def test_the_history_of_a_pause_is_what_was_sent_then_what_the_run_added(
    tools: Tools,
) -> None:
    agent = agui_server(
        scripted([FunctionCallContent("c1", "delete_file", {"path": "a.txt"})], "Deleted."),
        tools=[tools.delete_file()],
    )
    paused = await agent.pause(user("delete a.txt"), thread="t9")
    assert paused.events[0]["threadId"] == "t9"
    assert paused.history == [user("delete a.txt"), *history_from(paused.events)]
    assert [i["toolCallId"] for i in paused.interrupts] == ["c1"]
    resumed = await agent.resume(paused.history, approve(paused.interrupts[0]), thread="t9")
    assert resumed[0]["runId"] == "r2"
    assert tools.runs["delete_file"] == [{"path": "a.txt"}]
    # The same answer sent again runs nothing twice.
    again = await agent.resume(paused.history, approve(paused.interrupts[0]), run="r3", thread="t9")
    assert "TOOL_CALL_START" not in [e["type"] for e in again]
    assert tools.count("delete_file") == 1


def test_a_store_with_its_own_clock_and_the_clock_option_are_not_both_taken() -> None:
    with pytest.raises(ValueError, match="clock"):
        agui_server(scripted(), approval_store=InMemoryApprovalStore(), clock=lambda: 0.0)


@pytest.mark.parametrize(
    ("reason", "text"),
    [
        (None, "Tool call invocation rejected."),
        ("", "Tool call invocation rejected."),
        ("   ", "Tool call invocation rejected."),
        ("keep it", "Tool call invocation rejected. keep it"),
        ("rm -rf is not allowed", "Tool call invocation rejected. rm -rf is not allowed"),
        (" Not now! ", "Tool call invocation rejected.  Not now! "),
    ],
)
def test_rejected_appends_the_reason_verbatim_as_meai_does(reason: str | None, text: str) -> None:
    assert rejected(reason) == text
