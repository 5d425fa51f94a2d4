"""AGUIServer hardening over real HTTP (uvicorn on 127.0.0.1): requests it must refuse, each
carrying an approval that would otherwise run a tool, and a thousand concurrent runs with a
tenth of the clients leaving mid-run."""

from __future__ import annotations

import asyncio
import base64
import json
from collections import Counter
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import pytest
import pytest_asyncio
from robustness_http import (
    SideEffects,
    approve,
    delete_call,
    history_from,
    interrupts_of,
    post_raw,
    refused_with,
    run_events,
    run_input,
    scripted,
    types,
    user,
)

from agui_chat.agui import AGUIChatClient
from agui_server import agui_server
from conftest import HTTP_TESTS, ServerProcess, StartServer

MAX_BODY = 64 * 1024

pytestmark = HTTP_TESTS


@dataclass
class Paused:
    """A server paused on one approval of ``delete_file``, and the resume that approves it."""

    url: str
    effects: SideEffects
    resume: dict[str, Any]

    async def approval_still_runs_once(self) -> None:
        """The legitimate resume still works afterwards: nothing was consumed by the refused
        request, and the tool runs exactly once."""
        events = await run_events(self.url, {**self.resume, "runId": "r-good"})
        assert types(events)[-1] == "RUN_FINISHED"
        assert self.effects.count("delete_file") == 1


@pytest_asyncio.fixture(loop_scope="module")
async def paused(live_server: StartServer) -> Paused:
    effects = SideEffects()
    model = scripted(delete_call(), "Deleted it.")
    app = agui_server(model, tools=[effects.delete_file()], max_body_bytes=MAX_BODY).app
    url = await live_server(app)
    first = run_input(user("delete a.txt"))
    events = await run_events(url, first)
    (interrupt,) = interrupts_of(events)
    resume = run_input(
        user("delete a.txt"), *history_from(events), run="r2", resume=[approve(interrupt)]
    )
    return Paused(url, effects, resume)


# -- refused before any run: an HTTP status ----------------------------------------------------


async def _chunks(data: bytes, size: int = 8192) -> AsyncIterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start : start + size]


def _padded(resume: dict[str, Any]) -> bytes:
    return json.dumps({**resume, "forwardedProps": {"pad": "x" * MAX_BODY}}).encode()


def _deep(resume: dict[str, Any]) -> bytes:
    text = json.dumps({**resume, "forwardedProps": {"deep": None}})
    return text.replace("null", "[" * 5000 + "]" * 5000).encode()


JSON = {"content-type": "application/json"}
#: (how the request is sent, expected status, expected code)
REFUSALS: dict[str, tuple[Callable[[dict[str, Any]], dict[str, Any]], int, str]] = {
    "oversized body": (
        lambda r: {"content": _padded(r), "headers": JSON},
        413,
        "BODY_TOO_LARGE",
    ),
    "oversized body without a length": (
        lambda r: {"content": _chunks(_padded(r)), "headers": JSON},
        413,
        "BODY_TOO_LARGE",
    ),
    "deeply nested JSON": (
        lambda r: {"content": _deep(r), "headers": JSON},
        400,
        "JSON_TOO_DEEP",
    ),
    "wrong content type": (
        lambda r: {"content": json.dumps(r).encode(), "headers": {"content-type": "text/plain"}},
        415,
        "UNSUPPORTED_MEDIA_TYPE",
    ),
    "not JSON": (
        lambda r: {"content": json.dumps(r).encode()[:-1], "headers": JSON},
        400,
        "INVALID_JSON",
    ),
    "wrong status value": (
        lambda r: {
            "content": json.dumps(
                {**r, "resume": [{**r["resume"][0], "status": "approved"}]}
            ).encode(),
            "headers": JSON,
        },
        422,
        "INVALID_INPUT",
    ),
}


@pytest.mark.parametrize("case", list(REFUSALS))
async def test_a_refused_request_gets_its_status_and_runs_nothing(
    paused: Paused, case: str
) -> None:
    request, status, code = REFUSALS[case]
    response = await post_raw(paused.url, **request(paused.resume))
    assert (response.status_code, response.json()["code"]) == (status, code)
    assert paused.effects.count("delete_file") == 0
    await paused.approval_still_runs_once()


# -- refused at the start of the run: RUN_ERROR ------------------------------------------------

