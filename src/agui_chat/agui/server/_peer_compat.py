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

#: The name of the rule for Agent Framework's snake_case members.
AGENT_FRAMEWORK_SNAKE_CASE = "agent-framework-snake-case"

_TOP_LEVEL = (("thread_id", "threadId"), ("run_id", "runId"))

_log = logging.getLogger("agui_chat.agui")


def apply_client_rules(data: dict[str, Any]) -> None:
    """Read, in ``data``, the members known clients misspell under their spec names."""
    read: list[str] = []
    for snake, camel in _TOP_LEVEL:
        if snake in data and camel not in data:
            data[camel] = data.pop(snake)
            read.append(snake)
    messages = data.get("messages")
    for index, message in enumerate(messages if isinstance(messages, list) else []):
        if (
            isinstance(message, dict)
            and message.get("role") == "assistant"
            and "tool_calls" in message
            and "toolCalls" not in message
        ):
            calls = message["toolCalls"] = message.pop("tool_calls")
            for call in calls if isinstance(calls, list) else []:
                function = call.get("function") if isinstance(call, dict) else None
                if isinstance(function, dict) and isinstance(function.get("arguments"), dict):
                    function["arguments"] = json.dumps(
                        function["arguments"], ensure_ascii=False, separators=(",", ":")
                    )
            read.append(f"messages[{index}].tool_calls")
    if read:
        _log.debug(
            "compatibility rule %s: read %s as camelCase (Agent Framework's AGUIChatClient "
            "sends them so)",
            AGENT_FRAMEWORK_SNAKE_CASE,
            ", ".join(read),
        )
