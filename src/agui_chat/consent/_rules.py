"""The consent rules: whether a call waits for a person (its gate), whether an answer may be
used for its request (edits, expiry, the answer's schema, answered exactly once), the one
request-id scheme, and the approval answer's payload on the AG-UI wire
(``{approved, reason?, editedArgs?}``: one strict model, read by :func:`read_approval_payload`
and written by :func:`to_wire` nowhere else; an answer that cannot be read in full is refused,
never partly applied, since an unknown key such as ``edited_args`` would leave an edit unread
and run the call unedited). The tool loop, ``AGUIServer``, ``AGUIChatClient`` and the content
classes all ask here; none decides any of it again.
"""

from __future__ import annotations

import copy
import hashlib
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from pydantic import ValidationError

from .._exceptions import (
    DuplicateResponseError,
    ExpiredRequestError,
    InvalidResponseError,
    ToolArgumentsError,
    UnansweredRequestError,
)
from .._schema import schema_errors, to_jsonable
from .._tools import AIFunction, AITool, ApprovalRequiredAIFunction

#: Where the consent engine reads the time (epoch seconds); tests replace it with a fake clock.
clock: Callable[[], float] = time.time


# -- the one request-id scheme -----------------------------------------------------------------


def approval_request_id(call_id: str) -> str:
    """The id of the approval request for a call (stable, so a replay pairs up again)."""
    return f"approval_{call_id}"


def question_request_id(call_id: str | None, digest: str) -> str:
    """The id of a question (its :func:`agui_chat._input.question_digest`) asked by a call
    (``None``: asked by no tool call); a new question of the same call gets a new id."""
    return f"input_{call_id or ''}_{hashlib.sha256(digest.encode('utf-8')).hexdigest()[:12]}"


def is_about(request_id: str, call_id: str) -> bool:
    """Whether ``request_id`` names a request (an approval or a question) of ``call_id``."""
    return request_id == approval_request_id(call_id) or (
        request_id.startswith(f"input_{call_id}_") and len(request_id) == len(call_id) + 19
    )


# -- is this call gated? -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Gate:
    """What a gated call asks of the person: the approval's text, and whether they may edit
    the arguments (only when every approval wrapper of the tool allows it)."""

    message: str
    allow_edits: bool


def find_tool(tools: Mapping[str, AITool], name: str) -> AITool | None:
    """The tool a call of ``name`` names, if its source still offers it (an MCP tool the
    server withdrew is not found, even from a copied tool list)."""
    tool = tools.get(name)
    return tool if tool is not None and tool.current() is not None else None


def _wrappers(tool: AITool) -> list[ApprovalRequiredAIFunction]:
    found: list[ApprovalRequiredAIFunction] = []
    while (wrapper := tool.get_service(ApprovalRequiredAIFunction)) is not None:
        found.append(wrapper)
        tool = wrapper.inner
    return found


def approval_wrappers(tool: AITool) -> list[ApprovalRequiredAIFunction]:
    """Every approval wrapper a call of ``tool`` passes, seen through any wrapper
    (``DelegatingAIFunction``, a user's subclass, several gates), and those of the tool as its
    source offers it now (a copied MCP tool the server re-declared destructive)."""
    return _with_live(tool, tool.current())


def _with_live(tool: AITool, live: AITool | None) -> list[ApprovalRequiredAIFunction]:
    found = _wrappers(tool)
    if live is not None and live is not tool:
        found += [w for w in _wrappers(live) if w not in found]
    return found


def gate(tool: AITool, arguments: Mapping[str, Any] | None) -> Gate | None:
    """The gate of one call of ``tool`` with ``arguments``, or ``None`` when it runs without
    asking. A wrapper's ``when=`` decides per call and fails closed (see
    ``ApprovalRequiredAIFunction.requires_approval``); a withdrawn tool is gated, with no
    edits, should a caller ask without :func:`find_tool` first."""
    live = tool.current()
    if live is None:
        return Gate(f"Approve {tool.name}?", allow_edits=False)
    wrappers = _with_live(tool, live)
    asking = [w for w in wrappers if w.requires_approval(arguments or {})]
    if not asking:
        return None
    return Gate(asking[0].approval_message(tool.name), all(w.allow_edits for w in wrappers))


