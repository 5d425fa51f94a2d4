"""Issuing AG-UI interrupts for the requests a run paused on.

An approval request becomes ``{"id", "reason": "tool_call", "message", "toolCallId",
"responseSchema": {approved, reason?, editedArgs?}, "expiresAt"?}``; a question (a tool
that called ``request_input``) becomes ``{"id", "reason", "message", "responseSchema"?,
"expiresAt"?, "metadata": {"agui_chat": {"toolCallId", "key"}}}`` without a top-level
``toolCallId`` (which the spec keeps for approvals). Every ``id`` is a signed token
(see ``_signing.py``) so the resume can be checked and the call rebuilt; each carries a
fresh random nonce, so the ids of one run are unique (agui-wire §3.2) even for two requests
whose other claims are equal, and commits to its pause by one digest (so its size does not
grow with the pause).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta, timezone
from typing import Any, NamedTuple

from ..._approval_payload import approval_response_schema
from ..._contents import (
    FunctionCallContent,
)
from ..._hitl_contents import (
    InputRequestContent,
    InterruptRequestContent,
    ToolApprovalRequestContent,
)
from ..._tools import AIFunctionDeclaration, AITool, ApprovalRequiredAIFunction
from ...middleware._tool_tracing import REQUESTED_AT, TRACEPARENT, traceparent_of_current
from ..wire._messages import QUESTION_METADATA_KEY
from ._signing import InterruptClaims, InterruptSigner, new_nonce, pause_digest

__all__ = ["APPROVAL_REASON", "InterruptIssuer", "format_expiry", "question_key"]

#: Where the issuer reads the time (epoch seconds); tests replace it with a fake clock.
_clock: Callable[[], float] = time.time

#: The ``reason`` of an approval interrupt (what the .NET SDK, Agent Framework and
#: pydantic-ai emit).
APPROVAL_REASON = "tool_call"


class Pause(NamedTuple):
    """The pause a token belongs to: the digest of its slots (``None`` when it holds one
    interrupt) and how many it holds."""

    digest: str | None
    size: int


def format_expiry(epoch_seconds: int) -> str:
    """ISO 8601 in UTC, as ``expiresAt`` carries it."""
    moment = datetime.fromtimestamp(epoch_seconds, tz=timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def question_key(request: InterruptRequestContent) -> str:
    """The key that tells apart the questions of one tool call."""
    return request.key or request.message or request.request_id


class InterruptIssuer:
    """Turns the requests a run paused on into AG-UI ``Interrupt`` objects for one thread.

    ``ttl`` bounds how long an answer is accepted (a request's own earlier expiry wins);
    ``functions`` are the tools the server runs, for the edited-arguments schema.
    """

    def __init__(
        self,
        signer: InterruptSigner,
        thread_id: str,
        *,
        ttl: timedelta | None,
        functions: Mapping[str, AITool],
    ) -> None:
        self.signer = signer
        self.thread_id = thread_id
        self.ttl = ttl
        self.functions = functions

    def issue(
        self,
        requests: Sequence[InputRequestContent],
        calls: Mapping[str, FunctionCallContent],
        answers: Mapping[str, list[list[Any]]],
    ) -> list[dict[str, Any]]:
        """One interrupt per request. ``calls`` are the calls known to the run (by id), to
        bind a question to the call that asked it; ``answers`` are the answers each call
        already got, carried forward so a tool may ask several questions."""
        now = _clock()
        slots = _distinct_slots(requests)
        # One digest for the whole pause, whatever its size: every token stays small.
        pause = Pause(pause_digest(slots) if len(slots) > 1 else None, len(slots))
        out: list[dict[str, Any]] = []
        for request, slot in zip(requests, slots, strict=True):
            if isinstance(request, ToolApprovalRequestContent):
                out.append(self._approval(request, pause, now))
            elif isinstance(request, InterruptRequestContent):
                key = slot[1]
                assert key is not None
                out.append(self._question(request, key, pause, now, calls, answers))
        return out

    def _expiry(self, requested: datetime | None, now: float) -> int | None:
        candidates: list[float] = []
        if self.ttl is not None:
            candidates.append(now + self.ttl.total_seconds())
        if requested is not None:
            candidates.append(requested.timestamp())
        return math.ceil(min(candidates)) if candidates else None

    def _approval(
        self, request: ToolApprovalRequestContent, pause: Pause, now: float
    ) -> dict[str, Any]:
        call = request.tool_call
        function = self.functions.get(call.name)
        wrapper = function.get_service(ApprovalRequiredAIFunction) if function else None
        allow_edits = request.allow_edits and (wrapper is None or wrapper.allow_edits)
        expires_at = self._expiry(request.expires_at, now)
        claims = InterruptClaims(
            kind="approval",
            thread_id=self.thread_id,
            call_id=call.call_id,
            tool_name=call.name,
            arguments=dict(call.arguments or {}),
            expires_at=expires_at,
            allow_edits=allow_edits,
            pause=pause.digest,
            pause_size=pause.size,
            nonce=new_nonce(),
            **_trace_claims(request, now),
        )
        edits: Mapping[str, Any] | None = None
        if allow_edits:
            edits = (
                function.parameters
                if isinstance(function, AIFunctionDeclaration)
                else {"type": "object"}
            )
        interrupt: dict[str, Any] = {
            "id": self.signer.sign(claims),
            "reason": APPROVAL_REASON,
            "message": request.message or f"Approve {call.name}?",
            "toolCallId": call.call_id,
            "responseSchema": approval_response_schema(edits),
        }
        if expires_at is not None:
            interrupt["expiresAt"] = format_expiry(expires_at)
        return interrupt

    def _question(
        self,
        request: InterruptRequestContent,
        key: str,
        pause: Pause,
        now: float,
        calls: Mapping[str, FunctionCallContent],
        answers: Mapping[str, list[list[Any]]],
    ) -> dict[str, Any]:
        call_id = request.tool_call_id
        call = calls.get(call_id) if call_id is not None else None
        question: dict[str, Any] = {"key": key}
        if request.message is not None:
            question["message"] = request.message
        if request.reason is not None:
            question["reason"] = request.reason
        if request.response_schema is not None:
            question["schema"] = request.response_schema
        expires_at = self._expiry(request.expires_at, now)
        claims = InterruptClaims(
            kind="question",
            thread_id=self.thread_id,
            call_id=call_id,
            tool_name=call.name if call is not None else None,
            arguments=dict(call.arguments or {}) if call is not None else None,
            expires_at=expires_at,
            question=question,
            answers=list(answers.get(call_id, [])) if call_id is not None else [],
            pause=pause.digest,
            pause_size=pause.size,
            nonce=new_nonce(),
            **_trace_claims(request, now),
        )
        marker: dict[str, Any] = {"key": key}
        if call_id is not None:
            marker["toolCallId"] = call_id
        interrupt: dict[str, Any] = {
            "id": self.signer.sign(claims),
            "reason": request.reason or "input_required",
        }
        if request.message is not None:
            interrupt["message"] = request.message
        if request.response_schema is not None:
            interrupt["responseSchema"] = request.response_schema
        if expires_at is not None:
            interrupt["expiresAt"] = format_expiry(expires_at)
        interrupt["metadata"] = {**(request.metadata or {}), QUESTION_METADATA_KEY: marker}
        return interrupt


def _trace_claims(request: InputRequestContent, now: float) -> dict[str, Any]:
    """The tracing claims of a request (none when tracing is off): the span the run paused
    in and when the request was made."""
    properties = request.additional_properties or {}
    traceparent = properties.get(TRACEPARENT) or traceparent_of_current()
    if not isinstance(traceparent, str):
        return {}
    at = properties.get(REQUESTED_AT)
    return {"traceparent": traceparent, "requested_at": at if isinstance(at, float) else now}


def _slot(request: InputRequestContent) -> tuple[str, str | None]:
    """Matches ``InterruptClaims.slot``."""
    if isinstance(request, ToolApprovalRequestContent):
        return (request.tool_call.call_id, None)
    assert isinstance(request, InterruptRequestContent)
    return (request.tool_call_id or "", question_key(request))


def _distinct_slots(requests: Sequence[InputRequestContent]) -> list[tuple[str, str | None]]:
    """The slot of each request, made distinct within the pause: a question whose slot an
    earlier request already has (two questions with no tool call and the same message)
    is keyed by its request id instead, or failing that numbered, so a resume can answer
    each of them once."""
    out: list[tuple[str, str | None]] = []
    for request in requests:
        slot = _slot(request)
        if slot in out and isinstance(request, InterruptRequestContent):
            slot = (slot[0], request.request_id)
            number = 2
            while slot in out:
                slot = (slot[0], f"{request.request_id}#{number}")
                number += 1
        out.append(slot)
    return out
