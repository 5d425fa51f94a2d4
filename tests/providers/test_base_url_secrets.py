"""A provider's ``base_url`` (and an AG-UI endpoint) with a password in its userinfo: the
password still reaches the server (as the Basic ``Authorization`` httpx would have made of
it), and is shown nowhere: not in the client's ``repr``, not in its errors, not in any log
line at any level (the SDK's and httpx's own included), against a closed port and against a
live server. A key in the URL's query is sent as given, and hidden in the same places."""

from __future__ import annotations

import base64
import json
import logging
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from agui_chat import AuthenticationError, ChatClient, ChatClientError, ConnectError

SECRET = "Zq-SECRET-7731"
QUERY_SECRET = "Qk-SECRET-4410"
SDK_LOGGERS = ("openai", "anthropic", "google_genai", "httpx", "httpcore", "agui_chat")


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def refusing_server() -> Iterator[tuple[int, list[dict[str, str]]]]:
    """A live HTTP server on 127.0.0.1 that answers every POST 401 (a JSON error, as each
    API writes one) and keeps each request's headers."""
    seen: list[dict[str, str]] = []

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length") or 0))
            seen.append({k.lower(): v for k, v in self.headers.items()})
            body = json.dumps(
                {"error": {"message": "no such key", "type": "auth", "code": 401}}
            ).encode()
            self.send_response(401)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1]), seen
    finally:
        server.shutdown()
        server.server_close()


def openai_chat(base_url: str) -> ChatClient:
    from agui_chat.openai import OpenAIChatClient

    return OpenAIChatClient("m", base_url=base_url, api_key="sk-test")


def openai_responses(base_url: str) -> ChatClient:
    from agui_chat.openai import OpenAIResponsesChatClient

    return OpenAIResponsesChatClient("m", base_url=base_url, api_key="sk-test")


def anthropic(base_url: str) -> ChatClient:
    from agui_chat.anthropic import AnthropicChatClient

    return AnthropicChatClient("m", base_url=base_url, api_key="sk-test")


def gemini(base_url: str) -> ChatClient:
    from agui_chat.gemini import GeminiChatClient

    return GeminiChatClient("m", base_url=base_url, api_key="sk-test")


def agui(base_url: str) -> ChatClient:
    from agui_chat.agui import AGUIChatClient

    return AGUIChatClient(base_url, max_retries=0)


CLIENTS: list[Callable[[str], ChatClient]] = [openai_chat, openai_responses, anthropic, gemini]


async def failure_of(client: ChatClient) -> ChatClientError:
    with pytest.raises(ChatClientError) as failed:
        await client.get_response("hi")
    await client.aclose()
    return failed.value


def everything_shown(caplog: pytest.LogCaptureFixture, *texts: str) -> str:
    logged = [record.getMessage() for record in caplog.records]
    logged += [str(record.exc_info[1]) for record in caplog.records if record.exc_info]
    return "\n".join([*texts, *logged])


@pytest.fixture
def all_logs(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    """Every record, at every level, of the SDKs, httpx and agui_chat."""
    caplog.set_level(logging.DEBUG)
    for name in SDK_LOGGERS:
        caplog.set_level(logging.DEBUG, logger=name)
    return caplog


@pytest.mark.parametrize("make", [*CLIENTS, agui], ids=lambda f: f.__name__)
async def test_a_password_in_the_base_url_is_never_shown_against_a_closed_port(
    make: Callable[[str], ChatClient], all_logs: pytest.LogCaptureFixture
) -> None:
    port = closed_port()
    client = make(f"http://user:{SECRET}@127.0.0.1:{port}/v1")
    shown = repr(client)
    failure = await failure_of(client)
    assert isinstance(failure, ConnectError)
    everything = everything_shown(all_logs, shown, str(failure))
    assert SECRET not in everything
    assert f"127.0.0.1:{port}" in everything
    if make is not agui:  # the provider's error names where it could not connect
        assert f"127.0.0.1:{port}" in str(failure)


@pytest.mark.parametrize("make", [*CLIENTS, agui], ids=lambda f: f.__name__)
async def test_a_password_in_the_base_url_reaches_the_server_and_is_never_shown(
    make: Callable[[str], ChatClient], all_logs: pytest.LogCaptureFixture
) -> None:
    with refusing_server() as (port, seen):
        client = make(f"http://user:{SECRET}@127.0.0.1:{port}/v1")
        shown = repr(client)
        failure = await failure_of(client)
    assert isinstance(failure, AuthenticationError)
    basic = base64.b64encode(f"user:{SECRET}".encode()).decode()
    assert [headers["authorization"] for headers in seen] == [f"Basic {basic}"]
    everything = everything_shown(all_logs, shown, str(failure))
    assert SECRET not in everything
    assert f"127.0.0.1:{port}" in everything  # httpx's line, and the error where it names it


@pytest.mark.parametrize("make", [*CLIENTS, agui], ids=lambda f: f.__name__)
async def test_a_key_in_the_urls_query_is_hidden_everywhere(
    make: Callable[[str], ChatClient], all_logs: pytest.LogCaptureFixture
) -> None:
    with refusing_server() as (port, _):
        client = make(f"http://127.0.0.1:{port}/v1?key={QUERY_SECRET}&api-version=1")
        shown = repr(client)
        failure = await failure_of(client)
    assert QUERY_SECRET not in everything_shown(all_logs, shown, str(failure))
    assert "key=***" in everything_shown(all_logs)  # httpx's line names the URL, masked
    if make is not agui:
        assert f"127.0.0.1:{port}" in str(failure) and "key=***" in str(failure)


async def test_spans_name_the_server_by_its_host_without_the_password() -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from agui_chat import ChatClientBuilder

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with refusing_server() as (port, _):
        traced = (
            ChatClientBuilder(openai_chat(f"http://user:{SECRET}@127.0.0.1:{port}/v1"))
            .use_opentelemetry(tracer_provider=provider)
            .build()
        )
        await failure_of(traced)
    [span] = exporter.get_finished_spans()
    recorded = json.dumps(
        [dict(span.attributes or {}), [(e.name, dict(e.attributes or {})) for e in span.events]]
    )
    assert span.attributes is not None and span.attributes["server.address"] == "127.0.0.1"
    assert "AuthenticationError" in recorded and SECRET not in recorded
    provider.shutdown()
