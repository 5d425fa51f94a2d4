"""Streamed Chat Completions chunks, turned into ``ChatResponseUpdate``s as they arrive.

Text and reasoning deltas become updates at once. A tool call streams its arguments in
pieces keyed by the call's ``index``; each piece is shown as a ``FunctionCallUpdateContent``
and the whole call follows as one ``FunctionCallContent`` when the choice finishes (or the
stream ends). Usage, which arrives in a last chunk with no choices, goes on the final update
together with the finish reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from openai.types import CompletionUsage
from openai.types.chat import ChatCompletionChunk
from openai.types.chat.chat_completion_chunk import ChoiceDeltaToolCall

from .._contents import (
    AIContent,
    ErrorContent,
    FunctionCallContent,
    FunctionCallUpdateContent,
    UsageContent,
)
from .._responses import ChatResponseUpdate
from .._role_and_finish_reason import ChatFinishReason
from .._update_assembler import UpdateAssembler
from ._response import (
    finish_reason,
    function_call,
    new_call_id,
    text_and_refusal,
    timestamp,
    usage_details,
)

__all__ = ["StreamAssembler"]


@dataclass(slots=True)
class _PendingCall:
    """A tool call whose pieces are still arriving."""

    index: int
    call_id: str
    id_from_server: bool
    name: str | None = None
    arguments: list[str] = field(default_factory=list)

    def complete(self) -> FunctionCallContent:
        return function_call(self.call_id, self.name, "".join(self.arguments), self.index)


class StreamAssembler(UpdateAssembler):
    """Feed it chunks with :meth:`add`, then call :meth:`finish` once the stream ends."""

    __slots__ = ("_by_index", "_calls", "_finish_reason", "_refusal", "_usage")

    def __init__(self) -> None:
        super().__init__()
        self._calls: list[_PendingCall] = []
        self._by_index: dict[int, _PendingCall] = {}
        self._refusal: list[str] = []
        self._finish_reason: ChatFinishReason | None = None
        self._usage: CompletionUsage | None = None

    def add(self, chunk: ChatCompletionChunk) -> ChatResponseUpdate | None:
        """The update for this chunk, or ``None`` if it carries nothing to show yet."""
        self._seen(chunk.id, chunk.model, timestamp(chunk.created))
        if chunk.usage is not None:
            # Servers that repeat usage send running totals: keep the latest, never sum.
            self._usage = chunk.usage
        contents: list[AIContent] = []
        if chunk.choices:
            choice = chunk.choices[0]
            delta = choice.delta
            said, refusal = text_and_refusal(delta)
            contents += said
            if refusal:
                self._refusal.append(refusal)
            for piece in delta.tool_calls or ():
                contents.append(self._add_call_piece(piece))
            reason = finish_reason(choice.finish_reason)
            if reason is not None:
                self._finish_reason = reason
                contents += self._completed()
        if not contents:
            return None
        return self._update(contents, chunk)

    def finish(self) -> ChatResponseUpdate:
        """The last update: any calls not yet completed, the usage and the finish reason."""
        contents = self._completed()
        usage = usage_details(self._usage)
        if usage is not None:
            contents.append(UsageContent(usage))
        update = self._update(contents, None)
        update.finish_reason = self._finish_reason
        return update

    # -- helpers -------------------------------------------------------------------------
    def _add_call_piece(self, piece: ChoiceDeltaToolCall) -> FunctionCallUpdateContent:
        index = piece.index
        call = self._by_index.get(index)
        # Some servers send every parallel call at index 0, told apart only by their ids.
        if call is None or (piece.id and call.id_from_server and piece.id != call.call_id):
            call = _PendingCall(index, piece.id or new_call_id(), bool(piece.id))
            self._by_index[index] = call
            self._calls.append(call)
        function = piece.function
        name = function.name if function is not None else None
        arguments = (function.arguments if function is not None else None) or ""
        if name and not call.name:
            call.name = name
        if arguments:
            call.arguments.append(arguments)
        return FunctionCallUpdateContent(call.call_id, call.name, arguments)

    def _completed(self) -> list[AIContent]:
        out: list[AIContent] = []
        if self._refusal:
            out.append(ErrorContent("".join(self._refusal), error_code="refusal"))
            self._refusal = []
        out += [call.complete() for call in self._calls]
        self._calls = []
        self._by_index = {}
        return out
