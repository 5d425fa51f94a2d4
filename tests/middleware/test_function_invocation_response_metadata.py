"""What the tool loop's response carries besides its messages: the last round trip's ids
and metadata (non-streaming), none when no round trip ran, and the loop's own messages (the
rebuilt calls, the tool results) keeping their id, author and metadata in both modes."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from loop_support import Ask, call, resume, scripted

from agui_chat import (
    ChatFinishReason,
    ChatMessage,
    ChatOptions,
    ChatResponse,
    FunctionInvokingChatClient,
    InterruptResponseContent,
    ToolApprovalRequestContent,
    ai_function,
    approval_required,
    request_input,
)


def _tools(runs: list[str]) -> ChatOptions:
    @ai_function
    def lookup(city: str) -> str:
        """Look a city up."""
        runs.append(city)
        return f"{city}: found"

    return ChatOptions(tools=[lookup, approval_required(_gated(runs))])


def _gated(runs: list[str]) -> Any:
    @ai_function
    def delete_city(city: str) -> str:
        """Delete a city."""
        runs.append(f"deleted {city}")
        return "deleted"

    return delete_city


async def test_the_response_carries_the_last_round_trips_ids_and_metadata() -> None:
    runs: list[str] = []
    raw = object()
    at = datetime(2026, 12, 1, 12, 0, tzinfo=timezone.utc)
    model = scripted(
        ChatResponse(
            ChatMessage("assistant", [call("c1", "lookup", city="Oslo")]),
            response_id="first",
            conversation_id="conv-1",
            model_id="model-1",
            additional_properties={"round": 1},
        ),
        ChatResponse(
            ChatMessage("assistant", "Oslo exists."),
            response_id="second",
            conversation_id="conv-2",
            model_id="model-2",
            created_at=at,
            additional_properties={"round": 2},
            raw_representation=raw,
        ),
    )
    response = await FunctionInvokingChatClient(model).get_response("go", _tools(runs))

    assert runs == ["Oslo"]
    assert response.response_id == "second"
    assert response.conversation_id == "conv-2"
    assert response.model_id == "model-2"
    assert response.created_at == at
    assert response.additional_properties == {"round": 2}
    assert response.raw_representation is raw
    assert response.finish_reason == ChatFinishReason.STOP


async def test_a_resume_that_pauses_again_before_any_round_trip_has_no_response_ids() -> None:
    runs: list[str] = []

    @ai_function
    def deploy(env: str) -> str:
        """Deploy."""
        first = request_input("Which build?", key="build")
        second = request_input("Which region?", key="region")
        runs.append(f"{env} {first.payload} {second.payload}")
        return "deployed"

    options = ChatOptions(tools=[deploy])
    model = scripted(
        ChatResponse(
            ChatMessage("assistant", [call("c1", "deploy", env="prod")]), response_id="first"
        ),
        "done",
    )
    client = FunctionInvokingChatClient(model)
    history = [ChatMessage("user", "ship")]
    paused = await client.get_response(history, options)
    [question] = paused.input_requests
    assert paused.response_id == "first"

    again = await client.get_response(
        resume(history, paused, InterruptResponseContent(question.request_id, 7)), options
    )

    assert again.finish_reason == ChatFinishReason.INPUT_REQUIRED
    assert [q.key for q in again.input_requests] == ["region"]  # type: ignore[attr-defined]
    ids = [m.message_id for m in again.messages]
    assert None not in ids and len(set(ids)) == len(ids)  # the new question has its own id
    assert (again.response_id, again.conversation_id, again.model_id) == (None, None, None)
    assert (again.created_at, again.additional_properties, again.raw_representation) == (
        None,
        None,
        None,
    )
    assert runs == []
    assert len(model.calls) == 1


async def test_the_rebuilt_call_message_keeps_the_requests_message_id_and_author(
    ask: Ask, streaming: bool
) -> None:
    runs: list[str] = []
    raw = object()
    options = _tools(runs)
    model = scripted("done")
    request = ToolApprovalRequestContent("approval_c1", call("c1", "delete_city", city="Oslo"))
    history = [
        ChatMessage("user", "clean up"),
        ChatMessage(
            "assistant",
            [request],
            message_id="m-requests",
            author_name="planner",
            additional_properties={"lane": "a"},
            raw_representation=raw,
        ),
        ChatMessage("user", [request.create_response(True)]),
    ]
    response = await ask(FunctionInvokingChatClient(model), history, options)

    assert runs == ["deleted Oslo"]
    rebuilt, results = response.messages[0], response.messages[1]
    assert rebuilt.message_id == "m-requests"
    assert rebuilt.author_name == "planner"
    assert rebuilt.additional_properties == {"lane": "a"}
    if not streaming:  # an update carries no raw representation of the message
        assert rebuilt.raw_representation is raw
    assert [c.call_id for c in rebuilt.contents] == ["c1"]  # type: ignore[attr-defined]
    assert results.role.value == "tool"
    assert results.message_id is not None and results.message_id != "m-requests"
    assert response.text.endswith("done")
