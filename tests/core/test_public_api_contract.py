"""DESIGN §2, name by name: the public names and shapes samples, docs and outside acceptance
tests rely on. Each test uses a name the way the contract writes it."""

from __future__ import annotations

import inspect
import logging
from collections.abc import Mapping
from typing import Any

import pytest

import agui_chat
from agui_chat import (
    AIFunction,
    AIFunctionDeclaration,
    ApprovalRequiredAIFunction,
    ChatClient,
    ChatClientBuilder,
    ChatFinishReason,
    ChatMessage,
    ChatOptions,
    ChatResponse,
    ChatResponseUpdate,
    ChatRole,
    ConfigureOptionsChatClient,
    DataContent,
    DelegatingChatClient,
    ErrorContent,
    FunctionCallContent,
    FunctionInvokingChatClient,
    FunctionResultContent,
    InputRequired,
    InterruptRequestContent,
    InterruptResponseContent,
    LoggingChatClient,
    RetryingChatClient,
    TextContent,
    TextReasoningContent,
    ToolApprovalRequestContent,
    ToolApprovalResponseContent,
    UriContent,
    UsageContent,
    UsageDetails,
    ai_function,
    approval_required,
    request_input,
)
from agui_chat.testing import ScriptedChatClient

CONTRACT_NAMES = [
    "ChatClient",
    "ChatRole",
    "ChatMessage",
    "ChatOptions",
    "ChatResponse",
    "ChatResponseUpdate",
    "TextContent",
    "TextReasoningContent",
    "DataContent",
    "UriContent",
    "FunctionCallContent",
    "FunctionResultContent",
    "ErrorContent",
    "UsageContent",
    "ToolApprovalRequestContent",
    "ToolApprovalResponseContent",
    "InterruptRequestContent",
    "InterruptResponseContent",
    "AIFunctionDeclaration",
    "AIFunction",
    "ai_function",
    "ApprovalRequiredAIFunction",
    "approval_required",
    "request_input",
    "InputRequired",
    "DelegatingChatClient",
    "ChatClientBuilder",
    "FunctionInvokingChatClient",
]


@pytest.mark.parametrize("name", CONTRACT_NAMES)
def test_every_contract_name_is_exported_from_agui_chat(name: str) -> None:
    assert name in agui_chat.__all__
    assert getattr(agui_chat, name) is not None


def test_adapter_names_are_importable_from_their_packages() -> None:
    from agui_chat.agui import AGUIChatClient, AGUIServer
    from agui_chat.openai import OpenAIChatClient
    from agui_chat.testing import ScriptedChatClient as Scripted

    assert [AGUIChatClient.__name__, AGUIServer.__name__, OpenAIChatClient.__name__] == [
        "AGUIChatClient",
        "AGUIServer",
        "OpenAIChatClient",
    ]
    assert Scripted is ScriptedChatClient


# -- ChatClient --------------------------------------------------------------------------


async def test_a_chat_client_takes_a_str_or_a_sequence_of_messages() -> None:
    model = ScriptedChatClient(lambda messages, options: f"{len(messages)} message(s)")
    assert isinstance(model, ChatClient)
    assert (await model.get_response("hi")).text == "1 message(s)"
    history = (ChatMessage("system", "be brief"), ChatMessage("user", "hi"))
    assert (await model.get_response(history)).text == "2 message(s)"
    updates = [u async for u in model.get_streaming_response(list(history), ChatOptions())]
    assert all(isinstance(u, ChatResponseUpdate) for u in updates)
    assert ChatResponse.from_updates(updates).text == "2 message(s)"


async def test_a_chat_client_is_an_async_context_manager() -> None:
    async with ScriptedChatClient(lambda messages, options: "ok") as model:
        assert (await model.get_response("hi")).text == "ok"


def test_get_service_finds_a_client_of_a_kind_through_the_pipeline() -> None:
    model = ScriptedChatClient(lambda messages, options: "ok")
    client = ChatClientBuilder(model).use_logging().use_function_invocation().build()
    assert client.get_service(ScriptedChatClient) is model
    assert isinstance(client.get_service(FunctionInvokingChatClient), FunctionInvokingChatClient)
    assert client.get_service(RetryingChatClient) is None


# -- ChatRole ----------------------------------------------------------------------------


