"""The HTTP side of the AG-UI client: one POST per run, its SSE body, typed errors, and
retries with jittered backoff (honouring ``Retry-After``) only before the first event, which
the caller may already have seen otherwise. A stream that opens with a ``RUN_ERROR`` saying
the answers may be sent again after a wait (:data:`RETRY_SAME_ANSWER`) is retried too: the
server used nothing of them."""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from ..._exceptions import (
    AuthenticationError,
    ConnectError,
    HTTPStatusError,
    ProtocolError,
    RateLimitError,
    ResumeRetryError,
    ServiceTimeoutError,
    ServiceUnavailableError,
    TransientError,
    TransportError,
)
from ..._network_failure import network_failure
from ..._url_secrets import hide_in_logs, redact_url, userinfo_to_header
from ...middleware._retry import backoff_delay, parse_retry_after
from ._sse import SSEDecoder

logger = logging.getLogger("agui_chat.agui")

_SSE_MEDIA_TYPE = "text/event-stream"
_OURS = frozenset({"accept", "content-type"})
_BODY_PREVIEW = 300
#: The refusals of a resume that used nothing and ask for the same answers again after a
#: wait (``retryAfter``): the store is down, the answers are being run, or a dead worker's
#: claim is waiting out its lease (docs/errors.md).
RETRY_SAME_ANSWER = frozenset(
    {"APPROVAL_STORE_UNAVAILABLE", "RESUME_IN_PROGRESS", "RESUME_CLAIM_HELD"}
)
_STATUS_ERRORS: dict[int, type[HTTPStatusError]] = {
    401: AuthenticationError,
    403: AuthenticationError,
    429: RateLimitError,
    502: ServiceUnavailableError,
    503: ServiceUnavailableError,
    504: ServiceUnavailableError,
}


@dataclass
class EventStream:
    """An open response whose body is being read as SSE: ``ready`` holds the payloads read
    while waiting for the first event; ``run_id`` is the ``runId`` sent (a retry sends a new
    one)."""

    response: httpx.Response
    chunks: AsyncIterator[bytes]
    decoder: SSEDecoder
    ready: list[str]
    run_id: str = ""

    async def payload_batches(self) -> AsyncIterator[list[str]]:
        """The body's ``data`` payloads, a list per chunk (raises our ``TransportError``s)."""
        yield self.ready
        feed = self.decoder.feed
        try:
            async for chunk in self.chunks:  # an ended body stops at once
                payloads = feed(chunk)
                if payloads:
                    yield payloads
        except httpx.TransportError as exc:
            raise map_transport_error(exc, after_first_event=True) from exc


class AGUITransport:
    """POSTs run inputs to one AG-UI endpoint and opens each answer as an event stream;
    closes the ``httpx.AsyncClient`` only if it made it (``timeout`` applies to either)."""

    retry_initial_delay = 0.5
    retry_max_delay = 30.0

    def __init__(
        self,
        endpoint: str,
        http_client: httpx.AsyncClient | None,
        headers: Mapping[str, str] | None,
        timeout: float | httpx.Timeout | None,
        max_retries: int,
    ) -> None:
        if not endpoint.strip():
            raise ValueError("endpoint must be a non-empty URL string")
        if max_retries < 0:
            raise ValueError("max_retries must be an int >= 0")
        self.endpoint = endpoint
        # Its userinfo goes as the header httpx would make of it: never in httpx's log lines.
        self._url, headers = userinfo_to_header(endpoint, headers)
        hide_in_logs(self._url)  # a key in its query
        self.max_retries = max_retries
        self._timeout = timeout
        self._owns_client = http_client is None
        self.http_client = http_client if http_client is not None else httpx.AsyncClient()
        # The caller's Accept / Content-Type are dropped whatever their case: a second Accept
        # line (say "*/*") would admit protobuf, which this client cannot read (agui-wire §1.4).
        self._headers = {
            **{k: v for k, v in (headers or {}).items() if k.lower() not in _OURS},
            "Accept": _SSE_MEDIA_TYPE,
            "Content-Type": "application/json",
        }
        #: How the backoff waits; tests replace it to record the delays instead of sleeping.
        self._sleep: Callable[[float], Awaitable[None]] = asyncio.sleep

    async def aclose(self) -> None:
        """Close the http client if this transport created it; a caller's is left open."""
        if self._owns_client:
            await self.http_client.aclose()

    async def open(
        self, run_input: Mapping[str, Any], headers: Mapping[str, str] | None = None
    ) -> EventStream:
        """POST ``run_input`` (and ``headers``) and open its body, retrying ``TransientError``s
        until the first SSE ``data`` payload, each time as a new run (agui-wire §1.2)."""
        run_id: str = run_input["runId"]
        attempt = 1
        while True:
            content = json.dumps(run_input, ensure_ascii=False, separators=(",", ":"))
            try:
                stream = await self._attempt(content.encode(), headers)
            except TransientError as exc:
                if attempt > self.max_retries:
                    raise
                self._log_retry(attempt, exc)
                await self._sleep(self._backoff(attempt, exc))
                attempt += 1
                run_id = f"run_{uuid.uuid4().hex}"  # each try is a new run
                run_input = {**run_input, "runId": run_id}
                continue
            stream.run_id = run_id
            return stream

    async def _attempt(
        self, content: bytes, extra_headers: Mapping[str, str] | None = None
    ) -> EventStream:
        headers = {**self._headers, **extra_headers} if extra_headers else self._headers
        try:
            response = await self._post(content, headers)
            try:
                await _check_status(response)
                _check_media_type(response)
                decoder = SSEDecoder()
                chunks = response.aiter_bytes()
                ready: list[str] = []
                async for chunk in chunks:  # until the first event (the retry window)
                    ready = decoder.feed(chunk)
                    if ready:
                        break
                if ready:
                    _check_retry_refusal(ready[0], response)
                return EventStream(response, chunks, decoder, ready)
            except BaseException:
                await response.aclose()
                raise
        except httpx.TransportError as exc:
            raise map_transport_error(exc, after_first_event=False) from exc

    async def _post(self, content: bytes, headers: Mapping[str, str]) -> httpx.Response:
        """POST to the endpoint and open the answer. A redirect to the same URL with a
        trailing slash, on the same origin, is followed once and kept as the endpoint: that
        is how Starlette and FastAPI answer ``/agent`` for an app mounted at ``/agent``. Any
        other redirect is left for the status check to report (another origin never gets the
        body or the headers)."""
        for followed in (False, True):
            request = self.http_client.build_request(
                "POST", self._url, content=content, headers=headers, timeout=self._timeout
            )
            response = await self.http_client.send(request, stream=True)
            target = slash_redirect(response)
            if target is None or followed:
                break
            await response.aclose()
            logger.info(
                "the AG-UI endpoint %s redirects to %s; using that URL from now on",
                redact_url(str(request.url)),
                redact_url(target),
            )
            self.endpoint = self._url = target
        return response

    def _backoff(self, attempt: int, failure: TransientError) -> float:
        return backoff_delay(
            attempt,
            failure,
            initial_delay=self.retry_initial_delay,
            max_delay=self.retry_max_delay,
            max_retry_after=self.retry_max_delay,
        )

    def _log_retry(self, attempt: int, failure: TransientError) -> None:
        logger.info(
            "AG-UI request to %s failed before the first event (%s); retrying (attempt %d of %d)",
            redact_url(self.endpoint),
            failure,
            attempt + 1,
            self.max_retries + 1,
        )


