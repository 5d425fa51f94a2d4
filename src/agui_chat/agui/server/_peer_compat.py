"""Compatibility rules for AG-UI clients in the field that deviate from the spec (DESIGN §7),
applied to the parsed body before anything reads it, each named in a DEBUG line.

- ``agent-framework-snake-case``: Microsoft Agent Framework's ``AGUIChatClient`` sends
  ``thread_id`` / ``run_id`` and assistant ``tool_calls`` (``function.arguments`` maybe an
  object): each is read as its camelCase member when that is absent (else stripped as
  unknown), object arguments as their JSON text.
"""

from __future__ import annotations

import json
import logging
from typing import Any

__all__ = ["AGENT_FRAMEWORK_SNAKE_CASE", "apply_client_rules"]

#: The name of the rule for Agent Framework's snake_case members.
AGENT_FRAMEWORK_SNAKE_CASE = "agent-framework-snake-case"

_TOP_LEVEL = (("thread_id", "threadId"), ("run_id", "runId"))

_log = logging.getLogger("agui_chat.agui")


def apply_client_rules(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` (a copy) with the members known clients misspell read under their spec names."""
    read: list[str] = []
    out = dict(data)
    for snake, camel in _TOP_LEVEL:
        if snake in out and camel not in out:
            out[camel] = out.pop(snake)
            read.append(snake)
    messages = out.get("messages")
    if isinstance(messages, list):
        out["messages"] = [_assistant_tool_calls(m, i, read) for i, m in enumerate(messages)]
    if read:
        _log.debug(
            "compatibility rule %s: read %s as camelCase (Agent Framework's AGUIChatClient "
            "sends them so)",
            AGENT_FRAMEWORK_SNAKE_CASE,
            ", ".join(read),
        )
    return out


def _assistant_tool_calls(message: Any, index: int, read: list[str]) -> Any:
    if (
        not isinstance(message, dict)
        or message.get("role") != "assistant"
        or "tool_calls" not in message
        or "toolCalls" in message
    ):
        return message
    fixed = {k: v for k, v in message.items() if k != "tool_calls"}
    calls = message["tool_calls"]
    fixed["toolCalls"] = [_text_arguments(c) for c in calls] if isinstance(calls, list) else calls
    read.append(f"messages[{index}].tool_calls")
    return fixed


def _text_arguments(call: Any) -> Any:
    """A tool call whose ``function.arguments`` is an object, with them as JSON text."""
    function = call.get("function") if isinstance(call, dict) else None
    if not isinstance(function, dict) or not isinstance(function.get("arguments"), dict):
        return call
    text = json.dumps(function["arguments"], ensure_ascii=False, separators=(",", ":"))
    return {**call, "function": {**function, "arguments": text}}
