"""AGUIThreadReducer and AGUIStateTracker: messages and state from delivered events."""

from __future__ import annotations

import copy
from typing import Any

import jsonpatch
from hypothesis import given, settings
from hypothesis import strategies as st

from agui_chat.agui.client._reducer import AGUIStateTracker, AGUIThreadReducer

Event = dict[str, Any]


def reduce(*events: Event, messages: Any = (), state: Any = None) -> AGUIThreadReducer:
    reducer = AGUIThreadReducer(messages, state)
    reducer.apply_all(events)
    return reducer


def warnings_during(*events: Event, messages: Any = ()) -> list[str]:
    found: list[str] = []
    AGUIThreadReducer(messages, on_warning=found.append).apply_all(events)
    return found


def text_message(message_id: str, *deltas: str, **start: Any) -> list[Event]:
    return [
        {"type": "TEXT_MESSAGE_START", "messageId": message_id, **start},
        *({"type": "TEXT_MESSAGE_CONTENT", "messageId": message_id, "delta": d} for d in deltas),
        {"type": "TEXT_MESSAGE_END", "messageId": message_id},
    ]


def tool_call(call_id: str, name: str, args: str, **start: Any) -> list[Event]:
    return [
        {"type": "TOOL_CALL_START", "toolCallId": call_id, "toolCallName": name, **start},
        {"type": "TOOL_CALL_ARGS", "toolCallId": call_id, "delta": args},
        {"type": "TOOL_CALL_END", "toolCallId": call_id},
    ]


# ------------------------------------------------------------------- state


def test_state_starts_from_the_input_and_absent_means_empty() -> None:
    assert AGUIStateTracker().state == {}
    assert AGUIStateTracker({"a": 1}).state == {"a": 1}


def test_a_snapshot_replaces_the_state_wholesale() -> None:
    tracker = AGUIStateTracker({"a": 1, "b": 2})
    tracker.apply({"type": "STATE_SNAPSHOT", "snapshot": ["only"]})
    assert tracker.state == ["only"]


def test_a_null_snapshot_is_a_state() -> None:
    tracker = AGUIStateTracker({"a": 1})
    tracker.apply({"type": "STATE_SNAPSHOT", "snapshot": None})
    assert tracker.state is None


def test_a_delta_applies_rfc6902_to_the_current_state() -> None:
    tracker = AGUIStateTracker({"plan": {"steps": ["a"], "status": "open"}})
    tracker.apply(
        {
            "type": "STATE_DELTA",
            "delta": [
                {"op": "add", "path": "/plan/steps/-", "value": "b"},
                {"op": "replace", "path": "/plan/status", "value": "closed"},
            ],
        }
    )
    assert tracker.state == {"plan": {"steps": ["a", "b"], "status": "closed"}}


def test_a_delta_does_not_mutate_the_previous_state_value() -> None:
    before = {"n": 1}
    tracker = AGUIStateTracker(before)
    tracker.apply({"type": "STATE_DELTA", "delta": [{"op": "replace", "path": "/n", "value": 2}]})
    assert before == {"n": 1} and tracker.state == {"n": 2}


def test_a_patch_that_does_not_apply_warns_and_keeps_the_state_atomically() -> None:
    found: list[str] = []
    tracker = AGUIStateTracker({"plan": {"status": "open"}}, on_warning=found.append)
    tracker.apply(
        {
            "type": "STATE_DELTA",
            "delta": [
                {"op": "replace", "path": "/plan/status", "value": "closed"},
                {"op": "replace", "path": "/absent/deeper", "value": 1},
            ],
        }
    )
    assert tracker.state == {"plan": {"status": "open"}}
    assert any("Failed to apply state patch" in w for w in found)


def test_a_failing_test_op_skips_the_patch() -> None:
    found: list[str] = []
    tracker = AGUIStateTracker({"n": 1}, on_warning=found.append)
    tracker.apply(
        {
            "type": "STATE_DELTA",
            "delta": [
                {"op": "test", "path": "/n", "value": 2},
                {"op": "replace", "path": "/n", "value": 3},
            ],
        }
    )
    assert tracker.state == {"n": 1} and found