def may_edit(allow_edits: bool, tool: AITool | None) -> bool:
    """Whether a person may edit a call's arguments: its request offered it (``allow_edits``)
    and no approval wrapper of its tool forbids it (the tool's own word wins)."""
    return allow_edits and (tool is None or all(w.allow_edits for w in approval_wrappers(tool)))


# -- may this answer be used for this request? ---------------------------------------------------


def is_past(expires_at: datetime | float | None, now: float | None = None) -> bool:
    """Whether a request that expires at ``expires_at`` (``None``: never; a datetime or
    epoch seconds) has expired."""
    if expires_at is None:
        return False
    deadline = expires_at.timestamp() if isinstance(expires_at, datetime) else expires_at
    return deadline <= (clock() if now is None else now)


def check_approval(
    request_id: str,
    *,
    approved: bool,
    edited_arguments: Mapping[str, Any] | None = None,
    allow_edits: bool,
    expires_at: datetime | float | None,
    tool: AITool | None = None,
    now: float | None = None,
) -> dict[str, Any] | None:
    """Refuse an approval answer that may not be used, before anything runs: approving past
    the expiry (``ExpiredRequestError``; rejecting is always allowed), an edit the request or
    the tool did not offer, or one that does not fit the tool's parameters
    (``InvalidResponseError``). Returns the edited arguments as the tool will take them."""
    label = f"approval request {request_id!r}"
    ids = [request_id]
    if approved and is_past(expires_at, now):
        raise ExpiredRequestError(
            f"{label} expired; it can only be rejected",
            request_ids=ids,
            code="APPROVAL_EXPIRED",
        )
    if edited_arguments is None:
        return None
    if not approved:
        raise InvalidResponseError(
            f"{label}: edited arguments only go with an approval", request_ids=ids
        )
    if not may_edit(allow_edits, tool):
        raise InvalidResponseError(
            f"{label} does not allow editing the arguments",
            request_ids=ids,
            code="APPROVAL_EDIT_NOT_ALLOWED",
        )
    if isinstance(tool, AIFunction):
        try:
            tool.validate_arguments(edited_arguments)
        except ToolArgumentsError as exc:
            raise InvalidResponseError(
                f"{label}: the edited arguments do not fit the tool: {exc}", request_ids=ids
            ) from None
    return dict(edited_arguments)


def check_question(
    request_id: str,
    *,
    resolved: bool,
    payload: Any,
    response_schema: Mapping[str, Any] | None,
    expires_at: datetime | float | None,
    now: float | None = None,
) -> None:
    """Refuse an answer to a question that may not be used: resolved past the expiry
    (``ExpiredRequestError``; cancelling is always allowed) or a payload that fails the
    question's ``response_schema`` (``InvalidResponseError``)."""
    if not resolved:
        return
    if is_past(expires_at, now):
        raise ExpiredRequestError(
            f"question {request_id!r} expired; it can only be cancelled",
            request_ids=[request_id],
            code="INTERRUPT_EXPIRED",
        )
    check_payload(request_id, payload, response_schema)


def check_payload(request_id: str, payload: Any, response_schema: Mapping[str, Any] | None) -> None:
    """Refuse a payload that fails the ``response_schema`` its request gave
    (``InvalidResponseError``); a schema that is not one holds the answer to nothing."""
    try:
        errors = [] if response_schema is None else schema_errors(payload, response_schema)
    except ValueError:
        errors = []
    if errors:
        raise InvalidResponseError(
            f"answer to {request_id!r} does not match its response schema: "
            + "; ".join(errors)[:300],
            request_ids=[request_id],
        )


