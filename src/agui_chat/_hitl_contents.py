"""The human-in-the-loop contents: a tool call waiting for approval, a question for a person,
and their answers (paired with their requests by ``request_id``); :func:`without_pause` takes
a pause back out of a history, to ask the person again."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

from ._contents import (
    NEVER,
    OMIT_FALSE,
    OMIT_NONE,
    OMIT_TRUE,
    STRICT,
    AIContent,
    ToolCallContent,
    ToolResultContent,
    check_id,
    without_type,
)
from ._exceptions import InvalidResponseError
from ._messages import ChatMessage
from ._principal import Principal
from ._schema import parse_expiry
from .consent._rules import (
    Remember,
    RememberMatch,
    RememberScope,
    check_approval,
    check_question,
    is_past,
    to_wire,
)

InterruptStatus = Literal["resolved", "cancelled"]

#: The rejection reason of a cancelled approval (:meth:`ToolApprovalRequestContent.cancel`).
CANCELLED_REASON = "cancelled"
#: How much of a call id, and of a tool's name or a question, a request's ``repr`` shows.
_REPR_ID, _REPR_TEXT = 16, 40


def _short(text: str | None, limit: int) -> str:
    """``repr`` of ``text``, cut to ``limit`` characters with an ellipsis where it was cut."""
    if text is None or len(text) <= limit:
        return repr(text)
    return repr(text[: limit - 1] + "…")


def _load_tool_call(data: Any) -> Any:
    fields = without_type(data)
    if isinstance(fields, dict) and isinstance(fields.get("tool_call"), Mapping):
        call = AIContent.from_dict(fields["tool_call"])
        if not isinstance(call, ToolCallContent):
            raise ValueError(f"tool_call must be a tool call, got {call.type!r}")
        fields["tool_call"] = call
    return fields


@dataclass(slots=True)
class InputRequestContent(AIContent):
    """Base of the requests that pause a run for a person; ``request_id`` pairs the answer.
    ``expires_at`` may be ISO 8601 text (text that does not parse never expires; naive is
    UTC)."""

    request_id: str

    @property
    def expires_at(self) -> datetime | None:  # a field of each subclass
        raise NotImplementedError

    def is_expired(self, now: datetime | None = None) -> bool:
        """Whether the request is past its ``expires_at`` (then it can only be cancelled)."""
        return is_past(self.expires_at, None if now is None else now.timestamp())

    def _to_wire(self, out: dict[str, Any]) -> None:
        if self.expires_at is not None:  # last, after what a subclass writes
            out["expires_at"] = self.expires_at.isoformat()


@dataclass(slots=True)
class InputResponseContent(AIContent):
    """Base of the answers to an ``InputRequestContent``, paired by ``request_id``."""

    request_id: str


@dataclass(slots=True)
class ToolApprovalRequestContent(InputRequestContent):
    """A tool call that waits for a person's approval before it may run: answer it with
    :meth:`create_response` or withdraw it with :meth:`cancel`. ``requires_confirmation`` is
    false for a request shown only for context; ``allow_edits``: may the person edit the call;
    ``allow_remember``: may the approval be remembered (``create_response(...,
    remember=...)``); ``requester``: who asked for the call, when known (the server binds it
    into the signed id; four eyes compares the answerer with it).
    """

    type = "tool_approval_request"
    tool_call: ToolCallContent
    message: str | None = field(default=None, kw_only=True, metadata=OMIT_NONE)
    requires_confirmation: bool = field(default=True, kw_only=True, metadata=OMIT_TRUE)
    allow_edits: bool = field(default=True, kw_only=True, metadata=OMIT_TRUE)
    allow_remember: bool = field(default=False, kw_only=True, metadata=OMIT_FALSE)
    requester: Principal | None = field(default=None, kw_only=True, metadata=OMIT_NONE)
    expires_at: datetime | None = field(default=None, kw_only=True, metadata=NEVER)

    def __post_init__(self) -> None:
        check_id(self.request_id, "request_id")
        self.expires_at = parse_expiry(self.expires_at)  # text from the wire is parsed

    def __repr__(self) -> str:
        # The request id is a signed token of hundreds of characters over AG-UI: a printed
        # request names the call it asks about instead.
        call = self.tool_call
        return (
            f"<{type(self).__name__} tool={_short(call.name, _REPR_TEXT)} "
            f"call_id={_short(call.call_id, _REPR_ID)}>"
        )

    def create_response(
        self,
        approved: bool,
        reason: str | None = None,
        *,
        edited_arguments: Mapping[str, Any] | None = None,
        approver: Principal | None = None,
        remember: RememberScope | None = None,
        remember_for: timedelta | float | None = None,
        remember_match: RememberMatch = "arguments",
    ) -> ToolApprovalResponseContent:
        """The person's answer: approve (optionally with edited arguments) or reject with a
        reason that reaches the model. ``ExpiredRequestError`` when approving past the expiry,
        ``InvalidResponseError`` for edits where editing was not offered (the consent rules).

        ``approver``: who answered (in process; over AG-UI the server reads it from the
        answering request). ``remember`` (``"thread"`` or ``"principal"``) asks not to be asked
        again for this tool (the same arguments, or any with ``remember_match="tool"``) for
        ``remember_for`` (a ``timedelta`` or seconds; capped by the server's
        ``max_remember``); only an approval, only where ``allow_remember``."""
        if edited_arguments is not None and not approved:
            raise ValueError("edited_arguments only make sense when approving")
        check_approval(
            self.request_id,
            approved=approved,
            edited_arguments=edited_arguments,
            allow_edits=self.allow_edits,
            expires_at=self.expires_at,
        )
        wanted = _remember(remember, remember_for, remember_match)
        if wanted is not None and not (approved and self.allow_remember):
            raise InvalidResponseError(
                f"approval request {self.request_id!r}: "
                + (
                    "only an approval can be remembered"
                    if not approved
                    else "this tool does not allow remembering an approval"
                ),
                request_ids=[self.request_id],
                code="RESUME_INVALID_PAYLOAD",
            )
        return ToolApprovalResponseContent(
            self.request_id,
            approved,
            self.tool_call,
            reason=reason,
            edited_arguments=None if edited_arguments is None else dict(edited_arguments),
            approver=approver,
            remember=remember,
            remember_for=None
            if wanted is None or wanted.seconds is None
            else timedelta(seconds=wanted.seconds),
            remember_match=remember_match,
        )

    def cancel(self) -> ToolApprovalResponseContent:
        """Withdraw the request undecided (AG-UI's ``cancelled``; in process, a rejection with
        the reason ``"cancelled"``), also past the expiry: the call never runs."""
        return ToolApprovalResponseContent(
            self.request_id, False, self.tool_call, reason=CANCELLED_REASON, cancelled=True
        )

    _from_wire = staticmethod(_load_tool_call)

    def _to_wire(self, out: dict[str, Any]) -> None:
        out["tool_call"] = self.tool_call.to_dict()
        InputRequestContent._to_wire(self, out)  # no super() in a slotted dataclass


@dataclass(slots=True)
class ToolApprovalResponseContent(InputResponseContent):
    """A person's answer to a ``ToolApprovalRequestContent``. ``edited_arguments`` replace the
    call's arguments entirely (validated against the tool's schema before anything runs);
    ``cancelled`` marks :meth:`ToolApprovalRequestContent.cancel`'s answer (``ValueError`` if
    it approves or edits)."""

    type = "tool_approval_response"
    approved: bool = field(metadata=STRICT)
    tool_call: ToolCallContent
    reason: str | None = field(default=None, metadata=OMIT_NONE)
    edited_arguments: dict[str, Any] | None = field(default=None, metadata=OMIT_NONE)
    cancelled: bool = field(default=False, kw_only=True, metadata=OMIT_FALSE)
    approver: Principal | None = field(default=None, kw_only=True, metadata=OMIT_NONE)
    remember: RememberScope | None = field(default=None, kw_only=True, metadata=OMIT_NONE)
    remember_for: timedelta | float | None = field(default=None, kw_only=True, metadata=OMIT_NONE)
    remember_match: RememberMatch = field(
        default="arguments", kw_only=True, metadata={"exclude_if": lambda v: v == "arguments"}
    )

    def __post_init__(self) -> None:
        check_id(self.request_id, "request_id")
        if self.cancelled and (self.approved or self.edited_arguments is not None):
            raise ValueError("a cancelled approval approves nothing and edits nothing")
        if isinstance(self.remember_for, (int, float)) and not isinstance(self.remember_for, bool):
            self.remember_for = timedelta(seconds=self.remember_for)
        _remember(self.remember, self.remember_for, self.remember_match)  # ValueError if wrong
        if self.remember is not None and not self.approved:
            raise ValueError("only an approval can be remembered")

    @property
    def remembered(self) -> Remember | None:
        """What the answer asks to remember (``None``: nothing), as the consent engine reads it."""
        return _remember(self.remember, self.remember_for, self.remember_match)

    def to_payload(self) -> dict[str, Any]:
        """The AG-UI resume payload ``{approved, reason?, editedArgs?, remember?}`` (no empty
        reason); the approver never travels in it (the server reads it from the request)."""
        return to_wire(self.approved, self.reason or None, self.edited_arguments, self.remembered)

    _from_wire = staticmethod(_load_tool_call)

    def _to_wire(self, out: dict[str, Any]) -> None:
        out["tool_call"] = self.tool_call.to_dict()


def _remember(
    scope: RememberScope | None, duration: timedelta | float | None, match: RememberMatch
) -> Remember | None:
    """The ``remember`` an answer asks for (``ValueError`` for a scope, duration or match
    that is not one)."""
    if scope is None:
        if duration is not None or match != "arguments":
            raise ValueError(
                "remember_for and remember_match go with remember='thread'|'principal'"
            )
        return None
    seconds = duration.total_seconds() if isinstance(duration, timedelta) else duration
    return Remember(scope, None if seconds is None else float(seconds), match)


@dataclass(slots=True)
class InterruptRequestContent(InputRequestContent):
    """A question for a person (AG-UI interrupt): answer with :meth:`create_response` or
    decline with :meth:`cancel`. ``key`` tells apart several questions of one tool call."""

    type = "interrupt_request"
    reason: str | None = field(default=None, metadata=OMIT_NONE)
    message: str | None = field(default=None, metadata=OMIT_NONE)
    tool_call_id: str | None = field(default=None, metadata=OMIT_NONE)
    key: str | None = field(default=None, kw_only=True, metadata=OMIT_NONE)
    response_schema: dict[str, Any] | None = field(default=None, metadata=OMIT_NONE)
    expires_at: datetime | None = field(default=None, metadata=NEVER)
    metadata: dict[str, Any] | None = field(default=None, metadata=OMIT_NONE)

    def __post_init__(self) -> None:
        check_id(self.request_id, "request_id")
        self.expires_at = parse_expiry(self.expires_at)
        if self.response_schema is not None:
            self.response_schema = dict(self.response_schema)
        if self.metadata is not None:
            self.metadata = dict(self.metadata)

    def __repr__(self) -> str:
        # As for an approval: the question and the call that asks it, never the token.
        return (
            f"<{type(self).__name__} message={_short(self.message, _REPR_TEXT)} "
            f"call_id={_short(self.tool_call_id, _REPR_ID)}>"
        )

    def create_response(self, payload: Any) -> InterruptResponseContent:
        """Answer the question; the payload is checked against ``response_schema`` before
        anything is sent. ``ExpiredRequestError`` past the expiry (only :meth:`cancel` then)."""
        check_question(
            self.request_id,
            resolved=True,
            payload=payload,
            response_schema=self.response_schema,
            expires_at=self.expires_at,
        )
        return InterruptResponseContent(self.request_id, payload, "resolved")

    def cancel(self) -> InterruptResponseContent:
        """Decline to answer: the tool takes its "cancelled" branch and the run goes on."""
        return InterruptResponseContent(self.request_id, None, "cancelled")


@dataclass(slots=True)
class InterruptResponseContent(InputResponseContent):
    """The answer to an ``InterruptRequestContent``: ``status`` is ``"resolved"`` (with a
    ``payload``) or ``"cancelled"``; any other status is a ``ValueError``."""

    type = "interrupt_response"
    payload: Any = field(default=None, metadata=OMIT_NONE)
    status: InterruptStatus = "resolved"
    metadata: dict[str, Any] | None = field(default=None, kw_only=True, metadata=OMIT_NONE)

    def __post_init__(self) -> None:
        check_id(self.request_id, "request_id")
        if self.status not in ("resolved", "cancelled"):
            raise ValueError(f"status must be 'resolved' or 'cancelled', got {self.status!r}")
        if self.metadata is not None:
            self.metadata = dict(self.metadata)

    @property
    def cancelled(self) -> bool:
        """Whether the person declined to answer."""
        return self.status == "cancelled"


def without_pause(messages: Iterable[ChatMessage]) -> list[ChatMessage]:
    """``messages`` without their last pause, to send again when the person must be asked
    again (``AskAgainError``: the server will never use the answers given): the pause's
    requests, the calls they ask about that have no result, and every request and answer
    about those calls. What ran stays (each result and its call), and so does all that was
    said; a message left empty is dropped. Sent again, the history makes the agent propose
    the calls anew and pause with new requests. ``messages`` itself is not changed."""
    history = list(messages)
    last = next((i for i in reversed(range(len(history))) if _requests(history[i].contents)), None)
    if last is None:
        return history
    ran = {c.call_id for m in history for c in m.contents if isinstance(c, ToolResultContent)}
    pause = _requests(history[last].contents)
    calls = {call_id_of(r) for r in pause} - ran - {None}
    dropped = {r.request_id for r in pause} | {
        r.request_id for m in history for r in _requests(m.contents) if call_id_of(r) in calls
    }

    def kept(content: AIContent) -> bool:
        if isinstance(content, (InputRequestContent, InputResponseContent)):
            return content.request_id not in dropped
        return not (isinstance(content, ToolCallContent) and content.call_id in calls)

    out: list[ChatMessage] = []
    for message in history:
        contents = [c for c in message.contents if kept(c)]
        if len(contents) == len(message.contents):
            out.append(message)
        elif contents:
            out.append(message.clone(contents))
    return out


def _requests(contents: Iterable[AIContent]) -> list[InputRequestContent]:
    return [c for c in contents if isinstance(c, InputRequestContent)]


def call_id_of(request: InputRequestContent) -> str | None:
    """The id of the call a request asks about (``None``: a question about no call)."""
    if isinstance(request, ToolApprovalRequestContent):
        return request.tool_call.call_id
    return request.tool_call_id if isinstance(request, InterruptRequestContent) else None
