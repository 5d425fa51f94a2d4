"""The adapter contract: every provider adapter (OpenAI Chat Completions and Responses,
Anthropic, Gemini) against one ``@copilotkit/aimock`` and one fixture file, checked on what
the SDK really sent (the recording proxy) and on aimock's journal."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
from pydantic import BaseModel

from agui_chat import (
    ChatClient,
    ChatFinishReason,
    ChatMessage,
    ChatOptions,
    ChatResponse,
    FunctionInvokingChatClient,
    RateLimitError,
    ToolApprovalRequestContent,
    ai_function,
    approval_required,
)
from agui_chat.agui import AGUIChatClient
from agui_server import agui_server, client_for

if TYPE_CHECKING:  # the fixture's type (conftest modules share one name across folders)
    from conftest import Provider


async def ask(
    client: ChatClient, messages: Any, options: ChatOptions | None, streaming: bool
) -> ChatResponse:
    if streaming:
        return ChatResponse.from_updates(
            [u async for u in client.get_streaming_response(messages, options)]
        )
    return await client.get_response(messages, options)


def system_prompt(provider: Provider, body: dict[str, Any]) -> str:
    """The provider's own system prompt in a request body (never a chat turn)."""
    if provider.name == "anthropic":
        assert all(m["role"] in ("user", "assistant") for m in body["messages"])
        return str(body["system"])
    if provider.name == "gemini":
        assert all(c["role"] in ("user", "model") for c in body["contents"])
        return "".join(p["text"] for p in body["systemInstruction"]["parts"])
    if provider.name == "chat":
        return "\n\n".join(m["content"] for m in body["messages"] if m["role"] == "system")
    said = [i["content"] for i in body["input"] if i.get("role") in ("system", "developer")]
    return "\n\n".join([body["instructions"], *said])


def tool_results(provider: Provider, body: dict[str, Any]) -> list[list[str]]:
    """The tool results of the request, as the provider got them: one list per turn that
    carries results, each result as the text the model reads."""
    if provider.name == "anthropic":
        return [
            [b["content"] for b in m["content"] if b["type"] == "tool_result"]
            for m in body["messages"]
            if m["role"] == "user" and any(b["type"] == "tool_result" for b in m["content"])
        ]
    if provider.name == "gemini":
        return [
            [
                p["functionResponse"]["response"].get("result", p["functionResponse"]["response"])
                for p in c["parts"]
                if "functionResponse" in p
            ]
            for c in body["contents"]
            if any("functionResponse" in p for p in c["parts"])
        ]
    if provider.name == "chat":
        return [[m["content"]] for m in body["messages"] if m["role"] == "tool"]
    return [[i["output"]] for i in body["input"] if i.get("type") == "function_call_output"]


async def test_a_plain_answer_with_the_system_prompt_as_the_providers_own(
    provider: Provider, streaming: bool
) -> None:
    history = [ChatMessage("system", "Be brief."), ChatMessage("user", "contract: hello")]
    response = await ask(
        provider.client, history, ChatOptions(instructions="Speak plainly."), streaming
    )
    # The fixture answers so only when aimock read both texts as the system prompt.
    assert response.text == "Hello from the contract lane, nice to meet you!"
    assert response.finish_reason == ChatFinishReason.STOP
    [body] = provider.sent()
    assert system_prompt(provider, body) == "Speak plainly.\n\nBe brief."


async def test_streaming_yields_the_text_in_several_updates(provider: Provider) -> None:
    updates = [u async for u in provider.client.get_streaming_response("contract: hello")]
    texts = [u.text for u in updates if u.text]
    assert len(texts) > 1
    assert "".join(texts) == "The system prompt did not arrive as a system prompt."
    assert updates[-1].finish_reason == ChatFinishReason.STOP


async def test_usage_is_reported(provider: Provider, streaming: bool) -> None:
    history = [ChatMessage("system", "Be brief."), ChatMessage("user", "contract: hello")]
    response = await ask(
        provider.client, history, ChatOptions(instructions="Speak plainly."), streaming
    )
    assert response.usage is not None
    assert response.usage.input_token_count == 12
    assert response.usage.output_token_count == 8
    assert response.usage.total_token_count == 20


async def test_a_tool_round_trip_in_the_tool_loop(provider: Provider, streaming: bool) -> None:
    looked_up: list[str] = []

    @ai_function
    def lookup(key: str) -> str:
        """The value stored under a key."""
        looked_up.append(key)
        return f"{key}=42"

    client = FunctionInvokingChatClient(provider.client)
    response = await ask(client, "contract: look up alpha", ChatOptions(tools=[lookup]), streaming)
    assert looked_up == ["alpha"]
    assert response.text.endswith("The value of alpha is 42.")
    first, second = provider.sent()
    assert tool_results(provider, first) == []
    assert tool_results(provider, second) == [["alpha=42"]]


