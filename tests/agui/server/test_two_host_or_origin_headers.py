"""A request with two ``Host`` (or two ``Origin``) headers is refused with 400 before
anything runs: the host check would read one, Starlette and most proxies the first, so the
server never chooses between them (``evil.example`` first and ``127.0.0.1`` second would
otherwise be answered). Sent over a raw socket to the server under real uvicorn, as no
HTTP client sends a header twice."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

import pytest

from agui_chat.testing import ScriptedChatClient
from agui_server import agui_server
from agui_streams import run_input, user

Start = Callable[[Any], Awaitable[str]]


async def raw_request(base: str, method: str, headers: list[tuple[str, str]]) -> tuple[int, str]:
    """Send one HTTP/1.1 request with exactly ``headers`` (repeats kept); its status and
    body."""
    parts = urlsplit(base)
    body = json.dumps(run_input(user("hello"))).encode() if method == "POST" else b""
    lines = [f"{method} / HTTP/1.1", *(f"{name}: {value}" for name, value in headers)]
    lines += ["Accept: text/event-stream", "Content-Type: application/json"]
    lines += [f"Content-Length: {len(body)}", "Connection: close", "", ""]
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    writer.write("\r\n".join(lines).encode() + body)
    await writer.drain()
    answer = await asyncio.wait_for(reader.read(), timeout=10)
    writer.close()
    head, _, rest = answer.decode("utf-8", "replace").partition("\r\n\r\n")
    return int(head.split()[1]), rest


async def served(live_server: Start) -> tuple[str, list[str]]:
    """An agent with its page on, under uvicorn; the texts its model was asked."""
    asked: list[str] = []

    def reply(messages: Any, options: Any) -> str:
        asked.append(messages[-1].text)
        return "hi"

    agent = agui_server(ScriptedChatClient(reply), ui=True)
    return await live_server(agent.app), asked


@pytest.mark.parametrize(
    "headers",
    [
        [("Host", "evil.example"), ("Host", "{here}")],
        [("Host", "{here}"), ("Host", "evil.example")],
        [("Host", "{here}"), ("Host", "{here}")],
        [("Host", "{here}"), ("Origin", "http://evil.example"), ("Origin", "http://{here}")],
        [("Host", "{here}"), ("Origin", "http://{here}"), ("origin", "http://{here}")],
    ],
    ids=["evil-first", "evil-second", "both-allowed", "two-origins", "two-origins-any-case"],
)
@pytest.mark.parametrize("method", ["POST", "GET"])
async def test_two_host_or_origin_headers_are_refused_and_nothing_runs(
    live_server: Start, headers: list[tuple[str, str]], method: str
) -> None:
    base, asked = await served(live_server)
    here = urlsplit(base).netloc
    sent = [(name, value.format(here=here)) for name, value in headers]
    status, body = await raw_request(base, method, sent)
    assert status == 400, body
    assert "more than one" in body and "Nothing was run" in body
    assert asked == []


async def test_one_host_and_one_origin_are_answered(live_server: Start) -> None:
    base, asked = await served(live_server)
    here = urlsplit(base).netloc
    status, body = await raw_request(base, "POST", [("Host", here), ("Origin", f"http://{here}")])
    assert status == 200, body
    assert "RUN_FINISHED" in body and asked == ["hello"]
