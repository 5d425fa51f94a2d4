"""The fault lane's harness: a deployment of worker processes (``fault_worker``) on one store,
many approvals paused and answered at once across the workers, retried as a client would
until each settles, and the checks every fault test makes:

- each approved call's side effect happened at most once, and exactly once where its
  result came back (``paid invoice <n>``) rather than lost (``LOST_RESULT``) or refused;
- no call ran that was not approved (a rejected call, a thread never answered);
- every refusal is one of the documented codes, with ``retryAfter`` where it says "wait"."""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from agui_chat.agui.server._claims import LOST_RESULT
from agui_streams import approve, history_from, reject, run_input, sse_events, user
from postgres_server import PostgresServer
from redis_server import RedisServer
from uvicorn_worker import UvicornWorker

HERE = Path(__file__).parent
KEY = "fault-lane-signing-key-0123456789abcdef"
BOUND = 30.0  # seconds any one wait of the lane may take before it fails
#: Refusals that say "send the same answer again after ``retryAfter``" (docs/errors.md).
WAIT_CODES = {"RESUME_IN_PROGRESS", "RESUME_CLAIM_HELD", "APPROVAL_STORE_UNAVAILABLE"}
#: The refusal that says "ask the person again": the store lost its records.
RESET = "APPROVAL_STORE_RESET"
REJECTED = "rejected"  # what a case's outcome is when the person said no and nothing ran


def new_worker(env: dict[str, str]) -> UvicornWorker:
    """``uvicorn fault_worker:app`` in a child process, its warnings in the effects folder."""
    return UvicornWorker(
        "fault_worker:app", HERE, env, log_level="critical", log_dir=Path(env["EFFECTS_DIR"])
    )


@dataclass
class Case:
    """One thread: a paused call to ``pay(invoice)``, the answer that approves (or rejects)
    it, and what became of it."""

    thread: str
    invoice: int
    approved: bool
    body: dict[str, Any] = field(default_factory=dict, repr=False)
    outcome: str | None = None  # the call's result, or the refusal code it settled on
    codes: list[str] = field(default_factory=list)  # every refusal met on the way


class Deployment:
    """``count`` workers of one agent on one store, their side effects in ``effects``."""

    def __init__(self, store_url: str, effects: Path, count: int = 4, **env: str) -> None:
        self.effects = effects
        self.env = {
            "AGUI_CHAT_SIGNING_KEY": KEY,
            "STORE_URL": store_url,
            "EFFECTS_DIR": str(effects),
            "LEASE_SECONDS": "2",
            "CLAIM_PAUSE": "0.6",
            "TOOL_PAUSE": "0.6",
            **env,
        }
        self.workers = [new_worker(self.env) for _ in range(count)]
        self.threads = 0

    def start(self) -> None:
        for worker in self.workers:
            if worker.process is None:
                worker.start()
        for worker in self.workers:
            worker.wait_ready()

    def stop(self) -> None:
        for worker in self.workers:
            worker.stop()

    def by_pid(self, pid: int) -> UvicornWorker:
        (worker,) = [w for w in self.workers if w.pid == pid]
        return worker

    def live(self) -> list[UvicornWorker]:
        return [w for w in self.workers if w.process is not None]

    def lines(self, thread: str, kind: str) -> list[tuple[str, int]]:
        """``(line, pid)`` of ``thread``'s ``effects`` or ``marks``, in order."""
        path = self.effects / f"{thread}.{kind}"
        text = path.read_text() if path.exists() else ""
        found = []
        for line in text.splitlines():
            what, pid = line.rsplit(" pid=", 1)
            found.append((what, int(pid)))
        return found

    def runs(self, thread: str) -> list[str]:
        return [what for what, _ in self.lines(thread, "effects")]

    def new_thread(self) -> str:
        self.threads += 1
        return f"thread-{self.threads}"

    @contextlib.contextmanager
    def holding(self, thread: str, where: str) -> Iterator[None]:
        """While the block runs, a worker resuming ``thread`` waits (``fault_worker``'s
        holds) at ``where``: ``"claim"`` (its claims made, before any tool starts) or
        ``"tool"`` (the tool's side effect done, before it returns)."""
        hold = self.effects / f"{thread}.hold-{where}"
        hold.touch()
        try:
            yield
        finally:
            hold.unlink(missing_ok=True)


