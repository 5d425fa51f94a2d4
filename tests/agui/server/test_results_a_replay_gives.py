"""A re-sent answer replays exactly the result its tool gave the first time, whatever the
tool returned (NUL characters, lone surrogates, a non-string result as the tool loop
serialises it), with every durable store; a result the store cannot hold is replayed as a note
that the tool ran, never as "being run" nor as "lost", and the tool never runs again."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from server_support import (
    approve,
    history_from,
    interrupts,
    outcome,
    run_input,
    scripted,
    user,
)

from agui_chat import ApprovalStoreValueError, FunctionCallContent, ai_function, approval_required
from agui_chat.agui.server._claims import UNKEPT_RESULT
from agui_chat.stores import (
    ApprovalStore,
    InMemoryApprovalStore,
    PostgresApprovalStore,
    RedisApprovalStore,
    SQLiteApprovalStore,
)
from agui_server import agui_server
from postgres_server import PostgresServer
from redis_server import RedisServer


@pytest.fixture(params=["sqlite", "redis", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[ApprovalStore]:
    made: ApprovalStore
    if request.param == "sqlite":
        made = SQLiteApprovalStore(tmp_path / "approvals.db")
    elif request.param == "redis":
        redis: RedisServer = request.getfixturevalue("redis_server")
        made = RedisApprovalStore(redis.url)
    else:
        postgres: PostgresServer = request.getfixturevalue("postgres_server")
        made = PostgresApprovalStore(postgres.url, table=f"replay_{uuid.uuid4().hex[:12]}")
    yield made
    await made.aclose()


def results(events: list[dict[str, Any]]) -> list[str]:
    return [e["content"] for e in events if e["type"] == "TOOL_CALL_RESULT"]


async def approved_twice(agent: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Pause, approve, then send the same answer again: both runs' events."""
    first = await agent.run(user("export"))
    (interrupt,) = interrupts(first)
    body = run_input(user("export"), *history_from(first), run="r2", resume=[approve(interrupt)])
    ran = await agent.post(body)
    again = await agent.post({**body, "runId": "r3"})
    return ran, again


@pytest.mark.parametrize(
    "returned",
    [
        "a\x00b",
        "lone \ud800 surrogate",
        {"path": "a\x00b.txt", "note": "\udfff", "sizes": [1, 2.5, None]},
        ["\ufdd0", "\x00"],
        12345678901234567890,
    ],
    ids=["nul", "surrogate", "dict", "list", "big int"],
)
async def test_a_replay_gives_the_first_result_exactly(store: ApprovalStore, returned: Any) -> None:
    ran_with: list[None] = []

    @approval_required
    @ai_function
    def export() -> Any:
        """Export the report."""
        ran_with.append(None)
        return returned

    model = scripted([FunctionCallContent("c1", "export", {})], "Done.", "Done.")
    agent = agui_server(model, tools=[export], approval_store=store)
    ran, again = await approved_twice(agent)
    assert outcome(ran) == {"type": "success"}
    assert len(results(ran)) == 1
    assert results(again) == results(ran)  # the same text, code point for code point
    assert len(ran_with) == 1


async def test_a_result_the_store_cannot_hold_replays_as_a_note_that_the_tool_ran() -> None:
    class Small(InMemoryApprovalStore):
        """A store with a size limit on results, as Redis's proto-max-bulk-len is."""

        async def record_result(self, key: str, result: str, **kept: Any) -> None:
            if len(result) > 1000:
                raise ApprovalStoreValueError("the result is over this store's limit")
            await super().record_result(key, result, **kept)

    ran_with: list[None] = []

    @approval_required
    @ai_function
    def export() -> str:
        """Export the report."""
        ran_with.append(None)
        return "x" * 5000

    model = scripted([FunctionCallContent("c1", "export", {})], "Done.", "Done.")
    agent = agui_server(model, tools=[export], approval_store=Small())
    ran, again = await approved_twice(agent)
    assert results(ran) == ["x" * 5000]  # the person's run got the result itself
    assert results(again) == [UNKEPT_RESULT]  # not RESUME_IN_PROGRESS, not "lost"
    assert outcome(again) == {"type": "success"}
    assert len(ran_with) == 1
