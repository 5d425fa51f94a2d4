"""The decoding stages: enforcement, retired shapes, chunks, versions, and the pipeline."""

from __future__ import annotations

import copy
import json
import logging
from typing import Any

import pytest

from agui_chat import ChatMessage, TextContent
from agui_chat._exceptions import ProtocolError, TruncatedStreamError
from agui_chat.agui.client._chunks import ChunkExpander
from agui_chat.agui.client._pipeline import AGUIEventPipeline
from agui_chat.agui.client._run_input import build_run_input
from agui_chat.agui.wire._compat import (
    RetiredShapeTranslator,
    check_protocol_version,
    downgrade_input_messages,
    input_protocol_version,
    parse_version,
)
from agui_chat.agui.wire._event_schema import EVENT_TYPES, EventEnforcer

Event = dict[str, Any]


class Recorder:
    def __init__(self) -> None:
        self.warnings: list[str] = []

    def __call__(self, message: str) -> None:
        self.warnings.append(message)


def enforce(event: Event) -> tuple[Event | None, list[str]]:
    warnings = Recorder()
    return EventEnforcer(warnings).enforce(event), warnings.warnings


def rejected(event: Event) -> str:
    with pytest.raises(ProtocolError) as info:
        EventEnforcer(Recorder()).enforce(event)
    return str(info.value)


# ------------------------------------------------------------------- the table


def test_the_table_covers_every_1_0_event_type() -> None:
    assert len(EVENT_TYPES) == 31
    assert {"RUN_STARTED", "REASONING_ENCRYPTED_VALUE", "SUBAGENT_ERROR"} <= EVENT_TYPES


def test_a_valid_event_passes_unchanged() -> None:
    event = {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "user", "name": "ann"}
    assert enforce(copy.deepcopy(event)) == (event, [])


def test_an_unknown_event_type_is_dropped_with_a_warning_naming_it() -> None:
    result, warnings = enforce({"type": "FUTURE_EVENT", "x": 1})
    assert result is None
    assert any("FUTURE_EVENT" in w for w in warnings)


def test_an_unknown_property_is_stripped_with_a_warning_naming_its_path() -> None:
    event, warnings = enforce(
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "d", "futureProp": 1}
    )
    assert event == {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "d"}
    assert any("/futureProp" in w for w in warnings)