def test_chat_role_has_the_four_roles_and_custom_ones_compare_case_insensitively() -> None:
    assert [ChatRole.SYSTEM, ChatRole.USER, ChatRole.ASSISTANT, ChatRole.TOOL] == [
        "system",
        "user",
        "assistant",
        "tool",
    ]
    developer = ChatRole("developer")
    assert developer == "Developer"
    assert developer == ChatRole("DEVELOPER")
    assert developer != ChatRole.SYSTEM
    assert ChatMessage("developer", "x").role == developer


# -- ChatMessage -------------------------------------------------------------------------


def test_chat_message_takes_the_contract_keywords_and_joins_its_text() -> None:
    message = ChatMessage(
        "assistant",
        [TextContent("a"), FunctionCallContent("c1", "f", {}), TextContent("b")],
        author_name="bot",
        message_id="m1",
        additional_properties={"k": 1},
    )
    assert message.text == "ab"
    assert (message.author_name, message.message_id) == ("bot", "m1")
    assert message.additional_properties == {"k": 1}
    assert ChatMessage("user", "hello").contents == [TextContent("hello")]
    assert ChatMessage("user").contents == []


# -- ChatOptions -------------------------------------------------------------------------

OPTION_FIELDS = [
    "conversation_id",
    "instructions",
    "temperature",
    "max_output_tokens",
    "top_p",
    "top_k",
    "frequency_penalty",
    "presence_penalty",
    "seed",
    "stop_sequences",
    "response_format",
    "model_id",
    "tools",
    "tool_mode",
    "allow_multiple_tool_calls",
    "additional_properties",
]


def test_chat_options_has_exactly_the_meai_fields() -> None:
    assert set(inspect.signature(ChatOptions).parameters) == set(OPTION_FIELDS)


def test_chat_options_clone_is_independent_of_the_original() -> None:
    options = ChatOptions(temperature=0.2, stop_sequences=["x"], additional_properties={"a": 1})
    copy = options.clone()
    copy.stop_sequences.append("y")  # type: ignore[union-attr]
    copy.additional_properties["b"] = 2
    copy.temperature = 0.9
    assert options.stop_sequences == ["x"]
    assert options.additional_properties == {"a": 1}
    assert options.temperature == 0.2


# -- ChatResponse / ChatResponseUpdate ---------------------------------------------------


def test_chat_response_has_the_contract_fields() -> None:
    call = FunctionCallContent("c1", "delete_file", {"path": "a"})
    approval = ToolApprovalRequestContent("r1", call)
    question = InterruptRequestContent("r2", message="Which?")
    response = ChatResponse(
        [
            ChatMessage("assistant", [TextContent("hi "), approval]),
            ChatMessage("assistant", [question]),
        ],
        response_id="resp",
        conversation_id="conv",
        model_id="m",
        finish_reason=ChatFinishReason.INPUT_REQUIRED,
        usage=UsageDetails(input_token_count=1),
        additional_properties={"x": 1},
    )
    assert response.text == "hi "
    assert response.input_requests == [approval, question]
    assert (response.response_id, response.conversation_id, response.model_id) == (
        "resp",
        "conv",
        "m",
    )
    assert response.finish_reason == "input_required"
    assert response.usage == UsageDetails(input_token_count=1)
    assert response.additional_properties == {"x": 1}
    assert len(response.messages) == 2


def test_chat_response_update_has_the_contract_fields() -> None:
    raw = object()
    update = ChatResponseUpdate(
        "assistant",
        "piece",
        message_id="m1",
        response_id="r1",
        finish_reason="stop",
        raw_representation=raw,
        additional_properties={"k": "v"},
    )
    assert update.role == ChatRole.ASSISTANT
    assert update.contents == [TextContent("piece")]
    assert update.text == "piece"
    assert (update.message_id, update.response_id) == ("m1", "r1")
    assert update.finish_reason == ChatFinishReason.STOP
    assert update.raw_representation is raw
    assert update.additional_properties == {"k": "v"}


# -- contents, positionally as the contract lists their fields --------------------------


