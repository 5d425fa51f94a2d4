"""``ChatClientBuilder``: the one place where a pipeline's order is visible."""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable
from typing import Any

from .._client import ChatClient
from .._options import ChatOptions
from ._configure import ConfigureOptionsChatClient
from ._logging import LoggingChatClient
from ._retry import RetryingChatClient, check_retry_settings

Middleware = Callable[[ChatClient], ChatClient]


class ChatClientBuilder:
    """Stacks middleware around a chat client; the first added is the outermost (here the
    retry is inside the loop: it re-sends a model request, never a tool)::

        ChatClientBuilder(model).use_logging().use_function_invocation().use_retry().build()
    """

    def __init__(self, inner_client: ChatClient) -> None:
        self._inner = inner_client
        self._factories: list[Middleware] = []
        self._added: list[str] = []  # "tools" / "otel": where the order matters

    def use(self, middleware: Middleware) -> ChatClientBuilder:
        """Add a callable taking a client and returning one (as a ``DelegatingChatClient``)."""
        self._factories.append(middleware)
        return self

    def use_function_invocation(self, **settings: Any) -> ChatClientBuilder:
        """Add a ``FunctionInvokingChatClient`` (settings are its keyword arguments)."""
        from ._function_invocation import FunctionInvokingChatClient

        FunctionInvokingChatClient.check_settings(settings)
        self._added.append("tools")
        return self.use(lambda inner: FunctionInvokingChatClient(inner, **settings))

    def use_logging(self, logger: logging.Logger | None = None) -> ChatClientBuilder:
        """Add a ``LoggingChatClient``."""
        return self.use(lambda inner: LoggingChatClient(inner, logger))

    def use_retry(
        self, *, max_attempts: int = 3, initial_delay: float = 0.5, max_delay: float = 20.0
    ) -> ChatClientBuilder:
        """Add a ``RetryingChatClient`` for transient failures."""
        check_retry_settings(
            max_attempts=max_attempts, initial_delay=initial_delay, max_delay=max_delay
        )
        return self.use(
            lambda inner: RetryingChatClient(
                inner, max_attempts=max_attempts, initial_delay=initial_delay, max_delay=max_delay
            )
        )

    def use_opentelemetry(
        self, *, capture_content: bool = False, **settings: Any
    ) -> ChatClientBuilder:
        """Add an ``agui_chat.otel.OpenTelemetryChatClient`` (``settings`` are its other
        keyword arguments); it records once an SDK is configured (``agui-chat[otel]``). Add
        it after ``use_function_invocation()``: the loop then traces its tools with its
        providers and ``capture_content``."""
        from ._chat_tracing import OpenTelemetryChatClient

        self._added.append("otel")
        return self.use(
            lambda inner: OpenTelemetryChatClient(
                inner, capture_content=capture_content, **settings
            )
        )

    def configure_options(self, configure: Callable[[ChatOptions], None]) -> ChatClientBuilder:
        """Add a ``ConfigureOptionsChatClient`` running ``configure`` on each request's options."""
        return self.use(lambda inner: ConfigureOptionsChatClient(inner, configure))

    def build(self) -> ChatClient:
        """Build the pipeline; the first middleware added ends up outermost. Warns when
        ``use_opentelemetry()`` comes before ``use_function_invocation()``."""
        if "otel" in self._added and "tools" in self._added[self._added.index("otel") :]:
            warnings.warn(
                "use_opentelemetry() outside use_function_invocation() makes one chat span of"
                " the whole tool loop: use .use_function_invocation().use_opentelemetry()",
                stacklevel=2,
            )
        client = self._inner
        for factory in reversed(self._factories):
            client = factory(client)
        return client
