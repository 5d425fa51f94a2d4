"""The tool loop's telemetry: a span per tool execution, the person's part as events.

``OpenTelemetryHooks`` implements the core's :class:`~agui_chat._telemetry.Telemetry` seam.
Tool spans are ``execute_tool {name}`` (INTERNAL), children of the span current when the
loop runs them. The human-in-the-loop events go on the span current when the loop sees the
request or the answer: inside ``AGUIServer``, the run's SERVER span.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Sequence
from typing import Any

from opentelemetry import metrics, trace
from opentelemetry.trace import SpanKind, Status, StatusCode, Tracer

from .._contents import FunctionCallContent
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
from .._telemetry import _O, REQUESTED_AT, TRACEPARENT, ResumeWork, Telemetry
from .._tools import AITool
from . import _names as n
from ._content import to_json

__all__ = ["OpenTelemetryHooks", "error_type", "metrics_enabled", "traceparent_of_current"]


def error_type(exc: BaseException) -> str:
    """``error.type``: our typed errors by class name, others by qualified name."""
    kind = type(exc)
    if isinstance(exc, AGUIChatError) or kind.__module__ == "builtins":
        return kind.__name__
    return f"{kind.__module__}.{kind.__qualname__}"


def metrics_enabled() -> bool:
    """Whether a meter provider other than the API's no-op default has been set (read from
    the API's global, not through ``get_meter_provider()``, which reads the environment)."""
    from opentelemetry.metrics import _internal

    provider = getattr(_internal, "_METER_PROVIDER", None)
    return provider is not None and not isinstance(provider, metrics.NoOpMeterProvider)


def traceparent_of_current() -> str | None:
    """The W3C ``traceparent`` of the current span, if it is a valid one."""
    ctx = trace.get_current_span().get_span_context()
    if not ctx.is_valid:
        return None
    return f"00-{ctx.trace_id:032x}-{ctx.span_id:016x}-{int(ctx.trace_flags):02x}"


