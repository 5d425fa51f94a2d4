"""``OpenAIChatClient``: a chat client over OpenAI's Chat Completions API (and every server
that speaks it: Ollama, vLLM, llama.cpp server, LM Studio...); and ``OpenAIClientBase``, what
it shares with the Responses client."""

from __future__ import annotations

import abc
import os
from collections.abc import AsyncIterator, Mapping
from typing import Any, ClassVar, TypeVar

import openai
from typing_extensions import TypedDict, Unpack

from .._client import BaseChatClient, ChatMessages
from .._messages import as_messages
from .._options import ChatOptions
from .._responses import ChatResponse, ChatResponseUpdate
from .._update_assembler import UpdateAssembler
from .._url_secrets import hide_in_logs, redact_url, userinfo_to_header
from ._errors import map_error
from ._request import MaxTokensParameter, build_request
from ._response import to_chat_response
from ._stream import StreamAssembler

__all__ = ["OpenAIChatClient"]

_T = TypeVar("_T")

# A key for servers that need none: the SDK refuses to start without one.
_NO_KEY = "no-key-needed"
_OPENAI_HOSTS = ("api.openai.com", ".openai.azure.com")


class Connection(TypedDict, total=False):
    """What an OpenAI client makes its ``openai.AsyncOpenAI`` with, when it is given none
    (see ``OpenAIChatClient``)."""

    api_key: str | None
    base_url: str | None
    timeout: float | None
    max_retries: int
    organization: str | None
    project: str | None
    default_headers: Mapping[str, str] | None


