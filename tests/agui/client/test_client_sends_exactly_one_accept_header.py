"""agui-wire §1.1/§1.4: the client asks for server-sent events only. Whatever headers the
caller passes (in any letter case) or its own ``httpx.AsyncClient`` carries, every request
has exactly one ``Accept: text/event-stream`` (a second ``Accept: */*`` line would admit
protobuf, which this client cannot read) and exactly one JSON ``Content-Type``."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from agui_client_support import ENDPOINT, Agent, run, text

from agui_chat.agui import AGUIChatClient


def reply(body: dict[str, Any]) -> list[dict[str, Any]]:
    return run(body, text("a1", "ok"))


@pytest.mark.parametrize(
    "headers",
    [
        {"accept": "*/*"},
        {"ACCEPT": "application/vnd.ag-ui.event+proto"},
        {"Accept": "*/*"},
        {"content-type": "text/plain"},
    ],
    ids=["lower-case accept", "upper-case accept", "accept", "lower-case content-type"],
)
async def test_a_callers_accept_or_content_type_never_adds_a_second_header_line(
    headers: dict[str, str],
) -> None:
    agent = Agent(reply)
    async with agent.client(headers={**headers, "Authorization": "Bearer k"}) as client:
        await client.get_response("hi")

    sent = agent.requests[0].headers
    assert sent.get_list("accept") == ["text/event-stream"]
    assert sent.get_list("content-type") == ["application/json"]
    assert sent["authorization"] == "Bearer k"


async def test_the_default_headers_of_a_callers_http_client_do_not_widen_accept() -> None:
    agent = Agent(reply)
    http = httpx.AsyncClient(
        transport=httpx.MockTransport(agent),
        headers={"accept": "*/*, application/vnd.ag-ui.event+proto", "x-team": "blue"},
    )
    async with http, AGUIChatClient(ENDPOINT, http_client=http) as client:
        await client.get_response("hi")

    sent = agent.requests[0].headers
    assert sent.get_list("accept") == ["text/event-stream"]
    assert sent["x-team"] == "blue"
