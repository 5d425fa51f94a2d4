"""The fault lane (``tests/faults``, issue 26 item 7): the store killed with ``kill -9`` and
started again, while four workers resume approvals on it.

- Redis with persistence (``appendonly yes``, ``appendfsync always``) and PostgreSQL (the
  postmaster and all its processes at once: WAL not yet written out is lost) come back
  with their records: nothing is refused for good, every approved call ran at most once
  and exactly once where its result came back; a call whose tool ran while the store was
  down replays as lost.
- Redis without persistence comes back empty, with another epoch: every answer, used or
  not, is refused ``APPROVAL_STORE_RESET`` (ask again) at every worker, nothing runs
  again, and an approval asked after the restart runs once.
- One approval, two workers: PostgreSQL killed after a claim and before its tool started
  (the claim's commit does not wait for its WAL, docs/stores.md): the claim may be gone,
  and the answer then runs once; killed with the worker running the tool (the "started"
  mark's commit waits for its WAL, and with it the claim's): the call replays as lost and
  never runs again; killed right after a result was kept (its commit does not wait
  either): the call replays as lost, never runs again. The cluster's WAL writer is stopped
  (``SIGSTOP``) before the answer is sent, so a commit that did not wait for its WAL is
  lost with the crash, as with a power loss: the second test fails if "started" does not
  wait (checked by hand: with ``synchronous_commit`` off for it, the tool ran twice)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from fault_lane import (
    RESET,
    Case,
    Deployment,
    check_at_most_once,
    first_line,
    new_database,
    pause_all,
    post,
    read,
    replay_everywhere,
    send_all,
    when,
)

from agui_chat.agui.server._claims import LOST_RESULT
from postgres_server import PostgresServer
from redis_server import RedisServer


@pytest.fixture
def effects(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "effects"
    folder.mkdir()
    yield folder


async def deploy(url: str, effects: Path, workers: int = 4) -> Deployment:
    running = Deployment(url, effects, count=workers)
    running.start()
    return running


def a_tool_ran(deployment: Deployment, cases: list[Case]) -> bool:
    everyone = {w.pid for w in deployment.workers if w.pid is not None}
    return first_line(deployment, cases, "effects", everyone) is not None


def a_claim_was_made(deployment: Deployment, cases: list[Case]) -> bool:
    everyone = {w.pid for w in deployment.workers if w.pid is not None}
    return first_line(deployment, cases, "marks", everyone) is not None


async def crash_and_recover(
    deployment: Deployment,
    client: httpx.AsyncClient,
    cases: list[Case],
    crash: Callable[[], None],
    recover: Callable[[], None],
) -> None:
    """Answer every case; once a tool runs, ``crash()`` the store, and ``recover()`` it a
    second later; every case then settles (bounded)."""
    storm = asyncio.ensure_future(send_all(deployment, client, cases))
    try:
        await when(lambda: a_tool_ran(deployment, cases), "a tool run")
        crash()
        await asyncio.sleep(1)
        await asyncio.to_thread(recover)
        await storm
    finally:
        storm.cancel()


@pytest.mark.parametrize("store", ["redis", "postgres"])
async def test_a_store_that_keeps_its_data_killed_mid_storm_runs_no_approval_twice(
    store: str, request: pytest.FixtureRequest, effects: Path, client: httpx.AsyncClient
) -> None:
    crash: Callable[[], None]
    if store == "redis":
        redis: RedisServer = request.getfixturevalue("persistent_redis")
        redis.flush()
        url, crash, recover = redis.url, lambda: redis.stop(kill=True), redis.start
    else:
        postgres: PostgresServer = request.getfixturevalue("crashable_postgres")
        url, crash, recover = await new_database(postgres), postgres.kill, postgres.start
    deployment = await deploy(url, effects)
    try:
        cases = await pause_all(deployment, client, 12)
        await crash_and_recover(deployment, client, cases, crash, recover)
        check_at_most_once(deployment, cases)
        assert all(c.outcome != RESET for c in cases), cases  # its records, its epoch, kept
        await replay_everywhere(deployment, client, cases, results_may_be_lost=True)
    finally:
        deployment.stop()


async def test_a_redis_without_persistence_killed_mid_storm_refuses_every_answer_as_reset(
    volatile_redis: RedisServer, effects: Path, client: httpx.AsyncClient
) -> None:
    volatile_redis.flush()
    deployment = await deploy(volatile_redis.url, effects)
    try:
        cases = await pause_all(deployment, client, 12)
        await crash_and_recover(
            deployment, client, cases, lambda: volatile_redis.stop(kill=True), volatile_redis.start
        )
        check_at_most_once(deployment, cases)
        assert any(c.outcome == RESET for c in cases), cases
        ran = {c.thread: deployment.runs(c.thread) for c in cases}
        for case in cases:  # used or not: the store cannot tell, so it is never run
            for worker in deployment.workers:
                again = Case(case.thread, case.invoice, case.approved, case.body)
                assert read(again, await post(client, worker.url, case.body)), again
                assert again.outcome == RESET and again.codes == [RESET], again
        assert {c.thread: deployment.runs(c.thread) for c in cases} == ran
        (fresh,) = await pause_all(deployment, client, 1)  # asked again after the restart
        await send_all(deployment, client, [fresh])
        assert fresh.outcome == f"paid invoice {fresh.invoice}", fresh
        assert deployment.runs(fresh.thread) == [f"paid {fresh.invoice}"]
    finally:
        deployment.stop()


async def test_postgres_killed_after_a_claim_before_its_tool_runs_it_once(
    crashable_postgres: PostgresServer, effects: Path, client: httpx.AsyncClient
) -> None:
    deployment = await deploy(await new_database(crashable_postgres), effects, workers=2)
    try:
        (case,) = await pause_all(deployment, client, 1, reject_every=2)
        crashable_postgres.stop_wal_writer()
        storm = asyncio.ensure_future(send_all(deployment, client, [case]))
        try:
            await when(lambda: a_claim_was_made(deployment, [case]), "the claim")
            assert deployment.runs(case.thread) == []
            crashable_postgres.kill()  # the worker waits 0.6 s before its tool starts
            await asyncio.to_thread(crashable_postgres.start)
            await storm
        finally:
            storm.cancel()
        assert case.outcome == f"paid invoice {case.invoice}", case
        assert deployment.runs(case.thread) == [f"paid {case.invoice}"]
        await replay_everywhere(deployment, client, [case])
    finally:
        deployment.stop()


async def test_postgres_and_the_worker_killed_while_the_tool_runs_never_run_it_again(
    crashable_postgres: PostgresServer, effects: Path, client: httpx.AsyncClient
) -> None:
    """The database and the worker running the tool die at once (the host they share lost
    its power): the tool's "started" mark was on disk before the tool started, so the call
    replays as lost. (Were that commit not to wait for its WAL, the claim would come back
    unstarted or not at all, and the answer would run the tool again.)"""
    deployment = await deploy(await new_database(crashable_postgres), effects, workers=2)
    try:
        (case,) = await pause_all(deployment, client, 1, reject_every=2)
        crashable_postgres.stop_wal_writer()
        storm = asyncio.ensure_future(send_all(deployment, client, [case]))
        try:
            await when(lambda: a_tool_ran(deployment, [case]), "the tool run")
            ((_, runner),) = deployment.lines(case.thread, "effects")
            crashable_postgres.kill()  # the tool waits 0.6 s before it returns
            deployment.by_pid(runner).kill()
            await asyncio.to_thread(crashable_postgres.start)
            deployment.start()
            await storm
        finally:
            storm.cancel()
        assert case.outcome == LOST_RESULT, case
        assert deployment.runs(case.thread) == [f"paid {case.invoice}"]
        await replay_everywhere(deployment, client, [case])
    finally:
        deployment.stop()


async def test_postgres_killed_after_a_result_was_kept_never_runs_the_call_again(
    crashable_postgres: PostgresServer, effects: Path, client: httpx.AsyncClient
) -> None:
    """A result's commit does not wait for its WAL (docs/stores.md): PostgreSQL killed right
    after a run finished may lose it, and the call then replays as lost, never run again."""
    deployment = await deploy(await new_database(crashable_postgres), effects, workers=2)
    try:
        (case,) = await pause_all(deployment, client, 1, reject_every=2)
        crashable_postgres.stop_wal_writer()
        await send_all(deployment, client, [case])
        assert case.outcome == f"paid invoice {case.invoice}", case
        crashable_postgres.kill()
        await asyncio.to_thread(crashable_postgres.start)
        await replay_everywhere(deployment, client, [case], results_may_be_lost=True)
        assert deployment.runs(case.thread) == [f"paid {case.invoice}"]
    finally:
        deployment.stop()
