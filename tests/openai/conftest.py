"""Fixtures for the OpenAI adapter tests: a respx router standing in for the API, an SDK
client that sends through it, and the chat client under test."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import openai
import pytest
import respx
from openai_wire import BASE_URL, Wire, legacy_http_client

from agui_chat.openai import OpenAIChatClient


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
    client = openai.AsyncOpenAI(
        api_key="sk-test", base_url=BASE_URL, http_client=legacy_http_client(), max_retries=0
    )
    yield client
    await client.close()


@pytest.fixture
def chat(sdk: openai.AsyncOpenAI) -> OpenAIChatClient:
    return OpenAIChatClient("gpt-4o-mini", client=sdk)