#: (how the resume list is changed, expected RUN_ERROR code)
BAD_RESUMES: dict[str, tuple[Callable[[dict[str, Any]], list[dict[str, Any]]], str]] = {
    "unknown interrupt id": (
        lambda a: [{**a, "interruptId": "approval_c1"}],
        "RESUME_UNKNOWN_INTERRUPT",
    ),
    "duplicate answers": (lambda a: [a, a], "RESUME_DUPLICATE_ANSWER"),
    "payload failing the approval schema": (
        lambda a: [{**a, "payload": {"approved": "yes"}}],
        "RESUME_INVALID_PAYLOAD",
    ),
    "edited arguments failing the tool schema": (
        lambda a: [{**a, "payload": {"approved": True, "editedArgs": {"path": 7}}}],
        "RESUME_INVALID_PAYLOAD",
    ),
    "claims nested deeper than JSON can be read": (
        lambda a: [{**a, "interruptId": _deep_claims(a["interruptId"])}],
        "RESUME_UNKNOWN_INTERRUPT",
    ),
}


def _deep_claims(token: str) -> str:
    """``token`` with its claims replaced by an array nested 10 000 deep (the MAC kept)."""
    version, _, mac = token.split(".")
    deep = base64.urlsafe_b64encode(b"[" * 10_000 + b"]" * 10_000).rstrip(b"=").decode()
    return f"{version}.{deep}.{mac}"


@pytest.mark.parametrize("case", list(BAD_RESUMES))
async def test_a_bad_resume_gets_run_error_with_its_code_and_runs_nothing(
    paused: Paused, case: str
) -> None:
    change, code = BAD_RESUMES[case]
    body = {**paused.resume, "resume": change(paused.resume["resume"][0])}
    assert refused_with(await run_events(paused.url, body)) == code
    assert paused.effects.count("delete_file") == 0
    await paused.approval_still_runs_once()


# -- load -------------------------------------------------------------------------------------

#: Concurrent connections; every LEAVE_EVERY-th client disconnects after three events.
CONNECTIONS = 1000
LEAVE_EVERY = 10


async def _one_run(port: int, index: int) -> str:
    """One run over a raw socket (cheap on the client side, so the server is what is
    measured): ``"finished"``, ``"left"`` (this client hung up mid-run) or ``"broken"``."""
    body = json.dumps(run_input(user("stream please"), thread=f"t{index}", run=f"r{index}"))
    head = (
        f"POST / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        f"Accept: text/event-stream\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(head.encode() + body.encode())
        received = b""
        while chunk := await reader.read(65536):
            received += chunk
            if index % LEAVE_EVERY == 0 and received.count(b"data: ") >= 3:
                writer.transport.abort()  # gone mid-run, without a goodbye
                return "left"
        whole = received.endswith(b"0\r\n\r\n")  # the chunked body ended properly
        return "finished" if whole and b'"type":"RUN_FINISHED"' in received else "broken"
    finally:
        writer.close()


async def _settled(server: ServerProcess) -> dict[str, Any]:
    """The server's stats once no request is in flight (bounded wait)."""
    for _ in range(100):
        stats = await server.stats()
        if stats["in_flight"] == 0:
            return stats
        await asyncio.sleep(0.1)
    raise AssertionError(f"requests still in flight: {stats}")


async def test_a_thousand_concurrent_runs_with_a_tenth_leaving_complete_and_memory_returns(
    server_process: Callable[[str], ServerProcess],
) -> None:
    server = server_process("load")
    await server.wait_ready()
    # Warm up (imports, caches, first-use allocations), then take the baseline.
    await asyncio.gather(*(_one_run(server.port, i) for i in range(1, 21)))
    baseline = await _settled(server)

    outcomes = await asyncio.wait_for(
        asyncio.gather(*(_one_run(server.port, i) for i in range(CONNECTIONS))), 120
    )
    after = await _settled(server)

    assert Counter(outcomes) == {
        "finished": CONNECTIONS - CONNECTIONS // LEAVE_EVERY,
        "left": CONNECTIONS // LEAVE_EVERY,
    }
    assert after["peak_in_flight"] == CONNECTIONS  # they really were concurrent
    assert after["tasks"] == baseline["tasks"]  # no run left behind
    # The Python heap returns to its baseline (measured: within a few hundred blocks).
    assert after["blocks"] - baseline["blocks"] < 10_000, (baseline, after)
    # The resident set keeps the allocator's freed arenas (measured: about +35 MiB), so it
    # gets generous slack: it catches a leak of the runs, not fragmentation.
    assert after["rss_kib"] - baseline["rss_kib"] < 128 * 1024, (baseline, after)
    # And the server is still up: a client gets a whole run.
    async with AGUIChatClient(server.url, timeout=30, max_retries=0) as client:
        response = await client.get_response("still there?")
    assert response.text == "".join(f"{i % 10}" * 8 for i in range(30))
