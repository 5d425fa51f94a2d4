"""The human-in-the-loop contents: a tool call waiting for approval, a question for a person,
and their answers (paired with their requests by ``request_id``)."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from datetime import datetime
from typing import Any, Literal

from ._contents import (
    AIContent,
    ToolCallContent,
    _check_bool,
    _check_id,
    _check_mapping,
    _check_str,
)
from ._exceptions import ExpiredRequestError, InvalidResponseError
from ._schema import is_expired, parse_expiry, schema_errors, to_jsonable

__all__ = [
    "CANCELLED_REASON",
    "InputRequestContent",
    "InputResponseContent",
    "InterruptRequestContent",
    "InterruptResponseContent",
    "ToolApprovalRequestContent",
    "ToolApprovalResponseContent",
]

InterruptStatus = Literal["resolved", "cancelled"]

#: The rejection reason of a cancelled approval (:meth:`ToolApprovalRequestContent.cancel`).
CANCELLED_REASON = "cancelled"


class InputRequestContent(AIContent):
    """Base of the requests that pause a run for a person; ``request_id`` pairs the answer."""

    __slots__ = ("expires_at", "request_id")

    def __init__(
        self, request_id: str, *, expires_at: datetime | str | None = None, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        _check_id(request_id, "request_id")
        self.request_id = request_id
        self.expires_at = parse_expiry(expires_at)

    def is_expired(self, now: datetime | None = None) -> bool:
        """Whether the request is past its ``expires_at`` (then it can only be cancelled)."""
        return is_expired(self.expires_at, now)

    def _expiry_field(self) -> dict[str, Any]:
        return {"expires_at": self.expires_at.isoformat()} if self.expires_at else {}


class InputResponseContent(AIContent):
    """Base of the answers to an ``InputRequestContent``, paired by ``request_id``."""

    __slots__ = ("request_id",)

    def __init__(self, request_id: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        _check_id(request_id, "request_id")
        self.request_id = request_id


class ToolApprovalRequestContent(InputRequestContent):
    """A tool call that waits for a person's approval before it may run.

    ``tool_call`` is usually a ``FunctionCallContent`` (a call the tool loop gated); a request
    whose call is another ``ToolCallContent`` (one the service runs itself) is passed through
    to the service with its answer. Answer it with :meth:`create_response`,
    or withdraw it undecided with :meth:`cancel`. ``requires_confirmation`` is false for a
    request that is shown only for context; ``allow_edits`` says whether the person may change
    the arguments.
    """

    __slots__ = ("allow_edits", "message", "requires_confirmation", "tool_call")
    type = "tool_approval_request"

    def __init__(
        self,
        request_id: str,
        tool_call: ToolCallContent,
        *,
        message: str | None = None,
        requires_confirmation: bool = True,
        allow_edits: bool = True,
        expires_at: datetime | str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(request_id, expires_at=expires_at, **kwargs)
        if not isinstance(tool_call, ToolCallContent):
            raise TypeError(
                "tool_call must be a FunctionCallContent (or another ToolCallContent), got "
                f"{type(tool_call).__name__}"
            )
        _check_str(message, "message", optional=True)
        self.tool_call = tool_call
        self.message = message
        self.requires_confirmation = _check_bool(requires_confirmation, "requires_confirmation")
        self.allow_edits = _check_bool(allow_edits, "allow_edits")

    def create_response(
        self,
        approved: bool,
        reason: str | None = None,
        *,
        edited_arguments: Mapping[str, Any] | None = None,
    ) -> ToolApprovalResponseContent:
        """The person's answer: approve (optionally with edited arguments) or reject with a
        reason that reaches the model.

        Raises ``ExpiredRequestError`` when approving a request past its expiry, and
        ``InvalidResponseError`` for edits where editing was not offered.
        """
        if not isinstance(approved, bool):
            raise TypeError(f"approved must be a bool, got {type(approved).__name__}")
        _check_str(reason, "reason", optional=True)
        _check_mapping(edited_arguments, "edited_arguments")
        if approved and self.is_expired():
            raise ExpiredRequestError(
                f"approval request {self.request_id!r} expired at "
                f"{self.expires_at.isoformat() if self.expires_at else '?'}; it can only be "
                "rejected",
                request_ids=[self.request_id],
            )
        if edited_arguments is not None:
            if not approved:
                raise ValueError("edited_arguments only make sense when approving")
            if not self.allow_edits:
                raise InvalidResponseError(
                    f"approval request {self.request_id!r} does not allow editing the arguments",
                    request_ids=[self.request_id],
                )
        return ToolApprovalResponseContent(
            self.request_id,
            approved,
            self.tool_call,
            reason=reason,
            edited_arguments=edited_arguments,
        )

    def cancel(self) -> ToolApprovalResponseContent:
        """Withdraw the request without deciding it (AG-UI's ``cancelled`` status): the call
        never runs. Sent to an AG-UI server as a ``cancelled`` resume entry; the in-process
        tool loop treats it as a rejection with the reason ``"cancelled"``. Allowed past
        the request's expiry too."""
        return ToolApprovalResponseContent(
            self.request_id, False, self.tool_call, reason=CANCELLED_REASON, cancelled=True
        )

    def _fields(self) -> dict[str, Any]:
        out: dict[str, Any] = {"request_id": self.request_id, "tool_call": self.tool_call.to_dict()}
        if self.message is not None:
            out["message"] = self.message
        if not self.requires_confirmation:
            out["requires_confirmation"] = False
        if not self.allow_edits:
            out["allow_edits"] = False
        out.update(self._expiry_field())
        return out

    @classmethod
    def _load(cls, data: dict[str, Any]) -> AIContent:
        call = AIContent.from_dict(data.pop("tool_call"))
        return cls(data.pop("request_id"), call, **data)  # type: ignore[arg-type]


class ToolApprovalResponseContent(InputResponseContent):
    """A person's answer to a ``ToolApprovalRequestContent``.

    ``edited_arguments``, when given, replace the call's arguments entirely (they are
    validated against the tool's schema before anything runs). ``cancelled`` marks the
    answer of :meth:`ToolApprovalRequestContent.cancel`: a rejection whose reason is
    ``"cancelled"``, sent to AG-UI peers with the status ``cancelled``.
    """

    __slots__ = ("approved", "cancelled", "edited_arguments", "reason", "tool_call")
    type = "tool_approval_response"

    def __init__(
        self,
        request_id: str,
        approved: bool,
        tool_call: ToolCallContent,
        reason: str | None = None,
        edited_arguments: Mapping[str, Any] | None = None,
        *,
        cancelled: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(request_id, **kwargs)
        if not isinstance(approved, bool):
            raise TypeError(f"approved must be a bool, got {type(approved).__name__}")
        if _check_bool(cancelled, "cancelled") and (approved or edited_arguments is not None):
            raise ValueError("a cancelled approval approves nothing and edits nothing")
        if not isinstance(tool_call, ToolCallContent):
            raise TypeError(
                "tool_call must be a FunctionCallContent (or another ToolCallContent), got "
                f"{type(tool_call).__name__}"
            )
        _check_str(reason, "reason", optional=True)
        _check_mapping(edited_arguments, "edited_arguments")
        self.approved = approved
        self.cancelled = cancelled
        self.tool_call = tool_call
        self.reason = reason
        self.edited_arguments = dict(edited_arguments) if edited_arguments is not None else None

    def to_payload(self) -> dict[str, Any]:
        """The AG-UI resume payload ``{approved, reason?, editedArgs?}``, written by the one
        approval payload model (``agui_chat._approval_payload``); an empty reason is left out."""
        from ._approval_payload import to_wire  # pydantic on first use, not with the package

        return to_wire(self.approved, self.reason or None, self.edited_arguments)

    def _fields(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "request_id": self.request_id,
            "approved": self.approved,
            "tool_call": self.tool_call.to_dict(),
        }
        if self.reason is not None:
            out["reason"] = self.reason
        if self.edited_arguments is not None:
            out["edited_arguments"] = to_jsonable(self.edited_arguments)
        if self.cancelled:
            out["cancelled"] = True
        return out

    @classmethod
    def _load(cls, data: dict[str, Any]) -> AIContent:
        call = AIContent.from_dict(data.pop("tool_call"))
        return cls(data.pop("request_id"), data.pop("approved"), call, **data)  # type: ignore[arg-type]


class InterruptRequestContent(InputRequestContent):
    """A question for a person (AG-UI interrupt): answer with :meth:`create_response` or
    decline with :meth:`cancel`.

    ``tool_call_id`` names the tool call that asked; ``key`` tells apart several questions of
    one call; ``response_schema`` is the JSON schema the answer must satisfy.
    """

    __slots__ = ("key", "message", "metadata", "reason", "response_schema", "tool_call_id")
    type = "interrupt_request"

    def __init__(
        self,
        request_id: str,
        reason: str | None = None,
        message: str | None = None,
        tool_call_id: str | None = None,
        response_schema: Mapping[str, Any] | None = None,
        expires_at: datetime | str | None = None,
        metadata: Mapping[str, Any] | None = None,
        *,
        key: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(request_id, expires_at=expires_at, **kwargs)
        _check_str(reason, "reason", optional=True)
        _check_str(message, "message", optional=True)
        _check_str(tool_call_id, "tool_call_id", optional=True)
        _check_str(key, "key", optional=True)
        _check_mapping(response_schema, "response_schema")
        _check_mapping(metadata, "metadata")
        self.reason = reason
        self.message = message
        self.tool_call_id = tool_call_id
        self.response_schema = dict(response_schema) if response_schema is not None else None
        self.metadata = dict(metadata) if metadata is not None else None
        self.key = key

    def validate_payload(self, payload: Any) -> None:
        """Raise ``InvalidResponseError`` if ``payload`` fails the ``response_schema``."""
        if self.response_schema is None:
            return
        errors = schema_errors(payload, self.response_schema)
        if errors:
            raise InvalidResponseError(
                f"answer to {self.request_id!r} does not match its response schema: "
                + "; ".join(errors),
                request_ids=[self.request_id],
            )

    def create_response(self, payload: Any) -> InterruptResponseContent:
        """Answer the question. The payload is checked against ``response_schema`` here,
        before anything is sent; a request past its expiry can only be cancelled."""
        if self.is_expired():
            raise ExpiredRequestError(
                f"interrupt {self.request_id!r} expired; it can only be cancelled",
                request_ids=[self.request_id],
            )
        self.validate_payload(payload)
        return InterruptResponseContent(self.request_id, payload, "resolved")

    def cancel(self) -> InterruptResponseContent:
        """Decline to answer: the tool takes its "cancelled" branch and the run goes on."""
        return InterruptResponseContent(self.request_id, None, "cancelled")

    def _fields(self) -> dict[str, Any]:
        out: dict[str, Any] = {"request_id": self.request_id}
        for name in ("reason", "message", "tool_call_id", "key"):
            if getattr(self, name) is not None:
                out[name] = getattr(self, name)
        if self.response_schema is not None:
            out["response_schema"] = copy.deepcopy(self.response_schema)
        if self.metadata is not None:
            out["metadata"] = to_jsonable(self.metadata)
        out.update(self._expiry_field())
        return out

    @classmethod
    def _load(cls, data: dict[str, Any]) -> AIContent:
        return cls(data.pop("request_id"), **data)


class InterruptResponseContent(InputResponseContent):
    """The answer to an ``InterruptRequestContent``: ``status`` is ``"resolved"`` (with a
    ``payload``) or ``"cancelled"``."""

    __slots__ = ("metadata", "payload", "status")
    type = "interrupt_response"

    def __init__(
        self,
        request_id: str,
        payload: Any = None,
        status: InterruptStatus = "resolved",
        *,
        metadata: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(request_id, **kwargs)
        if status not in ("resolved", "cancelled"):
            raise ValueError(f"status must be 'resolved' or 'cancelled', got {status!r}")
        _check_mapping(metadata, "metadata")
        self.payload = payload
        self.status: InterruptStatus = status
        self.metadata = dict(metadata) if metadata is not None else None

    @property
    def cancelled(self) -> bool:
        """Whether the person declined to answer."""
        return self.status == "cancelled"

    def _fields(self) -> dict[str, Any]:
        out: dict[str, Any] = {"request_id": self.request_id, "status": self.status}
        if self.payload is not None:
            out["payload"] = to_jsonable(self.payload)
        if self.metadata is not None:
            out["metadata"] = to_jsonable(self.metadata)
        return out

    @classmethod
    def _load(cls, data: dict[str, Any]) -> AIContent:
        return cls(data.pop("request_id"), **data)
