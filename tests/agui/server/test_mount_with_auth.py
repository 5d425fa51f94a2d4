"""The public way to host ``AGUIServer`` behind authentication: ``protect`` (any ASGI host,
Starlette routes and mounts) with ``bearer_token`` or a check of one's own, and
``fastapi_router`` (FastAPI dependencies run first). A refused request never reaches the
agent; an accepted one reaches it untouched (its body unread), pauses and resumes."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from fastapi import Depends, FastAPI, Header, HTTPException
from server_support import (
    approve,
    assert_valid_agui,
    interrupts,
    run_input,
    scripted,
    sse_events,
    user,
)
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.routing import Mount, Route

from agui_chat import FunctionCallContent, approval_required
from agui_chat.agui import bearer_token, fastapi_router, protect
from agui_server import agui_server

TOKEN = "s3cret-token"


class Agent:
    """An AG-UI server whose gated tool counts its runs, and which counts its requests."""

    def __init__(self, **server: Any) -> None:
        self.requests = 0
        self.deleted: list[str] = []

        @approval_required
        def delete_file(path: str) -> str:
            """Delete a file.

            Args:
                path: The file.
            """
            self.deleted.append(path)
            return f"deleted {path}"

        model = scripted([FunctionCallContent("c1", "delete_file", {"path": "a.txt"})], "Done.")
        self.server = agui_server(model, tools=[delete_file], **server).app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        self.requests += 1
        await self.server(scope, receive, send)


def http(app: Any) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://localhost")


async def pause_and_approve(client: httpx.AsyncClient, path: str, headers: dict[str, str]) -> None:
    first = await client.post(path, json=run_input(user("delete a.txt")), headers=headers)
    assert first.status_code == 200, first.text
    events = sse_events(first.content)
    assert_valid_agui(events)
    (interrupt,) = interrupts(events)
    body = run_input(user("delete a.txt"), run="r2", resume=[approve(interrupt)])
    second = await client.post(path, json=body, headers=headers)
    assert_valid_agui(sse_events(second.content), resumed=True)


BAD = [{}, {"Authorization": "Bearer wrong"}, {"Authorization": f"Basic {TOKEN}"}]


@pytest.mark.parametrize("headers", BAD, ids=["none", "wrong token", "other scheme"])
async def test_protect_refuses_without_the_token_and_the_agent_never_sees_it(
    headers: dict[str, str],
) -> None:
    agent = Agent()
    app = Starlette(routes=[Route("/agui", protect(agent, bearer_token(TOKEN)), methods=["POST"])])
    async with http(app) as client:
        refused = await client.post("/agui", json=run_input(user("x")), headers=headers)
    assert refused.status_code == 401
    assert refused.headers["www-authenticate"] == "Bearer"
    assert refused.json()["code"] == "UNAUTHORIZED"
    assert agent.requests == 0


async def test_protect_lets_the_token_through_to_pause_and_resume() -> None:
    agent = Agent()
    app = Starlette(routes=[Mount("/agui", app=protect(agent, bearer_token("old", TOKEN)))])
    async with http(app) as client:
        await pause_and_approve(client, "/agui/", {"Authorization": f"Bearer {TOKEN}"})
    assert agent.deleted == ["a.txt"]


async def test_protect_takes_an_async_check_of_its_own() -> None:
    seen: list[str] = []

    async def team_header(headers: Headers) -> bool:
        seen.append(headers.get("x-team", ""))
        return headers.get("x-team") == "blue"

    agent = Agent()
    app = protect(agent, team_header, scheme="Team")
    async with http(app) as client:
        refused = await client.post("/", json=run_input(user("x")), headers={"X-Team": "red"})
        await pause_and_approve(client, "/", {"X-Team": "blue"})
    assert refused.status_code == 401
    assert refused.headers["www-authenticate"] == "Team"
    assert seen == ["red", "blue", "blue"]
    assert agent.deleted == ["a.txt"]


def require_token(authorization: str = Header("")) -> None:
    if authorization != f"Bearer {TOKEN}":
        raise HTTPException(401, "a valid bearer token is required")


async def test_fastapi_router_runs_the_dependencies_first() -> None:
    agent = Agent()
    app = FastAPI()
    app.include_router(fastapi_router(agent, "/agui", dependencies=[Depends(require_token)]))
    async with http(app) as client:
        refused = await client.post("/agui", json=run_input(user("x")))
        await pause_and_approve(client, "/agui", {"Authorization": f"Bearer {TOKEN}"})
    assert refused.status_code == 401
    assert agent.requests == 2  # the two accepted ones
    assert agent.deleted == ["a.txt"]


async def test_fastapi_router_serves_the_page_on_get_when_the_server_has_one() -> None:
    with_page, without = Agent(ui=True), Agent()
    app = FastAPI()
    app.include_router(fastapi_router(with_page.server, "/agui"))
    app.include_router(fastapi_router(without.server, "/plain"))
    async with http(app) as client:
        page = await client.get("/agui")
        not_routed = await client.get("/plain")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert not_routed.status_code == 405


@pytest.mark.parametrize("tokens", [(), ("",)])
def test_bearer_token_needs_a_token(tokens: tuple[str, ...]) -> None:
    with pytest.raises(ValueError, match="at least one non-empty token"):
        bearer_token(*tokens)
