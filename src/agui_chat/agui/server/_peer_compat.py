"""Compatibility rules for AG-UI clients in the field that deviate from the spec (DESIGN §7),
applied to the parsed body before anything reads it, each named in a DEBUG line.

- ``agent-framework-snake-case``: Microsoft Agent Framework's ``AGUIChatClient`` sends
  ``thread_id`` / ``run_id`` and assistant ``tool_calls`` (``function.arguments`` maybe an
  object): each is read as its camelCase member when that is absent (else stripped as
  unknown), object arguments as their JSON text.
- ``agent-framework-unsealed-results``: the same client drops each ``TOOL_CALL_RESULT``'s
  ``messageId`` (the seal); for its requests the approval store remembers the results issued
  for gated calls, and a later unsealed one is taken only if remembered (``_client_results``).
- ``copilotkit-resume-echo``: CopilotKit's ``useInterrupt`` writes a tool message echoing the
  payload beside its ``resume``; the resume check drops it (``ResumeEchoLog`` logs it). It
  then keeps that echo in place of the server's result on later runs: the store keeps the
  call's result under the echo, and a later run's echo is replaced by it (``_client_results``).
- ``strict-pre-1.0-client``: outcomes a pinned ``@ag-ui/core`` 0.0.x accepts (the encoder
  applies it), for a request without ``protocolVersion`` (which a 1.0 client must send) or,
  with ``AGUIServer(strict_pre_1_0_clients=True)``, for every request.
"""

from __future__ import annotations

import json
import logging
from datetime import timedelta
from typing import Any

#: The name of the rule for Agent Framework's snake_case members.
AGENT_FRAMEWORK_SNAKE_CASE = "agent-framework-snake-case"
#: The name of the rule for the results Agent Framework's client sends back unsealed.
AGENT_FRAMEWORK_UNSEALED_RESULTS = "agent-framework-unsealed-results"
#: How long a result issued to that client is remembered for a later turn of its thread.
ISSUED_RESULT_RETENTION = timedelta(days=30)

_TOP_LEVEL = (("thread_id", "threadId"), ("run_id", "runId"))

#: How many threads a server remembers having logged a rule for (then it starts again).
_MAX_THREADS = 4096

_log = logging.getLogger("agui_chat.agui")


def speaks_agent_framework(data: dict[str, Any]) -> bool:
    """Whether a parsed body (before :func:`apply_client_rules`) is in the dialect of Agent
    Framework's ``AGUIChatClient`` (``thread_id``, not ``threadId``)."""
    return "thread_id" in data and "threadId" not in data


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


#: The name of the rule for clients before AG-UI 1.0 (``AGUIServer(strict_pre_1_0_clients=)``).
STRICT_PRE_1_0_CLIENT = "strict-pre-1.0-client"


def note_strict_pre_1_0(on: bool | None) -> bool | None:
    """Log (INFO) that rule ``strict-pre-1.0-client`` is on for every request, or off for
    every one; returns ``on`` (``None``: by each request's ``protocolVersion``)."""
    if on is not None:
        _log.info(
            "compatibility rule %s %s: run outcomes %s pendingToolCallIds and the cancelled "
            "outcome, whatever protocolVersion a request names",
            STRICT_PRE_1_0_CLIENT,
            "on" if on else "off",
            "leave out" if on else "keep",
        )
    return None if on is None else bool(on)


class OncePerThread:
    """Whether a thread is seen for the first time (a bounded memory: past
    :data:`_MAX_THREADS` it starts again), so a rule is logged once per thread."""

    def __init__(self) -> None:
        self._seen: set[str] = set()

    def first(self, thread_id: str) -> bool:
        if thread_id in self._seen:
            return False
        if len(self._seen) >= _MAX_THREADS:
            self._seen.clear()
        self._seen.add(thread_id)
        return True


def serves_pre_1_0(
    on: bool | None, protocol_version: str | None, thread_id: str, seen: OncePerThread
) -> bool:
    """Whether rule ``strict-pre-1.0-client`` shapes a request's outcomes: as configured
    (``on``), else when it names no ``protocolVersion``: a 1.0 client must name it unless it
    takes the server for an older one, so either way it reads outcomes as 0.x defines them (a
    success without ``pendingToolCallIds``, which 1.0 derives from the events, and no
    cancelled outcome). Logged (INFO) the first time on a thread: a request that names no
    version is a client that reads 0.x outcomes, so nothing is lost either way."""
    if on is not None:
        return on
    if protocol_version is not None:
        return False
    if seen.first(thread_id):
        _log.info(
            "compatibility rule %s on thread %r: the request names no protocolVersion (a "
            "client before AG-UI 1.0, such as CopilotKit 1.74), so its run outcomes leave out "
            "pendingToolCallIds and the cancelled outcome",
            STRICT_PRE_1_0_CLIENT,
            thread_id,
        )
    return True


#: The name of the rule for the tool message CopilotKit's ``useInterrupt`` writes beside its
#: ``resume`` (``{role: "tool", toolCallId, content: JSON.stringify(payload)}``).
COPILOTKIT_RESUME_ECHO = "copilotkit-resume-echo"


class ResumeEchoLog(OncePerThread):
    """The log of rule ``copilotkit-resume-echo``: a tool message the client wrote for a call
    that a verified resume entry answers is dropped; the server's own answer stands. Logged
    the first time it applies on a thread."""

    def note(self, thread_id: str, calls: str) -> None:
        if not self.first(thread_id):
            return
        _log.warning(
            "compatibility rule %s on thread %r: dropped the tool message(s) the client wrote "
            "for a call its resume answers (the server's own result, or rejection, is what the "
            "model gets): %s",
            COPILOTKIT_RESUME_ECHO,
            thread_id,
            calls,
        )
