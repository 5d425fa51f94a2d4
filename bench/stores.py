"""Approval stores: what a durable store costs, side by side with memory in one run.

    python bench/stores.py          # full sizes (~1 min)
    python bench/stores.py --quick  # tiny sizes: proves it still runs

(claim)  one claim of a fresh key, median over many, per store: memory, SQLite
         (synchronous=FULL and NORMAL, WAL, the file on this disk), Redis and PostgreSQL
         over loopback
(resume) one resume round trip end to end (POST with the approval over HTTP to uvicorn on
         127.0.0.1, the tool runs, the stream ends), each durable store paired with memory,
         alternated; the median of the per-pair ratios (and, for reference, the same in
         process through httpx's ASGI transport, where the floor is far smaller)

(flush)  one ``fdatasync`` of an 8 KiB write to this disk after 2 ms idle, median: what a
         store that makes "started" durable before the tool starts (SQLite FULL, PostgreSQL
         with ``synchronous_commit`` on) adds to a resume at the least, whatever its code;
         printed beside each such store's ratio as the lowest ratio this disk allows

Budget (DESIGN §6): a claim costs at most 1 ms on loopback Redis and 2 ms on SQLite
(median); a resume with a durable store stays within 1.5x of memory. Redis needs
``redis-server`` on PATH (started here on a free port of 127.0.0.1, no persistence);
PostgreSQL needs Debian's ``postgresql`` (a throwaway cluster here, as the ``postgres`` user
when run as root, ``fsync`` on as in production).
"""

from __future__ import annotations

import argparse
import asyncio
import glob
import json
import os
import secrets
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from agui_chat import FunctionCallContent, FunctionResultContent, ai_function, approval_required
from agui_chat.agui import AGUIServer
from agui_chat.stores import ApprovalStore, InMemoryApprovalStore, SQLiteApprovalStore
from agui_chat.testing import ScriptedChatClient

KEY = b"bench-signing-key-32-bytes-long!"
BUDGET_CLAIM_MS = {"redis": 1.0, "sqlite (FULL)": 2.0, "sqlite (NORMAL)": 2.0}
BUDGET_RESUME = 1.5


#: The stores whose "started" mark waits for a flush of the disk before the tool starts.
FLUSHING = ("sqlite (FULL)", "postgres")


def flush_after_idle_ms(directory: Path, count: int) -> float:
    """Median milliseconds of one ``fdatasync`` of an 8 KiB write after 2 ms idle (a resume's
    flush comes after the request's idle wait, not in a tight loop, where a disk may merge
    flushes and answer far sooner)."""
    path = directory / "flush.bin"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        os.write(fd, bytes(8192 * 16))
        os.fsync(fd)
        times = []
        for i in range(count):
            os.pwrite(fd, b"x" * 8192, (i % 16) * 8192)
            start = time.perf_counter()
            os.fdatasync(fd)
            times.append(time.perf_counter() - start)
            time.sleep(0.002)
    finally:
        os.close(fd)
        path.unlink()
    return statistics.median(times) * 1000


@contextmanager
def redis_server() -> Iterator[str | None]:
    """A throwaway redis-server on a free port, or ``None`` if none is installed."""
    executable = shutil.which("redis-server")
    if executable is None:
        yield None
        return
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
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
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
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


def stores(
    directory: Path, redis_url: str | None, postgres_url: str | None = None
) -> dict[str, Callable[[], ApprovalStore]]:
    made: dict[str, Callable[[], ApprovalStore]] = {
        "memory": InMemoryApprovalStore,
        "sqlite (FULL)": lambda: SQLiteApprovalStore(
            directory / f"{secrets.token_hex(4)}.db", synchronous="FULL"
        ),
        "sqlite (NORMAL)": lambda: SQLiteApprovalStore(
            directory / f"{secrets.token_hex(4)}.db", synchronous="NORMAL"
        ),
    }
    if redis_url is not None:
        from agui_chat.stores import RedisApprovalStore

        made["redis"] = lambda: RedisApprovalStore(redis_url)
    if postgres_url is not None:
        from agui_chat.stores import PostgresApprovalStore

        made["postgres"] = lambda: PostgresApprovalStore(
            postgres_url, table=f"bench_{secrets.token_hex(4)}"
        )
    return made


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


