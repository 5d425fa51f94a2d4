"""Structured output through the tool loop: asked for by the options alone or by the keyword,
with ``retries`` repairing a reply the loop got after running a tool."""

from __future__ import annotations

from typing import Any

from loop_support import call, scripted
from pydantic import BaseModel

from agui_chat import ChatOptions, FunctionInvokingChatClient, ai_function


class City(BaseModel):
    name: str
    population: int


def _lookup(runs: list[str]) -> Any:
    @ai_function
    def lookup(city: str) -> str:
        """Look a city up."""
        runs.append(city)
        return "2.1 million people"

    return lookup


async def test_a_response_format_in_the_options_alone_gives_a_value() -> None:
    runs: list[str] = []
    model = scripted([call("c1", "lookup", city="Paris")], '{"name": "Paris", "population": 2}')
    response = await FunctionInvokingChatClient(model).get_response(
        "go", ChatOptions(tools=[_lookup(runs)], response_format=City)
    )
    assert response.value == City(name="Paris", population=2)
    assert runs == ["Paris"]


async def test_retries_repair_a_bad_reply_that_follows_a_tool_call() -> None:
    runs: list[str] = []
    model = scripted(
        [call("c1", "lookup", city="Paris")],
        '{"name": "Paris"}',
        '{"name": "Paris", "population": 2}',
    )
    response = await FunctionInvokingChatClient(model).get_response(
        "go", ChatOptions(tools=[_lookup(runs)]), response_format=City, retries=1
    )
    assert response.value == City(name="Paris", population=2)
    assert runs == ["Paris"]
    assert len(model.calls) == 3
