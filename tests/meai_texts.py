"""The texts Microsoft.Extensions.AI's ``FunctionInvokingChatClient`` gives the model in place
of a tool result, quoted exactly, so the tests say which MEAI text they expect instead of
spelling it out (dotnet/extensions, ``FunctionInvokingChatClient.CreateFunctionResultContent``
and ``FunctionInvokingChatClientApprovalsTests``: a rejection with the reason "Custom rejection
for Func1" gives ``"Tool call invocation rejected. Custom rejection for Func1"``; a null, empty
or blank reason gives ``"Tool call invocation rejected."``)."""

from __future__ import annotations

#: A tool that returned nothing (``result.Result ?? "Success: Function completed."``).
COMPLETED = "Success: Function completed."

#: A tool that raised, without ``IncludeDetailedErrors``.
FAILED = "Error: Function failed."

#: A rejected call whose reason is blank or absent.
REJECTED = "Tool call invocation rejected."


def not_found(name: str) -> str:
    """A call of a function the loop does not have."""
    return f'Error: Requested function "{name}" not found.'


def failed(message: str) -> str:
    """A tool that raised, with ``IncludeDetailedErrors``: the exception's message appended."""
    return f"{FAILED} Exception: {message}"


def rejected(reason: str | None = None) -> str:
    """A rejected call: MEAI appends the person's reason verbatim (a space, then the reason
    exactly as given: no capital letter, no period added) when it is not blank."""
    if reason is None or not reason.strip():
        return REJECTED
    return f"{REJECTED} {reason}"
