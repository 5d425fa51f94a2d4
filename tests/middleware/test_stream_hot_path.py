"""The tool loop's cost per streamed update, counted (deterministic): a text stream through
``FunctionInvokingChatClient`` costs one Python call per update more than the model's own
stream (the loop's one async-generator hop; bench/README.md (d)), however its ``run`` is
split into steps."""

from __future__ import annotations

import sys
from types import FrameType
from typing import Any

from agui_chat import ChatClient, ChatClientBuilder, ChatOptions, ai_function
from agui_chat.testing import ScriptedChatClient


@ai_function
def lookup(query: str) -> str:
    """A tool the model could call (it does not, here)."""
    return query


async def _calls(client: ChatClient, options: ChatOptions) -> tuple[int, int]:
    """Python calls made while draining one streamed response, and how many updates came."""
    count = 0

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        nonlocal count
        if event == "call":
            count += 1

    updates = 0
    stream = client.get_streaming_response("go", options)
    sys.setprofile(profile)
    try:
        async for _ in stream:
            updates += 1
    finally:
        sys.setprofile(None)
    return count, updates


async def _per_update(wrap: bool) -> float:
    """Calls per streamed update: the slope between a stream of 200 updates and one of 400."""
    slope = []
    for n in (200, 400):
        reply = " ".join(f"tok{i}" for i in range(n))
        model = ScriptedChatClient(lambda messages, options, reply=reply: reply)
        client = ChatClientBuilder(model).use_function_invocation().build() if wrap else model
        await _calls(client, ChatOptions(tools=[lookup]))  # warm: first-use work not counted
        slope.append(await _calls(client, ChatOptions(tools=[lookup])))
    (short, short_n), (long, long_n) = slope
    assert long_n - short_n == 200  # one update per token
    return (long - short) / (long_n - short_n)


async def test_a_streamed_text_update_costs_the_tool_loop_one_python_call() -> None:
    bare, looped = await _per_update(False), await _per_update(True)
    assert looped - bare == 1.0, f"the tool loop costs {looped - bare:.2f} calls per update"
