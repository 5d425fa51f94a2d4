"""Issuing AG-UI interrupts for the requests a run paused on.

An approval request becomes ``{"id", "reason": "tool_call", "message", "toolCallId",
"responseSchema": {approved, reason?, editedArgs?}, "expiresAt"?}``; a question (a tool
that called ``request_input``) ``{"id", "reason", "message"?, "responseSchema"?,
"expiresAt"?, "metadata": {"agui_chat": {"toolCallId"?, "key"}}}``, since the spec keeps
``toolCallId`` for approvals. Every ``id`` is a signed token (``_signing.py``). With
``display`` (the server's own page) each also carries the consent engine's display
(``_display.py``) in ``metadata.agui_chat.shown``: ``{"title", "call"?, "tool"?}``, each
``{"text", "full", "omitted"}``, the only text the page shows of it (DESIGN §3 rule 8).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from ..._contents import FunctionCallContent
from ..._display import Shown, shown_call, shown_text
from ..._hitl_contents import (
    InputRequestContent,
    InterruptRequestContent,
    ToolApprovalRequestContent,
)
from ..._principal import Principal
from ..._tools import AIFunctionDeclaration, AITool
from ...consent import _rules
from ...consent._grants import may_remember
from ...consent._rules import approval_response_schema, may_edit
from ...middleware._tool_tracing import REQUESTED_AT, TRACEPARENT, traceparent_of_current
from ..wire._messages import QUESTION_METADATA_KEY
from ._page_display import shown_json
from ._signing import InterruptClaims, InterruptSigner, new_nonce, pause_digest

#: The ``reason`` of an approval interrupt (as the .NET SDK, Agent Framework and pydantic-ai).
APPROVAL_REASON = "tool_call"

Slot = tuple[str, str | None]


@dataclass
class InterruptIssuer:
    """Turns the requests a run paused on into AG-UI ``Interrupt`` objects for one thread.
    ``ttl`` bounds how long an answer is accepted (a request's own earlier expiry wins)."""

    signer: InterruptSigner
    thread_id: str
    ttl: timedelta | None
    functions: Mapping[str, AITool]
    display: bool = False
    store_epoch: Callable[[], str | None] = lambda: None  # read as each pause is issued
    #: Who made the request that made these calls (bound into each approval's id).
    requester: Principal | None = None
    #: How long an approval may ask to be remembered here (``None``: not at all, the store
    #: keeps no grants), in seconds.
    remember_up_to: float | None = None

    def issue(
        self,
        requests: Sequence[InputRequestContent],
        calls: Mapping[str, FunctionCallContent],
        answers: Mapping[str, list[list[Any]]],
    ) -> list[dict[str, Any]]:
        """One interrupt per request. ``calls`` (by id) bind a question to the call that
        asked it; ``answers`` are the answers each call already got, carried forward so a
        tool may ask several questions."""
        now, epoch = _rules.clock(), self.store_epoch()
        slots = _distinct_slots(requests)
        out: list[dict[str, Any]] = []
        for request, (_, key) in zip(requests, slots, strict=True):
            deadlines = [request.expires_at.timestamp()] if request.expires_at else []
            if self.ttl is not None:
                deadlines.append(now + self.ttl.total_seconds())
            expires_at = math.ceil(min(deadlines)) if deadlines else None
            common: dict[str, Any] = {
                "thread_id": self.thread_id,
                "expires_at": expires_at,
                "nonce": new_nonce(),
                "pause": pause_digest(slots) if len(slots) > 1 else None,
                "pause_size": len(slots),
                "store_epoch": epoch,
                "issued_at": math.floor(now) if epoch is None else None,
                **_trace_claims(request, now),
            }
            if isinstance(request, ToolApprovalRequestContent):
                interrupt = self._approval(request, common)
            else:
                assert isinstance(request, InterruptRequestContent) and key is not None
                interrupt = self._question(request, key, common, calls, answers)
            if expires_at is not None:
                moment = datetime.fromtimestamp(expires_at, tz=timezone.utc)
                interrupt["expiresAt"] = moment.strftime("%Y-%m-%dT%H:%M:%SZ")  # ISO 8601
            out.append(interrupt)
        return out

    def _approval(
        self, request: ToolApprovalRequestContent, common: dict[str, Any]
    ) -> dict[str, Any]:
        call = request.tool_call
        function = self.functions.get(call.name)
        allow_edits = may_edit(request.allow_edits, function)
        claims = InterruptClaims(
            kind="approval",
            call_id=call.call_id,
            tool_name=call.name,
            arguments=dict(call.arguments or {}),
            allow_edits=allow_edits,
            # Who made the call: the id four eyes compares, the name for the record (not the
            # roles: what they were then decides nothing later).
            requester=None if self.requester is None else self.requester.to_dict(roles=False),
            **common,
        )
        remember = self.remember_up_to if may_remember(function) else None
        edits: Mapping[str, Any] | None = None
        if allow_edits:
            edits = (
                function.parameters
                if isinstance(function, AIFunctionDeclaration)
                else {"type": "object"}
            )
        message = request.message or f"Approve {call.name}?"
        shown = {
            "title": shown_text(message),
            "call": shown_call(call.name, call.arguments),
            "tool": shown_text(call.name, multiline=False),
        }
        return _present(
            id=self.signer.sign(claims),
            reason=APPROVAL_REASON,
            message=message,
            toolCallId=call.call_id,
            responseSchema=approval_response_schema(edits, remember_up_to=remember),
            metadata=self._shown({}, shown),
        )

    def _question(
        self,
        request: InterruptRequestContent,
        key: str,
        common: dict[str, Any],
        calls: Mapping[str, FunctionCallContent],
        answers: Mapping[str, list[list[Any]]],
    ) -> dict[str, Any]:
        call = calls.get(request.tool_call_id) if request.tool_call_id is not None else None
        # A question naming a call no stream showed (an id the model made up) is a question
        # no tool asked: its answer goes back to the model, not to a tool that does not exist.
        call_id = request.tool_call_id if call is not None else None
        question = _present(
            key=key,
            message=request.message,
            reason=request.reason,
            schema=request.response_schema,
        )
        claims = InterruptClaims(
            kind="question",
            call_id=call_id,
            tool_name=call.name if call is not None else None,
            arguments=dict(call.arguments or {}) if call is not None else None,
            question=question,
            answers=list(answers.get(call_id, [])) if call_id is not None else [],
            **common,
        )
        marker = _present(key=key, toolCallId=call_id)
        shown = {"title": shown_text(request.message or "The agent has a question.")}
        if call is not None:
            shown["tool"] = shown_text(call.name, multiline=False)
        return _present(
            id=self.signer.sign(claims),
            reason=request.reason or "input_required",
            message=request.message,
            responseSchema=request.response_schema,
            metadata=self._shown(
                {**(request.metadata or {}), QUESTION_METADATA_KEY: marker}, shown
            ),
        )

    def _shown(self, metadata: dict[str, Any], shown: dict[str, Shown]) -> dict[str, Any] | None:
        """``metadata`` with the display for the server's own page, when it has one."""
        if self.display:
            ours = metadata.setdefault(QUESTION_METADATA_KEY, {})
            ours["shown"] = {k: shown_json(v) for k, v in shown.items()}
        return metadata or None


def _present(**values: Any) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


def _trace_claims(request: InputRequestContent, now: float) -> dict[str, Any]:
    """The span the run paused in and when the request was made (none when tracing is off)."""
    properties = request.additional_properties or {}
    traceparent = properties.get(TRACEPARENT) or traceparent_of_current()
    if not isinstance(traceparent, str):
        return {}
    at = properties.get(REQUESTED_AT)
    return {"traceparent": traceparent, "requested_at": at if isinstance(at, float) else now}


def _distinct_slots(requests: Sequence[InputRequestContent]) -> list[Slot]:
    """The slot of each request (as ``InterruptClaims.slot``), made distinct within the
    pause: a question whose slot an earlier one has is keyed by its request id instead, or
    failing that numbered."""
    out: list[Slot] = []
    for request in requests:
        if isinstance(request, ToolApprovalRequestContent):
            out.append((request.tool_call.call_id, None))
            continue
        assert isinstance(request, InterruptRequestContent)
        call_id, request_id = request.tool_call_id or "", request.request_id
        slot, number = (call_id, request.key or request.message or request_id), 1
        while slot in out:
            slot = (call_id, f"{request_id}#{number}" if number > 1 else request_id)
            number += 1
        out.append(slot)
    return out