class OpenAIClientBase(BaseChatClient, abc.ABC):
    """What the Chat Completions and Responses clients share: the model name, the
    ``openai.AsyncOpenAI`` they send through (given, or made from its settings), and how a
    request is sent and its reply (whole or streamed) read, up to what each API does its own
    way (the hooks below)."""

    #: The API, as errors name it (with the base URL).
    _api: ClassVar[str]

    def __init__(
        self,
        model: str,
        *,
        client: openai.AsyncOpenAI | None = None,
        **connection: Unpack[Connection],
    ) -> None:
        if not isinstance(model, str) or not model.strip():
            raise ValueError("model must be a non-empty model name, e.g. 'gpt-4o-mini'")
        max_retries = connection.pop("max_retries", 0)
        # What an AsyncOpenAI is made with, when none is given (max_retries aside).
        settings = {name: value for name, value in connection.items() if value is not None}
        if client is not None:
            if not isinstance(client, openai.AsyncOpenAI):
                raise TypeError(
                    f"client must be an openai.AsyncOpenAI, got {type(client).__name__}"
                )
            if settings:
                raise TypeError(
                    f"pass either client or its settings, not both (got client and "
                    f"{', '.join(settings)}); configure the AsyncOpenAI you pass instead"
                )
        self.model = model
        self._owns_client = client is None
        self._client = client or _make_client(settings, max_retries)
        self._service = f"{self._api} at {self._shown_base_url}"
        hide_in_logs(str(self._client.base_url), "openai._base_client")

    @property
    def _shown_base_url(self) -> str:
        """The base URL as errors and ``repr`` show it: a password in it as ``***``."""
        return redact_url(str(self._client.base_url))

    @property
    def is_openai(self) -> bool:
        """Whether the base URL is OpenAI's own (or Azure OpenAI), not a compatible server."""
        return str(self._client.base_url.host).endswith(_OPENAI_HOSTS)

    @property
    def client(self) -> openai.AsyncOpenAI:
        """The SDK client requests go through."""
        return self._client

    def get_service(self, kind: type[_T]) -> _T | None:
        """This client, or the ``openai.AsyncOpenAI`` it sends through."""
        for candidate in (self, self._client):
            if isinstance(candidate, kind):
                return candidate
        return None

    async def aclose(self) -> None:
        """Close the SDK client if this client made it (one you passed in stays open)."""
        if self._owns_client:
            await self._client.close()

    async def _get_response(
        self, messages: ChatMessages, options: ChatOptions | None
    ) -> ChatResponse[Any]:
        request = self._request(messages, options, stream=False)
        try:
            reply = await self._send(request, stream=False)
        except openai.OpenAIError as exc:
            raise map_error(exc, self._service) from exc
        return self._to_response(reply, request)

    async def get_streaming_response(
        self, messages: ChatMessages, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        request = self._request(messages, options, stream=True)
        assembler = self._assembler(request)
        try:
            stream = await self._send(request, stream=True)
        except openai.OpenAIError as exc:
            raise map_error(exc, self._service) from exc
        try:
            async for event in stream:
                update = assembler.add(event)
                if update is not None:
                    yield update
        except openai.OpenAIError as exc:
            raise map_error(exc, self._service) from exc
        finally:
            await stream.close()
        last = assembler.finish()
        if last is not None:
            yield last

    # -- what each API does its own way --------------------------------------------------
    @abc.abstractmethod
    def _request(
        self, messages: ChatMessages, options: ChatOptions | None, *, stream: bool
    ) -> dict[str, Any]:
        """The keyword arguments of the SDK call (without ``stream``)."""

    @abc.abstractmethod
    async def _send(self, request: dict[str, Any], *, stream: bool) -> Any:
        """The SDK call: its reply, or with ``stream`` its stream of events."""

    @abc.abstractmethod
    def _to_response(self, reply: Any, request: dict[str, Any]) -> ChatResponse:
        """The whole reply, as our response."""

    @abc.abstractmethod
    def _assembler(self, request: dict[str, Any]) -> UpdateAssembler:
        """What turns the stream's events into updates."""


class OpenAIChatClient(OpenAIClientBase):
    """A ``ChatClient`` that talks to a model through the ``openai`` SDK's Chat Completions.

    Give it ``client`` (an ``openai.AsyncOpenAI`` you configured and close yourself), or the
    settings to make one: ``api_key`` (default ``OPENAI_API_KEY``), ``base_url`` (default
    ``OPENAI_BASE_URL``, else OpenAI), ``timeout`` in seconds (default: the SDK's), and
    ``max_retries`` (0: retry with ``RetryingChatClient`` instead, which knows not to retry
    a stream that has started). For a local server that needs no key, give ``base_url`` and
    no key is required.

    ``max_output_tokens`` is sent as ``max_completion_tokens`` to OpenAI and Azure OpenAI
    (which reject ``max_tokens`` for reasoning models) and as ``max_tokens`` to any other
    ``base_url`` (the field every compatible server knows); ``max_tokens_parameter``
    overrides that. ``stream_usage=False`` stops asking for usage in streams, for servers
    that reject ``stream_options``. ``json_schema=False`` sends a structured-output schema as
    instructions instead of ``response_format``, for servers that take no JSON schema (the
    reply is validated all the same).

    ``ChatOptions.conversation_id`` is not used: Chat Completions keeps no history, so send
    the whole conversation each time.
    """

    _api = "Chat Completions"

    def __init__(
        self,
        model: str,
        *,
        client: openai.AsyncOpenAI | None = None,
        max_tokens_parameter: MaxTokensParameter | None = None,
        stream_usage: bool = True,
        json_schema: bool = True,
        **connection: Unpack[Connection],
    ) -> None:
        if max_tokens_parameter not in (None, "max_completion_tokens", "max_tokens"):
            raise ValueError(
                "max_tokens_parameter must be 'max_completion_tokens' or 'max_tokens', got "
                f"{max_tokens_parameter!r}"
            )
        super().__init__(model, client=client, **connection)
        self._max_tokens_parameter: MaxTokensParameter = max_tokens_parameter or (
            "max_completion_tokens" if self.is_openai else "max_tokens"
        )
        self._stream_usage = stream_usage
        self._json_schema = bool(json_schema)

    def _request(
        self, messages: ChatMessages, options: ChatOptions | None, *, stream: bool
    ) -> dict[str, Any]:
        request = build_request(
            as_messages(messages),
            options,
            model=self.model,
            max_tokens_parameter=self._max_tokens_parameter,
            schema_as_instructions=not self._json_schema,
        )
        if stream and self._stream_usage:
            request["stream_options"] = {"include_usage": True}
        return request

    async def _send(self, request: dict[str, Any], *, stream: bool) -> Any:
        return await self._client.chat.completions.create(**request, stream=stream)

    def _to_response(self, reply: Any, request: dict[str, Any]) -> ChatResponse:
        return to_chat_response(reply)

    def _assembler(self, request: dict[str, Any]) -> StreamAssembler:
        return StreamAssembler()

    def __repr__(self) -> str:
        return f"OpenAIChatClient(model={self.model!r}, base_url={self._shown_base_url!r})"


def _make_client(settings: dict[str, Any], max_retries: int) -> openai.AsyncOpenAI:
    if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
        raise ValueError(f"max_retries must be a non-negative int, got {max_retries!r}")
    base_url = settings.get("base_url") or os.environ.get("OPENAI_BASE_URL")
    if "api_key" not in settings and not os.environ.get("OPENAI_API_KEY") and base_url:
        settings["api_key"] = _NO_KEY
    if base_url:  # its userinfo sent as the header httpx makes of it, never in the SDK's logs
        settings["base_url"], headers = userinfo_to_header(
            str(base_url), settings.get("default_headers")
        )
        if headers:
            settings["default_headers"] = headers
    try:
        return openai.AsyncOpenAI(**settings, max_retries=max_retries)
    except openai.OpenAIError as exc:
        raise ValueError(
            f"cannot create the OpenAI client: {exc} (for a local server that needs no key, "
            "pass base_url=...)"
        ) from exc
