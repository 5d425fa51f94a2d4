"""What AGUIChatClient makes of the events it reads: one update per event, typed contents."""

from __future__ import annotations

import json
from typing import Any

from agui_client_support import Agent, finished, frame, run, started, text, tool_call, tool_result

from agui_chat import (
    ChatFinishReason,
    ChatMessage,
    ChatOptions,
    ChatResponse,
    ChatResponseUpdate,
    FunctionCallContent,
    FunctionCallUpdateContent,
    FunctionResultContent,
    TextReasoningContent,
    UsageContent,
)


async def stream(agent: Agent, messages: Any = "hi", **kwargs: Any) -> list[ChatResponseUpdate]:
    async with agent.client(**kwargs) as client:
        return [u async for u in client.get_streaming_response(messages)]


def types(updates: list[ChatResponseUpdate]) -> list[str]:
    return [u.raw_representation["type"] for u in updates]


async def test_every_event_arrives_as_one_update_carrying_it() -> None:
    agent = Agent(
        lambda b: run(
            b,
            {"type": "STEP_STARTED", "stepName": "plan"},
            text("m1", "Hi"),
            {"type": "STEP_FINISHED", "stepName": "plan"},
            {"type": "CUSTOM", "name": "app.ping", "value": None},
            {"type": "RAW", "event": {"x": 1}},
        )
    )

    updates = await stream(agent)

    assert types(updates) == [
        "RUN_STARTED",
        "STEP_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "STEP_FINISHED",
        "CUSTOM",
        "RAW",
        "RUN_FINISHED",
    ]
    assert updates[6].raw_representation == {"type": "CUSTOM", "name": "app.ping", "value": None}
    assert updates[6].contents == []


async def test_text_deltas_are_text_updates_of_their_message() -> None:
    agent = Agent(lambda b: run(b, text("m1", "Hel", "lo")))

    updates = await stream(agent)

    deltas = [u for u in updates if u.text]
    assert [(u.text, u.message_id, u.role) for u in deltas] == [
        ("Hel", "m1", "assistant"),
        ("lo", "m1", "assistant"),
    ]
    assert all(u.conversation_id is None for u in updates)


async def test_a_text_message_keeps_the_role_its_start_names() -> None:
    agent = Agent(lambda b: run(b, text("m1", "note", role="developer")))

    updates = await stream(agent)

    assert [u.role for u in updates if u.text] == ["developer"]


async def test_tool_call_argument_deltas_are_visible_as_they_arrive() -> None:
    agent = Agent(lambda b: run(b, tool_call("c1", "search", '{"q":', '"cats"}', parent="a1")))

    updates = await stream(agent)

    pieces = [c for u in updates for c in u.contents if isinstance(c, FunctionCallUpdateContent)]
    assert [(p.call_id, p.name, p.arguments_delta) for p in pieces] == [
        ("c1", "search", ""),
        ("c1", "search", '{"q":'),
        ("c1", "search", '"cats"}'),
    ]


async def test_a_tool_call_is_surfaced_as_soon_as_it_ends() -> None:
    agent = Agent(
        lambda b: run(
            b,
            tool_call("c1", "search", '{"q":"cats"}', parent="a1"),
            text("m2", "still working"),
            tool_result("t1", "c1", "3 cats"),
        )
    )

    updates = await stream(agent)

    end = types(updates).index("TOOL_CALL_END")
    (call,) = updates[end].contents
    assert isinstance(call, FunctionCallContent)
    assert (call.call_id, call.name, call.arguments) == ("c1", "search", {"q": "cats"})
    assert updates[end].message_id == "a1"
    assert end < types(updates).index("TOOL_CALL_RESULT")


async def test_a_server_tool_call_is_informational_only() -> None:
    agent = Agent(lambda b: run(b, tool_call("c1", "search", "{}"), tool_result("t1", "c1", "x")))

    updates = await stream(agent)

    calls = [c for u in updates for c in u.contents if isinstance(c, FunctionCallContent)]
    assert [c.informational_only for c in calls] == [True]


