"""The adapter contract lane: every provider adapter against one ``@copilotkit/aimock``,
through a recording proxy (tests/aimock_server.py), with one fixture file for all of them."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from agui_chat import ChatClient
from aimock_server import RecordingProxy, running_aimock

FIXTURES = Path(__file__).parent / "aimock"
PROVIDERS = ["chat", "responses", "anthropic", "gemini"]


@pytest.fixture(scope="session")
def aimock() -> Iterator[str]:
    with running_aimock(FIXTURES) as base:
        yield base


@pytest.fixture(scope="session")
def session_proxy(aimock: str) -> Iterator[RecordingProxy]:
    proxy = RecordingProxy(aimock)
    yield proxy
    proxy.close()


@pytest.fixture
def proxy(session_proxy: RecordingProxy, aimock: str) -> RecordingProxy:
    """The proxy, with its record and aimock's journal emptied for this test."""
    session_proxy.requests.clear()
    httpx.post(f"{aimock}/__aimock/reset/journal", timeout=5).raise_for_status()
    return session_proxy


@dataclass
class Provider:
    """One adapter under the contract, talking to aimock through the proxy."""

    name: str
    client: ChatClient
    proxy: RecordingProxy
    aimock: str

    def sent(self) -> list[Any]:
        """What the SDK sent, request by request, as JSON."""
        return self.proxy.bodies()

    def journal(self) -> list[dict[str, Any]]:
        """aimock's journal: its own (OpenAI-style) reading of each request."""
        answer = httpx.get(f"{self.aimock}/__aimock/journal", timeout=5)
        answer.raise_for_status()
        entries: list[dict[str, Any]] = answer.json()
        return entries


def make_client(name: str, base: str) -> Any:
    if name in ("chat", "responses"):
        import openai

        from agui_chat.openai import OpenAIChatClient, OpenAIResponsesChatClient

        sdk = openai.AsyncOpenAI(api_key="no-key", base_url=f"{base}/v1", max_retries=0)
        kind = OpenAIChatClient if name == "chat" else OpenAIResponsesChatClient
        return kind("contract-model", client=sdk)
    if name == "anthropic":
        from agui_chat.anthropic import AnthropicChatClient

        return AnthropicChatClient("claude-contract", api_key="no-key", base_url=base)
    from google import genai
    from google.genai import types

    from agui_chat.gemini import GeminiChatClient

    # aimock 1.43 serves Gemini under /v1beta/ only, and the SDK now defaults to /v1/ for a
    # custom base URL: the harness asks for v1beta (the adapter keeps the SDK's choice).
    options = types.HttpOptions(
        base_url=base, api_version="v1beta", retry_options=types.HttpRetryOptions(attempts=1)
    )
    return GeminiChatClient(
        "gemini-contract", client=genai.Client(api_key="no-key", http_options=options)
    )


@pytest.fixture(params=PROVIDERS)
async def provider(
    request: pytest.FixtureRequest, proxy: RecordingProxy, aimock: str
) -> AsyncIterator[Provider]:
    client = make_client(request.param, proxy.url)
    yield Provider(request.param, client, proxy, aimock)
    if request.param in ("chat", "responses"):
        await client.client.close()
    elif request.param == "gemini":
        await client.client.aio.aclose()
    else:
        await client.aclose()


@pytest.fixture(params=[False, True], ids=["whole", "streamed"])
def streaming(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)
