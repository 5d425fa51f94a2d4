"""The tool loop's ``orchestrate_tools`` span around one request, as MEAI's
``FunctionInvokingChatClient`` opens it: current while the loop works, so the model calls'
``chat`` spans, the ``execute_tool`` spans and the person's events of the request are in it;
none under a span that already stands for the request (an ``invoke_agent`` span, or
``AGUIServer``'s run span), and none without an SDK (the loop then pays one check)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable
from typing import TypeVar

from opentelemetry import context, trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from .._contents import UsageContent
from .._responses import ChatResponseUpdate
from .._streams import close_stream
from .._usage import UsageDetails

ORCHESTRATE_TOOLS = "orchestrate_tools"
_T = TypeVar("_T")
_W3C = TraceContextTextMapPropagator()


def stands_for_a_request(span: Span) -> bool:
    """Whether ``span`` already groups one request's work: the GenAI conventions'
    ``invoke_agent [{agent}]`` span, or the SERVER ``agui.run`` span of ``AGUIServer``."""
    name = getattr(span, "name", None)
    if not isinstance(name, str):
        return False
    if name == "invoke_agent" or name.startswith("invoke_agent "):
        return True
    return name == "agui.run" and getattr(span, "kind", None) is SpanKind.SERVER


def link_to_paused(traceparents: Iterable[str]) -> None:
    """Link the current span (the request's) to the spans the answered requests were made in
    (W3C traceparents; one that does not parse links nothing), as ``AGUIServer``'s run span
    links to the run that paused."""
    span = trace.get_current_span()
    for traceparent in dict.fromkeys(traceparents):
        paused = trace.get_current_span(_W3C.extract({"traceparent": traceparent}))
        if paused.get_span_context().is_valid:
            span.add_link(paused.get_span_context(), {"agui.link": "paused_run"})


async def in_request_span(
    start: Callable[[], Span],
    steps: AsyncIterator[_T],
    usage_of: Callable[[], UsageDetails | None],
    error_type: Callable[[BaseException], str],
) -> AsyncIterator[_T]:
    """``steps`` (the loop of one request), each step run with the request's span (made by
    ``start`` on the first step) current. The span ends with the loop: with its token usage
    (what the streamed updates carried, else ``usage_of()``), or failed with the exception's
    ``error.type``."""
    span = start()
    current = trace.set_span_in_context(span)
    streamed: UsageDetails | None = None
    failed: str | None = None
    try:
        while True:
            token = context.attach(current)
            try:
                item = await anext(steps)
            except StopAsyncIteration:
                return
            except Exception as exc:
                failed = error_type(exc)
                raise
            finally:
                context.detach(token)
            if item.__class__ is ChatResponseUpdate:
                for content in item.contents:  # type: ignore[attr-defined]
                    if content.__class__ is UsageContent:
                        details = content.details
                        streamed = details if streamed is None else streamed + details
            yield item
    finally:
        await close_stream(steps)
        usage = usage_of() if streamed is None else streamed
        if usage is not None:
            for name, count in (
                ("gen_ai.usage.input_tokens", usage.input_token_count),
                ("gen_ai.usage.output_tokens", usage.output_token_count),
            ):
                if count is not None:
                    span.set_attribute(name, count)
        if failed is not None:
            span.set_attribute("error.type", failed)
            span.set_status(Status(StatusCode.ERROR, failed))
        span.end()
