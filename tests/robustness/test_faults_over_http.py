"""Faults over real HTTP (uvicorn on 127.0.0.1): a server that dies or stalls mid-stream, rate
limits and outages before the first event, a refused connection, a slow reader, and a resume
whose response is lost in transit. No fault may turn into a success, run a tool twice or
lose an answer."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx
import pytest
from robustness_apps import StreamingModel
from robustness_http import (
    SSE_HEADERS,
    SideEffects,
    delete_call,
    free_port,
    scripted,
)

from agui_chat import (
    ChatMessage,
    FunctionResultContent,
    ServiceTimeoutError,
    ToolApprovalRequestContent,
    TransportError,
    TruncatedStreamError,
    ai_function,
    approval_required,
)
from agui_chat.agui import AGUIChatClient, AGUIServer
from agui_chat.agui.server._claims import LOST_RESULT
from agui_chat.stores import InMemoryApprovalStore
from agui_server import agui_server
from conftest import HTTP_TESTS, ServerProcess, StartServer

#: Every wait on the other side of a socket is bounded by this (seconds).
BOUND = 10.0

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

pytestmark = HTTP_TESTS


async def read_body(receive: Receive) -> dict[str, Any]:
    body, more = b"", True
    while more:
        message = await receive()
        body += message.get("body", b"")
        more = message.get("more_body", False)
    parsed: dict[str, Any] = json.loads(body)
    return parsed


def frame(event: dict[str, Any]) -> bytes:
    return f"data: {json.dumps(event)}\n\n".encode()


def run_events(body: dict[str, Any], text: str = "ok") -> list[dict[str, Any]]:
    """A whole, valid run answering ``body`` with one text message."""
    ids = {"threadId": body["threadId"], "runId": body["runId"]}
    return [
        {"type": "RUN_STARTED", **ids},
        {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": text},
        {"type": "TEXT_MESSAGE_END", "messageId": "m1"},
        {"type": "RUN_FINISHED", **ids},
    ]


async def send_events(send: Send, events: list[dict[str, Any]], *, end: bool = True) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
    for event in events:
        await send({"type": "http.response.body", "body": frame(event), "more_body": True})
    if end:
        await send({"type": "http.response.body", "body": b"", "more_body": False})


async def wait_for_disconnect(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


def client_for(url: str, **settings: Any) -> AGUIChatClient:
    settings.setdefault("timeout", BOUND)
    return AGUIChatClient(url, **settings)


# -- the server dies mid-stream ---------------------------------------------------------------


class DiesMidStream:
    """Sends RUN_STARTED and half a message; then the app crashes (the connection is
    aborted) or ends the response cleanly without finishing the run."""

    def __init__(self, how: str) -> None:
        self.how = how

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = await read_body(receive)
        await send_events(send, run_events(body)[:3], end=False)
        if self.how == "crashes":
            raise RuntimeError("the agent process crashed")
        await send({"type": "http.response.body", "body": b"", "more_body": False})


@pytest.mark.parametrize(
    ("how", "error"), [("crashes", TransportError), ("ends early", TruncatedStreamError)]
)
async def test_a_server_that_dies_mid_stream_is_a_typed_error_never_a_success(
    live_server: StartServer, how: str, error: type[Exception]
) -> None:
    url = await live_server(DiesMidStream(how))
    seen: list[str] = []
    async with client_for(url, max_retries=0) as client:
        with pytest.raises(error):
            async for update in client.get_streaming_response("hi"):
                seen.append(update.raw_representation["type"])
    assert seen == ["RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT"]


async def test_a_server_process_killed_mid_stream_is_a_transport_error(
    server_process: Callable[[str], ServerProcess],
) -> None:
    server = server_process("stall")
    await server.wait_ready()
    seen: list[str] = []
    async with client_for(server.url, max_retries=0) as client:
        with pytest.raises(TransportError, match="while reading the event stream"):
            async for update in client.get_streaming_response("hi"):
                seen.append(update.raw_representation["type"])
                if len(seen) == 3:
                    server.kill()  # SIGKILL: no goodbye on the socket
    assert seen == ["RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT"]


# -- the server stalls ------------------------------------------------------------------------


class Stalls:
    """Sends the response head and, unless ``before_first_event``, RUN_STARTED; then writes
    nothing until the client goes away. Counts requests."""

    def __init__(self, *, before_first_event: bool) -> None:
        self.before_first_event = before_first_event
        self.requests = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.requests += 1
        body = await read_body(receive)
        events = [] if self.before_first_event else run_events(body)[:1]
        await send_events(send, events, end=False)
        await asyncio.wait_for(wait_for_disconnect(receive), BOUND)


async def test_a_stall_mid_stream_is_our_timeout_error_and_is_not_retried(
    live_server: StartServer,
) -> None:
    app = Stalls(before_first_event=False)
    url = await live_server(app)
    seen: list[str] = []
    async with client_for(url, timeout=0.3, max_retries=2) as client:
        with pytest.raises(ServiceTimeoutError, match="while reading the event stream") as caught:
            async for update in client.get_streaming_response("hi"):
                seen.append(update.raw_representation["type"])
    assert not isinstance(caught.value, httpx.TimeoutException)
    assert seen == ["RUN_STARTED"]
    assert app.requests == 1


async def test_a_stall_before_the_first_event_is_retried_then_our_timeout_error(
    live_server: StartServer,
) -> None:
    app = Stalls(before_first_event=True)
    url = await live_server(app)
    async with client_for(url, timeout=0.3, max_retries=1) as client:
        client._transport.retry_initial_delay = 0.01  # keep the backoff short
        with pytest.raises(ServiceTimeoutError, match="before the first event") as caught:
            await client.get_response("hi")
    assert not isinstance(caught.value, httpx.TimeoutException)
    assert app.requests == 2


# -- rate limits and outages ------------------------------------------------------------------


class FailsFirst:
    """Answers the first requests with ``failures`` (status, headers), then a whole run.
    Records when each request arrived."""

    def __init__(self, *failures: tuple[int, dict[str, str]]) -> None:
        self.failures = list(failures)
        self.arrivals: list[float] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.arrivals.append(time.monotonic())
        body = await read_body(receive)
        if self.failures:
            status, headers = self.failures.pop(0)
            raw = [(k.encode(), v.encode()) for k, v in headers.items()]
            await send({"type": "http.response.start", "status": status, "headers": raw})
            await send({"type": "http.response.body", "body": b"try again later"})
            return
        await send_events(send, run_events(body, "recovered"))


def recording_sleeps(client: AGUIChatClient) -> list[float]:
    """Record each backoff delay the client chooses, and really wait it."""
    delays: list[float] = []

    async def sleep(delay: float) -> None:
        delays.append(delay)
        await asyncio.sleep(delay)

    client._transport._sleep = sleep
    return delays


async def test_a_429_with_retry_after_is_waited_out_and_then_succeeds(
    live_server: StartServer,
) -> None:
    app = FailsFirst((429, {"retry-after": "1"}))
    url = await live_server(app)
    async with client_for(url) as client:
        delays = recording_sleeps(client)
        response = await client.get_response("hi")
    assert response.text == "recovered"
    assert len(app.arrivals) == 2
    assert delays == [1.0]  # the backoff of a first retry is below one second
    assert app.arrivals[1] - app.arrivals[0] >= 1.0


async def test_a_503_then_success_is_retried_and_succeeds(live_server: StartServer) -> None:
    app = FailsFirst((503, {}))
    url = await live_server(app)
    async with client_for(url) as client:
        client._transport.retry_initial_delay = 0.01
        response = await client.get_response("hi")
    assert response.text == "recovered"
    assert len(app.arrivals) == 2


async def test_a_refused_connection_is_retried_and_succeeds_once_the_server_is_up(
    live_server: StartServer,
) -> None:
    app = FailsFirst()
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    async with client_for(url) as client:
        starts: list[str] = []

        async def start_server_then_wait(delay: float) -> None:
            # The first attempt was refused: bring the server up before the retry.
            starts.append(await live_server(app, port=port))

        client._transport._sleep = start_server_then_wait
        response = await client.get_response("hi")
    assert response.text == "recovered"
    assert starts == [url]
    assert len(app.arrivals) == 1


# -- a slow reader ----------------------------------------------------------------------------


async def test_a_slow_reader_gets_every_event_while_the_server_holds_a_bounded_amount(
    live_server: StartServer,
) -> None:
    updates, size = 1000, 32 * 1024  # 32 MiB of text in all
    model = StreamingModel(updates, size=size)
    url = await live_server(agui_server(model).app)
    async with client_for(url, max_retries=0) as client:
        stream = client.get_streaming_response("hi")
        received = [update async for update in _take(stream, 3)]
        # The reader stops. Back-pressure must stop the run soon after instead of piling
        # the rest of it up in memory: what is in flight (the server's buffers and both
        # kernels' socket buffers) stays a few MiB.
        await _until_steady(lambda: model.produced)
        in_flight = (model.produced - len(received)) * size
        received += [update async for update in stream]
    assert in_flight < 16 * 1024 * 1024, f"{in_flight} bytes ran ahead of a stalled reader"
    assert received[-1].raw_representation["type"] == "RUN_FINISHED"
    assert sum(len(u.text) for u in received) == updates * size


async def _take(stream: AsyncIterator[Any], count: int) -> AsyncIterator[Any]:
    for _ in range(count):
        yield await stream.__anext__()


async def _until_steady(value: Callable[[], int]) -> None:
    """Wait (bounded) until ``value()`` has not changed for a few polls."""
    last, steady = -1, 0
    for _ in range(int(BOUND / 0.02)):
        current = value()
        steady = steady + 1 if current == last else 0
        if steady >= 10:
            return
        last = current
        await asyncio.sleep(0.02)
    raise AssertionError("the value never settled")


# -- a resume lost in transit -----------------------------------------------------------------


class CutsTheFirstResume:
    """A proxy in front of the server: for the first resume request it relays the response
    only up to RUN_STARTED, lets the server finish the run unseen, then drops the
    connection (as a proxy that timed out would)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.cut = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = json.dumps(await read_body(receive)).encode()
        replayed = False

        async def replay() -> dict[str, Any]:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        if b'"resume"' not in body or self.cut:
            await self.app(scope, replay, send)
            return
        self.cut += 1
        relayed = bytearray()
        done = False

        async def relay_until_run_started(message: dict[str, Any]) -> None:
            nonlocal done
            if message["type"] == "http.response.start":
                await send(message)
                return
            if done:
                return  # the rest of the run never reaches the client
            relayed.extend(message.get("body", b""))
            end = relayed.find(b"\n\n", relayed.find(b"RUN_STARTED"))
            if end >= 0:
                done = True
                part = bytes(relayed[: end + 2])
                await send({"type": "http.response.body", "body": part, "more_body": True})

        await self.app(scope, replay, relay_until_run_started)
        raise ConnectionAbortedError("the proxy dropped the connection")


