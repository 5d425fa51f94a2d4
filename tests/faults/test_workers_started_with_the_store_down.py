"""The fault lane: four workers start while their store is down, pause approvals (the tokens
carry the second they were issued, not the store's epoch), and are answered; the store comes
back with its records, and every approved call runs exactly once, every rejected one never,
no answer is refused as a reset ("ask again"), and every answer sent again to every worker
replays what it got. Redis with its append-only file and PostgreSQL, stopped before the
workers start and started again under them; the SQLite disk case is in test_disk_faults.

Each store had its records (and its epoch) for an hour before, as a deployed store has: an
answer binds to an epoch made before its token, never to one made after it."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
from fault_lane import (
    RESET,
    Deployment,
    check_at_most_once,
    new_database,
    pause_all,
    replay_everywhere,
    send_all,
)

from agui_chat.stores import ApprovalStore, PostgresApprovalStore, RedisApprovalStore
from postgres_server import PostgresServer
from redis_server import RedisServer

UNAVAILABLE = "APPROVAL_STORE_UNAVAILABLE"


async def aged(store: ApprovalStore) -> None:
    """Make the store's epoch an hour old."""
    await store.epoch()
    await store.aclose()


async def started_down_then_back(
    deployment: Deployment, client: httpx.AsyncClient, back: object
) -> None:
    deployment.start()  # the store is down: each worker warns, and starts
    cases = await pause_all(deployment, client, 8)
    await send_all(deployment, client, cases, rounds=1, settle=False)
    for case in cases:  # refused with a wait while it is down; nothing ran
        assert case.outcome is None and UNAVAILABLE in case.codes, case
        assert deployment.runs(case.thread) == [], case
    assert callable(back)
    back()
    await send_all(deployment, client, cases)
    check_at_most_once(deployment, cases)
    assert all(c.outcome != RESET for c in cases), cases  # no answer the person gave is lost
    assert all(deployment.runs(c.thread) == [f"paid {c.invoice}"] for c in cases if c.approved)
    await replay_everywhere(deployment, client, cases)


async def test_workers_started_while_redis_is_down_run_every_answer_once_when_it_is_back(
    persistent_redis: RedisServer, tmp_path: Path, client: httpx.AsyncClient
) -> None:
    persistent_redis.flush()
    await aged(RedisApprovalStore(persistent_redis.url, clock=lambda: time.time() - 3600))
    persistent_redis.stop()  # its append-only file keeps the epoch
    effects = tmp_path / "effects"
    effects.mkdir()
    deployment = Deployment(persistent_redis.url, effects)
    try:
        await started_down_then_back(deployment, client, persistent_redis.start)
    finally:
        deployment.stop()
        if persistent_redis._process is None:
            persistent_redis.start()


async def test_workers_started_while_postgres_is_down_run_every_answer_once_when_it_is_back(
    crashable_postgres: PostgresServer, tmp_path: Path, client: httpx.AsyncClient
) -> None:
    url = await new_database(crashable_postgres)
    await aged(PostgresApprovalStore(url, clock=lambda: time.time() - 3600))
    crashable_postgres.stop()
    effects = tmp_path / "effects"
    effects.mkdir()
    deployment = Deployment(url, effects)
    try:
        await started_down_then_back(deployment, client, crashable_postgres.start)
    finally:
        deployment.stop()
        if not crashable_postgres.running:
            crashable_postgres.start()
