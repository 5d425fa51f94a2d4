"""The tool loop's tracing: a span per tool execution, the person's part as events, and their
metrics, with ``opentelemetry-api`` (a base dependency: no-op without an SDK).

Tool spans are ``execute_tool {name}`` (INTERNAL), children of the span current when the loop
runs them. The human-in-the-loop events go on the span current when the loop sees the request
or the answer: inside ``AGUIServer``, the run's SERVER span. ``FunctionInvokingChatClient``
traces through the global providers, or through those of an ``OpenTelemetryChatClient`` below
it (which also says whether content is captured): it asks its inner pipeline for a
:class:`ToolTracing` once, when it is built. Nothing here runs per streamed update, and with
nothing recording each method returns after one check.

Two keys of a request's ``additional_properties`` carry a pause across requests (and, inside
the AG-UI server's signed interrupt ids, across workers): :data:`REQUESTED_AT` (epoch seconds
when the request was made, for the time-to-decision) and :data:`TRACEPARENT` (the W3C
``traceparent`` of the span that was current when the run paused, so the resumed run's span
can link to it). They are set only while something records.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Awaitable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from .._contents import FunctionCallContent, FunctionResultContent
from .._exceptions import AGUIChatError
from .._hitl_contents import (
    InputRequestContent,
    InterruptRequestContent,
    InterruptResponseContent,
    ToolApprovalRequestContent,
    ToolApprovalResponseContent,
)
from .._messages import ChatMessage
from .._role_and_finish_reason import ChatRole
from .._tools import AITool
from .._version import __version__
from ._invocation import InvocationOutcome
from ._otel_content import to_json
from ._otel_names import (
    DECISION,
    DECISION_BUCKETS,
    DECISION_SECONDS,
    EDITED_ARGUMENTS,
    ERROR_TYPE,
    EVENT_ANSWERED,
    EVENT_APPROVAL_REQUESTED,
    EVENT_APPROVED,
    EVENT_CANCELLED,
    EVENT_EDITED,
    EVENT_EXPIRED,
    EVENT_INPUT_REQUESTED,
    EVENT_REJECTED,
    INPUT_PAYLOAD,
    METRIC_APPROVALS,
    METRIC_DECISION_DURATION,
    OPERATION_NAME,
    QUESTION,
    REASON,
    REASON_GIVEN,
    REQUEST_ID,
    REQUEST_KIND,
    SCHEMA_URL,
    SCOPE,
    TOOL_CALL_ARGUMENTS,
    TOOL_CALL_ID,
    TOOL_CALL_RESULT,
    TOOL_DESCRIPTION,
    TOOL_NAME,
    TOOL_OUTCOME,
    TOOL_TYPE,
)

if TYPE_CHECKING:
    from opentelemetry.metrics import MeterProvider

__all__ = [
    "REQUESTED_AT",
    "TRACEPARENT",
    "ToolTracing",
    "error_type",
    "metrics_enabled",
    "traceparent_of_current",
]

#: ``additional_properties`` key of a request: when it was made (epoch seconds, a float).
REQUESTED_AT = "agui_chat.requested_at"
#: ``additional_properties`` key of a request: the W3C traceparent of the paused run's span.
TRACEPARENT = "agui_chat.traceparent"


def error_type(exc: BaseException) -> str:
    """``error.type``: our typed errors by class name, others by qualified name."""
    kind = type(exc)
    if isinstance(exc, AGUIChatError) or kind.__module__ == "builtins":
        return kind.__name__
    return f"{kind.__module__}.{kind.__qualname__}"


def metrics_enabled() -> bool:
    """Whether a meter provider other than the API's no-op default has been set (read from
    the API's global, not through ``get_meter_provider()``, which reads the environment).

    The metrics API is imported on the first answer or request, not with ``agui_chat``
    (about half of what the API adds to the import time; DESIGN §6)."""
    from opentelemetry.metrics import _internal

    provider = getattr(_internal, "_METER_PROVIDER", None)
    return provider is not None and not isinstance(provider, _internal.NoOpMeterProvider)


def traceparent_of_current() -> str | None:
    """The W3C ``traceparent`` of the current span, if it is a valid one."""
    ctx = trace.get_current_span().get_span_context()
    if not ctx.is_valid:
        return None
    return f"00-{ctx.trace_id:032x}-{ctx.span_id:016x}-{int(ctx.trace_flags):02x}"


class _Instruments:
    """The person's metrics on one meter provider."""

    def __init__(self, provider: MeterProvider) -> None:
        meter = provider.get_meter(SCOPE, __version__, SCHEMA_URL)
        self.approvals = meter.create_counter(
            METRIC_APPROVALS, unit="{approval}", description="Approval decisions by outcome"
        )
        self.decisions = meter.create_histogram(
            METRIC_DECISION_DURATION,
            unit="s",
            description="Time from a request for a person to their answer",
            explicit_bucket_boundaries_advisory=list(DECISION_BUCKETS),
        )