def check_answered_once(answers: Mapping[str, Sequence[object]]) -> None:
    """Each request of ``answers`` (request id -> its answers) is answered
    (``UnansweredRequestError``: a pause is answered in one go), and once
    (``DuplicateResponseError``)."""
    missing = [rid for rid, given in answers.items() if not given]
    if missing:
        raise UnansweredRequestError(
            f"{requests_named(missing)} {'has' if len(missing) == 1 else 'have'} no answer; a "
            "paused run must be answered in one go (approve or reject every approval request, "
            "answer or cancel every question)",
            request_ids=missing,
        )
    duplicates = [rid for rid, given in answers.items() if len(given) > 1]
    if duplicates:
        raise DuplicateResponseError(
            f"{requests_named(duplicates)} answered more than once; answer each request "
            "exactly once",
            request_ids=duplicates,
        )


def requests_named(ids: Sequence[str]) -> str:
    """``request 'a'`` or ``requests 'a', 'b'``, as refusals name them."""
    quoted = ", ".join(repr(i) for i in ids)
    return f"request {quoted}" if len(ids) == 1 else f"requests {quoted}"


# -- the approval answer's payload -----------------------------------------------------------

RememberScope = Literal["thread", "principal"]
RememberMatch = Literal["arguments", "tool"]
REMEMBER_SCOPES: tuple[RememberScope, ...] = ("thread", "principal")
REMEMBER_MATCHES: tuple[RememberMatch, ...] = ("arguments", "tool")


@dataclass(frozen=True, slots=True)
class Remember:
    """What an approval asks to remember: the ``scope``, for how long (``seconds``; ``None``:
    as long as allowed) and what calls it covers (``match``)."""

    scope: RememberScope
    seconds: float | None = None
    match: RememberMatch = "arguments"

    def __post_init__(self) -> None:
        if self.scope not in REMEMBER_SCOPES:
            raise ValueError(f"remember must be 'thread' or 'principal', got {self.scope!r}")
        if self.match not in REMEMBER_MATCHES:
            raise ValueError(f"remember_match must be 'arguments' or 'tool', got {self.match!r}")
        seconds = self.seconds
        if seconds is not None and (
            isinstance(seconds, bool) or not seconds > 0 or seconds == float("inf")
        ):
            raise ValueError(f"remember_for must be a positive duration, got {seconds!r}")

    def to_wire(self) -> dict[str, Any]:
        """The payload's ``remember`` object ``{scope, seconds?, match?}``."""
        out: dict[str, Any] = {"scope": self.scope}
        if self.seconds is not None:
            out["seconds"] = self.seconds
        if self.match != "arguments":
            out["match"] = self.match
        return out


#: The wire key of the edited arguments (a full replacement of the call's arguments).
EDITED_ARGS = "editedArgs"

#: The payload's shape, as the refusals name it.
APPROVAL_PAYLOAD_SHAPE = "{approved, reason?, editedArgs?, remember?}"

#: How many unknown keys a refusal lists (the rest are counted), each cut to _KEY_CHARS.
_SHOWN_KEYS = 3
_KEY_CHARS = 40
#: pydantic's errors for a key the model does not know (``invalid_key``: not a string).
_UNKNOWN_KEY_ERRORS = ("extra_forbidden", "invalid_key")


@dataclass(frozen=True, slots=True)
class ApprovalPayload:
    """A person's answer to a tool approval; ``edited_args`` (``editedArgs`` on the wire)
    replaces the call's arguments entirely. Read strictly (:func:`read_approval_payload`):
    no other key, no coercion (``"true"`` is not a boolean), no ``null`` for a key that may
    be left out, edits only when approved."""

    approved: bool
    reason: str | None = None
    edited_args: dict[str, Any] | None = None
    remember: Remember | None = None

    def to_wire(self) -> dict[str, Any]:
        """The JSON object for the wire (keys left out rather than ``null``)."""
        wire: dict[str, Any] = {"approved": self.approved}
        if self.reason is not None:
            wire["reason"] = self.reason
        if self.edited_args is not None:
            wire[EDITED_ARGS] = copy.deepcopy(self.edited_args)
        if self.remember is not None:
            wire["remember"] = self.remember.to_wire()
        return wire


