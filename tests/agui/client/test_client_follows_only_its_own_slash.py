"""Where ``AGUIChatClient`` is redirected: a ``307``/``308`` to the same URL with a trailing
slash on the same origin (how Starlette and FastAPI answer ``/agent`` for an app mounted at
``/agent``) is followed once, with the same body and headers, and kept as the endpoint; any
other redirect (another origin, another path, a method-changing status) is never followed,
so no other host gets the run or its headers, and the error says in one line where the
redirect leads. A server that is down is a ``ConnectError`` that names the URL and says what
to do, as ``agui-chat chat`` does."""

from __future__ import annotations

import socket

import httpx
import pytest
from agui_client_support import Agent, run, text

from agui_chat import ConnectError, HTTPStatusError
from agui_chat.agui import AGUIChatClient

ENDPOINT = "http://agent.test/agent"


def answer(body: dict[str, object]) -> list[dict[str, object]]:
    return run(body, text("m1", "hi"))


def redirect(status: int, location: str) -> httpx.Response:
    return httpx.Response(status, headers={"Location": location})


@pytest.mark.parametrize("status", [307, 308])
async def test_the_same_url_with_a_slash_is_followed_once_and_kept(status: int) -> None:
    agent = Agent(redirect(status, "http://agent.test/agent/"), answer, answer)
    http = agent.http_client()
    headers = {"Authorization": "Bearer t"}
    async with AGUIChatClient(ENDPOINT, http_client=http, headers=headers) as client:
        assert (await client.get_response("hello")).text == "hi"
        assert (await client.get_response("again")).text == "hi"
        assert client.endpoint == "http://agent.test/agent/"
    first, followed, second = agent.requests
    assert str(first.url) == ENDPOINT
    assert str(followed.url) == str(second.url) == "http://agent.test/agent/"
    assert followed.content == first.content  # the same run, sent where it belongs
    assert followed.headers["authorization"] == "Bearer t"


@pytest.mark.parametrize(
    ("status", "location"),
    [
        (307, "http://elsewhere.test/agent/"),  # another host
        (307, "https://agent.test/agent/"),  # another scheme
        (307, "http://agent.test:8080/agent/"),  # another port
        (307, "http://agent.test/login"),  # another path on the same origin
        (301, "http://agent.test/agent/"),  # a status that turns a POST into a GET
    ],
)
async def test_any_other_redirect_is_not_followed_and_says_where_it_leads(
    status: int, location: str
) -> None:
    agent = Agent(redirect(status, location))
    async with AGUIChatClient(ENDPOINT, http_client=agent.http_client()) as client:
        with pytest.raises(HTTPStatusError) as refused:
            await client.get_response("hello")
        assert client.endpoint == ENDPOINT
    assert len(agent.requests) == 1  # nothing went to the redirect's target
    message = str(refused.value)
    assert refused.value.status_code == status
    assert "\n" not in message
    assert f"{ENDPOINT} answered HTTP {status}" in message
    assert f"a redirect to {location}, not followed" in message


async def test_a_redirect_the_endpoint_already_took_is_not_followed_again() -> None:
    agent = Agent(
        redirect(307, "http://agent.test/agent/"), redirect(307, "http://agent.test/agent//")
    )
    async with AGUIChatClient(ENDPOINT, http_client=agent.http_client()) as client:
        with pytest.raises(HTTPStatusError, match="not followed"):
            await client.get_response("hello")
    assert len(agent.requests) == 2  # one redirect followed, never a chain


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_a_server_that_is_down_is_named_with_what_to_do() -> None:
    url = f"http://127.0.0.1:{_closed_port()}/agent/"
    async with AGUIChatClient(url, max_retries=0) as client:
        with pytest.raises(ConnectError) as refused:
            await client.get_response("hello")
    assert str(refused.value) == (
        f"could not connect to the AG-UI endpoint {url}: connection refused: nothing listens "
        "on that port. Is the server running?"
    )