@contextlib.asynccontextmanager
async def deployed(
    request: pytest.FixtureRequest, tmp_path: Path, count: int = 4
) -> AsyncIterator[Deployment]:
    """``count`` workers started on a fresh store of the kind ``request.param`` names:
    ``"sqlite"`` (a file in ``tmp_path``), ``"redis"`` (the lane's Redis that persists,
    emptied) or ``"postgres"`` (a new database of the lane's crashable PostgreSQL); their
    side effects in ``tmp_path / "effects"``. Stopped at the end."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path}/approvals.db"
    elif request.param == "redis":
        redis: RedisServer = request.getfixturevalue("persistent_redis")
        redis.flush()
        url = redis.url
    else:
        postgres: PostgresServer = request.getfixturevalue("crashable_postgres")
        url = await new_database(postgres)
    effects = tmp_path / "effects"
    effects.mkdir()
    running = Deployment(url, effects, count=count)
    try:
        running.start()
        yield running
    finally:
        running.stop()


async def post(client: httpx.AsyncClient, url: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    """The events of one run; ``[]`` when the worker died under it (a cut connection, a
    stream cut short)."""
    try:
        response = await client.post(url, json=body, headers={"accept": "text/event-stream"})
    except httpx.TransportError:
        return []
    assert response.status_code == 200, response.text
    try:
        return sse_events(response.content)
    except AssertionError:  # cut mid-event
        return []


async def pause_all(
    deployment: Deployment, client: httpx.AsyncClient, count: int, *, reject_every: int = 4
) -> list[Case]:
    """``count`` threads paused on the workers in turn; every ``reject_every``-th answer
    rejects the call, the others approve it."""
    cases = []
    for i in range(count):
        thread = deployment.new_thread()
        cases.append(Case(thread, 100 + deployment.threads, approved=(i + 1) % reject_every != 0))

    async def one(i: int, case: Case) -> None:
        ask = user(f"pay invoice {case.invoice}")
        worker = deployment.workers[i % len(deployment.workers)]
        events = await post(client, worker.url, run_input(ask, thread=case.thread))
        finished = events[-1]
        assert finished["type"] == "RUN_FINISHED", events
        (interrupt,) = finished["outcome"]["interrupts"]
        answer = approve(interrupt) if case.approved else reject(interrupt, "not this one")
        case.body = run_input(
            ask, *history_from(events), thread=case.thread, run="r2", resume=[answer]
        )

    await asyncio.gather(*(one(i, case) for i, case in enumerate(cases)))
    return cases


def read(case: Case, events: list[dict[str, Any]]) -> bool:
    """Take one response for ``case``: True when it settled (a result, or a refusal that
    says ask again); a refusal with a wait, or a cut stream, is to be sent again."""
    if not events:
        return False
    errors = [e for e in events if e["type"] == "RUN_ERROR"]
    results = [e["content"] for e in events if e["type"] == "TOOL_CALL_RESULT"]
    for error in errors:
        code = error.get("code", "")
        case.codes.append(code)
        assert code in WAIT_CODES | {RESET}, f"{case.thread}: undocumented refusal {error}"
        if code in WAIT_CODES:
            assert float(error["retryAfter"]) > 0, f"a wait without retryAfter: {error}"
    if errors:
        if errors[-1]["code"] == RESET:
            assert not results, events  # refused before anything ran
            case.outcome = RESET
            return True
        return False
    if events[-1]["type"] != "RUN_FINISHED":
        return False
    (result,) = results
    case.outcome = result if case.approved else REJECTED
    return True


async def send_all(
    deployment: Deployment,
    client: httpx.AsyncClient,
    cases: Sequence[Case],
    *,
    copies: int = 2,
    rounds: int = 60,
    between: float = 0.3,
    settle: bool = True,
) -> None:
    """Send every unsettled case's answer to ``copies`` different live workers at once,
    round after round (another worker each round, as a client retries), until each settles
    or ``rounds`` ran out (which fails, when they must ``settle``)."""
    for turn in range(rounds):
        pending = [c for c in cases if c.outcome is None]
        if not pending:
            return
        live = deployment.live()
        sends: list[tuple[Case, Awaitable[list[dict[str, Any]]]]] = []
        for i, case in enumerate(pending):
            for copy in range(min(copies, len(live))):
                worker = live[(turn + i + copy) % len(live)]
                sends.append((case, post(client, worker.url, case.body)))
        answers = await asyncio.gather(*(send for _, send in sends))
        for (case, _), events in zip(sends, answers, strict=True):
            if case.outcome is None:
                read(case, events)
        await asyncio.sleep(between)
    unsettled = [(c.thread, c.codes[-3:]) for c in cases if c.outcome is None]
    assert not settle or not unsettled, f"never settled: {unsettled}"


def check_at_most_once(deployment: Deployment, cases: Sequence[Case]) -> None:
    """The lane's invariants (see the module docstring), over every case and the effects
    folder."""
    for case in cases:
        runs = deployment.runs(case.thread)
        paid = f"paid invoice {case.invoice}"
        assert runs in ([], [f"paid {case.invoice}"]), (case, runs)
        if not case.approved:
            assert runs == [] and case.outcome == REJECTED, (case, runs)
        elif case.outcome == paid:
            assert len(runs) == 1, (case, runs)  # exactly once
        else:
            assert case.outcome in (LOST_RESULT, RESET), case
    answered = {f"{c.thread}.effects" for c in cases if c.approved}
    stray = {p.name for p in deployment.effects.glob("*.effects")} - answered
    assert not stray, f"side effects of calls nobody approved: {stray}"


async def replay_everywhere(
    deployment: Deployment,
    client: httpx.AsyncClient,
    cases: Sequence[Case],
    *,
    results_may_be_lost: bool = False,
) -> None:
    """Every answer sent again to every worker: each gets what it got before (the kept
    result, the lost one, the refusal), and nothing runs again. With
    ``results_may_be_lost`` (the store failed while tools ran), a result the server could
    not keep replays as lost instead: its tool ran once and is never run again."""
    before = {c.thread: deployment.runs(c.thread) for c in cases}
    for case in cases:
        for worker in deployment.live():
            again = Case(case.thread, case.invoice, case.approved, case.body)
            for _ in range(20):  # a claim left by a dead worker may still be held a while
                if read(again, await post(client, worker.url, case.body)):
                    break
                await asyncio.sleep(0.5)
            if results_may_be_lost and again.outcome == LOST_RESULT:
                assert case.outcome in (LOST_RESULT, f"paid invoice {case.invoice}"), again
            else:
                assert again.outcome == case.outcome, (case, again)
    after = {c.thread: deployment.runs(c.thread) for c in cases}
    changed = {t: (before[t], after[t]) for t in after if after[t] != before[t]}
    # Which call ran during the replays, and what each case had been told: a first run of a
    # call reported lost or reset, or a second run, read differently.
    assert not changed, (changed, [c for c in cases if c.thread in changed])


async def when(condition: Callable[[], bool], what: str) -> None:
    """Wait (bounded) until ``condition()`` holds."""
    deadline = time.monotonic() + BOUND
    while not condition():
        assert time.monotonic() < deadline, f"never happened: {what}"
        await asyncio.sleep(0.01)


def first_line(
    deployment: Deployment, cases: Sequence[Case], kind: str, pids: set[int]
) -> tuple[Case, int] | None:
    """The first case with a ``kind`` line written by one of ``pids``, and that pid."""
    for case in cases:
        for _, pid in deployment.lines(case.thread, kind):
            if pid in pids:
                return case, pid
    return None


async def new_database(server: PostgresServer) -> str:
    """A fresh database of ``server``: its URL."""
    name = f"faults_{secrets.token_hex(4)}"
    async with await psycopg.AsyncConnection.connect(server.url, autocommit=True) as db:
        await db.execute(f"CREATE DATABASE {name}")
    return server.url.rsplit("/", 1)[0] + f"/{name}"
