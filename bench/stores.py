"""Approval stores: what a durable store costs, side by side with memory and with the
disk's own flush in one run.

    python bench/stores.py          # full sizes (~75 s)
    python bench/stores.py --quick  # tiny sizes: proves it still runs

(flush)   one ``fdatasync`` of an 8 KiB write to this disk after 2 ms idle, median: what a
          store that makes "started" durable before the tool starts (SQLite FULL,
          PostgreSQL with ``synchronous_commit`` on) adds to a resume at the least, whatever
          its code. Measured up front, and again between every pair of the resume figures
          (a shared disk's flush moves with its load: each store's budget uses the flushes
          measured among its own pairs)
(claim)   one claim of a fresh key, median over many, per store: memory, SQLite
          (synchronous=FULL and NORMAL, WAL, the file on this disk), Redis and PostgreSQL
          over loopback
(resume)  one resume round trip end to end (POST with the approval over HTTP to uvicorn on
          127.0.0.1, the tool runs, the stream ends) for every store, memory too (its A/A
          pair shows the noise), each paired with memory and alternated; per pair the median
          of a batch of each, then the median over the pairs of the differences and of the
          ratios
(floor)   the least a durable store's three statements of a resume (claim; the "started"
          mark, the one that waits for the disk; the result) can cost, whatever its code:
          the same three round trips through the raw driver, no agui_chat code, on a
          throwaway table or file, a few trios after every pair of that store's resumes (so
          under the same load), each trio after 2 ms idle, its three statements back to back
          on a fresh key, median. PostgreSQL: the same ``psycopg_pool.AsyncConnectionPool``
          setup (autocommit, no connection check), an ``INSERT ... ON CONFLICT DO NOTHING``
          with ``synchronous_commit`` off set inside the statement, an ``UPDATE`` committed
          synchronously (it waits for the WAL flush), an ``UPDATE`` with
          ``synchronous_commit`` off. Redis: redis-py asyncio, two ``EVALSHA`` calls of
          one-line scripts (``register_script``) and a ``SET XX KEEPTTL``, as the store's
          claim, started mark and result. SQLite FULL: three hops through a one-thread
          executor (``loop.run_in_executor``) to one connection to a WAL file on this disk,
          an ``INSERT ... ON CONFLICT DO NOTHING`` and an ``UPDATE`` under
          ``synchronous=NORMAL``, the started ``UPDATE`` under ``FULL`` (its commit flushes
          the ``-wal``). Each durable store's extra over memory's resume is printed as that
          floor plus the store's own overhead (extra - floor), with whether the budget is
          above the floor or below it (then no code can meet it on this machine); for Redis
          also the floor's ratio, (memory's resume + the floor) / memory's resume, median
          over the pairs. (Memory's own three calls, about 0.01 ms, are not taken off.)
(flushes) the durable flushes one resume makes, counted over N resumes run back to back
(trips)   the store round trips governance costs, per store: the calls of the store
          object's primitives (``_claim``, ``_mark_started``, ``_record_result``, ``renew``,
          ``release``, ``record``, ``_epoch``, ``_append``, ``_audit_head``,
          ``_audit_entries``, ``_grants``, ``_put_grant``, ``revoke_grant``: each one Redis
          command or script, one PostgreSQL transaction, one hop to SQLite's thread), wrapped
          with counters on the instance, made by one request over HTTP: a resume (the POST
          that carries the approval; its pause not counted) after an uncounted one, and that
          first resume too (the store object has not read the chain's head yet); a run that
          does not pause (a plain tool) after an uncounted one; each with governance on (the
          store as made) and off (the same store class's subclass whose ``keeps_governance``
          is False: the server keeps no audit trail or grants with it), each behind a server
          of its own; and, on only, a run of a gated ``allow_remember=True`` tool that a grant
          (kept before, for the thread) covers, so it runs without pausing, after an
          uncounted one. Printed: on, off and the difference, and which primitives were called
(governance) the time of the same resume and of the same run that does not pause with
          governance on vs off, paired and alternated as (resume), medians, and the median
          over the pairs of the difference and of the ratio, on the clock and in this
          process's CPU time (``time.process_time``: the client, uvicorn, the server and
          SQLite's thread, not a Redis or PostgreSQL server; a busy machine moves it far less
          than the clock). No budget: the trips are governance's

Budgets (DESIGN §6, issue 40): a claim costs at most 1 ms on loopback Redis and 2 ms on
SQLite (median). A resume with SQLite FULL or PostgreSQL costs at most memory's + one flush
of this disk + 0.5 ms (the median of the per-pair differences against the median flush
among its pairs) and makes exactly one durable flush; a resume with Redis costs at most
1.3x memory's (median of the per-pair ratios). SQLite NORMAL and memory's A/A pair have no
budget: printed for reference. A budget the floor is above is printed as "budget below the
floor": it is still not met (the run exits 1), and the figure says why. Governance (DESIGN:
"the audit record and the grant check add at most one store round trip to a resume (zero
when the record can share the claim's write) and nothing to a run that does not pause"),
for every store: a resume's round trips with governance on less those with it off at most
1 (the first resume and a later one alike), a run's that does not pause exactly 0. Those
are counts, not times: a run, ``--quick`` too, exits 1 when one is not met.

How the flushes are counted, and why so:

- PostgreSQL: ``pg_stat_wal.wal_sync`` (every WAL flush of the cluster, whichever process
  made it) read before and after the N resumes. A backend hands its counters to the shared
  ones up to a second after its statements (PostgreSQL 15), so each reading waits until the
  figure stops moving (at least 1.5 s); ``pg_stat_reset_shared('wal')`` would be no cleaner
  (what the warm-up left pending lands after the reset) and is not used. The claim and the
  result commit without waiting for their WAL: it reaches the disk with the next resume's
  started mark, or by the WAL writer (at least once per ``wal_writer_delay``); the count
  includes the WAL writer's flushes (the last result's among them), so it may exceed N by
  at most one per ``wal_writer_delay`` of the run, plus one: that allowance is printed, and
  the budget holds when N <= the count <= N + allowance (a count of 2N would be a claim or a
  result waiting for its flush, one under N a started mark that does not).
- SQLite: the N resumes run in a child process (this script with ``--count-sqlite``) under
  ``strace -f -y --seccomp-bpf -e trace=fsync,fdatasync``, which names each call's file;
  the calls on the store's ``.db`` and ``-wal`` between two marker flushes are counted.
  strace rather than an LD_PRELOAD shim: it counts system calls where they reach the
  kernel, so it sees every flush whatever made it (a SQLite linked statically, a raw
  ``syscall``) where a shim sees only the libc wrappers it thought to wrap; it needs no
  compiler, and it cannot change what the store does, only slow the child (whose timings
  are not used). Without strace (``apt-get install strace``), or where ptrace is refused,
  the SQLite counts are skipped with a line that says so. SQLite also flushes at each WAL
  checkpoint (about every 1,000 pages written: the ``-wal``, then the ``.db``, then the
  ``-wal``'s new header on the next write, whatever ``synchronous`` says): a ``.db`` flush
  marks a checkpoint, and the flushes at commit are the ``-wal``'s less two per checkpoint.
  The budget counts those; the checkpoints' are printed beside them.

Redis needs ``redis-server`` on PATH (started here on a free port of 127.0.0.1, no
persistence, so it makes no flush); PostgreSQL needs Debian's ``postgresql`` (a throwaway
cluster here, as the ``postgres`` user when run as root, ``fsync`` on as in production). A
full run exits 1 when a budget is not met (a quick one only when a round-trip count is not).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import functools
import glob
import itertools
import json
import logging
import os
import re
import secrets
import shutil
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager, nullcontext
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, NamedTuple

import httpx

from agui_chat import FunctionCallContent, FunctionResultContent, ai_function, approval_required
from agui_chat.agui import AGUIServer
from agui_chat.stores import ApprovalStore, Grant, InMemoryApprovalStore, SQLiteApprovalStore
from agui_chat.testing import ScriptedChatClient

KEY = b"bench-signing-key-32-bytes-long!"
BUDGET_CLAIM_MS = {"redis": 1.0, "sqlite (FULL)": 2.0, "sqlite (NORMAL)": 2.0}
#: A flushing store's resume: at most memory's + one flush of this disk + this much.
BUDGET_SLACK_MS = 0.5
#: Redis's resume: at most this many times memory's.
BUDGET_REDIS_RATIO = 1.3
#: The stores whose "started" mark waits for a flush of the disk before the tool starts:
#: exactly one durable flush per resume.
FLUSHING = ("sqlite (FULL)", "postgres")


# -- the disk -----------------------------------------------------------------------------------


@contextmanager
def flush_probe(directory: Path) -> Iterator[Callable[[int], list[float]]]:
    """A function that times ``count`` ``fdatasync``\\ s of an 8 KiB write to a file in
    ``directory``, each after 2 ms idle (a resume's flush comes after the request's idle
    wait, not in a tight loop, where a disk may merge flushes and answer far sooner), in
    milliseconds."""
    fd = os.open(directory / "flush.bin", os.O_WRONLY | os.O_CREAT, 0o600)
    written = [0]
    try:
        os.write(fd, bytes(8192 * 16))
        os.fsync(fd)

        def sample(count: int) -> list[float]:
            times = []
            for _ in range(count):
                time.sleep(0.002)
                os.pwrite(fd, b"x" * 8192, (written[0] % 16) * 8192)
                written[0] += 1
                start = time.perf_counter()
                os.fdatasync(fd)
                times.append((time.perf_counter() - start) * 1000)
            return times

        yield sample
    finally:
        os.close(fd)
        (directory / "flush.bin").unlink()


# -- the servers ----------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def redis_server() -> Iterator[str | None]:
    """A throwaway redis-server on a free port, or ``None`` if none is installed."""
    executable = shutil.which("redis-server")
    if executable is None:
        yield None
        return
    port = _free_port()
    with tempfile.TemporaryDirectory() as directory:
        process = subprocess.Popen(
            [executable, "--bind", "127.0.0.1", "--port", str(port), "--save", "",
             "--appendonly", "no", "--dir", directory],
            stdout=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            for _ in range(500):
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    time.sleep(0.01)
            yield f"redis://127.0.0.1:{port}/0"
        finally:
            process.terminate()
            process.wait(timeout=10)


@contextmanager
def postgres_server() -> Iterator[str | None]:
    """A throwaway PostgreSQL cluster on a free port, or ``None`` if none is installed."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), reverse=True)
    initdb = found[0] if found else shutil.which("initdb")
    if initdb is None:
        yield None
        return
    bin_dir = Path(initdb).parent
    as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    port = _free_port()
    with tempfile.TemporaryDirectory() as directory:
        if as_user:
            shutil.chown(directory, "postgres", "postgres")
        data = f"{directory}/data"
        subprocess.run([*as_user, initdb, "-D", data, "-U", "bench", "-A", "trust"],
                       check=True, capture_output=True)  # fmt: skip
        process = subprocess.Popen(
            [*as_user, str(bin_dir / "postgres"), "-D", data, "-p", str(port),
             "-c", "listen_addresses=127.0.0.1", "-c", f"unix_socket_directories={directory}"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        ready = [str(bin_dir / "pg_isready"), "-q", "-h", "127.0.0.1", "-p", str(port)]
        try:
            for _ in range(600):
                if subprocess.run(ready).returncode == 0:
                    break
                time.sleep(0.05)
            yield f"postgresql://bench@127.0.0.1:{port}/postgres"
        finally:
            # runuser does not pass signals on: stop the postmaster itself
            os.kill(int(Path(data, "postmaster.pid").read_text().split()[0]), 2)
            process.wait(timeout=30)


@functools.cache
def ungoverned(kind: type[ApprovalStore]) -> type[ApprovalStore]:
    """A subclass of the store class ``kind`` whose ``keeps_governance`` is False: the same
    store, its claims' code and tables unchanged, that the server keeps no audit trail or
    grants with (as with a store of your own written before them)."""

    def keeps_governance(self: ApprovalStore) -> bool:
        return False

    return type(
        f"Ungoverned{kind.__name__}", (kind,), {"keeps_governance": property(keeps_governance)}
    )


def stores(
    directory: Path,
    redis_url: str | None,
    postgres_url: str | None = None,
    *,
    governed: bool = True,
) -> dict[str, Callable[[], ApprovalStore]]:
    """Each store benchmarked, by name: as it is, or (``governed=False``) its
    :func:`ungoverned` subclass."""

    def kind(store: type[ApprovalStore]) -> Any:
        return store if governed else ungoverned(store)

    made: dict[str, Callable[[], ApprovalStore]] = {
        "memory": kind(InMemoryApprovalStore),
        "sqlite (FULL)": lambda: kind(SQLiteApprovalStore)(
            directory / f"{secrets.token_hex(4)}.db", synchronous="FULL"
        ),
        "sqlite (NORMAL)": lambda: kind(SQLiteApprovalStore)(
            directory / f"{secrets.token_hex(4)}.db", synchronous="NORMAL"
        ),
    }
    if redis_url is not None:
        from agui_chat.stores import RedisApprovalStore

        made["redis"] = lambda: kind(RedisApprovalStore)(redis_url)
    if postgres_url is not None:
        from agui_chat.stores import PostgresApprovalStore

        made["postgres"] = lambda: kind(PostgresApprovalStore)(
            postgres_url, table=f"bench_{secrets.token_hex(4)}"
        )
    return made


# -- (claim) ------------------------------------------------------------------------------------


async def claim_cost(make: Callable[[], ApprovalStore], count: int) -> float:
    """Median milliseconds of one claim of a fresh key (after a warm-up)."""
    store = make()
    expires = time.time() + 3600
    for i in range(20):
        await store.claim(f"warm-{i}", expires_at=expires, owner="o")
    times = []
    for i in range(count):
        start = time.perf_counter()
        await store.claim(f"k-{i}", expires_at=expires, owner="o", lease_until=expires)
        times.append(time.perf_counter() - start)
    await store.aclose()
    return statistics.median(times) * 1000


# -- one resume -----------------------------------------------------------------------------------


def resume_app(store: ApprovalStore) -> AGUIServer:
    @approval_required
    @ai_function
    def delete_file(path: str) -> str:
        """Delete a file."""
        return f"deleted {path}"

    def model(messages: Any, options: Any) -> Any:
        if any(isinstance(c, FunctionResultContent) for m in messages for c in m.contents):
            return "Deleted."
        return [FunctionCallContent("c1", "delete_file", {"path": "a.txt"})]

    return AGUIServer(
        ScriptedChatClient(model),
        tools=[delete_file],
        signing_key=KEY,
        approval_store=store,
        audience=f"bench-{secrets.token_hex(4)}",  # servers side by side: one audience each
    )


def _body(run: str, messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {
        "threadId": "t1",
        "runId": run,
        "messages": messages,
        "tools": [],
        "context": [],
        "state": {},
        "forwardedProps": {},
        **extra,
    }


def _events(content: bytes) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in content.split(b"\n") if line.startswith(b"data: ")]


async def paused(client: httpx.AsyncClient) -> dict[str, Any]:
    """Run until ``delete_file`` pauses for approval: the body of the resume that approves it."""
    user = {"id": "u1", "role": "user", "content": "delete a.txt"}
    events = _events((await client.post("/", json=_body("r1", [user]))).content)
    interrupt = events[-1]["outcome"]["interrupts"][0]
    call = {"id": "c1", "type": "function", "function": {"name": "delete_file",
            "arguments": json.dumps({"path": "a.txt"})}}  # fmt: skip
    history = [user, {"id": "a1", "role": "assistant", "toolCalls": [call]}]
    answer = {"interruptId": interrupt["id"], "status": "resolved", "payload": {"approved": True}}
    return _body("r2", history, resume=[answer])


class Took(NamedTuple):
    """Seconds of one request: on the clock, and of this process's CPU (every thread's:
    the client's, uvicorn's and the server's, SQLite's executor; not a Redis or PostgreSQL
    server's), which a busy machine moves far less."""

    wall: float
    cpu: float


async def ran(client: httpx.AsyncClient, body: dict[str, Any]) -> Took:
    """A run that runs its tool without pausing (a resume, a plain tool, a call a grant
    covers): the POST of ``body`` until its stream ends, timed, then checked."""
    cpu, start = time.process_time(), time.perf_counter()
    response = await client.post("/", json=body)
    took = Took(time.perf_counter() - start, time.process_time() - cpu)
    events = _events(response.content)
    assert events[-1]["type"] == "RUN_FINISHED", response.text
    assert events[-1]["outcome"]["type"] == "success", response.text
    assert any(e["type"] == "TOOL_CALL_RESULT" for e in events), response.text
    return took


async def one_resume(client: httpx.AsyncClient) -> Took:
    """One resume round trip (the pause before it is not timed)."""
    return await ran(client, await paused(client))


async def _uvicorn(app: Any) -> tuple[Any, asyncio.Task[None], str]:
    import uvicorn

    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    task = asyncio.ensure_future(server.serve())
    while not server.started:
        assert not task.done(), "uvicorn did not start"
        await asyncio.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    return server, task, f"http://127.0.0.1:{port}"


class Served:
    """A store behind its own uvicorn on 127.0.0.1 (serving ``app(store)``, the resume's
    app unless told), and a client of it."""

    def __init__(
        self, store: ApprovalStore, app: Callable[[ApprovalStore], AGUIServer] = resume_app
    ) -> None:
        self.store = store
        self.app = app(store)

    async def __aenter__(self) -> httpx.AsyncClient:
        self._server, self._task, url = await _uvicorn(self.app)
        self._client = httpx.AsyncClient(base_url=url)
        return self._client

    async def __aexit__(self, *_: object) -> None:
        await self._client.aclose()
        self._server.should_exit = True
        await self._task
        await self.store.aclose()


# -- (floor) --------------------------------------------------------------------------------------

#: One statement of a resume's three, through the raw driver, on the key given.
Step = Callable[[str], Awaitable[Any]]
#: Times ``count`` trios of the raw driver's three statements: milliseconds of each
#: statement, per trio.
Sampler = Callable[[int], Awaitable[list[tuple[float, ...]]]]
#: Trios run untimed when a floor's connection is new (a pool's first connections, a
#: script's first ``EVALSHA``, psycopg's prepared statements after five runs of each).
FLOOR_WARM_UP = 10


async def _trios(steps: tuple[Step, Step, Step], count: int) -> list[tuple[float, ...]]:
    """Milliseconds of each of the three ``steps``, over ``count`` trios, each trio on a
    fresh key after 2 ms idle (as a resume's calls come after the request's idle wait; the
    flush probe's too), its three statements back to back: the least they cost (inside a
    resume the server's own work comes between them)."""
    times = []
    for _ in range(count):
        await asyncio.sleep(0.002)
        key = secrets.token_hex(8)
        marks = [time.perf_counter()]
        for step in steps:
            await step(key)
            marks.append(time.perf_counter())
        times.append(tuple((b - a) * 1000 for a, b in itertools.pairwise(marks)))
    return times


@asynccontextmanager
async def postgres_floor(url: str) -> AsyncIterator[Sampler]:
    """A resume's three statements with psycopg alone: a pool set up as the store's
    (autocommit, ``min_size=1``, ``max_size=10``; no connection check, the least), one
    connection from it per statement, on a throwaway table of the store's shape."""
    from psycopg import sql
    from psycopg_pool import AsyncConnectionPool

    table = sql.Identifier(f"floor_{secrets.token_hex(4)}")
    relaxed = "FROM (SELECT set_config('synchronous_commit', 'off', true)) AS relaxed"
    claim = sql.SQL(
        "INSERT INTO {} (key, owner) SELECT %s, %s " + relaxed + " ON CONFLICT (key) DO NOTHING"
    ).format(table)
    start = sql.SQL("UPDATE {} SET started = TRUE WHERE key = %s AND owner = %s").format(table)
    result = sql.SQL("UPDATE {} SET result = %s " + relaxed + " WHERE key = %s").format(table)
    pool = AsyncConnectionPool(
        url, min_size=1, max_size=10, open=False, kwargs={"autocommit": True}
    )
    await pool.open(wait=True)
    try:
        async with pool.connection() as db:
            await db.execute(
                sql.SQL(
                    "CREATE TABLE {} (key TEXT PRIMARY KEY, owner TEXT NOT NULL, "
                    "started BOOLEAN NOT NULL DEFAULT FALSE, result TEXT)"
                ).format(table)
            )

        def step(query: Any, args: Callable[[str], tuple[str, ...]]) -> Step:
            async def run(key: str) -> None:
                async with pool.connection() as db:
                    await db.execute(query, args(key))

            return run

        trio = (
            step(claim, lambda key: (key, "o")),
            step(start, lambda key: (key, "o")),
            step(result, lambda key: ("r", key)),
        )
        await _trios(trio, FLOOR_WARM_UP)
        yield lambda count: _trios(trio, count)
    finally:
        await pool.close()


@asynccontextmanager
async def redis_floor(url: str) -> AsyncIterator[Sampler]:
    """A resume's three calls with redis-py alone (a client with its defaults): an
    ``EVALSHA`` of a one-line script as the claim, another as the started mark, and the
    result's ``SET XX KEEPTTL``."""
    import redis.asyncio as aioredis

    client = aioredis.Redis.from_url(url)
    claim = client.register_script(
        "return redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2])"
    )
    start = client.register_script("return redis.call('SET', KEYS[1], ARGV[1], 'XX', 'KEEPTTL')")

    trio = (
        lambda key: claim(keys=[f"floor:{key}"], args=["p::o", "3600000"]),
        lambda key: start(keys=[f"floor:{key}"], args=["s::o"]),
        lambda key: client.set(f"floor:{key}", "d:r", xx=True, keepttl=True),
    )
    try:
        await _trios(trio, FLOOR_WARM_UP)
        yield lambda count: _trios(trio, count)
    finally:
        await client.aclose()


@asynccontextmanager
async def sqlite_floor(directory: Path) -> AsyncIterator[Sampler]:
    """A resume's three statements with ``sqlite3`` alone: three hops to a one-thread
    executor that holds one connection (autocommit) to a new WAL file in ``directory``, the
    claim and the result under ``synchronous=NORMAL``, the started mark under ``FULL``."""
    executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="floor-sqlite")
    path = directory / f"floor-{secrets.token_hex(4)}.db"
    held: list[sqlite3.Connection] = []

    def connect() -> None:
        db = sqlite3.connect(path, isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute(
            "CREATE TABLE floor (key TEXT PRIMARY KEY, owner TEXT NOT NULL, "
            "started INTEGER NOT NULL DEFAULT 0, result TEXT)"
        )
        held.append(db)

    def claim(key: str) -> None:
        held[0].execute(
            "INSERT INTO floor (key, owner) VALUES (?, 'o') ON CONFLICT (key) DO NOTHING", (key,)
        )

    def start(key: str) -> None:
        db = held[0]
        db.execute("PRAGMA synchronous=FULL")
        try:
            db.execute("UPDATE floor SET started = 1 WHERE key = ? AND owner = 'o'", (key,))
        finally:
            db.execute("PRAGMA synchronous=NORMAL")

    def result(key: str) -> None:
        held[0].execute("UPDATE floor SET result = 'r' WHERE key = ?", (key,))

    loop = asyncio.get_running_loop()

    def hop(statement: Callable[[str], None]) -> Step:
        return lambda key: loop.run_in_executor(executor, statement, key)

    trio = (hop(claim), hop(start), hop(result))

    try:
        await loop.run_in_executor(executor, connect)
        await _trios(trio, FLOOR_WARM_UP)
        yield lambda count: _trios(trio, count)
    finally:
        if held:
            await loop.run_in_executor(executor, held[0].close)
        executor.shutdown()


def floors(
    directory: Path, redis_url: str | None, postgres_url: str | None
) -> dict[str, Callable[[], AbstractAsyncContextManager[Sampler]]]:
    """The raw-driver floor of each durable store's resume, by the store's name."""
    made: dict[str, Callable[[], AbstractAsyncContextManager[Sampler]]] = {
        "sqlite (FULL)": lambda: sqlite_floor(directory)
    }
    if redis_url is not None:
        made["redis"] = lambda: redis_floor(redis_url)
    if postgres_url is not None:
        made["postgres"] = lambda: postgres_floor(postgres_url)
    return made


def floor_line(name: str, paired: Paired) -> str:
    """A durable store's extra over memory's resume, split into the raw driver's floor and
    the store's own overhead, and where its budget stands against the floor."""
    extra, floor = paired.difference, paired.floor
    claim, started, result = paired.floor_steps
    line = (
        f"extra {extra:+.2f} ms = floor {floor:+.2f} ms (claim {claim:.2f}, started "
        f"{started:.2f}, result {result:.2f}) + the store's overhead {extra - floor:+.2f} ms; "
    )
    if name == "redis":
        ratio = paired.floor_ratio
        room = BUDGET_REDIS_RATIO - ratio
        line += f"floor ratio {ratio:.2f}x; budget <= {BUDGET_REDIS_RATIO}x: "
        below = ratio > BUDGET_REDIS_RATIO
        left = f"{room:.2f}x"
    else:
        budget = paired.flush + BUDGET_SLACK_MS
        room = budget - floor
        line += f"budget <= +{budget:.2f} ms: "
        below = floor > budget
        left = f"{room:+.2f} ms"
    if below:
        return line + f"budget below the floor (by {left.lstrip('+-')})"
    return line + f"budget above the floor (room left for the store: {left})"


# -- (resume) -------------------------------------------------------------------------------------


@dataclass
class Paired:
    """One store's resume against memory's, over the pairs (milliseconds)."""

    ours: list[float]
    memory: list[float]  # or what else it was paired with (the same store, governance off)
    flushes: list[float]  # this disk's flush, measured between the pairs
    #: the raw driver's three statements (the floor), a few trios after each pair
    floors: list[list[tuple[float, ...]]] = field(default_factory=list)
    #: the same batches' medians of this process's CPU time (``Took.cpu``)
    ours_cpu: list[float] = field(default_factory=list)
    memory_cpu: list[float] = field(default_factory=list)

    @property
    def difference(self) -> float:
        return statistics.median([o - m for o, m in zip(self.ours, self.memory, strict=True)])

    @property
    def ratio(self) -> float:
        return statistics.median([o / m for o, m in zip(self.ours, self.memory, strict=True)])

    @property
    def cpu_difference(self) -> float:
        pairs = zip(self.ours_cpu, self.memory_cpu, strict=True)
        return statistics.median([o - m for o, m in pairs])

    @property
    def cpu_ratio(self) -> float:
        pairs = zip(self.ours_cpu, self.memory_cpu, strict=True)
        return statistics.median([o / m for o, m in pairs])

    @property
    def flush(self) -> float:
        return statistics.median(self.flushes)

    @property
    def floor(self) -> float:
        return statistics.median([sum(trio) for trios in self.floors for trio in trios])

    @property
    def floor_steps(self) -> list[float]:
        """Each of the three statements' median."""
        trios = [trio for trios in self.floors for trio in trios]
        return [statistics.median(step) for step in zip(*trios, strict=True)]

    @property
    def floor_ratio(self) -> float:
        """(memory's resume + the floor) / memory's resume, median over the pairs."""
        pairs = zip(self.memory, self.floors, strict=True)
        return statistics.median(
            [(m + statistics.median(map(sum, trios))) / m for m, trios in pairs]
        )


async def resume_pairs(
    make: Callable[[], ApprovalStore],
    pairs: int,
    per_pair: int,
    flush: Callable[[int], list[float]] | None,
    floor: Sampler | None = None,
    per_floor: int = 0,
    *,
    against: Callable[[], ApprovalStore] = InMemoryApprovalStore,
    app: Callable[[ApprovalStore], AGUIServer] = resume_app,
    timed: Callable[[httpx.AsyncClient], Awaitable[Took]] = one_resume,
) -> Paired:
    """``pairs`` pairs of a batch of ``per_pair`` resumes (``timed``) with the store and with
    memory (``against``: another), which goes first alternating; each batch's median (of the
    CPU time too), and a few flushes of the disk after each pair (unless ``flush`` is None),
    and ``per_floor`` trios of the raw driver's statements (``floor``) too."""
    paired = Paired([], [], [])
    async with Served(make(), app) as ours, Served(against(), app) as memory:

        async def batch(client: httpx.AsyncClient) -> tuple[float, float]:
            took = [await timed(client) for _ in range(per_pair)]
            wall = statistics.median(t.wall for t in took) * 1000
            return wall, statistics.median(t.cpu for t in took) * 1000

        await batch(ours)  # warm-up
        await batch(memory)
        for i in range(pairs):
            order = [
                (paired.ours, paired.ours_cpu, ours),
                (paired.memory, paired.memory_cpu, memory),
            ]
            for figures, cpu, client in order if i % 2 else reversed(order):
                wall, spent = await batch(client)
                figures.append(wall)
                cpu.append(spent)
            if flush is not None:
                paired.flushes.extend(flush(3))
            if floor is not None:
                paired.floors.append(await floor(per_floor))
    return paired


def resume_verdict(name: str, paired: Paired) -> tuple[str, bool]:
    """The budget line of ``name``'s resume, and whether it is over: "budget below the
    floor" when the raw driver's floor (if measured) is above the budget."""
    if name in FLUSHING:
        budget = paired.flush + BUDGET_SLACK_MS
        over = paired.difference > budget
        below = bool(paired.floors) and paired.floor > budget
        text = f"budget <= +{budget:.2f} ms (a flush {paired.flush:.2f} + {BUDGET_SLACK_MS})"
    elif name == "redis":
        over = paired.ratio > BUDGET_REDIS_RATIO
        below = bool(paired.floors) and paired.floor_ratio > BUDGET_REDIS_RATIO
        text = f"budget <= {BUDGET_REDIS_RATIO}x"
    else:
        return "(no budget: " + ("the noise)" if name == "memory" else "for reference)"), False
    verdict = "OVER" if over else "PASS"
    if below:
        verdict += ", budget below the floor" if over else " (yet the floor is above the budget)"
    return f"{text}  {verdict}", over


# -- (flushes) ------------------------------------------------------------------------------------


def _mark(path: Path) -> None:
    """A flush of ``path``: the marker the child's trace is cut at."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        os.fdatasync(fd)
    finally:
        os.close(fd)


async def sqlite_resumes(synchronous: str, resumes: int, directory: Path) -> None:
    """The child under strace: ``resumes`` resumes with a SQLite store in ``directory``,
    back to back after a warm-up, between two marker flushes."""
    store = SQLiteApprovalStore(directory / "store.db", synchronous=synchronous)  # type: ignore[arg-type]
    async with Served(store) as client:
        for _ in range(5):
            await one_resume(client)
        _mark(directory / "begin.mark")
        for _ in range(resumes):
            await one_resume(client)
        _mark(directory / "end.mark")


_SYNC_CALL = re.compile(r"\b(?:fsync|fdatasync)\(\d+<([^>]*)>")


@dataclass
class SQLiteFlushes:
    wal: int  # flushes of the -wal file
    db: int  # flushes of the .db file: one per checkpoint
    other: int  # any other file's (none expected)

    @property
    def at_commit(self) -> int:
        return self.wal - 2 * self.db  # a checkpoint flushes the -wal twice, the .db once


def count_sqlite_flushes(trace: str) -> SQLiteFlushes:
    """The flushes of the store's files between the two markers of an ``strace -y`` log."""
    counted = SQLiteFlushes(0, 0, 0)
    inside = False
    for line in trace.splitlines():
        found = _SYNC_CALL.search(line)
        if found is None:
            continue
        path = found[1]
        if path.endswith("begin.mark"):
            inside = True
        elif path.endswith("end.mark"):
            return counted
        elif not inside:
            continue
        elif path.endswith("store.db-wal"):
            counted.wal += 1
        elif path.endswith("store.db"):
            counted.db += 1
        else:
            counted.other += 1
    raise RuntimeError("the trace has no end marker")


def sqlite_flushes(synchronous: str, resumes: int, directory: Path) -> SQLiteFlushes | str:
    """The flushes a SQLite store makes over ``resumes`` resumes, or why they were not
    counted."""
    strace = shutil.which("strace")
    if strace is None:
        return "not counted: strace not found (apt-get install strace)"
    with tempfile.TemporaryDirectory(dir=directory) as child:
        trace = Path(child, "trace.txt")
        command = [
            strace, "-f", "-y", "-qq", "--seccomp-bpf", "-e", "trace=fsync,fdatasync",
            "-o", str(trace), sys.executable, str(Path(__file__).resolve()),
            "--count-sqlite", synchronous, str(resumes), child,
        ]  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True, timeout=900)
        if done.returncode != 0:
            why = (done.stderr.strip().splitlines() or ["no message"])[-1]
            return f"not counted: the traced child failed ({why})"
        return count_sqlite_flushes(trace.read_text())


async def _wal_syncs(watch: Any) -> int:
    return int((await (await watch.execute("SELECT wal_sync FROM pg_stat_wal")).fetchone())[0])


async def _settled_wal_syncs(watch: Any) -> int:
    """``pg_stat_wal.wal_sync`` once it stopped moving (the WAL writer reports its flushes
    after its round, a backend that exits as it goes)."""
    start, last = time.monotonic(), None
    while True:
        await asyncio.sleep(0.25)
        now = await _wal_syncs(watch)
        waited = time.monotonic() - start
        if (now == last and waited >= 1.5) or waited > 15:
            return now
        last = now


@dataclass
class PostgresFlushes:
    syncs: int  # pg_stat_wal.wal_sync over the resumes, the WAL writer's included
    seconds: float  # how long the resumes took
    writer_delay: float  # wal_writer_delay, seconds

    def writer_allowance(self) -> int:
        """The most flushes the WAL writer may add over the run: at most one per
        ``wal_writer_delay`` (its first round may flush at once), and the last result's
        after the run."""
        return int(self.seconds / self.writer_delay) + 2


async def postgres_flushes(url: str, resumes: int) -> PostgresFlushes:
    """The WAL flushes of the cluster over ``resumes`` resumes back to back with a
    ``PostgresApprovalStore``, each reading of ``pg_stat_wal`` taken with no store
    connection open. A backend hands its counters to the shared ones at most once a second,
    and one that goes idle sooner holds them for 10 s (PostgreSQL 15); one that exits hands
    them at once: so the resumes run on connections of their own, closed before the second
    reading, after a warm-up whose connections are closed before the first."""
    import psycopg

    from agui_chat.stores import PostgresApprovalStore

    table = f"bench_{secrets.token_hex(4)}"
    watch = await psycopg.AsyncConnection.connect(url, autocommit=True)
    try:
        setting = "SELECT setting::int FROM pg_settings WHERE name = 'wal_writer_delay'"
        delay = (await (await watch.execute(setting)).fetchone())[0] / 1000  # type: ignore[index]
        async with Served(PostgresApprovalStore(url, table=table)) as client:
            for _ in range(5):  # makes the table
                await one_resume(client)
        before = await _settled_wal_syncs(watch)
        async with Served(PostgresApprovalStore(url, table=table)) as client:
            start = time.perf_counter()
            for _ in range(resumes):
                await one_resume(client)
            seconds = time.perf_counter() - start
        after = await _settled_wal_syncs(watch)
    finally:
        await watch.close()
    return PostgresFlushes(after - before, seconds, delay)


# -- (trips) and (governance) ----------------------------------------------------------------------

#: A store's primitives: what its base class's methods (``claim``, ``start_audited``,
#: ``record_result``, ``grants``, ...) come down to, each call one round trip (one Redis
#: command or script, one PostgreSQL transaction, one hop to SQLite's thread). ``revoke_grant``
#: is one too, though no run makes it.
PRIMITIVES = (
    "_claim", "_mark_started", "_record_result", "renew", "release", "record", "_epoch",
    "_append", "_audit_head", "_audit_entries", "_grants", "_put_grant", "revoke_grant",
)  # fmt: skip
#: Budgets (DESIGN: "the audit record and the grant check add at most one store round trip
#: to a resume (zero when the record can share the claim's write) and nothing to a run that
#: does not pause"): the round trips governance adds to each.
BUDGET_GOVERNED_RESUME_TRIPS = 1
BUDGET_GOVERNED_RUN_TRIPS = 0

_inside: ContextVar[bool] = ContextVar("bench_store_primitive", default=False)


class Trips:
    """Counts the calls of a store object's primitives (:data:`PRIMITIVES`, wrapped on the
    instance, so the class and its ``keeps_governance`` are untouched). A primitive called
    while another of the store's is under way in the same task is part of that one (a store
    without leases marks "started" by appending) and is not counted again."""

    def __init__(self, store: ApprovalStore) -> None:
        self.calls: collections.Counter[str] = collections.Counter()
        for name in PRIMITIVES:
            method = getattr(store, name, None)
            if method is not None:
                setattr(store, name, self._counted(name, method))

    def _counted(self, name: str, method: Callable[..., Awaitable[Any]]) -> Callable[..., Any]:
        async def counted(*args: Any, **kwargs: Any) -> Any:
            if _inside.get():
                return await method(*args, **kwargs)
            self.calls[name] += 1
            token = _inside.set(True)
            try:
                return await method(*args, **kwargs)
            finally:
                _inside.reset(token)

        return counted

    async def of(self, run: Awaitable[object]) -> collections.Counter[str]:
        """The primitives called while ``run`` (one request, its stream read to the end)
        lasts, and while anything it left under way settles."""
        self.calls.clear()
        await run
        await asyncio.sleep(0.01)
        return collections.Counter(self.calls)


def governance_app(store: ApprovalStore) -> AGUIServer:
    """The resume's app with two more tools: ``read_file`` (plain: a run that calls it does
    not pause) and ``touch_file`` (gated, ``allow_remember=True``: a grant may cover it). The
    model calls the tool the user's message names, then answers."""

    @approval_required
    @ai_function
    def delete_file(path: str) -> str:
        """Delete a file."""
        return f"deleted {path}"

    @ai_function
    def read_file(path: str) -> str:
        """Read a file."""
        return f"the text of {path}"

    @approval_required(allow_remember=True)
    @ai_function
    def touch_file(path: str) -> str:
        """Touch a file."""
        return f"touched {path}"

    def model(messages: Any, options: Any) -> Any:
        last = messages[-1]
        if any(isinstance(c, FunctionResultContent) for c in last.contents):
            return "Done."
        name = next(n for n in ("read", "touch", "delete") if n in last.text) + "_file"
        return [FunctionCallContent("c1", name, {"path": "a.txt"})]

    return AGUIServer(
        ScriptedChatClient(model),
        tools=[delete_file, read_file, touch_file],
        signing_key=KEY,
        approval_store=store,
        audience=f"bench-{secrets.token_hex(4)}",
    )


def _asking(verb: str) -> dict[str, Any]:
    """The body of a new run whose model calls ``<verb>_file`` (thread ``t1``)."""
    return _body("r3", [{"id": "u1", "role": "user", "content": f"{verb} a.txt"}])


def thread_grant(audience: str, tool: str) -> Grant:
    """A grant of ``tool`` with any arguments in thread ``t1`` for an hour."""
    now = datetime.now(timezone.utc)
    return Grant(
        id=secrets.token_urlsafe(12), audience=audience, tool=tool, arguments_sha256=None,
        scope="thread", thread_id="t1", principal_id=None, granted_by=None, created=now,
        expires=now + timedelta(hours=1),
    )  # fmt: skip


@dataclass
class Counted:
    """One store's round trips (primitive calls, by name) per run, governance on and off."""

    resume_on: collections.Counter[str]
    resume_off: collections.Counter[str]
    #: the store object's first resume (after its first pause): the chain's head not read yet
    first_on: collections.Counter[str]
    first_off: collections.Counter[str]
    run_on: collections.Counter[str]
    run_off: collections.Counter[str]
    covered: collections.Counter[str]  # a gated allow_remember call a grant covers (on only)

    @property
    def resume_extra(self) -> int:
        return self.resume_on.total() - self.resume_off.total()

    @property
    def first_extra(self) -> int:
        return self.first_on.total() - self.first_off.total()

    @property
    def run_extra(self) -> int:
        return self.run_on.total() - self.run_off.total()

    @property
    def over(self) -> bool:
        return self.resume_over or self.run_extra > BUDGET_GOVERNED_RUN_TRIPS

    @property
    def resume_over(self) -> bool:
        return max(self.resume_extra, self.first_extra) > BUDGET_GOVERNED_RESUME_TRIPS


@dataclass
class _Counts:
    first: collections.Counter[str]
    resume: collections.Counter[str]
    run: collections.Counter[str]
    covered: collections.Counter[str] | None


async def count_trips(store: ApprovalStore) -> _Counts:
    """The primitives ``store`` is called for by (a) one resume (the POST that carries the
    approval: the pause before it is not counted), after a first one (also counted: the
    store object has not read the chain's head yet), (c) one run of a plain tool after one
    uncounted, (d) with governance on, one run of a gated ``allow_remember`` tool a grant
    covers (the grant kept before, not counted), after one uncounted. The first pause (not
    counted) reads the store's epoch, and a store's first call makes its tables."""
    served = Served(store, governance_app)
    async with served as client:
        trips = Trips(store)
        first = await trips.of(ran(client, await paused(client)))
        resumed = await trips.of(ran(client, await paused(client)))
        await ran(client, _asking("read"))
        plain = await trips.of(ran(client, _asking("read")))
        covered = None
        if store.keeps_governance:
            await store.add_grant(thread_grant(served.app.audience, "touch_file"))
            await ran(client, _asking("touch"))
            covered = await trips.of(ran(client, _asking("touch")))
    return _Counts(first, resumed, plain, covered)


async def trips_of(
    make_on: Callable[[], ApprovalStore], make_off: Callable[[], ApprovalStore]
) -> Counted:
    """One store's :class:`Counted`: a store object as made (governance on), then one of its
    :func:`ungoverned` subclass, each behind a server of its own."""
    on = await count_trips(make_on())
    off_store = make_off()
    assert not off_store.keeps_governance
    off = await count_trips(off_store)
    assert on.covered is not None and off.covered is None
    return Counted(on.resume, off.resume, on.first, off.first, on.run, off.run, on.covered)


def _calls(counted: collections.Counter[str]) -> str:
    """``_claim, _append x2``: the primitives called, in the order of :data:`PRIMITIVES`."""
    found = [n + (f" x{counted[n]}" if counted[n] > 1 else "") for n in PRIMITIVES if counted[n]]
    return ", ".join(found) or "none"


def trips_lines(name: str, counted: Counted) -> list[str]:
    """The (trips) lines of one store: the figures and budgets, then what was called."""
    run_over = counted.run_extra > BUDGET_GOVERNED_RUN_TRIPS
    return [
        f"  {name:16} resume: on {counted.resume_on.total()}, off "
        f"{counted.resume_off.total()}, {counted.resume_extra:+d} (the first: on "
        f"{counted.first_on.total()}, off {counted.first_off.total()}, "
        f"{counted.first_extra:+d}) (budget <= +{BUDGET_GOVERNED_RESUME_TRIPS}: "
        f"{'OVER' if counted.resume_over else 'PASS'}); no pause: on "
        f"{counted.run_on.total()}, off {counted.run_off.total()}, {counted.run_extra:+d} "
        f"(budget +{BUDGET_GOVERNED_RUN_TRIPS}: {'OVER' if run_over else 'PASS'}); covered by "
        f"a grant: {counted.covered.total()}",
        f"  {'':16} resume on [{_calls(counted.resume_on)}], off [{_calls(counted.resume_off)}]; "
        f"the first on [{_calls(counted.first_on)}], off [{_calls(counted.first_off)}]; no pause "
        f"on [{_calls(counted.run_on)}], off [{_calls(counted.run_off)}]; covered "
        f"[{_calls(counted.covered)}]",
    ]


async def plain_run(client: httpx.AsyncClient) -> Took:
    """One run that does not pause: the model calls the plain ``read_file``, it runs, the
    model answers."""
    return await ran(client, _asking("read"))


# -- the run --------------------------------------------------------------------------------------


def _load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


async def main(quick: bool) -> int:
    claims, pairs, per_pair, counted = (50, 2, 3, 5) if quick else (2000, 15, 10, 300)
    per_floor = 3 if quick else 10  # the floor's trios after each pair
    # The redis-server here keeps nothing on disk on purpose (it makes no flush): the store's
    # warning that it may lose used approvals would only break up the figures.
    logging.getLogger("agui_chat.stores").setLevel(logging.ERROR)
    print(f"CPython {sys.version.split()[0]}, {sys.platform}, {os.cpu_count()} cores, {_load()}")
    failed = False
    miscounted = False  # a round-trip budget not met: a count, so a quick run fails too
    with (
        tempfile.TemporaryDirectory() as directory,
        flush_probe(Path(directory)) as flush,
        redis_server() as redis_url,
        postgres_server() as postgres_url,
    ):
        made = stores(Path(directory), redis_url, postgres_url)
        made_off = stores(Path(directory), redis_url, postgres_url, governed=False)
        raw = floors(Path(directory), redis_url, postgres_url)
        if redis_url is None:
            print("redis-server not found: the Redis figures are skipped")
        if postgres_url is None:
            print("PostgreSQL not found (apt-get install postgresql): its figures are skipped")

        floor = statistics.median(flush(20 if quick else 200))
        print(f"\n(flush) one fdatasync of 8 KiB after 2 ms idle, median: {floor:.3f} ms")

        print("\n(claim) one claim of a fresh key, median")
        for name, make in made.items():
            ms = await claim_cost(make, claims)
            budget = BUDGET_CLAIM_MS.get(name)
            verdict = ""
            if budget is not None:
                verdict = f"  budget <= {budget} ms  {'OVER' if ms > budget else 'PASS'}"
                failed |= ms > budget
            print(f"  {name:16} {ms:7.3f} ms{verdict}")

        print(
            f"\n(resume) one resume round trip over HTTP (uvicorn, 127.0.0.1), each store "
            f"paired with memory, alternated, {pairs} pairs of {per_pair}: medians, and the "
            "median over the pairs of the difference and the ratio; the disk's flush, median "
            "between the pairs"
        )
        resumes: dict[str, Paired] = {}
        for name, make in made.items():
            probe = raw[name]() if name in raw else nullcontext(None)
            async with probe as floor:
                paired = await resume_pairs(make, pairs, per_pair, flush, floor, per_floor)
            resumes[name] = paired
            verdict, over = resume_verdict(name, paired)
            failed |= over
            print(
                f"  {name:16} {statistics.median(paired.ours):6.2f} ms vs memory "
                f"{statistics.median(paired.memory):6.2f} ms: {paired.difference:+6.2f} ms "
                f"{paired.ratio:4.2f}x (flush {paired.flush:.2f} ms)  {verdict}"
            )

        print(
            f"\n(floor) a resume's three store statements through the raw driver alone (no "
            f"agui_chat code), {per_floor} trios after each of the store's pairs, each after "
            "2 ms idle, back to back: median; the store's extra over memory's resume (above) "
            "= that floor + the store's own overhead"
        )
        for name in raw:
            print(f"  {name:16} {floor_line(name, resumes[name])}")

        print(f"\n(flushes) durable flushes per resume, over {counted} resumes back to back")
        for synchronous in ("FULL", "NORMAL"):
            name = f"sqlite ({synchronous})"
            sqlite = sqlite_flushes(synchronous, counted, Path(directory))
            if isinstance(sqlite, str):
                print(f"  {name:16} {sqlite}")
                continue
            verdict = "(no budget: for reference)"
            if name in FLUSHING:
                over = sqlite.at_commit != counted
                failed |= over
                verdict = f"budget exactly 1  {'OVER' if over else 'PASS'}"
            print(
                f"  {name:16} {sqlite.at_commit / counted:.2f} flushes per resume at commit "
                f"(-wal {sqlite.wal}, .db {sqlite.db}: {sqlite.db} checkpoint(s), "
                f"{3 * sqlite.db} flushes; other files {sqlite.other})  {verdict}"
            )
        if postgres_url is not None:
            pg = await postgres_flushes(postgres_url, counted)
            allowance = pg.writer_allowance()
            over = not counted <= pg.syncs <= counted + allowance
            failed |= over
            print(
                f"  {'postgres':16} {pg.syncs / counted:.2f} flushes per resume "
                f"(pg_stat_wal.wal_sync +{pg.syncs} over {counted} resumes in {pg.seconds:.1f} s; "
                f"the WAL writer may add up to {allowance} of them)  "
                f"budget exactly 1  {'OVER' if over else 'PASS'}"
            )

        print(
            "\n(trips) store round trips of one run (calls of the store's primitives, counted "
            "on the store object), each after an uncounted run of the same kind; governance on "
            "(the store as it is) and off (its subclass whose keeps_governance is False): a "
            "resume (the POST with the approval), a run that does not pause (a plain tool), and "
            "a run of a gated allow_remember tool a grant covers (on only: no pause)"
        )
        for name, make in made.items():
            trips = await trips_of(make, made_off[name])
            miscounted |= trips.over
            print("\n".join(trips_lines(name, trips)))

        print(
            f"\n(governance) the same store with governance on vs off (its subclass whose "
            f"keeps_governance is False), paired, alternated, {pairs} pairs of {per_pair}: "
            "medians, and the median over the pairs of the difference and the ratio, on the "
            "clock and in this process's CPU time (client and server; not a Redis or PostgreSQL "
            "server's); a resume round trip over HTTP, and a run that does not pause (a plain "
            "tool); no budget: the round trips above are governance's"
        )
        for name, make in made.items():
            for label, timed in (("resume", one_resume), ("no pause", plain_run)):
                paired = await resume_pairs(
                    make, pairs, per_pair, None,
                    against=made_off[name], app=governance_app, timed=timed,
                )  # fmt: skip
                print(
                    f"  {name if label == 'resume' else '':16} {label:8} on "
                    f"{statistics.median(paired.ours):6.2f} ms vs off "
                    f"{statistics.median(paired.memory):6.2f} ms: {paired.difference:+6.2f} ms "
                    f"{paired.ratio:4.2f}x; CPU on {statistics.median(paired.ours_cpu):6.2f} ms "
                    f"vs off {statistics.median(paired.memory_cpu):6.2f} ms: "
                    f"{paired.cpu_difference:+6.2f} ms {paired.cpu_ratio:4.2f}x"
                )
    print(f"\n{_load()}")
    return 1 if (failed and not quick) or miscounted else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes: just prove it runs")
    parser.add_argument("--count-sqlite", nargs=3, help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.count_sqlite:
        synchronous, resumes, child = arguments.count_sqlite
        asyncio.run(sqlite_resumes(synchronous, int(resumes), Path(child)))
        sys.exit(0)
    sys.exit(asyncio.run(main(arguments.quick)))
