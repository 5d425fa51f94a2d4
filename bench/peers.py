"""Our AG-UI server against the peers' (pydantic-ai, Agent Framework), side by side in one run.

    python bench/peers.py          # full sizes (~1-2 min)
    python bench/peers.py --quick  # tiny sizes: proves it still runs

Every server is its own process on 127.0.0.1 under uvicorn, over the same scripted model
(tests/interop/servers/ for the peers, bench/servers/agui_chat_server.py for ours), driven by
the same client, in rounds that visit every server in turn (so a change of load on the
machine hits them alike):

(first byte)  a run answered with one text message: the time from sending the POST to the
              first byte of the response body, median per server; beside them the floor, a
              bare ASGI app under the same uvicorn that reads the body and writes one event
(round trip)  an approval round trip: the run that pauses for ``delete_file``, then the run
              that carries the approval, runs the tool and streams the model's last answer,
              through ``AGUIChatClient``; ours with each approval store (memory, SQLite,
              Redis when ``redis-server`` is on PATH, PostgreSQL when Debian's
              ``postgresql`` is installed: a throwaway cluster, ``fsync`` on)

Each figure is printed as a ratio to the best peer's. Budget (DESIGN §6): the first byte in at
most 0.5x the best peer's time; a durable approval round trip at most 0.5x. The peers come
from ``make test-deps`` (mk/interop.mk installs them into the cache); a peer that is missing
is left out, and said so.

What governance (the audit trail and grants) costs ours, on vs off, is not measured here but
in bench/stores.py ((trips) and (governance)): bench/README.md says why.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx

from agui_chat import ChatFinishReason, ChatMessage
from agui_chat.agui import AGUIChatClient
from stores import postgres_server, redis_server  # bench/stores.py, beside this script

ROOT = Path(__file__).resolve().parents[1]
PEERS = ROOT / "tests" / "interop"
CACHE = Path(os.environ.get("AGUI_CHAT_CACHE", Path.home() / ".cache" / "agui-chat"))
BUDGET = {"first byte": 0.5, "round trip": 0.5}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _peer_python(name: str) -> Path | None:
    digest = hashlib.sha256((PEERS / "peers" / f"{name}.txt").read_bytes()).hexdigest()[:12]
    home = CACHE / "peers" / f"{name}-{digest}"
    return home / "bin" / "python" if (home / ".installed").exists() else None


class Server:
    """One server process on a free port of 127.0.0.1."""

    def __init__(self, label: str, command: list[str], tmp: Path, env: dict[str, str]) -> None:
        self.label = label
        self.port = _free_port()
        self.effects = tmp / f"{label.replace(' ', '_')}.jsonl"
        self.effects.touch()
        self.log = (tmp / f"{label.replace(' ', '_')}.log").open("wb")
        self.process = subprocess.Popen(
            [*command, str(self.port), str(self.effects), *self.extra(label, tmp)],
            stdout=self.log,
            stderr=subprocess.STDOUT,
            cwd=tmp,
            env={**os.environ, **env},
        )
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise SystemExit(f"{label} exited: see {self.log.name}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.1)
        raise SystemExit(f"{label} did not listen within 90 s")

    @staticmethod
    def extra(label: str, tmp: Path) -> list[str]:
        return []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log.close()


class OurServer(Server):
    store = ""

    def __init__(self, label: str, store: str, tmp: Path) -> None:
        OurServer.store = store
        key = {} if store == "memory://" else {"AGUI_CHAT_SIGNING_KEY": secrets.token_hex(32)}
        script = ROOT / "bench" / "servers" / "agui_chat_server.py"
        super().__init__(label, [sys.executable, str(script)], tmp, key)

    @staticmethod
    def extra(label: str, tmp: Path) -> list[str]:
        return [OurServer.store]


def _run_input(text: str) -> bytes:
    return json.dumps(
        {
            "threadId": str(uuid.uuid4()),
            "runId": str(uuid.uuid4()),
            "messages": [{"id": str(uuid.uuid4()), "role": "user", "content": text}],
            "tools": [],
            "context": [],
            "state": {},
            "forwardedProps": {},
        }
    ).encode()


async def first_byte(server: Server) -> float:
    """Seconds from sending a run's POST to the first byte of its body, read with a bare
    HTTP/1.1 client on a fresh loopback connection (so the figure is the server's, not a
    client library's), the stream then read to its end."""
    body = _run_input("hello")
    head = (
        f"POST / HTTP/1.1\r\nhost: 127.0.0.1:{server.port}\r\n"
        "content-type: application/json\r\naccept: text/event-stream\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    ).encode()
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    start = time.perf_counter()
    writer.write(head + body)
    received = b""
    while b"\r\n\r\n" not in received:
        received += await reader.read(65536)
    status, rest = received.split(b"\r\n", 1)[0], received.split(b"\r\n\r\n", 1)[1]
    if not rest:
        rest = await reader.read(65536)
    elapsed = time.perf_counter() - start
    while await reader.read(65536):
        pass
    writer.close()
    assert b" 200 " in status and rest, (server.label, status)
    return elapsed


async def round_trip(http: httpx.AsyncClient, server: Server, n: int) -> float:
    """Seconds for a pause and the approved resume that runs the tool once."""
    path = f"bench-{n}.txt"
    start = time.perf_counter()
    async with AGUIChatClient(server.url, http_client=http) as client:
        history = [ChatMessage("user", f"please delete {path}")]
        paused = await client.get_response(history)
        assert paused.finish_reason == ChatFinishReason.INPUT_REQUIRED, (server.label, paused)
        answers = [r.create_response(True) for r in paused.input_requests]
        history += [*paused.messages, ChatMessage("user", answers)]
        final = await client.get_response(history)
    elapsed = time.perf_counter() - start
    assert final.text == f"Tool said: deleted {path}", (server.label, final.text)
    return elapsed


@contextmanager
def servers(tmp: Path) -> Iterator[tuple[Server, list[Server], list[Server], list[str]]]:
    """(the floor, our servers, the peers' servers, the peers left out and why)."""
    missing: list[str] = []
    with ExitStack() as stack, redis_server() as redis_url, postgres_server() as postgres_url:
        floor_script = ROOT / "bench" / "servers" / "floor_server.py"
        floor = Server("floor (bare ASGI)", [sys.executable, str(floor_script)], tmp, {})
        stack.callback(floor.stop)
        ours: list[Server] = []
        stores = {"memory": "memory://", "sqlite": f"sqlite:///{tmp / 'approvals.db'}"}
        if redis_url is not None:
            stores["redis"] = redis_url
        else:
            missing.append("ours with Redis (no redis-server on PATH)")
        if postgres_url is not None:
            stores["postgres"] = postgres_url
        else:
            missing.append("ours with PostgreSQL (apt-get install postgresql)")
        for name, url in stores.items():
            ours.append(OurServer(f"agui_chat ({name})", url, tmp))
            stack.callback(ours[-1].stop)
        peers: list[Server] = []
        for name, script in [
            ("pydantic_ai", "pydantic_ai_server.py"),
            ("agent_framework", "agent_framework_server.py"),
        ]:
            python = _peer_python(name)
            if python is None:
                missing.append(f"{name} (run `make test-deps`)")
                continue
            command = [str(python), str(PEERS / "servers" / script)]
            peers.append(Server(name, command, tmp, {}))
            stack.callback(peers[-1].stop)
        yield floor, ours, peers, missing


async def measure(rounds: int, tmp: Path) -> int:
    with servers(tmp) as (floor, ours, peers, missing):
        everyone = [*ours, *peers]
        times: dict[tuple[str, str], list[float]] = {}
        limits = httpx.Limits(max_keepalive_connections=4)
        async with httpx.AsyncClient(timeout=30, limits=limits) as http:
            for n in range(rounds + 2):  # the first two rounds warm up
                for server in [floor, *everyone] if n % 2 else [*reversed(everyone), floor]:
                    fb = await first_byte(server)
                    if n >= 2:
                        times.setdefault(("first byte", server.label), []).append(fb)
                    if server is floor:
                        continue
                    rt = await round_trip(http, server, n)
                    if n >= 2:
                        times.setdefault(("round trip", server.label), []).append(rt)
        for server in everyone:
            runs = len(server.effects.read_text().splitlines())
            assert runs == rounds + 2, f"{server.label} ran delete_file {runs} times"
    print(
        f"agui_chat against its peers on CPython {sys.version.split()[0]}, {os.cpu_count()} cores"
    )
    for name in missing:
        print(f"  left out: {name}")
    failed = 0
    for figure in ("first byte", "round trip"):
        medians = {label: statistics.median(v) for (f, label), v in times.items() if f == figure}
        medians = dict(sorted(medians.items()))
        best_peer = min((medians[p.label] for p in peers), default=None)
        print(f"({figure}) median of {rounds} rounds")
        for label, value in medians.items():
            line = f"  {label:<22} {value * 1000:8.2f} ms"
            if best_peer is not None:
                ratio = value / best_peer
                line += f"  {ratio:5.2f}x the best peer"
                if label.startswith("agui_chat") and ratio > BUDGET[figure]:
                    line += f"  OVER the {BUDGET[figure]}x budget"
                    failed += 1
            print(line)
    return failed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes: prove it runs")
    parser.add_argument("--rounds", type=int, default=None, help="rounds per figure")
    args = parser.parse_args()
    rounds = args.rounds or (3 if args.quick else 60)
    with tempfile.TemporaryDirectory() as tmp:
        failed = asyncio.run(measure(rounds, Path(tmp)))
    print("all budgets hold" if not failed else f"{failed} figure(s) over budget")


if __name__ == "__main__":
    main()
