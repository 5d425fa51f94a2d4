"""ASGI apps and models the robustness tests serve, in this process or in a child process
(``main`` runs one under uvicorn; the ``server_process`` fixture starts it)."""

from __future__ import annotations

import asyncio
import gc
import json
import sys
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from robustness_http import SIGNING_KEY

from agui_chat import BaseChatClient, ChatOptions, ChatResponseUpdate
from agui_chat._client import ChatMessages
from agui_chat.agui import AGUIServer
from agui_chat.stores import InMemoryApprovalStore

ASGIApp = Callable[[Any, Any, Any], Awaitable[None]]


class StreamingModel(BaseChatClient):
    """A model that streams ``updates`` text updates of ``size`` characters, sleeping
    ``delay`` seconds between them; ``produced`` counts the updates handed out so far."""

    def __init__(self, updates: int, *, size: int = 8, delay: float = 0.0) -> None:
        self.updates = updates
        self.size = size
        self.delay = delay
        self.produced = 0

    async def get_streaming_response(
        self, messages: ChatMessages, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        message_id = uuid.uuid4().hex
        for index in range(self.updates):
            if self.delay:
                await asyncio.sleep(self.delay)
            text = f"{index % 10}" * self.size
            self.produced += 1
            yield ChatResponseUpdate("assistant", text, message_id=message_id)


def with_stats(app: ASGIApp) -> ASGIApp:
    """``app`` plus ``GET /stats``: after a garbage collection, the Python heap in allocated
    blocks and the live asyncio tasks; the resident set size; the requests in flight and
    the most there ever were at once."""
    in_flight = peak = 0

    async def wrapped(scope: Any, receive: Any, send: Any) -> None:
        nonlocal in_flight, peak
        if scope["type"] == "http" and scope["path"] == "/stats":
            gc.collect()
            stats = {
                "blocks": sys.getallocatedblocks(),
                "tasks": len(asyncio.all_tasks()),
                "rss_kib": rss_kib(),
                "in_flight": in_flight,
                "peak_in_flight": peak,
            }
            headers = [(b"content-type", b"application/json")]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": json.dumps(stats).encode()})
            return
        in_flight += 1
        peak = max(peak, in_flight)
        try:
            await app(scope, receive, send)
        finally:
            in_flight -= 1

    return wrapped


def rss_kib(pid: int | str = "self") -> int:
    """The resident set size of a process, from ``/proc/<pid>/status``."""
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS in /proc status")


# -- the apps a child process can serve ------------------------------------------------------------


def load() -> ASGIApp:
    """An AGUIServer whose model streams 30 short updates 50 ms apart: a run lasts 1.5 s, so
    the load test's thousand clients are all connected before the first run ends, even on
    a busy machine (with 10 ms, 0.3 s, a busy client connected 972 of them in time)."""
    server = AGUIServer(
        StreamingModel(30, delay=0.05),
        signing_key=SIGNING_KEY,
        approval_store=InMemoryApprovalStore(),
    )
    return with_stats(server)


def stall() -> ASGIApp:
    """Sends RUN_STARTED and one text delta, then never writes again (until killed)."""

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = json.loads((await receive())["body"] or b"{}")
        started = {"type": "RUN_STARTED", "threadId": body["threadId"], "runId": body["runId"]}
        text = [
            {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"},
            {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "partial"},
        ]
        headers = [(b"content-type", b"text/event-stream")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        for event in (started, *text):
            chunk = f"data: {json.dumps(event)}\n\n".encode()
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await asyncio.Event().wait()

    return with_stats(app)


def main(name: str, port: int) -> None:
    """Serve the app ``name`` on 127.0.0.1:``port`` until the process is stopped."""
    import uvicorn

    factories = {"load": load, "stall": stall}
    uvicorn.run(
        factories[name](),
        host="127.0.0.1",
        port=port,
        log_level="warning",
        lifespan="off",
        backlog=4096,
    )


if __name__ == "__main__":  # pragma: no cover
    main(sys.argv[1], int(sys.argv[2]))
