"""Structured output is handled once (issue 24): ``BaseChatClient.get_response`` over the
``_get_response`` hook for our clients and middleware, ``get_structured_response`` for a client
that implements only the ``ChatClient`` protocol. Inner clients and hooks see plain calls with
the schema only, once per attempt."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from pydantic import BaseModel

from agui_chat import (
    ChatClient,
    ChatMessage,
    ChatOptions,
    ChatResponse,
    ChatResponseFormat,
    ChatResponseUpdate,
    ChatRole,
    DelegatingChatClient,
    StructuredOutputError,
    SyncChatClient,
    get_structured_response,
)
from agui_chat._client import ChatMessages
from agui_chat.testing import ScriptedChatClient


class City(BaseModel):
    name: str
    population: int


class ProtocolOnly:
    """A user's client that implements only the protocol (no ``BaseChatClient``, no
    ``response_format=`` keyword): it records each call and answers from a script."""

    def __init__(self, *texts: str) -> None:
        self.texts = list(texts)
        self.calls: list[tuple[list[ChatMessage], ChatOptions | None]] = []

    async def get_response(
        self, messages: ChatMessages, options: ChatOptions | None = None
    ) -> ChatResponse:
        assert isinstance(messages, list)
        self.calls.append((list(messages), options))
        return ChatResponse(ChatMessage(ChatRole.ASSISTANT, self.texts.pop(0)))

    async def get_streaming_response(
        self, messages: ChatMessages, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        raise NotImplementedError
        yield  # pragma: no cover

    def get_service(self, kind: type[Any]) -> Any:
        return self if isinstance(self, kind) else None


class Counting(DelegatingChatClient):
    """A user's middleware that overrides only the hook, as the base class asks."""

    def __init__(self, inner: ChatClient) -> None:
        super().__init__(inner)
        self.seen: list[ChatResponseFormat | type[Any] | None] = []

    async def _get_response(
        self, messages: ChatMessages, options: ChatOptions | None
    ) -> ChatResponse[Any]:
        self.seen.append(options.response_format if options else None)
        return await super()._get_response(messages, options)


def _schema_only(fmt: Any) -> bool:
    return isinstance(fmt, ChatResponseFormat) and fmt.schema is not None and not fmt.output_type


async def test_a_protocol_only_client_gets_a_validated_value_and_a_repair() -> None:
    model = ProtocolOnly('{"name": "Paris"}', '{"name": "Paris", "population": 2100000}')
    assert isinstance(model, ChatClient)

    response = await get_structured_response(model, "Biggest?", response_format=City, retries=1)

    assert response.value == City(name="Paris", population=2100000)
    assert len(model.calls) == 2
    assert all(_schema_only(options.response_format) for _, options in model.calls if options)
    repair = model.calls[1][0][-1]
    assert repair.role == ChatRole.USER and "population" in repair.text


async def test_a_protocol_only_client_gets_it_from_the_options_type_too() -> None:
    model = ProtocolOnly('{"name": "Lyon", "population": 500000}')
    response = await get_structured_response(model, "hi", ChatOptions(response_format=City))
    assert response.value == City(name="Lyon", population=500000)


async def test_a_protocol_only_client_that_never_validates_raises_after_the_repairs() -> None:
    model = ProtocolOnly("no", "still no")
    with pytest.raises(StructuredOutputError) as caught:
        await get_structured_response(model, "hi", response_format=City, retries=1)
    assert caught.value.attempts == 2 and len(model.calls) == 2


async def test_a_call_that_asks_for_no_type_is_a_value_error_before_any_request() -> None:
    model = ProtocolOnly("x")
    with pytest.raises(ValueError, match="response_format=Model"):
        await get_structured_response(model, "hi")
    with pytest.raises(ValueError, match="response_format=Model"):
        await get_structured_response(
            model, "hi", ChatOptions(response_format=ChatResponseFormat.JSON)
        )
    assert model.calls == []


async def test_a_middleware_overriding_only_the_hook_validates_once_at_the_outermost() -> None:
    model = ScriptedChatClient(
        lambda messages, options: (
            '{"name": "Paris", "population": 1}' if len(messages) > 1 else '{"name": 1}'
        )
    )
    inner = Counting(model)
    outer = Counting(inner)

    response = await outer.get_response("hi", response_format=City, retries=1)

    assert response.value == City(name="Paris", population=1)
    # One hook call per attempt in each layer, each with the schema only: nothing below
    # the outermost layer validated or repaired on its own.
    assert len(outer.seen) == len(inner.seen) == len(model.calls) == 2
    assert all(_schema_only(fmt) for fmt in [*outer.seen, *inner.seen])


async def test_a_plain_call_goes_straight_to_the_hook_with_the_options_unchanged() -> None:
    model = ScriptedChatClient(lambda messages, options: "plain")
    layer = Counting(model)
    options = ChatOptions(temperature=0.2)

    response = await layer.get_response("hi", options)

    assert response.text == "plain" and layer.seen == [None]
    assert model.calls[0][1] is not None and model.calls[0][1].temperature == 0.2
    with pytest.raises(ValueError, match="retries="):
        await layer.get_response("hi", retries=1)
    assert len(model.calls) == 1


def test_the_sync_facade_gives_a_protocol_only_client_structured_output() -> None:
    model = ProtocolOnly('{"name": "Nice", "population": 340000}')
    with SyncChatClient(model) as chat:
        response = chat.get_response("hi", response_format=City)
    assert response.value == City(name="Nice", population=340000)
    assert _schema_only(model.calls[0][1].response_format if model.calls[0][1] else None)
