"""Exactly once beyond one process, over real HTTP: two uvicorn worker processes with the same
signing key and the same store (a SQLite file; a real Redis; a real PostgreSQL), every side
effect a line that whichever process ran it appends to one file.

- 30 concurrent copies of one approval, split across both workers: the tool runs once;
- both workers restarted, the same approval sent again: nothing runs, and the stream
  carries the result kept the first time;
- a worker killed in the middle of an approved tool run: no second run anywhere;
- a worker killed after the claim, before the tool started: the claim lapses after its
  lease and the honest resume then runs the tool once;
- agent A's token at agent B (same key, same store, another audience): nothing runs."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from robustness_http import approve, history_from, run_input, sse_events, user

from agui_chat.agui.server._claims import LOST_RESULT
from postgres_server import PostgresServer
from redis_server import RedisServer
from uvicorn_worker import UvicornWorker

HERE = Path(__file__).parent
KEY = "multi-process-signing-key-0123456789"
BOUND = 30.0


def new_worker(env: dict[str, str]) -> UvicornWorker:
    """``uvicorn store_worker:app`` in a child process on its own port."""
    return UvicornWorker("store_worker:app", HERE, env)


class Deployment:
    """Two workers of one agent (and, on demand, a worker of another agent), one store."""

    def __init__(self, store_url: str, effects: Path) -> None:
        self.effects = effects
        self.env = {
            "AGUI_CHAT_SIGNING_KEY": KEY,
            "STORE_URL": store_url,
            "EFFECTS_DIR": str(effects),
            "LEASE_SECONDS": "1",
            "HANG": "1",
        }
        self.workers = [new_worker(self.env), new_worker(self.env)]
        self.others: list[UvicornWorker] = []
        self.threads = 0

    def start(self) -> None:
        for worker in self.workers:
            worker.start()
        for worker in self.workers:
            worker.wait_ready()

    def other_agent(self) -> UvicornWorker:
        other = new_worker({**self.env, "AGUI_CHAT_AUDIENCE": "agent-b"})
        self.others.append(other)
        other.start()
        other.wait_ready()
        return other

    def stop(self) -> None:
        for worker in [*self.workers, *self.others]:
            worker.stop()
        self.others.clear()

    def thread(self) -> str:
        self.threads += 1
        return f"thread-{self.threads}"

    def effects_of(self, thread: str) -> list[str]:
        log = self.effects / f"{thread}.log"
        lines = log.read_text().splitlines() if log.exists() else []
        return [line.rsplit(" pid=", 1)[0] for line in lines]


@pytest.fixture(scope="module", params=["sqlite", "redis", "postgres"])
def deployment(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Deployment]:
    """One deployment per store for the module (each test uses threads of its own); a test
    that stops a worker starts it again."""
    tmp_path = tmp_path_factory.mktemp(f"deployment-{request.param}")
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path}/approvals.db"
    elif request.param == "postgres":
        postgres: PostgresServer = request.getfixturevalue("postgres_server_process")
        url = f"{postgres.url}?application_name=deployment"  # the default table, made by a worker
    else:
        redis: RedisServer = request.getfixturevalue("redis_server_process")
        redis.flush()
        url = redis.url
    effects = tmp_path / "effects"
    effects.mkdir()
    running = Deployment(url, effects)
    try:
        running.start()
        yield running
    finally:
        running.stop()


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=BOUND) as client:
        yield client


async def post(http: httpx.AsyncClient, url: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    response = await http.post(url, json=body, headers={"accept": "text/event-stream"})
    assert response.status_code == 200, response.text
    return sse_events(response.content)


async def pause(
    http: httpx.AsyncClient, url: str, thread: str, ask: str = "delete a.txt"
) -> dict[str, Any]:
    """Pause on ``url``; the body that approves the call (any worker may take it)."""
    events = await post(http, url, run_input(user(ask), thread=thread))
    finished = events[-1]
    assert finished["type"] == "RUN_FINISHED", events
    (interrupt,) = finished["outcome"]["interrupts"]
    return run_input(
        user(ask), *history_from(events), thread=thread, run="r2", resume=[approve(interrupt)]
    )


async def kill_when(
    deployment: Deployment,
    worker: UvicornWorker,
    request: Awaitable[Any],
    thread: str,
    effects: list[str],
) -> None:
    """Send ``request``; SIGKILL ``worker`` as soon as ``thread``'s effects are ``effects``."""
    sent = asyncio.ensure_future(request)
    deadline = time.monotonic() + BOUND
    while deployment.effects_of(thread) != effects:
        assert time.monotonic() < deadline, f"the worker never got to {effects}"
        await asyncio.sleep(0.05)
    worker.kill()
    await asyncio.gather(sent, return_exceptions=True)


