"""``OpenAIResponsesChatClient``: a chat client over OpenAI's Responses API."""

from __future__ import annotations

from typing import Any

import openai
from typing_extensions import Unpack

from .._client import ChatMessages
from .._messages import as_messages
from .._options import ChatOptions
from .._responses import ChatResponse
from ._client import Connection, OpenAIClientBase
from ._responses_parse import ResponsesStreamAssembler, to_chat_response
from ._responses_request import build_responses_request

__all__ = ["OpenAIResponsesChatClient"]


class OpenAIResponsesChatClient(OpenAIClientBase):
    """A ``ChatClient`` over the ``openai`` SDK's Responses API (``responses.create``).

    The connection settings are those of ``OpenAIChatClient`` (``client``, or ``api_key``,
    ``base_url``, ``timeout``, ``max_retries``...). Text, reasoning summaries (as
    ``TextReasoningContent``), function calls (parallel ones too), usage and finish reasons
    are mapped, streamed or not; ``ChatOptions.instructions`` goes as ``instructions`` and
    ``response_format`` as ``text.format``.

    ``store`` is off by default: nothing is kept at the provider, and every request carries
    the whole conversation. With ``store=True`` the response id comes back as the response's
    ``conversation_id``; pass it as ``ChatOptions(conversation_id=...)`` (the tool loop does)
    and it goes as ``previous_response_id``, with only the new messages sent, as in
    Microsoft.Extensions.AI. Approvals and questions work through
    ``FunctionInvokingChatClient`` on top, as with Chat Completions.
    """

    _api = "the Responses API"

    def __init__(
        self,
        model: str,
        *,
        client: openai.AsyncOpenAI | None = None,
        store: bool = False,
        **connection: Unpack[Connection],
    ) -> None:
        if not isinstance(store, bool):
            raise TypeError(f"store must be a bool, got {type(store).__name__}")
        super().__init__(model, client=client, **connection)
        self.store = store

    def _request(
        self, messages: ChatMessages, options: ChatOptions | None, *, stream: bool
    ) -> dict[str, Any]:
        return build_responses_request(
            as_messages(messages), options, model=self.model, store=self.store
        )

    async def _send(self, request: dict[str, Any], *, stream: bool) -> Any:
        return await self._client.responses.create(**request, stream=stream)

    def _to_response(self, reply: Any, request: dict[str, Any]) -> ChatResponse:
        return to_chat_response(reply, store=request["store"], service=self._service)

    def _assembler(self, request: dict[str, Any]) -> ResponsesStreamAssembler:
        return ResponsesStreamAssembler(store=request["store"], service=self._service)

    def __repr__(self) -> str:
        return (
            f"OpenAIResponsesChatClient(model={self.model!r}, "
            f"base_url={self._shown_base_url!r}, store={self.store})"
        )
