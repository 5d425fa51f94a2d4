"""OpenTelemetry spans for AG-UI runs, with ``opentelemetry-api`` (a base dependency).

The client opens a CLIENT span per run and sends its W3C trace context (``traceparent``,
``tracestate``) with the request; the server continues it with a SERVER span per run, so one
trace holds client run → server run → model calls → tool executions. Without an SDK (the
API's no-op tracer makes spans that do not record) nothing is traced, and each run pays one
check.

Attributes: ``agui.thread.id``, ``agui.run.id``, ``agui.run.outcome`` (``success``,
``interrupt``, ``error``, ``cancelled``) and, on ``RUN_ERROR``, ``agui.run.error_code`` and
``error.type`` (the code). A resumed run's server span links to the span of the run that
paused (the link's trace context travels inside the signed interrupt id).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from opentelemetry import context, propagate, trace
from opentelemetry.trace import Span

__all__ = [
    "RUN_ERROR_CODE",
    "RUN_ID",
    "RUN_OUTCOME",
    "RUN_SPAN_NAME",
    "THREAD_ID",
    "RunSpan",
    "start_run_span",
]

THREAD_ID = "agui.thread.id"
RUN_ID = "agui.run.id"
RUN_OUTCOME = "agui.run.outcome"
RUN_ERROR_CODE = "agui.run.error_code"
RUN_SPAN_NAME = "agui.run"
_SCOPE = "agui_chat.agui"
_TRACEPARENT = re.compile(r"^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$")


def _link(traceparent: str) -> trace.Link | None:
    found = _TRACEPARENT.match(traceparent)
    if found is None:
        return None
    ctx = trace.SpanContext(
        trace_id=int(found[1], 16),
        span_id=int(found[2], 16),
        is_remote=True,
        trace_flags=trace.TraceFlags(int(found[3], 16)),
    )
    return trace.Link(ctx, {"agui.link": "paused_run"}) if ctx.is_valid else None


class RunSpan:
    """One run's span (recording); attach it while the run's work happens."""

    def __init__(self, span: Span) -> None:
        self.span = span
        self._token: object = None

    def headers(self) -> dict[str, str]:
        """The W3C trace context headers that continue this span elsewhere."""
        carrier: dict[str, str] = {}
        propagate.inject(carrier, context=trace.set_span_in_context(self.span))
        return carrier

    def start(self, thread_id: str, run_id: str) -> dict[str, str]:
        """Name the run (a client knows its ids only once it builds the request) and return
        the headers that carry this span's trace context."""
        self.span.set_attribute(THREAD_ID, thread_id)
        self.span.set_attribute(RUN_ID, run_id)
        return self.headers()

    def attach(self) -> None:
        self._token = context.attach(trace.set_span_in_context(self.span))

    def detach(self) -> None:
        if self._token is not None:
            context.detach(self._token)  # type: ignore[arg-type]
            self._token = None

    def event(self, name: str, attributes: Mapping[str, Any]) -> None:
        self.span.add_event(name, dict(attributes))

    def end(
        self, outcome: str, code: str | None = None, error: BaseException | None = None
    ) -> None:
        span = self.span
        span.set_attribute(RUN_OUTCOME, outcome)
        if code is not None:
            span.set_attribute(RUN_ERROR_CODE, code)
        if outcome == "error":
            kind = code or (type(error).__name__ if error is not None else "_OTHER")
            span.set_attribute("error.type", kind)
            span.set_status(trace.Status(trace.StatusCode.ERROR, kind))
        span.end()

    @contextlib.contextmanager
    def ended_if_it_fails(self, cancelled: type[BaseException]) -> Iterator[None]:
        """Run the block; an exception out of it ends the span, as ``cancelled`` when it is
        a ``cancelled`` (the run was stopped) and as ``error`` otherwise, and goes on up."""
        try:
            yield
        except cancelled:
            self.end("cancelled")
            raise
        except BaseException as exc:
            self.end("error", error=exc)
            raise


def start_run_span(
    kind: str,
    thread_id: str | None,
    run_id: str | None,
    *,
    headers: Iterable[tuple[bytes, bytes]] | None = None,
    links: Iterable[str] = (),
    attributes: Mapping[str, Any] | None = None,
) -> RunSpan | None:
    """A ``client`` or ``server`` run span, or ``None`` when nothing would record it. A
    server span continues the trace context of ``headers`` (the request's, as ASGI gives
    them) and links to the spans named by ``links`` (W3C traceparents)."""
    tracer = trace.get_tracer(_SCOPE)
    parent = None
    if headers is not None:
        carrier = {
            k.decode("latin-1").lower(): v.decode("latin-1")
            for k, v in headers
            if k.lower() in (b"traceparent", b"tracestate")
        }
        parent = propagate.extract(carrier) if carrier else None
    span_attributes: dict[str, Any] = dict(attributes or {})
    if thread_id is not None:
        span_attributes[THREAD_ID] = thread_id
    if run_id is not None:
        span_attributes[RUN_ID] = run_id
    span_links = [link for link in (_link(t) for t in links) if link is not None]
    span = tracer.start_span(
        RUN_SPAN_NAME,
        context=parent,
        kind=trace.SpanKind.SERVER if kind == "server" else trace.SpanKind.CLIENT,
        attributes=span_attributes,
        links=span_links,
    )
    if not span.is_recording():
        span.end()
        return None
    return RunSpan(span)
