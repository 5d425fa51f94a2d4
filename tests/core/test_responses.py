"""ChatResponse and ChatResponse.from_updates: MEAI's coalescing rules."""

from __future__ import annotations

from agui_chat import (
    ChatFinishReason,
    ChatMessage,
    ChatResponse,
    ChatResponseUpdate,
    ChatRole,
    DataContent,
    FunctionCallContent,
    FunctionCallUpdateContent,
    InterruptRequestContent,
    TextContent,
    TextReasoningContent,
    ToolApprovalRequestContent,
    UsageContent,
    UsageDetails,
)


def _update(text: str | None = None, **kwargs: object) -> ChatResponseUpdate:
    return ChatResponseUpdate(contents=text, **kwargs)  # type: ignore[arg-type]


def test_updates_of_one_message_join_into_one_message_with_one_text() -> None:
    response = ChatResponse.from_updates(
        [_update("Hel", role="assistant", message_id="m1"), _update("lo", message_id="m1")]
    )
    assert len(response.messages) == 1
    assert response.messages[0].contents == [TextContent("Hello")]
    assert response.messages[0].message_id == "m1"
    assert response.text == "Hello"


def test_a_new_message_id_starts_a_new_message() -> None:
    response = ChatResponse.from_updates(
        [_update("a", message_id="m1"), _update("b", message_id="m2")]
    )
    assert [m.text for m in response.messages] == ["a", "b"]
    assert [m.message_id for m in response.messages] == ["m1", "m2"]


def test_an_update_without_message_id_continues_the_last_message() -> None:
    response = ChatResponse.from_updates([_update("a", message_id="m1"), _update("b")])
    assert [m.text for m in response.messages] == ["ab"]


def test_a_new_author_starts_a_new_message() -> None:
    response = ChatResponse.from_updates(
        [_update("a", author_name="alice"), _update("b", author_name="bob")]
    )
    assert [(m.author_name, m.text) for m in response.messages] == [("alice", "a"), ("bob", "b")]


def test_a_new_role_starts_a_new_message() -> None:
    response = ChatResponse.from_updates(
        [_update("a", role="assistant"), _update("b", role="tool")]
    )
    assert [m.role for m in response.messages] == [ChatRole.ASSISTANT, ChatRole.TOOL]


def test_a_role_differing_only_in_case_continues_the_message() -> None:
    response = ChatResponse.from_updates(
        [_update("a", role="assistant"), _update("b", role="ASSISTANT")]
    )
    assert [m.text for m in response.messages] == ["ab"]


def test_new_messages_start_as_assistant() -> None:
    response = ChatResponse.from_updates([_update("a")])
    assert response.messages[0].role == ChatRole.ASSISTANT


def test_only_adjacent_text_is_merged() -> None:
    call = FunctionCallContent("c1", "f", {})
    response = ChatResponse.from_updates(
        [_update("a"), _update("b"), ChatResponseUpdate(contents=[call]), _update("c")]
    )
    assert response.messages[0].contents == [TextContent("ab"), call, TextContent("c")]


def test_merging_text_does_not_change_the_callers_updates() -> None:
    updates = [_update("a"), _update("b")]
    ChatResponse.from_updates(updates)
    assert [u.text for u in updates] == ["a", "b"]


def test_adjacent_reasoning_is_merged_until_protected_data() -> None:
    response = ChatResponse.from_updates(
        [
            ChatResponseUpdate(contents=[TextReasoningContent("think ")]),
            ChatResponseUpdate(contents=[TextReasoningContent("hard", protected_data="p1")]),
            ChatResponseUpdate(contents=[TextReasoningContent("more")]),
        ]
    )
    contents = response.messages[0].contents
    assert len(contents) == 2
    assert isinstance(contents[0], TextReasoningContent)
    assert (contents[0].text, contents[0].protected_data) == ("think hard", "p1")


def test_adjacent_text_data_of_one_media_type_is_merged() -> None:
    response = ChatResponse.from_updates(
        [
            ChatResponseUpdate(contents=[DataContent(b"ab", "text/csv")]),
            ChatResponseUpdate(contents=[DataContent(b"cd", "text/csv")]),
            ChatResponseUpdate(contents=[DataContent(b"\x00", "image/png")]),
            ChatResponseUpdate(contents=[DataContent(b"\x01", "image/png")]),
        ]
    )
    assert [c.data for c in response.messages[0].contents] == [b"abcd", b"\x00", b"\x01"]  # type: ignore[attr-defined]


