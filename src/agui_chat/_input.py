"""Asking a person a question from inside a tool: ``request_input`` and ``InputRequired``."""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from datetime import datetime
from typing import Any

from ._hitl_contents import InterruptResponseContent
from ._schema import parse_expiry, to_jsonable


def question_digest(
    key: str, message: str | None, response_schema: Mapping[str, Any] | None
) -> str:
    """The identity of a question, which its answer is bound to: a digest of its ``key``,
    ``message`` and ``response_schema`` in canonical JSON (key order does not matter)."""
    schema = to_jsonable(response_schema) if response_schema is not None else None
    spelled = json.dumps(
        [key, message, schema], sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
    return hashlib.sha256(spelled.encode("utf-8")).hexdigest()


class InputRequired(Exception):
    """Raised inside a tool to pause the run and ask a person a question (not an error: the
    run ends with an ``InterruptRequestContent``). ``key`` tells apart several questions of
    one tool call (by default the message); empty text is a ``ValueError``."""

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
        if not message.strip() or not reason or key == "":
            raise ValueError("message, reason and key must be non-empty")
        super().__init__(message)
        self.message = message
        self.response_schema = dict(response_schema) if response_schema is not None else None
        self.reason = reason
        self.expires_at = parse_expiry(expires_at)
        self.key = key or message
        self.metadata = dict(metadata) if metadata is not None else None

    @property
    def digest(self) -> str:
        """The identity of this question (:func:`question_digest`)."""
        return question_digest(self.key, self.message, self.response_schema)


_answers: ContextVar[Mapping[str, InterruptResponseContent] | None] = ContextVar(
    "agui_chat_input_answers", default=None
)


@contextlib.contextmanager
def provide_answers(answers: Mapping[str, InterruptResponseContent]) -> Iterator[None]:
    """Make ``answers`` (keyed by :func:`question_digest`) visible to ``request_input``."""
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
) -> InterruptResponseContent:
    """Ask the person a question from inside a tool.

    Returns the answer (``.status``, ``.cancelled``, ``.payload``) when the run was resumed
    with an answer to this very question (same key, message and response schema); otherwise
    raises ``InputRequired``, which pauses the run. Give each question of one tool its own
    ``key`` (by default the message).
    """
    request = InputRequired(
        message,
        response_schema=response_schema,
        reason=reason,
        expires_at=expires_at,
        key=key,
    )
    answers = _answers.get()
    answer = answers.get(request.digest) if answers is not None else None
    if answer is None:
        raise request
    return answer
