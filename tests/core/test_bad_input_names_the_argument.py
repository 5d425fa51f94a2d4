"""Issue 2, "Bad input": wrong argument types across the public constructors give
``TypeError`` / ``ValueError`` with a message naming the argument; nothing is silently
coerced into something else."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pytest

from agui_chat import (
    ChatClientBuilder,
    FunctionCallContent,
    LoggingChatClient,
    RetryingChatClient,
    UsageDetails,
)
from agui_chat.testing import ScriptedChatClient


def _model() -> ScriptedChatClient:
    return ScriptedChatClient(lambda messages, options: "ok")


def _tool(x: int) -> int:
    """A tool."""
    return x


CALL = FunctionCallContent("c1", "f", {})

CASES: list[tuple[str, Callable[[], Any], type[Exception], str]] = [
    (
        "usage extra counts",
        lambda: UsageDetails(additional_counts=3),
        TypeError,
        "additional_counts",
    ),
    (
        "usage extra count value",
        lambda: UsageDetails(additional_counts={"audio": "3"}),
        TypeError,
        "additional_counts",
    ),
    (
        "retry max delay",
        lambda: RetryingChatClient(_model(), max_delay=-1),
        ValueError,
        "max_delay",
    ),
    (
        "scripted model id",
        lambda: ScriptedChatClient(lambda m, o: "x", model_id=1),
        TypeError,
        "model_id",
    ),
]


@pytest.mark.parametrize(
    ("build", "error", "argument"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_a_wrong_argument_is_refused_naming_it(
    build: Callable[[], Any], error: type[Exception], argument: str
) -> None:
    with pytest.raises(error, match=argument):
        build()


def test_a_builder_refuses_a_bad_setting_when_it_is_given_not_at_build() -> None:
    builder = ChatClientBuilder(_model())
    with pytest.raises(ValueError, match="max_attempts"):
        builder.use_retry(max_attempts=0)
    assert isinstance(builder.build(), ScriptedChatClient)


def test_a_logger_adapter_is_accepted() -> None:
    adapter = logging.LoggerAdapter(logging.getLogger("agui"), {})
    assert LoggingChatClient(_model(), adapter).logger is adapter  # type: ignore[arg-type]
