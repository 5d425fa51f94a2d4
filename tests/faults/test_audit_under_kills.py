"""The fault lane: the audit trail (0.4) under ``kill -9``. A decision's record is written in
the same atomic store step as its claim's "started" mark, and its outcome with the kept
result (``stores/_base.py``, ``agui/server/_claims.py``); killed workers must not break that.

Two uvicorn workers share one store (a SQLite file; a Redis that persists; a PostgreSQL
database). A worker is held exactly where a test kills it (``Deployment.holding``: a file the
worker polls, so the kill never misses its window):

- killed after its claim, before the tool's start: the trail holds no record for the call
  (nothing ran); the same answer, sent again to the other worker, waits out the dead claim's
  lease, runs the tool once, and leaves exactly one record: approved, ``ran``, with the
  result's digest;
- killed while the tool runs (after its started mark): the record is there, without an
  outcome, while the tool runs and after the kill; the answer sent again replays the lost
  result and runs nothing; the record stays one;
- the same answers sent to both workers at once: each approved call runs once and has one
  record (``ran``), each rejected one runs never and has one record (``rejected``).

Every test ends with the chain verified (``verify_audit()``: as many decisions as records)
and every answer replayed at every worker, which adds no record and runs nothing. Side
effects are lines the tool fsyncs to a file per thread, so each count is exact."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from fault_lane import (
    REJECTED,
    Case,
    Deployment,
    check_at_most_once,
    deployed,
    pause_all,
    post,
    replay_everywhere,
    send_all,
    when,
)

from agui_chat.agui.server._claims import LOST_RESULT
from agui_chat.consent._audit import result_sha256
from agui_chat.stores import AuditRecord, store_from_url

HELD = "RESUME_CLAIM_HELD"


@pytest.fixture(params=["sqlite", "redis", "postgres"])
async def deployment(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Deployment]:
    async with deployed(request, tmp_path, count=2) as running:
        yield running


async def trail(deployment: Deployment) -> list[AuditRecord]:
    """Every record of the deployment's store, read by a store of the test's own."""
    store = store_from_url(deployment.env["STORE_URL"])
    try:
        return [record async for record in store.audit()]
    finally:
        await store.aclose()


async def verified(deployment: Deployment) -> int:
    """``verify_audit()`` of the deployment's store: the decisions it checked."""
    store = store_from_url(deployment.env["STORE_URL"])
    try:
        return await store.verify_audit()
    finally:
        await store.aclose()


async def records_of(deployment: Deployment, case: Case) -> list[AuditRecord]:
    return [r for r in await trail(deployment) if r.thread_id == case.thread]


def check_decision(record: AuditRecord, case: Case) -> None:
    """``record`` is the decision about ``case``'s one call, ``pay(invoice=<n>)``."""
    assert (record.thread_id, record.call_id, record.tool) == (case.thread, "c1", "pay"), record
    assert record.arguments == {"invoice": case.invoice}, record
    assert record.decision == ("approved" if case.approved else "rejected"), record
    assert record.run_id == "r2", record  # the resume's run, not the one that paused
    assert record.approver is None and record.requester is None, record  # no identity here


async def check_the_trail(deployment: Deployment, cases: list[Case]) -> list[AuditRecord]:
    """One record per case and none besides; the chain verifies, counting them all."""
    records = await trail(deployment)
    assert sorted(r.thread_id or "" for r in records) == sorted(c.thread for c in cases), records
    assert await verified(deployment) == len(records)
    return records