def test_the_tracker_ignores_other_events() -> None:
    tracker = AGUIStateTracker({"a": 1})
    assert tracker.apply({"type": "TEXT_MESSAGE_END", "messageId": "m"}) is False
    assert tracker.state == {"a": 1}


def test_the_reducer_does_not_mutate_the_input_state() -> None:
    state = {"n": 1}
    reducer = reduce(
        {"type": "STATE_DELTA", "delta": [{"op": "remove", "path": "/n"}]}, state=state
    )
    assert state == {"n": 1} and reducer.state == {}


# ------------------------------------------------------------------- text and reasoning


def test_text_deltas_assemble_into_an_assistant_message() -> None:
    reducer = reduce(*text_message("m1", "Hello, ", "world."))
    assert reducer.messages == [{"id": "m1", "role": "assistant", "content": "Hello, world."}]


def test_the_start_role_and_name_are_kept() -> None:
    reducer = reduce(*text_message("m1", "hi", role="user", name="ann"))
    assert reducer.messages[0] == {"id": "m1", "role": "user", "content": "hi", "name": "ann"}


def test_content_is_readable_before_the_message_ends() -> None:
    reducer = reduce(*text_message("m1", "par", "tial")[:-1])
    assert reducer.messages[0]["content"] == "partial"
    reducer.apply({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "ly"})
    assert reducer.messages[0]["content"] == "partially"


def test_a_reopened_message_appends() -> None:
    reducer = reduce(*text_message("m1", "First."), *text_message("m1", " Second."))
    assert [m["content"] for m in reducer.messages] == ["First. Second."]


def test_input_messages_are_kept_and_not_mutated() -> None:
    history = [{"id": "u1", "role": "user", "content": "hi"}]
    reducer = reduce(*text_message("m1", "hello"), messages=history)
    assert [m["id"] for m in reducer.messages] == ["u1", "m1"]
    assert history == [{"id": "u1", "role": "user", "content": "hi"}]


def test_a_reasoning_message_is_held_with_the_reasoning_role() -> None:
    reducer = reduce(
        {"type": "REASONING_START", "messageId": "span"},
        {"type": "REASONING_MESSAGE_START", "messageId": "r1", "role": "reasoning"},
        {"type": "REASONING_MESSAGE_CONTENT", "messageId": "r1", "delta": "weighing"},
        {"type": "REASONING_MESSAGE_END", "messageId": "r1"},
        {"type": "REASONING_END", "messageId": "span"},
    )
    assert reducer.messages == [{"id": "r1", "role": "reasoning", "content": "weighing"}]


def test_metadata_merges_per_key_last_write_wins_without_recursion() -> None:
    reducer = reduce(
        {"type": "TEXT_MESSAGE_START", "messageId": "m", "metadata": {"a": 1, "t": ["x", "y"]}},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "d", "metadata": {"t": ["z"]}},
        {"type": "TEXT_MESSAGE_END", "messageId": "m", "metadata": {"b": None}},
    )
    assert reducer.messages[0]["metadata"] == {"a": 1, "t": ["z"], "b": None}


def test_merging_metadata_never_mutates_the_event() -> None:
    start_metadata = {"a": 1}
    reduce(
        {"type": "TEXT_MESSAGE_START", "messageId": "m", "metadata": start_metadata},
        {"type": "TEXT_MESSAGE_END", "messageId": "m", "metadata": {"b": 2}},
    )
    assert start_metadata == {"a": 1}


def test_subagent_attribution_is_kept_on_the_message() -> None:
    reducer = reduce(*text_message("m", "x", subagentRunId="s1"))
    assert reducer.messages[0]["subagentRunId"] == "s1"


# ------------------------------------------------------------------- tool calls