async def test_a_tool_result_is_a_tool_update_with_a_function_result() -> None:
    agent = Agent(lambda b: run(b, tool_call("c1", "search", "{}"), tool_result("t1", "c1", "ok")))

    updates = await stream(agent)

    (result_update,) = [u for u in updates if u.raw_representation["type"] == "TOOL_CALL_RESULT"]
    (result,) = result_update.contents
    assert isinstance(result, FunctionResultContent)
    assert (result.call_id, result.result) == ("c1", "ok")
    assert (result_update.role, result_update.message_id) == ("tool", "t1")


async def test_a_tool_result_in_content_parts_is_sent_back_as_parts() -> None:
    parts = [{"type": "text", "text": "see"}]
    agent = Agent(
        lambda b: run(
            b, tool_call("c1", "look", "{}", parent="a1"), tool_result("t1", "c1", parts)
        ),
        lambda b: run(b),
    )
    async with agent.client() as client:
        first = await client.get_response("hi")
        await client.get_response([ChatMessage("user", "hi", message_id="u1"), *first.messages])

    tool_message = agent.last["messages"][-1]
    assert tool_message == {"id": "t1", "role": "tool", "toolCallId": "c1", "content": parts}


async def test_reasoning_deltas_become_reasoning_content() -> None:
    agent = Agent(
        lambda b: run(
            b,
            {"type": "REASONING_START", "messageId": "rs1"},
            {"type": "REASONING_MESSAGE_START", "messageId": "r1", "role": "reasoning"},
            {"type": "REASONING_MESSAGE_CONTENT", "messageId": "r1", "delta": "Let me "},
            {"type": "REASONING_MESSAGE_CONTENT", "messageId": "r1", "delta": "think."},
            {"type": "REASONING_MESSAGE_END", "messageId": "r1"},
            {"type": "REASONING_END", "messageId": "rs1"},
        )
    )

    updates = await stream(agent)
    response = ChatResponse.from_updates(updates)

    (reasoning,) = [m for m in response.messages if m.message_id == "r1"]
    assert isinstance(reasoning.contents[0], TextReasoningContent)
    assert reasoning.contents[0].text == "Let me think."


async def test_encrypted_values_are_sent_back_unchanged_on_what_they_name() -> None:
    agent = Agent(
        lambda b: run(
            b,
            text("a1", "Done."),
            tool_call("c1", "search", "{}", parent="a1"),
            tool_result("t1", "c1", "ok"),
            {
                "type": "REASONING_ENCRYPTED_VALUE",
                "subtype": "tool-call",
                "entityId": "c1",
                "encryptedValue": "enc-call==",
            },
            {
                "type": "REASONING_ENCRYPTED_VALUE",
                "subtype": "message",
                "entityId": "a1",
                "encryptedValue": "enc-msg==",
            },
        ),
        lambda b: run(b),
    )
    async with agent.client() as client:
        history = [ChatMessage("user", "hi", message_id="u1")]
        response = await client.get_response(history)
        await client.get_response([*history, *response.messages])

    sent = {m["id"]: m for m in agent.last["messages"]}
    assert sent["a1"]["encryptedValue"] == "enc-msg=="
    assert sent["a1"]["toolCalls"][0]["encryptedValue"] == "enc-call=="


async def test_an_encrypted_value_for_an_unknown_entity_is_dropped_with_a_warning() -> None:
    # agui-wire §3.5: an unknown entityId gets a warning and may be dropped; never fatal.
    agent = Agent(
        lambda b: run(
            b,
            text("a1", "Done."),
            {
                "type": "REASONING_ENCRYPTED_VALUE",
                "subtype": "message",
                "entityId": "nobody",
                "encryptedValue": "enc==",
            },
            {
                "type": "REASONING_ENCRYPTED_VALUE",
                "subtype": "message",
                "entityId": "u1",  # a message of the history the client sent
                "encryptedValue": "enc-user==",
            },
        ),
        lambda b: run(b),
    )
    warnings: list[str] = []
    async with agent.client(on_warning=warnings.append) as client:
        history = [ChatMessage("user", "hi", message_id="u1")]
        response = await client.get_response(history)
        await client.get_response([*history, *response.messages])

    assert response.text == "Done."
    assert len(warnings) == 1 and "'nobody'" in warnings[0]
    assert "enc==" not in str(agent.last["messages"])
    assert "enc-user==" in str(agent.last["messages"])


