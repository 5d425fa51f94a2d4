"""FunctionInvokingChatClient with no settings: issue 3's defaults, by behaviour —
40 round trips with the tools withdrawn on the last, and the tool's error raised after
3 failing round trips in a row. Streaming and not."""

from __future__ import annotations

from typing import Any

import pytest
from loop_support import Ask, call, scripted

from agui_chat import ChatMessage, ChatOptions, FunctionInvokingChatClient, ai_function


async def test_by_default_the_loop_makes_40_round_trips_and_the_last_has_no_tools(
    ask: Ask,
) -> None:
    runs: list[int] = []

    @ai_function
    def step(n: int) -> str:
        """One more step."""
        runs.append(n)
        return f"step {n} done"

    def model(messages: list[ChatMessage], options: ChatOptions | None) -> Any:
        if options is not None and options.tools:
            return [call(f"c{len(messages)}", "step", n=len(messages))]
        return "I stop here."

    inner = scripted(*([model] * 41))
    response = await ask(FunctionInvokingChatClient(inner), "go", ChatOptions(tools=[step]))

    # MEAI's semantics: 40 round trips whose calls run, then one for the answer.
    assert len(inner.calls) == 41
    assert all(o is not None and o.tools == [step] for _, o in inner.calls[:40])
    assert inner.calls[40][1] is not None and inner.calls[40][1].tools is None
    assert len(runs) == 40
    assert response.messages[-1].text == "I stop here."


async def test_by_default_the_fourth_failing_round_trip_in_a_row_raises(ask: Ask) -> None:
    runs: list[str] = []

    @ai_function
    def save(name: str) -> str:
        """Save a file."""
        runs.append(name)
        raise OSError("disk full")

    inner = scripted(*([lambda m, o: [call(f"c{len(m)}", "save", name="x")]] * 10))
    with pytest.raises(OSError, match="disk full"):
        await ask(FunctionInvokingChatClient(inner), "go", ChatOptions(tools=[save]))
    assert len(runs) == 4
    assert len(inner.calls) == 4


def test_the_default_settings_are_those_of_the_issue() -> None:
    client = FunctionInvokingChatClient(scripted())
    assert client.max_iterations == 40
    assert client.max_consecutive_errors == 3
    assert client.allow_concurrent_invocation is False
    assert client.include_detailed_errors is False
    assert client.terminate_on_unknown_calls is False
    assert client.additional_tools == []
