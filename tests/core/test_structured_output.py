"""Structured output (issue 18): ``get_response(..., response_format=Model)`` sends a strict
JSON schema, validates the reply into ``.value``, repairs on request, and works through the
middleware pipeline."""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

import pytest
from pydantic import BaseModel
from typing_extensions import TypedDict  # pydantic needs this one before Python 3.12

from agui_chat import (
    AGUIChatError,
    ChatClientBuilder,
    ChatClientError,
    ChatMessage,
    ChatOptions,
    ChatResponse,
    ChatResponseFormat,
    ChatRole,
    ErrorContent,
    FunctionCallContent,
    FunctionInvokingChatClient,
    LoggingChatClient,
    RateLimitError,
    RefusalError,
    RetryingChatClient,
    StructuredOutputError,
    SyncChatClient,
    ai_function,
    approval_required,
)
from agui_chat.testing import ScriptedChatClient


class City(BaseModel):
    name: str
    population: int
    country: str | None = None


@dataclasses.dataclass
class Point:
    x: int
    y: int = 0


class Person(TypedDict):
    name: str
    age: int


def replies(*texts: Any) -> ScriptedChatClient:
    queue = list(texts)

    def handler(messages: list[ChatMessage], options: ChatOptions | None) -> Any:
        assert queue, "the model was called more often than scripted"
        reply = queue.pop(0)
        return reply(messages, options) if callable(reply) else reply

    return ScriptedChatClient(handler)


def sent_format(model: ScriptedChatClient, call: int = 0) -> ChatResponseFormat:
    options = model.calls[call][1]
    assert options is not None
    assert isinstance(options.response_format, ChatResponseFormat)
    return options.response_format


async def test_a_pydantic_model_goes_as_a_strict_schema_and_comes_back_validated() -> None:
    model = replies('{"name": "Paris", "population": 2100000, "country": null}')
    response = await model.get_response("Biggest French city?", response_format=City)
    assert response.value == City(name="Paris", population=2100000)
    fmt = sent_format(model)
    assert fmt.kind == "json" and fmt.strict is True and fmt.schema_name == "City"
    schema = dict(fmt.schema or {})
    assert schema["additionalProperties"] is False
    assert schema["required"] == ["name", "population", "country"]
    # The optional property is nullable, its default gone (strict mode allows neither less).
    assert {"type": "null"} in schema["properties"]["country"]["anyOf"]
    assert "default" not in schema["properties"]["country"]
    # What reached the model had no Python type attached: inner clients never validate.
    assert fmt.output_type is None


@pytest.mark.parametrize(
    ("output_type", "text", "expected"),
    [
        (Point, '{"x": 1, "y": null}', Point(1, 0)),
        (Person, '{"name": "Ada", "age": 36}', {"name": "Ada", "age": 36}),
        (list[str], '{"value": ["a", "b"]}', ["a", "b"]),
        (int, '```json\n{"value": 7}\n```', 7),
    ],
    ids=["dataclass", "typeddict", "list-wrapped", "int-in-a-fence"],
)
async def test_dataclasses_typeddicts_and_plain_types(
    output_type: Any, text: str, expected: Any
) -> None:
    model = replies(text)
    response = await model.get_response("go", response_format=output_type)
    assert response.value == expected
    schema = dict(sent_format(model).schema or {})
    assert schema["type"] == "object" and schema["additionalProperties"] is False
    if output_type in (list[str], int):
        assert schema["required"] == ["value"]


async def test_chat_options_take_the_type_too() -> None:
    options = ChatOptions(response_format=City)
    assert isinstance(options.response_format, ChatResponseFormat)
    assert options.response_format.output_type is City
    model = replies('{"name": "Lyon", "population": 500000, "country": "FR"}')
    response = await model.get_response("go", options)
    assert response.value.country == "FR"


async def test_a_type_pydantic_cannot_schema_is_a_type_error_before_any_request() -> None:
    class Opaque:
        def __init__(self, handle: int) -> None:
            self.handle = handle

    model = replies("never sent")
    with pytest.raises(TypeError, match="response_format=Opaque has no JSON schema"):
        await model.get_response("go", response_format=Opaque)
    with pytest.raises(TypeError, match="response_format must be a type"):
        await model.get_response("go", response_format="City")  # type: ignore[arg-type]
    assert model.calls == []