async def test_a_worker_killed_after_its_claim_leaves_no_record_and_the_answer_runs_once(
    deployment: Deployment, client: httpx.AsyncClient
) -> None:
    (case,) = await pause_all(deployment, client, 1, reject_every=2)
    victim, other = deployment.workers
    victim_pid, other_pid = victim.pid, other.pid  # a killed worker forgets its pid
    with deployment.holding(case.thread, "claim"):
        sending = asyncio.ensure_future(post(client, victim.url, case.body))
        try:
            await when(lambda: bool(deployment.lines(case.thread, "marks")), "the claim")
            assert await records_of(deployment, case) == []  # claimed, not started: none
            victim.kill()
            assert await sending == []  # cut: the client got nothing
        finally:
            sending.cancel()
    assert deployment.lines(case.thread, "marks") == [("claimed", victim_pid)]
    assert deployment.runs(case.thread) == []
    assert await records_of(deployment, case) == []  # no record of a run that did not happen

    await send_all(deployment, client, [case], copies=1)  # to the other worker only
    assert case.outcome == f"paid invoice {case.invoice}", case
    assert set(case.codes) <= {HELD}, case  # at most, the dead claim's lease waited out
    assert deployment.lines(case.thread, "effects") == [(f"paid {case.invoice}", other_pid)]
    (record,) = await check_the_trail(deployment, [case])
    check_decision(record, case)
    assert record.outcome == "ran" and record.result_sha256 == result_sha256(case.outcome)

    await replay_everywhere(deployment, client, [case])
    assert await check_the_trail(deployment, [case]) == [record]


async def test_a_worker_killed_while_its_tool_runs_leaves_one_record_and_runs_nothing_again(
    deployment: Deployment, client: httpx.AsyncClient
) -> None:
    (case,) = await pause_all(deployment, client, 1, reject_every=2)
    victim = deployment.workers[0]
    victim_pid = victim.pid
    with deployment.holding(case.thread, "tool"):
        sending = asyncio.ensure_future(post(client, victim.url, case.body))
        try:
            await when(lambda: bool(deployment.runs(case.thread)), "the tool run")
            (running,) = await records_of(deployment, case)  # no run without its record
            check_decision(running, case)
            assert running.outcome is None, running
            victim.kill()
            assert await sending == []
        finally:
            sending.cancel()
    assert deployment.lines(case.thread, "effects") == [(f"paid {case.invoice}", victim_pid)]
    (record,) = await check_the_trail(deployment, [case])
    assert record == running  # the kill left it as it was: started, no outcome

    await send_all(deployment, client, [case], copies=1)
    assert case.outcome == LOST_RESULT, case
    assert set(case.codes) <= {"RESUME_IN_PROGRESS"}, case  # the dead run's lease waited out
    assert deployment.runs(case.thread) == [f"paid {case.invoice}"]  # never run again
    await still_the_one(deployment, case, running)

    await replay_everywhere(deployment, client, [case])
    assert deployment.runs(case.thread) == [f"paid {case.invoice}"]
    await still_the_one(deployment, case, running)


async def still_the_one(deployment: Deployment, case: Case, running: AuditRecord) -> None:
    """The trail holds ``running``, the record of ``case``'s lost run, and nothing else: its
    outcome ``lost``, written once by the worker that first found the run lost (the one that
    ran the tool died), never ``ran`` or ``failed``."""
    (record,) = await check_the_trail(deployment, [case])
    assert (record.seq, record.hash, record.decision) == (running.seq, running.hash, "approved")
    assert record.outcome == "lost" and record.result_sha256 == result_sha256(LOST_RESULT)


async def test_two_workers_answering_the_same_approvals_at_once_run_and_record_each_once(
    deployment: Deployment, client: httpx.AsyncClient
) -> None:
    cases = await pause_all(deployment, client, 6, reject_every=3)
    await send_all(deployment, client, cases, copies=2)  # every answer to both at once
    check_at_most_once(deployment, cases)
    codes = {code for case in cases for code in case.codes}
    assert codes & {HELD, "RESUME_IN_PROGRESS"}, codes  # the copies did meet
    records = {r.thread_id: r for r in await check_the_trail(deployment, cases)}
    for case in cases:
        record = records[case.thread]
        check_decision(record, case)
        if case.approved:
            assert case.outcome == f"paid invoice {case.invoice}", case
            assert deployment.runs(case.thread) == [f"paid {case.invoice}"]
            assert record.outcome == "ran" and record.result_sha256 == result_sha256(case.outcome)
        else:
            assert case.outcome == REJECTED and deployment.runs(case.thread) == []
            assert record.outcome is None and record.result_sha256 is None, record

    await replay_everywhere(deployment, client, cases)
    assert {r.thread_id: r for r in await check_the_trail(deployment, cases)} == records
