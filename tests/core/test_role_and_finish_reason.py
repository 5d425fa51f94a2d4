"""ChatRole and ChatFinishReason: string values compared case-insensitively."""

from __future__ import annotations

import pickle

import pytest

from agui_chat import ChatFinishReason, ChatRole


def test_role_equals_plain_string_whatever_the_case() -> None:
    assert ChatRole.USER == "user"
    assert ChatRole.USER == "USER"
    assert ChatRole.ASSISTANT == "Assistant"
    assert ChatRole.TOOL != "assistant"


def test_roles_with_different_case_are_equal_and_hash_alike() -> None:
    assert ChatRole("System") == ChatRole.SYSTEM
    assert len({ChatRole("TOOL"), ChatRole.TOOL, ChatRole("tool")}) == 1


def test_custom_role_keeps_its_spelling_and_compares_case_insensitively() -> None:
    developer = ChatRole("Developer")
    assert developer == "developer"
    assert developer.value == "Developer"
    assert str(developer) == "Developer"
    assert developer != ChatRole.SYSTEM


def test_role_is_not_equal_to_a_finish_reason_with_the_same_text() -> None:
    assert ChatRole("stop") != ChatFinishReason.STOP


def test_role_rejects_a_non_string_naming_the_role() -> None:
    with pytest.raises(TypeError, match="role must be a str"):
        ChatRole(3)  # type: ignore[arg-type]


def test_role_rejects_an_empty_string() -> None:
    with pytest.raises(ValueError, match="role must not be empty"):
        ChatRole("  ")


def test_finish_reason_compares_case_insensitively() -> None:
    assert ChatFinishReason("STOP") == ChatFinishReason.STOP
    assert ChatFinishReason.TOOL_CALLS == "Tool_Calls"
    assert ChatFinishReason.LENGTH != ChatFinishReason.STOP


def test_input_required_is_distinct_from_stop() -> None:
    assert ChatFinishReason.INPUT_REQUIRED != ChatFinishReason.STOP
    assert ChatFinishReason.INPUT_REQUIRED == "input_required"


def test_finish_reason_rejects_a_non_string_naming_it() -> None:
    with pytest.raises(TypeError, match="finish reason must be a str"):
        ChatFinishReason(None)  # type: ignore[arg-type]


def test_values_survive_pickling() -> None:
    assert pickle.loads(pickle.dumps(ChatRole("developer"))) == "developer"
    assert pickle.loads(pickle.dumps(ChatFinishReason.INPUT_REQUIRED)) == "input_required"
