"""``AnthropicChatClient``: a chat client over Anthropic's Messages API."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from typing import Any, TypeVar

import anthropic

from .._client import BaseChatClient, ChatMessages
from .._messages import as_messages
from .._options import ChatOptions
from .._responses import ChatResponse, ChatResponseUpdate
from .._url_secrets import hide_in_logs, redact_url, userinfo_to_header
from ._errors import map_error
from ._request import build_request
from ._response import StreamAssembler, to_chat_response

__all__ = ["AnthropicChatClient"]

_T = TypeVar("_T")

# A key for servers that need none: the SDK refuses to send a request without credentials.
_NO_KEY = "no-key-needed"


class AnthropicChatClient(BaseChatClient):
    """A ``ChatClient`` that talks to Claude through the ``anthropic`` SDK's Messages API.

    Give it ``client`` (an ``anthropic.AsyncAnthropic`` you configured and close yourself),
    or ``api_key`` (default ``ANTHROPIC_API_KEY``) and ``base_url`` (default
    ``ANTHROPIC_BASE_URL``, else Anthropic's) to make one, with the SDK's own retries off:
    ``RetryingChatClient`` decides, and knows not to retry a stream that has started.

    ``max_tokens`` is what a request may generate when ``ChatOptions.max_output_tokens`` is
    not set (the Messages API needs a value). Extended thinking is asked for with
    ``ChatOptions(additional_properties={"thinking": {"type": "enabled", "budget_tokens":
    N}})``; it comes back as ``TextReasoningContent`` and goes back signed, as the API wants.
    ``ChatOptions.conversation_id`` is not used: the API keeps no history.
    """

    def __init__(
        self,
        model: str,
        *,
        client: anthropic.AsyncAnthropic | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        max_tokens: int = 4096,
    ) -> None:
        if not isinstance(model, str) or not model.strip():
            raise ValueError("model must be a non-empty model name, e.g. 'claude-sonnet-4-5'")
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
            raise ValueError(f"max_tokens must be a positive int, got {max_tokens!r}")
        if client is not None:
            if not isinstance(client, anthropic.AsyncAnthropic):
                raise TypeError(
                    f"client must be an anthropic.AsyncAnthropic, got {type(client).__name__}"
                )
            if api_key is not None or base_url is not None:
                raise TypeError(
                    "pass either client or api_key/base_url, not both; configure the "
                    "AsyncAnthropic you pass instead"
                )
        self.model = model
        self.max_tokens = max_tokens
        self._owns_client = client is None
        self._client = client or _make_client(api_key, base_url)
        self._service = f"the Messages API at {redact_url(str(self._client.base_url))}"
        hide_in_logs(str(self._client.base_url), "anthropic._base_client")

    @property
    def client(self) -> anthropic.AsyncAnthropic:
        """The SDK client requests go through."""
        return self._client

    def get_service(self, kind: type[_T]) -> _T | None:
        """This client, or the ``anthropic.AsyncAnthropic`` it sends through."""
        for candidate in (self, self._client):
            if isinstance(candidate, kind):
                return candidate
        return None

    async def aclose(self) -> None:
        """Close the SDK client if this client made it (one you passed in stays open)."""
        if self._owns_client:
            await self._client.close()

    def _request(self, messages: ChatMessages, options: ChatOptions | None) -> dict[str, Any]:
        return build_request(
            as_messages(messages), options, model=self.model, max_tokens=self.max_tokens
        )

    async def _get_response(
        self, messages: ChatMessages, options: ChatOptions | None
    ) -> ChatResponse[Any]:
        request = self._request(messages, options)
        try:
            reply = await self._client.messages.create(**request)
        except anthropic.AnthropicError as exc:
            raise map_error(exc, self._service) from exc
        return to_chat_response(reply)

    async def get_streaming_response(
        self, messages: ChatMessages, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        request = self._request(messages, options)
        assembler = StreamAssembler()
        try:
            stream = await self._client.messages.create(**request, stream=True)
        except anthropic.AnthropicError as exc:
            raise map_error(exc, self._service) from exc
        try:
            async for event in stream:
                update = assembler.add(event)
                if update is not None:
                    yield update
        except anthropic.AnthropicError as exc:
            raise map_error(exc, self._service) from exc
        finally:
            await stream.close()
        yield assembler.finish()

    def __repr__(self) -> str:
        shown = redact_url(str(self._client.base_url))
        return f"AnthropicChatClient(model={self.model!r}, base_url={shown!r})"


def _make_client(api_key: str | None, base_url: str | None) -> anthropic.AsyncAnthropic:
    base_url = base_url or os.environ.get("ANTHROPIC_BASE_URL") or None
    if (
        api_key is None
        and base_url
        and not os.environ.get("ANTHROPIC_API_KEY")
        and not os.environ.get("ANTHROPIC_AUTH_TOKEN")
    ):
        api_key = _NO_KEY
    # Its userinfo sent as the header httpx makes of it: never in the SDK's log lines.
    base_url, headers = userinfo_to_header(base_url, None) if base_url else (base_url, None)
    try:
        return anthropic.AsyncAnthropic(
            api_key=api_key, base_url=base_url, default_headers=headers, max_retries=0
        )
    except (anthropic.AnthropicError, ValueError) as exc:
        raise ValueError(
            f"cannot create the Anthropic client: {exc} (set ANTHROPIC_API_KEY, or pass "
            "api_key=...)"
        ) from exc