async def test_two_parallel_calls_run_and_go_back_together(
    provider: Provider, streaming: bool
) -> None:
    asked: list[str] = []

    @ai_function
    def get_weather(city: str) -> str:
        """The weather in a city."""
        asked.append(city)
        return f"sunny in {city}"

    client = FunctionInvokingChatClient(provider.client)
    response = await ask(
        client, "contract: weather in two cities", ChatOptions(tools=[get_weather]), streaming
    )
    assert sorted(asked) == ["Lyon", "Paris"]
    assert response.text.endswith("Sunny in Paris and in Lyon.")
    _, second = provider.sent()
    results = tool_results(provider, second)
    if provider.name in ("anthropic", "gemini"):
        # One user turn carries both results, in the order of the calls.
        assert results == [["sunny in Paris", "sunny in Lyon"]]
    else:
        assert sorted(r for turn in results for r in turn) == ["sunny in Lyon", "sunny in Paris"]
    ids = [c.call_id for m in response.messages for c in m.contents if hasattr(c, "call_id")]
    assert len(set(ids)) == 2  # each call has its own id (Gemini's made here)


REASON = "keep it: /srv/report.txt is the only copy (ask Ana)"


@pytest.mark.parametrize("approved", [True, False], ids=["approved", "rejected"])
async def test_an_approval_gated_tool_runs_once_or_never(
    provider: Provider, streaming: bool, approved: bool
) -> None:
    deleted: list[str] = []

    @approval_required
    def delete_file(path: str) -> str:
        """Delete a file."""
        deleted.append(path)
        return f"deleted {path}"

    client = FunctionInvokingChatClient(provider.client)
    options = ChatOptions(tools=[delete_file])
    history = [ChatMessage("user", "contract: delete report.txt")]
    first = await ask(client, history, options, streaming)
    [request] = first.input_requests
    assert isinstance(request, ToolApprovalRequestContent)
    assert request.tool_call.arguments == {"path": "report.txt"}
    assert deleted == []
    history += first.messages
    history.append(ChatMessage("user", [request.create_response(approved, reason=REASON)]))
    final = await ask(client, history, options, streaming)
    if approved:
        assert deleted == ["report.txt"]
        assert final.text.endswith("Done: report.txt is gone.")
        return
    assert deleted == []
    assert final.text.endswith("Understood: I kept report.txt.")
    expected = f"Tool call invocation rejected. {REASON}"
    # What the SDK sent, and what aimock read, both carry the reason verbatim.
    assert tool_results(provider, provider.sent()[1]) == [[expected]]
    last = provider.journal()[1]["body"]["messages"][-1]
    assert last["role"] == "tool"
    content = last["content"]
    read = json.loads(content)["result"] if provider.name == "gemini" else content
    assert read == expected


class City(BaseModel):
    name: str
    population: int
    country: str | None = None


def schema_sent(provider: Provider, body: dict[str, Any]) -> dict[str, Any]:
    """The JSON schema the request asked the provider to enforce, through its own API."""
    if provider.name == "anthropic":
        fmt = body["output_config"]["format"]
        assert fmt["type"] == "json_schema"
        return dict(fmt["schema"])
    if provider.name == "gemini":
        config = body["generationConfig"]
        assert config["responseMimeType"] == "application/json"
        return dict(config["responseJsonSchema"])
    if provider.name == "chat":
        return dict(body["response_format"]["json_schema"]["schema"])
    return dict(body["text"]["format"]["schema"])


async def test_structured_output_through_the_providers_own_setting(
    provider: Provider,
) -> None:
    response = await provider.client.get_response(  # type: ignore[call-arg]
        "contract: the biggest city as json", response_format=City
    )
    assert response.value == City(name="Paris", population=2100000, country="FR")
    [body] = provider.sent()
    schema = schema_sent(provider, body)
    assert schema["required"] == ["name", "population", "country"]
    assert schema["additionalProperties"] is False
    if provider.name == "anthropic":
        assert "tool_choice" not in body and "tools" not in body  # not a forced tool call


async def test_an_error_status_is_our_typed_error(provider: Provider, streaming: bool) -> None:
    with pytest.raises(RateLimitError) as caught:
        await ask(provider.client, "contract: rate limited", None, streaming)
    assert caught.value.status_code == 429
    assert caught.value.retry_after == 7
    assert "slow down, please" in str(caught.value)


async def test_the_agent_behind_an_agui_server_answers_an_agui_client(
    provider: Provider,
) -> None:
    looked_up: list[str] = []

    @ai_function
    def lookup(key: str) -> str:
        """The value stored under a key."""
        looked_up.append(key)
        return f"{key}=42"

    server = agui_server(provider.client, tools=[lookup]).app
    http = client_for(server)
    async with http, AGUIChatClient("http://localhost/", http_client=http, max_retries=0) as remote:
        response = await remote.get_response("contract: look up alpha")
    assert looked_up == ["alpha"]
    assert response.text.endswith("The value of alpha is 42.")
