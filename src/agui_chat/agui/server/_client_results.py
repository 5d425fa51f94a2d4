"""Tool results a client sends for the server's own gated tools (DESIGN §4: a client-written
result for a server tool is never taken as that tool's result).

Each ``TOOL_CALL_RESULT`` the server emits has a sealed ``messageId``
(:meth:`InterruptSigner.result_id`); a result in the history for a call of a gated server
tool must carry its seal, else the request is refused before anything runs. A result for a
call a verified ``resume`` entry answers is the resume check's (rule
``copilotkit-resume-echo``: it is dropped there), so it is left out here.

Two clients send a result of their own back on later runs, and each is swapped or taken only
for what the approval store remembers this server issuing:

- CopilotKit's ``useInterrupt`` keeps the text it wrote beside its answer (its echo) in place
  of the server's result: when the echo is dropped beside the verified answer, the store keeps
  the call's result under that exact text (:func:`remember_echo`), and a later run's echo is
  replaced by that result before the model sees it (``copilotkit-resume-echo``);
- Agent Framework's ``AGUIChatClient`` drops the seal (``agent-framework-unsealed-results``):
  an unsealed result is taken only if the store remembers this server issuing exactly it.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping, Sequence, Set

from ..._contents import AIContent, FunctionCallContent, FunctionResultContent
from ..._exceptions import ApprovalStoreError
from ..._messages import ChatMessage
from ..._role_and_finish_reason import ChatRole
from ..._tools import AITool
from ...consent._rules import gate
from ...stores import ApprovalStore, ClaimRecord
from ._claims import keep_result
from ._peer_compat import AGENT_FRAMEWORK_UNSEALED_RESULTS, COPILOTKIT_RESUME_ECHO
from ._resume_check import ResumeRejected, store_refusal
from ._signing import InterruptSigner

_log = logging.getLogger("agui_chat.agui")


async def check_client_results(
    messages: Sequence[ChatMessage],
    thread_id: str,
    signer: InterruptSigner,
    functions: Mapping[str, AITool],
    store: ApprovalStore,
    answered: Set[str] = frozenset(),
    *,
    agent_framework: bool = False,
) -> Sequence[ChatMessage]:
    """``messages`` as the model may see them: a tool result for a gated server tool's call
    that this server did not write is refused (``ResumeRejected``), an echo of an answer the
    store remembers is replaced by the call's result; ``answered``: the call ids the request's
    resume answers (left out); ``agent_framework``: the request is in that client's dialect."""
    calls: dict[str, FunctionCallContent] = {}
    for message in messages:
        for content in message.contents:
            if isinstance(content, FunctionCallContent):
                calls.setdefault(content.call_id, content)
    results = [
        (message.message_id, content)
        for message in messages
        if message.role == ChatRole.TOOL
        for content in message.contents
        if isinstance(content, FunctionResultContent) and content.call_id not in answered
    ]
    swapped: dict[int, FunctionResultContent] = {}
    for message_id, content in results:
        call = calls.get(content.call_id)
        tool = functions.get(call.name) if call is not None else None
        # The consent engine's gate, through every wrapper and the tool's live listing.
        if call is None or tool is None or gate(tool, call.arguments) is None:
            continue
        text = content.result if isinstance(content.result, str) else str(content.result)
        if signer.is_result_id(message_id, thread_id, call.call_id, text):
            continue
        if not agent_framework:  # its client never writes an echo: one store read fewer
            echo = await _read(store, signer.echo_key(thread_id, call.call_id, text), call)
            if echo is not None and echo.result is not None:
                swapped[id(content)] = dataclasses.replace(content, result=echo.result)
                _log.debug(
                    "compatibility rule %s: gave the model the result of call %r in place of "
                    "the echo of its answer the client keeps",
                    COPILOTKIT_RESUME_ECHO,
                    call.call_id,
                )
                continue
        if (
            await _read(store, signer.issued_result_key(thread_id, call.call_id, text), call)
            is None
        ):
            raise ResumeRejected(
                "TOOL_RESULT_NOT_ISSUED",
                f"the history holds a result for call {call.call_id!r} of {call.name!r}, a "
                "tool that needs approval, that this server did not produce (its message id "
                "is not the TOOL_CALL_RESULT's messageId, or the content was changed); nothing "
                "was run: send the tool message as the server sent it, or answer the approval "
                "through resume",
            )
        _log.debug(
            "compatibility rule %s: took the unsealed result of call %r, which this server "
            "issued (Agent Framework's AGUIChatClient drops the seal)",
            AGENT_FRAMEWORK_UNSEALED_RESULTS,
            call.call_id,
        )
    return _with_results(messages, swapped) if swapped else messages


async def _read(store: ApprovalStore, key: str, call: FunctionCallContent) -> ClaimRecord | None:
    """What the store holds under ``key`` for an unsealed result of ``call``."""
    try:
        return await store.record(key)
    except ApprovalStoreError as exc:
        what = f"the result of call {call.call_id!r}, which carries no seal, was not checked"
        raise store_refusal(exc, f"{what} and nothing was run") from exc


def _with_results(
    messages: Sequence[ChatMessage], swapped: Mapping[int, FunctionResultContent]
) -> list[ChatMessage]:
    """``messages`` with each result in ``swapped`` (by the identity of the one it replaces)."""
    out: list[ChatMessage] = []
    for message in messages:
        if any(id(c) in swapped for c in message.contents):
            contents: list[AIContent] = [swapped.get(id(c), c) for c in message.contents]
            message = message.clone(contents)
        out.append(message)
    return out


async def remember_echo(store: ApprovalStore, key: str, result: str, *, expires_at: float) -> None:
    """Keep ``result`` under ``key`` (:meth:`InterruptSigner.echo_key`) until ``expires_at``:
    a later run's echo under it is replaced by the result. A result the store cannot hold is
    kept as :data:`UNKEPT_RESULT`, as its replay is."""
    await store.claim(key, expires_at=expires_at)
    await keep_result(store, key, result)