def test_a_tool_call_lands_on_its_parent_assistant_message() -> None:
    reducer = reduce(
        *text_message("m1", "Looking."), *tool_call("c1", "search", '{"q":1}', parentMessageId="m1")
    )
    assert reducer.messages == [
        {
            "id": "m1",
            "role": "assistant",
            "content": "Looking.",
            "toolCalls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "search", "arguments": '{"q":1}'},
                }
            ],
        }
    ]


def test_a_tool_call_with_an_unknown_parent_creates_that_assistant_message() -> None:
    reducer = reduce(*tool_call("c1", "f", "{}", parentMessageId="a1"))
    assert reducer.messages[0]["id"] == "a1" and reducer.messages[0]["role"] == "assistant"
    assert reducer.messages[0]["toolCalls"][0]["id"] == "c1"


def test_a_tool_call_without_a_parent_gets_its_own_assistant_message() -> None:
    reducer = reduce(*tool_call("c1", "f", "{}"))
    assert [(m["id"], m["role"]) for m in reducer.messages] == [("c1", "assistant")]


def test_tool_call_metadata_lands_on_the_call_not_the_message() -> None:
    reducer = reduce(
        {
            "type": "TOOL_CALL_START",
            "toolCallId": "c",
            "toolCallName": "f",
            "parentMessageId": "m",
            "metadata": {"a": 1},
        },
        {"type": "TOOL_CALL_ARGS", "toolCallId": "c", "delta": "{}", "metadata": {"b": 2}},
        {"type": "TOOL_CALL_END", "toolCallId": "c", "metadata": {"a": 3}},
    )
    message = reducer.messages[0]
    assert "metadata" not in message
    assert message["toolCalls"][0]["metadata"] == {"a": 3, "b": 2}


def test_a_tool_result_mints_a_tool_message() -> None:
    content = [{"type": "text", "text": "done"}]
    reducer = reduce(
        *tool_call("c1", "f", "{}", parentMessageId="a1"),
        {"type": "TOOL_CALL_RESULT", "messageId": "t1", "toolCallId": "c1", "content": content},
    )
    assert reducer.messages[1] == {
        "id": "t1",
        "role": "tool",
        "toolCallId": "c1",
        "content": content,
    }


