"""The tool loop's tracing with ``opentelemetry-api`` (no-op without an SDK): an
``orchestrate_tools`` span per request, as MEAI's ``FunctionInvokingChatClient`` opens it
(current while the loop works, so the request's ``chat`` and ``execute_tool`` spans and the
person's events are in it; none under a span that already stands for the request, and none
without an SDK: the loop then pays one check), an ``execute_tool {name}`` span per tool call,
the person's part as events on the current span (the request's; inside ``AGUIServer``, the
run's SERVER span, which stands for the request), and their metrics.
:data:`REQUESTED_AT` and :data:`TRACEPARENT`, stamped on a request only while something
records, carry a pause across requests and workers."""

from __future__ import annotations

import time
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from opentelemetry import context, trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from .._contents import FunctionCallContent, UsageContent
from .._exceptions import AGUIChatError
from .._hitl_contents import (
    InputRequestContent,
    InputResponseContent,
    InterruptRequestContent,
    InterruptResponseContent,
    ToolApprovalRequestContent,
    ToolApprovalResponseContent,
)
from .._responses import ChatResponseUpdate
from .._streams import close_stream
from .._tools import AITool
from .._usage import UsageDetails
from .._version import __version__
from ..consent._audit import Verdict
from ..consent._grants import Grant
from ._invocation import InvocationOutcome
from ._otel_content import to_json

if TYPE_CHECKING:
    from opentelemetry.metrics import Meter, MeterProvider

#: Every tracer's and meter's schema: GenAI names are Semantic Conventions v1.44.0's.
SCHEMA_URL = "https://opentelemetry.io/schemas/1.44.0"
TOOL_OUTCOME = "agui_chat.tool.outcome"  # ran | failed | input_required | rejected | not_found
TOOL_CALL_ID = "gen_ai.tool.call.id"
ORCHESTRATE_TOOLS = "orchestrate_tools"
_DECISION_BUCKETS = [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200, 21600, 86400]  # seconds

#: ``additional_properties`` key of a request: when it was made (epoch seconds, a float).
REQUESTED_AT = "agui_chat.requested_at"
#: ``additional_properties`` key of a request: the W3C traceparent of the paused run's span.
TRACEPARENT = "agui_chat.traceparent"
_T = TypeVar("_T")
_W3C = TraceContextTextMapPropagator()


def tracer(provider: trace.TracerProvider | None) -> trace.Tracer:
    return trace.get_tracer("agui_chat", __version__, provider, SCHEMA_URL)


def meter(provider: MeterProvider) -> Meter:
    return provider.get_meter("agui_chat", __version__, SCHEMA_URL)


def error_type(exc: BaseException) -> str:
    """``error.type``: our typed errors by class name, others by qualified name."""
    kind = type(exc)
    if isinstance(exc, AGUIChatError) or kind.__module__ == "builtins":
        return kind.__name__
    return f"{kind.__module__}.{kind.__qualname__}"


def metrics_enabled() -> bool:
    """Whether a meter provider other than the API's no-op default has been set (read from
    the API's global; the metrics API is imported here, not with ``agui_chat``: DESIGN §6)."""
    from opentelemetry.metrics import _internal

    provider = getattr(_internal, "_METER_PROVIDER", None)
    return provider is not None and not isinstance(provider, _internal.NoOpMeterProvider)


def traceparent_of_current() -> str | None:
    """The W3C ``traceparent`` of the current span, if it is a valid one."""
    ctx = trace.get_current_span().get_span_context()
    if not ctx.is_valid:
        return None
    return f"00-{ctx.trace_id:032x}-{ctx.span_id:016x}-{int(ctx.trace_flags):02x}"


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


class _Instruments:
    """The person's metrics on one meter provider."""

    def __init__(self, provider: MeterProvider) -> None:
        made = meter(provider)
        self.approvals = made.create_counter(
            "agui_chat.approvals", unit="{approval}", description="Approval decisions by outcome"
        )
        self.decisions = made.create_histogram(
            "agui_chat.decision.duration",
            unit="s",
            description="Time from a request for a person to their answer",
            explicit_bucket_boundaries_advisory=_DECISION_BUCKETS,
        )


#: The instruments on each global meter provider, made on first record.
_GLOBAL_INSTRUMENTS: weakref.WeakKeyDictionary[MeterProvider, _Instruments] = (
    weakref.WeakKeyDictionary()
)


def _failed(span: Span, error: BaseException | None) -> None:
    span.set_attribute(TOOL_OUTCOME, "failed")
    span.set_attribute("error.type", error_type(error) if error is not None else "_OTHER")
    span.set_status(Status(StatusCode.ERROR, type(error).__name__ if error else None))