def results(events: list[dict[str, Any]]) -> list[str]:
    return [e["content"] for e in events if e["type"] == "TOOL_CALL_RESULT"]


def codes(events: list[dict[str, Any]]) -> list[str]:
    return [e.get("code", "") for e in events if e["type"] == "RUN_ERROR"]


async def test_30_concurrent_copies_across_two_workers_run_the_tool_once_and_restarts_replay(
    deployment: Deployment, http: httpx.AsyncClient
) -> None:
    thread = deployment.thread()
    one, two = deployment.workers
    body = await pause(http, one.url, thread)
    urls = [one.url, two.url] * 15
    answers = await asyncio.gather(*(post(http, url, body) for url in urls))
    assert deployment.effects_of(thread) == ["delete a.txt"]
    for events in answers:
        # Each copy either ran the tool, replayed its kept result, or (while the tool ran)
        # was told to send it again after a wait: never a second run.
        assert results(events) == ["deleted a.txt"] or codes(events) in (
            ["RESUME_IN_PROGRESS"],
            ["RESUME_CLAIM_HELD"],
        ), events
    assert sum(results(a) == ["deleted a.txt"] for a in answers) >= 1

    for worker in deployment.workers:
        worker.restart()
    for worker in deployment.workers:
        again = await post(http, worker.url, body)
        assert results(again) == ["deleted a.txt"], again
        assert again[-1]["type"] == "RUN_FINISHED"
    assert deployment.effects_of(thread) == ["delete a.txt"]


async def test_a_worker_killed_while_the_tool_runs_leaves_no_second_run_anywhere(
    deployment: Deployment, http: httpx.AsyncClient
) -> None:
    thread = deployment.thread()
    one, two = deployment.workers
    body = await pause(http, one.url, thread, ask="delete a.txt slowly")
    await kill_when(deployment, one, post(http, one.url, body), thread, ["started a.txt"])
    await asyncio.sleep(1.5)  # past the claim lease: a started claim must not lapse
    # It is lost (issue 26): the call replays as lost, never runs again, and the run goes on.
    elsewhere = await post(http, two.url, body)
    assert results(elsewhere) == [LOST_RESULT], elsewhere
    one.start()
    one.wait_ready()
    again = await post(http, one.url, body)
    assert results(again) == [LOST_RESULT], again
    assert deployment.effects_of(thread) == ["started a.txt"]


async def test_a_worker_killed_mid_tool_never_strands_the_other_calls_of_its_pause(
    deployment: Deployment, http: httpx.AsyncClient
) -> None:
    """Issue 26 item 1 across processes: a pause of three calls, the worker killed while the
    first one's tool runs. Past its lease, the other worker replays the first as lost and
    runs the two that never started, once each; sent again, everything replays."""
    thread = deployment.thread()
    one, two = deployment.workers
    ask = "delete three files, a.txt slowly"
    events = await post(http, one.url, run_input(user(ask), thread=thread))
    found = events[-1]["outcome"]["interrupts"]
    assert len(found) == 3
    body = run_input(
        user(ask), *history_from(events), thread=thread, run="r2",
        resume=[approve(i) for i in found],
    )  # fmt: skip
    try:
        await kill_when(deployment, one, post(http, one.url, body), thread, ["started a.txt"])
        await asyncio.sleep(1.5)  # past the dead worker's lease
        resumed = await post(http, two.url, body)
        assert results(resumed) == [LOST_RESULT, "deleted b.txt", "deleted c.txt"], resumed
        again = await post(http, two.url, {**body, "runId": "r3"})
        assert results(again) == results(resumed), again
        assert deployment.effects_of(thread) == ["started a.txt", "delete b.txt", "delete c.txt"]
    finally:
        one.start()
        one.wait_ready()


