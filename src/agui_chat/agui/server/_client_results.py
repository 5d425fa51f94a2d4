"""Tool results a client sends for the server's own gated tools (DESIGN §4: a client-written
result for a server tool is never taken as that tool's result).

Each ``TOOL_CALL_RESULT`` the server emits has a sealed ``messageId``
(:meth:`InterruptSigner.result_id`); a result in the history for a call of a gated server
tool must carry its seal, else the request is refused before anything runs. A result for a
call a verified ``resume`` entry answers is the resume check's (rule
``copilotkit-resume-echo``: it is dropped there), so it is left out here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set

from ..._contents import FunctionCallContent, FunctionResultContent
from ..._messages import ChatMessage
from ..._role_and_finish_reason import ChatRole
from ..._tools import AITool, ApprovalRequiredAIFunction
from ._resume_check import ResumeRejected
from ._signing import InterruptSigner


def check_client_results(
    messages: Sequence[ChatMessage],
    thread_id: str,
    signer: InterruptSigner,
    functions: Mapping[str, AITool],
    answered: Set[str] = frozenset(),
) -> None:
    """Refuse (``ResumeRejected``) a tool result for a gated server tool's call that this
    server did not write; ``answered``: the call ids the request's resume answers."""
    calls: dict[str, FunctionCallContent] = {}
    for message in messages:
        for content in message.contents:
            if isinstance(content, FunctionCallContent):
                calls.setdefault(content.call_id, content)
    for message in messages:
        if message.role != ChatRole.TOOL:
            continue
        for content in message.contents:
            if not isinstance(content, FunctionResultContent) or content.call_id in answered:
                continue
            call = calls.get(content.call_id)
            tool = functions.get(call.name) if call is not None else None
            if call is None or not isinstance(tool, ApprovalRequiredAIFunction):
                continue
            if not tool.requires_approval(call.arguments):
                continue
            text = content.result if isinstance(content.result, str) else str(content.result)
            if signer.is_result_id(message.message_id, thread_id, call.call_id, text):
                continue
            raise ResumeRejected(
                "TOOL_RESULT_NOT_ISSUED",
                f"the history holds a result for call {call.call_id!r} of {call.name!r}, a "
                "tool that needs approval, that this server did not produce (its message id "
                "is not the TOOL_CALL_RESULT's messageId, or the content was changed); nothing "
                "was run: send the tool message as the server sent it, or answer the approval "
                "through resume",
            )
