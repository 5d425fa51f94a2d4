"""DelegatingChatClient, ChatClientBuilder and ConfigureOptionsChatClient."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from agui_chat import (
    ChatClient,
    ChatClientBuilder,
    ChatMessage,
    ChatOptions,
    ChatResponse,
    ChatResponseUpdate,
    ConfigureOptionsChatClient,
    DelegatingChatClient,
    FunctionInvokingChatClient,
    LoggingChatClient,
    RetryingChatClient,
)
from agui_chat._client import ChatMessages
from agui_chat.testing import ScriptedChatClient


class Tagging(DelegatingChatClient):
    """Records in a shared journal that a call passed through it, on the way in and out."""

    def __init__(self, inner: ChatClient, tag: str, journal: list[str]) -> None:
        super().__init__(inner)
        self.tag = tag
        self.journal = journal

    async def get_response(
        self, messages: ChatMessages, options: ChatOptions | None = None
    ) -> ChatResponse:
        self.journal.append(f"{self.tag}>")
        response = await super().get_response(messages, options)
        self.journal.append(f"<{self.tag}")
        return response

    async def get_streaming_response(
        self, messages: ChatMessages, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        self.journal.append(f"{self.tag}>")
        async for update in super().get_streaming_response(messages, options):
            yield update
        self.journal.append(f"<{self.tag}")


class Other(DelegatingChatClient):
    pass


def _model(journal: list[str]) -> ScriptedChatClient:
    def handler(messages: list[ChatMessage], options: ChatOptions | None) -> str:
        journal.append("model")
        return "ok"

    return ScriptedChatClient(handler)


# -- get_service -------------------------------------------------------------------------


def test_get_service_returns_the_wrapper_itself_for_its_type() -> None:
    client = Other(ScriptedChatClient(lambda m, o: "x"))
    assert client.get_service(Other) is client


def test_get_service_walks_the_chain_to_the_inner_client() -> None:
    model = ScriptedChatClient(lambda m, o: "x")
    client = Tagging(Other(LoggingChatClient(model)), "t", [])
    assert client.get_service(ScriptedChatClient) is model
    assert isinstance(client.get_service(LoggingChatClient), LoggingChatClient)
    assert isinstance(client.get_service(Other), Other)


def test_get_service_finds_the_outermost_match_first() -> None:
    inner = Other(ScriptedChatClient(lambda m, o: "x"))
    outer = Other(inner)
    assert outer.get_service(Other) is outer


def test_get_service_returns_none_for_a_type_nobody_is() -> None:
    client = Other(ScriptedChatClient(lambda m, o: "x"))
    assert client.get_service(RetryingChatClient) is None


def test_get_service_sees_through_a_built_pipeline() -> None:
    model = ScriptedChatClient(lambda m, o: "x")
    client = ChatClientBuilder(model).use_logging().use_function_invocation().use_retry().build()
    assert client.get_service(ScriptedChatClient) is model
    assert isinstance(client.get_service(FunctionInvokingChatClient), FunctionInvokingChatClient)
    assert isinstance(client.get_service(RetryingChatClient), RetryingChatClient)


async def test_delegating_client_aclose_closes_the_inner_client() -> None:
    closed: list[bool] = []

    class Closable(ScriptedChatClient):
        async def aclose(self) -> None:
            closed.append(True)

    async with Other(Other(Closable(lambda m, o: "x"))):
        pass
    assert closed == [True]


# -- ChatClientBuilder ---------------------------------------------------------------------


async def test_the_first_middleware_added_is_the_outermost() -> None:
    journal: list[str] = []
    client = (
        ChatClientBuilder(_model(journal))
        .use(lambda inner: Tagging(inner, "A", journal))
        .use(lambda inner: Tagging(inner, "B", journal))
        .use(lambda inner: Tagging(inner, "C", journal))
        .build()
    )
    response = await client.get_response("hi")
    assert response.text == "ok"
    assert journal == ["A>", "B>", "C>", "model", "<C", "<B", "<A"]


async def test_streaming_calls_pass_through_the_middleware_in_the_same_order() -> None:
    journal: list[str] = []
    client = (
        ChatClientBuilder(_model(journal))
        .use(lambda inner: Tagging(inner, "A", journal))
        .use(lambda inner: Tagging(inner, "B", journal))
        .build()
    )
    updates = [u async for u in client.get_streaming_response("hi")]
    assert ChatResponse.from_updates(updates).text == "ok"
    assert journal == ["A>", "B>", "model", "<B", "<A"]


def test_build_without_middleware_returns_the_inner_client() -> None:
    model = ScriptedChatClient(lambda m, o: "x")
    assert ChatClientBuilder(model).build() is model


def test_builder_refuses_an_unknown_function_invocation_setting() -> None:
    builder = ChatClientBuilder(ScriptedChatClient(lambda m, o: "x"))
    with pytest.raises(TypeError, match="unknown function invocation setting"):
        builder.use_function_invocation(max_iteration=3)


def test_use_function_invocation_passes_its_settings() -> None:
    client = (
        ChatClientBuilder(ScriptedChatClient(lambda m, o: "x"))
        .use_function_invocation(max_iterations=7, include_detailed_errors=True)
        .build()
    )
    assert isinstance(client, FunctionInvokingChatClient)
    assert client.max_iterations == 7
    assert client.include_detailed_errors is True


# -- configure_options ---------------------------------------------------------------------


def _set_defaults(options: ChatOptions) -> None:
    options.temperature = 0.0
    options.additional_properties["team"] = "ops"


async def test_configure_options_sets_what_the_model_receives() -> None:
    model = ScriptedChatClient(lambda m, o: "x")
    client = ChatClientBuilder(model).configure_options(_set_defaults).build()
    await client.get_response("hi", ChatOptions(instructions="be brief"))
    received = model.calls[0][1]
    assert received is not None
    assert (received.temperature, received.instructions) == (0.0, "be brief")
    assert received.additional_properties == {"team": "ops"}


async def test_configure_options_never_changes_the_callers_options() -> None:
    model = ScriptedChatClient(lambda m, o: "x")
    client = ChatClientBuilder(model).configure_options(_set_defaults).build()
    mine = ChatOptions(instructions="be brief")
    await client.get_response("hi", mine)
    _ = [u async for u in client.get_streaming_response("hi", mine)]
    assert mine.temperature is None
    assert mine.additional_properties == {}
    assert model.calls[0][1] is not mine
    assert model.calls[1][1] is not mine


async def test_configure_options_creates_options_when_the_caller_gives_none() -> None:
    model = ScriptedChatClient(lambda m, o: "x")
    client = ConfigureOptionsChatClient(model, _set_defaults)
    _ = [u async for u in client.get_streaming_response("hi")]
    received = model.calls[0][1]
    assert received is not None and received.temperature == 0.0