def test_contents_take_their_contract_fields_positionally() -> None:
    call = FunctionCallContent("c1", "delete_file", {"path": "a"})
    assert (call.call_id, call.name, call.arguments) == ("c1", "delete_file", {"path": "a"})
    result = FunctionResultContent("c1", "done")
    assert (result.call_id, result.result) == ("c1", "done")
    approval = ToolApprovalRequestContent("r1", call)
    assert (approval.request_id, approval.tool_call) == ("r1", call)
    answer = ToolApprovalResponseContent("r1", False, call, "no", {"path": "b"})
    assert (answer.request_id, answer.approved, answer.tool_call) == ("r1", False, call)
    assert (answer.reason, answer.edited_arguments) == ("no", {"path": "b"})
    schema = {"type": "object"}
    question = InterruptRequestContent(
        "q1", "input_required", "Which?", "c1", schema, "2999-01-01T00:00:00Z", {"ui": "x"}
    )
    assert (question.request_id, question.reason, question.message) == (
        "q1",
        "input_required",
        "Which?",
    )
    assert (question.tool_call_id, question.response_schema, question.metadata) == (
        "c1",
        schema,
        {"ui": "x"},
    )
    assert question.expires_at is not None and question.expires_at.year == 2999
    reply = InterruptResponseContent("q1", {"a": 1}, "cancelled")
    assert (reply.request_id, reply.payload, reply.status) == ("q1", {"a": 1}, "cancelled")


def test_the_other_contents_exist_with_their_data() -> None:
    assert TextReasoningContent("why").text == "why"
    assert DataContent(b"x", "text/plain").data == b"x"
    assert UriContent("https://e.com/a.png").media_type == "image/png"
    assert ErrorContent("boom").message == "boom"
    assert UsageContent(UsageDetails(total_token_count=2)).details.total_token_count == 2


def test_approval_create_response_takes_approved_reason_and_keyword_edits() -> None:
    request = ToolApprovalRequestContent("r1", FunctionCallContent("c1", "f", {"a": 1}))
    rejected = request.create_response(False, "not now")
    edited = request.create_response(True, edited_arguments={"a": 2})
    assert (rejected.approved, rejected.reason) == (False, "not now")
    assert (edited.approved, edited.edited_arguments) == (True, {"a": 2})
    assert rejected.request_id == edited.request_id == "r1"


def test_interrupt_create_response_and_cancel() -> None:
    question = InterruptRequestContent("q1", message="Which?")
    assert (question.create_response({"b": 1}).payload, question.create_response(1).status) == (
        {"b": 1},
        "resolved",
    )
    cancelled = question.cancel()
    assert (cancelled.status, cancelled.payload) == ("cancelled", None)


# -- tools -------------------------------------------------------------------------------


def _double(x: int) -> int:
    """Double a number."""
    return x * 2


async def test_ai_function_works_as_decorator_and_as_plain_call() -> None:
    @ai_function
    def triple(x: int) -> int:
        """Triple a number."""
        return x * 3

    plain = ai_function(_double)
    assert isinstance(triple, AIFunction) and isinstance(plain, AIFunction)
    assert isinstance(plain, AIFunctionDeclaration)
    assert (triple.name, plain.name) == ("triple", "_double")
    assert await triple.invoke({"x": 2}) == 6
    assert await plain.invoke({"x": 2}) == 4


async def test_approval_required_on_a_function_or_an_ai_function_bare_or_with_when() -> None:
    def when(arguments: Mapping[str, Any]) -> bool:
        return bool(arguments["x"] > 10)

    on_function = approval_required(_double)
    on_ai_function = approval_required(ai_function(_double))
    with_when = approval_required(when=when)(_double)

    @approval_required(when=when)
    def decorated(x: int) -> int:
        """Decorated."""
        return x

    for tool in (on_function, on_ai_function, with_when, decorated):
        assert isinstance(tool, ApprovalRequiredAIFunction)
    assert on_function.requires_approval({"x": 1})
    assert not with_when.requires_approval({"x": 1})
    assert with_when.requires_approval({"x": 11})
    assert not decorated.requires_approval({"x": 1})
    assert await on_ai_function.invoke({"x": 4}) == 8


def test_request_input_has_the_contract_signature() -> None:
    parameters = inspect.signature(request_input).parameters
    assert list(parameters) == ["message", "response_schema", "reason", "expires_at", "key"]
    assert parameters["message"].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
    keyword_only = {n: p.default for n, p in parameters.items() if p.kind is p.KEYWORD_ONLY}
    assert keyword_only == {
        "response_schema": None,
        "reason": "input_required",
        "expires_at": None,
        "key": None,
    }