def test_function_calls_are_never_merged() -> None:
    first, second = FunctionCallContent("c1", "f", {}), FunctionCallContent("c2", "f", {})
    response = ChatResponse.from_updates(
        [ChatResponseUpdate(contents=[first]), ChatResponseUpdate(contents=[second])]
    )
    assert response.messages[0].contents == [first, second]


def test_usage_is_summed_from_usage_contents_and_kept_out_of_messages() -> None:
    response = ChatResponse.from_updates(
        [
            _update("hi"),
            ChatResponseUpdate(
                contents=[UsageContent(UsageDetails(input_token_count=3, output_token_count=1))]
            ),
            ChatResponseUpdate(contents=[UsageContent(UsageDetails(input_token_count=2))]),
        ]
    )
    assert response.usage == UsageDetails(input_token_count=5, output_token_count=1)
    assert response.messages[0].contents == [TextContent("hi")]


def test_no_usage_content_means_no_usage() -> None:
    assert ChatResponse.from_updates([_update("hi")]).usage is None


def test_the_last_finish_reason_response_id_and_model_id_win() -> None:
    response = ChatResponse.from_updates(
        [
            _update("a", response_id="r1", model_id="m1", finish_reason="length"),
            _update("b", response_id="r2", finish_reason="stop"),
            _update("c", response_id="", model_id="m2"),
        ]
    )
    assert response.response_id == "r2"
    assert response.model_id == "m2"
    assert response.finish_reason == ChatFinishReason.STOP


def test_function_call_updates_are_dropped() -> None:
    call = FunctionCallContent("c1", "lookup", {"q": "x"})
    response = ChatResponse.from_updates(
        [
            ChatResponseUpdate(contents=[FunctionCallUpdateContent("c1", "lookup", '{"q"')]),
            ChatResponseUpdate(contents=[FunctionCallUpdateContent("c1", None, ':"x"}')]),
            ChatResponseUpdate(contents=[call]),
        ]
    )
    assert response.messages[0].contents == [call]


def test_messages_left_empty_are_dropped() -> None:
    response = ChatResponse.from_updates(
        [_update(None, message_id="m1"), _update("x", message_id="m2", role="assistant")]
    )
    assert [m.message_id for m in response.messages] == ["m2"]


def test_additional_properties_go_to_the_message_when_it_has_an_id() -> None:
    response = ChatResponse.from_updates(
        [
            _update("a", message_id="m1", additional_properties={"k": 1}),
            _update("b", additional_properties={"run": "r"}),
        ]
    )
    assert response.messages[0].additional_properties == {"k": 1}
    assert response.additional_properties == {"run": "r"}


async def test_from_update_stream_joins_an_async_stream() -> None:
    async def stream():  # type: ignore[no-untyped-def]
        yield _update("a", message_id="m1")
        yield _update("b", message_id="m1", finish_reason="stop")

    response = await ChatResponse.from_update_stream(stream())
    assert response.text == "ab"
    assert response.finish_reason == "stop"


def test_to_updates_and_back_gives_the_same_response() -> None:
    response = ChatResponse(
        [
            ChatMessage("assistant", "hi", message_id="m1"),
            ChatMessage("tool", "x", message_id="m2"),
        ],
        response_id="r1",
        finish_reason="stop",
        usage=UsageDetails(input_token_count=4),
    )
    again = ChatResponse.from_updates(response.to_updates())
    assert again.messages == response.messages
    assert (again.response_id, again.finish_reason, again.usage) == ("r1", "stop", response.usage)


def test_input_requests_lists_approvals_and_questions_in_order() -> None:
    approval = ToolApprovalRequestContent("a1", FunctionCallContent("c1", "f", {}))
    question = InterruptRequestContent("q1", message="?")
    response = ChatResponse(
        [
            ChatMessage("assistant", [TextContent("x"), approval]),
            ChatMessage("tool", "y"),
            ChatMessage("assistant", [question]),
        ]
    )
    assert response.input_requests == [approval, question]


def test_text_joins_the_text_of_every_message() -> None:
    response = ChatResponse([ChatMessage("assistant", "a"), ChatMessage("assistant", "b")])
    assert response.text == "ab"
