"""The person's reason for a rejection reaches the model exactly as written (DESIGN §3
rule 7, issue 24 item 5): MEAI's ``"Tool call invocation rejected."``, then a space and the
reason verbatim when it is not blank (.NET's ``string.IsNullOrWhiteSpace``); nothing is
capitalised, trimmed or added, since a reason may be a path or a command."""

from __future__ import annotations

import pytest
from loop_support import Ask, call, results_for, resume, scripted

from agui_chat import (
    ChatFinishReason,
    ChatMessage,
    ChatOptions,
    FunctionInvokingChatClient,
    ToolApprovalRequestContent,
    ai_function,
    approval_required,
)

REJECTED = "Tool call invocation rejected."

#: (the reason as the person gave it, what the model must receive as the call's result)
REASONS = [
    ("keep it", f"{REJECTED} keep it"),
    ("rm -rf is not allowed", f"{REJECTED} rm -rf is not allowed"),
    ("Done.", f"{REJECTED} Done."),
    ("multi\nline", f"{REJECTED} multi\nline"),
    ("/etc/passwd", f"{REJECTED} /etc/passwd"),
    ("  spaced out  ", f"{REJECTED}   spaced out  "),
    ("  ", REJECTED),
    ("", REJECTED),
    (None, REJECTED),
    ("\t\r\n\v\f\x85\u00a0\u2003\u2028\u2029", REJECTED),  # all blank to .NET
    ("\x1f", f"{REJECTED} \x1f"),  # blank to Python's str.isspace, not to .NET
    ("\u200b", f"{REJECTED} \u200b"),  # a zero-width space is not white space
]


@pytest.mark.parametrize(("reason", "expected"), REASONS)
async def test_the_model_receives_the_reason_verbatim(
    ask: Ask, reason: str | None, expected: str
) -> None:
    deleted: list[str] = []

    @approval_required
    @ai_function
    def delete_file(path: str) -> str:
        """Delete a file."""
        deleted.append(path)
        return f"deleted {path}"

    options = ChatOptions(tools=[delete_file])
    model = scripted([call("c1", "delete_file", path="/etc/passwd")], "Understood.")
    client = FunctionInvokingChatClient(model)
    history = [ChatMessage("user", "delete it")]
    paused = await ask(client, history, options)
    assert paused.finish_reason == ChatFinishReason.INPUT_REQUIRED
    [request] = paused.input_requests
    assert isinstance(request, ToolApprovalRequestContent)

    final = await ask(
        client, resume(history, paused, request.create_response(False, reason)), options
    )

    assert final.text == "Understood."
    assert deleted == []
    assert results_for(model.calls[-1][0], "c1") == [expected]
    assert results_for(final.messages, "c1") == [expected]
