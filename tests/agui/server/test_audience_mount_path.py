"""The default audience includes the path a server is mounted at: two agents with the same
tools and key, mounted side by side in one app, refuse each other's tokens (a red-team case:
agent B must not run a call only agent A proposed), whichever way the host mounts them
(Starlette ``Mount``: ``root_path``; a ``Route`` or FastAPI router: ``path``). Two servers of
one process with the same key and audience are warned about."""

from __future__ import annotations

import logging
from typing import Any

import httpx
import pytest
from server_support import (
    approve,
    history_from,
    interrupts,
    outcome,
    refused_before_the_run,
    run_input,
    scripted,
    sse_events,
    user,
)
from starlette.applications import Starlette
from starlette.routing import Mount, Route

from agui_chat import FunctionCallContent
from agui_chat.agui import AGUIServer, default_audience
from agui_chat.stores import InMemoryApprovalStore
from agui_chat.testing import ScriptedChatClient
from agui_server import SIGNING_KEY, ServedAgent, agui_server
from agui_streams import SideEffects

WARNING = "share a signing key and the audience"


def agent(effects: SideEffects, **settings: Any) -> ServedAgent:
    model = scripted([FunctionCallContent("c1", "delete_file", {"path": "a.txt"})], "Deleted.")
    return agui_server(model, tools=[effects.delete_file()], **settings)


async def post(app: Any, path: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
        response = await client.post(path, json=body)
    assert response.status_code == 200, response.text
    return sse_events(response.content)


@pytest.mark.parametrize("mount", ["Mount", "Route"])
async def test_agent_b_mounted_beside_agent_a_never_runs_a_call_only_a_proposed(
    mount: str,
) -> None:
    """Same tools, same key, even the same store: B refuses A's approval and runs nothing;
    A still takes it, once."""
    a_effects, b_effects = SideEffects(), SideEffects()
    store = InMemoryApprovalStore()
    a = agent(a_effects, approval_store=store).app
    b = agent(b_effects, approval_store=store).app
    if mount == "Mount":
        app = Starlette(routes=[Mount("/agents/a", app=a), Mount("/agents/b", app=b)])
        at_a, at_b = "/agents/a/", "/agents/b/"
    else:
        app = Starlette(
            routes=[
                Route("/agents/a", a, methods=["POST"]),
                Route("/agents/b", b, methods=["POST"]),
            ]
        )
        at_a, at_b = "/agents/a", "/agents/b"
    first = await post(app, at_a, run_input(user("delete a.txt")))
    (interrupt,) = interrupts(first)
    body = run_input(
        user("delete a.txt"), *history_from(first), run="r2", resume=[approve(interrupt)]
    )
    refused = refused_before_the_run(await post(app, at_b, body), "APPROVAL_AUDIENCE_MISMATCH")
    assert "another server" in refused["message"]
    assert b_effects.count("delete_file") == a_effects.count("delete_file") == 0
    assert outcome(await post(app, at_a, {**body, "runId": "r3"})) == {"type": "success"}
    assert a_effects.count("delete_file") == 1 and b_effects.count("delete_file") == 0


async def test_a_token_is_taken_at_its_path_with_or_without_the_trailing_slash() -> None:
    effects = SideEffects()
    server = agent(effects).app
    app = Starlette(
        routes=[Route("/x/", server, methods=["POST"]), Route("/x", server, methods=["POST"])]
    )
    first = await post(app, "/x/", run_input(user("delete a.txt")))
    (interrupt,) = interrupts(first)
    body = run_input(
        user("delete a.txt"), *history_from(first), run="r2", resume=[approve(interrupt)]
    )
    assert outcome(await post(app, "/x", body)) == {"type": "success"}
    assert effects.count("delete_file") == 1


async def test_an_explicit_audience_ignores_the_path() -> None:
    """``audience=`` is the operator's name for the agent: tokens go wherever it is mounted."""
    effects = SideEffects()
    server = agent(effects, audience="files").app
    app = Starlette(routes=[Mount("/old", app=server), Mount("/new", app=server)])
    first = await post(app, "/old/", run_input(user("delete a.txt")))
    (interrupt,) = interrupts(first)
    body = run_input(
        user("delete a.txt"), *history_from(first), run="r2", resume=[approve(interrupt)]
    )
    assert outcome(await post(app, "/new/", body)) == {"type": "success"}


def test_the_default_audience_names_the_path_unless_it_is_the_root() -> None:
    assert default_audience(["b", "a"]) == default_audience(["b", "a"], "/") == "tools:a,b"
    assert default_audience(["b", "a"], "/agents/a") == "tools:a,b@/agents/a"


async def test_a_client_inventing_paths_does_not_grow_the_server() -> None:
    """Every path gets its audience, but only the first few are kept."""
    server = agui_server(ScriptedChatClient(lambda messages, options: "hi")).app
    for i in range(100):
        events = await post(server, f"/p{i}", run_input(user("hi"), run=f"r{i}"))
        assert events[-1]["type"] == "RUN_FINISHED"
    assert server._per_path is not None and len(server._per_path) == 64


async def test_two_servers_with_one_key_and_audience_are_warned_about(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="agui_chat.server")
    store = InMemoryApprovalStore()
    first = AGUIServer(scripted("hi"), signing_key=SIGNING_KEY, approval_store=store, audience="x")
    assert WARNING not in caplog.text
    AGUIServer(scripted("hi"), signing_key=SIGNING_KEY, approval_store=store, audience="other")
    AGUIServer(scripted("hi"), signing_key="another-key-0123456789", approval_store=store,
               audience="x")  # fmt: skip
    assert WARNING not in caplog.text
    AGUIServer(scripted("hi"), signing_key=SIGNING_KEY, approval_store=store, audience="x")
    assert WARNING in caplog.text and "'x'" in caplog.text
    assert first.audience == "x"


async def test_two_servers_with_the_default_audience_at_one_path_are_warned_about_on_use(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Default audiences are known per path, so the warning comes with the first request."""
    caplog.set_level(logging.WARNING, logger="agui_chat.server")
    one, two = agent(SideEffects()).app, agent(SideEffects()).app
    await post(one, "/agent", run_input(user("hi")))
    await post(two, "/elsewhere", run_input(user("hi")))
    assert WARNING not in caplog.text
    await post(two, "/agent", run_input(user("hi")))
    assert WARNING in caplog.text and "@/agent" in caplog.text
