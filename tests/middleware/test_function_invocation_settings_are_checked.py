"""The tool loop's settings are checked when the client is built, each refusal naming the
setting and what it must be (the full text: a caller reads it to fix the call)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from loop_support import scripted

from agui_chat import FunctionInvokingChatClient, ai_function


@ai_function
def ping() -> str:
    """Ping."""
    return "pong"


def _refused(error: type[Exception], message: str, **settings: Any) -> None:
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        FunctionInvokingChatClient(scripted(), **settings)


def test_the_smallest_limits_are_accepted() -> None:
    client = FunctionInvokingChatClient(scripted(), max_iterations=1, max_consecutive_errors=0)
    assert (client.max_iterations, client.max_consecutive_errors) == (1, 0)


@pytest.mark.parametrize("bad", [0, -1])
def test_max_iterations_must_be_an_int_of_at_least_one(bad: Any) -> None:
    _refused(ValueError, "max_iterations must be an int >= 1", max_iterations=bad)


@pytest.mark.parametrize("bad", [-1, -5])
def test_max_consecutive_errors_must_be_an_int_of_at_least_zero(bad: Any) -> None:
    _refused(ValueError, "max_consecutive_errors must be an int >= 0", max_consecutive_errors=bad)


def test_unknown_settings_are_named_sorted() -> None:
    with pytest.raises(
        TypeError, match=r"^unknown function invocation setting\(s\): max_iteration, retry$"
    ):
        FunctionInvokingChatClient.check_settings({"retry": 1, "max_iteration": 3})
    FunctionInvokingChatClient.check_settings(
        {
            "max_iterations": 2,
            "max_consecutive_errors": 1,
            "allow_concurrent_invocation": True,
            "include_detailed_errors": True,
            "terminate_on_unknown_calls": True,
            "additional_tools": [],
            "function_invoker": None,
        }
    )