def test_arguments_are_complete_after_many_fragments() -> None:
    fragments = [{"type": "TOOL_CALL_ARGS", "toolCallId": "c", "delta": str(i)} for i in range(50)]
    reducer = reduce(
        {"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "f"},
        *fragments,
        {"type": "TOOL_CALL_END", "toolCallId": "c"},
    )
    assert reducer.messages[0]["toolCalls"][0]["function"]["arguments"] == "".join(
        str(i) for i in range(50)
    )


# ------------------------------------------------------------------- encrypted values


def test_an_encrypted_value_is_stored_on_the_named_message_with_its_type() -> None:
    reducer = reduce(
        *text_message("m1", "answer"),
        {
            "type": "REASONING_ENCRYPTED_VALUE",
            "subtype": "message",
            "entityId": "m1",
            "encryptedValue": "b3BhcXVl",
            "encryptedValueType": "anthropic.signature",
        },
    )
    message = reducer.messages[0]
    assert message["encryptedValue"] == "b3BhcXVl"
    assert message["encryptedValueType"] == "anthropic.signature"


def test_a_new_encrypted_value_without_a_type_removes_the_old_type() -> None:
    event = {"type": "REASONING_ENCRYPTED_VALUE", "subtype": "tool-call", "entityId": "c1"}
    reducer = reduce(
        *tool_call("c1", "f", "{}"),
        {**event, "encryptedValue": "one", "encryptedValueType": "kind"},
        {**event, "encryptedValue": "two"},
    )
    call = reducer.messages[0]["toolCalls"][0]
    assert call["encryptedValue"] == "two" and "encryptedValueType" not in call


def test_an_encrypted_value_for_an_unknown_entity_warns_and_is_dropped() -> None:
    found = warnings_during(
        {
            "type": "REASONING_ENCRYPTED_VALUE",
            "subtype": "message",
            "entityId": "x",
            "encryptedValue": "v",
        }
    )
    assert any("'x'" in w for w in found)


# ------------------------------------------------------------------- activity


def activity(message_id: str, activity_type: str, content: Any, **extra: Any) -> Event:
    return {
        "type": "ACTIVITY_SNAPSHOT",
        "messageId": message_id,
        "activityType": activity_type,
        "content": content,
        **extra,
    }


def test_an_activity_snapshot_creates_then_replaces_the_activity() -> None:
    reducer = reduce(activity("a", "search", {"q": 1}), activity("a", "files", {"n": 2}))
    assert reducer.messages == [
        {"id": "a", "role": "activity", "activityType": "files", "content": {"n": 2}}
    ]


def test_replace_false_leaves_an_existing_activity_as_it_stands() -> None:
    reducer = reduce(
        activity("a", "search", {"q": 1}), activity("a", "files", {"n": 2}, replace=False)
    )
    assert reducer.messages[0]["activityType"] == "search"
    assert reducer.messages[0]["content"] == {"q": 1}


def test_an_activity_delta_patches_content_and_retypes() -> None:
    reducer = reduce(
        activity("a", "search", {"found": 0}),
        {
            "type": "ACTIVITY_DELTA",
            "messageId": "a",
            "activityType": "search-done",
            "patch": [{"op": "replace", "path": "/found", "value": 3}],
        },
    )
    assert reducer.messages[0]["content"] == {"found": 3}
    assert reducer.messages[0]["activityType"] == "search-done"


def test_an_activity_delta_for_a_missing_activity_warns_and_invents_nothing() -> None:
    delta = {
        "type": "ACTIVITY_DELTA",
        "messageId": "nope",
        "activityType": "t",
        "patch": [{"op": "add", "path": "/x", "value": 1}],
    }
    found: list[str] = []
    reducer = AGUIThreadReducer(on_warning=found.append)
    reducer.apply(delta)
    assert reducer.messages == [] and any("'nope'" in w for w in found)


# ------------------------------------------------------------------- messages snapshot


def test_a_messages_snapshot_replaces_in_place_drops_absent_and_appends_new() -> None:
    reducer = reduce(
        *text_message("a", "draft"),
        *text_message("b", "retracted"),
        *text_message("c", "kept? no"),
        {
            "type": "MESSAGES_SNAPSHOT",
            "messages": [
                {"id": "new", "role": "user", "content": "added"},
                {"id": "a", "role": "assistant", "content": "corrected"},
            ],
        },
    )
    assert [(m["id"], m["content"]) for m in reducer.messages] == [
        ("a", "corrected"),
        ("new", "added"),
    ]


def test_activity_and_reasoning_messages_survive_a_snapshot_that_omits_their_role() -> None:
    reducer = reduce(
        activity("act", "search", {}),
        {"type": "REASONING_MESSAGE_START", "messageId": "r", "role": "reasoning"},
        {"type": "REASONING_MESSAGE_END", "messageId": "r"},
        *text_message("m", "x"),
        {"type": "MESSAGES_SNAPSHOT", "messages": []},
    )
    assert [m["id"] for m in reducer.messages] == ["act", "r"]


def test_the_exemption_lapses_when_the_snapshot_carries_that_role() -> None:
    reducer = reduce(
        activity("old", "search", {}),
        {
            "type": "MESSAGES_SNAPSHOT",
            "messages": [{"id": "new", "role": "activity", "activityType": "t", "content": {}}],
        },
    )
    assert [m["id"] for m in reducer.messages] == ["new"]


def test_streaming_into_a_snapshot_restated_message_continues_from_the_snapshot() -> None:
    reducer = reduce(
        {"type": "TEXT_MESSAGE_START", "messageId": "m"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "old"},
        {
            "type": "MESSAGES_SNAPSHOT",
            "messages": [{"id": "m", "role": "assistant", "content": "new"}],
        },
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "!"},
        {"type": "TEXT_MESSAGE_END", "messageId": "m"},
    )
    assert reducer.messages[0]["content"] == "new!"


