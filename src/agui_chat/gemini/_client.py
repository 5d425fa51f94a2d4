"""``GeminiChatClient``: a chat client over Google's Gemini API (``google-genai``)."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from typing import Any, TypeVar

from google import genai
from google.genai import types

from .._client import BaseChatClient, ChatMessages
from .._messages import as_messages
from .._options import ChatOptions
from .._responses import ChatResponse, ChatResponseUpdate
from .._url_secrets import hide_in_logs, redact_url, userinfo_to_header
from ._errors import SDK_ERRORS, map_error
from ._request import build_request
from ._response import StreamAssembler, to_chat_response

__all__ = ["GeminiChatClient"]

_T = TypeVar("_T")

# A key for servers that need none: the SDK refuses to start without one.
_NO_KEY = "no-key-needed"


class GeminiChatClient(BaseChatClient):
    """A ``ChatClient`` that talks to Gemini through ``google-genai``'s ``generate_content``
    (and ``generate_content_stream``).

    Give it ``client`` (a ``google.genai.Client`` you configured and close yourself), or
    ``api_key`` (default ``GOOGLE_API_KEY`` / ``GEMINI_API_KEY``) and ``base_url`` (default
    ``GOOGLE_GEMINI_BASE_URL``, else Google's) to make one, with the SDK's own retries off:
    ``RetryingChatClient`` decides.

    Thoughts come back as ``TextReasoningContent`` when asked for with
    ``ChatOptions(additional_properties={"thinking_config": {"include_thoughts": True}})``.
    Gemini sends function calls without ids: the adapter makes its own, stable within a
    response. ``ChatOptions.conversation_id`` is not used: the API keeps no history.
    """

    def __init__(
        self,
        model: str,
        *,
        client: genai.Client | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
    ) -> None:
        if not isinstance(model, str) or not model.strip():
            raise ValueError("model must be a non-empty model name, e.g. 'gemini-2.5-flash'")
        if client is not None:
            if not isinstance(client, genai.Client):
                raise TypeError(
                    f"client must be a google.genai.Client, got {type(client).__name__}"
                )
            if api_key is not None or base_url is not None:
                raise TypeError(
                    "pass either client or api_key/base_url, not both; configure the "
                    "genai.Client you pass instead"
                )
        self.model = model
        self._owns_client = client is None
        self._client = client or _make_client(api_key, base_url)
        base_url = _base_url(self._client)
        shown = redact_url(base_url) if base_url else "Google's endpoint"
        self._service = f"the Gemini API at {shown}"
        if base_url:
            hide_in_logs(base_url, "google_genai._api_client")

    @property
    def client(self) -> genai.Client:
        """The SDK client requests go through."""
        return self._client

    def get_service(self, kind: type[_T]) -> _T | None:
        """This client, or the ``google.genai.Client`` it sends through."""
        for candidate in (self, self._client):
            if isinstance(candidate, kind):
                return candidate
        return None

    async def aclose(self) -> None:
        """Close the SDK client if this client made it (one you passed in stays open)."""
        if self._owns_client:
            await self._client.aio.aclose()

    def _request(self, messages: ChatMessages, options: ChatOptions | None) -> dict[str, Any]:
        return build_request(as_messages(messages), options, model=self.model)

    async def _get_response(
        self, messages: ChatMessages, options: ChatOptions | None
    ) -> ChatResponse[Any]:
        request = self._request(messages, options)
        try:
            reply = await self._client.aio.models.generate_content(**request)
        except SDK_ERRORS as exc:
            raise map_error(exc, self._service) from exc
        return to_chat_response(reply)

    async def get_streaming_response(
        self, messages: ChatMessages, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        request = self._request(messages, options)
        assembler = StreamAssembler()
        try:
            stream = await self._client.aio.models.generate_content_stream(**request)
        except SDK_ERRORS as exc:
            raise map_error(exc, self._service) from exc
        try:
            async for chunk in stream:
                update = assembler.add(chunk)
                if update is not None:
                    yield update
        except SDK_ERRORS as exc:
            raise map_error(exc, self._service) from exc
        finally:
            close = getattr(stream, "aclose", None)
            if close is not None:
                await close()
        yield assembler.finish()

    def __repr__(self) -> str:
        return f"GeminiChatClient(model={self.model!r})"


def _base_url(client: genai.Client) -> str | None:
    """Where the client sends, if not Google's endpoint; the SDK keeps it in its options."""
    api = getattr(client, "_api_client", None)
    options = getattr(api, "_http_options", None)
    base_url = getattr(options, "base_url", None)
    return str(base_url) if base_url else None


def _make_client(api_key: str | None, base_url: str | None) -> genai.Client:
    base_url = base_url or os.environ.get("GOOGLE_GEMINI_BASE_URL") or None
    # Its userinfo sent as the header httpx makes of it: never in the SDK's log lines.
    url, headers = userinfo_to_header(base_url, None) if base_url else (base_url, None)
    # One attempt: retries are RetryingChatClient's to decide (this also turns off the
    # SDK's implicit retry of connection errors).
    options = types.HttpOptions(
        base_url=url, headers=headers, retry_options=types.HttpRetryOptions(attempts=1)
    )
    try:
        return genai.Client(api_key=api_key, http_options=options)
    except ValueError as exc:
        if api_key is None and base_url:
            return genai.Client(api_key=_NO_KEY, http_options=options)
        raise ValueError(
            f"cannot create the Gemini client: {exc} (set GOOGLE_API_KEY or GEMINI_API_KEY, "
            "or pass api_key=...)"
        ) from exc