class OpenTelemetryHooks(Telemetry):
    """Tool spans, human-in-the-loop events and their metrics (see ``docs/observability.md``)."""

    enabled = True

    def __init__(self, tracer: Tracer, meter: metrics.Meter, *, capture_content: bool) -> None:
        self._tracer = tracer
        self.capture_content = capture_content
        self._approvals = meter.create_counter(
            n.METRIC_APPROVALS, unit="{approval}", description="Approval decisions by outcome"
        )
        self._decisions = meter.create_histogram(
            n.METRIC_DECISION_DURATION,
            unit="s",
            description="Time from a request for a person to their answer",
            explicit_bucket_boundaries_advisory=list(n.DECISION_BUCKETS),
        )

    # -- tools -------------------------------------------------------------------------------
    def _tool_attributes(self, call: FunctionCallContent, tool: AITool | None) -> dict[str, Any]:
        attributes: dict[str, Any] = {
            n.OPERATION_NAME: "execute_tool",
            n.TOOL_NAME: call.name,
            n.TOOL_CALL_ID: call.call_id,
            n.TOOL_TYPE: "function",
        }
        description = getattr(tool, "description", None)
        if isinstance(description, str) and description:
            attributes[n.TOOL_DESCRIPTION] = description
        if self.capture_content and call.arguments is not None:
            attributes[n.TOOL_CALL_ARGUMENTS] = to_json(call.arguments)
        return attributes

    async def tool(self, call: FunctionCallContent, tool: AITool, invocation: Awaitable[_O]) -> _O:
        span = self._tracer.start_span(
            f"execute_tool {call.name}",
            kind=SpanKind.INTERNAL,
            attributes=self._tool_attributes(call, tool),
        )
        try:
            with trace.use_span(span, end_on_exit=False, record_exception=False):
                outcome = await invocation
        except BaseException as exc:
            span.set_attribute(n.TOOL_OUTCOME, "failed")
            span.set_attribute(n.ERROR_TYPE, error_type(exc))
            span.set_status(Status(StatusCode.ERROR, type(exc).__name__))
            span.end()
            raise
        if outcome.input_required is not None:
            span.set_attribute(n.TOOL_OUTCOME, "input_required")
        elif outcome.failed:
            span.set_attribute(n.TOOL_OUTCOME, "failed")
            error = outcome.exception
            span.set_attribute(n.ERROR_TYPE, error_type(error) if error is not None else "_OTHER")
            span.set_status(Status(StatusCode.ERROR, type(error).__name__ if error else None))
        else:
            span.set_attribute(n.TOOL_OUTCOME, "ran")
        result = outcome.result
        if self.capture_content and result is not None and span.is_recording():
            span.set_attribute(n.TOOL_CALL_RESULT, to_json(getattr(result, "result", None)))
        span.end()
        return outcome

    def _unrun_tool(self, call: FunctionCallContent, outcome: str, **extra: Any) -> None:
        attributes = {**self._tool_attributes(call, None), n.TOOL_OUTCOME: outcome, **extra}
        span = self._tracer.start_span(
            f"execute_tool {call.name}", kind=SpanKind.INTERNAL, attributes=attributes
        )
        if outcome == "not_found":
            span.set_status(Status(StatusCode.ERROR, "tool not found"))
        span.end()

    def tool_not_found(self, call: FunctionCallContent) -> None:
        self._unrun_tool(call, "not_found", **{n.ERROR_TYPE: "tool_not_found"})

    # -- the person --------------------------------------------------------------------------
    def requested(self, request: InputRequestContent) -> None:
        properties = request.additional_properties
        if properties is None:
            properties = request.additional_properties = {}
        properties.setdefault(REQUESTED_AT, time.time())
        parent = traceparent_of_current()
        if parent is not None:
            properties.setdefault(TRACEPARENT, parent)
        attributes: dict[str, Any] = {n.REQUEST_ID: request.request_id}
        if isinstance(request, ToolApprovalRequestContent):
            attributes[n.TOOL_CALL_ID] = request.tool_call.call_id
            attributes[n.TOOL_NAME] = request.tool_call.name
            name = n.EVENT_APPROVAL_REQUESTED
            if self.capture_content and request.tool_call.arguments is not None:
                attributes[n.TOOL_CALL_ARGUMENTS] = to_json(request.tool_call.arguments)
        else:
            assert isinstance(request, InterruptRequestContent)
            if request.tool_call_id is not None:
                attributes[n.TOOL_CALL_ID] = request.tool_call_id
            name = n.EVENT_INPUT_REQUESTED
            if self.capture_content and request.message is not None:
                attributes[n.QUESTION] = request.message
        trace.get_current_span().add_event(name, attributes)

    def expired(self, request_ids: Sequence[str]) -> None:
        span = trace.get_current_span()
        for request_id in request_ids:
            span.add_event(n.EVENT_EXPIRED, {n.REQUEST_ID: request_id})

    def resumed(self, history: Sequence[ChatMessage], work: ResumeWork) -> None:
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
        attributes: dict[str, Any] = {n.REQUEST_ID: request.request_id}
        if isinstance(answer, ToolApprovalResponseContent):
            assert isinstance(request, ToolApprovalRequestContent)
            call = request.tool_call
            attributes[n.TOOL_CALL_ID] = call.call_id
            attributes[n.TOOL_NAME] = call.name
            attributes[n.REASON_GIVEN] = bool(answer.reason and answer.reason.strip())
            if self.capture_content and answer.reason:
                attributes[n.REASON] = answer.reason
            if not answer.approved:
                decision, event = "rejected", n.EVENT_REJECTED
            elif answer.edited_arguments is not None:
                decision, event = "edited", n.EVENT_EDITED
                if self.capture_content:
                    attributes[n.EDITED_ARGUMENTS] = to_json(answer.edited_arguments)
            else:
                decision, event = "approved", n.EVENT_APPROVED
            kind = "approval"
            self._approvals.add(1, {n.DECISION: decision})
            if decision == "rejected" and isinstance(call, FunctionCallContent):
                self._unrun_tool(call, "rejected")
        else:
            if request.tool_call_id is not None:  # type: ignore[attr-defined]
                attributes[n.TOOL_CALL_ID] = request.tool_call_id  # type: ignore[attr-defined]
            cancelled = answer.status == "cancelled"
            decision = "cancelled" if cancelled else "answered"
            event = n.EVENT_CANCELLED if cancelled else n.EVENT_ANSWERED
            if self.capture_content and not cancelled:
                attributes[n.INPUT_PAYLOAD] = to_json(answer.payload)
            kind = "input"
        if seconds is not None:
            attributes[n.DECISION_SECONDS] = seconds
            self._decisions.record(seconds, {n.REQUEST_KIND: kind, n.DECISION: decision})
        trace.get_current_span().add_event(event, attributes)


def _requested_at(request: InputRequestContent | None) -> float | None:
    properties = request.additional_properties if request is not None else None
    value = (properties or {}).get(REQUESTED_AT)
    return float(value) if isinstance(value, (int, float)) else None