def test_request_input_outside_a_resumed_tool_raises_input_required() -> None:
    schema = {"type": "object", "properties": {"build": {"type": "integer"}}}
    with pytest.raises(InputRequired) as raised:
        request_input("Which build?", response_schema=schema, key="build")
    assert raised.value.message == "Which build?"
    assert raised.value.response_schema == schema
    assert raised.value.reason == "input_required"
    assert raised.value.key == "build"


def test_tools_may_raise_input_required_themselves() -> None:
    question = InputRequired("Which build?", reason="pick_build")
    assert isinstance(question, Exception)
    assert (question.message, question.reason) == ("Which build?", "pick_build")


# -- the pipeline ------------------------------------------------------------------------


class _Tagging(DelegatingChatClient):
    """A custom middleware that records the order calls pass through it."""

    def __init__(self, inner: ChatClient, trail: list[str], tag: str) -> None:
        super().__init__(inner)
        self.trail, self.tag = trail, tag

    async def get_response(self, messages: Any, options: ChatOptions | None = None) -> ChatResponse:
        self.trail.append(self.tag)
        return await super().get_response(messages, options)


async def test_the_contract_builder_chain_builds_a_working_pipeline_in_order() -> None:
    trail: list[str] = []
    model = ScriptedChatClient(lambda messages, options: f"temperature {options.temperature}")

    def set_temperature(options: ChatOptions) -> None:
        options.temperature = 0.5

    client = (
        ChatClientBuilder(model)
        .use(lambda inner: _Tagging(inner, trail, "custom"))
        .use_function_invocation(max_iterations=5)
        .use_logging(logging.getLogger("contract"))
        .use_retry(max_attempts=2, initial_delay=0)
        .configure_options(set_temperature)
        .build()
    )
    response = await client.get_response("hi")

    assert response.text == "temperature 0.5"
    assert trail == ["custom"]
    chain = []
    current: Any = client
    while isinstance(current, DelegatingChatClient):
        chain.append(type(current))
        current = current.inner_client
    assert chain == [
        _Tagging,
        FunctionInvokingChatClient,
        LoggingChatClient,
        RetryingChatClient,
        ConfigureOptionsChatClient,
    ]
    assert current is model
    invoking = client.get_service(FunctionInvokingChatClient)
    assert invoking is not None and invoking.max_iterations == 5


def test_function_invoking_chat_client_wraps_an_inner_client_directly() -> None:
    model = ScriptedChatClient(lambda messages, options: "ok")
    client = FunctionInvokingChatClient(model, max_iterations=3)
    assert client.inner_client is model
    assert client.get_service(ScriptedChatClient) is model


# -- adapters ----------------------------------------------------------------------------


def test_agui_chat_client_and_server_take_the_contract_arguments() -> None:
    from agui_chat.agui import AGUIChatClient, AGUIServer

    client_params = inspect.signature(AGUIChatClient).parameters
    assert next(iter(client_params)) == "endpoint"
    for name in ("http_client", "headers"):
        assert client_params[name].kind is inspect.Parameter.KEYWORD_ONLY
        assert client_params[name].default is None
    server_params = inspect.signature(AGUIServer).parameters
    assert next(iter(server_params)) == "chat_client"
    assert server_params["tools"].kind is inspect.Parameter.KEYWORD_ONLY
    assert tuple(server_params["tools"].default) == ()


def test_openai_chat_client_takes_a_model_and_a_keyword_client() -> None:
    openai = pytest.importorskip("openai")
    from agui_chat.openai import OpenAIChatClient

    parameters = inspect.signature(OpenAIChatClient).parameters
    assert next(iter(parameters)) == "model"
    assert parameters["client"].kind is inspect.Parameter.KEYWORD_ONLY
    assert parameters["client"].default is None
    sdk = openai.AsyncOpenAI(api_key="sk-test", base_url="http://127.0.0.1:9/v1")
    chat = OpenAIChatClient("gpt-4o-mini", client=sdk)
    assert chat.get_service(openai.AsyncOpenAI) is sdk