def slash_redirect(response: httpx.Response) -> str | None:
    """The URL a ``307`` / ``308`` (which keep the method and the body) sends the request
    to, when it is the request's own URL with a trailing slash on the same scheme, host and
    port; else ``None``."""
    location = response.headers.get("Location")
    if response.status_code not in (307, 308) or not location:
        return None
    sent = response.request.url
    try:
        target = sent.join(location)
    except httpx.InvalidURL:
        return None
    same_origin = (target.scheme, target.host, target.port) == (sent.scheme, sent.host, sent.port)
    if same_origin and target.path == sent.path + "/" and target.query == sent.query:
        return str(target)
    return None


def map_transport_error(exc: httpx.TransportError, *, after_first_event: bool) -> TransportError:
    """Our ``TransportError`` (or subclass) for an httpx network failure, saying when (and,
    for a connection that failed, where, why and what to do)."""
    when = "while reading the event stream" if after_first_event else "before the first event"
    if isinstance(exc, httpx.ConnectError):
        try:
            where = f" {redact_url(str(exc.request.url))}"
        except RuntimeError:  # an error raised without its request
            where = ""
        why = network_failure(exc, advice=True) or str(exc)
        return ConnectError(f"could not connect to the AG-UI endpoint{where}: {why}")
    if isinstance(exc, httpx.TimeoutException):
        return ServiceTimeoutError(f"the AG-UI endpoint timed out {when}: {exc}")
    return TransportError(f"the connection to the AG-UI endpoint broke {when}: {exc!r}")


async def _check_status(response: httpx.Response) -> None:
    if response.is_success:
        return
    await response.aread()
    body = response.text
    status = response.status_code
    preview = body if len(body) <= _BODY_PREVIEW else body[:_BODY_PREVIEW] + "…"
    message = f"AG-UI endpoint answered HTTP {status} {response.reason_phrase}".rstrip()
    location = response.headers.get("Location") if 300 <= status < 400 else None
    if location:
        # Only a redirect to the same URL with a slash is followed: say where this one goes.
        shown = redact_url(location)
        shown = shown if len(shown) <= _BODY_PREVIEW else shown[:_BODY_PREVIEW] + "…"
        message = (
            f"AG-UI endpoint {redact_url(str(response.request.url))} answered HTTP {status} "
            f"{response.reason_phrase}, a redirect to {shown}, not followed (only the same URL "
            "with a trailing slash on the same origin is): use that URL as the endpoint if it "
            "is the agent's"
        )
    elif preview:
        message += f": {preview}"
    retry_after = parse_retry_after(response.headers.get("Retry-After"))
    raise _STATUS_ERRORS.get(status, HTTPStatusError)(
        message, status_code=status, body=body, retry_after=retry_after
    )


def _check_retry_refusal(first: str, response: httpx.Response) -> None:
    """Raise ``ResumeRetryError`` if the stream opens with a refusal to retry after a wait."""
    if '"RUN_ERROR"' not in first:
        return
    try:
        event = json.loads(first)
    except ValueError:
        return  # the event pipeline reports it
    if not isinstance(event, dict) or event.get("type") != "RUN_ERROR":
        return
    code = event.get("code")
    if code not in RETRY_SAME_ANSWER:
        return
    wait = event.get("retryAfter")
    if not isinstance(wait, int) or isinstance(wait, bool) or wait < 0:
        wait = parse_retry_after(response.headers.get("Retry-After"))
    raise ResumeRetryError(str(event.get("message", "")), code=code, retry_after=wait)


def _check_media_type(response: httpx.Response) -> None:
    media_type = response.headers.get("Content-Type", "").split(";", 1)[0].strip().lower()
    if media_type != _SSE_MEDIA_TYPE:
        raise ProtocolError(
            f"AG-UI endpoint answered Content-Type {media_type or '(none)'!r}, not "
            f"{_SSE_MEDIA_TYPE!r}; this client reads only server-sent events"
        )