async def test_state_snapshot_and_delta_are_applied_and_carried_on_updates() -> None:
    agent = Agent(
        lambda b: run(
            b,
            {"type": "STATE_SNAPSHOT", "snapshot": {"count": 1, "items": []}},
            {"type": "STATE_DELTA", "delta": [{"op": "replace", "path": "/count", "value": 2}]},
        )
    )

    async with agent.client() as client:
        updates = [u async for u in client.get_streaming_response("hi")]
        thread_id = client.thread_id
        assert thread_id is not None
        assert client.state_of(thread_id) == {"count": 2, "items": []}

    state_updates = [u for u in updates if u.raw_representation["type"].startswith("STATE")]
    assert [u.additional_properties["agui_state"] for u in state_updates] == [
        {"count": 1, "items": []},
        {"count": 2, "items": []},
    ]


async def test_the_state_a_run_leaves_is_sent_back_on_the_next_run() -> None:
    agent = Agent(
        lambda b: run(
            b,
            text("a1", "ok"),
            {"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/seen", "value": True}]},
        ),
        lambda b: run(b, text("a2", "again")),
    )
    async with agent.client() as client:
        history = [ChatMessage("user", "hi", message_id="u1")]
        options = ChatOptions(additional_properties={"agui_state": {"cart": []}})
        response = await client.get_response(history, options)
        assert response.messages[-1].additional_properties["agui_state"] == {
            "cart": [],
            "seen": True,
        }
        await client.get_response([*history, *response.messages, ChatMessage("user", "more")])

    assert agent.bodies[0]["state"] == {"cart": []}
    assert agent.bodies[1]["state"] == {"cart": [], "seen": True}


async def test_a_patch_that_does_not_apply_warns_and_keeps_the_state() -> None:
    warnings: list[str] = []
    agent = Agent(
        lambda b: run(
            b,
            {"type": "STATE_SNAPSHOT", "snapshot": {"a": 1}},
            {"type": "STATE_DELTA", "delta": [{"op": "remove", "path": "/missing"}]},
        )
    )
    async with agent.client(on_warning=warnings.append) as client:
        await client.get_response("hi")
        assert client.state == {"a": 1}

    assert any("state patch" in w for w in warnings)


async def test_usage_becomes_usage_content_and_response_usage() -> None:
    usage = [{"model": "m-1", "inputTokens": 10, "outputTokens": 5, "cacheWriteInputTokens": 2}]
    agent = Agent(lambda b: [started(b), *text("a1", "x"), finished(b, usage=usage)])
    async with agent.client() as client:
        response = await client.get_response("hi")

    assert response.usage is not None
    assert (response.usage.input_token_count, response.usage.output_token_count) == (10, 5)
    assert response.usage.additional_counts == {"cache_write_input_tokens": 2}
    assert response.model_id == "m-1"


async def test_usage_content_is_on_the_run_finished_update() -> None:
    usage = [{"inputTokens": 3}]
    agent = Agent(lambda b: [started(b), finished(b, usage=usage)])

    updates = await stream(agent)

    (content,) = updates[-1].contents
    assert isinstance(content, UsageContent)
    assert content.details.input_token_count == 3


async def test_success_stops_and_cancelled_is_cancelled() -> None:
    agent = Agent(lambda b: run(b), lambda b: run(b, outcome={"type": "cancelled"}))
    async with agent.client() as client:
        ok = await client.get_response("a")
        cancelled = await client.get_response("b")

    assert ok.finish_reason == ChatFinishReason.STOP
    assert cancelled.finish_reason == ChatFinishReason.CANCELLED


async def test_messages_snapshot_and_activity_arrive_as_content_less_updates() -> None:
    snapshot = {
        "type": "MESSAGES_SNAPSHOT",
        "messages": [{"id": "u1", "role": "user", "content": "hi"}],
    }
    activity = {
        "type": "ACTIVITY_SNAPSHOT",
        "messageId": "act1",
        "activityType": "progress",
        "content": {"pct": 50},
    }
    agent = Agent(lambda b: run(b, snapshot, activity))

    updates = await stream(agent)

    assert updates[1].raw_representation == snapshot
    assert updates[2].raw_representation == activity
    assert updates[1].contents == [] and updates[2].contents == []