#: The instruments on each global meter provider that has been set (made on first record, so
#: nothing is created while metrics are off).
_GLOBAL_INSTRUMENTS: weakref.WeakKeyDictionary[MeterProvider, _Instruments] = (
    weakref.WeakKeyDictionary()
)


class _Scheduled(Protocol):
    @property
    def call(self) -> FunctionCallContent: ...


class ResumeWork(Protocol):
    """What a resume does: the calls it runs now and the rejected calls it answers."""

    @property
    def to_run(self) -> Sequence[_Scheduled]: ...
    @property
    def rejected(self) -> Sequence[FunctionResultContent]: ...


class ToolTracing:
    """Tool spans, human-in-the-loop events and their metrics (see ``docs/observability.md``).

    ``tracer_provider`` / ``meter_provider`` default to the global ones (read when a span or a
    metric is recorded, so an SDK configured after the pipeline was built is used);
    ``capture_content`` records tool arguments and results, the person's reasons, edits and
    answers.
    """

    def __init__(
        self,
        *,
        tracer_provider: trace.TracerProvider | None = None,
        meter_provider: MeterProvider | None = None,
        capture_content: bool = False,
    ) -> None:
        self.capture_content = capture_content
        self._tracer_provider = tracer_provider
        self._tracer = trace.get_tracer(SCOPE, __version__, tracer_provider, SCHEMA_URL)
        self._own = _Instruments(meter_provider) if meter_provider is not None else None

    # -- is anything recording ---------------------------------------------------------------
    def _instruments(self) -> _Instruments | None:
        if self._own is not None:
            return self._own
        if not metrics_enabled():
            return None
        from opentelemetry.metrics import get_meter_provider

        provider = get_meter_provider()
        found = _GLOBAL_INSTRUMENTS.get(provider)
        if found is None:
            found = _GLOBAL_INSTRUMENTS[provider] = _Instruments(provider)
        return found

    def _traces(self) -> bool:
        """Whether the tracer's provider is a real one (not the API's proxy or no-op)."""
        provider = self._tracer_provider or trace.get_tracer_provider()
        return not isinstance(provider, (trace.ProxyTracerProvider, trace.NoOpTracerProvider))

    def _records(self) -> bool:
        """Whether anything would record a span, an event on the current span or a metric."""
        return (
            self._traces()
            or self._instruments() is not None
            or trace.get_current_span().is_recording()
        )

    # -- tools -------------------------------------------------------------------------------
    def _tool_attributes(self, call: FunctionCallContent, tool: AITool | None) -> dict[str, Any]:
        attributes: dict[str, Any] = {
            OPERATION_NAME: "execute_tool",
            TOOL_NAME: call.name,
            TOOL_CALL_ID: call.call_id,
            TOOL_TYPE: "function",
        }
        description = getattr(tool, "description", None)
        if isinstance(description, str) and description:
            attributes[TOOL_DESCRIPTION] = description
        if self.capture_content and call.arguments is not None:
            attributes[TOOL_CALL_ARGUMENTS] = to_json(call.arguments)
        return attributes

    async def tool(
        self, call: FunctionCallContent, tool: AITool, invocation: Awaitable[InvocationOutcome]
    ) -> InvocationOutcome:
        """Run ``invocation`` (the tool's execution) in its span and return its outcome."""
        if not self._traces():  # no SDK: no span to make (one check per call)
            return await invocation
        span = self._tracer.start_span(
            f"execute_tool {call.name}",
            kind=SpanKind.INTERNAL,
            attributes=self._tool_attributes(call, tool),
        )
        if not span.is_recording():  # sampled out: no span to keep current
            span.end()
            return await invocation
        try:
            with trace.use_span(span, end_on_exit=False, record_exception=False):
                outcome = await invocation
        except BaseException as exc:
            span.set_attribute(TOOL_OUTCOME, "failed")
            span.set_attribute(ERROR_TYPE, error_type(exc))
            span.set_status(Status(StatusCode.ERROR, type(exc).__name__))
            span.end()
            raise
        if outcome.input_required is not None:
            span.set_attribute(TOOL_OUTCOME, "input_required")
        elif outcome.failed:
            span.set_attribute(TOOL_OUTCOME, "failed")
            error = outcome.exception
            span.set_attribute(ERROR_TYPE, error_type(error) if error is not None else "_OTHER")
            span.set_status(Status(StatusCode.ERROR, type(error).__name__ if error else None))
        else:
            span.set_attribute(TOOL_OUTCOME, "ran")
        result = outcome.result
        if self.capture_content and result is not None:
            span.set_attribute(TOOL_CALL_RESULT, to_json(result.result))
        span.end()
        return outcome

    def _unrun_tool(self, call: FunctionCallContent, outcome: str, **extra: Any) -> None:
        if not self._traces():
            return
        attributes = {**self._tool_attributes(call, None), TOOL_OUTCOME: outcome, **extra}
        span = self._tracer.start_span(
            f"execute_tool {call.name}", kind=SpanKind.INTERNAL, attributes=attributes
        )
        if outcome == "not_found":
            span.set_status(Status(StatusCode.ERROR, "tool not found"))
        span.end()

    def tool_not_found(self, call: FunctionCallContent) -> None:
        """The model called a tool nobody has: a span that says so."""
        self._unrun_tool(call, "not_found", **{ERROR_TYPE: "tool_not_found"})

    # -- the person --------------------------------------------------------------------------
    def requested(self, request: InputRequestContent) -> None:
        """The run pauses on ``request`` (an approval or a question): stamp it and record the
        event on the current span."""
        if not self._records():
            return  # nothing would use the stamps: the request stays as it was made
        properties = request.additional_properties
        if properties is None:
            properties = request.additional_properties = {}
        properties.setdefault(REQUESTED_AT, time.time())
        parent = traceparent_of_current()
        if parent is not None:
            properties.setdefault(TRACEPARENT, parent)
        attributes: dict[str, Any] = {REQUEST_ID: request.request_id}
        if isinstance(request, ToolApprovalRequestContent):
            attributes[TOOL_CALL_ID] = request.tool_call.call_id
            attributes[TOOL_NAME] = request.tool_call.name
            name = EVENT_APPROVAL_REQUESTED
            if self.capture_content and request.tool_call.arguments is not None:
                attributes[TOOL_CALL_ARGUMENTS] = to_json(request.tool_call.arguments)
        else:
            assert isinstance(request, InterruptRequestContent)
            if request.tool_call_id is not None:
                attributes[TOOL_CALL_ID] = request.tool_call_id
            name = EVENT_INPUT_REQUESTED
            if self.capture_content and request.message is not None:
                attributes[QUESTION] = request.message
        trace.get_current_span().add_event(name, attributes)

    def expired(self, request_ids: Sequence[str]) -> None:
        """Answers came for requests past their expiry (and were refused)."""
        span = trace.get_current_span()
        for request_id in request_ids:
            span.add_event(EVENT_EXPIRED, {REQUEST_ID: request_id})

    def resumed(self, history: Sequence[ChatMessage], work: ResumeWork) -> None:
        """A person's answers in ``history`` resume the calls in ``work``."""
        if not self._records():
            return
        call_ids = {s.call.call_id for s in work.to_run} | {r.call_id for r in work.rejected}
        requests: dict[str, InputRequestContent] = {}
        answers: list[ToolApprovalResponseContent | InterruptResponseContent] = []
        for message in history:
            for c in message.contents:
                if isinstance(c, (ToolApprovalRequestContent, InterruptRequestContent)):
                    requests.setdefault(c.request_id, c)
            if message.role == ChatRole.USER:
                found = [
                    c
                    for c in message.contents
                    if isinstance(c, (ToolApprovalResponseContent, InterruptResponseContent))
                ]
                answers = found or answers  # the latest message that answers
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
            call_id = (
                request.tool_call.call_id
                if isinstance(request, ToolApprovalRequestContent)
                else request.tool_call_id  # type: ignore[attr-defined]
            )
            if call_id not in call_ids:
                continue
            self._decided(request, answer, None if at is None else max(0.0, now - at))

    def _decided(
        self,
        request: InputRequestContent,
        answer: ToolApprovalResponseContent | InterruptResponseContent,
        seconds: float | None,
    ) -> None:
        instruments = self._instruments()
        attributes: dict[str, Any] = {REQUEST_ID: request.request_id}
        if isinstance(answer, ToolApprovalResponseContent):
            assert isinstance(request, ToolApprovalRequestContent)
            call = request.tool_call
            attributes[TOOL_CALL_ID] = call.call_id
            attributes[TOOL_NAME] = call.name
            attributes[REASON_GIVEN] = bool(answer.reason and answer.reason.strip())
            if self.capture_content and answer.reason:
                attributes[REASON] = answer.reason
            if not answer.approved:
                decision, event = "rejected", EVENT_REJECTED
            elif answer.edited_arguments is not None:
                decision, event = "edited", EVENT_EDITED
                if self.capture_content:
                    attributes[EDITED_ARGUMENTS] = to_json(answer.edited_arguments)
            else:
                decision, event = "approved", EVENT_APPROVED
            kind = "approval"
            if instruments is not None:
                instruments.approvals.add(1, {DECISION: decision})
            if decision == "rejected" and isinstance(call, FunctionCallContent):
                self._unrun_tool(call, "rejected")
        else:
            if request.tool_call_id is not None:  # type: ignore[attr-defined]
                attributes[TOOL_CALL_ID] = request.tool_call_id  # type: ignore[attr-defined]
            cancelled = answer.status == "cancelled"
            decision = "cancelled" if cancelled else "answered"
            event = EVENT_CANCELLED if cancelled else EVENT_ANSWERED
            if self.capture_content and not cancelled:
                attributes[INPUT_PAYLOAD] = to_json(answer.payload)
            kind = "input"
        if seconds is not None:
            attributes[DECISION_SECONDS] = seconds
            if instruments is not None:
                instruments.decisions.record(seconds, {REQUEST_KIND: kind, DECISION: decision})
        trace.get_current_span().add_event(event, attributes)


def _requested_at(request: InputRequestContent | None) -> float | None:
    properties = request.additional_properties if request is not None else None
    value = (properties or {}).get(REQUESTED_AT)
    return float(value) if isinstance(value, (int, float)) else None


class _HasServices(Protocol):
    def get_service(self, kind: type[ToolTracing]) -> ToolTracing | None: ...


def tool_tracing_of(client: _HasServices) -> ToolTracing:
    """The tracing settings of ``client``'s pipeline (an ``OpenTelemetryChatClient`` in it
    lends its providers and ``capture_content``), else the global providers'."""
    found = client.get_service(ToolTracing)
    return found if found is not None else ToolTracing()
