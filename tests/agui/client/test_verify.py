"""StreamVerifier: the run state machine, streaming discipline and its run records."""

from __future__ import annotations

from typing import Any

import pytest

from agui_chat._exceptions import ProtocolError, TruncatedStreamError
from agui_chat.agui.client._verify import StreamVerifier

Event = dict[str, Any]


def started(run_id: str = "r1", thread_id: str = "t1", **extra: Any) -> Event:
    return {"type": "RUN_STARTED", "threadId": thread_id, "runId": run_id, **extra}


def finished(run_id: str = "r1", thread_id: str = "t1", **extra: Any) -> Event:
    return {"type": "RUN_FINISHED", "threadId": thread_id, "runId": run_id, **extra}


def text(kind: str, message_id: str = "m1", **extra: Any) -> Event:
    event: Event = {"type": f"TEXT_MESSAGE_{kind}", "messageId": message_id, **extra}
    if kind == "CONTENT":
        event.setdefault("delta", "x")
    return event


def tool(kind: str, call_id: str = "c1", **extra: Any) -> Event:
    event: Event = {"type": f"TOOL_CALL_{kind}", "toolCallId": call_id, **extra}
    if kind == "START":
        event.setdefault("toolCallName", "search")
    if kind == "ARGS":
        event.setdefault("delta", "{}")
    return event


def verify(*events: Event, thread_id: str | None = None) -> StreamVerifier:
    verifier = StreamVerifier(thread_id=thread_id)
    for event in events:
        verifier.verify(event)
    return verifier


def violation(*events: Event, thread_id: str | None = None) -> str:
    with pytest.raises(ProtocolError) as info:
        verify(*events, thread_id=thread_id)
    return str(info.value)


# ------------------------------------------------------------------- run lifecycle


def test_a_well_formed_run_verifies_and_finishes() -> None:
    verifier = verify(started(), text("START"), text("CONTENT"), text("END"), finished())
    verifier.finish()
    assert verifier.run_ended


def test_the_first_event_must_open_a_run() -> None:
    assert "First event must be RUN_STARTED" in violation(text("START"))


def test_a_stream_may_open_with_run_error() -> None:
    verify({"type": "RUN_ERROR", "message": "unreachable", "code": "UNAVAILABLE"}).finish()


def test_runs_do_not_nest() -> None:
    message = violation(started("r1"), started("r2"))
    assert "still active" in message and "r1" in message


def test_only_a_new_run_or_a_late_error_may_follow_run_finished() -> None:
    assert "after RUN_FINISHED" in violation(started(), finished(), text("START"))


def test_a_late_run_error_may_follow_run_finished() -> None:
    verify(started(), finished(), {"type": "RUN_ERROR", "message": "flush failed"}).finish()


def test_only_run_started_may_follow_run_error() -> None:
    message = violation(started(), {"type": "RUN_ERROR", "message": "x"}, text("START"))
    assert "after RUN_ERROR" in message


def test_a_second_late_run_error_is_rejected() -> None:
    error = {"type": "RUN_ERROR", "message": "x"}
    assert "after RUN_ERROR" in violation(started(), finished(), error, error)


def test_a_new_run_may_follow_run_error() -> None:
    verifier = verify(started("r1"), {"type": "RUN_ERROR", "message": "x"}, started("r2"))
    assert not verifier.run_ended


def test_run_finished_must_name_the_started_run() -> None:
    message = violation(started("r1"), finished("r2"))
    assert "runId 'r2'" in message and "'r1'" in message


def test_run_finished_must_carry_the_started_thread() -> None:
    assert "threadId" in violation(started(thread_id="t1"), finished(thread_id="t2"))


def test_every_run_must_carry_the_request_thread() -> None:
    message = violation(started(thread_id="other"), thread_id="t1")
    assert "thread 'other'" in message and "'t1'" in message


def test_run_error_abandons_whatever_was_open() -> None:
    verifier = verify(
        started("r1"), text("START"), {"type": "RUN_ERROR", "message": "x"}, started("r2")
    )
    verifier.verify(text("START"))  # m1 is no longer open after the error


# ------------------------------------------------------------------- truncation


def test_a_stream_that_ends_inside_a_run_is_truncated() -> None:
    verifier = verify(started(), text("START"))
    with pytest.raises(TruncatedStreamError, match="still active"):
        verifier.finish()


