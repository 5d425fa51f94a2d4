"""Message content in the GenAI conventions' JSON shapes (recorded only with
``capture_content=True``), each a JSON string on the span."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from .._contents import (
    AIContent,
    FunctionCallContent,
    FunctionResultContent,
    TextContent,
    TextReasoningContent,
)
from .._hitl_contents import (
    InterruptRequestContent,
    InterruptResponseContent,
    ToolApprovalRequestContent,
    ToolApprovalResponseContent,
)
from .._messages import ChatMessage


def to_json(value: Any) -> str:
    """Compact JSON that never fails: what JSON cannot hold (even a cycle) becomes ``str``."""
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    except (ValueError, RecursionError):  # a circular value
        return str(value)


def _part(content: AIContent) -> dict[str, Any] | None:
    if isinstance(content, (TextContent, TextReasoningContent)):
        kind = "text" if isinstance(content, TextContent) else "reasoning"
        return {"type": kind, "content": content.text}
    if isinstance(content, (FunctionCallContent, ToolApprovalRequestContent)):
        call = content.tool_call if isinstance(content, ToolApprovalRequestContent) else content
        return {"type": "tool_call", "id": call.call_id, "name": call.name,
                "arguments": call.arguments}  # fmt: skip
    if isinstance(content, FunctionResultContent):
        return {"type": "tool_call_response", "id": content.call_id, "response": content.result}
    if isinstance(content, ToolApprovalResponseContent):
        return {"type": "approval", "id": content.request_id, "approved": content.approved,
                "reason": content.reason}  # fmt: skip
    if isinstance(content, InterruptRequestContent):
        return {"type": "input_request", "id": content.request_id, "content": content.message}
    if isinstance(content, InterruptResponseContent):
        return {"type": "input_response", "id": content.request_id, "status": content.status,
                "content": content.payload}  # fmt: skip
    return None


def messages_json(messages: Sequence[ChatMessage], finish_reason: str | None = None) -> str:
    """``gen_ai.input.messages``, or with a finish reason ``gen_ai.output.messages``."""
    out = []
    for message in messages:
        parts = [p for p in (_part(c) for c in message.contents) if p is not None]
        item: dict[str, Any] = {"role": str(message.role.value), "parts": parts}
        if finish_reason is not None:
            item["finish_reason"] = finish_reason
        out.append(item)
    return to_json(out)
