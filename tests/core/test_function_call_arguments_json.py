"""``FunctionCallContent.arguments_json``: the text a call's arguments go back to a model as."""

from __future__ import annotations

from agui_chat import FunctionCallContent


def test_parsed_arguments_are_compact_json_and_none_is_an_empty_object() -> None:
    assert FunctionCallContent("c", "f", {"q": "é", "n": 1}).arguments_json() == '{"q":"é","n":1}'
    assert FunctionCallContent("c", "f").arguments_json() == "{}"


def test_text_that_did_not_parse_goes_back_as_the_model_wrote_it() -> None:
    call = FunctionCallContent.from_json_arguments("c", "f", "{not json")
    assert call.arguments_json() == "{not json"
    text = '{"a": [1, 2]}'
    assert FunctionCallContent.from_json_arguments("c", "f", text).arguments_json() == '{"a":[1,2]}'
