"""agui_chat benchmarks: ours against the floor, side by side in one run, as ratios.

    python bench/run.py            # full sizes (DESIGN §6 budgets), medians of 5 runs + warm-up
    python bench/run.py --quick    # tiny sizes: proves every benchmark still runs (CI)
    python bench/run.py --only a,c # a subset

(a) AGUIChatClient streaming N TEXT_MESSAGE_CONTENT events vs httpx + httpx-sse + json.loads
(b) a mixed stream (text, tool calls with 100 argument deltas, state deltas, reasoning): us/event
(c) AGUIServer emitting N events vs ag_ui's EventEncoder writing the same events to the same sink
(d) FunctionInvokingChatClient + logging + retry passing N streamed updates vs the bare client
    (d2) the same pipeline around AGUIChatClient (a real transport) vs AGUIChatClient alone
(e) memory: 1,000,000 events consumed incrementally, peak RSS growth
(f) 200 concurrent streams against AGUIServer under uvicorn on 127.0.0.1: events per second
(s) SSE decoding alone: our SSEDecoder vs httpx-sse's decoders, same bytes, same chunks
    (why the client reads SSE with its own decoder: DESIGN §5 asks for the measurement)
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import platform
import resource
import socket
import statistics
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx
import httpx_sse

from agui_chat import (
    ChatClientBuilder,
    ChatOptions,
    ChatResponseUpdate,
    TextContent,
)
from agui_chat._client import BaseChatClient, ChatMessages
from agui_chat.stores import InMemoryApprovalStore

try:
    from agui_chat.agui import AGUIChatClient, AGUIServer
except ImportError:  # pragma: no cover - while the adapters are being built
    AGUIChatClient = AGUIServer = None  # type: ignore[assignment,misc]

BUDGETS = {"a": 2.0, "c": 1.5, "d": 1.2}
KEY = b"bench-signing-key-32-bytes-long!"


# -- shared fixtures -------------------------------------------------------------------------


def frame(event: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(event, separators=(",", ":")).encode() + b"\n\n"


def text_stream(n: int, thread: str = "t", run: str = "r") -> list[bytes]:
    frames = [
        frame({"type": "RUN_STARTED", "threadId": thread, "runId": run}),
        frame({"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"}),
    ]
    frames += [
        frame({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": f"tok{i} "})
        for i in range(n)
    ]
    frames += [
        frame({"type": "TEXT_MESSAGE_END", "messageId": "m1"}),
        frame({"type": "RUN_FINISHED", "threadId": thread, "runId": run}),
    ]
    return frames


def mixed_stream(n: int) -> list[bytes]:
    """Text, tool calls with 100 argument deltas each, state deltas and reasoning."""
    out = [
        frame({"type": "RUN_STARTED", "threadId": "t", "runId": "r"}),
        frame({"type": "STATE_SNAPSHOT", "snapshot": {"count": 0, "items": []}}),
    ]
    i = 0
    while len(out) < n:
        out.append(frame({"type": "REASONING_START", "messageId": f"rs{i}"}))
        out.append(
            frame({"type": "REASONING_MESSAGE_START", "messageId": f"r{i}", "role": "reasoning"})
        )
        out += [
            frame({"type": "REASONING_MESSAGE_CONTENT", "messageId": f"r{i}", "delta": "hmm "})
            for _ in range(20)
        ]
        out.append(frame({"type": "REASONING_MESSAGE_END", "messageId": f"r{i}"}))
        out.append(frame({"type": "REASONING_END", "messageId": f"rs{i}"}))
        out.append(frame({"type": "TEXT_MESSAGE_START", "messageId": f"m{i}", "role": "assistant"}))
        out += [
            frame({"type": "TEXT_MESSAGE_CONTENT", "messageId": f"m{i}", "delta": "word "})
            for _ in range(50)
        ]
        out.append(frame({"type": "TEXT_MESSAGE_END", "messageId": f"m{i}"}))
        out.append(
            frame(
                {
                    "type": "TOOL_CALL_START",
                    "toolCallId": f"c{i}",
                    "toolCallName": "search",
                    "parentMessageId": f"m{i}",
                }
            )
        )
        out.append(frame({"type": "TOOL_CALL_ARGS", "toolCallId": f"c{i}", "delta": '{"q":"'}))
        out += [
            frame({"type": "TOOL_CALL_ARGS", "toolCallId": f"c{i}", "delta": "x"})
            for _ in range(98)
        ]
        out.append(frame({"type": "TOOL_CALL_ARGS", "toolCallId": f"c{i}", "delta": '"}'}))
        out.append(frame({"type": "TOOL_CALL_END", "toolCallId": f"c{i}"}))
        out.append(
            frame(
                {
                    "type": "TOOL_CALL_RESULT",
                    "messageId": f"tr{i}",
                    "toolCallId": f"c{i}",
                    "content": "ok",
                }
            )
        )
        out += [
            frame(
                {"type": "STATE_DELTA", "delta": [{"op": "replace", "path": "/count", "value": i}]}
            )
            for _ in range(10)
        ]
        i += 1
    out.append(frame({"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}))
    return out


def sse_app(frames: list[bytes]) -> Callable[..., Awaitable[None]]:
    """A bare ASGI app that answers any request with ``frames``, one write each."""

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        while (await receive()).get("more_body"):
            pass
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"text/event-stream")],
            }
        )
        for f in frames:
            await send({"type": "http.response.body", "body": f, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    return app


def asgi_client(app: Any) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://localhost")


async def paired(
    floor_fn: Callable[[], Awaitable[Any]], ours_fn: Callable[[], Awaitable[Any]], runs: int
) -> tuple[float, float, float]:
    """Median times of both, and the median of per-pair ratios.

    The two are timed alternately, so a load change on the machine hits both alike.
    """
    await floor_fn()
    await ours_fn()
    floors, ours, ratios = [], [], []
    for _ in range(runs):
        gc.collect()
        start = time.perf_counter()
        await floor_fn()
        floor = time.perf_counter() - start
        gc.collect()
        start = time.perf_counter()
        await ours_fn()
        mine = time.perf_counter() - start
        floors.append(floor)
        ours.append(mine)
        ratios.append(mine / floor)
    return statistics.median(ours), statistics.median(floors), statistics.median(ratios)


async def floor_read(http: httpx.AsyncClient) -> int:
    count = 0
    async with httpx_sse.aconnect_sse(http, "POST", "http://bench/", json={}) as source:
        async for sse in source.aiter_sse():
            json.loads(sse.data)
            count += 1
    return count


async def ours_read(http: httpx.AsyncClient) -> int:
    count = 0
    async with AGUIChatClient("http://bench/", http_client=http) as client:
        async for _update in client.get_streaming_response("go", ChatOptions(conversation_id="t")):
            count += 1
    return count


def report(
    key: str, name: str, ours: float, floor: float, ratio: float, unit: str = "s"
) -> dict[str, Any]:
    budget = BUDGETS.get(key)
    verdict = "" if budget is None else ("  within budget" if ratio <= budget else "  OVER BUDGET")
    print(
        f"({key}) {name}: ours {ours:.4f}{unit}, floor {floor:.4f}{unit}, ratio {ratio:.2f}x"
        + (f" (budget {budget}x){verdict}" if budget else "")
    )
    return {"ours": ours, "floor": floor, "ratio": ratio, "budget": budget}


# -- (a) (b) client ---------------------------------------------------------------------------


async def bench_client(n: int, runs: int) -> dict[str, Any]:
    http = asgi_client(sse_app(text_stream(n)))
    ours, floor, ratio = await paired(lambda: floor_read(http), lambda: ours_read(http), runs)
    return report("a", f"client, {n} text events", ours, floor, ratio)


async def bench_mixed(n: int, runs: int) -> dict[str, Any]:
    frames = mixed_stream(n)
    http = asgi_client(sse_app(frames))
    ours, floor, ratio = await paired(lambda: floor_read(http), lambda: ours_read(http), runs)
    per = len(frames)
    print(
        f"(b) mixed stream, {per} events: ours {ours / per * 1e6:.2f} us/event, "
        f"floor {floor / per * 1e6:.2f} us/event, ratio {ratio:.2f}x"
    )
    return {"ours_us": ours / per * 1e6, "floor_us": floor / per * 1e6, "ratio": ratio}


# -- (c) server -------------------------------------------------------------------------------


class StreamingModel(BaseChatClient):
    """A model that streams ``n`` pre-made text updates (its own cost is negligible)."""

    def __init__(self, n: int) -> None:
        self.updates = [
            ChatResponseUpdate("assistant", [TextContent(f"tok{i} ")], message_id="m1")
            for i in range(n)
        ]

    async def get_streaming_response(
        self, messages: ChatMessages, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        for update in self.updates:
            yield update


async def drive_asgi(app: Any, body: bytes) -> int:
    """Call an ASGI app once; the sink counts body bytes."""
    sent = {"bytes": 0}
    done = False

    async def receive() -> dict[str, Any]:
        nonlocal done
        if not done:
            done = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.Event().wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.body":
            sent["bytes"] += len(message.get("body", b""))

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/",
        "raw_path": b"/",
        "query_string": b"",
        "root_path": "",
        "headers": [
            (b"content-type", b"application/json"),
            (b"accept", b"text/event-stream"),
            (b"content-length", str(len(body)).encode()),
        ],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 80),
    }
    await app(scope, receive, send)
    return sent["bytes"]


async def encoder_baseline(n: int) -> int:
    from ag_ui.core import (
        RunFinishedEvent,
        RunStartedEvent,
        TextMessageContentEvent,
        TextMessageEndEvent,
        TextMessageStartEvent,
    )
    from ag_ui.encoder import EventEncoder

    encoder = EventEncoder()
    sent = 0

    async def send(message: dict[str, Any]) -> None:
        nonlocal sent
        sent += len(message.get("body", b""))

    await send(
        {
            "type": "http.response.body",
            "body": encoder.encode(RunStartedEvent(thread_id="t", run_id="r")).encode(),
        }
    )
    await send(
        {
            "type": "http.response.body",
            "body": encoder.encode(TextMessageStartEvent(message_id="m1")).encode(),
        }
    )
    for i in range(n):
        event = TextMessageContentEvent(message_id="m1", delta=f"tok{i} ")
        await send(
            {
                "type": "http.response.body",
                "body": encoder.encode(event).encode(),
                "more_body": True,
            }
        )
    await send(
        {
            "type": "http.response.body",
            "body": encoder.encode(TextMessageEndEvent(message_id="m1")).encode(),
        }
    )
    await send(
        {
            "type": "http.response.body",
            "body": encoder.encode(RunFinishedEvent(thread_id="t", run_id="r")).encode(),
        }
    )
    return sent


async def bench_server(n: int, runs: int) -> dict[str, Any]:
    app = AGUIServer(StreamingModel(n), signing_key=KEY, approval_store=InMemoryApprovalStore())
    body = json.dumps(
        {"threadId": "t", "runId": "r", "messages": [{"id": "u1", "role": "user", "content": "go"}]}
    ).encode()
    ours, floor, ratio = await paired(
        lambda: encoder_baseline(n), lambda: drive_asgi(app, body), runs
    )
    return report("c", f"server, {n} events", ours, floor, ratio)


# -- (d) pipeline -----------------------------------------------------------------------------


async def drain(client: Any, options: ChatOptions | None = None) -> int:
    count = 0
    async for _ in client.get_streaming_response("go", options):
        count += 1
    return count


async def bench_pipeline(n: int, runs: int) -> dict[str, Any]:
    import logging

    from agui_chat import ai_function
    from agui_chat.testing import ScriptedChatClient

    @ai_function
    def lookup(query: str) -> str:
        """A tool the model could call (it does not, here)."""
        return query

    logging.getLogger("agui_chat").setLevel(logging.WARNING)
    reply = " ".join(f"tok{i}" for i in range(n))
    bare = ScriptedChatClient(lambda messages, options: reply)
    piped = ChatClientBuilder(bare).use_logging().use_function_invocation().use_retry().build()
    options = ChatOptions(tools=[lookup])
    ours, floor, ratio = await paired(
        lambda: drain(bare, options), lambda: drain(piped, options), runs
    )
    bare.calls.clear()
    name = f"pipeline (function invocation + logging + retry), {n} updates"
    return report("d", name, ours, floor, ratio)


async def bench_pipeline_over_agui(n: int, runs: int) -> dict[str, Any]:
    import logging

    from agui_chat import ai_function

    @ai_function
    def lookup(query: str) -> str:
        """A tool the model could call (it does not, here)."""
        return query

    logging.getLogger("agui_chat").setLevel(logging.WARNING)
    http = asgi_client(sse_app(text_stream(n)))
    bare = AGUIChatClient("http://bench/", http_client=http)
    piped = ChatClientBuilder(bare).use_logging().use_function_invocation().use_retry().build()
    options = ChatOptions(conversation_id="t", tools=[lookup])
    ours, floor, ratio = await paired(
        lambda: drain(bare, options), lambda: drain(piped, options), runs
    )
    print(
        f"(d2) the same pipeline around AGUIChatClient, {n} events: ours {ours:.4f}s, "
        f"AGUIChatClient alone {floor:.4f}s, ratio {ratio:.2f}x"
    )
    return {"ours": ours, "floor": floor, "ratio": ratio}


# -- (e) (f) over real HTTP -------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Uvicorn:
    def __init__(self, app: Any) -> None:
        import uvicorn

        self.port = free_port()
        self.server = uvicorn.Server(
            uvicorn.Config(
                app,
                host="127.0.0.1",
                port=self.port,
                log_level="error",
                lifespan="off",
                backlog=2048,
                limit_concurrency=None,
            )
        )

    async def __aenter__(self) -> Uvicorn:
        self.task = asyncio.create_task(self.server.serve())
        while not self.server.started:
            await asyncio.sleep(0.01)
        return self

    async def __aexit__(self, *exc: Any) -> None:
        self.server.should_exit = True
        await self.task


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def chunked_app(n: int) -> Callable[..., Awaitable[None]]:
    """Streams ``n`` text events generated on the fly, 500 per write."""
    head = b"".join(text_stream(0)[:2])
    tail = b"".join(text_stream(0)[2:])

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        while (await receive()).get("more_body"):
            pass
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"text/event-stream")],
            }
        )
        await send({"type": "http.response.body", "body": head, "more_body": True})
        for start in range(0, n, 500):
            chunk = b"".join(
                b'data: {"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"tok%d "}\n\n' % i
                for i in range(start, min(n, start + 500))
            )
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": tail, "more_body": False})

    return app


async def bench_memory(n: int) -> dict[str, Any]:
    async with Uvicorn(chunked_app(n)) as server:
        url = f"http://127.0.0.1:{server.port}/"
        gc.collect()
        base = rss_mb()
        peak = base
        count = 0
        async with AGUIChatClient(url, timeout=300) as client:
            async for _update in client.get_streaming_response(
                "go", ChatOptions(conversation_id="t")
            ):
                count += 1
                if count % 50_000 == 0:
                    peak = max(peak, rss_mb())
        peak = max(peak, rss_mb())
    growth = peak - base
    verdict = "within budget" if growth <= 50 else "OVER BUDGET"
    print(
        f"(e) memory, {count} updates from {n} events consumed incrementally: "
        f"peak RSS growth {growth:.1f} MB (budget 50 MB)  {verdict}"
    )
    return {"events": n, "growth_mb": growth}


async def bench_concurrency(streams: int, per_stream: int) -> dict[str, Any]:
    app = AGUIServer(
        StreamingModel(per_stream), signing_key=KEY, approval_store=InMemoryApprovalStore()
    )
    async with Uvicorn(app) as server:
        url = f"http://127.0.0.1:{server.port}/"
        limits = httpx.Limits(max_connections=streams, max_keepalive_connections=streams)
        async with httpx.AsyncClient(limits=limits, timeout=120) as http:

            async def one(i: int) -> int:
                count = 0
                client = AGUIChatClient(url, http_client=http)
                async for _ in client.get_streaming_response(
                    "go", ChatOptions(conversation_id=f"t{i}")
                ):
                    count += 1
                return count

            start = time.perf_counter()
            counts = await asyncio.gather(*(one(i) for i in range(streams)))
            elapsed = time.perf_counter() - start
    total = sum(counts)
    complete = sum(1 for c in counts if c >= per_stream)
    print(
        f"(f) {streams} concurrent streams under uvicorn: {complete}/{streams} complete, "
        f"{total} updates in {elapsed:.2f}s = {total / elapsed:,.0f} events/s"
    )
    return {"complete": complete, "streams": streams, "events_per_s": total / elapsed}


# -- (s) SSE decoding ---------------------------------------------------------------------------


def bench_sse(n: int, runs: int) -> dict[str, Any]:
    from httpx_sse._decoders import SSEDecoder as HttpxSSEDecoder
    from httpx_sse._decoders import SSELineDecoder

    from agui_chat.agui.client._sse import SSEDecoder

    chunks = [b"".join(text_stream(n)[i : i + 100]) for i in range(0, n + 4, 100)]

    def ours() -> int:
        decoder = SSEDecoder()
        return sum(len(decoder.feed(chunk)) for chunk in chunks)

    def theirs() -> int:
        lines, events, count = SSELineDecoder(), HttpxSSEDecoder(), 0
        for chunk in chunks:
            for line in lines.decode(chunk.decode("utf-8")):
                if events.decode(line) is not None:
                    count += 1
        return count

    assert ours() == theirs()

    async def timed(fn: Callable[[], int]) -> int:
        return fn()

    mine, floor, ratio = asyncio.run(paired(lambda: timed(theirs), lambda: timed(ours), runs))
    print(
        f"(s) SSE decoding, {n} events in 100-event chunks: ours {mine:.4f}s, "
        f"httpx-sse {floor:.4f}s, ratio {ratio:.2f}x"
    )
    return {"ours": mine, "httpx_sse": floor, "ratio": ratio}


async def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--quick", action="store_true", help="tiny sizes, to prove the benchmarks run"
    )
    parser.add_argument("--only", default="abcdefs", help="which benchmarks, e.g. 'a,c'")
    args = parser.parse_args()
    only = set(args.only.replace(",", ""))
    q = args.quick
    n = 200 if q else 20_000
    runs = 1 if q else 7
    note = " (quick mode: sizes too small for figures)" if q else ""
    print(
        f"agui_chat benchmarks on {platform.python_implementation()} "
        f"{platform.python_version()}, {platform.machine()}, {os.cpu_count()} cores{note}"
    )
    results: dict[str, Any] = {}
    if "a" in only:
        results["a"] = await bench_client(n, runs)
    if "b" in only:
        results["b"] = await bench_mixed(2_000 if q else 20_000, runs)
    if "c" in only:
        results["c"] = await bench_server(n, runs)
    if "d" in only:
        # One run of (d) takes ~60 ms, so a few milliseconds of scheduling noise move one
        # ratio by 5%: take the median over three times as many pairs.
        results["d"] = await bench_pipeline(n, runs * 3)
        results["d2"] = await bench_pipeline_over_agui(n, runs)
    if "e" in only:
        results["e"] = await bench_memory(5_000 if q else 1_000_000)
    if "f" in only:
        results["f"] = await bench_concurrency(10 if q else 200, 20 if q else 200)
    if "s" in only:
        results["s"] = await asyncio.to_thread(bench_sse, n, runs)
    if q:
        return 0
    over = [k for k, r in results.items() if r.get("budget") and r["ratio"] > r["budget"]]
    over += ["e"] if "e" in results and results["e"]["growth_mb"] > 50 else []
    over += ["f"] if "f" in results and results["f"]["complete"] < results["f"]["streams"] else []
    print("all budgets hold" if not over else f"over budget: {', '.join(over)}")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