class DropsTheFirstResume(httpx.AsyncBaseTransport):
    """A client-side transport that, for the first resume request, reads the response up to
    RUN_STARTED and then drops the connection."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.dropped = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        if b'"resume"' not in request.content or self.dropped:
            return response
        self.dropped += 1
        return httpx.Response(
            response.status_code,
            headers=response.headers,
            stream=_UntilRunStarted(response.stream),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self.inner.aclose()


class _UntilRunStarted(httpx.AsyncByteStream):
    def __init__(self, inner: Any) -> None:
        self.inner = inner

    async def __aiter__(self) -> AsyncIterator[bytes]:
        seen = b""
        async for chunk in self.inner:
            seen += chunk
            end = seen.find(b"\n\n", seen.find(b"RUN_STARTED"))
            if end >= 0:
                yield seen[: end + 2]
                break
        await self.inner.aclose()
        raise httpx.ReadError("the connection dropped")

    async def aclose(self) -> None:
        await self.inner.aclose()


async def _pause_and_answer(client: AGUIChatClient) -> list[ChatMessage]:
    """Run until the approval pause; return the history with the approval appended."""
    history = [ChatMessage("user", "delete a.txt")]
    paused = await client.get_response(history)
    (request,) = paused.input_requests
    assert isinstance(request, ToolApprovalRequestContent)
    return [*history, *paused.messages, ChatMessage("user", [request.create_response(True)])]


def _results(messages: list[ChatMessage]) -> dict[str, Any]:
    return {
        c.call_id: c.result
        for m in messages
        for c in m.contents
        if isinstance(c, FunctionResultContent)
    }


def _approval_app(effects: SideEffects, **settings: Any) -> AGUIServer:
    model = scripted(delete_call(), "Deleted it.")  # one pause, one resume: no more
    tool = settings.pop("tool", None) or effects.delete_file()
    return agui_server(model, tools=[tool], **settings).app


async def test_a_resume_whose_response_a_proxy_cut_off_can_be_sent_again_and_runs_once(
    live_server: StartServer,
) -> None:
    effects = SideEffects()
    url = await live_server(CutsTheFirstResume(_approval_app(effects)))
    async with client_for(url, max_retries=0) as client:
        history = await _pause_and_answer(client)
        with pytest.raises(TransportError):
            await client.get_response(history)
        again = await client.get_response(history)
    assert effects.count("delete_file") == 1
    assert _results(again.messages) == {"c1": "deleted a.txt"}


async def test_a_resume_the_client_dropped_after_run_started_can_be_sent_again_and_runs_once(
    live_server: StartServer,
) -> None:
    effects = SideEffects()
    url = await live_server(_approval_app(effects))
    transport = DropsTheFirstResume()
    http = httpx.AsyncClient(transport=transport, timeout=BOUND)
    async with http, client_for(url, http_client=http, max_retries=0) as client:
        history = await _pause_and_answer(client)
        with pytest.raises(TransportError):
            await client.get_response(history)
        again = await client.get_response(history)
    assert transport.dropped == 1
    assert effects.count("delete_file") == 1
    assert _results(again.messages) == {"c1": "deleted a.txt"}


class SlowStore(InMemoryApprovalStore):
    """A networked store, as the server sees it: the first ``claim`` is written at once but
    its reply is held back, or the first ``record_result`` is held back before it is
    written, until the test releases ``reply``; ``holding`` is set once it holds one back."""

    def __init__(self, slow: str) -> None:
        super().__init__()
        self.slow = slow
        self.reply = asyncio.Event()
        self.holding = asyncio.Event()

    async def claim(self, key: str, *, expires_at: float | None, **lease: Any) -> bool:
        claimed = await super().claim(key, expires_at=expires_at, **lease)
        if self.slow == "claim":
            self.slow = ""
            self.holding.set()
            await asyncio.wait_for(self.reply.wait(), BOUND)
        return claimed

    async def record_result(self, key: str, result: str, **kept: Any) -> None:
        if self.slow == "record_result":
            self.slow = ""
            self.holding.set()
            await asyncio.wait_for(self.reply.wait(), BOUND)
        await super().record_result(key, result, **kept)


class SeesTheClientLeave:
    """In front of the server: ``left`` is set when the server learns that a client went
    away before its response was complete."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.left = asyncio.Event()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        complete = False

        async def tracking_send(message: dict[str, Any]) -> None:
            nonlocal complete
            if message["type"] == "http.response.body" and not message.get("more_body"):
                complete = True
            await send(message)

        async def watching_receive() -> dict[str, Any]:
            message = await receive()
            if message["type"] == "http.disconnect" and not complete:
                self.left.set()
            return message

        await self.app(scope, watching_receive, tracking_send)