async def one_resume(client: httpx.AsyncClient) -> float:
    """Seconds of one resume round trip (the pause before it is not timed)."""
    user = {"id": "u1", "role": "user", "content": "delete a.txt"}
    paused = _events((await client.post("/", json=_body("r1", [user]))).content)
    interrupt = paused[-1]["outcome"]["interrupts"][0]
    call = {"id": "c1", "type": "function", "function": {"name": "delete_file",
            "arguments": json.dumps({"path": "a.txt"})}}  # fmt: skip
    history = [user, {"id": "a1", "role": "assistant", "toolCalls": [call]}]
    answer = {"interruptId": interrupt["id"], "status": "resolved", "payload": {"approved": True}}
    body = _body("r2", history, resume=[answer])
    start = time.perf_counter()
    response = await client.post("/", json=body)
    elapsed = time.perf_counter() - start
    assert _events(response.content)[-1]["type"] == "RUN_FINISHED", response.text
    return elapsed


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


async def resume_ratio(
    durable: Callable[[], ApprovalStore], pairs: int, per_pair: int, *, over_http: bool
) -> tuple[float, float, float]:
    """(median ms durable, median ms memory, median of per-pair ratios)."""
    clients = {}
    servers = []
    for name, make in (("durable", durable), ("memory", InMemoryApprovalStore)):
        app = resume_app(make())
        if over_http:
            servers.append(await _uvicorn(app))
            clients[name] = httpx.AsyncClient(base_url=servers[-1][2])
        else:
            transport = httpx.ASGITransport(app=app)
            clients[name] = httpx.AsyncClient(transport=transport, base_url="http://localhost")
    ours: list[float] = []
    floors: list[float] = []
    ratios: list[float] = []

    async def batch(client: httpx.AsyncClient) -> float:
        return statistics.median([await one_resume(client) for _ in range(per_pair)])

    await batch(clients["durable"])  # warm-up
    await batch(clients["memory"])
    for i in range(pairs):
        order: list[tuple[str, Callable[[], Awaitable[float]]]] = [
            ("durable", lambda: batch(clients["durable"])),
            ("memory", lambda: batch(clients["memory"])),
        ]
        if i % 2:
            order.reverse()
        measured = {name: await run() for name, run in order}
        ours.append(measured["durable"])
        floors.append(measured["memory"])
        ratios.append(measured["durable"] / measured["memory"])
    for client in clients.values():
        await client.aclose()
    for server, task, _ in servers:
        server.should_exit = True
        await task
    return (
        statistics.median(ours) * 1000,
        statistics.median(floors) * 1000,
        statistics.median(ratios),
    )


async def main(quick: bool) -> int:
    claims, pairs, per_pair = (50, 2, 3) if quick else (2000, 7, 15)
    print(f"CPython {sys.version.split()[0]}, {sys.platform}")
    failed = False
    with (
        tempfile.TemporaryDirectory() as directory,
        redis_server() as redis_url,
        postgres_server() as postgres_url,
    ):
        made = stores(Path(directory), redis_url, postgres_url)
        if redis_url is None:
            print("redis-server not found: the Redis figures are skipped")
        if postgres_url is None:
            print("PostgreSQL not found (apt-get install postgresql): its figures are skipped")
        flush = flush_after_idle_ms(Path(directory), 20 if quick else 200)
        print(f"\n(flush) one fdatasync after 2 ms idle, median: {flush:.3f} ms")
        print("\n(claim) one claim of a fresh key, median")
        for name, make in made.items():
            ms = await claim_cost(make, claims)
            budget = BUDGET_CLAIM_MS.get(name)
            verdict = "" if budget is None else f"  budget <= {budget} ms"
            if budget is not None and ms > budget:
                verdict += "  OVER"
                failed = True
            print(f"  {name:16} {ms:7.3f} ms{verdict}")
        for over_http in (True, False):
            where = "over HTTP (uvicorn, 127.0.0.1)" if over_http else "in process (reference)"
            print(f"\n(resume) one resume round trip {where}, durable vs memory")
            for name, make in made.items():
                if name == "memory":
                    continue
                ours, floor, ratio = await resume_ratio(make, pairs, per_pair, over_http=over_http)
                verdict = ""
                if over_http:
                    verdict = f"  budget <= {BUDGET_RESUME}x"
                    if ratio > BUDGET_RESUME:
                        verdict += "  OVER"
                        failed = True
                    if name in FLUSHING:
                        verdict += f" (this disk's flush alone: {(floor + flush) / floor:.2f}x)"
                print(
                    f"  {name:16} {ours:6.2f} ms vs memory {floor:6.2f} ms: {ratio:4.2f}x" + verdict
                )
    return 1 if failed and not quick else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes: just prove it runs")
    sys.exit(asyncio.run(main(parser.parse_args().quick)))
