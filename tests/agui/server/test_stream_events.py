"""The events AGUIServer writes for what the hosted chat client streams."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest
from ag_ui.core import CustomEvent, StateDeltaEvent, StateSnapshotEvent
from server_support import (
    Tools,
    assert_valid_agui,
    assistant_calls,
    client_for,
    of_type,
    outcome,
    run_error,
    run_input,
    scripted,
    sse_events,
    text_of,
    tool_result,
    types,
    user,
)

from agui_chat import (
    BaseChatClient,
    ChatMessage,
    ChatOptions,
    ChatResponse,
    ChatResponseUpdate,
    FunctionCallContent,
    FunctionCallUpdateContent,
    FunctionResultContent,
    TextContent,
    TextReasoningContent,
    UsageDetails,
    ai_function,
)
from agui_chat.agui import current_run
from agui_server import agui_server
from meai_texts import FAILED


class StreamingModel(BaseChatClient):
    """A model that streams the given updates, one list per call."""

    def __init__(self, *turns: list[ChatResponseUpdate]) -> None:
        self.turns = list(turns)
        self.calls: list[list[ChatMessage]] = []

    async def get_streaming_response(
        self, messages: Any, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        self.calls.append(list(messages))
        for update in self.turns.pop(0):
            yield update


async def test_text_streams_as_one_message_between_run_started_and_run_finished() -> None:
    events = await agui_server(scripted("Hello there, friend.")).run()
    assert types(events) == [
        "RUN_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "RUN_FINISHED",
    ]
    assert events[0] == {
        "type": "RUN_STARTED",
        "threadId": "t1",
        "runId": "r1",
        "protocolVersion": "1.0",
    }
    assert text_of(events) == "Hello there, friend."
    assert events[1]["role"] == "assistant"
    assert {e["messageId"] for e in events[1:6]} == {events[1]["messageId"]}
    assert events[-1] == {
        "type": "RUN_FINISHED",
        "threadId": "t1",
        "runId": "r1",
        "outcome": {"type": "success"},
    }


async def test_each_event_is_compact_json_with_no_null_fields() -> None:
    async with agui_server(scripted('Hé "quoted"\nline')).client() as client:
        response = await client.post("/", json=run_input())
    for line in response.text.split("\n"):
        if line.startswith("data: "):
            assert ": " not in line[6:].replace('": "', "") or '"delta"' in line
            assert "null" not in line
    assert "H\u00e9" in response.text  # raw UTF-8, not \\u escapes
    assert text_of(sse_events(response.content)) == 'Hé "quoted"\nline'


async def test_the_parent_run_id_is_echoed_on_run_started() -> None:
    events = await agui_server(scripted("ok")).run(parentRunId="p1")
    assert events[0]["parentRunId"] == "p1"


async def test_a_new_text_message_starts_when_the_message_id_changes() -> None:
    model = StreamingModel(
        [
            ChatResponseUpdate("assistant", "one", message_id="m1"),
            ChatResponseUpdate("assistant", "two", message_id="m2"),
        ]
    )
    events = await agui_server(model).run()
    starts = of_type(events, "TEXT_MESSAGE_START")
    assert [s["messageId"] for s in starts] == ["m1", "m2"]


async def test_empty_text_deltas_are_not_sent() -> None:
    model = StreamingModel(
        [
            ChatResponseUpdate("assistant", [TextContent("")], message_id="m1"),
            ChatResponseUpdate("assistant", "x", message_id="m1"),
        ]
    )
    events = await agui_server(model).run()
    assert [e["delta"] for e in of_type(events, "TEXT_MESSAGE_CONTENT")] == ["x"]


async def test_reasoning_streams_as_a_reasoning_message_with_its_encrypted_value() -> None:
    model = scripted(
        [TextReasoningContent("Let me think.", protected_data="opaque=="), TextContent("Done.")]
    )
    events = await agui_server(model).run()
    assert types(events)[:7] == [
        "RUN_STARTED",
        "REASONING_START",
        "REASONING_MESSAGE_START",
        "REASONING_MESSAGE_CONTENT",
        "REASONING_ENCRYPTED_VALUE",
        "REASONING_MESSAGE_END",
        "REASONING_END",
    ]
    reasoning_id = events[2]["messageId"]
    assert events[2]["role"] == "reasoning"
    assert events[3]["delta"] == "Let me think."
    assert events[4] == {
        "type": "REASONING_ENCRYPTED_VALUE",
        "subtype": "message",
        "entityId": reasoning_id,
        "encryptedValue": "opaque==",
    }
    assert text_of(events) == "Done."


async def test_a_server_tool_call_is_streamed_and_its_result_follows(tools: Tools) -> None:
    model = scripted([FunctionCallContent("c1", "lookup", {"city": "Lisbon"})], "It is sunny.")
    events = await agui_server(model, tools=[tools.lookup()]).run()
    assert types(events) == [
        "RUN_STARTED",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "TOOL_CALL_RESULT",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "RUN_FINISHED",
    ]
    start, args, end, result = events[1:5]
    assert start["toolCallId"] == "c1" and start["toolCallName"] == "lookup"
    assert "parentMessageId" in start
    assert args == {"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": '{"city":"Lisbon"}'}
    assert end == {"type": "TOOL_CALL_END", "toolCallId": "c1"}
    assert result["toolCallId"] == "c1" and result["content"] == "sunny in Lisbon"
    assert result["role"] == "tool" and result["messageId"]
    assert tools.count("lookup") == 1


async def test_tool_arguments_stream_as_the_model_streams_them(tools: Tools) -> None:
    model = StreamingModel(
        [
            ChatResponseUpdate(
                "assistant", [FunctionCallUpdateContent("c1", "lookup", '{"ci')], message_id="m1"
            ),
            ChatResponseUpdate(
                "assistant",
                [FunctionCallUpdateContent("c1", None, 'ty": "Porto"}')],
                message_id="m1",
            ),
            ChatResponseUpdate(
                "assistant",
                [FunctionCallContent("c1", "lookup", {"city": "Porto"})],
                message_id="m1",
            ),
        ],
        [ChatResponseUpdate("assistant", "ok", message_id="m2")],
    )
    events = await agui_server(model, tools=[tools.lookup()]).run()
    assert types(events)[1:6] == [
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "TOOL_CALL_RESULT",
    ]
    assert [e["delta"] for e in of_type(events, "TOOL_CALL_ARGS")] == ['{"ci', 'ty": "Porto"}']
    assert events[1]["parentMessageId"] == "m1"
    assert tools.runs["lookup"] == [{"city": "Porto"}]


@pytest.mark.parametrize(
    "between",
    [TextContent("Let me check."), TextReasoningContent("thinking")],
    ids=["text", "reasoning"],
)
async def test_text_or_reasoning_between_argument_pieces_leaves_the_call_open(
    tools: Tools, between: Any
) -> None:
    # Items interleave freely; TOOL_CALL_END would tell the client the arguments are whole.
    model = StreamingModel(
        [
            ChatResponseUpdate("assistant", [FunctionCallUpdateContent("c1", "lookup", '{"ci')]),
            ChatResponseUpdate("assistant", [between], message_id="m1"),
            ChatResponseUpdate("assistant", [FunctionCallUpdateContent("c1", None, 'ty":"Rome"}')]),
            ChatResponseUpdate(
                "assistant", [FunctionCallContent("c1", "lookup", {"city": "Rome"})]
            ),
        ],
        [ChatResponseUpdate("assistant", "ok", message_id="m2")],
    )
    events = await agui_server(model, tools=[tools.lookup()]).run()
    kinds = types(events)
    args = [i for i, e in enumerate(events) if e["type"] == "TOOL_CALL_ARGS"]
    assert "".join(events[i]["delta"] for i in args) == '{"city":"Rome"}'
    assert kinds.index("TOOL_CALL_END") > args[-1]
    assert kinds.count("TOOL_CALL_END") == 1
    assert tools.runs["lookup"] == [{"city": "Rome"}]


async def test_a_result_ends_its_own_call_and_leaves_another_streaming_call_open(
    tools: Tools,
) -> None:
    # c1 was run by the service itself (its result is in the same turn); c2 is still streaming.
    model = StreamingModel(
        [
            ChatResponseUpdate(
                "assistant", [FunctionCallContent("c1", "lookup", {"city": "Faro"})]
            ),
            ChatResponseUpdate("assistant", [FunctionCallUpdateContent("c2", "lookup", '{"ci')]),
            ChatResponseUpdate("tool", [FunctionResultContent("c1", "from the service")]),
            ChatResponseUpdate("assistant", [FunctionCallUpdateContent("c2", None, 'ty":"Rome"}')]),
            ChatResponseUpdate(
                "assistant", [FunctionCallContent("c2", "lookup", {"city": "Rome"})]
            ),
        ],
        [ChatResponseUpdate("assistant", "ok", message_id="m2")],
    )
    events = await agui_server(model, tools=[tools.lookup()]).run()
    c2_args = [e["delta"] for e in events if e.get("toolCallId") == "c2" and "delta" in e]
    assert "".join(c2_args) == '{"city":"Rome"}'
    assert [e["type"] for e in events if e.get("toolCallId") == "c2"][-2:] == [
        "TOOL_CALL_END",
        "TOOL_CALL_RESULT",
    ]
    assert tools.runs["lookup"] == [{"city": "Rome"}]  # c1 had its result from the service


async def test_argument_pieces_before_the_tool_name_are_held_until_it_arrives(tools: Tools) -> None:
    model = StreamingModel(
        [
            ChatResponseUpdate("assistant", [FunctionCallUpdateContent("c1", None, '{"city":')]),
            ChatResponseUpdate("assistant", [FunctionCallUpdateContent("c1", "lookup", '"Faro"}')]),
            ChatResponseUpdate(
                "assistant", [FunctionCallContent("c1", "lookup", {"city": "Faro"})]
            ),
        ],
        [ChatResponseUpdate("assistant", "ok")],
    )
    events = await agui_server(model, tools=[tools.lookup()]).run()
    assert types(events)[1:4] == ["TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_ARGS"]
    assert "".join(e["delta"] for e in of_type(events, "TOOL_CALL_ARGS")) == '{"city":"Faro"}'


async def test_text_before_a_tool_call_is_closed_and_becomes_the_call_parent(tools: Tools) -> None:
    model = scripted(
        [TextContent("Checking."), FunctionCallContent("c1", "lookup", {"city": "Lisbon"})],
        "Sunny.",
    )
    events = await agui_server(model, tools=[tools.lookup()]).run()
    assert types(events)[1:5] == [
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "TOOL_CALL_START",
    ]
    assert events[4]["parentMessageId"] == events[1]["messageId"]


async def test_a_tool_that_raises_gives_a_generic_result_without_the_exception_text() -> None:
    @ai_function
    def explode() -> str:
        """Fail."""
        raise RuntimeError("password=hunter2")

    model = scripted([FunctionCallContent("c1", "explode", {})], "It failed.")
    events = await agui_server(model, tools=[explode]).run()
    (result,) = of_type(events, "TOOL_CALL_RESULT")
    assert result["content"] == FAILED
    assert "hunter2" not in str(events)
    assert outcome(events) == {"type": "success"}


async def test_a_failure_once_the_stream_is_open_is_a_run_error_without_the_exception_text(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def fail(messages: Any, options: Any) -> Any:
        raise RuntimeError("connection string postgres://admin:hunter2@db")

    with caplog.at_level(logging.ERROR, logger="agui_chat.server"):
        events = await agui_server(scripted(fail)).run()
    assert types(events) == ["RUN_STARTED", "RUN_ERROR"]
    assert run_error(events) == {
        "type": "RUN_ERROR",
        "message": "An internal error occurred while running the agent.",
        "code": "AGENT_ERROR",
    }
    assert "hunter2" in caplog.text  # the full error is in the server log


async def test_a_failure_mid_message_ends_the_stream_with_run_error() -> None:
    class Breaks(BaseChatClient):
        async def get_streaming_response(
            self, messages: Any, options: Any = None
        ) -> AsyncIterator[ChatResponseUpdate]:
            yield ChatResponseUpdate("assistant", "partial", message_id="m1")
            raise ConnectionError("upstream reset")

    events = await agui_server(Breaks()).run()
    assert types(events) == [
        "RUN_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "RUN_ERROR",
    ]
    assert "upstream" not in str(events)


async def test_usage_is_summed_onto_run_finished(tools: Tools) -> None:
    first = ChatResponse(
        ChatMessage("assistant", [FunctionCallContent("c1", "lookup", {"city": "Rome"})]),
        usage=UsageDetails(input_token_count=10, output_token_count=3, total_token_count=13),
    )
    second = ChatResponse(
        ChatMessage("assistant", "Sunny."),
        usage=UsageDetails(
            input_token_count=20,
            output_token_count=2,
            total_token_count=22,
            cached_input_token_count=5,
        ),
    )
    events = await agui_server(scripted(first, second), tools=[tools.lookup()]).run()
    assert events[-1]["usage"] == [
        {
            "model": "scripted",
            "inputTokens": 30,
            "outputTokens": 5,
            "totalTokens": 35,
            "cachedInputTokens": 5,
        }
    ]


async def test_a_run_without_usage_has_no_usage_field() -> None:
    events = await agui_server(scripted("hi")).run()
    assert "usage" not in events[-1]


async def test_a_cancelled_finish_reason_ends_the_run_cancelled() -> None:
    model = StreamingModel(
        [
            ChatResponseUpdate("assistant", "stop", message_id="m1"),
            ChatResponseUpdate(finish_reason="cancelled"),
        ]
    )
    events = await agui_server(model).run()
    assert outcome(events) == {"type": "cancelled"}
    assert types(events)[-2] == "TEXT_MESSAGE_END"


async def test_state_events_a_tool_emits_go_out_in_order_and_the_tool_sees_the_state() -> None:
    seen: list[Any] = []

    @ai_function
    def add_item(item: str) -> str:
        """Add an item to the shared list."""
        run = current_run()
        assert run is not None
        run.emit_state_snapshot({"items": []})
        run.emit_state_delta([{"op": "add", "path": "/items/-", "value": item}])
        seen.append(run.state)
        return "added"

    model = scripted([FunctionCallContent("c1", "add_item", {"item": "milk"})], "Added.")
    events = await agui_server(model, tools=[add_item]).run(state={"items": ["old"]})
    assert types(events)[4:7] == ["STATE_SNAPSHOT", "STATE_DELTA", "TOOL_CALL_RESULT"]
    assert events[4] == {"type": "STATE_SNAPSHOT", "snapshot": {"items": []}}
    assert events[5] == {
        "type": "STATE_DELTA",
        "delta": [{"op": "add", "path": "/items/-", "value": "milk"}],
    }
    assert seen == [{"items": ["milk"]}]


async def test_a_state_delta_that_does_not_apply_is_not_sent(tools: Tools) -> None:
    @ai_function
    def bad_patch() -> str:
        """Patch a missing path."""
        run = current_run()
        assert run is not None
        try:
            run.emit_state_delta([{"op": "replace", "path": "/missing", "value": 1}])
        except ValueError:
            return "refused"
        return "sent"

    model = scripted([FunctionCallContent("c1", "bad_patch", {})], "ok")
    events = await agui_server(model, tools=[bad_patch]).run()
    assert of_type(events, "STATE_DELTA") == []
    assert of_type(events, "TOOL_CALL_RESULT")[0]["content"] == "refused"


async def test_events_a_tool_emits_through_the_run_context_go_out_as_they_are() -> None:
    @ai_function
    def progress() -> str:
        """Report progress."""
        run = current_run()
        assert run is not None
        run.emit({"type": "CUSTOM", "name": "app:progress", "value": {"pct": 50}})
        return "half"

    model = scripted([FunctionCallContent("c1", "progress", {})], "ok")
    events = await agui_server(model, tools=[progress]).run()
    assert of_type(events, "CUSTOM") == [
        {"type": "CUSTOM", "name": "app:progress", "value": {"pct": 50}}
    ]


async def test_ag_ui_events_a_tool_emits_keep_the_nulls_they_were_given() -> None:
    # agui-wire §1.5: a null inside data survives; CUSTOM.value is required and may be null.
    @ai_function
    def clear() -> str:
        """Clear the selection."""
        run = current_run()
        assert run is not None
        run.emit(CustomEvent(name="app.cleared", value=None))
        run.emit(StateDeltaEvent(delta=[{"op": "add", "path": "/selection", "value": None}]))
        run.emit(StateSnapshotEvent(snapshot={"a": None, "b": 1}))
        return "cleared"

    model = scripted([FunctionCallContent("c1", "clear", {})], "ok")
    events = await agui_server(model, tools=[clear]).run()
    assert of_type(events, "CUSTOM") == [{"type": "CUSTOM", "name": "app.cleared", "value": None}]
    assert of_type(events, "STATE_DELTA") == [
        {"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/selection", "value": None}]}
    ]
    # Optional fields nobody set (timestamp, rawEvent, ...) are left out, not sent as null.
    assert of_type(events, "STATE_SNAPSHOT") == [
        {"type": "STATE_SNAPSHOT", "snapshot": {"a": None, "b": 1}}
    ]


async def test_state_and_custom_events_carried_on_updates_pass_through() -> None:
    model = StreamingModel(
        [
            ChatResponseUpdate(raw_representation={"type": "STATE_SNAPSHOT", "snapshot": {"n": 1}}),
            ChatResponseUpdate(raw_representation={"type": "TEXT_MESSAGE_START", "messageId": "x"}),
            ChatResponseUpdate(
                "assistant",
                "hi",
                message_id="m1",
                raw_representation={
                    "type": "TEXT_MESSAGE_CONTENT",
                    "messageId": "m1",
                    "delta": "hi",
                },
            ),
            ChatResponseUpdate(
                raw_representation={
                    "type": "STATE_DELTA",
                    "delta": [{"op": "replace", "path": "/n", "value": 2}],
                }
            ),
        ]
    )
    events = await agui_server(model).run()
    assert types(events) == [
        "RUN_STARTED",
        "STATE_SNAPSHOT",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "STATE_DELTA",
        "TEXT_MESSAGE_END",
        "RUN_FINISHED",
    ]
    assert events[2]["messageId"] == "m1"


async def test_a_tool_reads_state_context_forwarded_props_and_ids_of_the_run() -> None:
    seen: dict[str, Any] = {}

    @ai_function
    def inspect_run() -> str:
        """Look at the run."""
        run = current_run()
        assert run is not None
        seen.update(
            thread=run.thread_id,
            run=run.run_id,
            state=run.state,
            context=run.context,
            props=run.forwarded_props,
        )
        return "ok"

    model = scripted([FunctionCallContent("c1", "inspect_run", {})], "done")
    body = run_input(
        state={"cart": [1]},
        context=[{"description": "user name", "value": "Ana"}],
        forwardedProps={"locale": "pt"},
    )
    await agui_server(model, tools=[inspect_run]).post(body)
    assert seen == {
        "thread": "t1",
        "run": "r1",
        "state": {"cart": [1]},
        "context": [{"description": "user name", "value": "Ana"}],
        "props": {"locale": "pt"},
    }
    assert current_run() is None


async def test_the_model_gets_the_raw_input_and_the_context_as_instructions() -> None:
    model = scripted("ok")
    body = run_input(
        context=[{"description": "user name", "value": "Ana"}], forwardedProps={"x": 1}
    )
    await agui_server(model).post(body)
    ((_, options),) = model.calls
    assert options is not None
    agui_input = options.additional_properties["agui_input"]
    assert agui_input.forwarded_props == {"x": 1} and agui_input.run_id == "r1"
    assert options.instructions is not None and "- user name: Ana" in options.instructions
    assert options.conversation_id is None  # the server keeps no history: the model gets it all


async def test_keepalive_comments_are_sent_while_a_tool_runs_quietly(tools: Tools) -> None:
    keepalive_sent = asyncio.Event()

    @ai_function
    async def slow_report() -> str:
        """Take a while."""
        await keepalive_sent.wait()
        return "report ready"

    agent = agui_server(
        scripted([FunctionCallContent("c1", "slow_report", {})], "Done."),
        tools=[slow_report],
        keepalive_seconds=0.01,
    )

    async def spying_app(scope: Any, receive: Any, send: Any) -> None:
        async def spy(message: Any) -> None:
            if message.get("body", b"").startswith(b": keepalive"):
                keepalive_sent.set()
            await send(message)

        await agent.app(scope, receive, spy)

    async with client_for(spying_app) as client:
        response = await client.post("/", json=run_input())
    body = response.text
    assert ": keepalive\n\n" in body
    assert body.index(": keepalive") < body.index("TOOL_CALL_RESULT")
    assert_valid_agui(sse_events(body))


async def test_the_server_answers_lifespan_events() -> None:
    app = agui_server(scripted()).app
    sent: list[dict[str, Any]] = []
    incoming = iter([{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}])

    async def receive() -> Any:
        return next(incoming)

    async def send(message: Any) -> None:
        sent.append(message)

    await app({"type": "lifespan"}, receive, send)
    assert sent == [{"type": "lifespan.startup.complete"}, {"type": "lifespan.shutdown.complete"}]


async def test_a_pipeline_with_its_own_function_invocation_is_not_wrapped_again(
    tools: Tools,
) -> None:
    from agui_chat import FunctionInvokingChatClient

    inner = FunctionInvokingChatClient(
        scripted([FunctionCallContent("c1", "lookup", {"city": "Oslo"})], "Cold."),
        additional_tools=[tools.lookup()],
    )
    agent = agui_server(inner)
    assert agent.app.pipeline is inner
    events = await agent.run()
    assert of_type(events, "TOOL_CALL_RESULT")[0]["content"] == "sunny in Oslo"
    with pytest.raises(ValueError, match="function_invocation"):
        agui_server(inner, function_invocation={"max_iterations": 2})


async def test_function_invocation_settings_reach_the_loop(tools: Tools) -> None:
    call = FunctionCallContent("c1", "lookup", {"city": "Oslo"})
    again = FunctionCallContent("c2", "lookup", {"city": "Rome"})
    model = scripted([call], [again], "final")
    agent = agui_server(model, tools=[tools.lookup()], function_invocation={"max_iterations": 1})
    events = await agent.run()
    # One tool round (MEAI's max_iterations), then the tools are withdrawn: c2 is not run.
    assert tools.count("lookup") == 1
    assert of_type(events, "TOOL_CALL_END")


async def test_history_tool_calls_and_results_reach_the_model_as_contents(tools: Tools) -> None:
    model = scripted("ok")
    body = run_input(
        user("weather?"),
        assistant_calls(("c1", "lookup", {"city": "Rome"})),
        tool_result("c1", "sunny in Rome"),
    )
    events = await agui_server(model, tools=[tools.lookup()]).post(body)
    ((received, _),) = model.calls
    call, result = received[1].contents[0], received[2].contents[0]
    assert isinstance(call, FunctionCallContent) and call.arguments == {"city": "Rome"}
    assert result.result == "sunny in Rome"  # type: ignore[attr-defined]
    assert tools.count("lookup") == 0  # a call in the history is never run again
    assert of_type(events, "TOOL_CALL_START") == []


async def test_a_model_service_failure_is_a_model_error() -> None:
    from agui_chat import ServiceUnavailableError

    def unavailable(messages: Any, options: Any) -> Any:
        raise ServiceUnavailableError("upstream 503: internal host db-7", status_code=503)

    events = await agui_server(scripted(unavailable)).run()
    assert run_error(events) == {
        "type": "RUN_ERROR",
        "message": "The model service failed.",
        "code": "MODEL_ERROR",
    }


LOCAL_TIME = {
    "name": "local_time",
    "description": "The time where the user is.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
}


async def test_a_client_tool_call_ends_the_run_as_a_success_with_the_call_pending(
    tools: Tools,
) -> None:
    batch = [
        FunctionCallContent("c1", "lookup", {"city": "Rome"}),
        FunctionCallContent("c2", "local_time", {"city": "Rome"}),
    ]
    model = scripted(batch)
    events = await agui_server(model, tools=[tools.lookup()]).run(tools=[LOCAL_TIME])
    assert outcome(events) == {"type": "success", "pendingToolCallIds": ["c2"]}
    assert [e["toolCallId"] for e in of_type(events, "TOOL_CALL_END")] == ["c1", "c2"]
    assert [e["toolCallId"] for e in of_type(events, "TOOL_CALL_RESULT")] == ["c1"]
    ((_, options),) = model.calls
    assert options is not None
    assert [t.name for t in options.tools or []] == ["lookup", "local_time"]


async def test_the_client_answers_its_tool_in_the_next_run_and_the_model_gets_it() -> None:
    model = scripted("It is 09:41.")
    body = run_input(
        user("time?"),
        assistant_calls(("c2", "local_time", {"city": "Rome"})),
        tool_result("c2", "09:41"),
        tools=[LOCAL_TIME],
    )
    events = await agui_server(model).post(body)
    assert outcome(events) == {"type": "success"}
    ((received, _),) = model.calls
    assert received[-1].contents[0].result == "09:41"  # type: ignore[attr-defined]


async def test_a_client_tool_named_like_a_server_tool_does_not_take_its_calls(
    tools: Tools,
) -> None:
    impostor = {**LOCAL_TIME, "name": "lookup"}
    model = scripted([FunctionCallContent("c1", "lookup", {"city": "Rome"})], "ok")
    events = await agui_server(model, tools=[tools.lookup()]).run(tools=[impostor])
    assert tools.count("lookup") == 1
    assert outcome(events) == {"type": "success"}


async def lifespan(app: Any) -> None:
    """One ASGI lifespan: startup, then shutdown."""
    incoming = iter([{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}])

    async def receive() -> Any:
        return next(incoming)

    async def send(message: Any) -> None:
        pass

    await app({"type": "lifespan"}, receive, send)


async def test_at_shutdown_the_server_closes_the_store_it_made_never_the_one_it_was_given() -> None:
    from agui_chat.agui import AGUIServer
    from agui_chat.stores import InMemoryApprovalStore

    class Closing(InMemoryApprovalStore):
        closed = 0

        async def aclose(self) -> None:
            self.closed += 1
            await super().aclose()

    given = Closing()
    await lifespan(AGUIServer(scripted(), approval_store=given))
    assert given.closed == 0  # the caller's: it may serve other servers still

    for made in (
        AGUIServer(scripted(), approval_store="memory://"),  # made from a URL: its own
        AGUIServer(scripted()),  # no key, no store: an in-memory one of its own
    ):
        store = made.approval_store
        assert isinstance(store, InMemoryApprovalStore)
        store.__class__ = Closing
        await lifespan(made)
        assert store.closed == 1
