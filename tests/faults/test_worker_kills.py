"""The fault lane (``tests/faults``, issue 26 item 7): workers killed with ``kill -9``.

Four uvicorn worker processes share one store (a SQLite file; a Redis that persists; a
PostgreSQL database); sixteen approvals (four of them rejections) are answered at once,
each answer sent to two workers at a time and again, round after round, to other workers,
as a client retries. Meanwhile the worker that holds the first claim is killed before its
tool starts ("mid-claim"), and the worker running the first tool is killed while it runs
("mid-tool"); both are started again. Every approved call then ran at most once, exactly
once where its result came back, the mid-claim victim's exactly once elsewhere, the
mid-tool victim's once and replayed as lost; no rejected call ran; every refusal met was
a documented code with its wait. Side effects are lines the tool fsyncs to a file per
thread, so each count is exact across processes.

The whole lane (``tests/faults``) runs in 1.5 to 2.5 minutes on two shared CPUs; it needs
``redis-server`` and PostgreSQL (``make test-deps``) and, for the disk faults, root."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from fault_lane import (
    REJECTED,
    Deployment,
    check_at_most_once,
    deployed,
    first_line,
    pause_all,
    replay_everywhere,
    send_all,
    when,
)

from agui_chat.agui.server._claims import LOST_RESULT


@pytest.fixture(params=["sqlite", "redis", "postgres"])
async def deployment(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Deployment]:
    async with deployed(request, tmp_path) as running:
        yield running


async def restart_the_dead(deployment: Deployment) -> None:
    for worker in deployment.workers:
        if worker.process is None:
            worker.start()
    await asyncio.gather(*(asyncio.to_thread(w.wait_ready) for w in deployment.workers))


async def test_workers_killed_mid_claim_and_mid_tool_run_no_approval_twice(
    deployment: Deployment, client: httpx.AsyncClient
) -> None:
    cases = await pause_all(deployment, client, 16)
    storm = asyncio.ensure_future(send_all(deployment, client, cases))
    try:
        everyone = {w.pid for w in deployment.workers if w.pid is not None}
        await when(lambda: bool(first_line(deployment, cases, "marks", everyone)), "a claim")
        found = first_line(deployment, cases, "marks", everyone)
        assert found is not None
        claimed, claimant = found
        assert deployment.runs(claimed.thread) == []  # its tool has not started
        deployment.by_pid(claimant).kill()

        alive = {w.pid for w in deployment.live() if w.pid is not None}
        await when(lambda: bool(first_line(deployment, cases, "effects", alive)), "a tool run")
        found = first_line(deployment, cases, "effects", alive)
        assert found is not None
        running, runner = found
        deployment.by_pid(runner).kill()  # the tool waits 0.6 s before it returns

        await restart_the_dead(deployment)
        await storm
    finally:
        storm.cancel()

    check_at_most_once(deployment, cases)
    if claimed.approved:  # run once, by another worker, once the dead claim's lease ran out
        assert claimed.outcome == f"paid invoice {claimed.invoice}", claimed
        ((_, pid),) = deployment.lines(claimed.thread, "effects")
        assert pid != claimant
    else:
        assert claimed.outcome == REJECTED and deployment.runs(claimed.thread) == []
    assert running.outcome == LOST_RESULT, running  # it ran, and never again
    assert deployment.runs(running.thread) == [f"paid {running.invoice}"]
    codes = {code for case in cases for code in case.codes}
    assert codes & {"RESUME_CLAIM_HELD", "RESUME_IN_PROGRESS"}, codes  # copies were held
    await replay_everywhere(deployment, client, cases)