class ToolTracing:
    """Tool spans, human-in-the-loop events and their metrics (``docs/observability.md``).
    The providers default to the global ones, read when something is recorded (so an SDK
    configured later is used)."""

    def __init__(
        self,
        *,
        tracer_provider: trace.TracerProvider | None = None,
        meter_provider: MeterProvider | None = None,
        capture_content: bool = False,
    ) -> None:
        self.capture_content = capture_content
        self._tracer_provider = tracer_provider
        self._tracer = tracer(tracer_provider)
        self._own = _Instruments(meter_provider) if meter_provider is not None else None

    def _instruments(self) -> _Instruments | None:
        if self._own is not None or not metrics_enabled():
            return self._own
        from opentelemetry.metrics import get_meter_provider

        provider = get_meter_provider()
        if provider not in _GLOBAL_INSTRUMENTS:
            _GLOBAL_INSTRUMENTS[provider] = _Instruments(provider)
        return _GLOBAL_INSTRUMENTS[provider]

    def _traces(self) -> bool:
        """Whether the tracer's provider is a real one (not the API's proxy or no-op)."""
        provider = self._tracer_provider or trace.get_tracer_provider()
        return not isinstance(provider, (trace.ProxyTracerProvider, trace.NoOpTracerProvider))

    def opens_request_span(self) -> bool:
        """Whether a request starting now gets its own span: something records, and no span
        that stands for a request (``invoke_agent``, ``AGUIServer``'s run) is current."""
        return self._traces() and not stands_for_a_request(trace.get_current_span())

    async def in_request_span(
        self, steps: AsyncIterator[_T], usage_of: Callable[[], UsageDetails | None]
    ) -> AsyncIterator[_T]:
        """``steps`` (the loop of one request), each step run with the request's new
        ``orchestrate_tools`` span (MEAI's name and kind for it; made on the first step) current.
        The span ends with the loop: with its token usage (what the streamed updates carried,
        else ``usage_of()``), or failed with the exception's ``error.type``."""
        span = self._tracer.start_span(ORCHESTRATE_TOOLS, kind=SpanKind.INTERNAL)
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

    def records(self) -> bool:
        """Whether anything would record a span, an event on the current span or a metric."""
        return (
            self._traces()
            or self._instruments() is not None
            or trace.get_current_span().is_recording()
        )

    def _tool_span(self, call: FunctionCallContent, tool: AITool | None, **extra: Any) -> Span:
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": call.name,
            TOOL_CALL_ID: call.call_id,
            "gen_ai.tool.type": "function",
        }
        description = getattr(tool, "description", None)
        if isinstance(description, str) and description:
            attributes["gen_ai.tool.description"] = description
        if self.capture_content and call.arguments is not None:
            attributes["gen_ai.tool.call.arguments"] = to_json(call.arguments)
        return self._tracer.start_span(
            f"execute_tool {call.name}", kind=SpanKind.INTERNAL, attributes={**attributes, **extra}
        )

    async def tool(
        self, call: FunctionCallContent, tool: AITool, invocation: Awaitable[InvocationOutcome]
    ) -> InvocationOutcome:
        """Run ``invocation`` (the tool's execution) in its span and return its outcome."""
        if not self._traces():  # no SDK: one check per call
            return await invocation
        span = self._tool_span(call, tool)
        if not span.is_recording():  # sampled out: no span to keep current
            span.end()
            return await invocation
        try:
            with trace.use_span(span, end_on_exit=False, record_exception=False):
                outcome = await invocation
        except BaseException as exc:
            _failed(span, exc)
            span.end()
            raise
        if outcome.input_required is not None:
            span.set_attribute(TOOL_OUTCOME, "input_required")
        elif outcome.failed:
            _failed(span, outcome.exception)
        else:
            span.set_attribute(TOOL_OUTCOME, "ran")
        if self.capture_content and outcome.result is not None:
            span.set_attribute("gen_ai.tool.call.result", to_json(outcome.result.result))
        span.end()
        return outcome

    def tool_not_found(self, call: FunctionCallContent) -> None:
        """The model called a tool nobody has: a span that says so."""
        if self._traces():
            extra = {TOOL_OUTCOME: "not_found", "error.type": "tool_not_found"}
            span = self._tool_span(call, None, **extra)
            span.set_status(Status(StatusCode.ERROR, "tool not found"))
            span.end()

    def requested(self, request: InputRequestContent) -> None:
        """The run pauses on ``request``: stamp it, and an event on the current span."""
        if not self.records():
            return  # nothing would use the stamps: the request stays as it was made
        properties = request.additional_properties
        if properties is None:
            properties = request.additional_properties = {}
        properties.setdefault(REQUESTED_AT, time.time())
        parent = traceparent_of_current()
        if parent is not None:
            properties.setdefault(TRACEPARENT, parent)
        attributes = _about(request)
        if isinstance(request, ToolApprovalRequestContent):
            kind, arguments = "approval", request.tool_call.arguments
            if self.capture_content and arguments is not None:
                attributes["gen_ai.tool.call.arguments"] = to_json(arguments)
        else:
            assert isinstance(request, InterruptRequestContent)
            kind = "input"
            if self.capture_content and request.message is not None:
                attributes["agui_chat.input.message"] = request.message
        trace.get_current_span().add_event(f"agui_chat.{kind}.requested", attributes)

    def expired(self, request_ids: Sequence[str]) -> None:
        """Answers came for requests past their expiry (and were refused)."""
        span = trace.get_current_span()
        for request_id in request_ids:
            span.add_event("agui_chat.request.expired", {"agui_chat.request.id": request_id})

    def resumed(
        self,
        answered: Sequence[tuple[InputRequestContent, InputResponseContent]],
        call_ids: set[str],
    ) -> list[str]:
        """Events, metrics per answer (``answered``: each request with its answer, as the
        resume plan paired them) to ``call_ids``; returns the traceparents the answered
        requests were stamped with."""
        paused: list[str] = []
        if not self.records():
            return paused
        requests = {request.request_id: request for request, _ in answered}
        answers = [
            answer
            for _, answer in answered
            if isinstance(answer, (ToolApprovalResponseContent, InterruptResponseContent))
        ]
        stamped = any(_requested_at(requests.get(a.request_id)) is not None for a in answers)
        seen: set[str] = set()
        now = time.time()
        for answer in answers:
            request = requests.get(answer.request_id)
            if request is None or answer.request_id in seen:
                continue
            at = _requested_at(request)
            if stamped and at is None:
                continue  # an earlier answer carried along (a tool that asked twice)
            seen.add(answer.request_id)
            attributes = _about(request)
            if attributes.get(TOOL_CALL_ID) in call_ids:
                seconds = None if at is None else max(0.0, now - at)
                self._decided(request, answer, attributes, seconds)
                traceparent = (request.additional_properties or {}).get(TRACEPARENT)
                if isinstance(traceparent, str):
                    paused.append(traceparent)
        return paused

    def _decided(
        self,
        request: InputRequestContent,
        answer: ToolApprovalResponseContent | InterruptResponseContent,
        attributes: dict[str, Any],
        seconds: float | None,
    ) -> None:
        instruments = self._instruments()
        if isinstance(answer, ToolApprovalResponseContent):
            assert isinstance(request, ToolApprovalRequestContent)
            kind, reason = "approval", answer.reason
            attributes["agui_chat.approval.reason_given"] = bool(reason and reason.strip())
            if self.capture_content and reason:
                attributes["agui_chat.approval.reason"] = reason
            edited = answer.edited_arguments
            decision = (
                "rejected" if not answer.approved else "approved" if edited is None else "edited"
            )
            if decision == "edited" and self.capture_content:
                attributes["agui_chat.approval.edited_arguments"] = to_json(edited)
            if instruments is not None:
                instruments.approvals.add(1, {"agui_chat.decision": decision})
            call = request.tool_call
            if decision == "rejected" and isinstance(call, FunctionCallContent) and self._traces():
                self._tool_span(call, None, **{TOOL_OUTCOME: "rejected"}).end()
        else:
            kind = "input"
            decision = "cancelled" if answer.status == "cancelled" else "answered"
            if self.capture_content and decision == "answered":
                attributes["agui_chat.input.payload"] = to_json(answer.payload)
        if seconds is not None:
            attributes["agui_chat.decision.seconds"] = seconds
            if instruments is not None:
                metric = {"agui_chat.request.kind": kind, "agui_chat.decision": decision}
                instruments.decisions.record(seconds, metric)
        # agui_chat.approval.{approved,rejected,edited}, agui_chat.input.{answered,cancelled}
        trace.get_current_span().add_event(f"agui_chat.{kind}.{decision}", attributes)

    def audited(self, verdict: Verdict, grant: Grant | None) -> None:
        """A decided call's audit record was written: an event on the current span
        (``agui_chat.audit.<decision>``) naming the call, whether someone identified decided,
        the grant it made or used; who and what only with ``capture_content``."""
        if not self.records():
            return
        call = verdict.call
        attributes: dict[str, Any] = {
            TOOL_CALL_ID: call.call_id,
            "gen_ai.tool.name": call.name,
            "agui_chat.approver.identified": verdict.approver is not None,
        }
        if verdict.grant_id is not None:
            attributes["agui_chat.grant.id"] = verdict.grant_id
        if grant is not None:
            attributes["agui_chat.grant.id"] = grant.id
            attributes["agui_chat.grant.scope"] = grant.scope
            attributes["agui_chat.grant.seconds"] = (grant.expires - grant.created).total_seconds()
        if self.capture_content:
            if verdict.approver is not None:
                attributes["agui_chat.approver.id"] = verdict.approver.id
            if verdict.requester is not None:
                attributes["agui_chat.requester.id"] = verdict.requester.id
        trace.get_current_span().add_event(f"agui_chat.audit.{verdict.decision}", attributes)


def _about(request: InputRequestContent) -> dict[str, Any]:
    """The attributes of a request: its id and the call it is about."""
    attributes: dict[str, Any] = {"agui_chat.request.id": request.request_id}
    if isinstance(request, ToolApprovalRequestContent):
        attributes[TOOL_CALL_ID] = request.tool_call.call_id
        attributes["gen_ai.tool.name"] = request.tool_call.name
    elif isinstance(request, InterruptRequestContent) and request.tool_call_id is not None:
        attributes[TOOL_CALL_ID] = request.tool_call_id
    return attributes


def _requested_at(request: InputRequestContent | None) -> float | None:
    properties = request.additional_properties if request is not None else None
    value = (properties or {}).get(REQUESTED_AT)
    return float(value) if isinstance(value, (int, float)) else None
