"""A PostgreSQL outage during a resume (the real server stopped, then started again): the
resume is refused with ``APPROVAL_STORE_UNAVAILABLE`` within the store's bounded wait,
nothing runs, nothing is lost, and the same answer succeeds once PostgreSQL is back, running
the tool once; the refusal on the wire never carries the database password."""

from __future__ import annotations

import json

from server_support import (
    approve,
    history_from,
    interrupts,
    outcome,
    refused_before_the_run,
    run_input,
    scripted,
    user,
)

from agui_chat import FunctionCallContent
from agui_server import agui_server
from agui_streams import SideEffects
from postgres_server import PASSWORD, PostgresServer


async def test_a_resume_during_a_postgres_outage_runs_nothing_and_succeeds_once_it_is_back(
    postgres_server: PostgresServer,
) -> None:
    effects = SideEffects()
    agent = agui_server(
        scripted([FunctionCallContent("c1", "delete_file", {"path": "a.txt"})], "Deleted."),
        tools=[effects.delete_file()],
        approval_store=postgres_server.url,  # a URL: the server makes and closes the store
    )
    first = await agent.post(run_input(user("delete a.txt")))
    (interrupt,) = interrupts(first)
    history = [user("delete a.txt"), *history_from(first)]
    body = run_input(*history, run="r2", resume=[approve(interrupt)])

    postgres_server.stop()
    events = await agent.post(body)
    refused = refused_before_the_run(events, "APPROVAL_STORE_UNAVAILABLE")
    assert "send the same answer again" in refused["message"]
    assert PASSWORD not in json.dumps(events)
    assert effects.count("delete_file") == 0

    postgres_server.start()
    resumed = await agent.post({**body, "runId": "r3"})
    assert outcome(resumed) == {"type": "success"}
    assert effects.runs["delete_file"] == [{"path": "a.txt"}]
    replayed = await agent.post({**body, "runId": "r4"})
    assert effects.count("delete_file") == 1
    assert [e["content"] for e in replayed if e["type"] == "TOOL_CALL_RESULT"] == ["deleted a.txt"]
    await agent.app.approval_store.aclose()


async def test_two_servers_sharing_a_postgres_table_run_an_approval_once(
    postgres_server: PostgresServer,
) -> None:
    """Two workers (two servers, one key, one database): the answer sent to both runs once."""
    effects = SideEffects()
    model = scripted([FunctionCallContent("c1", "delete_file", {"path": "a.txt"})], "Deleted.")
    one = agui_server(model, tools=[effects.delete_file()], approval_store=postgres_server.url)
    two = agui_server(model, tools=[effects.delete_file()], approval_store=postgres_server.url)
    first = await one.post(run_input(user("delete a.txt")))
    (interrupt,) = interrupts(first)
    history = [user("delete a.txt"), *history_from(first)]
    body = run_input(*history, run="r2", resume=[approve(interrupt)])
    await one.post(body)
    again = await two.post({**body, "runId": "r3"})
    assert effects.count("delete_file") == 1
    assert [e["content"] for e in again if e["type"] == "TOOL_CALL_RESULT"] == ["deleted a.txt"]
    await one.app.approval_store.aclose()
    await two.app.approval_store.aclose()
