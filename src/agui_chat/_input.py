"""Asking a person a question from inside a tool: ``request_input`` and ``InputRequired``.

The first time a tool calls ``request_input``, it raises ``InputRequired``; the function
invocation middleware turns that into an ``InterruptRequestContent`` and pauses the run. When
the answer comes back, the tool is invoked again with the same arguments and the same call
returns the answer.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from ._schema import parse_expiry

__all__ = ["InputAnswer", "InputRequired", "request_input"]


@dataclass(frozen=True, slots=True)
class InputAnswer:
    """A person's answer to ``request_input``: ``status`` is ``"resolved"`` or
    ``"cancelled"``; a cancelled answer has no payload and means the person declined."""

    status: Literal["resolved", "cancelled"]
    payload: Any = None

    @property
    def cancelled(self) -> bool:
        """Whether the person declined to answer."""
        return self.status == "cancelled"


class InputRequired(Exception):
    """Raised inside a tool to pause the run and ask a person a question.

    Not an error: the run ends with an ``InterruptRequestContent`` and resumes when the
    answer arrives. ``key`` tells apart several questions asked by one tool call (it defaults
    to the message).
    """

    def __init__(
        self,
        message: str,
        *,
        response_schema: Mapping[str, Any] | None = None,
        reason: str = "input_required",
        expires_at: datetime | str | None = None,
        key: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        if not isinstance(message, str) or not message.strip():
            raise ValueError("message must be a non-empty str")
        if response_schema is not None and not isinstance(response_schema, Mapping):
            raise TypeError("response_schema must be a JSON schema mapping")
        if not isinstance(reason, str) or not reason:
            raise ValueError("reason must be a non-empty str")
        if key is not None and (not isinstance(key, str) or not key):
            raise ValueError("key must be a non-empty str")
        super().__init__(message)
        self.message = message
        self.response_schema = dict(response_schema) if response_schema is not None else None
        self.reason = reason
        self.expires_at = parse_expiry(expires_at)
        self.key = key or message
        self.metadata = dict(metadata) if metadata is not None else None


_answers: ContextVar[Mapping[str, InputAnswer] | None] = ContextVar(
    "agui_chat_input_answers", default=None
)


@contextlib.contextmanager
def provide_answers(answers: Mapping[str, InputAnswer]) -> Iterator[None]:
    """Make ``answers`` (by question key) visible to ``request_input`` while a tool runs."""
    token = _answers.set(answers)
    try:
        yield
    finally:
        _answers.reset(token)


def request_input(
    message: str,
    *,
    response_schema: Mapping[str, Any] | None = None,
    reason: str = "input_required",
    expires_at: datetime | str | None = None,
    key: str | None = None,
) -> InputAnswer:
    """Ask the person a question from inside a tool.

    Returns the answer when the run has been resumed with one; otherwise raises
    ``InputRequired``, which pauses the run. Give each question of one tool its own ``key``
    (by default the message is the key).
    """
    request = InputRequired(
        message,
        response_schema=response_schema,
        reason=reason,
        expires_at=expires_at,
        key=key,
    )
    answers = _answers.get()
    if answers is not None and request.key in answers:
        return answers[request.key]
    raise request
