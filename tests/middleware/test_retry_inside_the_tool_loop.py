"""Retry belongs inside the tool loop: a retried model request never runs a tool again."""

from __future__ import annotations

import pytest

from agui_chat import (
    ChatClientBuilder,
    ChatMessage,
    ChatOptions,
    FunctionCallContent,
    FunctionInvokingChatClient,
    RetryingChatClient,
    ServiceUnavailableError,
    ai_function,
)
from agui_chat.testing import ScriptedChatClient


@pytest.mark.parametrize("streaming", [False, True])
async def test_a_transient_model_failure_after_a_tool_ran_retries_only_the_model(
    streaming: bool,
) -> None:
    runs: list[str] = []

    @ai_function
    def charge(amount: int) -> str:
        runs.append(f"charged {amount}")
        return "ok"

    calls = {"n": 0}

    def model(messages: list[ChatMessage], options: ChatOptions | None) -> object:
        calls["n"] += 1
        if messages[-1].role == "user":
            return [FunctionCallContent("c1", "charge", {"amount": 5})]
        if calls["n"] == 2:  # the round trip after the tool: fails once, transiently
            raise ServiceUnavailableError("busy", status_code=503, retry_after=0)
        return "charged"

    client = (
        ChatClientBuilder(ScriptedChatClient(model))
        .use_function_invocation()
        .use_retry(max_attempts=3, initial_delay=0)
        .build()
    )
    options = ChatOptions(tools=[charge])
    if streaming:
        text = "".join([u.text async for u in client.get_streaming_response("charge me", options)])
    else:
        text = (await client.get_response("charge me", options)).text
    assert text == "charged"
    assert runs == ["charged 5"]
    assert calls["n"] == 3  # call, failed round trip, retried round trip


def test_retry_around_the_tool_loop_warns() -> None:
    loop = FunctionInvokingChatClient(ScriptedChatClient(lambda m, o: "x"))
    with pytest.warns(UserWarning, match="run the tool loop, and its tools, again"):
        RetryingChatClient(loop)


def test_retry_inside_the_tool_loop_does_not_warn(recwarn: pytest.WarningsRecorder) -> None:
    ChatClientBuilder(
        ScriptedChatClient(lambda m, o: "x")
    ).use_function_invocation().use_retry().build()
    assert not [w for w in recwarn if issubclass(w.category, UserWarning)]