async def test_two_runs_on_one_stream_both_arrive() -> None:
    agent = Agent(
        lambda b: [
            {"type": "RUN_STARTED", "threadId": b["threadId"], "runId": "earlier"},
            *text("m1", "first"),
            {"type": "RUN_FINISHED", "threadId": b["threadId"], "runId": "earlier"},
            *run(b, text("m2", "second")),
        ]
    )
    async with agent.client() as client:
        response = await client.get_response("hi")

    assert [m.text for m in response.messages] == ["first", "second"]
    assert response.finish_reason == ChatFinishReason.STOP


async def test_unknown_events_are_dropped_with_a_warning() -> None:
    warnings: list[str] = []
    agent = Agent(lambda b: run(b, {"type": "META_FUTURE", "x": 1}, text("m1", "ok")))

    updates = await stream(agent, on_warning=warnings.append)

    assert "META_FUTURE" not in types(updates)
    assert any("META_FUTURE" in w for w in warnings)


def raw_stream(body: dict[str, Any], *, space: bool = True, newline: str = "\n") -> bytes:
    return b"".join(frame(e, space=space, newline=newline) for e in run(body, text("m1", "ok")))


async def response_text(agent: Agent) -> str:
    async with agent.client() as client:
        return (await client.get_response("hi")).text


async def test_data_lines_without_a_space_are_read() -> None:
    assert await response_text(Agent(lambda b: raw_stream(b, space=False))) == "ok"


async def test_crlf_framing_is_read() -> None:
    assert await response_text(Agent(lambda b: raw_stream(b, newline="\r\n"))) == "ok"


async def test_comments_and_event_id_retry_lines_are_ignored() -> None:
    def body(b: dict[str, Any]) -> bytes:
        out = b": keep-alive\n\nretry: 1000\n\n"
        for event in run(b, text("m1", "ok")):
            out += b"event: agui\nid: 7\n" + frame(event) + b": ping\n\n"
        return out

    assert await response_text(Agent(body)) == "ok"


async def test_an_event_split_over_several_data_lines_is_joined() -> None:
    def body(b: dict[str, Any]) -> bytes:
        out = b""
        for event in run(b, text("m1", "ok")):
            encoded = json.dumps(event, indent=1)  # several lines of JSON
            out += b"".join(b"data: " + line.encode() + b"\n" for line in encoded.split("\n"))
            out += b"\n"
        return out

    assert await response_text(Agent(body)) == "ok"


async def test_every_response_message_carries_the_thread_and_no_conversation_id() -> None:
    agent = Agent(lambda b: run(b, tool_call("c1", "search", "{}"), tool_result("t1", "c1", "x")))
    async with agent.client() as client:
        response = await client.get_response("hi", ChatOptions(conversation_id="t-9"))

    assert response.conversation_id is None
    assert {m.additional_properties["agui_thread_id"] for m in response.messages} == {"t-9"}
    assert isinstance(response.messages[-1].contents[0], FunctionResultContent)


async def test_a_subagents_messages_are_sent_back_with_their_attribution() -> None:
    agent = Agent(
        lambda b: run(
            b,
            {"type": "SUBAGENT_STARTED", "subagentRunId": "s1", "name": "researcher"},
            {"type": "TEXT_MESSAGE_START", "messageId": "m1", "subagentRunId": "s1"},
            {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "found it"},
            {"type": "TEXT_MESSAGE_END", "messageId": "m1"},
            {"type": "SUBAGENT_FINISHED", "subagentRunId": "s1"},
        ),
        lambda b: run(b),
    )
    async with agent.client() as client:
        history = [ChatMessage("user", "hi", message_id="u1")]
        response = await client.get_response(history)
        await client.get_response([*history, *response.messages])

    assert agent.last["messages"][1] == {
        "id": "m1",
        "role": "assistant",
        "content": "found it",
        "subagentRunId": "s1",
    }