@cache
def _wire_model() -> Any:
    """The strict pydantic model of the payload, built on first use (pydantic is not
    imported with the package)."""
    from pydantic import BaseModel, ConfigDict, Field, field_validator

    class WireRemember(BaseModel):
        model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

        scope: RememberScope
        seconds: float | None = Field(default=None, gt=0, allow_inf_nan=False)
        match: RememberMatch = "arguments"

    class WirePayload(BaseModel):
        model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

        approved: bool
        reason: str | None = None
        edited_args: dict[str, Any] | None = Field(default=None, alias="editedArgs")
        remember: WireRemember | None = None

        @field_validator("reason", "edited_args", "remember", mode="before")
        @classmethod
        def _not_null(cls, value: Any) -> Any:
            # Only an explicit value reaches a validator (a left-out key keeps its default).
            if value is None:
                raise ValueError("null")
            return value

    return WirePayload


class ApprovalPayloadError(InvalidResponseError):
    """An approval payload the model cannot read; ``unknown_keys`` are the keys it does not
    know (empty when the payload is wrong otherwise: a missing ``approved``, a wrong type)."""

    def __init__(
        self, message: str, *, unknown_keys: Iterable[str] = (), request_ids: Iterable[str] = ()
    ) -> None:
        super().__init__(message, request_ids=request_ids)
        self.unknown_keys: tuple[str, ...] = tuple(unknown_keys)


def read_approval_payload(
    value: object, *, where: str = "approval payload", request_ids: Iterable[str] = ()
) -> ApprovalPayload:
    """Read an approval answer from an untrusted JSON value; :class:`ApprovalPayloadError`
    naming what is wrong and where (``"resume[0].payload"``)."""
    ids = tuple(request_ids)
    if not isinstance(value, dict):
        raise ApprovalPayloadError(
            f"{where} must be a JSON object {APPROVAL_PAYLOAD_SHAPE}, got {_json_type(value)}",
            request_ids=ids,
        )
    from pydantic import ValidationError

    try:
        wire = _wire_model().model_validate(value)
    except ValidationError as exc:
        raise _refusal(exc, value, where, ids) from None
    remember = None
    if wire.remember is not None:
        given = wire.remember
        remember = Remember(given.scope, given.seconds, given.match)
    payload = ApprovalPayload(wire.approved, wire.reason, wire.edited_args, remember)
    if payload.edited_args is not None and not payload.approved:
        raise ApprovalPayloadError(
            f"{where}.{EDITED_ARGS} only go with approved: true", request_ids=ids
        )
    if remember is not None and not payload.approved:
        raise ApprovalPayloadError(
            f"{where}.remember only goes with approved: true", request_ids=ids
        )
    return payload


def to_wire(
    approved: bool,
    reason: str | None = None,
    edited_args: Mapping[str, Any] | None = None,
    remember: Remember | None = None,
) -> dict[str, Any]:
    """The wire payload of an answer (edits made plain JSON), checked by the reader's model:
    a wrong value raises :class:`ApprovalPayloadError`."""
    edits = None if edited_args is None else to_jsonable(dict(edited_args))
    payload = ApprovalPayload(approved, reason, edits, remember)
    return read_approval_payload(payload.to_wire()).to_wire()