def test_an_empty_stream_is_truncated() -> None:
    with pytest.raises(TruncatedStreamError, match="before any"):
        StreamVerifier().finish()


# ------------------------------------------------------------------- closing everything


@pytest.mark.parametrize(
    ("opener", "what"),
    [
        (text("START"), "text messages"),
        (tool("START"), "tool calls"),
        ({"type": "REASONING_START", "messageId": "s1"}, "reasoning spans"),
        ({"type": "REASONING_MESSAGE_START", "messageId": "r1", "role": "reasoning"}, "reasoning"),
        ({"type": "STEP_STARTED", "stepName": "plan"}, "steps"),
        ({"type": "SUBAGENT_STARTED", "subagentRunId": "s1", "name": "n"}, "subagents"),
    ],
)
def test_run_finished_requires_everything_closed(opener: Event, what: str) -> None:
    message = violation(started(), opener, finished())
    assert what in message


def test_the_unclosed_items_are_named() -> None:
    assert "'m1'" in violation(started(), text("START"), finished())


# ------------------------------------------------------------------- streaming discipline


def test_content_needs_an_open_message() -> None:
    message = violation(started(), text("CONTENT", "ghost"))
    assert "no open text message" in message and "'ghost'" in message


def test_end_needs_an_open_message() -> None:
    assert "'m1'" in violation(started(), text("START"), text("END"), text("END"))


def test_starting_an_open_message_is_a_violation() -> None:
    assert "already open" in violation(started(), text("START"), text("START"))


def test_reopening_a_closed_message_is_legal() -> None:
    verify(started(), text("START"), text("END"), text("START"), text("CONTENT"), text("END"))


def test_a_reopen_must_keep_the_role() -> None:
    message = violation(
        started(), text("START", role="user"), text("END"), text("START", role="assistant")
    )
    assert "role" in message


def test_an_absent_role_on_reopen_means_assistant() -> None:
    verify(started(), text("START", role="assistant"), text("END"), text("START"))


def test_a_reopen_must_keep_the_name() -> None:
    message = violation(
        started(), text("START", name="ann"), text("END"), text("START", name="bob")
    )
    assert "name" in message


def test_messages_interleave_freely() -> None:
    verify(
        started(),
        text("START", "a"),
        text("START", "b"),
        tool("START", parentMessageId="a"),
        text("CONTENT", "a"),
        text("END", "b"),
        tool("END"),
        text("END", "a"),
        finished(),
    )


def test_tool_args_need_an_open_call() -> None:
    assert "no open tool call" in violation(started(), tool("ARGS"))


def test_reopening_a_call_must_keep_its_name() -> None:
    message = violation(started(), tool("START"), tool("END"), tool("START", toolCallName="delete"))
    assert "'delete'" in message and "'search'" in message


def test_reopening_a_closed_call_is_legal() -> None:
    verify(
        started(),
        tool("START"),
        tool("ARGS", delta='{"a":'),
        tool("END"),
        tool("START"),
        tool("ARGS", delta="1}"),
        tool("END"),
        finished(),
    ).finish()


def test_reasoning_content_needs_an_open_reasoning_message() -> None:
    message = violation(
        started(), {"type": "REASONING_MESSAGE_CONTENT", "messageId": "r", "delta": "x"}
    )
    assert "no open reasoning message" in message and "'r'" in message


def test_a_span_and_a_reasoning_message_may_share_an_id() -> None:
    verify(
        started(),
        {"type": "REASONING_START", "messageId": "x"},
        {"type": "REASONING_MESSAGE_START", "messageId": "x", "role": "reasoning"},
        {"type": "REASONING_MESSAGE_END", "messageId": "x"},
        {"type": "REASONING_END", "messageId": "x"},
        finished(),
    )


def test_a_span_id_is_not_a_reasoning_message() -> None:
    message = violation(
        started(),
        {"type": "REASONING_START", "messageId": "x"},
        {"type": "REASONING_MESSAGE_CONTENT", "messageId": "x", "delta": "d"},
    )
    assert "'x'" in message


def test_ending_an_unopened_span_is_a_violation() -> None:
    assert "reasoning span" in violation(started(), {"type": "REASONING_END", "messageId": "s"})


# ------------------------------------------------------------------- steps


