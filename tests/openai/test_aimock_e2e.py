"""End to end against a real OpenAI-compatible server (``@copilotkit/aimock`` on 127.0.0.1,
serving ``tests/openai/aimock/fixtures``): both adapters, Chat Completions and Responses,
streaming and not; an approval-gated tool (approved: runs once; rejected: never); structured
output that validates, and one that is repaired."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import openai
import pytest
from pydantic import BaseModel

from agui_chat import (
    ChatClient,
    ChatFinishReason,
    ChatMessage,
    ChatOptions,
    ChatResponse,
    FunctionInvokingChatClient,
    TextReasoningContent,
    ToolApprovalRequestContent,
    ai_function,
    approval_required,
)
from agui_chat.openai import OpenAIChatClient, OpenAIResponsesChatClient

APIS = ["chat", "responses"]


class Recorder:
    """The SDK's http client, keeping the JSON body of every request it sends."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.http = httpx.AsyncClient(event_hooks={"request": [self._record]})

    async def _record(self, request: httpx.Request) -> None:
        self.bodies.append(json.loads(request.content))


@pytest.fixture
async def recorder() -> AsyncIterator[Recorder]:
    recorder = Recorder()
    yield recorder
    await recorder.http.aclose()


@pytest.fixture(params=APIS)
async def model(
    request: pytest.FixtureRequest, aimock: str, recorder: Recorder
) -> AsyncIterator[ChatClient]:
    sdk = openai.AsyncOpenAI(
        api_key="no-key", base_url=aimock, http_client=recorder.http, max_retries=0
    )
    kind = OpenAIChatClient if request.param == "chat" else OpenAIResponsesChatClient
    yield kind("aimock-model", client=sdk)
    await sdk.close()


@pytest.fixture(params=[False, True], ids=["whole", "streamed"])
def streaming(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


async def ask(
    client: ChatClient, messages: Any, options: ChatOptions | None, streaming: bool
) -> ChatResponse:
    if streaming:
        return ChatResponse.from_updates(
            [u async for u in client.get_streaming_response(messages, options)]
        )
    return await client.get_response(messages, options)


async def test_text_and_reasoning(model: ChatClient, streaming: bool) -> None:
    response = await ask(model, "hello aimock", None, streaming)
    assert response.text == "Hello from aimock, nice to meet you!"
    assert response.finish_reason == ChatFinishReason.STOP
    reasoning = [c for c in response.messages[0].contents if isinstance(c, TextReasoningContent)]
    assert [r.text for r in reasoning] == ["The user greets me; greet back."]
    assert response.usage is not None and response.usage.total_token_count == 20


async def test_parallel_tool_calls_run_through_the_tool_loop(
    model: ChatClient, streaming: bool, recorder: Recorder
) -> None:
    asked: list[str] = []

    @ai_function
    def get_weather(city: str) -> str:
        """The weather in a city."""
        asked.append(city)
        return f"sunny in {city}"

    client = FunctionInvokingChatClient(model)
    response = await ask(
        client, "weather in two cities", ChatOptions(tools=[get_weather]), streaming
    )
    assert sorted(asked) == ["Lyon", "Paris"]
    assert response.text.endswith("Sunny in Paris and in Lyon.")
    assert len(recorder.bodies) == 2


@pytest.mark.parametrize("approved", [True, False], ids=["approved", "rejected"])
async def test_a_gated_tool_runs_once_when_approved_and_never_when_rejected(
    model: ChatClient, streaming: bool, approved: bool
) -> None:
    deleted: list[str] = []

    @approval_required
    def delete_file(path: str) -> str:
        """Delete a file."""
        deleted.append(path)
        return f"deleted {path}"

    client = FunctionInvokingChatClient(model)
    options = ChatOptions(tools=[delete_file])
    history = [ChatMessage("user", "please delete report.txt")]
    first = await ask(client, history, options, streaming)
    [request] = first.input_requests
    assert isinstance(request, ToolApprovalRequestContent)
    assert request.tool_call.arguments == {"path": "report.txt"}
    assert deleted == []
    history += first.messages
    history.append(ChatMessage("user", [request.create_response(approved)]))
    final = await ask(client, history, options, streaming)
    if approved:
        assert deleted == ["report.txt"]
        assert final.text.endswith("Done: report.txt is gone.")
    else:
        assert deleted == []
        assert final.text.endswith("Understood: I kept report.txt.")


class City(BaseModel):
    name: str
    population: int
    country: str | None = None


def schema_sent(body: dict[str, Any]) -> dict[str, Any]:
    if "text" in body:  # Responses: text.format
        fmt: dict[str, Any] = body["text"]["format"]
        return fmt
    flat: dict[str, Any] = {"type": body["response_format"]["type"]}
    flat.update(body["response_format"]["json_schema"])
    return flat


async def test_structured_output_validates(model: ChatClient, recorder: Recorder) -> None:
    response = await model.get_response("the biggest city as json", response_format=City)
    assert response.value == City(name="Paris", population=2100000, country="FR")
    fmt = schema_sent(recorder.bodies[0])
    assert fmt["type"] == "json_schema" and fmt["name"] == "City" and fmt["strict"] is True
    assert fmt["schema"]["required"] == ["name", "population", "country"]


async def test_structured_output_that_fails_is_repaired(
    model: ChatClient, recorder: Recorder
) -> None:
    client = FunctionInvokingChatClient(model)
    response = await client.get_response(
        "the biggest city in prose", response_format=City, retries=1
    )
    assert response.value == City(name="Paris", population=2100000)
    assert len(recorder.bodies) == 2
    repair = json.dumps(recorder.bodies[1])
    assert "does not match the required JSON schema" in repair and "not JSON" in repair