def approval_response_schema(
    edited_args: Mapping[str, Any] | None = None, *, remember_up_to: float | None = None
) -> dict[str, Any]:
    """The ``responseSchema`` of an approval interrupt; ``editedArgs`` only when editing is
    offered (``edited_args``: the schema the edit must fit), ``remember`` only when an approval
    may be remembered (for ``remember_up_to`` seconds at most: a longer one is capped). No
    ``additionalProperties: false`` (the bytes peers have always been sent): the reader
    refuses unknown keys all the same."""
    properties: dict[str, Any] = {"approved": {"type": "boolean"}, "reason": {"type": "string"}}
    if edited_args is not None:
        properties[EDITED_ARGS] = dict(edited_args)
    if remember_up_to is not None:
        seconds = {"type": "number", "exclusiveMinimum": 0, "maximum": remember_up_to}
        properties["remember"] = {
            "type": "object",
            "properties": {
                "scope": {"enum": list(REMEMBER_SCOPES)},
                "seconds": seconds,
                "match": {"enum": list(REMEMBER_MATCHES)},
            },
            "required": ["scope"],
        }
    return {"type": "object", "properties": properties, "required": ["approved"]}


def offers_remember(schema: object) -> bool:
    """Whether an approval interrupt's ``responseSchema`` offers remembering the approval."""
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    return isinstance(properties, Mapping) and "remember" in properties


def offers_edits(schema: object, capabilities: object = None) -> bool:
    """Whether a peer offers editing the arguments of an approval: its interrupt's
    ``responseSchema`` names ``editedArgs``; an interrupt without a schema, when the peer's
    AG-UI capabilities advertise ``humanInTheLoop.approveWithEdits``. Nothing offered means
    not editable: a peer that was never offered an edit ignores it and runs the unedited call.
    """
    if schema is not None:  # the interrupt's own word is more precise than the agent's
        properties = schema.get("properties") if isinstance(schema, Mapping) else None
        return isinstance(properties, Mapping) and EDITED_ARGS in properties
    hitl = capabilities.get("humanInTheLoop") if isinstance(capabilities, Mapping) else None
    return isinstance(hitl, Mapping) and hitl.get("approveWithEdits") is True


# -- refusals ----------------------------------------------------------------------------------


def _refusal(
    exc: ValidationError, value: dict[Any, Any], where: str, ids: tuple[str, ...]
) -> ApprovalPayloadError:
    errors = exc.errors()
    unknown = [
        str(e["loc"][0]) for e in errors if e["type"] in _UNKNOWN_KEY_ERRORS and len(e["loc"]) == 1
    ]
    if unknown:
        shown = ", ".join(repr(k[:_KEY_CHARS]) for k in unknown[:_SHOWN_KEYS])
        more = f" (and {len(unknown) - _SHOWN_KEYS} more)" if len(unknown) > _SHOWN_KEYS else ""
        noun = "key" if len(unknown) == 1 else "keys"
        edits = any("edit" in k.lower() or k.lower() in ("args", "arguments") for k in unknown)
        hint = f" (edited arguments go under {EDITED_ARGS!r})" if edits else ""
        return ApprovalPayloadError(
            f"{where} has unknown {noun} {shown}{more}; expected {APPROVAL_PAYLOAD_SHAPE}{hint}",
            unknown_keys=unknown,
            request_ids=ids,
        )
    first = errors[0]
    field = str(first["loc"][0]) if first["loc"] else ""
    if first["type"] == "missing":
        message = f"{where} lacks 'approved'; expected {APPROVAL_PAYLOAD_SHAPE}"
    elif len(first["loc"]) > 1:  # inside editedArgs: only its keys are checked
        message = f"{where}.{field} must be an object with string keys"
    else:
        wanted = {"approved": "a boolean (true or false)", "reason": "a string"}.get(
            field, "an object"
        )
        message = f"{where}.{field} must be {wanted}, got {_json_type(value.get(field))}"
    return ApprovalPayloadError(message, request_ids=ids)


_JSON_TYPES: tuple[tuple[Any, str], ...] = (
    (type(None), "null"),
    (bool, "boolean"),
    ((int, float), "number"),
    (str, "string"),
    ((list, tuple), "array"),
    (Mapping, "object"),
)


def _json_type(value: object) -> str:
    return next((n for kind, n in _JSON_TYPES if isinstance(value, kind)), type(value).__name__)