def test_a_snapshot_message_is_not_shared_with_the_event() -> None:
    event = {
        "type": "MESSAGES_SNAPSHOT",
        "messages": [{"id": "m", "role": "assistant", "content": "a"}],
    }
    reducer = reduce(
        event,
        {"type": "TEXT_MESSAGE_START", "messageId": "m"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "b"},
    )
    assert reducer.messages[0]["content"] == "ab"
    assert event["messages"][0]["content"] == "a"


# ------------------------------------------------------------------- the copy-on-write delta
_KEYS = st.sampled_from(["a", "b", "c", "", "0", "x/y", "t~1"])
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=3),
    max_leaves=8,
)
_PATHS = st.lists(
    st.sampled_from(["a", "b", "c", "", "0", "-", "~0", "~1"]), min_size=1, max_size=3
)
_OPS = st.lists(
    st.builds(
        lambda op, path, value: {"op": op, "path": "/" + "/".join(path), "value": value},
        st.sampled_from(["add", "replace", "remove"]),
        _PATHS,
        _JSON,
    ),
    max_size=4,
)


@settings(max_examples=400, deadline=None)
@given(state=st.dictionaries(_KEYS, _JSON, max_size=4), patch=_OPS)
def test_a_delta_gives_what_rfc6902_gives_and_never_changes_the_state_it_patched(
    state: dict[str, Any], patch: list[dict[str, Any]]
) -> None:
    before = copy.deepcopy(state)
    patch_before = copy.deepcopy(patch)
    failed = False
    try:
        expected: Any = jsonpatch.apply_patch(copy.deepcopy(state), copy.deepcopy(patch))
    except Exception:
        expected, failed = before, True  # a patch that does not apply keeps the state
    warnings: list[str] = []
    tracker = AGUIStateTracker(state, on_warning=warnings.append)
    tracker.apply({"type": "STATE_DELTA", "delta": patch})
    assert tracker.state == expected
    assert bool(warnings) == failed
    assert state == before and patch == patch_before  # the old state and the event as they were


def test_a_delta_shares_what_it_did_not_touch_and_copies_each_object_on_its_path() -> None:
    big = {"rows": list(range(1000))}
    state = {"ui": {"count": 0, "panel": {"open": False}}, "data": big}
    tracker = AGUIStateTracker(state)
    tracker.apply(
        {
            "type": "STATE_DELTA",
            "delta": [
                {"op": "replace", "path": "/ui/count", "value": 1},
                {"op": "add", "path": "/ui/panel/open", "value": True},
                {"op": "remove", "path": "/ui/panel/open"},
            ],
        }
    )
    assert tracker.state == {"ui": {"count": 1, "panel": {}}, "data": big}
    assert tracker.state["data"] is big  # untouched: shared, not copied
    assert state == {"ui": {"count": 0, "panel": {"open": False}}, "data": big}


def test_a_delta_into_a_value_an_earlier_op_added_leaves_the_event_as_it_came() -> None:
    event = {
        "type": "STATE_DELTA",
        "delta": [
            {"op": "add", "path": "/new", "value": {"x": 1}},
            {"op": "add", "path": "/new/y", "value": 2},
        ],
    }
    tracker = AGUIStateTracker({})
    tracker.apply(event)
    assert tracker.state == {"new": {"x": 1, "y": 2}}
    assert event["delta"][0]["value"] == {"x": 1}


def test_a_delta_whose_later_op_fails_applies_none_of_its_ops() -> None:
    warnings: list[str] = []
    tracker = AGUIStateTracker({"a": 1}, on_warning=warnings.append)
    tracker.apply(
        {
            "type": "STATE_DELTA",
            "delta": [
                {"op": "replace", "path": "/a", "value": 2},
                {"op": "replace", "path": "/missing", "value": 3},
            ],
        }
    )
    assert tracker.state == {"a": 1} and len(warnings) == 1
