"""The ``agui.run`` OpenTelemetry span of one AG-UI run: CLIENT on the client, which sends
its W3C trace context with the request; SERVER on the server, which continues it and links
to the runs a resume answers. Without an SDK nothing records and each run pays one check.
Attributes: ``agui.thread.id``, ``agui.run.id``, ``agui.run.outcome`` (``success``,
``interrupt``, ``error``, ``cancelled``), ``agui.run.error_code`` and ``error.type``."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from opentelemetry import context, propagate, trace
from opentelemetry.trace import Span
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

_THREAD_ID = "agui.thread.id"
_RUN_ID = "agui.run.id"
_W3C = TraceContextTextMapPropagator()


def _link(traceparent: str) -> trace.Link | None:
    paused = trace.get_current_span(_W3C.extract({"traceparent": traceparent}))
    ctx = paused.get_span_context()
    return trace.Link(ctx, {"agui.link": "paused_run"}) if ctx.is_valid else None


class RunSpan:
    """One run's span (recording); attach it while the run's work happens."""

    def __init__(self, span: Span) -> None:
        self.span = span
        self._token: object = None

    def start(self, thread_id: str, run_id: str) -> dict[str, str]:
        """Name the run (a client knows its ids only once it builds the request) and return
        the W3C trace context headers that continue this span."""
        self.span.set_attribute(_THREAD_ID, thread_id)
        self.span.set_attribute(_RUN_ID, run_id)
        carrier: dict[str, str] = {}
        propagate.inject(carrier, context=trace.set_span_in_context(self.span))
        return carrier

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
        span.set_attribute("agui.run.outcome", outcome)
        if code is not None:
            span.set_attribute("agui.run.error_code", code)
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
    if isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        return None  # no SDK: no span would record (nothing to extract or build)
    parent = None
    if headers is not None:
        carrier = {
            k.decode("latin-1").lower(): v.decode("latin-1")
            for k, v in headers
            if k.lower() in (b"traceparent", b"tracestate")
        }
        parent = propagate.extract(carrier) if carrier else None
    ids = {_THREAD_ID: thread_id, _RUN_ID: run_id}
    span_attributes = {**(attributes or {}), **{k: v for k, v in ids.items() if v is not None}}
    span_links = [link for link in (_link(t) for t in links) if link is not None]
    span = trace.get_tracer("agui_chat.agui").start_span(
        "agui.run",
        context=parent,
        kind=trace.SpanKind.SERVER if kind == "server" else trace.SpanKind.CLIENT,
        attributes=span_attributes,
        links=span_links,
    )
    if not span.is_recording():
        span.end()
        return None
    return RunSpan(span)
