"""The tracing seam: the hooks the tool loop calls, which ``agui_chat.otel`` implements.

The core imports no OpenTelemetry (DESIGN §1), so the tool loop (middleware) cannot trace by
itself. It asks its inner pipeline for a :class:`Telemetry` once, when it is built
(``inner_client.get_service(Telemetry)``: an ``OpenTelemetryChatClient`` below it answers),
and otherwise uses :data:`NO_TELEMETRY`, whose hooks do nothing. A hook is called per tool
call or per person's answer, never per streamed update, so tracing off costs nothing
measurable.

Two keys of a request's ``additional_properties`` carry a pause across requests (and, inside
the AG-UI server's signed interrupt ids, across workers): :data:`REQUESTED_AT` (epoch seconds
when the request was made, for the time-to-decision) and :data:`TRACEPARENT` (the W3C
``traceparent`` of the span that was current when the run paused, so the resumed run's span
can link to it).
"""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from typing import Protocol, TypeVar

from ._contents import AIContent, FunctionCallContent, FunctionResultContent
from ._hitl_contents import InputRequestContent
from ._messages import ChatMessage
from ._tools import AITool

__all__ = [
    "NO_TELEMETRY",
    "REQUESTED_AT",
    "TRACEPARENT",
    "ResumeWork",
    "Telemetry",
    "ToolOutcome",
    "find_telemetry",
]

#: ``additional_properties`` key of a request: when it was made (epoch seconds, a float).
REQUESTED_AT = "agui_chat.requested_at"
#: ``additional_properties`` key of a request: the W3C traceparent of the paused run's span.
TRACEPARENT = "agui_chat.traceparent"


class ToolOutcome(Protocol):
    """What the tool loop knows after invoking a tool (its ``InvocationOutcome``)."""

    @property
    def failed(self) -> bool: ...
    @property
    def exception(self) -> BaseException | None: ...
    @property
    def result(self) -> AIContent | None: ...
    @property
    def input_required(self) -> object | None: ...


class _Scheduled(Protocol):
    @property
    def call(self) -> FunctionCallContent: ...


class ResumeWork(Protocol):
    """What a resume does: the calls it runs now and the rejected calls it answers."""

    @property
    def to_run(self) -> Sequence[_Scheduled]: ...
    @property
    def rejected(self) -> Sequence[FunctionResultContent]: ...


_O = TypeVar("_O", bound=ToolOutcome)


class Telemetry:
    """The hooks; this base class records nothing (``enabled`` is false)."""

    enabled: bool = False

    async def tool(self, call: FunctionCallContent, tool: AITool, invocation: Awaitable[_O]) -> _O:
        """Run ``invocation`` (the tool's execution) and return its outcome."""
        return await invocation

    def tool_not_found(self, call: FunctionCallContent) -> None:
        """The model called a tool nobody has."""

    def requested(self, request: InputRequestContent) -> None:
        """The run pauses on ``request`` (an approval or a question)."""

    def resumed(self, history: Sequence[ChatMessage], work: ResumeWork) -> None:
        """A person's answers in ``history`` resume the calls in ``work``."""

    def expired(self, request_ids: Sequence[str]) -> None:
        """An answer came for requests past their expiry (and was refused)."""


#: The hooks used when no telemetry is configured.
NO_TELEMETRY = Telemetry()


class _HasServices(Protocol):
    def get_service(self, kind: type[Telemetry]) -> Telemetry | None: ...


def find_telemetry(client: _HasServices) -> Telemetry:
    """The telemetry of ``client``'s pipeline, or :data:`NO_TELEMETRY`."""
    found = client.get_service(Telemetry)
    return found if found is not None else NO_TELEMETRY
