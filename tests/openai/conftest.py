"""Fixtures for the OpenAI adapter tests: a respx router standing in for the API, an SDK
client that sends through it, and helpers that serve the recorded wire bytes."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
import respx

from agui_chat.openai import OpenAIChatClient

BASE_URL = "https://api.openai.com/v1"
FIXTURES = Path(__file__).parent / "fixtures"


class Wire:
    """Serves fixture files as Chat Completions answers and reads back what was sent."""

    def __init__(self, router: respx.MockRouter) -> None:
        self.router = router

    def json(
        self, name: str, status: int = 200, headers: dict[str, str] | None = None
    ) -> httpx.Response:
        return httpx.Response(
            status,
            content=(FIXTURES / name).read_bytes(),
            headers={"content-type": "application/json", **(headers or {})},
        )

    def sse(self, name: str) -> httpx.Response:
        return httpx.Response(
            200,
            content=(FIXTURES / name).read_bytes(),
            headers={"content-type": "text/event-stream"},
        )

    def serve(self, *responses: httpx.Response) -> respx.Route:
        """Answer successive POSTs to /chat/completions with ``responses``, in order."""
        return self.router.post("/chat/completions").mock(side_effect=list(responses))

    @staticmethod
    def sent(route: respx.Route, index: int = -1) -> dict[str, Any]:
        """The JSON body of the request ``route`` received (the last one by default)."""
        body: dict[str, Any] = json.loads(route.calls[index].request.content)
        return body


@pytest.fixture
def router() -> Iterator[respx.MockRouter]:
    # Every request goes to the router: anything unmatched fails instead of reaching a network.
    with respx.mock(base_url=BASE_URL, assert_all_called=False) as mock:
        yield mock


@pytest.fixture
def wire(router: respx.MockRouter) -> Wire:
    return Wire(router)


@pytest.fixture
async def sdk() -> AsyncIterator[openai.AsyncOpenAI]:
    # A plain httpx client: respx intercepts httpx, and the SDK accepts one as http_client.
    client = openai.AsyncOpenAI(
        api_key="sk-test", base_url=BASE_URL, http_client=httpx.AsyncClient(), max_retries=0
    )
    yield client
    await client.close()


@pytest.fixture
def chat(sdk: openai.AsyncOpenAI) -> OpenAIChatClient:
    return OpenAIChatClient("gpt-4o-mini", client=sdk)
