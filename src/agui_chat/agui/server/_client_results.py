"""Tool results a client sends for the server's own gated tools (DESIGN §4: a client-written
result for a server tool is never taken as that tool's result).

Each ``TOOL_CALL_RESULT`` the server emits has a sealed ``messageId``
(:meth:`InterruptSigner.result_id`); a result in the history for a call of a gated server
tool must carry its seal, else the request is refused before anything runs. A result for a
call a verified ``resume`` entry answers is the resume check's (rule
``copilotkit-resume-echo``: it is dropped there), so it is left out here.

Agent Framework's ``AGUIChatClient`` drops the seal (``agent-framework-unsealed-results``): an
unsealed result is taken only if the approval store remembers this server issuing exactly it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence, Set

from ..._contents import FunctionCallContent, FunctionResultContent
from ..._exceptions import ApprovalStoreError
from ..._messages import ChatMessage
from ..._role_and_finish_reason import ChatRole
from ..._tools import AITool
from ...consent._rules import gate
from ...stores import ApprovalStore
from ._peer_compat import AGENT_FRAMEWORK_UNSEALED_RESULTS
from ._resume_check import STORE_RETRY_AFTER, ResumeRejected
from ._signing import InterruptSigner

_log = logging.getLogger("agui_chat.agui")


async def check_client_results(
    messages: Sequence[ChatMessage],
    thread_id: str,
    signer: InterruptSigner,
    functions: Mapping[str, AITool],
    store: ApprovalStore,
    answered: Set[str] = frozenset(),
) -> None:
    """Refuse (``ResumeRejected``) a tool result for a gated server tool's call that this
    server did not write (an unsealed one the store does not remember it issuing);
    ``answered``: the call ids the request's resume answers (left out)."""
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
    for message_id, content in results:
        call = calls.get(content.call_id)
        tool = functions.get(call.name) if call is not None else None
        # The consent engine's gate, through every wrapper and the tool's live listing.
        if call is None or tool is None or gate(tool, call.arguments) is None:
            continue
        text = content.result if isinstance(content.result, str) else str(content.result)
        if signer.is_result_id(message_id, thread_id, call.call_id, text):
            continue
        try:
            issued = await store.record(signer.issued_result_key(thread_id, call.call_id, text))
        except ApprovalStoreError as exc:
            raise ResumeRejected(
                "APPROVAL_STORE_UNAVAILABLE",
                f"the approval store cannot be reached to check the result of call "
                f"{call.call_id!r}, which carries no seal; nothing was run",
                retry_after=STORE_RETRY_AFTER,
            ) from exc
        if issued is None:
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
