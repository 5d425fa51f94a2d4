"""The LangChain dialect: ``HumanInTheLoopMiddleware``'s approvals and decisions.

Its interrupt value (``metadata.langgraph.raw`` on the AG-UI interrupt) is ``per_call``
(``{"type": "tool_approval", "tool_call_id", "name", "args", "description"}``, one decision
each) or ``batched``, its default (``{"action_requests": [...], "review_configs": [...]}``,
answered with ``{"decisions": [...]}`` by position). A decision is ``{"type": "approve"}``,
``{"type": "reject", "message": reason}`` (a cancel rejects with "cancelled": the middleware
has no cancel) or ``{"type": "edit", "edited_action": {"name", "args"}}``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..._approval_payload import read_approval_payload
from ..._contents import FunctionCallContent
from ..._hitl_contents import CANCELLED_REASON, ToolApprovalRequestContent
from ._updates import INTERRUPT_KEY

__all__ = ["BATCH_KEY", "approvals_for", "decision", "hitl_value"]

#: On a request content of a batched interrupt: ``{"interruptId", "index", "count"}``.
BATCH_KEY = "agui_langchain_batch"

FindCall = Callable[[str | None, str, Any], FunctionCallContent | None]


def hitl_value(interrupt: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The LangChain ``HumanInTheLoopMiddleware`` value an AG-UI interrupt carries, if any."""
    metadata = interrupt.get("metadata")
    langgraph = metadata.get("langgraph") if isinstance(metadata, Mapping) else None
    raw = langgraph.get("raw") if isinstance(langgraph, Mapping) else None
    if not isinstance(raw, Mapping):
        return None
    if raw.get("type") == "tool_approval" and isinstance(raw.get("name"), str):
        return raw
    requests = raw.get("action_requests")
    if isinstance(requests, list) and requests and all(_is_action(a) for a in requests):
        return raw
    return None


def _is_action(action: Any) -> bool:
    return isinstance(action, Mapping) and isinstance(action.get("name"), str)


def approvals_for(
    interrupt: Mapping[str, Any], value: Mapping[str, Any], find_call: FindCall, props: Any
) -> list[ToolApprovalRequestContent]:
    """The approval requests for a LangChain HITL interrupt. ``find_call(call_id, name,
    args)`` finds the call the stream showed; ``props`` are the request's properties."""
    interrupt_id = str(interrupt["id"])
    expires_at = interrupt.get("expiresAt")
    # A schema the interrupt carries describes LangChain's decisions, not the AG-UI answer the
    # person gives (which becomes a decision when it is sent): the answer is not held to it.
    props = {
        **props,
        INTERRUPT_KEY: {k: v for k, v in interrupt.items() if k != "responseSchema"},
    }
    if value.get("type") == "tool_approval":
        call_id = value.get("tool_call_id")
        call = find_call(call_id if isinstance(call_id, str) else None, value["name"], value)
        if call is None:
            call = FunctionCallContent(
                call_id if isinstance(call_id, str) else interrupt_id,
                value["name"],
                dict(value.get("args") or {}),
            )
        return [
            ToolApprovalRequestContent(
                interrupt_id,
                call,
                message=_text(value.get("description")),
                expires_at=expires_at,
                additional_properties=dict(props),
            )
        ]
    actions: list[Any] = list(value["action_requests"])
    configs = value.get("review_configs")
    allowed = {
        c.get("action_name"): c.get("allowed_decisions")
        for c in (configs if isinstance(configs, list) else [])
        if isinstance(c, Mapping)
    }
    out = []
    for index, action in enumerate(actions):
        name = action["name"]
        call = find_call(None, name, action) or FunctionCallContent(
            f"{interrupt_id}:{index}", name, dict(action.get("args") or {})
        )
        decisions = allowed.get(name)
        batch = {"interruptId": interrupt_id, "index": index, "count": len(actions)}
        out.append(
            ToolApprovalRequestContent(
                f"{interrupt_id}#{index}" if len(actions) > 1 else interrupt_id,
                call,
                message=_text(action.get("description")),
                allow_edits=not isinstance(decisions, list) or "edit" in decisions,
                expires_at=expires_at,
                additional_properties={**props, BATCH_KEY: batch},
            )
        )
    return out


def decision(request: ToolApprovalRequestContent, entry: Mapping[str, Any]) -> dict[str, Any]:
    """LangChain's decision for one checked AG-UI resume entry answering ``request``; its
    payload is read by the one approval payload model (an unknown key raises
    ``InvalidResponseError``, before anything is sent)."""
    if entry.get("status") == "cancelled":
        return {"type": "reject", "message": CANCELLED_REASON}
    payload = read_approval_payload(
        entry.get("payload"),
        where=f"answer to {request.request_id!r}",
        request_ids=[request.request_id],
    )
    if not payload.approved:
        reason = payload.reason
        return {"type": "reject", "message": reason} if reason else {"type": "reject"}
    if payload.edited_args is not None:
        return {
            "type": "edit",
            "edited_action": {"name": request.tool_call.name, "args": payload.edited_args},
        }
    return {"type": "approve"}


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None