@pytest.mark.parametrize("slow", ["claim", "record_result"])
async def test_a_resume_abandoned_while_the_store_is_slow_can_be_sent_again_and_runs_once(
    live_server: StartServer, slow: str
) -> None:
    effects = SideEffects()
    store = SlowStore(slow)
    app = SeesTheClientLeave(_approval_app(effects, approval_store=store))
    url = await live_server(app)
    async with client_for(url, max_retries=0) as client:
        history = await _pause_and_answer(client)
        stream = client.get_streaming_response(history)
        first = asyncio.ensure_future(stream.__anext__())
        await asyncio.wait_for(store.holding.wait(), BOUND)
        if slow == "claim":
            # The resume is checked before the run starts: while the claim is held back,
            # nothing has been sent, so the client leaves before the first event.
            assert not first.done()
            first.cancel()
            await asyncio.gather(first, return_exceptions=True)
        else:
            update = await asyncio.wait_for(first, BOUND)
            assert update.raw_representation["type"] == "RUN_STARTED"
        await stream.aclose()  # type: ignore[attr-defined]
        await asyncio.wait_for(app.left.wait(), BOUND)
        await asyncio.sleep(0.1)  # the server cancels the run once it knows
        store.reply.set()  # the store's answer arrives after all
        again = await client.get_response(history)
    assert effects.count("delete_file") == 1
    assert _results(again.messages) == {"c1": "deleted a.txt"}