def test_a_wrong_json_type_is_fatal_and_names_event_and_field() -> None:
    message = rejected({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": 42})
    assert "TEXT_MESSAGE_CONTENT" in message
    assert "/delta" in message


def test_a_missing_required_field_is_fatal() -> None:
    message = rejected({"type": "TOOL_CALL_START", "toolCallId": "c"})
    assert "/toolCallName" in message
    assert "missing" in message


def test_an_empty_delta_is_legal() -> None:
    event, warnings = enforce({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": ""})
    assert event is not None
    assert warnings == []


def test_a_fractional_timestamp_is_fatal() -> None:
    message = rejected({"type": "TEXT_MESSAGE_END", "messageId": "m", "timestamp": 1.5})
    assert "/timestamp" in message


def test_a_timestamp_beyond_the_safe_integer_range_is_fatal() -> None:
    assert "/timestamp" in rejected(
        {"type": "TEXT_MESSAGE_END", "messageId": "m", "timestamp": 2**53}
    )


def test_a_boolean_is_not_an_integer() -> None:
    assert "/timestamp" in rejected(
        {"type": "TEXT_MESSAGE_END", "messageId": "m", "timestamp": True}
    )


def test_metadata_is_open_and_kept_untouched() -> None:
    metadata = {"acme.vendor/trace": "t", "acme.vendor/span": None, "nested": {"any": [1]}}
    event, warnings = enforce({"type": "TEXT_MESSAGE_END", "messageId": "m", "metadata": metadata})
    assert event is not None and event["metadata"] == metadata
    assert warnings == []


def test_metadata_that_is_not_an_object_is_fatal() -> None:
    assert "/metadata" in rejected({"type": "TEXT_MESSAGE_END", "messageId": "m", "metadata": []})


def test_null_parent_message_id_from_old_producers_reads_as_absent() -> None:
    event, warnings = enforce(
        {"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "f", "parentMessageId": None}
    )
    assert event == {"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "f"}
    assert warnings == []


def test_null_in_a_required_position_is_fatal() -> None:
    assert "/delta" in rejected({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": None})


def test_custom_value_may_be_null() -> None:
    event, _ = enforce({"type": "CUSTOM", "name": "n", "value": None})
    assert event == {"type": "CUSTOM", "name": "n", "value": None}


def test_custom_without_value_is_fatal() -> None:
    assert "/value" in rejected({"type": "CUSTOM", "name": "n"})


def test_raw_event_payload_is_preserved_untouched() -> None:
    raw = {"provider_specific": {"kind": "x", "weird-key": [None]}}
    event, warnings = enforce({"type": "RAW", "event": raw, "source": "openai"})
    assert event is not None and event["event"] == raw
    assert warnings == []


def test_state_snapshot_may_be_any_json_including_falsy() -> None:
    for snapshot in (0, None, [], "", False):
        event, _ = enforce({"type": "STATE_SNAPSHOT", "snapshot": snapshot})
        assert event is not None and event["snapshot"] == snapshot


# ------------------------------------------------------------------- roles


def test_an_unrecognised_text_role_is_stripped_and_reads_as_assistant() -> None:
    event, warnings = enforce({"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "narrator"})
    assert event == {"type": "TEXT_MESSAGE_START", "messageId": "m"}
    assert any("/role" in w and "narrator" in w for w in warnings)


def test_a_known_role_not_allowed_on_a_text_message_is_fatal() -> None:
    assert "/role" in rejected({"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "tool"})


def test_a_non_string_role_is_fatal() -> None:
    assert "/role" in rejected({"type": "TEXT_MESSAGE_START", "messageId": "m", "role": 1})


def test_reasoning_message_start_requires_the_reasoning_role() -> None:
    message = rejected({"type": "REASONING_MESSAGE_START", "messageId": "m", "role": "assistant"})
    assert '"reasoning"' in message


def test_reasoning_message_start_without_role_is_fatal() -> None:
    assert "/role" in rejected({"type": "REASONING_MESSAGE_START", "messageId": "m"})


# ------------------------------------------------------------------- run outcome


def finished(**extra: Any) -> Event:
    return {"type": "RUN_FINISHED", "threadId": "t", "runId": "r", **extra}


def test_interrupt_outcome_passes_with_every_interrupt_field() -> None:
    interrupt = {
        "id": "i1",
        "reason": "tool_approval",
        "message": "ok?",
        "toolCallId": "c1",
        "responseSchema": {"type": "object"},
        "expiresAt": "2030-01-01T00:00:00Z",
        "metadata": {"k": 1},
        "subagentRunId": "s1",
    }
    event, warnings = enforce(finished(outcome={"type": "interrupt", "interrupts": [interrupt]}))
    assert event is not None and event["outcome"]["interrupts"] == [interrupt]
    assert warnings == []


def test_an_unrecognised_outcome_is_stripped_which_reads_as_success() -> None:
    event, warnings = enforce(finished(outcome={"type": "paused"}))
    assert event is not None and "outcome" not in event
    assert any("/outcome" in w and "paused" in w for w in warnings)


def test_outcome_as_an_array_is_fatal() -> None:
    message = rejected(finished(outcome=[{"type": "success"}]))
    assert "/outcome" in message
    assert "array" in message


def test_null_outcome_from_old_producers_reads_as_absent() -> None:
    event, warnings = enforce(finished(outcome=None))
    assert event == finished()
    assert warnings == []


def test_an_empty_interrupt_list_is_fatal() -> None:
    assert "/outcome/interrupts" in rejected(
        finished(outcome={"type": "interrupt", "interrupts": []})
    )


def test_duplicate_interrupt_ids_are_fatal() -> None:
    interrupts = [{"id": "i", "reason": "a"}, {"id": "i", "reason": "b"}]
    message = rejected(finished(outcome={"type": "interrupt", "interrupts": interrupts}))
    assert "/outcome/interrupts/1/id" in message


def test_an_interrupt_without_reason_is_fatal() -> None:
    message = rejected(finished(outcome={"type": "interrupt", "interrupts": [{"id": "i"}]}))
    assert "/outcome/interrupts/0/reason" in message


def test_a_success_outcome_carrying_interrupts_loses_them_with_a_warning() -> None:
    event, warnings = enforce(finished(outcome={"type": "success", "interrupts": []}))
    assert event is not None and event["outcome"] == {"type": "success"}
    assert any("/outcome/interrupts" in w for w in warnings)


def test_cancelled_outcome_is_accepted() -> None:
    event, _ = enforce(finished(outcome={"type": "cancelled"}))
    assert event is not None and event["outcome"] == {"type": "cancelled"}


def test_token_usage_counts_must_be_non_negative_integers() -> None:
    assert "/usage/0/inputTokens" in rejected(finished(usage=[{"inputTokens": -1}]))


def test_result_may_not_be_null() -> None:
    event, _ = enforce(finished(result=None))
    assert event == finished()


# ------------------------------------------------------------------- nested unions


def snapshot(*messages: Event) -> Event:
    return {"type": "MESSAGES_SNAPSHOT", "messages": list(messages)}


def test_an_unknown_content_part_is_dropped_from_its_list() -> None:
    message = {
        "id": "u",
        "role": "user",
        "content": [
            {"type": "text", "text": "a"},
            {"type": "hologram", "source": {}},
            {"type": "text", "text": "b"},
        ],
    }
    event, warnings = enforce(snapshot(message))
    assert event is not None
    assert event["messages"][0]["content"] == [
        {"type": "text", "text": "a"},
        {"type": "text", "text": "b"},
    ]
    assert any("/messages/0/content/1" in w for w in warnings)


def test_a_media_part_with_an_unknown_source_is_removed_whole() -> None:
    part = {"type": "image", "source": {"type": "carrier-pigeon", "value": "x"}}
    event, warnings = enforce(snapshot({"id": "u", "role": "user", "content": [part]}))
    assert event is not None and event["messages"][0]["content"] == []
    assert any("/messages/0/content/0" in w for w in warnings)


def test_a_data_source_without_mime_type_is_fatal() -> None:
    part = {"type": "image", "source": {"type": "data", "value": "AAAA"}}
    message = rejected(snapshot({"id": "u", "role": "user", "content": [part]}))
    assert "/messages/0/content/0/source/mimeType" in message


def test_a_message_with_an_unknown_role_is_dropped_from_the_snapshot() -> None:
    event, warnings = enforce(
        snapshot(
            {"id": "a", "role": "narrator", "content": "x"},
            {"id": "b", "role": "user", "content": "y"},
        )
    )
    assert event is not None and [m["id"] for m in event["messages"]] == ["b"]
    assert any("/messages/0" in w for w in warnings)


def test_a_message_without_role_is_fatal() -> None:
    assert "/messages/0/role" in rejected(snapshot({"id": "a", "content": "x"}))


def test_a_tool_call_must_be_of_type_function() -> None:
    call = {"id": "c", "type": "other", "function": {"name": "f", "arguments": "{}"}}
    message = rejected(snapshot({"id": "a", "role": "assistant", "toolCalls": [call]}))
    assert "/messages/0/toolCalls/0/type" in message


def test_tool_result_content_may_be_parts_including_a_file_source() -> None:
    content = [
        {"type": "text", "text": "done"},
        {
            "type": "document",
            "id": "d",
            "source": {"type": "file", "value": "file-1", "provider": "openai"},
            "metadata": {"title": "T"},
        },
    ]
    event, warnings = enforce(
        {"type": "TOOL_CALL_RESULT", "messageId": "t", "toolCallId": "c", "content": content}
    )
    assert event is not None and event["content"] == content
    assert warnings == []


def test_tool_result_content_of_another_type_is_fatal() -> None:
    message = rejected(
        {"type": "TOOL_CALL_RESULT", "messageId": "t", "toolCallId": "c", "content": {"a": 1}}
    )
    assert "/content" in message


def test_an_unknown_encrypted_value_subtype_drops_the_event() -> None:
    event, warnings = enforce(
        {
            "type": "REASONING_ENCRYPTED_VALUE",
            "subtype": "span",
            "entityId": "e",
            "encryptedValue": "x",
        }
    )
    assert event is None
    assert any("/subtype" in w for w in warnings)


def test_encrypted_value_type_from_1_1_is_kept() -> None:
    event, warnings = enforce(
        {
            "type": "REASONING_ENCRYPTED_VALUE",
            "subtype": "message",
            "entityId": "e",
            "encryptedValue": "x",
            "encryptedValueType": "anthropic.redacted_thinking",
        }
    )
    assert event is not None and event["encryptedValueType"] == "anthropic.redacted_thinking"
    assert warnings == []


def test_subagent_started_requires_a_name() -> None:
    assert "/name" in rejected({"type": "SUBAGENT_STARTED", "subagentRunId": "s"})


def test_run_started_input_echo_is_checked() -> None:
    event = {"type": "RUN_STARTED", "threadId": "t", "runId": "r", "input": {"threadId": "t"}}
    assert "/input/runId" in rejected(event)


# ------------------------------------------------------------------- JSON Patch


def delta(*ops: Event) -> Event:
    return {"type": "STATE_DELTA", "delta": list(ops)}


def test_patch_operations_are_open_and_keep_extra_members() -> None:
    op = {"op": "remove", "path": "/items/1", "value": "leftover", "x-note": 1}
    event, warnings = enforce(delta(dict(op)))
    assert event is not None and event["delta"] == [op]
    assert warnings == []


def test_a_bad_json_pointer_is_fatal() -> None:
    assert "/delta/0/path" in rejected(delta({"op": "add", "path": "a", "value": 1}))


def test_a_pointer_with_a_bad_escape_is_fatal() -> None:
    assert "/delta/0/path" in rejected(delta({"op": "remove", "path": "/a~2"}))


def test_move_requires_from() -> None:
    assert "/delta/0/from" in rejected(delta({"op": "move", "path": "/a"}))


def test_add_requires_a_value_but_null_is_one() -> None:
    event, _ = enforce(delta({"op": "add", "path": "/a", "value": None}))
    assert event is not None
    assert "/delta/0/value" in rejected(delta({"op": "add", "path": "/a"}))


def test_an_unknown_patch_op_is_dropped_from_the_patch_with_a_warning() -> None:
    event, warnings = enforce(
        delta({"op": "increment", "path": "/n"}, {"op": "replace", "path": "/n", "value": 5})
    )
    assert event is not None and event["delta"] == [{"op": "replace", "path": "/n", "value": 5}]
    assert any("/delta/0" in w for w in warnings)


def test_a_patch_op_without_op_is_fatal() -> None:
    assert "/delta/0/op" in rejected(delta({"path": "/n", "value": 1}))


def test_a_patch_that_is_not_an_array_is_fatal() -> None:
    assert "/delta" in rejected({"type": "STATE_DELTA", "delta": {"op": "add"}})


# ------------------------------------------------------------------- retired shapes


def test_thinking_events_translate_into_the_reasoning_family() -> None:
    warnings = Recorder()
    translator = RetiredShapeTranslator(warnings)
    stream = [
        {"type": "THINKING_START", "title": "Working"},
        {"type": "THINKING_TEXT_MESSAGE_START"},
        {"type": "THINKING_TEXT_MESSAGE_CONTENT", "delta": "hm"},
        {"type": "THINKING_TEXT_MESSAGE_END"},
        {"type": "THINKING_END"},
    ]
    out = [translator.translate(event) for event in stream]
    assert [e["type"] for e in out] == [
        "REASONING_START",
        "REASONING_MESSAGE_START",
        "REASONING_MESSAGE_CONTENT",
        "REASONING_MESSAGE_END",
        "REASONING_END",
    ]
    assert out[0]["messageId"] == out[4]["messageId"]
    assert out[1]["messageId"] == out[2]["messageId"] == out[3]["messageId"]
    assert out[0]["messageId"] != out[1]["messageId"]
    assert out[1]["role"] == "reasoning" and out[2]["delta"] == "hm"
    assert "title" not in out[0]


def test_a_dropped_thinking_title_is_warned_about() -> None:
    warnings = Recorder()
    RetiredShapeTranslator(warnings).translate({"type": "THINKING_START", "title": "Working"})
    assert any("'Working'" in w for w in warnings.warnings)


def test_thinking_translation_warns_once_per_retired_type() -> None:
    warnings = Recorder()
    translator = RetiredShapeTranslator(warnings)
    translator.translate({"type": "THINKING_TEXT_MESSAGE_START"})
    for _ in range(3):
        translator.translate({"type": "THINKING_TEXT_MESSAGE_CONTENT", "delta": "x"})
    assert len(warnings.warnings) == 2
    assert "THINKING_TEXT_MESSAGE_CONTENT" in warnings.warnings[1]


def test_translation_leaves_current_events_alone() -> None:
    event = {"type": "TEXT_MESSAGE_END", "messageId": "m"}
    assert RetiredShapeTranslator(Recorder()).translate(event) is event


# ------------------------------------------------------------------- chunk expansion


def expand_all(*events: Event) -> list[Event]:
    expander = ChunkExpander()
    out: list[Event] = []
    for event in events:
        out.extend(expander.expand(event))
    return out


def test_a_first_text_chunk_opens_and_streams_the_message() -> None:
    out = expand_all({"type": "TEXT_MESSAGE_CHUNK", "messageId": "m", "delta": "hi"})
    assert out == [
        {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "hi"},
    ]


def test_an_id_less_continuation_appends_to_the_open_stream() -> None:
    out = expand_all(
        {"type": "TEXT_MESSAGE_CHUNK", "messageId": "m", "delta": "a"},
        {"type": "TEXT_MESSAGE_CHUNK", "delta": "b"},
    )
    assert out[-1] == {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "b"}


def test_a_run_level_event_closes_the_open_stream_first() -> None:
    out = expand_all(
        {"type": "TEXT_MESSAGE_CHUNK", "messageId": "m", "delta": "a"},
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
    )
    assert [e["type"] for e in out[-2:]] == ["TEXT_MESSAGE_END", "RUN_FINISHED"]


def test_a_chunk_for_another_item_closes_the_previous_one() -> None:
    out = expand_all(
        {"type": "TEXT_MESSAGE_CHUNK", "messageId": "m", "delta": "a"},
        {"type": "TOOL_CALL_CHUNK", "toolCallId": "c", "toolCallName": "f", "delta": "{"},
    )
    assert [e["type"] for e in out] == [
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
    ]


def test_raw_and_activity_do_not_close_a_chunk_stream() -> None:
    out = expand_all(
        {"type": "TEXT_MESSAGE_CHUNK", "messageId": "m", "delta": "a"},
        {"type": "RAW", "event": {}},
        {"type": "ACTIVITY_SNAPSHOT", "messageId": "x", "activityType": "t", "content": {}},
        {"type": "TEXT_MESSAGE_CHUNK", "delta": "b"},
    )
    assert "TEXT_MESSAGE_END" not in [e["type"] for e in out]
    assert out[-1]["delta"] == "b"


def test_custom_closes_a_chunk_stream_so_an_id_less_chunk_is_fatal() -> None:
    with pytest.raises(ProtocolError, match="First TEXT_MESSAGE_CHUNK must carry messageId"):
        expand_all(
            {"type": "TEXT_MESSAGE_CHUNK", "messageId": "m", "delta": "a"},
            {"type": "CUSTOM", "name": "n", "value": 1},
            {"type": "TEXT_MESSAGE_CHUNK", "delta": "b"},
        )


def test_a_first_tool_chunk_without_a_name_is_fatal() -> None:
    with pytest.raises(ProtocolError, match="toolCallName"):
        expand_all({"type": "TOOL_CALL_CHUNK", "toolCallId": "c", "delta": "{}"})


def test_a_conflicting_role_on_a_continuation_is_fatal() -> None:
    with pytest.raises(ProtocolError, match="does not match the open stream's role 'user'"):
        expand_all(
            {"type": "TEXT_MESSAGE_CHUNK", "messageId": "m", "role": "user", "delta": "a"},
            {"type": "TEXT_MESSAGE_CHUNK", "messageId": "m", "role": "assistant", "delta": "b"},
        )


def test_a_non_assistant_role_conflicts_with_an_opener_that_omitted_role() -> None:
    with pytest.raises(ProtocolError, match="role"):
        expand_all(
            {"type": "TEXT_MESSAGE_CHUNK", "messageId": "m", "delta": "a"},
            {"type": "TEXT_MESSAGE_CHUNK", "role": "user", "delta": "b"},
        )


def test_repeating_the_same_tool_name_and_parent_is_accepted() -> None:
    chunk = {
        "type": "TOOL_CALL_CHUNK",
        "toolCallId": "c",
        "toolCallName": "f",
        "parentMessageId": "m",
    }
    out = expand_all({**chunk, "delta": "{"}, {**chunk, "delta": "}"})
    assert [e["type"] for e in out] == ["TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_ARGS"]


def test_a_conflicting_parent_message_on_a_continuation_is_fatal() -> None:
    with pytest.raises(ProtocolError, match="parentMessageId"):
        expand_all(
            {
                "type": "TOOL_CALL_CHUNK",
                "toolCallId": "c",
                "toolCallName": "f",
                "parentMessageId": "a",
            },
            {"type": "TOOL_CALL_CHUNK", "parentMessageId": "b", "delta": "x"},
        )


def test_a_subagent_terminal_closes_only_its_own_lane() -> None:
    out = expand_all(
        {"type": "TEXT_MESSAGE_CHUNK", "messageId": "p", "delta": "a"},
        {"type": "TEXT_MESSAGE_CHUNK", "messageId": "s", "delta": "b", "subagentRunId": "s1"},
        {"type": "SUBAGENT_FINISHED", "subagentRunId": "s1"},
    )
    assert out[-2:] == [
        {"type": "TEXT_MESSAGE_END", "messageId": "s", "subagentRunId": "s1"},
        {"type": "SUBAGENT_FINISHED", "subagentRunId": "s1"},
    ]


def test_a_continuation_is_ambiguous_when_several_subagent_lanes_are_open() -> None:
    with pytest.raises(ProtocolError, match="ambiguous"):
        expand_all(
            {"type": "TEXT_MESSAGE_CHUNK", "messageId": "a", "delta": "1", "subagentRunId": "s1"},
            {"type": "TEXT_MESSAGE_CHUNK", "messageId": "b", "delta": "2", "subagentRunId": "s2"},
            {"type": "TEXT_MESSAGE_CHUNK", "delta": "3"},
        )


def test_a_chunk_tag_disagreeing_with_the_open_stream_is_fatal() -> None:
    with pytest.raises(ProtocolError, match="subagent"):
        expand_all(
            {"type": "TEXT_MESSAGE_CHUNK", "messageId": "a", "delta": "1", "subagentRunId": "s1"},
            {"type": "TEXT_MESSAGE_CHUNK", "messageId": "a", "delta": "2", "subagentRunId": "s2"},
        )


def test_chunk_metadata_rides_on_the_synthesized_events() -> None:
    out = expand_all(
        {"type": "REASONING_MESSAGE_CHUNK", "messageId": "r", "delta": "x", "metadata": {"k": 1}}
    )
    assert out[0]["role"] == "reasoning"
    assert all(e["metadata"] == {"k": 1} for e in out)


def test_a_metadata_only_continuation_becomes_an_empty_delta() -> None:
    out = expand_all(
        {"type": "TEXT_MESSAGE_CHUNK", "messageId": "m", "delta": "a"},
        {"type": "TEXT_MESSAGE_CHUNK", "metadata": {"finish": "stop"}},
    )
    assert out[-1] == {
        "type": "TEXT_MESSAGE_CONTENT",
        "messageId": "m",
        "delta": "",
        "metadata": {"finish": "stop"},
    }


def test_without_open_lanes_events_pass_straight_through() -> None:
    event = {"type": "TEXT_MESSAGE_END", "messageId": "m"}
    assert ChunkExpander().expand(event) == [event]


# ------------------------------------------------------------------- versions


@pytest.mark.parametrize("declared", [None, "1.0", "1.1", "0.3"])
def test_known_or_older_producer_versions_are_quiet(declared: str | None) -> None:
    assert check_protocol_version(declared) is None


def test_a_newer_producer_version_warns_and_names_ours() -> None:
    warning = check_protocol_version("1.2")
    assert warning is not None and "1.2" in warning and "1.1" in warning


def test_versions_compare_numerically() -> None:
    assert check_protocol_version("1.10") is not None
    assert parse_version("1.10") == (1, 10)


@pytest.mark.parametrize("declared", ["draft", "1", "1.0.0", "v1.0", ""])
def test_an_uninterpretable_version_warns(declared: str) -> None:
    warning = check_protocol_version(declared)
    assert warning is not None and "cannot interpret" in warning


def test_we_declare_1_0_unless_the_peer_predates_the_field() -> None:
    assert input_protocol_version(None) == "1.0"
    assert input_protocol_version("1.0") == "1.0"
    assert input_protocol_version("0.0.57") is None


# ------------------------------------------------------------------- outgoing shims


def test_activity_messages_are_never_sent() -> None:
    messages = [{"id": "a", "role": "activity", "activityType": "t", "content": {}}]
    assert downgrade_input_messages(messages, None, Recorder()) == []


def test_legacy_binary_parts_are_upgraded_quietly() -> None:
    warnings = Recorder()
    message = {
        "id": "u",
        "role": "user",
        "content": [{"type": "binary", "mimeType": "image/png", "url": "https://x/y.png"}],
    }
    out = downgrade_input_messages([message], None, warnings)
    assert out[0]["content"] == [
        {
            "type": "image",
            "source": {"type": "url", "value": "https://x/y.png", "mimeType": "image/png"},
        }
    ]
    assert warnings.warnings == []
    assert message["content"][0]["type"] == "binary"  # the caller's message is untouched


def test_a_0_0_39_peer_gets_flattened_text_and_a_warning_about_dropped_parts() -> None:
    warnings = Recorder()
    message = {
        "id": "u",
        "role": "user",
        "content": [
            {"type": "text", "text": "What is "},
            {"type": "image", "source": {"type": "url", "value": "u"}},
            {"type": "text", "text": "this?"},
        ],
    }
    out = downgrade_input_messages([message], "0.0.39", warnings)
    assert out[0]["content"] == "What is this?"
    assert any("DROPS non-text parts" in w and "image" in w for w in warnings.warnings)


def test_a_0_0_57_peer_loses_subagent_attribution() -> None:
    message = {"id": "a", "role": "assistant", "content": "x", "subagentRunId": "s"}
    assert "subagentRunId" not in downgrade_input_messages([message], "0.0.57", Recorder())[0]
    assert downgrade_input_messages([message], None, Recorder())[0]["subagentRunId"] == "s"


# ------------------------------------------------------------------- the pipeline façade


def pipeline(**kwargs: Any) -> tuple[AGUIEventPipeline, list[str]]:
    warnings: list[str] = []
    return AGUIEventPipeline(on_warning=warnings.append, **kwargs), warnings


def feed_all(pipe: AGUIEventPipeline, *events: Any) -> list[Event]:
    out: list[Event] = []
    for event in events:
        out.extend(pipe.feed(json.dumps(event)))
    return out


RUN = {"type": "RUN_STARTED", "threadId": "t", "runId": "r"}
END_RUN = {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}
OPEN = {"type": "TEXT_MESSAGE_START", "messageId": "m"}


def test_a_payload_that_is_not_json_is_a_protocol_error() -> None:
    with pytest.raises(ProtocolError, match="not valid JSON"):
        AGUIEventPipeline().feed('{"type": "RUN_STARTED"')


def test_a_payload_nested_too_deeply_is_a_protocol_error_not_a_recursion_error() -> None:
    with pytest.raises(ProtocolError, match="not valid JSON"):
        AGUIEventPipeline().feed("[" * 100_000 + "]" * 100_000)


def test_a_payload_that_is_not_an_object_is_a_protocol_error() -> None:
    with pytest.raises(ProtocolError, match="one JSON object"):
        AGUIEventPipeline().feed("[1, 2]")


def test_an_event_without_a_string_type_is_a_protocol_error() -> None:
    with pytest.raises(ProtocolError, match="/type"):
        AGUIEventPipeline().feed('{"messageId": "m"}')


def test_the_fast_path_delivers_bare_content_events_as_parsed() -> None:
    pipe, _ = pipeline()
    feed_all(pipe, RUN, OPEN)
    delivered = pipe.feed('{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"hi"}')
    assert delivered == [{"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "hi"}]


def test_the_fast_path_keeps_base_fields_untouched() -> None:
    pipe, warnings = pipeline()
    feed_all(pipe, RUN, OPEN)
    event = {
        "type": "TEXT_MESSAGE_CONTENT",
        "messageId": "m",
        "delta": "hi",
        "timestamp": 1,
        "metadata": {"k": None},
        "rawEvent": {"native": True},
    }
    assert feed_all(pipe, event) == [event]
    assert warnings == []


def test_a_null_base_field_on_a_content_event_reads_as_absent() -> None:
    pipe, warnings = pipeline()
    feed_all(pipe, RUN, OPEN)
    event = {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "hi", "metadata": None}
    assert feed_all(pipe, event) == [
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "hi"}
    ]
    assert warnings == []


def test_content_events_with_extra_fields_are_still_enforced() -> None:
    pipe, warnings = pipeline()
    feed_all(pipe, RUN, OPEN)
    event = {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "a", "futureProp": 1}
    assert feed_all(pipe, event) == [
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "a"}
    ]
    assert any("/futureProp" in w for w in warnings)


def test_the_fast_path_does_not_skip_verification() -> None:
    pipe, _ = pipeline()
    feed_all(pipe, RUN, OPEN, {"type": "TEXT_MESSAGE_END", "messageId": "m"})
    with pytest.raises(ProtocolError, match="no open text message"):
        feed_all(pipe, {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "late"})


REASONING = {"type": "REASONING_MESSAGE_START", "messageId": "m", "role": "reasoning"}


@pytest.mark.parametrize(
    ("opened", "content"),
    [(OPEN, "REASONING_MESSAGE_CONTENT"), (REASONING, "TEXT_MESSAGE_CONTENT")],
)
def test_the_fast_path_takes_a_delta_only_for_a_message_of_its_own_kind(
    opened: dict[str, str], content: str
) -> None:
    pipe, _ = pipeline()
    feed_all(pipe, RUN, opened)
    with pytest.raises(ProtocolError, match="no open"):
        feed_all(pipe, {"type": content, "messageId": "m", "delta": "x"})


def test_the_fast_path_delivers_a_bare_reasoning_delta_as_parsed() -> None:
    pipe, _ = pipeline()
    feed_all(pipe, RUN, REASONING)
    delivered = pipe.feed('{"type":"REASONING_MESSAGE_CONTENT","messageId":"m","delta":"hm"}')
    assert delivered == [{"type": "REASONING_MESSAGE_CONTENT", "messageId": "m", "delta": "hm"}]


def test_the_fast_path_rejects_a_malformed_timestamp() -> None:
    pipe, _ = pipeline()
    feed_all(pipe, RUN, OPEN)
    with pytest.raises(ProtocolError, match="/timestamp"):
        feed_all(
            pipe, {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "", "timestamp": 1.5}
        )


def test_tool_arguments_of_an_open_call_are_delivered_as_sent() -> None:
    pipe, _ = pipeline()
    args = [
        {"type": "TOOL_CALL_ARGS", "toolCallId": "c", "delta": '{"a":'},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "c", "delta": "1}", "timestamp": 5},
    ]
    feed_all(pipe, RUN, {"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "f"})
    assert feed_all(pipe, *args) == args


def test_chunks_expand_and_close_before_the_run_finishes() -> None:
    pipe, _ = pipeline()
    types = [
        e["type"]
        for e in feed_all(
            pipe, RUN, {"type": "TEXT_MESSAGE_CHUNK", "messageId": "m", "delta": "x"}, END_RUN
        )
    ]
    assert types == [
        "RUN_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "RUN_FINISHED",
    ]


def test_content_for_an_open_chunk_stream_takes_the_full_path() -> None:
    pipe, _ = pipeline()
    feed_all(pipe, RUN, {"type": "TEXT_MESSAGE_CHUNK", "messageId": "m", "delta": "x"})
    # An explicit event ends the shorthand, so this content names a message no longer open.
    with pytest.raises(ProtocolError, match="no open text message"):
        feed_all(pipe, {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "y"})


def test_retired_thinking_events_arrive_as_verified_reasoning() -> None:
    pipe, warnings = pipeline()
    delivered = feed_all(
        pipe,
        RUN,
        {"type": "THINKING_TEXT_MESSAGE_START"},
        {"type": "THINKING_TEXT_MESSAGE_CONTENT", "delta": "hm"},
        {"type": "THINKING_TEXT_MESSAGE_END"},
        END_RUN,
    )
    assert [e["type"] for e in delivered][1:4] == [
        "REASONING_MESSAGE_START",
        "REASONING_MESSAGE_CONTENT",
        "REASONING_MESSAGE_END",
    ]
    assert any("THINKING_TEXT_MESSAGE_START" in w for w in warnings)


def test_a_peer_pinned_to_0_0_57_drops_subagent_events_with_a_warning() -> None:
    pipe, warnings = pipeline(peer_max_version="0.0.57")
    delivered = feed_all(pipe, RUN, {"type": "SUBAGENT_STARTED", "subagentRunId": "s", "name": "n"})
    assert [e["type"] for e in delivered] == ["RUN_STARTED"]
    assert any("dropping SUBAGENT_STARTED" in w for w in warnings)


def test_a_current_peer_keeps_subagent_events() -> None:
    pipe, warnings = pipeline()
    delivered = feed_all(pipe, RUN, {"type": "SUBAGENT_STARTED", "subagentRunId": "s", "name": "n"})
    assert [e["type"] for e in delivered] == ["RUN_STARTED", "SUBAGENT_STARTED"]
    assert warnings == []


def test_a_newer_producer_version_warns_once() -> None:
    pipe, warnings = pipeline()
    newer = {**RUN, "protocolVersion": "1.2"}
    feed_all(pipe, newer, END_RUN, newer, END_RUN)
    assert len(warnings) == 1 and "1.2" in warnings[0]


def test_warnings_also_go_to_the_agui_logger(caplog: pytest.LogCaptureFixture) -> None:
    pipe, _ = pipeline()
    with caplog.at_level(logging.WARNING, logger="agui_chat.agui"):
        feed_all(pipe, RUN, {"type": "FUTURE_EVENT"})
    assert any("FUTURE_EVENT" in r.getMessage() for r in caplog.records)


def test_finish_refuses_a_stream_cut_inside_a_run() -> None:
    pipe, _ = pipeline()
    feed_all(pipe, RUN, OPEN)
    with pytest.raises(TruncatedStreamError):
        pipe.finish()


def test_finish_refuses_a_stream_that_delivered_nothing() -> None:
    pipe, _ = pipeline()
    feed_all(pipe, {"type": "FUTURE_EVENT"})
    with pytest.raises(TruncatedStreamError):
        pipe.finish()


def test_a_stream_opening_with_run_error_is_the_requested_run_failing() -> None:
    pipe, _ = pipeline(thread_id="t")
    feed_all(pipe, {"type": "RUN_ERROR", "message": "unreachable"})
    pipe.finish()
    assert pipe.run_ended


def test_finish_accepts_a_run_that_reported_its_own_error() -> None:
    pipe, _ = pipeline()
    feed_all(pipe, RUN, {"type": "RUN_ERROR", "message": "boom", "code": "X"})
    pipe.finish()
    assert pipe.run_ended


def test_a_replayed_thread_may_carry_several_runs() -> None:
    pipe, _ = pipeline(thread_id="t")
    feed_all(
        pipe,
        RUN,
        END_RUN,
        {**RUN, "runId": "r2"},
        {**END_RUN, "runId": "r2", "outcome": {"type": "cancelled"}},
    )
    assert pipe.run_ended


def test_the_outgoing_messages_get_the_peer_shims() -> None:
    warnings: list[str] = []
    message = {"id": "u", "role": "user", "content": [{"type": "text", "text": "hi"}]}
    run_input = build_run_input(
        [ChatMessage("user", [TextContent("hi")], message_id="u")],
        None,
        thread_id="t",
        run_id="r",
        state={},
        resume=None,
        peer_max_version="0.0.39",
        warn=warnings.append,
    )
    assert run_input["messages"] == [{"id": "u", "role": "user", "content": "hi"}]
    assert "protocolVersion" not in run_input
    assert downgrade_input_messages([message], "0.0.39", warnings.append) == run_input["messages"]
    assert warnings == []
