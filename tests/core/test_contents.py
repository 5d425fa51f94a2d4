"""Contents: JSON round trips, unknown types, and the human-in-the-loop requests and answers."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from agui_chat import (
    AIContent,
    ChatMessage,
    DataContent,
    ErrorContent,
    ExpiredRequestError,
    FunctionCallContent,
    FunctionCallUpdateContent,
    FunctionResultContent,
    InterruptRequestContent,
    InterruptResponseContent,
    InvalidResponseError,
    TextContent,
    TextReasoningContent,
    ToolApprovalRequestContent,
    ToolApprovalResponseContent,
    ToolCallContent,
    UriContent,
    UsageContent,
    UsageDetails,
)

PAST = datetime.now(timezone.utc) - timedelta(hours=1)
FUTURE = datetime.now(timezone.utc) + timedelta(hours=1)
CALL = FunctionCallContent("call_1", "delete_file", {"path": "/tmp/a.txt"})
BUILD_SCHEMA = {
    "type": "object",
    "properties": {"build": {"type": "integer"}},
    "required": ["build"],
}


def _through_json(content: AIContent) -> AIContent:
    return AIContent.from_dict(json.loads(json.dumps(content.to_dict())))


EXAMPLES: list[AIContent] = [
    TextContent("hello", additional_properties={"lang": "en"}),
    TextReasoningContent("because", protected_data="opaque=="),
    DataContent(b"\x89PNG\x00", media_type="image/png", name="logo.png"),
    UriContent("https://example.com/report.pdf"),
    FunctionCallContent("c1", "lookup", {"query": "x", "limit": 3}, informational_only=True),
    FunctionCallContent.from_json_arguments("c2", "lookup", "{not json"),
    FunctionCallUpdateContent("c3", "lookup", '{"qu'),
    FunctionResultContent("c1", {"rows": [1, 2]}),
    ErrorContent("boom", error_code="E42", details="stack"),
    UsageContent(
        UsageDetails(input_token_count=3, output_token_count=4, additional_counts={"x": 1})
    ),
    ToolApprovalRequestContent(
        "approval_call_1",
        CALL,
        message="Delete it?",
        requires_confirmation=False,
        allow_edits=False,
        expires_at=FUTURE,
    ),
    ToolApprovalResponseContent(
        "approval_call_1", True, CALL, reason="fine", edited_arguments={"path": "/tmp/b.txt"}
    ),
    InterruptRequestContent(
        "q1",
        reason="input_required",
        message="Which build?",
        tool_call_id="call_1",
        response_schema=BUILD_SCHEMA,
        expires_at=FUTURE,
        metadata={"ui": "picker"},
        key="build",
    ),
    InterruptResponseContent("q1", {"build": 7}, "resolved", metadata={"by": "ann"}),
    InterruptResponseContent("q2", None, "cancelled"),
    ToolCallContent("lg-5:0", "rm_local", {"path": "/etc"}),  # a remote peer's call
]


@pytest.mark.parametrize("content", EXAMPLES, ids=lambda c: type(c).__name__)
def test_content_round_trips_through_json(content: AIContent) -> None:
    loaded = _through_json(content)
    assert type(loaded) is type(content)
    assert loaded.to_dict() == content.to_dict()


def test_approval_request_round_trip_keeps_every_field() -> None:
    loaded = _through_json(EXAMPLES[10])
    assert isinstance(loaded, ToolApprovalRequestContent)
    assert loaded.request_id == "approval_call_1"
    assert loaded.tool_call.call_id == "call_1"
    assert loaded.tool_call.arguments == {"path": "/tmp/a.txt"}
    assert loaded.message == "Delete it?"
    assert loaded.requires_confirmation is False
    assert loaded.allow_edits is False
    assert loaded.expires_at == FUTURE


def test_approval_response_round_trip_keeps_reason_and_edits() -> None:
    loaded = _through_json(EXAMPLES[11])
    assert isinstance(loaded, ToolApprovalResponseContent)
    assert loaded.approved is True
    assert loaded.reason == "fine"
    assert loaded.edited_arguments == {"path": "/tmp/b.txt"}


def test_interrupt_request_round_trip_keeps_every_field() -> None:
    loaded = _through_json(EXAMPLES[12])
    assert isinstance(loaded, InterruptRequestContent)
    assert (loaded.reason, loaded.message, loaded.tool_call_id, loaded.key) == (
        "input_required",
        "Which build?",
        "call_1",
        "build",
    )
    assert loaded.response_schema == BUILD_SCHEMA
    assert loaded.metadata == {"ui": "picker"}
    assert loaded.expires_at == FUTURE


def test_interrupt_response_round_trip_keeps_status_and_payload() -> None:
    resolved = _through_json(EXAMPLES[13])
    cancelled = _through_json(EXAMPLES[14])
    assert isinstance(resolved, InterruptResponseContent)
    assert isinstance(cancelled, InterruptResponseContent)
    assert (resolved.status, resolved.payload, resolved.cancelled) == (
        "resolved",
        {"build": 7},
        False,
    )
    assert (cancelled.status, cancelled.payload, cancelled.cancelled) == ("cancelled", None, True)


def test_unparsable_call_arguments_round_trip_as_raw_text() -> None:
    loaded = _through_json(EXAMPLES[5])
    assert isinstance(loaded, FunctionCallContent)
    assert loaded.arguments is None
    assert loaded.raw_arguments == "{not json"


def test_data_content_round_trip_keeps_the_bytes() -> None:
    loaded = _through_json(EXAMPLES[2])
    assert isinstance(loaded, DataContent)
    assert loaded.data == b"\x89PNG\x00"
    assert loaded.media_type == "image/png"
    assert loaded.has_top_level_media_type("IMAGE")


def test_a_paused_conversation_survives_json_and_can_still_be_answered() -> None:
    request = ToolApprovalRequestContent("approval_call_1", CALL)
    question = InterruptRequestContent(
        "q1", message="Which build?", tool_call_id="call_2", response_schema=BUILD_SCHEMA
    )
    conversation = [
        ChatMessage("user", "clean up"),
        ChatMessage("assistant", [CALL, FunctionCallContent("call_2", "deploy", {})]),
        ChatMessage("assistant", [request, question], message_id="pause"),
    ]
    text = json.dumps([m.to_dict() for m in conversation])
    loaded = [ChatMessage.from_dict(d) for d in json.loads(text)]
    assert loaded == conversation
    loaded_request, loaded_question = loaded[2].contents
    assert isinstance(loaded_request, ToolApprovalRequestContent)
    assert isinstance(loaded_question, InterruptRequestContent)
    answer = loaded_request.create_response(False, "not today")
    assert (answer.request_id, answer.approved, answer.reason) == (
        "approval_call_1",
        False,
        "not today",
    )
    with pytest.raises(InvalidResponseError, match="build"):
        loaded_question.create_response({"build": "seven"})
    assert loaded_question.create_response({"build": 7}).payload == {"build": 7}


def test_unknown_content_type_is_an_error_naming_it() -> None:
    with pytest.raises(ValueError, match="unknown content type 'hologram'"):
        AIContent.from_dict({"type": "hologram", "text": "x"})


def test_content_without_type_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown content type None"):
        AIContent.from_dict({"text": "x"})


def test_content_with_an_unexpected_field_is_an_error_naming_the_type() -> None:
    with pytest.raises(ValueError, match="invalid 'text' content"):
        AIContent.from_dict({"type": "text", "text": "x", "colour": "red"})


@pytest.mark.parametrize(
    ("data", "fault"),
    [
        ({"type": "text", "text": 5}, "text"),
        ({"type": "function_call", "call_id": "c1", "name": "f", "arguments": ["a"]}, "arguments"),
        ({"type": "tool_approval_response", "request_id": "r", "approved": "true"}, "approved"),
        ({"type": "tool_approval_request", "request_id": "r", "tool_call": {"type": "uri"}}, "uri"),
    ],
)
def test_loading_a_field_that_does_not_fit_is_an_error_naming_it(
    data: dict[str, Any], fault: str
) -> None:
    with pytest.raises(ValueError, match=f"invalid {data['type']!r} content: .*{fault}"):
        AIContent.from_dict(data)


def test_function_call_refuses_an_empty_call_id() -> None:
    with pytest.raises(ValueError, match="call_id must not be empty"):
        FunctionCallContent("", "f", {})


def test_data_content_refuses_a_non_data_uri() -> None:
    with pytest.raises(ValueError, match="'data:' URI"):
        DataContent("https://example.com/x.png")


def test_data_content_needs_a_media_type() -> None:
    with pytest.raises(ValueError, match="media_type is required"):
        DataContent(b"x")


def test_uri_content_infers_the_media_type_from_the_path() -> None:
    assert UriContent("https://example.com/a.png").media_type == "image/png"
    assert UriContent("https://example.com/blob").media_type == "application/octet-stream"


def test_call_from_json_arguments_keeps_bad_json_as_raw_text() -> None:
    call = FunctionCallContent.from_json_arguments("c1", "f", "[1, 2]")
    assert call.arguments is None
    assert call.raw_arguments == "[1, 2]"
    assert isinstance(call.exception, ValueError)


@pytest.mark.parametrize(
    "text", ['{"a": NaN}', '{"a": Infinity}', '{"a": -Infinity}', '{"a": 1e400}']
)
def test_call_from_json_arguments_refuses_numbers_that_are_not_json(text: str) -> None:
    call = FunctionCallContent.from_json_arguments("c1", "f", text)
    assert call.arguments is None
    assert call.raw_arguments == text
    assert isinstance(call.exception, ValueError)


def test_call_from_json_arguments_keeps_arguments_nested_too_deeply_as_raw_text() -> None:
    text = "[" * 50_000 + "]" * 50_000
    call = FunctionCallContent.from_json_arguments("c1", "f", text)
    assert call.arguments is None
    assert call.raw_arguments == text
    assert isinstance(call.exception, ValueError)
    assert "nest too deeply" in str(call.exception)


# -- approval requests -------------------------------------------------------------------


def test_approving_keeps_the_request_id_and_call() -> None:
    request = ToolApprovalRequestContent("r1", CALL)
    response = request.create_response(True)
    assert isinstance(response, ToolApprovalResponseContent)
    assert (response.request_id, response.approved, response.reason) == ("r1", True, None)
    assert response.tool_call is CALL
    assert response.edited_arguments is None


def test_rejecting_carries_the_reason() -> None:
    response = ToolApprovalRequestContent("r1", CALL).create_response(False, "too risky")
    assert (response.approved, response.reason) == (False, "too risky")
    assert response.to_payload() == {"approved": False, "reason": "too risky"}


def test_approving_with_edits_carries_the_edited_arguments() -> None:
    response = ToolApprovalRequestContent("r1", CALL).create_response(
        True, edited_arguments={"path": "/tmp/b.txt"}
    )
    assert response.edited_arguments == {"path": "/tmp/b.txt"}
    assert response.to_payload() == {"approved": True, "editedArgs": {"path": "/tmp/b.txt"}}


def test_an_expired_approval_cannot_be_approved() -> None:
    request = ToolApprovalRequestContent("r1", CALL, expires_at=PAST)
    assert request.is_expired()
    with pytest.raises(ExpiredRequestError, match="'r1' expired") as info:
        request.create_response(True)
    assert info.value.request_ids == ("r1",)


def test_an_expired_approval_can_still_be_rejected() -> None:
    request = ToolApprovalRequestContent("r1", CALL, expires_at=PAST.isoformat())
    assert request.create_response(False, "too late").approved is False


def test_edits_are_refused_where_the_request_does_not_allow_them() -> None:
    request = ToolApprovalRequestContent("r1", CALL, allow_edits=False)
    with pytest.raises(InvalidResponseError, match="does not allow editing"):
        request.create_response(True, edited_arguments={"path": "/etc"})


def test_edits_with_a_rejection_are_refused() -> None:
    with pytest.raises(ValueError, match="edited_arguments only make sense when approving"):
        ToolApprovalRequestContent("r1", CALL).create_response(False, edited_arguments={"a": 1})


def test_expiry_text_with_z_suffix_is_understood() -> None:
    request = ToolApprovalRequestContent("r1", CALL, expires_at="2000-01-01T00:00:00Z")
    assert request.expires_at == datetime(2000, 1, 1, tzinfo=timezone.utc)
    assert request.is_expired()


# -- interrupts ----------------------------------------------------------------------------


def _question(**kwargs: Any) -> InterruptRequestContent:
    return InterruptRequestContent(
        "q1", message="Which build?", tool_call_id="call_1", response_schema=BUILD_SCHEMA, **kwargs
    )


def test_answering_a_question_gives_a_resolved_response() -> None:
    response = _question().create_response({"build": 7})
    assert (response.request_id, response.status, response.payload) == (
        "q1",
        "resolved",
        {"build": 7},
    )
    assert not response.cancelled


def test_a_payload_failing_the_schema_is_refused_naming_the_violation() -> None:
    with pytest.raises(InvalidResponseError, match="'seven' is not of type 'integer'") as info:
        _question().create_response({"build": "seven"})
    assert "build" in str(info.value)
    assert info.value.request_ids == ("q1",)


def test_a_payload_missing_a_required_property_is_refused() -> None:
    with pytest.raises(InvalidResponseError, match="'build' is a required property"):
        _question().create_response({})


def test_any_payload_is_accepted_without_a_schema() -> None:
    question = InterruptRequestContent("q1", message="Anything?")
    assert question.create_response(["free", "form"]).payload == ["free", "form"]


def test_cancelling_a_question_gives_a_cancelled_response_without_payload() -> None:
    response = _question().cancel()
    assert (response.request_id, response.status, response.payload) == ("q1", "cancelled", None)
    assert response.cancelled


def test_an_expired_question_cannot_be_answered() -> None:
    with pytest.raises(ExpiredRequestError, match="can only be cancelled"):
        _question(expires_at=PAST).create_response({"build": 7})


def test_an_expired_question_can_be_cancelled() -> None:
    assert _question(expires_at=PAST).cancel().cancelled


def test_interrupt_response_refuses_an_unknown_status() -> None:
    with pytest.raises(ValueError, match="status must be 'resolved' or 'cancelled'"):
        InterruptResponseContent("q1", None, "ignored")  # type: ignore[arg-type]