async def test_a_tool_the_client_abandoned_mid_run_is_never_run_again(
    live_server: StartServer,
) -> None:
    started, cancelled = asyncio.Event(), asyncio.Event()
    effects = SideEffects()

    @approval_required
    @ai_function
    async def delete_file(path: str) -> str:
        """Delete a file (slowly)."""
        effects.record("delete_file", path=path)
        started.set()
        try:
            await asyncio.wait_for(asyncio.Event().wait(), BOUND)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return f"deleted {path}"

    url = await live_server(_approval_app(effects, tool=delete_file))
    async with client_for(url, max_retries=0) as client:
        history = await _pause_and_answer(client)
        stream = client.get_streaming_response(history)
        await stream.__anext__()
        await asyncio.wait_for(started.wait(), BOUND)
        await stream.aclose()  # type: ignore[attr-defined]
        await asyncio.wait_for(cancelled.wait(), BOUND)
        # The tool began its side effect; whether it finished is unknown, so sending the
        # same answer again must not start it a second time: the call replays as lost
        # (issue 26), and the run goes on.
        again = await client.get_response(history)
    lost = [
        c.result for m in again.messages for c in m.contents if isinstance(c, FunctionResultContent)
    ]
    assert lost == [LOST_RESULT]
    assert effects.count("delete_file") == 1
