"""ChatOptions: fields, clone() independence and type errors that name the field."""

from __future__ import annotations

import pytest

from agui_chat import ChatOptions, ChatResponseFormat, ChatToolMode, ai_function


@ai_function
def _noop() -> None:
    """Does nothing."""


def test_every_field_defaults_to_none() -> None:
    options = ChatOptions()
    for name in (
        "conversation_id",
        "instructions",
        "temperature",
        "max_output_tokens",
        "top_p",
        "top_k",
        "frequency_penalty",
        "presence_penalty",
        "seed",
        "stop_sequences",
        "response_format",
        "model_id",
        "tools",
        "tool_mode",
        "allow_multiple_tool_calls",
    ):
        assert getattr(options, name) is None, name
    assert options.additional_properties == {}


def test_fields_keep_their_values() -> None:
    options = ChatOptions(
        conversation_id="t1",
        instructions="be brief",
        temperature=0.2,
        max_output_tokens=100,
        top_p=0.9,
        top_k=5,
        frequency_penalty=0.1,
        presence_penalty=0.3,
        seed=42,
        stop_sequences=["END"],
        response_format=ChatResponseFormat.JSON,
        model_id="m",
        tools=[_noop],
        tool_mode=ChatToolMode.require_specific("_noop"),
        allow_multiple_tool_calls=False,
        additional_properties={"k": "v"},
    )
    assert options.tool_mode == ChatToolMode("required", "_noop")
    assert options.tools == [_noop]
    assert options.seed == 42


def test_clone_has_its_own_lists_and_dicts() -> None:
    original = ChatOptions(tools=[_noop], stop_sequences=["a"], additional_properties={"k": 1})
    clone = original.clone()
    clone.tools.append(_noop)  # type: ignore[union-attr]
    clone.stop_sequences.append("b")  # type: ignore[union-attr]
    clone.additional_properties["k"] = 2
    clone.temperature = 1.0
    assert original.tools == [_noop]
    assert original.stop_sequences == ["a"]
    assert original.additional_properties == {"k": 1}
    assert original.temperature is None


def test_clone_copies_the_values() -> None:
    original = ChatOptions(instructions="x", temperature=0.5, tools=[_noop])
    clone = original.clone()
    assert clone == original
    assert clone is not original


def test_the_callers_tool_list_is_copied() -> None:
    tools = [_noop]
    options = ChatOptions(tools=tools)
    tools.clear()
    assert options.tools == [_noop]


def test_max_output_tokens_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_output_tokens must be positive"):
        ChatOptions(max_output_tokens=0)


def test_response_format_for_json_schema_from_a_pydantic_model() -> None:
    from pydantic import BaseModel

    class Weather(BaseModel):
        city: str

    fmt = ChatResponseFormat.for_json_schema(Weather)
    assert fmt.kind == "json"
    assert fmt.schema_name == "Weather"
    assert fmt.schema is not None and fmt.schema["properties"]["city"]["type"] == "string"