def test_finishing_an_unstarted_step_is_a_violation() -> None:
    message = violation(started(), {"type": "STEP_FINISHED", "stepName": "plan"})
    assert "'plan'" in message and "not started" in message


def test_opening_an_open_step_is_a_violation() -> None:
    step = {"type": "STEP_STARTED", "stepName": "plan"}
    assert "already open" in violation(started(), step, step)


def test_parent_and_subagent_steps_of_one_name_are_separate() -> None:
    verify(
        started(),
        {"type": "STEP_STARTED", "stepName": "plan"},
        {"type": "STEP_STARTED", "stepName": "plan", "subagentRunId": "s1"},
        {"type": "STEP_FINISHED", "stepName": "plan"},
        {"type": "STEP_FINISHED", "stepName": "plan", "subagentRunId": "s1"},
        finished(),
    )


# ------------------------------------------------------------------- subagents


def test_a_subagent_terminal_needs_a_started_subagent() -> None:
    message = violation(started(), {"type": "SUBAGENT_FINISHED", "subagentRunId": "s9"})
    assert "'s9'" in message


def test_a_subagent_id_may_not_be_reused_within_a_run() -> None:
    start = {"type": "SUBAGENT_STARTED", "subagentRunId": "s1", "name": "n"}
    message = violation(
        started(), start, {"type": "SUBAGENT_ERROR", "subagentRunId": "s1", "message": "x"}, start
    )
    assert "reuses" in message


def test_a_parent_subagent_must_have_been_announced() -> None:
    message = violation(
        started(),
        {
            "type": "SUBAGENT_STARTED",
            "subagentRunId": "s2",
            "name": "n",
            "parentSubagentRunId": "s1",
        },
    )
    assert "'s1'" in message


def test_a_continuation_tagged_for_another_owner_is_rejected() -> None:
    message = violation(
        started(), text("START", subagentRunId="s1"), text("CONTENT", subagentRunId="s2")
    )
    assert "'s2'" in message and "'s1'" in message


def test_an_untagged_continuation_continues_whatever_the_opener_owns() -> None:
    verify(started(), text("START", subagentRunId="s1"), text("CONTENT"), text("END"), finished())


def test_a_tagged_continuation_of_a_parent_message_is_rejected() -> None:
    message = violation(started(), text("START"), text("CONTENT", subagentRunId="s1"))
    assert "parent agent" in message


def test_a_tool_call_inherits_its_parent_message_owner() -> None:
    message = violation(
        started(),
        text("START", "m1", subagentRunId="s1"),
        tool("START", parentMessageId="m1"),
        tool("END", subagentRunId="s2"),
    )
    assert "'s2'" in message


def test_a_tool_call_tagged_against_its_parent_message_is_rejected() -> None:
    message = violation(
        started(),
        text("START", "m1", subagentRunId="s1"),
        tool("START", parentMessageId="m1", subagentRunId="s2"),
    )
    assert "belongs to the message" in message


def test_a_messages_snapshot_establishes_the_owner_of_its_messages() -> None:
    snapshot = {
        "type": "MESSAGES_SNAPSHOT",
        "messages": [{"id": "m1", "role": "assistant", "content": "x", "subagentRunId": "s1"}],
    }
    assert "'s2'" in violation(started(), snapshot, text("START", subagentRunId="s2"))


def test_unannounced_attribution_is_accepted() -> None:
    verify(started(), text("START", subagentRunId="s7"), text("END"), finished()).finish()


# ------------------------------------------------------------------- run records


def test_a_result_for_a_call_from_an_earlier_run_is_legal() -> None:
    verifier = verify(
        started("r1"),
        tool("START", "c1"),
        tool("END", "c1"),
        finished("r1", outcome={"type": "interrupt", "interrupts": [{"id": "i", "reason": "x"}]}),
        started("r2"),
        {"type": "TOOL_CALL_RESULT", "messageId": "t1", "toolCallId": "c1", "content": "done"},
        finished("r2"),
    )
    assert verifier.run_ended


def test_run_scoped_tracking_resets_at_each_run() -> None:
    verify(
        started("r1"),
        tool("START", "c1"),
        tool("END", "c1"),
        finished("r1"),
        started("r2"),
        tool("START", "c1", toolCallName="another"),
    )
