"""OpenAIChatClient as a whole: construction, services, closing, the optional import, and the
tool loop running over it."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import httpx
import openai
import pytest
from openai_wire import Wire

from agui_chat import (
    ChatClient,
    ChatMessage,
    ChatOptions,
    FunctionInvokingChatClient,
    ToolApprovalRequestContent,
    ai_function,
    approval_required,
)
from agui_chat.openai import OpenAIChatClient

# -- construction --------------------------------------------------------------------------


def test_it_is_a_chat_client(chat: OpenAIChatClient) -> None:
    assert isinstance(chat, ChatClient)


def test_get_service_returns_the_sdk_client(
    chat: OpenAIChatClient, sdk: openai.AsyncOpenAI
) -> None:
    assert chat.get_service(openai.AsyncOpenAI) is sdk
    assert chat.get_service(OpenAIChatClient) is chat
    assert chat.get_service(httpx.AsyncClient) is None


def test_get_service_reaches_the_sdk_client_through_middleware(
    chat: OpenAIChatClient, sdk: openai.AsyncOpenAI
) -> None:
    assert FunctionInvokingChatClient(chat).get_service(openai.AsyncOpenAI) is sdk


def test_settings_configure_the_sdk_client_it_makes() -> None:
    chat = OpenAIChatClient(
        "llama3.1",
        api_key="secret",
        base_url="http://localhost:8000/v1",
        timeout=12.5,
        default_headers={"X-Team": "qa"},
    )
    client = chat.client
    assert str(client.base_url) == "http://localhost:8000/v1/"
    assert client.api_key == "secret"
    assert client.timeout == 12.5
    assert client.max_retries == 0
    assert client.default_headers["X-Team"] == "qa"


def test_a_local_server_needs_no_api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    chat = OpenAIChatClient("llama3.1", base_url="http://localhost:11434/v1")
    assert chat.client.api_key


def test_no_key_for_openai_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ValueError, match=r"cannot create the OpenAI client: .*OPENAI_API_KEY"):
        OpenAIChatClient("gpt-4o-mini")


def test_a_client_and_its_settings_together_are_refused(sdk: openai.AsyncOpenAI) -> None:
    with pytest.raises(TypeError, match=r"not both .*api_key, timeout"):
        OpenAIChatClient("gpt-4o-mini", client=sdk, api_key="k", timeout=3.0)


def test_an_empty_model_name_is_refused() -> None:
    with pytest.raises(ValueError, match="model must be a non-empty model name"):
        OpenAIChatClient(" ", api_key="k")


async def test_async_with_closes_the_sdk_client_it_made() -> None:
    async with OpenAIChatClient("gpt-4o-mini", api_key="k") as chat:
        assert not chat.client.is_closed()
    assert chat.client.is_closed()


async def test_async_with_leaves_a_client_passed_in_open(sdk: openai.AsyncOpenAI) -> None:
    async with OpenAIChatClient("gpt-4o-mini", client=sdk):
        pass
    assert not sdk.is_closed()


def test_agui_chat_imports_without_openai() -> None:
    script = textwrap.dedent(
        """
        import sys
        sys.modules["openai"] = None  # as if the extra were not installed
        import agui_chat, agui_chat.testing, agui_chat.middleware
        try:
            import agui_chat.openai
        except ImportError as exc:
            print(exc)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert "pip install 'agui-chat[openai]'" in done.stdout


# -- the tool loop over OpenAI -------------------------------------------------------------


async def test_the_tool_loop_sends_the_call_and_its_result_back_to_the_model(
    chat: OpenAIChatClient, wire: Wire
) -> None:
    cities: list[str] = []

    @ai_function
    def get_weather(city: str) -> str:
        """Current weather for a city."""
        cities.append(city)
        return f"sunny in {city}"

    route = wire.serve(wire.json("completion_weather_call.json"), wire.json("completion_text.json"))
    response = await FunctionInvokingChatClient(chat).get_response(
        "Weather in Paris?", ChatOptions(tools=[get_weather])
    )
    assert cities == ["Paris"]
    assert route.call_count == 2
    second = wire.sent(route, 1)
    assert second["messages"] == [
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_Wz1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_Wz1", "content": "sunny in Paris"},
    ]
    assert [t["function"]["name"] for t in second["tools"]] == ["get_weather"]
    assert response.text == "It is sunny in Paris."


async def test_the_streaming_tool_loop_answers_parallel_calls_in_one_round_trip(
    chat: OpenAIChatClient, wire: Wire
) -> None:
    ran: list[str] = []

    @ai_function
    def get_weather(city: str) -> str:
        """Current weather for a city."""
        ran.append("weather")
        return "sunny"

    @ai_function
    def get_time(zone: str) -> str:
        """Current time in a time zone."""
        ran.append("time")
        return "09:00"

    route = wire.serve(wire.sse("stream_parallel_tool_calls.sse"), wire.sse("stream_text.sse"))
    loop = FunctionInvokingChatClient(chat)
    text = ""
    async for update in loop.get_streaming_response(
        "Weather and time?", ChatOptions(tools=[get_weather, get_time])
    ):
        text += update.text
    assert ran == ["weather", "time"]
    assert text == "It is sunny in Paris."
    assert wire.sent(route, 1)["messages"][1:] == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_Wz1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
                },
                {
                    "id": "call_Tm2",
                    "type": "function",
                    "function": {"name": "get_time", "arguments": '{"zone":"Europe/Paris"}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_Wz1", "content": "sunny"},
        {"role": "tool", "tool_call_id": "call_Tm2", "content": "09:00"},
    ]


async def test_an_approved_call_reaches_the_model_as_a_call_and_its_result(
    chat: OpenAIChatClient, wire: Wire
) -> None:
    @approval_required
    def get_weather(city: str) -> str:
        """Current weather for a city."""
        return f"sunny in {city}"

    route = wire.serve(wire.json("completion_weather_call.json"), wire.json("completion_text.json"))
    loop = FunctionInvokingChatClient(chat)
    options = ChatOptions(tools=[get_weather])
    history = [ChatMessage("user", "Weather in Paris?")]
    paused = await loop.get_response(history, options)
    (request,) = paused.input_requests
    assert isinstance(request, ToolApprovalRequestContent)
    assert route.call_count == 1

    history += paused.messages
    history.append(ChatMessage("user", [request.create_response(True)]))
    await loop.get_response(history, options)
    assert wire.sent(route, 1)["messages"][1:] == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_Wz1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_Wz1", "content": "sunny in Paris"},
    ]