async def test_a_reply_that_does_not_validate_is_a_structured_output_error() -> None:
    model = replies('{"name": "Paris", "population": "many"}')
    with pytest.raises(StructuredOutputError) as caught:
        await model.get_response("go", response_format=City)
    error = caught.value
    assert isinstance(error, AGUIChatError) and not isinstance(error, ChatClientError)
    assert error.text == '{"name": "Paris", "population": "many"}'
    assert any(e.startswith("population:") for e in error.errors)
    assert error.attempts == 1 and isinstance(error.response, ChatResponse)


async def test_retries_send_the_errors_back_and_the_repair_validates() -> None:
    model = replies("Paris, about two million", '{"name": "Paris", "population": 2100000}')
    response = await model.get_response("go", response_format=City, retries=1)
    assert response.value.population == 2100000
    second = model.calls[1][0]
    assert [m.role for m in second] == [ChatRole.USER, ChatRole.ASSISTANT, ChatRole.USER]
    assert second[1].text == "Paris, about two million"
    assert "not JSON" in second[2].text and "corrected JSON" in second[2].text


async def test_retries_run_out() -> None:
    model = replies("no", "still no", "never asked")
    with pytest.raises(StructuredOutputError) as caught:
        await model.get_response("go", response_format=City, retries=1)
    assert caught.value.attempts == 2 and caught.value.text == "still no"
    assert len(model.calls) == 2


async def test_a_refusal_is_a_refusal_error_not_a_validation_failure() -> None:
    model = replies([ErrorContent("I can't help with that.", error_code="refusal")])
    with pytest.raises(RefusalError) as caught:
        await model.get_response("go", response_format=City, retries=3)
    assert caught.value.refusal == "I can't help with that."
    assert not isinstance(caught.value, StructuredOutputError)
    assert len(model.calls) == 1


async def test_bad_retries() -> None:
    model = replies()
    with pytest.raises(ValueError, match="retries"):
        await model.get_response("go", response_format=City, retries=-1)
    with pytest.raises(ValueError, match="needs response_format"):
        await model.get_response("go", retries=2)


async def test_a_response_without_a_value_says_how_to_get_one() -> None:
    response = await replies("hi").get_response("go")
    assert not response.has_value
    with pytest.raises(ValueError, match="response_format=Model"):
        response.value  # noqa: B018


async def test_through_the_tool_loop_only_the_final_answer_is_validated() -> None:
    looked_up: list[str] = []

    @ai_function
    def lookup(city: str) -> str:
        """Look a city up."""
        looked_up.append(city)
        return "2.1 million people"

    model = replies(
        [FunctionCallContent("c1", "lookup", {"city": "Paris"})],
        '{"name": "Paris", "population": 2100000}',
    )
    client = FunctionInvokingChatClient(model)
    response = await client.get_response(
        "go", ChatOptions(tools=[lookup]), response_format=City, retries=2
    )
    assert response.value.name == "Paris" and looked_up == ["Paris"]
    # Both turns carried the schema to the model.
    assert sent_format(model, 0).schema == sent_format(model, 1).schema


async def test_a_paused_run_comes_back_without_a_value() -> None:
    deleted: list[str] = []

    @approval_required
    def delete(path: str) -> str:
        """Delete a file."""
        deleted.append(path)
        return "gone"

    model = replies([FunctionCallContent("c1", "delete", {"path": "/tmp/x"})])
    client = FunctionInvokingChatClient(model)
    response = await client.get_response("go", ChatOptions(tools=[delete]), response_format=City)
    assert response.input_requests and not response.has_value and deleted == []
    with pytest.raises(ValueError, match="paused"):
        response.value  # noqa: B018


async def test_through_retry_and_logging(caplog: pytest.LogCaptureFixture) -> None:
    attempts: list[int] = []

    def flaky(messages: list[ChatMessage], options: ChatOptions | None) -> str:
        attempts.append(1)
        if len(attempts) == 1:
            raise RateLimitError("slow down", status_code=429, retry_after=0)
        return '{"name": "Nice", "population": 340000}'

    model = ScriptedChatClient(flaky)
    client = (
        ChatClientBuilder(model)
        .use_logging(logging.getLogger("structured-test"))
        .use_retry(max_attempts=2, initial_delay=0)
        .build()
    )
    assert client.get_service(LoggingChatClient) is not None
    assert client.get_service(RetryingChatClient) is not None
    with caplog.at_level(logging.INFO, logger="structured-test"):
        response = await client.get_response("go", response_format=City)
    assert response.value.name == "Nice" and len(attempts) == 2
    assert "get_response completed" in caplog.text


def test_the_sync_client_too() -> None:
    with SyncChatClient(replies('{"value": [1, 2]}')) as chat:
        assert chat.get_response("go", response_format=list[int]).value == [1, 2]
