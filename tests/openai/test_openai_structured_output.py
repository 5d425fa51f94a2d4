"""Structured output through OpenAIChatClient (respx): the strict schema goes as
``response_format``; with ``json_schema=False`` (a server that takes no schema) it goes as
instructions instead, and the reply is validated all the same; a refusal is a RefusalError."""

from __future__ import annotations

import openai
import pytest
from openai_wire import Wire
from pydantic import BaseModel

from agui_chat import ChatOptions, RefusalError, StructuredOutputError
from agui_chat.openai import OpenAIChatClient


class Weather(BaseModel):
    summary: str


async def test_the_schema_goes_as_a_strict_response_format(
    chat: OpenAIChatClient, wire: Wire
) -> None:
    route = wire.serve(wire.json("completion_text.json"))
    with pytest.raises(StructuredOutputError) as caught:
        await chat.get_response("Weather?", response_format=Weather)
    assert caught.value.text == "It is sunny in Paris."
    sent = wire.sent(route)["response_format"]
    assert sent["type"] == "json_schema"
    assert sent["json_schema"]["name"] == "Weather" and sent["json_schema"]["strict"] is True
    assert sent["json_schema"]["schema"]["additionalProperties"] is False


async def test_without_json_schema_support_the_schema_goes_as_instructions(
    sdk: openai.AsyncOpenAI, wire: Wire
) -> None:
    chat = OpenAIChatClient("local-model", client=sdk, json_schema=False)
    route = wire.serve(wire.json("completion_text.json"))
    with pytest.raises(StructuredOutputError):
        await chat.get_response(
            "Weather?", ChatOptions(instructions="Be brief."), response_format=Weather
        )
    body = wire.sent(route)
    assert "response_format" not in body
    system = body["messages"][0]
    assert system["role"] == "system" and system["content"].startswith("Be brief.\n\n")
    assert '"summary"' in system["content"] and "JSON schema" in system["content"]


async def test_a_refusal_is_a_refusal_error(chat: OpenAIChatClient, wire: Wire) -> None:
    wire.serve(wire.json("completion_refusal.json"))
    with pytest.raises(RefusalError) as caught:
        await chat.get_response("Bad?", response_format=Weather, retries=2)
    assert caught.value.refusal
