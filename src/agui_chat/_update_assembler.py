"""``UpdateAssembler``: what every provider adapter's stream assembler stands on, turning the
events of one streamed response into ``ChatResponseUpdate``s that fold into one message."""

from __future__ import annotations

import abc
from datetime import datetime
from typing import Any

from ._contents import AIContent
from ._responses import ChatResponseUpdate
from ._role_and_finish_reason import ChatRole


class UpdateAssembler(abc.ABC):
    """What turns the events of one streamed response into updates as they arrive: feed it
    events with :meth:`add`, then call :meth:`finish` once the stream ends.

    Every update carries the response's id (also as ``message_id``, so the updates fold into
    one assistant message), model and creation time, as far as the stream has told them.
    """

    __slots__ = ("_created_at", "_model_id", "_response_id")

    def __init__(self) -> None:
        self._response_id: str | None = None
        self._model_id: str | None = None
        self._created_at: datetime | None = None

    @abc.abstractmethod
    def add(self, event: Any) -> ChatResponseUpdate | None:
        """The update for this event, or ``None`` if it carries nothing to show yet."""

    @abc.abstractmethod
    def finish(self) -> ChatResponseUpdate | None:
        """The last update, if any, once the stream ended (an error if it ended early)."""

    def _seen(
        self, response_id: str | None, model_id: str | None, created_at: datetime | None = None
    ) -> None:
        """Keep what an event says of the response (a later event that leaves a value out
        keeps the one before; the first creation time stays)."""
        self._response_id = response_id or self._response_id
        self._model_id = model_id or self._model_id
        if self._created_at is None:
            self._created_at = created_at

    def _update(self, contents: list[AIContent], event: Any) -> ChatResponseUpdate:
        return ChatResponseUpdate(
            ChatRole.ASSISTANT,
            contents,
            message_id=self._response_id,
            response_id=self._response_id,
            model_id=self._model_id,
            created_at=self._created_at,
            raw_representation=event,
        )
