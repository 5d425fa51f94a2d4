"""The answer to a tool approval on the AG-UI wire: ``{approved, reason?, editedArgs?}``, one
strict model read (:func:`read_approval_payload`) and written (:func:`to_wire`) nowhere else.
An answer that cannot be read in full is refused, never partly applied: an unknown key
(``edited_args``...) would leave an edit unread and run the call unedited.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import ValidationError

from ._exceptions import InvalidResponseError
from ._schema import to_jsonable

#: The wire key of the edited arguments (a full replacement of the call's arguments).
EDITED_ARGS = "editedArgs"

#: The payload's shape, as the refusals name it.
APPROVAL_PAYLOAD_SHAPE = "{approved, reason?, editedArgs?}"

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

    def to_wire(self) -> dict[str, Any]:
        """The JSON object for the wire (keys left out rather than ``null``)."""
        wire: dict[str, Any] = {"approved": self.approved}
        if self.reason is not None:
            wire["reason"] = self.reason
        if self.edited_args is not None:
            wire[EDITED_ARGS] = copy.deepcopy(self.edited_args)
        return wire


@cache
def _wire_model() -> Any:
    """The strict pydantic model of the payload, built on first use (pydantic is not
    imported with the package)."""
    from pydantic import BaseModel, ConfigDict, Field, field_validator

    class WirePayload(BaseModel):
        model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

        approved: bool
        reason: str | None = None
        edited_args: dict[str, Any] | None = Field(default=None, alias="editedArgs")

        @field_validator("reason", "edited_args", mode="before")
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
    payload = ApprovalPayload(wire.approved, wire.reason, wire.edited_args)
    if payload.edited_args is not None and not payload.approved:
        raise ApprovalPayloadError(
            f"{where}.{EDITED_ARGS} only go with approved: true", request_ids=ids
        )
    return payload


def to_wire(
    approved: bool, reason: str | None = None, edited_args: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The wire payload of an answer (edits made plain JSON), checked by the reader's model:
    a wrong value raises :class:`ApprovalPayloadError`."""
    edits = None if edited_args is None else to_jsonable(dict(edited_args))
    return read_approval_payload(ApprovalPayload(approved, reason, edits).to_wire()).to_wire()


def approval_response_schema(edited_args: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The ``responseSchema`` of an approval interrupt; ``editedArgs`` only when editing is
    offered (``edited_args``: the schema the edit must fit). No ``additionalProperties: false``
    (the bytes peers have always been sent): the reader refuses unknown keys all the same."""
    properties: dict[str, Any] = {"approved": {"type": "boolean"}, "reason": {"type": "string"}}
    if edited_args is not None:
        properties[EDITED_ARGS] = dict(edited_args)
    return {"type": "object", "properties": properties, "required": ["approved"]}


def offers_edits(schema: object) -> bool:
    """Whether an approval interrupt's ``responseSchema`` offers editing the arguments."""
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    return isinstance(properties, Mapping) and EDITED_ARGS in properties


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
