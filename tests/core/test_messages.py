"""ChatMessage: role, contents, text and serialization."""

from __future__ import annotations

import json

import pytest

from agui_chat import (
    ChatMessage,
    ChatRole,
    FunctionCallContent,
    TextContent,
    TextReasoningContent,
)


def test_str_contents_become_one_text_content() -> None:
    message = ChatMessage("user", "Hello")
    assert message.contents == [TextContent("Hello")]
    assert message.role == ChatRole.USER


def test_no_contents_gives_an_empty_list() -> None:
    assert ChatMessage(ChatRole.ASSISTANT).contents == []


def test_text_joins_only_the_text_contents() -> None:
    message = ChatMessage(
        "assistant",
        [
            TextContent("Hel"),
            TextReasoningContent("thinking"),
            FunctionCallContent("c1", "f", {}),
            TextContent("lo"),
        ],
    )
    assert message.text == "Hello"


def test_role_given_as_str_becomes_a_chat_role() -> None:
    message = ChatMessage("Developer", "be brief")
    assert isinstance(message.role, ChatRole)
    assert message.role == "developer"


def test_contents_list_is_copied() -> None:
    contents = [TextContent("a")]
    message = ChatMessage("user", contents)
    contents.append(TextContent("b"))
    assert message.text == "a"


def test_blank_author_name_is_normalised_to_none() -> None:
    assert ChatMessage("user", "x", author_name="   ").author_name is None
    assert ChatMessage("user", "x", author_name=" ann ").author_name == "ann"


def test_message_round_trips_through_json() -> None:
    message = ChatMessage(
        "assistant",
        [TextContent("hi"), FunctionCallContent("c1", "lookup", {"q": "x"})],
        author_name="bot",
        message_id="m1",
        additional_properties={"trace": [1, 2]},
    )
    loaded = ChatMessage.from_dict(json.loads(json.dumps(message.to_dict())))
    assert loaded == message
    assert loaded.message_id == "m1"
    assert loaded.author_name == "bot"
    assert loaded.additional_properties == {"trace": [1, 2]}
    assert isinstance(loaded.contents[1], FunctionCallContent)


def test_loading_a_message_with_an_unknown_field_names_it() -> None:
    with pytest.raises(ValueError, match="unknown message fields: colour"):
        ChatMessage.from_dict({"role": "user", "contents": [], "colour": "red"})


def test_loading_a_message_without_role_is_an_error() -> None:
    with pytest.raises(ValueError, match="'role'"):
        ChatMessage.from_dict({"contents": []})


def test_clone_has_its_own_contents_list() -> None:
    message = ChatMessage("user", "a", message_id="m")
    clone = message.clone()
    clone.contents.append(TextContent("b"))
    assert message.text == "a"
    assert clone.text == "ab"
    assert clone.message_id == "m"


@pytest.mark.parametrize("field", ["role", "contents", "author_name", "message_id"])
def test_loading_a_message_field_of_the_wrong_type_is_an_error_naming_it(field: str) -> None:
    data: dict[str, object] = {"role": "user", "contents": [], field: 3}
    with pytest.raises(ValueError, match=f"message field '{field}'"):
        ChatMessage.from_dict(data)  # type: ignore[arg-type]