async def test_a_store_that_lost_its_records_never_runs_a_used_approval_again(
    deployment: Deployment, http: httpx.AsyncClient, request: pytest.FixtureRequest
) -> None:
    """Issue 26 item 3 across processes: an approval used, then the store loses everything
    (Redis killed with ``kill -9`` and started without its data; the SQLite file deleted and
    made again by restarted workers; PostgreSQL's tables dropped under the running workers).
    The same answer, at either worker: refused ``APPROVAL_STORE_RESET`` (ask again), never
    run again."""
    thread = deployment.thread()
    one, two = deployment.workers
    body = await pause(http, one.url, thread)
    assert results(await post(http, one.url, body)) == ["deleted a.txt"]
    if deployment.env["STORE_URL"].startswith("redis"):
        redis: RedisServer = request.getfixturevalue("redis_server_process")
        redis.stop(kill=True)  # no persistence: it comes back empty
        redis.start()
    elif deployment.env["STORE_URL"].startswith("postgresql"):
        url = deployment.env["STORE_URL"].split("?")[0]
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as db:
            await db.execute("DROP TABLE agui_chat_approvals, agui_chat_approvals_meta")
    else:
        for worker in deployment.workers:
            worker.stop()
        path = Path(deployment.env["STORE_URL"].removeprefix("sqlite:///"))
        for leftover in (
            path,
            path.with_name(path.name + "-wal"),
            path.with_name(path.name + "-shm"),
        ):
            leftover.unlink(missing_ok=True)
        for worker in deployment.workers:
            worker.start()
        for worker in deployment.workers:
            worker.wait_ready()
    for worker, run in ((one, "r3"), (two, "r4"), (one, "r5")):
        again = await post(http, worker.url, {**body, "runId": run})
        assert codes(again) == ["APPROVAL_STORE_RESET"], again
    assert deployment.effects_of(thread) == ["delete a.txt"]


async def test_a_worker_killed_after_the_claim_before_the_tool_leaves_the_answer_usable(
    deployment: Deployment, http: httpx.AsyncClient
) -> None:
    thread = deployment.thread()
    one, two = deployment.workers
    body = await pause(http, one.url, thread, ask="delete a.txt, after a hang")
    # Killed once the claim is made and before any tool started: nothing released it.
    await kill_when(deployment, one, post(http, one.url, body), thread, ["hanging"])
    await asyncio.sleep(1.5)  # the lease (1 s in these workers) runs out
    honest = {**body, "messages": [user("delete a.txt"), *body["messages"][1:]]}
    events = await post(http, two.url, honest)
    assert results(events) == ["deleted a.txt"], events
    assert deployment.effects_of(thread) == ["hanging", "delete a.txt"]
    one.start()
    one.wait_ready()


async def test_agent_a_token_at_agent_b_runs_nothing(
    deployment: Deployment, http: httpx.AsyncClient
) -> None:
    thread = deployment.thread()
    body = await pause(http, deployment.workers[0].url, thread)
    agent_b = deployment.other_agent()
    bare = {**body, "messages": [user("hi")]}  # only a user message, and A's approval
    try:
        for attempt in (body, bare):
            events = await post(http, agent_b.url, attempt)
            assert codes(events) == ["APPROVAL_AUDIENCE_MISMATCH"], events
    finally:
        agent_b.stop()
    assert deployment.effects_of(thread) == []
