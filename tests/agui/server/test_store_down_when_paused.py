"""A store that is down when a pause is issued never turns the person's answer into "ask
again" once it is back with its records, and never runs an answer twice.

The server starts (its ASGI lifespan) and pauses while the store cannot be used; its token
then carries the second it was issued instead of the store's epoch. The store comes back, the
answer runs once, on the worker that paused and on a fresh one alike, and a re-sent answer
replays the result. A store that comes back *without* its records (Redis without
persistence) may have lost a use of the token: the answer is refused as a reset, and nothing
runs. Each store had its records for an hour before (its epoch made then), as a deployed
one has.

Real stores: a SQLite file and its directory made read-only (``chattr +i``), Redis with and
without its append-only file, PostgreSQL stopped and started; memory, which cannot be down,
pauses with its epoch in the token.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from server_support import (
    approve,
    history_from,
    interrupts,
    outcome,
    refused_before_the_run,
    run_input,
    scripted,
    start_up,
    user,
)

from agui_chat import FunctionCallContent
from agui_chat.agui.server._signing import InterruptSigner
from agui_chat.stores import (
    ApprovalStore,
    InMemoryApprovalStore,
    PostgresApprovalStore,
    RedisApprovalStore,
    SQLiteApprovalStore,
)
from agui_server import SIGNING_KEY, agui_server
from agui_streams import SideEffects
from file_faults import read_only
from postgres_server import PostgresServer
from real_components import require
from redis_server import HOW as REDIS_HOW
from redis_server import RedisServer, _free_port

AN_HOUR_AGO = time.time() - 3600


@dataclass
class Deployment:
    """Stores of one deployment (each a worker's own store object), a way to take them down
    and bring them back, and whether they come back with their records."""

    make: Callable[[], ApprovalStore]
    down: Callable[[], contextlib.AbstractContextManager[None]]
    keeps_records: bool = True
    #: Down means refusing this server (a file it may not write), not an outage: the ASGI
    #: startup fails (a server run without one still pauses, as here).
    refuses: bool = False
    made: list[ApprovalStore] = field(default_factory=list)

    def store(self) -> ApprovalStore:
        self.made.append(self.make())
        return self.made[-1]


@contextlib.contextmanager
def stopped(server: RedisServer | PostgresServer) -> Iterator[None]:
    server.stop()
    try:
        yield
    finally:
        server.start()


async def aged(store: ApprovalStore) -> None:
    """Make ``store``'s records an hour old, as a deployed store's are."""
    await store.epoch()
    await store.aclose()


@pytest.fixture(
    params=["sqlite file", "sqlite directory", "redis persisted", "redis unpersisted", "postgres"]
)
async def deployment(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Deployment]:
    kind = request.param
    if kind.startswith("sqlite"):
        folder = tmp_path / "state"
        folder.mkdir()
        path = folder / "approvals.db"
        await aged(SQLiteApprovalStore(path, clock=lambda: AN_HOUR_AGO))
        target = path if kind == "sqlite file" else folder
        made = Deployment(
            lambda: SQLiteApprovalStore(path), lambda: read_only(target), refuses=True
        )
    elif kind.startswith("redis"):
        if kind == "redis persisted":
            redis = RedisServer(require("redis-server", REDIS_HOW), tmp_path, persist=True)
            redis.start()
            request.addfinalizer(redis.stop)
        else:
            redis = request.getfixturevalue("redis_server")
        await aged(RedisApprovalStore(redis.url, clock=lambda: AN_HOUR_AGO))
        made = Deployment(
            lambda: RedisApprovalStore(redis.url, timeout=0.5),
            lambda: stopped(redis),
            keeps_records=kind == "redis persisted",
        )
    else:
        postgres: PostgresServer = request.getfixturevalue("postgres_server")
        table = f"down_{uuid.uuid4().hex[:12]}"
        await aged(PostgresApprovalStore(postgres.url, table=table, clock=lambda: AN_HOUR_AGO))
        made = Deployment(
            lambda: PostgresApprovalStore(postgres.url, table=table, timeout=0.5),
            lambda: stopped(postgres),
        )
    yield made
    for store in made.made:
        await store.aclose()


def issued_without_an_epoch(interrupt: dict[str, Any]) -> bool:
    claims = InterruptSigner(SIGNING_KEY).verify(interrupt["id"])
    return claims.store_epoch is None and claims.issued_at is not None


async def test_a_pause_issued_while_the_store_is_down_runs_once_when_it_is_back(
    deployment: Deployment,
) -> None:
    effects = SideEffects()
    model = scripted(
        [FunctionCallContent("c1", "delete_file", {"path": "a.txt"})], "Deleted.", "Deleted."
    )
    tools = [effects.delete_file()]
    with deployment.down():
        worker = agui_server(model, tools=tools, approval_store=deployment.store())
        started = [m["type"] for m in await start_up(worker.app)]
        if deployment.refuses:
            assert started == ["lifespan.startup.failed"]
        else:  # a store that is down does not stop the server
            assert started == ["lifespan.startup.complete", "lifespan.shutdown.complete"]
        first = await worker.run(user("delete a.txt"))
        (interrupt,) = interrupts(first)  # offered while the store is down
        assert issued_without_an_epoch(interrupt)
        body = run_input(
            user("delete a.txt"), *history_from(first), run="r2", resume=[approve(interrupt)]
        )
        refused = await worker.post(body)
        assert refused[-1]["type"] == "RUN_ERROR"
        assert refused[-1]["code"] in ("APPROVAL_STORE_UNAVAILABLE", "APPROVAL_STORE_MISCONFIGURED")
        assert effects.count("delete_file") == 0

    other = agui_server(model, tools=tools, approval_store=deployment.store())  # a fresh worker
    if not deployment.keeps_records:
        # Redis came back empty: its new epoch is younger than the token, so a use of the
        # token may have been lost with the records: ask again, on every worker.
        for server in (worker, other):
            again = await server.post({**body, "runId": f"x-{id(server)}"})
            assert (
                "ask the person again"
                in refused_before_the_run(again, "APPROVAL_STORE_RESET")["message"]
            )
        assert effects.count("delete_file") == 0
        return
    resumed = await other.post({**body, "runId": "r3"})
    assert outcome(resumed) == {"type": "success"}
    assert effects.runs["delete_file"] == [{"path": "a.txt"}]
    for server, run in ((worker, "r4"), (other, "r5")):  # sent again: replayed, never re-run
        replayed = await server.post({**body, "runId": run})
        results = [e["content"] for e in replayed if e["type"] == "TOOL_CALL_RESULT"]
        assert results == ["deleted a.txt"]
    assert effects.count("delete_file") == 1


async def test_an_answer_given_while_the_store_is_down_runs_once_when_it_is_back(
    deployment: Deployment,
) -> None:
    effects = SideEffects()
    model = scripted([FunctionCallContent("c1", "delete_file", {"path": "a.txt"})], "Deleted.")
    worker = agui_server(model, tools=[effects.delete_file()], approval_store=deployment.store())
    first = await worker.run(user("delete a.txt"))
    (interrupt,) = interrupts(first)
    assert not issued_without_an_epoch(interrupt)  # the store was up: the epoch is in it
    body = run_input(
        user("delete a.txt"), *history_from(first), run="r2", resume=[approve(interrupt)]
    )
    # The answer reaches another worker, which opens the store while it is down (an open
    # SQLite connection keeps writing to a file made read-only under it, and a directory
    # holding the -wal and -shm files of an open one is no fault): the first worker stopped.
    await deployment.made[0].aclose()
    other = agui_server(model, tools=[effects.delete_file()], approval_store=deployment.store())
    with deployment.down():
        refused = await other.post(body)
        assert refused[-1]["type"] == "RUN_ERROR"
        error = refused[-1]
        if error["code"] == "APPROVAL_STORE_UNAVAILABLE":
            assert error["retryAfter"] == 2
        else:  # a file this process may not write: fix it, then send the same answer
            assert error["code"] == "APPROVAL_STORE_MISCONFIGURED" and "retryAfter" not in error
    assert effects.count("delete_file") == 0
    resumed = await other.post({**body, "runId": "r3"})
    if not deployment.keeps_records:
        refused_before_the_run(resumed, "APPROVAL_STORE_RESET")
        assert effects.count("delete_file") == 0
        return
    assert outcome(resumed) == {"type": "success"}
    await worker.post({**body, "runId": "r4"})
    assert effects.count("delete_file") == 1


async def test_a_memory_store_is_never_down_and_pauses_with_its_epoch() -> None:
    effects = SideEffects()
    model = scripted([FunctionCallContent("c1", "delete_file", {"path": "a.txt"})], "Deleted.")
    worker = agui_server(
        model, tools=[effects.delete_file()], approval_store=InMemoryApprovalStore()
    )
    await start_up(worker.app)
    first = await worker.run(user("delete a.txt"))
    (interrupt,) = interrupts(first)
    assert not issued_without_an_epoch(interrupt)
    body = run_input(
        user("delete a.txt"), *history_from(first), run="r2", resume=[approve(interrupt)]
    )
    assert outcome(await worker.post(body)) == {"type": "success"}
    await worker.post({**body, "runId": "r3"})
    assert effects.count("delete_file") == 1


async def test_a_store_that_refuses_the_server_at_start_fails_its_startup(tmp_path: Path) -> None:
    """A deployment error is said at deployment: a file the server may not write fails the
    ASGI lifespan, naming the file."""
    folder = tmp_path / "state"
    folder.mkdir()
    path = folder / "approvals.db"
    await aged(SQLiteApprovalStore(path))
    store = SQLiteApprovalStore(path)
    worker = agui_server(scripted("hi"), approval_store=store)
    with read_only(path):
        sent = await start_up(worker.app)
    assert sent[0]["type"] == "lifespan.startup.failed"
    assert str(path) in sent[0]["message"] and "writable" in sent[0]["message"]
    await store.aclose()


async def test_a_store_down_at_start_is_named_in_the_log_without_its_password(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The operator reads at start which store is down (its URL, the password hidden), and
    that pauses are still offered."""
    port = _free_port()
    url = f"redis://:s3cret-pw@127.0.0.1:{port}/0"
    worker = agui_server(scripted("hi"), approval_store=RedisApprovalStore(url, timeout=0.3))
    with caplog.at_level("WARNING", logger="agui_chat.server"):
        started = await start_up(worker.app)
    assert [m["type"] for m in started] == [
        "lifespan.startup.complete",
        "lifespan.shutdown.complete",
    ]
    (line,) = [r.getMessage() for r in caplog.records if "cannot be reached" in r.getMessage()]
    assert f"redis://:***@127.0.0.1:{port}/0" in line
    assert "pauses are still offered" in line
    assert "s3cret-pw" not in caplog.text
    await worker.app.approval_store.aclose()
